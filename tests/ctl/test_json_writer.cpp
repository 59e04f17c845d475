// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "json_writer.hpp"

namespace memqos::ctl {
namespace {

TEST(JsonQuote, EscapesQuotesBackslashesAndControls) {
    EXPECT_EQ(jsonQuote("plain"), "\"plain\"");
    EXPECT_EQ(jsonQuote("a\"b"), "\"a\\\"b\"");
    EXPECT_EQ(jsonQuote("a\\b"), "\"a\\\\b\"");
    EXPECT_EQ(jsonQuote("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
    EXPECT_EQ(jsonQuote(std::string_view("\x01\x1f\x7f", 3)), "\"\\u0001\\u001f\\u007f\"");
    EXPECT_EQ(jsonQuote(std::string_view("a\0b", 3)), "\"a\\u0000b\"");
    EXPECT_EQ(jsonQuote("/"), "\"/\"");
}

TEST(JsonQuote, PassesUtf8Through) {
    EXPECT_EQ(jsonQuote("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x90\xa7"),
              "\"caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x90\xa7\"");
}

TEST(JsonWriter, CompactDocument) {
    JsonWriter json(JsonStyle::Compact);
    json.beginObject()
        .key("Name")
        .value("shared")
        .key("Rank")
        .value(std::uint32_t{2})
        .key("Limit")
        .value(std::numeric_limits<std::uint64_t>::max())
        .key("Delta")
        .value(std::int64_t{-5})
        .key("Killable")
        .value(true)
        .key("Ratio")
        .value(1.5)
        .key("Nothing")
        .null()
        .key("List")
        .beginArray()
        .value("a")
        .value(std::uint64_t{1})
        .endArray()
        .key("Empty")
        .beginObject()
        .endObject()
        .key("EmptyList")
        .beginArray()
        .endArray()
        .endObject();
    EXPECT_TRUE(json.complete());
    EXPECT_EQ(json.str(), R"({"Name":"shared","Rank":2,"Limit":18446744073709551615,"Delta":-5,)"
                          R"("Killable":true,"Ratio":1.5,"Nothing":null,"List":["a",1],)"
                          R"("Empty":{},"EmptyList":[]})");
}

TEST(JsonWriter, PrettyDocument) {
    JsonWriter json;
    json.beginArray()
        .beginObject()
        .key("a")
        .value(std::uint64_t{1})
        .key("b")
        .beginArray()
        .value(false)
        .endArray()
        .endObject()
        .endArray();
    EXPECT_EQ(json.str(), "[\n  {\n    \"a\": 1,\n    \"b\": [\n      false\n    ]\n  }\n]");
}

TEST(JsonWriter, EmptyTopLevelContainers) {
    JsonWriter a;
    a.beginArray().endArray();
    EXPECT_EQ(a.str(), "[]");
    JsonWriter o;
    o.beginObject().endObject();
    EXPECT_EQ(o.str(), "{}");
}

TEST(JsonWriter, KeysAreEscaped) {
    JsonWriter json(JsonStyle::Compact);
    json.beginObject().key("we\"ird\n").value("x").endObject();
    EXPECT_EQ(json.str(), R"({"we\"ird\n":"x"})");
}

TEST(JsonWriter, NonFiniteDoublesBecomeNull) {
    JsonWriter json(JsonStyle::Compact);
    json.beginArray()
        .value(std::numeric_limits<double>::infinity())
        .value(std::nan(""))
        .value(0.9)
        .value(1.0)
        .value(1e21)
        .endArray();
    EXPECT_EQ(json.str(), "[null,null,0.9,1,1e+21]");
}

TEST(JsonWriter, MembersStayInTheOrderWritten) {
    JsonWriter json(JsonStyle::Compact);
    json.beginObject().member("b", true).member("a", std::uint64_t{1}).member("c", "x").endObject();
    EXPECT_EQ(json.str(), R"({"b":true,"a":1,"c":"x"})") << "not sorted by key";
}

TEST(JsonWriter, IntegralDoublesWithoutFraction) {
    JsonWriter json(JsonStyle::Compact);
    json.beginArray().value(0.0).value(-3.0).value(100000.0).value(0.02).value(1e15).endArray();
    EXPECT_EQ(json.str(), "[0,-3,100000,0.02,1e+15]");
}

TEST(JsonQuote, InvalidUtf8BecomesReplacementCharacter) {
    EXPECT_EQ(jsonQuote(std::string_view("a\xff", 2)), "\"a\xef\xbf\xbd\"");
}

TEST(JsonWriter, IncompleteUntilClosed) {
    JsonWriter json;
    EXPECT_FALSE(json.complete());
    json.beginObject();
    EXPECT_FALSE(json.complete());
    json.endObject();
    EXPECT_TRUE(json.complete());
}

} // namespace
} // namespace memqos::ctl

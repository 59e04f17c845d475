// SPDX-License-Identifier: Apache-2.0
#include "memqos/parse/proc.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "samples.hpp"

namespace memqos::parse {
namespace {

TEST(ParsePressure, RealFile) {
    auto r = parsePressure(test::samples::kPressure);
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_DOUBLE_EQ(r->some.avg10, 1.53);
    EXPECT_DOUBLE_EQ(r->some.avg60, 0.87);
    EXPECT_DOUBLE_EQ(r->some.avg300, 0.21);
    EXPECT_EQ(r->some.totalUsec, 58761459U);
    ASSERT_TRUE(r->full.has_value());
    EXPECT_DOUBLE_EQ(r->full->avg10, 0.80);
    EXPECT_DOUBLE_EQ(r->full->avg60, 0.35);
    EXPECT_DOUBLE_EQ(r->full->avg300, 0.09);
    EXPECT_EQ(r->full->totalUsec, 27635011U);
}

TEST(ParsePressure, SomeOnlyNoTrailingNewline) {
    auto r = parsePressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=0");
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_FALSE(r->full.has_value());
    EXPECT_EQ(r->some.totalUsec, 0U);
}

TEST(ParsePressure, FullFirstFieldsReorderedUnknownIgnored) {
    auto r = parsePressure(
        "full total=5 avg300=3 avg60=2 avg10=1 weird=x\r\n"
        "some avg10=100.00 avg60=99.99 future=1.0 avg300=0 total=18446744073709551615\r\n");
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_DOUBLE_EQ(r->full->avg10, 1.0);
    EXPECT_DOUBLE_EQ(r->full->avg300, 3.0);
    EXPECT_EQ(r->full->totalUsec, 5U);
    EXPECT_DOUBLE_EQ(r->some.avg10, 100.0);
    EXPECT_EQ(r->some.totalUsec, UINT64_MAX);
}

TEST(ParsePressure, ExtraSpacesAndTabs) {
    auto r = parsePressure("  some\tavg10=0.50   avg60=0.25 avg300=0.10 total=7  \n\n");
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_DOUBLE_EQ(r->some.avg10, 0.5);
}

struct BadCase {
    std::string name;
    std::string input;
    std::string error;
};
// NOLINTNEXTLINE(readability-identifier-naming): gtest looks this name up
void PrintTo(const BadCase& c, std::ostream* os) {
    *os << c.name;
}

class ParsePressureBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(ParsePressureBad, NamesTheProblem) {
    auto r = parsePressure(GetParam().input);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, std::errc::invalid_argument);
    EXPECT_EQ(r.error().what, GetParam().error);
}

std::string some(std::string_view avg10) {
    return "some avg10=" + std::string(avg10) + " avg60=0.00 avg300=0.00 total=0\n";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParsePressureBad,
    ::testing::Values(
        BadCase{"Empty", "", "empty input"},
        BadCase{"OnlyFull", "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
                "line 'some' missing"},
        BadCase{"MissingAvg10", "some avg60=0.00 avg300=0.00 total=0\n",
                "some: field avg10 missing"},
        BadCase{"MissingTotal", "some avg10=0.00 avg60=0.00 avg300=0.00\n",
                "some: field total missing"},
        BadCase{"TruncatedFull", some("0.00") + "full avg10=0.00 avg60=0.0",
                "full: field avg300 missing"},
        BadCase{"KindOnly", "some\n", "some: field avg10 missing"},
        BadCase{"NaN", some("nan"), "some: avg10: out of range 0..100: 'nan'"},
        BadCase{"Inf", some("inf"), "some: avg10: out of range 0..100: 'inf'"},
        BadCase{"MinusOne", some("-1"), "some: avg10: out of range 0..100: '-1'"},
        BadCase{"Above100", some("101"), "some: avg10: out of range 0..100: '101'"},
        BadCase{"Huge", some("1e999"), "some: avg10: out of range: '1e999'"},
        BadCase{"NotANumber", some("abc"), "some: avg10: not a number: 'abc'"},
        BadCase{"EmptyValue", some(""), "some: avg10: missing value"},
        BadCase{"Comma", some("0,5"), "some: avg10: not a number: '0,5'"},
        BadCase{"TotalNegative", "some avg10=0 avg60=0 avg300=0 total=-1\n",
                "some: total: not a number: '-1'"},
        BadCase{"TotalOverflow", "some avg10=0 avg60=0 avg300=0 total=99999999999999999999999\n",
                "some: total: out of range: '99999999999999999999999'"},
        BadCase{"TotalFraction", "some avg10=0 avg60=0 avg300=0 total=1.5\n",
                "some: total: not a number: '1.5'"},
        BadCase{"NoEquals", "some avg10 0.00 avg60=0 avg300=0 total=0\n",
                "some: expected key=value: 'avg10'"},
        BadCase{"DuplicateField", "some avg10=0 avg10=1 avg60=0 avg300=0 total=0\n",
                "some: duplicate field avg10"},
        BadCase{"DuplicateLine", some("0") + some("0"), "line 2: duplicate 'some' line"},
        BadCase{"UnknownKind", some("0") + "partial avg10=0\n",
                "line 2: expected 'some ...' or 'full ...', got 'partial'"},
        BadCase{"CapitalSome", "Some avg10=0 avg60=0 avg300=0 total=0\n",
                "line 1: expected 'some ...' or 'full ...', got 'Some'"},
        BadCase{"GarbageBytes", std::string("\x7f\x00\x01", 3),
                "line 1: expected 'some ...' or 'full ...', got '\\x7f\\x00\\x01'"},
        BadCase{"VeryLongLine",
                "some avg10=" + std::string(50000, '1') + " avg60=0 avg300=0 total=0",
                "some: avg10: out of range: '" + std::string(40, '1') + "...'"},
        BadCase{"LongZeros",
                "some avg10=" + std::string(50000, '0') + "101 avg60=0 avg300=0 total=0",
                "some: avg10: out of range 0..100: '" + std::string(40, '0') + "...'"}),
    [](const auto& tp) { return tp.param.name; });

} // namespace
} // namespace memqos::parse

// SPDX-License-Identifier: Apache-2.0
#include "memqos/parse/text.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace memqos::parse::text {
namespace {

std::vector<std::string> allLines(std::string_view in) {
    std::vector<std::string> out;
    Lines lines(in);
    std::string_view line;
    while (lines.next(line)) {
        out.emplace_back(line);
    }
    return out;
}

TEST(TextCase, EqualsIgnoreCaseIsAsciiOnly) {
    EXPECT_TRUE(text::equalsIgnoreCase("MemoryRatio", "memoryratio"));
    EXPECT_TRUE(text::equalsIgnoreCase("", ""));
    EXPECT_FALSE(text::equalsIgnoreCase("max", "maxi"));
    EXPECT_FALSE(text::equalsIgnoreCase("a[", "A{")); // '[' and '{' are not a case pair
    EXPECT_FALSE(text::equalsIgnoreCase("\xc4", "\xe4")); // no locale: Ä is not ä
}

TEST(TextEditDistance, CountsEditsAndAdjacentSwapsIgnoringCase) {
    EXPECT_EQ(text::editDistance("", ""), 0u);
    EXPECT_EQ(text::editDistance("", "abc"), 3u);
    EXPECT_EQ(text::editDistance("abc", ""), 3u);
    EXPECT_EQ(text::editDistance("dryrun", "DryRun"), 0u);
    EXPECT_EQ(text::editDistance("StalTarget", "StallTarget"), 1u);  // insertion
    EXPECT_EQ(text::editDistance("Intervall", "Interval"), 1u);      // deletion
    EXPECT_EQ(text::editDistance("Swop", "Swap"), 1u);               // substitution
    EXPECT_EQ(text::editDistance("StallTraget", "StallTarget"), 1u); // adjacent swap
    EXPECT_EQ(text::editDistance("MemRatio", "MemoryRatio"), 3u);
    EXPECT_EQ(text::editDistance("kitten", "sitting"), 3u);
    EXPECT_EQ(text::editDistance("ca", "abc"), 3u); // optimal string alignment, not 2
    EXPECT_EQ(text::editDistance("Frobnicate", "Interval"),
              text::editDistance("Interval", "Frobnicate"));
}

// The whole optimal-string-alignment table, as the textbook has it: the
// reference for editDistance and editDistanceAtMost, which keep three rows
// and a band.
std::size_t referenceDistance(const std::string& a, const std::string& b) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
                lower(a[i - 2]) == lower(b[j - 1]))
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[a.size()][b.size()];
}

TEST(TextEditDistance, AtMostIsTheDistanceCutAboveTheLimit) {
    EXPECT_EQ(text::editDistanceAtMost("StalTarget", "StallTarget", 1), 1u);
    EXPECT_EQ(text::editDistanceAtMost("MemRatio", "MemoryRatio", 2), 3u);
    EXPECT_EQ(text::editDistanceAtMost("MemRatio", "MemoryRatio", 3), 3u);
    EXPECT_EQ(text::editDistanceAtMost(std::string(4000, 'x'), "Interval", 3), 4u);
    EXPECT_EQ(text::editDistanceAtMost("ca", "abc", 2), 3u);
    EXPECT_EQ(text::editDistanceAtMost("ca", "abc", 3), 3u);
    // Every pair of words over {a, B, c} up to 4 letters, and pairs of
    // longer words, every limit: the band and the early stop never change
    // a distance within the limit.
    std::vector<std::string> words{""};
    for (std::size_t from = 0; from < words.size(); ++from)
        if (words[from].size() < 4)
            for (char c : {'a', 'B', 'c'})
                words.push_back(words[from] + c);
    for (std::string w : {"StallTarget", "stalltraget", "Level1SomeAvg10", "Level2FullAvg10",
                          "MemoryRatio", "MemRatio", "abcabcabcab", "cbacbacbacba"})
        words.push_back(w);
    std::size_t wrong = 0;
    for (const auto& a : words) {
        for (const auto& b : words) {
            const std::size_t want = referenceDistance(a, b);
            if (text::editDistance(a, b) != want) {
                ADD_FAILURE() << "editDistance(" << a << ", " << b << ") != " << want;
                ++wrong;
            }
            for (std::size_t limit = 0; limit <= 6; ++limit) {
                if (text::editDistanceAtMost(a, b, limit) != std::min(want, limit + 1)) {
                    ADD_FAILURE() << "editDistanceAtMost(" << a << ", " << b << ", " << limit
                                  << ") != min(" << want << ", limit + 1)";
                    ++wrong;
                }
            }
            if (wrong > 20)
                return;
        }
    }
}

TEST(TextLines, TrailingNewlineAddsNoLine) {
    EXPECT_EQ(allLines("a\nb\n"), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(allLines("a\nb"), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(allLines(""), std::vector<std::string>{});
    EXPECT_EQ(allLines("\n"), (std::vector<std::string>{""}));
    EXPECT_EQ(allLines("a\n\nb"), (std::vector<std::string>{"a", "", "b"}));
    EXPECT_EQ(allLines("a\r\nb\r\n"), (std::vector<std::string>{"a\r", "b\r"}));
}

TEST(TextLines, NumbersLines) {
    Lines lines("x\ny\nz");
    std::string_view line;
    EXPECT_EQ(lines.number(), 0U);
    ASSERT_TRUE(lines.next(line));
    ASSERT_TRUE(lines.next(line));
    EXPECT_EQ(line, "y");
    EXPECT_EQ(lines.number(), 2U);
    ASSERT_TRUE(lines.next(line));
    EXPECT_FALSE(lines.next(line));
    EXPECT_FALSE(lines.next(line));
    EXPECT_EQ(lines.number(), 3U);
}

TEST(TextTokenizer, SplitsOnAnyWhitespace) {
    EXPECT_EQ(split("  a\tb \r\v\fc  \r"), (std::vector<std::string_view>{"a", "b", "c"}));
    EXPECT_TRUE(split(" \t\r").empty());
    Tokenizer tok("key  rest of line ");
    EXPECT_EQ(tok.next(), "key");
    EXPECT_EQ(tok.rest(), "rest of line ");
    EXPECT_FALSE(tok.atEnd());
}

TEST(TextTokenizer, SplitExactRejectsWrongCount) {
    EXPECT_FALSE(splitExact<2>("one").has_value());
    EXPECT_FALSE(splitExact<2>("one two three").has_value());
    auto two = splitExact<2>(" one\ttwo \r");
    ASSERT_TRUE(two.has_value());
    EXPECT_EQ((*two)[0], "one");
    EXPECT_EQ((*two)[1], "two");
}

TEST(TextKeyValue, SplitsPairsAndAssignments) {
    auto kv = splitKeyValue("anon 123");
    ASSERT_TRUE(kv);
    EXPECT_EQ(kv->key, "anon");
    EXPECT_EQ(kv->value, "123");
    EXPECT_FALSE(splitKeyValue("anon"));
    EXPECT_FALSE(splitKeyValue("anon 1 2"));

    auto a = splitAssignment("avg10=0.12");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->key, "avg10");
    EXPECT_EQ(a->value, "0.12");
    auto empty = splitAssignment("total=");
    ASSERT_TRUE(empty);
    EXPECT_EQ(empty->value, "");
    auto twoEq = splitAssignment("a=b=c");
    ASSERT_TRUE(twoEq);
    EXPECT_EQ(twoEq->value, "b=c");
    EXPECT_FALSE(splitAssignment("=1"));
    EXPECT_FALSE(splitAssignment("avg10"));
}

struct U64Case {
    std::string_view token;
    bool ok;
    std::uint64_t value;
    std::string_view error;
};

class TextToU64 : public ::testing::TestWithParam<U64Case> {};

TEST_P(TextToU64, ParsesWholeTokenOnly) {
    const auto& c = GetParam();
    auto r = toU64(c.token, "Field");
    ASSERT_EQ(r.ok(), c.ok) << c.token;
    if (c.ok) {
        EXPECT_EQ(*r, c.value);
    } else {
        EXPECT_EQ(r.error().what, c.error);
        EXPECT_EQ(r.error().code, std::errc::invalid_argument);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TextToU64,
    ::testing::Values(U64Case{"0", true, 0, ""}, U64Case{"123", true, 123, ""},
                      U64Case{"007", true, 7, ""},
                      U64Case{"18446744073709551615", true, UINT64_MAX, ""},
                      U64Case{"18446744073709551616", false, 0,
                              "Field: out of range: '18446744073709551616'"},
                      U64Case{"99999999999999999999999", false, 0,
                              "Field: out of range: '99999999999999999999999'"},
                      U64Case{"-1", false, 0, "Field: not a number: '-1'"},
                      U64Case{"+1", false, 0, "Field: not a number: '+1'"},
                      U64Case{"12abc", false, 0, "Field: not a number: '12abc'"},
                      U64Case{"abc", false, 0, "Field: not a number: 'abc'"},
                      U64Case{"1.5", false, 0, "Field: not a number: '1.5'"},
                      U64Case{"0x10", false, 0, "Field: not a number: '0x10'"},
                      U64Case{" 1", false, 0, "Field: not a number: ' 1'"},
                      U64Case{"", false, 0, "Field: missing value"}));

TEST(TextToI32, SignedRange) {
    EXPECT_EQ(*toI32("-2", "p"), -2);
    EXPECT_EQ(*toI32("2147483647", "p"), 2147483647);
    EXPECT_EQ(*toI32("-2147483648", "p"), INT32_MIN);
    EXPECT_EQ(toI32("2147483648", "p").error().what, "p: out of range: '2147483648'");
    EXPECT_EQ(toI32("--1", "p").error().what, "p: not a number: '--1'");
}

TEST(TextToDouble, AcceptsDecimalRejectsJunk) {
    EXPECT_DOUBLE_EQ(*toDouble("0.12", "avg10"), 0.12);
    EXPECT_DOUBLE_EQ(*toDouble("100.00", "avg10"), 100.0);
    EXPECT_DOUBLE_EQ(*toDouble("1e2", "avg10"), 100.0);
    EXPECT_DOUBLE_EQ(*toDouble("-1", "avg10"), -1.0);
    EXPECT_TRUE(std::isnan(*toDouble("nan", "avg10")));
    EXPECT_TRUE(std::isinf(*toDouble("inf", "avg10")));
    EXPECT_EQ(toDouble("1e999", "avg10").error().what, "avg10: out of range: '1e999'");
    EXPECT_EQ(toDouble("0,5", "avg10").error().what, "avg10: not a number: '0,5'");
    EXPECT_EQ(toDouble("+1", "avg10").error().what, "avg10: not a number: '+1'");
    EXPECT_EQ(toDouble("0x1p3", "avg10").error().what, "avg10: not a number: '0x1p3'");
    EXPECT_EQ(toDouble("", "avg10").error().what, "avg10: missing value");
}

TEST(TextKib, MultipliesWithOverflowCheck) {
    EXPECT_EQ(*kibToBytes(0, "x"), 0U);
    EXPECT_EQ(*kibToBytes(4, "x"), 4096U);
    EXPECT_EQ(*kibToBytes(UINT64_MAX / 1024, "x"), (UINT64_MAX / 1024) * 1024);
    auto r = kibToBytes(UINT64_MAX / 1024 + 1, "MemTotal");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().what.rfind("MemTotal: out of range", 0), 0U) << r.error().what;
}

TEST(TextQuote, EscapesAndTruncates) {
    EXPECT_EQ(quote("abc"), "'abc'");
    EXPECT_EQ(quote(std::string_view("a\0b\xff'\\", 6)), "'a\\x00b\\xff\\x27\\x5c'");
    const std::string longToken(100, 'x');
    EXPECT_EQ(quote(longToken), "'" + std::string(kMaxQuotedToken, 'x') + "...'");
}

TEST(TextPrintable, BoundsNamesFromInput) {
    EXPECT_EQ(printable("MemTotal"), "MemTotal");
    EXPECT_EQ(printable(std::string(100, 'k')), std::string(kMaxFieldName, 'k') + "...");
    EXPECT_EQ(printable("a\tb", 2), "a\\x09...");
}

TEST(TextErrors, FieldAndLine) {
    EXPECT_EQ(fieldError("MemTotal", "field missing").what, "MemTotal: field missing");
    EXPECT_EQ(fieldError("", "empty input").what, "empty input");
    EXPECT_EQ(lineError(3, "expected 'key value'").what, "line 3: expected 'key value'");
}

TEST(TextKeyNumbers, ParsesAndRejectsDuplicates) {
    auto ok = parseKeyNumberLines("a 1\n\nb 2\r\n");
    ASSERT_TRUE(ok) << ok.error().what;
    EXPECT_EQ(ok->size(), 2U);
    ASSERT_EQ(ok->count("b"), 1U);
    EXPECT_EQ(ok->find("b")->second, 2U);
    EXPECT_EQ(parseKeyNumberLines("a 1\nb\n").error().what, "line 2: expected 'key value'");
    EXPECT_EQ(parseKeyNumberLines("a 1\na 2\n").error().what, "line 2: duplicate key 'a'");
    EXPECT_EQ(parseKeyNumberLines("a x\n").error().what, "a: not a number: 'x'");
    EXPECT_TRUE(parseKeyNumberLines("")->empty());
}

} // namespace
} // namespace memqos::parse::text

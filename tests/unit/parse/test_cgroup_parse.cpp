// SPDX-License-Identifier: Apache-2.0
#include "memqos/parse/proc.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "samples.hpp"

namespace memqos::parse {
namespace {

// ---- memory.current & co --------------------------------------------------

struct CounterCase {
    std::string name;
    std::string input;
    bool ok;
    Bytes value;
    std::string error;
};
// NOLINTNEXTLINE(readability-identifier-naming): gtest looks this name up
void PrintTo(const CounterCase& c, std::ostream* os) {
    *os << c.name;
}

class ParseCounterCases : public ::testing::TestWithParam<CounterCase> {};

TEST_P(ParseCounterCases, Parses) {
    const auto& c = GetParam();
    auto r = parseCounter(c.input);
    ASSERT_EQ(r.ok(), c.ok) << (r ? std::to_string(*r) : r.error().what);
    if (c.ok) {
        EXPECT_EQ(*r, c.value);
    } else {
        EXPECT_EQ(r.error().what, c.error);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseCounterCases,
    ::testing::Values(CounterCase{"Plain", "1073741824\n", true, 1073741824, ""},
                      CounterCase{"NoNewline", "0", true, 0, ""},
                      CounterCase{"Crlf", "4096\r\n", true, 4096, ""},
                      CounterCase{"Spaces", "  4096 \n\n", true, 4096, ""},
                      CounterCase{"Max64", "18446744073709551615", true, UINT64_MAX, ""},
                      CounterCase{"Empty", "", false, 0, "empty input"},
                      CounterCase{"OnlyNewline", "\n", false, 0, "empty input"},
                      CounterCase{"Negative", "-1\n", false, 0, "not a number: '-1'"},
                      CounterCase{"Overflow", "99999999999999999999999\n", false, 0,
                                  "out of range: '99999999999999999999999'"},
                      CounterCase{"Word", "max\n", false, 0, "not a number: 'max'"},
                      CounterCase{"TwoNumbers", "1 2\n", false, 0, "expected one number: '1 2'"},
                      CounterCase{"TwoLines", "1\n2\n", false, 0, "not a number: '1\\x0a2'"},
                      CounterCase{"Garbage", std::string("\x00\x01", 2), false, 0,
                                  "not a number: '\\x00\\x01'"}),
    [](const auto& tp) { return tp.param.name; });

// ---- memory.{min,low,high,max}, memory.swap.max ------------------------------

struct LimitCase {
    std::string name;
    std::string input;
    bool ok;
    Limit value;
    std::string error;
};
// NOLINTNEXTLINE(readability-identifier-naming): gtest looks this name up
void PrintTo(const LimitCase& c, std::ostream* os) {
    *os << c.name;
}

class ParseLimitCases : public ::testing::TestWithParam<LimitCase> {};

TEST_P(ParseLimitCases, Parses) {
    const auto& c = GetParam();
    auto r = parseLimit(c.input);
    ASSERT_EQ(r.ok(), c.ok) << (r ? "ok" : r.error().what);
    if (c.ok) {
        EXPECT_EQ(*r, c.value);
    } else {
        EXPECT_EQ(r.error().what, c.error);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseLimitCases,
    ::testing::Values(
        LimitCase{"Max", "max\n", true, std::nullopt, ""},
        LimitCase{"MaxNoNewline", "max", true, std::nullopt, ""},
        LimitCase{"MaxCrlf", " max\r\n", true, std::nullopt, ""},
        LimitCase{"Number", "2147483648\n", true, Limit{2147483648ULL}, ""},
        LimitCase{"Zero", "0\n", true, Limit{0}, ""},
        LimitCase{"Maxx", "maxx\n", false, std::nullopt, "not a number or 'max': 'maxx'"},
        LimitCase{"MaxUpper", "MAX\n", false, std::nullopt, "not a number or 'max': 'MAX'"},
        LimitCase{"Ma", "ma\n", false, std::nullopt, "not a number or 'max': 'ma'"},
        LimitCase{"MinusOne", "-1\n", false, std::nullopt, "not a number or 'max': '-1'"},
        LimitCase{"Overflow", "99999999999999999999999", false, std::nullopt,
                  "out of range: '99999999999999999999999'"},
        LimitCase{"MaxAndNumber", "max 1\n", false, std::nullopt,
                  "expected one number or 'max': 'max 1'"},
        LimitCase{"Empty", "", false, std::nullopt, "empty input"}),
    [](const auto& tp) { return tp.param.name; });

// ---- memory.stat -------------------------------------------------------------

TEST(ParseMemoryStat, RealFile) {
    auto r = parseMemoryStat(test::samples::kMemoryStat);
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(r->anon, 1073741824U);
    EXPECT_EQ(r->file, 536870912U);
    EXPECT_EQ(r->shmem, 4096U);
    EXPECT_EQ(r->fileDirty, 12288U);
    EXPECT_EQ(r->inactiveFile, 402653184U);
    EXPECT_EQ(r->activeFile, 134217728U);
    EXPECT_EQ(r->pgscan, 5000U);
    EXPECT_EQ(r->pgsteal, 4200U);
    EXPECT_EQ(r->pgmajfault, 321U);
    EXPECT_EQ(r->workingsetRefaultAnon, 17U);
    EXPECT_EQ(r->workingsetRefaultFile, 4096U);
    EXPECT_EQ(r->all.size(), 51U);
    ASSERT_EQ(r->all.count("kernel_stack"), 1U);
    EXPECT_EQ(r->all.find("kernel_stack")->second, 327680U);
}

TEST(ParseMemoryStat, OldKernelMissingKeysAreZero) {
    // 5.4: no workingset_refault_{anon,file}, only workingset_refault.
    auto r = parseMemoryStat("anon 10\nfile 20\nworkingset_refault 5\n");
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(r->anon, 10U);
    EXPECT_EQ(r->workingsetRefaultAnon, 0U);
    EXPECT_EQ(r->pgscan, 0U);
    EXPECT_EQ(r->all.size(), 3U);
}

TEST(ParseMemoryStat, CrlfAndNoTrailingNewline) {
    auto r = parseMemoryStat("anon 10\r\nfile\t20");
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(r->file, 20U);
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

class ParseMemoryStatBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(ParseMemoryStatBad, NamesTheProblem) {
    auto r = parseMemoryStat(GetParam().input);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, std::errc::invalid_argument);
    EXPECT_EQ(r.error().what, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseMemoryStatBad,
    ::testing::Values(
        BadCase{"Empty", "", "empty input"},
        BadCase{"Truncated", "anon 10\nfile", "line 2: expected 'key value'"},
        BadCase{"ThreeTokens", "anon 10 kB\n", "line 1: expected 'key value'"},
        BadCase{"NotANumber", "anon 10\nfile x\n", "file: not a number: 'x'"},
        BadCase{"Negative", "anon -10\n", "anon: not a number: '-10'"},
        BadCase{"Overflow", "anon 99999999999999999999999\n",
                "anon: out of range: '99999999999999999999999'"},
        BadCase{"Duplicate", "anon 1\nfile 2\nanon 3\n", "line 3: duplicate key 'anon'"},
        BadCase{"Garbage", std::string("\xff\xfe\x00 1 2", 7), "line 1: expected 'key value'"}),
    [](const auto& tp) { return tp.param.name; });

// ---- cgroup.procs ------------------------------------------------------------

TEST(ParseCgroupProcs, Lists) {
    auto r = parseCgroupProcs("1\n4242\n2147483647\n");
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(*r, (std::vector<std::int32_t>{1, 4242, 2147483647}));
}

TEST(ParseCgroupProcs, EmptyIsNoProcesses) {
    auto r = parseCgroupProcs("");
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->empty());
    EXPECT_TRUE(parseCgroupProcs("\n")->empty());
}

TEST(ParseCgroupProcs, CrlfAndNoTrailingNewline) {
    auto r = parseCgroupProcs("7\r\n 8 \r\n9");
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(*r, (std::vector<std::int32_t>{7, 8, 9}));
}

class ParseCgroupProcsBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(ParseCgroupProcsBad, NamesTheLine) {
    auto r = parseCgroupProcs(GetParam().input);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().what, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseCgroupProcsBad,
    ::testing::Values(
        BadCase{"Word", "1\nabc\n", "line 2: pid: not a number: 'abc'"},
        BadCase{"Zero", "0\n", "line 1: pid: out of range: '0'"},
        BadCase{"Negative", "-5\n", "line 1: pid: out of range: '-5'"},
        BadCase{"Overflow", "2147483648\n", "line 1: pid: out of range: '2147483648'"},
        BadCase{"TwoPerLine", "1 2\n", "line 1: pid: expected one PID per line: '1 2'"}),
    [](const auto& tp) { return tp.param.name; });

} // namespace
} // namespace memqos::parse

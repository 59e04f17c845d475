// SPDX-License-Identifier: Apache-2.0
#include "memqos/parse/proc.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "samples.hpp"

namespace memqos::parse {
namespace {

TEST(ParseVmstat, RealExcerpt) {
    auto r = parseVmstat(test::samples::kVmstat);
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(r->pgscanKswapd, 9441208U);
    EXPECT_EQ(r->pgscanDirect, 31507U);
    EXPECT_EQ(r->pgstealKswapd, 7120334U);
    EXPECT_EQ(r->pgstealDirect, 20117U);
    EXPECT_EQ(r->pswpin, 53817U);
    EXPECT_EQ(r->pswpout, 611402U);
    EXPECT_EQ(r->oomKill, 3U);
}

TEST(ParseVmstat, MissingCountersAreZero) {
    auto r = parseVmstat("nr_free_pages 1\npgscan_kswapd 7");
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(r->pgscanKswapd, 7U);
    EXPECT_EQ(r->oomKill, 0U);
    EXPECT_EQ(r->pswpout, 0U);
}

TEST(ParseVmstat, CrlfAndExtraWhitespace) {
    auto r = parseVmstat("oom_kill\t\t2\r\n  pswpin  5 \r\n");
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(r->oomKill, 2U);
    EXPECT_EQ(r->pswpin, 5U);
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

class ParseVmstatBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(ParseVmstatBad, NamesTheProblem) {
    auto r = parseVmstat(GetParam().input);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().what, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseVmstatBad,
    ::testing::Values(
        BadCase{"Empty", "", "empty input"},
        BadCase{"Truncated", "pswpin 1\npswpout", "line 2: expected 'key value'"},
        BadCase{"NotANumber", "oom_kill many\n", "oom_kill: not a number: 'many'"},
        BadCase{"Negative", "nr_free_pages -3\n", "nr_free_pages: not a number: '-3'"},
        BadCase{"Overflow", "pgscan_kswapd 99999999999999999999999\n",
                "pgscan_kswapd: out of range: '99999999999999999999999'"},
        BadCase{"Duplicate", "oom_kill 1\noom_kill 2\n", "line 2: duplicate key 'oom_kill'"},
        BadCase{"MeminfoStyle", "MemTotal: 4 kB\n", "line 1: expected 'key value'"}),
    [](const auto& tp) { return tp.param.name; });

} // namespace
} // namespace memqos::parse

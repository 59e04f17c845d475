// SPDX-License-Identifier: Apache-2.0
#include "memqos/parse/proc.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "samples.hpp"

namespace memqos::parse {
namespace {

TEST(ParseMeminfo, RealHost) {
    auto r = parseMeminfo(test::samples::kMeminfo);
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(r->memTotal, 65856896ULL * 1024);
    EXPECT_EQ(r->memFree, 1843212ULL * 1024);
    EXPECT_EQ(r->memAvailable, 23519640ULL * 1024);
    EXPECT_EQ(r->buffers, 412508ULL * 1024);
    EXPECT_EQ(r->cached, 20587320ULL * 1024);
    EXPECT_EQ(r->swapCached, 61440ULL * 1024);
    EXPECT_EQ(r->swapTotal, 12582908ULL * 1024);
    EXPECT_EQ(r->swapFree, 10485756ULL * 1024);
    EXPECT_EQ(r->shmem, 214856ULL * 1024);
    EXPECT_EQ(r->sReclaimable, 1121004ULL * 1024);
}

TEST(ParseMeminfo, MinimalAndOptionalFieldsDefaultToZero) {
    auto r = parseMeminfo("MemTotal: 4 kB\nMemFree: 2 kB\nMemAvailable: 3 kB");
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(r->memTotal, 4096U);
    EXPECT_EQ(r->memFree, 2048U);
    EXPECT_EQ(r->memAvailable, 3072U);
    EXPECT_EQ(r->swapTotal, 0U);
    EXPECT_EQ(r->cached, 0U);
}

TEST(ParseMeminfo, WhitespaceVariantsAndCrlf) {
    auto r =
        parseMeminfo("MemTotal:4 kB\r\n\tMemFree :\t2\tkB  \r\n\r\nMemAvailable:       3 kB\r\n");
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(r->memTotal, 4096U);
    EXPECT_EQ(r->memFree, 2048U);
    EXPECT_EQ(r->memAvailable, 3072U);
}

TEST(ParseMeminfo, UnitlessCountsAreAccepted) {
    auto r = parseMeminfo(
        "MemTotal: 4 kB\nMemFree: 2 kB\nMemAvailable: 3 kB\nHugePages_Total:      12\n");
    ASSERT_TRUE(r) << r.error().what;
}

TEST(ParseMeminfo, LargestRepresentableValue) {
    // 2^54 - 1 kB is the largest value whose byte count fits 64 bits.
    auto r = parseMeminfo("MemTotal: 18014398509481983 kB\nMemFree: 0 kB\nMemAvailable: 0 kB\n");
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(r->memTotal, 18014398509481983ULL * 1024);
}

struct BadCase {
    std::string name;
    std::string input;
    std::string error; // the exact `what`
};
// NOLINTNEXTLINE(readability-identifier-naming): gtest looks this name up
void PrintTo(const BadCase& c, std::ostream* os) {
    *os << c.name;
}

std::string base(std::string_view extra) {
    return "MemTotal: 4 kB\nMemFree: 2 kB\nMemAvailable: 3 kB\n" + std::string(extra);
}

class ParseMeminfoBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(ParseMeminfoBad, NamesTheProblem) {
    auto r = parseMeminfo(GetParam().input);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, std::errc::invalid_argument);
    EXPECT_EQ(r.error().what, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseMeminfoBad,
    ::testing::Values(
        BadCase{"Empty", "", "empty input"}, BadCase{"Blank", "\n \n", "empty input"},
        BadCase{"NotANumber", "MemTotal: abc kB\nMemFree: 2 kB\nMemAvailable: 3 kB\n",
                "MemTotal: not a number: 'abc'"},
        BadCase{"Negative", "MemTotal: -1 kB\nMemFree: 2 kB\nMemAvailable: 3 kB\n",
                "MemTotal: not a number: '-1'"},
        BadCase{"Overflow", "MemTotal: 99999999999999999999999 kB\n",
                "MemTotal: out of range: '99999999999999999999999'"},
        BadCase{"OverflowInBytes", "MemTotal: 18014398509481984 kB\n",
                "MemTotal: out of range: 18014398509481984 kB overflows 64 bits in bytes"},
        BadCase{"MissingMemTotal", "MemFree: 2 kB\nMemAvailable: 3 kB\n", "field MemTotal missing"},
        BadCase{"MissingMemAvailable", "MemTotal: 4 kB\nMemFree: 2 kB\n",
                "field MemAvailable missing"},
        BadCase{"TruncatedLine", base("Cached:"), "Cached: missing value"},
        BadCase{"TruncatedKey", base("Cach"), "line 4: expected 'Key: value [kB]'"},
        BadCase{"NoColon", base("Cached 12 kB\n"), "line 4: expected 'Key: value [kB]'"},
        BadCase{"EmptyKey", base(": 12 kB\n"), "line 4: expected 'Key: value [kB]'"},
        BadCase{"SpaceInKey", base("Mem Total: 12 kB\n"), "line 4: expected 'Key: value [kB]'"},
        BadCase{"WrongUnit", base("Cached: 12 MB\n"), "Cached: unexpected unit 'MB'"},
        BadCase{"TrailingJunk", base("Cached: 12 kB extra\n"),
                "Cached: unexpected text after the value: 'extra'"},
        BadCase{"NamedWithoutUnit", base("Cached: 12\n"), "Cached: missing unit 'kB'"},
        BadCase{"Duplicate", base("MemTotal: 8 kB\n"), "line 4: duplicate key 'MemTotal'"},
        BadCase{"NumberGlued", "MemTotal: 4kB\nMemFree: 2 kB\nMemAvailable: 3 kB\n",
                "MemTotal: not a number: '4kB'"},
        BadCase{"GarbageBytes", std::string("\x01\xff\x00garbage", 10),
                "line 1: expected 'Key: value [kB]'"},
        BadCase{"BadUnknownValue", base("Zswap: lots kB\n"), "Zswap: not a number: 'lots'"},
        BadCase{"LongKey", base(std::string(1000, 'K') + ": x kB\n"),
                std::string(64, 'K') + "...: not a number: 'x'"},
        BadCase{"ControlCharInKey", base("Mem\x01Total: x kB\n"),
                "Mem\\x01Total: not a number: 'x'"},
        BadCase{"VeryLongLine", base("Cached: " + std::string(100000, '9') + " kB\n"),
                "Cached: out of range: '" + std::string(40, '9') + "...'"}),
    [](const auto& tp) { return tp.param.name; });

} // namespace
} // namespace memqos::parse

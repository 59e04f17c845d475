// SPDX-License-Identifier: Apache-2.0
#include "memqos/parse/proc.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "samples.hpp"

namespace memqos::parse {
namespace {

constexpr std::string_view kHeader = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";

TEST(ParseSwaps, RealFileWithEscapedName) {
    auto r = parseSwaps(test::samples::kSwaps);
    ASSERT_TRUE(r) << r.error().what;
    ASSERT_EQ(r->size(), 2U);
    const auto& a = (*r)[0];
    EXPECT_EQ(a.filename, "/dev/nvme0n1p3");
    EXPECT_EQ(a.type, "partition");
    EXPECT_EQ(a.size, 8388604ULL * 1024);
    EXPECT_EQ(a.used, 1048576ULL * 1024);
    EXPECT_EQ(a.priority, -2);
    const auto& b = (*r)[1];
    EXPECT_EQ(b.filename, "/var/lib/swap files/swap0");
    EXPECT_EQ(b.type, "file");
    EXPECT_EQ(b.size, 4194304ULL * 1024);
    EXPECT_EQ(b.priority, 10);
}

TEST(ParseSwaps, HeaderOnlyIsNoSwap) {
    auto r = parseSwaps(kHeader);
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_TRUE(r->empty());
    EXPECT_TRUE(parseSwaps("Filename Type Size Used Priority")->empty());
}

TEST(ParseSwaps, DecodesEveryKernelEscape) {
    auto r = parseSwaps(std::string(kHeader) +
                        "/s\\040p\\011t\\012n\\134b\\040(deleted) file 4 0 -1\r\n");
    ASSERT_TRUE(r) << r.error().what;
    ASSERT_EQ(r->size(), 1U);
    EXPECT_EQ((*r)[0].filename, "/s p\tt\nn\\b (deleted)");
    EXPECT_EQ((*r)[0].size, 4096U);
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

class ParseSwapsBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(ParseSwapsBad, NamesTheProblem) {
    auto r = parseSwaps(GetParam().input);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, std::errc::invalid_argument);
    EXPECT_EQ(r.error().what, GetParam().error);
}

std::string withHeader(std::string_view line) {
    return std::string(kHeader) + std::string(line);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseSwapsBad,
    ::testing::Values(
        BadCase{"Empty", "", "empty input: header 'Filename Type Size Used Priority' missing"},
        BadCase{"NoHeader", "/dev/sda2 partition 4 0 -2\n",
                "line 1: expected header 'Filename Type Size Used Priority'"},
        BadCase{"ShortHeader", "Filename Type Size Used\n",
                "line 1: expected header 'Filename Type Size Used Priority'"},
        BadCase{"TruncatedLine", withHeader("/dev/sda2 partition 4 0"),
                "line 2: expected 'Filename Type Size Used Priority'"},
        BadCase{"UnescapedSpace", withHeader("/swap file file 4 0 -2\n"),
                "line 2: expected 'Filename Type Size Used Priority'"},
        BadCase{"SizeNotNumber", withHeader("/dev/sda2 partition 4x 0 -2\n"),
                "line 2: Size: not a number: '4x'"},
        BadCase{"UsedNegative", withHeader("/dev/sda2 partition 4 -1 -2\n"),
                "line 2: Used: not a number: '-1'"},
        BadCase{"SizeOverflow", withHeader("/dev/sda2 partition 99999999999999999999999 0 -2\n"),
                "line 2: Size: out of range: '99999999999999999999999'"},
        BadCase{"SizeOverflowInBytes", withHeader("/dev/sda2 partition 18014398509481984 0 -2\n"),
                "line 2: Size: out of range: 18014398509481984 kB overflows 64 bits in bytes"},
        BadCase{"PriorityOverflow", withHeader("/dev/sda2 partition 4 0 2147483648\n"),
                "line 2: Priority: out of range: '2147483648'"},
        BadCase{"BadEscape", withHeader("/a\\x41 file 4 0 1\n"),
                "line 2: Filename: invalid escape in '/a\\x5cx41'"},
        BadCase{"EightInEscape", withHeader("/a\\048 file 4 0 1\n"),
                "line 2: Filename: invalid escape in '/a\\x5c048'"},
        BadCase{"NulEscape", withHeader("/a\\000 file 4 0 1\n"),
                "line 2: Filename: invalid escape in '/a\\x5c000'"},
        BadCase{"RawNul", withHeader(std::string("/a\0b file 4 0 1\n", 16)),
                "line 2: Filename: NUL byte in '/a\\x00b'"},
        BadCase{"TruncatedEscape", withHeader("/a\\04 file 4 0 1\n"),
                "line 2: Filename: truncated escape in '/a\\x5c04'"}),
    [](const auto& tp) { return tp.param.name; });

} // namespace
} // namespace memqos::parse

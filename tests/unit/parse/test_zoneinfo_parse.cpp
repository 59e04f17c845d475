// SPDX-License-Identifier: Apache-2.0
#include "memqos/parse/proc.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "samples.hpp"

namespace memqos::parse {
namespace {

TEST(ParseZoneinfo, RealTwoNodeHost) {
    auto r = parseZoneinfo(test::samples::kZoneinfo);
    ASSERT_TRUE(r) << r.error().what;
    ASSERT_EQ(r->size(), 5U);
    const auto& z = *r;
    EXPECT_EQ(z[0].node, 0);
    EXPECT_EQ(z[0].name, "DMA");
    EXPECT_EQ(z[0].freePages, 3840U);
    EXPECT_EQ(z[0].minPages, 47U);
    EXPECT_EQ(z[0].lowPages, 58U);
    EXPECT_EQ(z[0].highPages, 69U); // not a pageset "high:" value
    EXPECT_EQ(z[0].managedPages, 3840U);
    EXPECT_EQ(z[1].name, "DMA32");
    EXPECT_EQ(z[1].freePages, 772917U);
    EXPECT_EQ(z[1].highPages, 14334U);
    EXPECT_EQ(z[2].name, "Normal");
    EXPECT_EQ(z[2].freePages, 445237U);
    EXPECT_EQ(z[2].minPages, 7292U);
    EXPECT_EQ(z[2].lowPages, 9115U);
    EXPECT_EQ(z[2].highPages, 10938U);
    EXPECT_EQ(z[2].managedPages, 589824U);
    EXPECT_EQ(z[3].name, "Movable");
    EXPECT_EQ(z[3].freePages, 0U);
    EXPECT_EQ(z[3].minPages, 32U);
    EXPECT_EQ(z[3].managedPages, 0U);
    EXPECT_EQ(z[4].node, 1);
    EXPECT_EQ(z[4].name, "Normal");
    EXPECT_EQ(z[4].freePages, 1048001U);
    EXPECT_EQ(z[4].highPages, 25339U);
    EXPECT_EQ(z[4].managedPages, 8256789U);
}

TEST(ParseZoneinfo, OldKernelLayoutWithoutManaged) {
    // 3.x: "scanned", no "managed", no "boost"/"promo", no trailing newline.
    auto r = parseZoneinfo("Node 0, zone   Normal\n"
                           "  pages free     1000\n"
                           "        min      10\n"
                           "        low      12\n"
                           "        high     15\n"
                           "        scanned  0\n"
                           "        spanned  4095\n"
                           "  all_unreclaimable: 0\n"
                           "  inactive_ratio:    1");
    ASSERT_TRUE(r) << r.error().what;
    ASSERT_EQ(r->size(), 1U);
    EXPECT_EQ((*r)[0].freePages, 1000U);
    EXPECT_EQ((*r)[0].managedPages, 0U);
}

TEST(ParseZoneinfo, CrlfAndTabs) {
    auto r = parseZoneinfo(
        "Node\t3,\tzone\tNormal\r\n\tpages\tfree\t5\r\n min 1\r\n low 2\r\n high 3\r\n");
    ASSERT_TRUE(r) << r.error().what;
    ASSERT_EQ(r->size(), 1U);
    EXPECT_EQ((*r)[0].node, 3);
    EXPECT_EQ((*r)[0].highPages, 3U);
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

class ParseZoneinfoBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(ParseZoneinfoBad, NamesTheZone) {
    auto r = parseZoneinfo(GetParam().input);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, std::errc::invalid_argument);
    EXPECT_EQ(r.error().what, GetParam().error);
}

constexpr std::string_view kGoodZone =
    "Node 0, zone      DMA\n  pages free 1\n min 1\n low 2\n high 3\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseZoneinfoBad,
    ::testing::Values(
        BadCase{"Empty", "", "empty input"},
        BadCase{"NoHeader", "  pages free 1\n", "line 1: expected 'Node <n>, zone <name>'"},
        BadCase{"Garbage", "\x01\x02\x03 4\n", "line 1: expected 'Node <n>, zone <name>'"},
        BadCase{"HeaderNoComma", "Node 0 zone Normal\n",
                "line 1: expected 'Node <n>, zone <name>'"},
        BadCase{"HeaderNoName", "Node 0, zone\n", "line 1: expected 'Node <n>, zone <name>'"},
        BadCase{"HeaderExtra", "Node 0, zone Normal extra\n",
                "line 1: expected 'Node <n>, zone <name>'"},
        BadCase{"HeaderBadNode", "Node x, zone Normal\n", "line 1: node: not a number: 'x'"},
        BadCase{"HeaderNegativeNode", "Node -1, zone Normal\n",
                "line 1: node: out of range: '-1,'"},
        BadCase{"MissingLow", "Node 0, zone  Movable\n  pages free 0\n min 1\n high 3\n",
                "node 0, zone Movable: field low missing"},
        BadCase{"MissingFree", "Node 1, zone Normal\n min 1\n low 2\n high 3\n",
                "node 1, zone Normal: field pages free missing"},
        BadCase{"SecondZoneMissingHigh",
                std::string(kGoodZone) + "Node 0, zone Normal\n  pages free 1\n min 1\n low 2\n",
                "node 0, zone Normal: field high missing"},
        BadCase{"OnlyPagesetHigh",
                "Node 0, zone Normal\n  pages free 1\n min 1\n low 2\n    high:  3\n",
                "node 0, zone Normal: field high missing"},
        BadCase{"HeaderOnly", "Node 0, zone Normal\n",
                "node 0, zone Normal: field pages free missing"},
        BadCase{"NotANumber", "Node 0, zone Normal\n  pages free 1\n min x\n",
                "node 0, zone Normal: min: not a number: 'x'"},
        BadCase{"Negative", "Node 0, zone Normal\n  pages free -1\n",
                "node 0, zone Normal: pages free: not a number: '-1'"},
        BadCase{"Overflow", "Node 0, zone Normal\n  pages free 1\n low 99999999999999999999999\n",
                "node 0, zone Normal: low: out of range: '99999999999999999999999'"},
        BadCase{"Truncated", "Node 0, zone Normal\n  pages free 1\n min",
                "node 0, zone Normal: expected 'min <pages>'"},
        BadCase{"ExtraToken", "Node 0, zone Normal\n  pages free 1 2\n",
                "node 0, zone Normal: expected 'pages free <pages>'"},
        BadCase{"DuplicateMin", std::string(kGoodZone) + " min 4\n",
                "node 0, zone DMA: duplicate field min"}),
    [](const auto& tp) { return tp.param.name; });

} // namespace
} // namespace memqos::parse

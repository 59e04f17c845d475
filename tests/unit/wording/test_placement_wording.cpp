// SPDX-License-Identifier: Apache-2.0
// The wording of placement verdicts and findings: the text D-Bus, the
// journal, memqosctl and the Ganeti hook show (tests/ganeti and the VM tests
// grep for parts of it).
#include "memqos/wording/bytes.hpp"
#include "memqos/wording/placement.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "../core/literals.hpp"
#include "../core/placement_host.hpp"

namespace memqos::wording {
namespace {

using namespace memqos::core; // NOLINT(google-build-using-namespace): the core's types
using namespace core::test;   // NOLINT(google-build-using-namespace): unit literals

constexpr Bytes kMax = std::numeric_limits<Bytes>::max();

struct FormatCase {
    Bytes bytes;
    const char* text;
};

class FormatBytes : public ::testing::TestWithParam<FormatCase> {};

TEST_P(FormatBytes, Human) {
    EXPECT_EQ(formatBytes(GetParam().bytes), GetParam().text);
}

INSTANTIATE_TEST_SUITE_P(
    Wording, FormatBytes,
    ::testing::Values(FormatCase{0, "0 B"}, FormatCase{1023, "1023 B"}, FormatCase{1024, "1.0 KiB"},
                      FormatCase{1536, "1.5 KiB"}, FormatCase{1_MiB - 1, "1.0 MiB"},
                      FormatCase{1_MiB, "1.0 MiB"}, FormatCase{993210368, "947.2 MiB"},
                      FormatCase{1_GiB - 1, "1.0 GiB"}, FormatCase{1_GiB + 52_MiB, "1.1 GiB"},
                      FormatCase{1_GiB + 51_MiB, "1.0 GiB"}, FormatCase{7_GiB + 512_MiB, "7.5 GiB"},
                      FormatCase{1024_GiB, "1.0 TiB"}, FormatCase{1536_GiB, "1.5 TiB"},
                      FormatCase{kMax, "16777216.0 TiB"}));

struct PlacementCase {
    const char* name;
    PlacementInput in;
    Bytes candidate;
    VerdictKind kind;
    const char* message; // substring
};

class CheckPlacement : public ::testing::TestWithParam<PlacementCase> {};

TEST_P(CheckPlacement, Verdict) {
    const auto& c = GetParam();
    const Verdict v = checkPlacement(c.in, c.candidate);
    const std::string message = describe(v);
    EXPECT_EQ(v.kind, c.kind) << message;
    EXPECT_TRUE(message.starts_with(std::string(toString(c.kind)) + ": ")) << message;
    EXPECT_NE(message.find(c.message), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    WordingPlacement, CheckPlacement,
    ::testing::Values(
        PlacementCase{"fits_empty_host", host(0), 2_GiB, VerdictKind::Fits, "7.0 GiB left"},
        PlacementCase{"fits_exactly_at_ratio", host(5_GiB), 2_GiB, VerdictKind::Fits,
                      "available 7.0 GiB"},
        PlacementCase{"hard_one_byte_over", host(5_GiB), 2_GiB + 1, VerdictKind::Hard,
                      "2.0 GiB left"},
        PlacementCase{"fits_exactly_with_reserve", host(4_GiB, 1_GiB), 2_GiB, VerdictKind::Fits,
                      "reserved 1.0 GiB"},
        PlacementCase{"soft_one_byte_into_reserve", host(4_GiB, 1_GiB), 2_GiB + 1,
                      VerdictKind::Soft, "failover reserve of 1.0 GiB"},
        PlacementCase{"soft_exactly_at_ratio_without_reserve", host(5_GiB, 1_GiB), 2_GiB,
                      VerdictKind::Soft, "(2.0 GiB left)"},
        PlacementCase{
            "hard_design_example", host(5_GiB + 512_MiB), 2_GiB, VerdictKind::Hard,
            "hard: 2.0 GiB asked, 1.5 GiB left under memory ratio 1.00 (available 7.0 GiB, "
            "instances 5.5 GiB)"},
        PlacementCase{"services_reduce_available", host(0, 0, 1.0, 6_GiB), 1_GiB + 1,
                      VerdictKind::Hard, "available 1.0 GiB"},
        PlacementCase{"overcommit_fits_at_ratio", host(8_GiB + 512_MiB, 0, 1.5), 2_GiB,
                      VerdictKind::Fits, "memory ratio 1.50"},
        PlacementCase{"overcommit_hard_over_ratio", host(8_GiB + 512_MiB, 0, 1.5), 2_GiB + 1,
                      VerdictKind::Hard, "2.0 GiB left"},
        // 1.15 × 100 is 114.99999999999999 in doubles; the check is exact.
        PlacementCase{"ratio_exact_in_millionths",
                      {.memTotal = 100, .instances = 100, .memoryRatio = 1.15},
                      15,
                      VerdictKind::Fits,
                      "memory ratio 1.15"},
        PlacementCase{
            "available_zero", host(0, 0, 1.0, 7_GiB), 0, VerdictKind::Hard,
            "node reserve 1.0 GiB and services 7.0 GiB already take all 8.0 GiB of memory"},
        PlacementCase{"reserve_above_total",
                      {.memTotal = 512_MiB, .nodeReserve = 1_GiB},
                      1,
                      VerdictKind::Hard,
                      "already take all 512.0 MiB"},
        PlacementCase{"zero_candidate_over_full_host", host(8_GiB), 0, VerdictKind::Hard,
                      "0 B asked"},
        PlacementCase{"zero_candidate_fits", host(0), 0, VerdictKind::Fits, "0 B asked"},
        // Ratio below 1 (config rejects it): the same formulas, less room.
        PlacementCase{"ratio_below_one_fits", host(0, 0, 0.5), 3_GiB + 512_MiB, VerdictKind::Fits,
                      "memory ratio 0.50"},
        PlacementCase{"ratio_below_one_hard", host(0, 0, 0.5), 3_GiB + 512_MiB + 1,
                      VerdictKind::Hard, "3.5 GiB left"},
        PlacementCase{"ratio_nan_is_zero", host(0, 0, std::nan("")), 1, VerdictKind::Hard,
                      "memory ratio 0.00"},
        PlacementCase{"ratio_negative_is_zero_candidate_zero_fits", host(0, 0, -1.0), 0,
                      VerdictKind::Fits, "memory ratio 0.00"},
        PlacementCase{"huge_no_overflow", host(kMax, kMax, 1e6), kMax, VerdictKind::Hard,
                      "16777216.0 TiB asked"}),
    test::ByName());

TEST(WordingPlacement, RefuseSoftMakesSoftHard) {
    const auto soft = checkPlacement(host(4_GiB, 1_GiB), 2_GiB + 1);
    ASSERT_EQ(soft.kind, VerdictKind::Soft);
    const auto hard = checkPlacement(host(4_GiB, 1_GiB), 2_GiB + 1, {.refuseSoft = true});
    EXPECT_EQ(hard.kind, VerdictKind::Hard);
    EXPECT_EQ(describe(hard), "hard" + describe(soft).substr(4) + " (soft violations are refused)");
    // Fits and hard stay what they are.
    EXPECT_EQ(checkPlacement(host(0), 1_GiB, {.refuseSoft = true}).kind, VerdictKind::Fits);
    EXPECT_EQ(checkPlacement(host(8_GiB), 1_GiB, {.refuseSoft = true}).kind, VerdictKind::Hard);
}

TEST(WordingPlacement, SwapCheckWarnsOrRefuses) {
    PlacementInput in = host(0, 0, 2.0); // available 7 GiB: 7 GiB of swap needed
    in.swapTotal = 1_GiB;
    const auto warn = checkPlacement(in, 1_GiB);
    EXPECT_EQ(warn.kind, VerdictKind::Fits);
    EXPECT_THAT(describe(warn), ::testing::EndsWith("; warning: swap 1.0 GiB is below the 7.0 GiB "
                                                    "that memory ratio 2.00 needs"));
    const auto off = checkPlacement(in, 1_GiB, {.swapCheck = SwapCheck::Off});
    EXPECT_EQ(describe(off).find("warning"), std::string::npos) << describe(off);
    const auto refuse = checkPlacement(in, 1_GiB, {.swapCheck = SwapCheck::Refuse});
    EXPECT_EQ(refuse.kind, VerdictKind::Hard);
    EXPECT_EQ(describe(refuse), "hard: 1.0 GiB asked, but swap 1.0 GiB is below the 7.0 GiB that "
                                "memory ratio 2.00 needs (SwapCheck=refuse)");
    in.swapTotal = 7_GiB;
    EXPECT_EQ(checkPlacement(in, 1_GiB, {.swapCheck = SwapCheck::Refuse}).kind, VerdictKind::Fits);
}

TEST(WordingPlacement, FindingMessagesCarryNumbers) {
    const auto findings = describe(verifyPlacement(withSwap(host(9_GiB, 1_GiB, 1.5), 2_GiB), 8_GiB,
                                                   {{"system", 1_GiB, 0, 2_GiB, 512_MiB}}));
    ASSERT_EQ(findings.size(), 5U);
    EXPECT_EQ(findings[0], (FindingText{"error", "protection-exceeds-available",
                                        "protected memory (VMs' memory.min and memory.low) 8.0 GiB "
                                        "exceeds available 7.0 GiB: the kernel cannot "
                                        "honour every protection"}));
    EXPECT_EQ(findings[1],
              (FindingText{
                  "warning", "swap-insufficient",
                  "swap 2.0 GiB is below the 3.5 GiB that memory ratio 1.50 needs ((ratio − 1) × "
                  "available 7.0 GiB)"}));
    EXPECT_EQ(findings[2],
              (FindingText{
                  "warning", "overcommitted-beyond-swap",
                  "instances 9.0 GiB + reserved 1.0 GiB exceed available 7.0 GiB + swap 2.0 GiB"}));
    EXPECT_EQ(
        findings[3],
        (FindingText{"warning", "slice-protection-short",
                     "memqos-system.slice: memory.min 1.0 GiB is below its members' 2.0 GiB, "
                     "memory.low 0 B is below its members' 512.0 MiB; members are protected only "
                     "up to the slice's value"}));
    EXPECT_EQ(findings[4].severity, "info");
    EXPECT_EQ(
        findings[4].message,
        "memory 8.0 GiB, node reserve 1.0 GiB, services 0 B, available 7.0 GiB, instances 9.0 GiB "
        "of "
        "10.5 GiB allowed by memory ratio 1.50, reserved 1.0 GiB, swap 2.0 GiB (3.5 GiB needed)");
    const auto exceeded = describe(verifyPlacement(host(8_GiB), 0, {}));
    EXPECT_EQ(exceeded[0].message,
              "instances 8.0 GiB exceed memory ratio 1.00 × available 7.0 GiB = 7.0 GiB");
}

} // namespace
} // namespace memqos::wording

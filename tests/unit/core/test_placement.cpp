// SPDX-License-Identifier: Apache-2.0
#include "memqos/core/placement.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "literals.hpp"

namespace memqos::core {
namespace {

using namespace test; // NOLINT(google-build-using-namespace): unit literals

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
    CorePlacement, FormatBytes,
    ::testing::Values(FormatCase{0, "0 B"}, FormatCase{1023, "1023 B"}, FormatCase{1024, "1.0 KiB"},
                      FormatCase{1536, "1.5 KiB"}, FormatCase{1_MiB - 1, "1.0 MiB"},
                      FormatCase{1_MiB, "1.0 MiB"}, FormatCase{993210368, "947.2 MiB"},
                      FormatCase{1_GiB - 1, "1.0 GiB"}, FormatCase{1_GiB + 52_MiB, "1.1 GiB"},
                      FormatCase{1_GiB + 51_MiB, "1.0 GiB"}, FormatCase{7_GiB + 512_MiB, "7.5 GiB"},
                      FormatCase{1024_GiB, "1.0 TiB"}, FormatCase{1536_GiB, "1.5 TiB"},
                      FormatCase{kMax, "16777216.0 TiB"}));

struct SwapCase {
    const char* name;
    Bytes available;
    double ratio;
    Bytes expected;
};

class RequiredSwap : public ::testing::TestWithParam<SwapCase> {};

TEST_P(RequiredSwap, CeilOfExcessRatio) {
    EXPECT_EQ(requiredSwap(GetParam().available, GetParam().ratio), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    CorePlacement, RequiredSwap,
    ::testing::Values(
        SwapCase{"ratio_one", 7_GiB, 1.0, 0}, SwapCase{"ratio_below_one", 7_GiB, 0.5, 0},
        SwapCase{"ratio_one_and_half", 7_GiB, 1.5, 3_GiB + 512_MiB},
        SwapCase{"ratio_two", 7_GiB, 2.0, 7_GiB}, SwapCase{"rounds_up", 1, 1.000001, 1},
        SwapCase{"rounds_up_odd", 3, 1.5, 2}, SwapCase{"available_zero", 0, 3.0, 0},
        SwapCase{"nan", 7_GiB, std::nan(""), 0}, SwapCase{"saturates", kMax, 1e6, kMax}),
    test::ByName());

// 8 GiB host, 1 GiB node reserve: 7 GiB available unless services say otherwise.
PlacementInput host(Bytes instances, Bytes reserved = 0, double ratio = 1.0, Bytes services = 0) {
    return PlacementInput{.memTotal = 8_GiB,
                          .nodeReserve = 1_GiB,
                          .services = services,
                          .instances = instances,
                          .reserved = reserved,
                          .memoryRatio = ratio,
                          .swapTotal = 0};
}

TEST(CorePlacement, AvailableMemory) {
    EXPECT_EQ(availableMemory(host(0)), 7_GiB);
    EXPECT_EQ(availableMemory(host(0, 0, 1.0, 2_GiB)), 5_GiB);
    EXPECT_EQ(availableMemory(host(0, 0, 1.0, 7_GiB)), 0U);
    EXPECT_EQ(availableMemory(host(0, 0, 1.0, 9_GiB)), 0U);
    EXPECT_EQ(availableMemory({.memTotal = 1_GiB, .nodeReserve = kMax, .services = kMax}), 0U);
}

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
    EXPECT_EQ(v.kind, c.kind) << v.message;
    EXPECT_TRUE(v.message.starts_with(std::string(toString(c.kind)) + ": ")) << v.message;
    EXPECT_NE(v.message.find(c.message), std::string::npos) << v.message;
    EXPECT_EQ(v.message.find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    CorePlacement, CheckPlacement,
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

TEST(CorePlacement, RefuseSoftMakesSoftHard) {
    const auto soft = checkPlacement(host(4_GiB, 1_GiB), 2_GiB + 1);
    ASSERT_EQ(soft.kind, VerdictKind::Soft);
    const auto hard = checkPlacement(host(4_GiB, 1_GiB), 2_GiB + 1, {.refuseSoft = true});
    EXPECT_EQ(hard.kind, VerdictKind::Hard);
    EXPECT_EQ(hard.message, "hard" + soft.message.substr(4) + " (soft violations are refused)");
    // Fits and hard stay what they are.
    EXPECT_EQ(checkPlacement(host(0), 1_GiB, {.refuseSoft = true}).kind, VerdictKind::Fits);
    EXPECT_EQ(checkPlacement(host(8_GiB), 1_GiB, {.refuseSoft = true}).kind, VerdictKind::Hard);
}

TEST(CorePlacement, SwapCheckWarnsOrRefuses) {
    PlacementInput in = host(0, 0, 2.0); // available 7 GiB: 7 GiB of swap needed
    in.swapTotal = 1_GiB;
    const auto warn = checkPlacement(in, 1_GiB);
    EXPECT_EQ(warn.kind, VerdictKind::Fits);
    EXPECT_THAT(warn.message, ::testing::EndsWith("; warning: swap 1.0 GiB is below the 7.0 GiB "
                                                  "that memory ratio 2.00 needs"));
    const auto off = checkPlacement(in, 1_GiB, {.swapCheck = SwapCheck::Off});
    EXPECT_EQ(off.message.find("warning"), std::string::npos) << off.message;
    const auto refuse = checkPlacement(in, 1_GiB, {.swapCheck = SwapCheck::Refuse});
    EXPECT_EQ(refuse.kind, VerdictKind::Hard);
    EXPECT_EQ(refuse.message, "hard: 1.0 GiB asked, but swap 1.0 GiB is below the 7.0 GiB that "
                              "memory ratio 2.00 needs (SwapCheck=refuse)");
    in.swapTotal = 7_GiB;
    EXPECT_EQ(checkPlacement(in, 1_GiB, {.swapCheck = SwapCheck::Refuse}).kind, VerdictKind::Fits);
}

TEST(CorePlacement, CommittedMemoryCountsUpInstancesOnce) {
    const std::vector<Instance> all{{"a", 1_GiB, 2_GiB, true},
                                    {"b", 1_GiB, 4_GiB, false},
                                    {"c", 0, 1_GiB, true}};
    EXPECT_EQ(committedMemory(all, "", 0), 3_GiB);
    EXPECT_EQ(committedMemory(all, "a", 0), 1_GiB);
    EXPECT_EQ(committedMemory(all, "b", 0), 3_GiB);
    EXPECT_EQ(committedMemory(all, "", 64_MiB), 3_GiB + 128_MiB);
    EXPECT_EQ(committedMemory({{"x", 0, kMax, true}, {"y", 0, kMax, true}}, "", 0), kMax);
}

TEST(CorePlacement, InstanceNames) {
    for (const char* ok : {"inst1.example.test", "a", "web-1_x", "9lives"}) {
        EXPECT_TRUE(validateInstanceName(ok)) << ok;
    }
    for (const char* bad : {"", "-a", ".a", "a b", "a/b", "a\nb", "ä"}) {
        EXPECT_FALSE(validateInstanceName(bad)) << bad;
    }
    EXPECT_TRUE(validateInstanceName(std::string(255, 'a')));
    EXPECT_FALSE(validateInstanceName(std::string(256, 'a')));
}

TEST(CorePlacement, VerdictNumbers) {
    PlacementInput in = host(5_GiB + 512_MiB, 256_MiB, 1.5);
    in.swapTotal = 2_GiB;
    const Verdict v = checkPlacement(in, 2_GiB);
    const Numbers expected{
        {"memory_total", 8_GiB},
        {"node_reserved", 1_GiB},
        {"services", 0},
        {"available", 7_GiB},
        {"instances", 5_GiB + 512_MiB},
        {"reserved", 256_MiB},
        {"candidate", 2_GiB},
        {"ratio_permille", 1500},
        {"usage_before_permille", 786},              // 5.5/7 = 0.7857
        {"usage_after_permille", 1072},              // 7.5/7 = 1.0714
        {"usage_after_with_reserve_permille", 1108}, // 7.75/7 = 1.1071
        {"swap_total", 2_GiB},
        {"swap_required", 3_GiB + 512_MiB},
    };
    EXPECT_EQ(v.numbers, expected);
    EXPECT_EQ(v.kind, VerdictKind::Fits);
}

TEST(CorePlacement, VerdictNumbersWithoutAvailableHaveNoUsage) {
    const Verdict v = checkPlacement(host(0, 0, 1.0, 7_GiB), 1_GiB);
    for (const auto& [key, value] : v.numbers) {
        EXPECT_EQ(key.find("usage"), std::string::npos) << key;
    }
    EXPECT_EQ(v.numbers.size(), 10U);
}

TEST(CorePlacement, VerdictKindNames) {
    EXPECT_EQ(toString(VerdictKind::Fits), "fits");
    EXPECT_EQ(toString(VerdictKind::Soft), "soft");
    EXPECT_EQ(toString(VerdictKind::Hard), "hard");
}

struct VerifyCase {
    const char* name;
    PlacementInput in;
    Bytes protectedMin;
    std::vector<ClassCoverage> coverage;
    std::vector<std::string> codes; // in order, "summary" last
};

class VerifyPlacement : public ::testing::TestWithParam<VerifyCase> {};

TEST_P(VerifyPlacement, Findings) {
    const auto& c = GetParam();
    const auto findings = verifyPlacement(c.in, c.protectedMin, c.coverage);
    std::vector<std::string> codes;
    for (const auto& f : findings) {
        codes.push_back(f.code);
        EXPECT_TRUE(f.severity == "error" || f.severity == "warning" || f.severity == "info")
            << f.severity;
        EXPECT_FALSE(f.message.empty());
    }
    EXPECT_EQ(codes, c.codes);
}

PlacementInput withSwap(PlacementInput in, Bytes swap) {
    in.swapTotal = swap;
    return in;
}

INSTANTIATE_TEST_SUITE_P(
    CorePlacement, VerifyPlacement,
    ::testing::Values(
        VerifyCase{"all_good", host(4_GiB), 2_GiB, {{"shared", 0, 1_GiB, 0, 1_GiB}}, {"summary"}},
        VerifyCase{"zero_swap_ratio_one_is_fine", host(7_GiB), 0, {}, {"summary"}},
        VerifyCase{"zero_swap_with_overcommit",
                   host(7_GiB, 0, 1.5),
                   0,
                   {},
                   {"swap-insufficient", "summary"}},
        VerifyCase{
            "swap_just_enough", withSwap(host(7_GiB, 0, 1.5), 3_GiB + 512_MiB), 0, {}, {"summary"}},
        VerifyCase{"swap_one_byte_short",
                   withSwap(host(7_GiB, 0, 1.5), 3_GiB + 512_MiB - 1),
                   0,
                   {},
                   {"swap-insufficient", "summary"}},
        VerifyCase{"overcommitted_beyond_swap",
                   withSwap(host(9_GiB, 1_GiB, 1.5), 2_GiB),
                   0,
                   {},
                   {"swap-insufficient", "overcommitted-beyond-swap", "summary"}},
        VerifyCase{"reserve_counts_beyond_swap",
                   host(7_GiB, 1),
                   0,
                   {},
                   {"overcommitted-beyond-swap", "summary"}},
        VerifyCase{"ratio_exceeded",
                   host(7_GiB + 1),
                   0,
                   {},
                   {"ratio-exceeded", "overcommitted-beyond-swap", "summary"}},
        VerifyCase{"protection_at_available_ok", host(0), 7_GiB, {}, {"summary"}},
        VerifyCase{"protection_exceeds",
                   host(0),
                   7_GiB + 1,
                   {},
                   {"protection-exceeds-available", "summary"}},
        VerifyCase{"slice_short",
                   host(0),
                   0,
                   {{"system", 1_GiB, 0, 2_GiB, 0},
                    {"shared", 0, 1_GiB, 0, 1_GiB},
                    {"reclaimed", 0, 0, 0, 1}},
                   {"slice-protection-short", "slice-protection-short", "summary"}},
        VerifyCase{"available_zero",
                   host(1_GiB, 0, 1.0, 8_GiB),
                   1,
                   {},
                   {"no-memory-available", "ratio-exceeded", "protection-exceeds-available",
                    "overcommitted-beyond-swap", "summary"}}),
    test::ByName());

TEST(CorePlacement, FindingMessagesCarryNumbers) {
    const auto findings = verifyPlacement(withSwap(host(9_GiB, 1_GiB, 1.5), 2_GiB), 8_GiB,
                                          {{"system", 1_GiB, 0, 2_GiB, 512_MiB}});
    ASSERT_EQ(findings.size(), 5U);
    EXPECT_EQ(findings[0],
              (Finding{"error", "protection-exceeds-available",
                       "protected memory (VMs' memory.min and memory.low) 8.0 GiB exceeds available 7.0 GiB: the kernel cannot "
                       "honour every protection"}));
    EXPECT_EQ(
        findings[1],
        (Finding{"warning", "swap-insufficient",
                 "swap 2.0 GiB is below the 3.5 GiB that memory ratio 1.50 needs ((ratio − 1) × "
                 "available 7.0 GiB)"}));
    EXPECT_EQ(
        findings[2],
        (Finding{"warning", "overcommitted-beyond-swap",
                 "instances 9.0 GiB + reserved 1.0 GiB exceed available 7.0 GiB + swap 2.0 GiB"}));
    EXPECT_EQ(findings[3],
              (Finding{"warning", "slice-protection-short",
                       "memqos-system.slice: memory.min 1.0 GiB is below its members' 2.0 GiB, "
                       "memory.low 0 B is below its members' 512.0 MiB; members are protected only "
                       "up to the slice's value"}));
    EXPECT_EQ(findings[4].severity, "info");
    EXPECT_EQ(
        findings[4].message,
        "memory 8.0 GiB, node reserve 1.0 GiB, services 0 B, available 7.0 GiB, instances 9.0 GiB "
        "of "
        "10.5 GiB allowed by memory ratio 1.50, reserved 1.0 GiB, swap 2.0 GiB (3.5 GiB needed)");
    const auto exceeded = verifyPlacement(host(8_GiB), 0, {});
    EXPECT_EQ(exceeded[0].message,
              "instances 8.0 GiB exceed memory ratio 1.00 × available 7.0 GiB = 7.0 GiB");
}

} // namespace
} // namespace memqos::core

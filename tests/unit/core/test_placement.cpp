// SPDX-License-Identifier: Apache-2.0
#include "memqos/core/placement.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "literals.hpp"
#include "placement_host.hpp"

namespace memqos::core {
namespace {

using namespace test; // NOLINT(google-build-using-namespace): unit literals

constexpr Bytes kMax = std::numeric_limits<Bytes>::max();

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

TEST(CorePlacement, AvailableMemory) {
    EXPECT_EQ(availableMemory(host(0)), 7_GiB);
    EXPECT_EQ(availableMemory(host(0, 0, 1.0, 2_GiB)), 5_GiB);
    EXPECT_EQ(availableMemory(host(0, 0, 1.0, 7_GiB)), 0U);
    EXPECT_EQ(availableMemory(host(0, 0, 1.0, 9_GiB)), 0U);
    EXPECT_EQ(availableMemory({.memTotal = 1_GiB, .nodeReserve = kMax, .services = kMax}), 0U);
}

TEST(CorePlacement, RefuseSoftMakesSoftHard) {
    const auto soft = checkPlacement(host(4_GiB, 1_GiB), 2_GiB + 1);
    ASSERT_EQ(soft.kind, VerdictKind::Soft);
    EXPECT_EQ(soft.why, VerdictWhy::NeedsReserve);
    EXPECT_FALSE(soft.softRefused);
    const auto hard = checkPlacement(host(4_GiB, 1_GiB), 2_GiB + 1, {.refuseSoft = true});
    EXPECT_EQ(hard.kind, VerdictKind::Hard);
    EXPECT_EQ(hard.why, VerdictWhy::NeedsReserve);
    EXPECT_TRUE(hard.softRefused);
    // Fits and hard stay what they are.
    EXPECT_EQ(checkPlacement(host(0), 1_GiB, {.refuseSoft = true}).kind, VerdictKind::Fits);
    const auto over = checkPlacement(host(8_GiB), 1_GiB, {.refuseSoft = true});
    EXPECT_EQ(over.kind, VerdictKind::Hard);
    EXPECT_EQ(over.why, VerdictWhy::OverRatio);
    EXPECT_FALSE(over.softRefused);
}

TEST(CorePlacement, SwapCheckWarnsOrRefuses) {
    PlacementInput in = host(0, 0, 2.0); // available 7 GiB: 7 GiB of swap needed
    in.swapTotal = 1_GiB;
    const auto warn = checkPlacement(in, 1_GiB);
    EXPECT_EQ(warn.kind, VerdictKind::Fits);
    EXPECT_EQ(warn.why, VerdictWhy::Fits);
    EXPECT_TRUE(warn.swapShort);
    EXPECT_EQ(warn.figures.swapRequired, 7_GiB);
    EXPECT_FALSE(checkPlacement(in, 1_GiB, {.swapCheck = SwapCheck::Off}).swapShort);
    const auto refuse = checkPlacement(in, 1_GiB, {.swapCheck = SwapCheck::Refuse});
    EXPECT_EQ(refuse.kind, VerdictKind::Hard);
    EXPECT_EQ(refuse.why, VerdictWhy::SwapRefused);
    EXPECT_FALSE(refuse.swapShort);
    in.swapTotal = 7_GiB;
    EXPECT_EQ(checkPlacement(in, 1_GiB, {.swapCheck = SwapCheck::Refuse}).kind, VerdictKind::Fits);
}

TEST(CorePlacement, VerdictFigures) {
    PlacementInput in = host(5_GiB + 512_MiB, 256_MiB, 1.5);
    in.swapTotal = 2_GiB;
    const Verdict v = checkPlacement(in, 2_GiB);
    EXPECT_EQ(v.candidate, 2_GiB);
    EXPECT_EQ(v.figures, (PlacementFigures{.memTotal = 8_GiB,
                                           .nodeReserve = 1_GiB,
                                           .services = 0,
                                           .available = 7_GiB,
                                           .instances = 5_GiB + 512_MiB,
                                           .reserved = 256_MiB,
                                           .ratioMicro = 1'500'000,
                                           .capacity = 10_GiB + 512_MiB,
                                           .swapTotal = 2_GiB,
                                           .swapRequired = 3_GiB + 512_MiB}));
    EXPECT_EQ(checkPlacement(host(0, 0, 1.0, 7_GiB), 1).why, VerdictWhy::NoMemoryAvailable);
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

TEST(CorePlacement, GanetisInstanceListIsSortedNamesOrAnError) {
    auto l = parseInstanceList("web.example.test\ndb.example.test\r\n\ninst-3");
    ASSERT_TRUE(l) << l.error().what;
    EXPECT_EQ(*l, (std::vector<std::string>{"db.example.test", "inst-3", "web.example.test"}));
    auto empty = parseInstanceList(""); // a cluster without instances
    ASSERT_TRUE(empty);
    EXPECT_TRUE(empty->empty());
    // One bad line spoils the list: memqos forgets nothing on a foreign file.
    auto bad = parseInstanceList("web.example.test\nnot a name\n");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().what.rfind("line 2: ", 0), 0U) << bad.error().what;
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
        codes.emplace_back(toString(f.code));
        EXPECT_EQ(f.severity, defaultSeverity(f.code)) << toString(f.code);
    }
    EXPECT_EQ(codes, c.codes);
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

TEST(CorePlacement, FindingsCarryTheirNumbers) {
    const std::vector<ClassCoverage> cov{{"system", 1_GiB, 0, 2_GiB, 512_MiB}};
    const auto findings = verifyPlacement(withSwap(host(9_GiB, 1_GiB, 1.5), 2_GiB), 8_GiB, cov);
    ASSERT_EQ(findings.size(), 5U);
    for (const auto& f : findings) {
        EXPECT_EQ(f.figures.available, 7_GiB);
        EXPECT_EQ(f.figures.capacity, 10_GiB + 512_MiB);
        EXPECT_EQ(f.figures.swapRequired, 3_GiB + 512_MiB);
        EXPECT_EQ(f.protectedMin, 8_GiB);
    }
    EXPECT_EQ(findings[3].code, FindingCode::SliceProtectionShort);
    EXPECT_EQ(findings[3].coverage, cov[0]);
    EXPECT_EQ(toString(defaultSeverity(FindingCode::ProtectionExceedsAvailable)), "error");
    EXPECT_EQ(toString(defaultSeverity(FindingCode::SwapInsufficient)), "warning");
    EXPECT_EQ(toString(defaultSeverity(FindingCode::Summary)), "info");
}

TEST(VerifyPlacementSeverity, SwapInsufficientIsRatedBySwapCheck) {
    // 2 GiB of swap where 3.5 GiB is needed: what checkPlacement would do
    // with a placement is what Verify says of the node.
    const auto in = withSwap(host(9_GiB, 1_GiB, 1.5), 2_GiB);
    const auto rated = [&](SwapCheck check) {
        for (const auto& f : verifyPlacement(in, 0, {}, check)) {
            if (f.code == FindingCode::SwapInsufficient) {
                return std::string(toString(f.severity));
            }
        }
        return std::string("absent");
    };
    EXPECT_EQ(rated(SwapCheck::Refuse), "error");
    EXPECT_EQ(rated(SwapCheck::Warn), "warning");
    EXPECT_EQ(rated(SwapCheck::Off), "info");
    // The other findings keep their severity whatever SwapCheck says.
    for (const auto& f : verifyPlacement(in, 0, {}, SwapCheck::Refuse)) {
        if (f.code != FindingCode::SwapInsufficient) {
            EXPECT_EQ(f.severity, defaultSeverity(f.code)) << toString(f.code);
        }
    }
}

} // namespace
} // namespace memqos::core

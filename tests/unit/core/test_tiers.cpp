// SPDX-License-Identifier: Apache-2.0
#include "memqos/core/tiers.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "literals.hpp"

namespace memqos::core {
namespace {

using namespace test; // NOLINT(google-build-using-namespace): unit literals

constexpr Bytes kMax = std::numeric_limits<Bytes>::max();

ClassPolicy systemClass() {
    return {.name = "system", .rank = 3, .protection = Protection::Min, .oomScoreAdj = -999};
}
ClassPolicy dedicatedClass() {
    return {.name = "dedicated", .rank = 2, .protection = Protection::Min, .oomScoreAdj = -997};
}
ClassPolicy sharedClass() {
    return {.name = "shared",
            .rank = 1,
            .protection = Protection::Low,
            .throttlingFactor = 9000,
            .killable = true,
            .swap = true,
            .reclaim = true};
}
ClassPolicy reclaimedClass() {
    return {.name = "reclaimed",
            .protection = Protection::None,
            .killable = true,
            .swap = true,
            .oomScoreAdj = 1000,
            .reclaim = true,
            .memoryGuard = true};
}

ClassPolicy withFactor(ClassPolicy c, std::optional<Permyriad> f) {
    c.throttlingFactor = f;
    return c;
}

struct TierCase {
    const char* name;
    ClassPolicy cls;
    Bytes request;
    Limit limit;
    Bytes memTotal;
    Bytes page;
    Tiers expected;
    const char* error = nullptr; // set: expect an error containing it
};

class ComputeTiers : public ::testing::TestWithParam<TierCase> {};

TEST_P(ComputeTiers, Formula) {
    const auto& c = GetParam();
    const Workload w{
        .id = "w.service", .className = c.cls.name, .request = c.request, .limit = c.limit};
    const Result<Tiers> t = computeTiers(c.cls, w, c.memTotal, c.page);
    if (c.error != nullptr) {
        ASSERT_FALSE(t.ok());
        EXPECT_NE(t.error().what.find(c.error), std::string::npos) << t.error().what;
        EXPECT_NE(t.error().what.find("w.service"), std::string::npos) << t.error().what;
        return;
    }
    ASSERT_TRUE(t.ok()) << t.error().what;
    EXPECT_EQ(t->memoryMin, c.expected.memoryMin);
    EXPECT_EQ(t->memoryLow, c.expected.memoryLow);
    EXPECT_EQ(t->memoryHigh, c.expected.memoryHigh);
    EXPECT_EQ(t->memoryMax, c.expected.memoryMax);
    EXPECT_EQ(t->swapMax, c.expected.swapMax);
}

INSTANTIATE_TEST_SUITE_P(
    CoreTiers, ComputeTiers,
    ::testing::Values(
        // The Kubernetes example: 256 MiB + 0.9 · 768 MiB, floored to pages.
        TierCase{"shared_k8s_example",
                 sharedClass(),
                 256_MiB,
                 1_GiB,
                 16_GiB,
                 4096,
                 {.memoryLow = 256_MiB, .memoryHigh = 993210368, .memoryMax = 1_GiB}},
        TierCase{"shared_64k_pages",
                 sharedClass(),
                 256_MiB,
                 1_GiB,
                 16_GiB,
                 65536,
                 {.memoryLow = 256_MiB, .memoryHigh = 993198080, .memoryMax = 1_GiB}},
        TierCase{"request_equals_limit",
                 sharedClass(),
                 1_GiB,
                 1_GiB,
                 16_GiB,
                 4096,
                 {.memoryLow = 1_GiB, .memoryMax = 1_GiB}},
        TierCase{"no_request", sharedClass(), 0, 1_GiB, 16_GiB, 4096, {.memoryMax = 1_GiB}},
        TierCase{"no_request_no_limit", sharedClass(), 0, std::nullopt, 16_GiB, 4096, {}},
        // No limit: MemTotal stands in for the limit in the formula only.
        TierCase{"no_limit_uses_memtotal",
                 sharedClass(),
                 256_MiB,
                 std::nullopt,
                 8_GiB,
                 4096,
                 {.memoryLow = 256_MiB, .memoryHigh = 7757783040}},
        // Limit above MemTotal: MemTotal in the formula, memory.max as given.
        TierCase{"limit_above_memtotal",
                 sharedClass(),
                 1_GiB,
                 16_GiB,
                 8_GiB,
                 4096,
                 {.memoryLow = 1_GiB, .memoryHigh = 7838314496, .memoryMax = 16_GiB}},
        TierCase{"limit_equals_memtotal",
                 sharedClass(),
                 1_GiB,
                 8_GiB,
                 8_GiB,
                 4096,
                 {.memoryLow = 1_GiB, .memoryHigh = 7838314496, .memoryMax = 8_GiB}},
        TierCase{"request_at_memtotal_no_limit",
                 sharedClass(),
                 8_GiB,
                 std::nullopt,
                 8_GiB,
                 4096,
                 {.memoryLow = 8_GiB}},
        TierCase{"request_above_memtotal",
                 sharedClass(),
                 9_GiB,
                 10_GiB,
                 8_GiB,
                 4096,
                 {.memoryLow = 9_GiB, .memoryMax = 10_GiB}},
        // Not page-aligned: min/low/max passed through, high floored.
        TierCase{"unaligned",
                 sharedClass(),
                 1000000,
                 3000001,
                 16_GiB,
                 4096,
                 {.memoryLow = 1000000, .memoryHigh = 2797568, .memoryMax = 3000001}},
        TierCase{"factor_one",
                 withFactor(sharedClass(), 10000),
                 256_MiB,
                 1_GiB + 100,
                 16_GiB,
                 4096,
                 {.memoryLow = 256_MiB, .memoryHigh = 1_GiB, .memoryMax = 1_GiB + 100}},
        TierCase{"factor_half",
                 withFactor(sharedClass(), 5000),
                 3_GiB,
                 4_GiB,
                 16_GiB,
                 4096,
                 {.memoryLow = 3_GiB, .memoryHigh = 3758096384, .memoryMax = 4_GiB}},
        // f = 0 gives floor(request) ≤ request: kubelet sets no memory.high.
        TierCase{"factor_zero",
                 withFactor(sharedClass(), 0),
                 1_GiB,
                 2_GiB,
                 16_GiB,
                 4096,
                 {.memoryLow = 1_GiB, .memoryMax = 2_GiB}},
        TierCase{"factor_off",
                 withFactor(sharedClass(), std::nullopt),
                 1_GiB,
                 2_GiB,
                 16_GiB,
                 4096,
                 {.memoryLow = 1_GiB, .memoryMax = 2_GiB}},
        // Below one page the floor is 0: never memory.high = 0.
        TierCase{"tiny_floors_to_zero",
                 sharedClass(),
                 100,
                 200,
                 16_GiB,
                 4096,
                 {.memoryLow = 100, .memoryMax = 200}},
        TierCase{"huge_no_overflow",
                 withFactor(sharedClass(), 9000),
                 Bytes{1} << 63,
                 kMax,
                 kMax,
                 4096,
                 {.memoryLow = Bytes{1} << 63,
                  .memoryHigh = 17524406870024073216ULL,
                  .memoryMax = kMax}},
        TierCase{"system",
                 systemClass(),
                 2_GiB,
                 2_GiB,
                 16_GiB,
                 4096,
                 {.memoryMin = 2_GiB, .memoryMax = 2_GiB, .swapMax = 0}},
        TierCase{"system_no_limit",
                 systemClass(),
                 512_MiB,
                 std::nullopt,
                 16_GiB,
                 4096,
                 {.memoryMin = 512_MiB, .swapMax = 0}},
        TierCase{"dedicated",
                 dedicatedClass(),
                 4_GiB,
                 4_GiB,
                 16_GiB,
                 4096,
                 {.memoryMin = 4_GiB, .memoryMax = 4_GiB, .swapMax = 0}},
        TierCase{"reclaimed", reclaimedClass(), 0, 1_GiB, 16_GiB, 4096, {.memoryMax = 1_GiB}},
        TierCase{
            "reclaimed_with_request", reclaimedClass(), 128_MiB, std::nullopt, 16_GiB, 4096, {}},
        TierCase{"error_limit_zero", sharedClass(), 0, 0, 16_GiB, 4096, {}, "limit is 0"},
        TierCase{"error_request_above_limit",
                 sharedClass(),
                 2_GiB,
                 1_GiB,
                 16_GiB,
                 4096,
                 {},
                 "request 2147483648 is above limit 1073741824"},
        TierCase{"error_page_zero", sharedClass(), 1_GiB, 2_GiB, 16_GiB, 0, {}, "page size is 0"},
        TierCase{"error_factor_above_one",
                 withFactor(sharedClass(), 10001),
                 1_GiB,
                 2_GiB,
                 16_GiB,
                 4096,
                 {},
                 "throttling factor 100.01% is above 100%"}),
    test::ByName());

TEST(CoreTiers, SaturatingAdd) {
    EXPECT_EQ(saturatingAdd(1, 2), 3U);
    EXPECT_EQ(saturatingAdd(kMax - 1, 1), kMax);
    EXPECT_EQ(saturatingAdd(kMax, 1), kMax);
    EXPECT_EQ(saturatingAdd(kMax, kMax), kMax);
    EXPECT_EQ(saturatingAdd(0, 0), 0U);
}

struct SliceCase {
    const char* name;
    std::vector<Tiers> children;
    Bytes min;
    Bytes low;
};

class SliceTiers : public ::testing::TestWithParam<SliceCase> {};

TEST_P(SliceTiers, Sums) {
    const Tiers t = sliceTiers(GetParam().children);
    EXPECT_EQ(t.memoryMin, GetParam().min);
    EXPECT_EQ(t.memoryLow, GetParam().low);
    EXPECT_EQ(t.memoryHigh, std::nullopt);
    EXPECT_EQ(t.memoryMax, std::nullopt);
    EXPECT_EQ(t.swapMax, std::nullopt);
}

INSTANTIATE_TEST_SUITE_P(
    CoreTiers, SliceTiers,
    ::testing::Values(
        SliceCase{"empty", {}, 0, 0},
        SliceCase{"one",
                  {{.memoryMin = 1_GiB, .memoryHigh = 2_GiB, .memoryMax = 3_GiB, .swapMax = 0}},
                  1_GiB,
                  0},
        SliceCase{"mixed",
                  {{.memoryMin = 1_GiB}, {.memoryLow = 2_GiB}, {.memoryMin = 1, .memoryLow = 1}},
                  1_GiB + 1,
                  2_GiB + 1},
        SliceCase{"saturating",
                  {{.memoryMin = kMax, .memoryLow = kMax - 1}, {.memoryMin = 5, .memoryLow = 5}},
                  kMax,
                  kMax}),
    test::ByName());

struct PropagateCase {
    const char* name;
    std::vector<CgroupProtection> leaves;
    std::vector<CgroupProtection> expected;
};

class PropagateProtection : public ::testing::TestWithParam<PropagateCase> {};

TEST_P(PropagateProtection, Ancestors) {
    EXPECT_EQ(propagateProtection(GetParam().leaves), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    CoreTiers, PropagateProtection,
    ::testing::Values(
        PropagateCase{"empty", {}, {}},
        PropagateCase{"top_level_leaf_has_no_ancestor", {{"nginx.service", 1, 2}}, {}},
        PropagateCase{
            "one_leaf",
            {{"memqos.slice/memqos-shared.slice/nginx.service", 1_GiB, 2_GiB}},
            {{"memqos.slice", 1_GiB, 2_GiB}, {"memqos.slice/memqos-shared.slice", 1_GiB, 2_GiB}}},
        PropagateCase{"two_classes",
                      {{"memqos.slice/memqos-system.slice/db.service", 4_GiB, 0},
                       {"memqos.slice/memqos-shared.slice/web.service", 0, 1_GiB},
                       {"memqos.slice/memqos-shared.slice/api.service", 0, 512_MiB},
                       {"memqos.slice/memqos-reclaimed.slice/batch.service", 0, 0}},
                      {{"memqos.slice", 4_GiB, 1_GiB + 512_MiB},
                       {"memqos.slice/memqos-reclaimed.slice", 0, 0},
                       {"memqos.slice/memqos-shared.slice", 0, 1_GiB + 512_MiB},
                       {"memqos.slice/memqos-system.slice", 4_GiB, 0}}},
        // A VM under libvirt's machine scope is one level deeper.
        PropagateCase{
            "deeper_vm_scope",
            {{"memqos.slice/memqos-dedicated.slice/machine-qemu\\x2d1\\x2dweb.scope/libvirt", 8_GiB,
              0}},
            {{"memqos.slice", 8_GiB, 0},
             {"memqos.slice/memqos-dedicated.slice", 8_GiB, 0},
             {"memqos.slice/memqos-dedicated.slice/machine-qemu\\x2d1\\x2dweb.scope", 8_GiB, 0}}},
        PropagateCase{"slashes_normalised_and_duplicates_add",
                      {{"/a.slice//b.service/", 1, 2}, {"a.slice/b.service", 10, 20}},
                      {{"a.slice", 11, 22}}},
        PropagateCase{"leaf_that_is_also_an_ancestor_counts_only_below",
                      {{"a.slice", 100, 100}, {"a.slice/b.service", 1, 2}},
                      {{"a.slice", 1, 2}}},
        PropagateCase{"saturating",
                      {{"a.slice/x.service", kMax, 1}, {"a.slice/y.service", kMax, kMax}},
                      {{"a.slice", kMax, kMax}}},
        // "a.slice" sorts before "a.slice-b.slice" and "a.slice/..." alike:
        // every ancestor precedes its descendants.
        PropagateCase{
            "sorted_parents_first",
            {{"z.slice/a.slice-b.slice/x.service", 1, 0}, {"z.slice/a.slice/y.service", 2, 0}},
            {{"z.slice", 3, 0}, {"z.slice/a.slice", 2, 0}, {"z.slice/a.slice-b.slice", 1, 0}}}),
    test::ByName());

} // namespace
} // namespace memqos::core

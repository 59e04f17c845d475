// SPDX-License-Identifier: Apache-2.0
#include "reconcile.hpp"

#include <gtest/gtest.h>

using namespace memqos;
using memqos::daemon::changedProperties;
using memqos::daemon::desiredProperties;
using memqos::daemon::PlacedTiers;

namespace {

core::Tiers shared256() {
    core::Tiers t;
    t.memoryLow = 256 * kMiB;
    t.memoryHigh = 993210368;
    t.memoryMax = 1 * kGiB;
    return t;
}

daemon::ReconcileInput input(std::vector<PlacedTiers> w) {
    daemon::ReconcileInput in;
    in.workloads = std::move(w);
    return in;
}

core::MemoryProperties protection(Bytes min, Bytes low) {
    core::MemoryProperties p;
    p.memoryMin = min;
    p.memoryLow = low;
    return p;
}

TEST(Reconcile, EveryAncestorSliceGetsTheSumAndParentsComeFirst) {
    core::Tiers ded;
    ded.memoryMin = 512 * kMiB;
    ded.memoryMax = 512 * kMiB;
    ded.swapMax = 0;
    const std::vector<PlacedTiers> w{
        {"a.service", "memqos.slice/memqos-shared.slice/a.service", shared256()},
        {"b.service", "memqos.slice/memqos-dedicated.slice/b.service", ded},
    };
    const auto desired = desiredProperties(input(w));
    ASSERT_TRUE(desired.contains("memqos.slice"));
    EXPECT_EQ(desired.at("memqos.slice"), protection(512 * kMiB, 256 * kMiB));
    EXPECT_EQ(desired.at("memqos-shared.slice"), protection(0, 256 * kMiB));
    EXPECT_EQ(desired.at("memqos-dedicated.slice"), protection(512 * kMiB, 0));
    EXPECT_EQ(desired.at("a.service").memoryHigh, std::optional<Limit>(Limit(993210368)));

    const auto changes = changedProperties(desired, {});
    ASSERT_EQ(changes.size(), 5U);
    EXPECT_EQ(changes[0].first, "memqos.slice"); // the parent before its children
    EXPECT_TRUE(changes[1].first.ends_with(".slice"));
    EXPECT_TRUE(changes[2].first.ends_with(".slice"));
    EXPECT_TRUE(changes[3].first.ends_with(".service"));
}

TEST(Reconcile, NothingToSendWhenApplied) {
    const std::vector<PlacedTiers> w{{"a.service", "system.slice/a.service", shared256()}};
    const auto desired = desiredProperties(input(w));
    EXPECT_TRUE(changedProperties(desired, desired).empty());
}

TEST(Reconcile, SliceWithoutWorkloadsGetsNoEntry) {
    // The daemon gives such a slice its own values back (restoreOriginal).
    const auto none = desiredProperties(input({}));
    EXPECT_TRUE(none.empty());
}

TEST(Reconcile, AnAdministratorsLargerValueIsNeverLowered) {
    // system.slice has MemoryLow=1G of its own: 256 MiB of workloads below
    // leave it at 1 GiB, so nothing is sent.
    auto in = input({{"a.service", "system.slice/a.service", shared256()}});
    in.own["system.slice"] = protection(0, 1 * kGiB);
    EXPECT_FALSE(desiredProperties(in).contains("system.slice"));
    // Five workloads of 256 MiB need more than that: the sum wins.
    for (int i = 0; i < 4; ++i) {
        in.workloads.push_back({"w" + std::to_string(i) + ".service",
                                "system.slice/w" + std::to_string(i) + ".service", shared256()});
    }
    const auto desired = desiredProperties(in);
    ASSERT_TRUE(desired.contains("system.slice"));
    EXPECT_EQ(desired.at("system.slice"), protection(0, 5 * 256 * kMiB));
}

TEST(Reconcile, OtherChildrensProtectionIsCoveredToo) {
    // memqosd.service (MemoryMin=64M of its own, not managed) beside a
    // managed workload: the slice covers both, so neither is lowered.
    auto in = input({{"a.service", "system.slice/a.service", shared256()}});
    in.others.push_back({"system.slice/memqosd.service", 64 * kMiB, 64 * kMiB});
    in.others.push_back({"system.slice/a.service", 0, 0}); // managed: its tiers count
    const auto desired = desiredProperties(in);
    EXPECT_EQ(desired.at("system.slice"), protection(64 * kMiB, 320 * kMiB));
}

TEST(Reconcile, ProtectionAddsUpThroughNestedSlices) {
    auto in = input({{"a.service", "memqos.slice/memqos-shared.slice/a.service", shared256()}});
    in.others.push_back({"memqos.slice/memqos-shared.slice/x.service", 0, 100 * kMiB});
    in.others.push_back({"memqos.slice/other.slice", 0, 50 * kMiB});
    in.own["memqos-shared.slice"] = protection(0, 10 * kMiB);
    const auto desired = desiredProperties(in);
    EXPECT_EQ(desired.at("memqos-shared.slice"), protection(0, 356 * kMiB));
    EXPECT_EQ(desired.at("memqos.slice"), protection(0, 406 * kMiB));
}

TEST(Reconcile, AncestorPathsAreEveryProperPrefix) {
    const std::vector<PlacedTiers> w{{"a.service", "/memqos.slice//memqos-shared.slice/a.service/",
                                      shared256()}};
    EXPECT_EQ(daemon::ancestorPaths(w),
              (std::vector<std::string>{"memqos.slice", "memqos.slice/memqos-shared.slice"}));
}

TEST(Reconcile, WorkloadWithoutCgroupGetsItsOwnPropertiesOnly) {
    const std::vector<PlacedTiers> w{{"a.service", "", shared256()}};
    const auto desired = desiredProperties(input(w));
    EXPECT_EQ(desired.size(), 1U);
    EXPECT_EQ(daemon::sliceUnitOf("foo.service"), "");
    EXPECT_EQ(daemon::sliceUnitOf("memqos-shared.slice"), "memqos-shared.slice");
}

} // namespace

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

TEST(Reconcile, EveryAncestorSliceGetsTheSumAndParentsComeFirst) {
    core::Tiers ded;
    ded.memoryMin = 512 * kMiB;
    ded.memoryMax = 512 * kMiB;
    ded.swapMax = 0;
    const std::vector<PlacedTiers> w{
        {"a.service", "memqos.slice/memqos-shared.slice/a.service", shared256()},
        {"b.service", "memqos.slice/memqos-dedicated.slice/b.service", ded},
    };
    const auto desired = desiredProperties(w, {});
    ASSERT_TRUE(desired.contains("memqos.slice"));
    EXPECT_EQ(desired.at("memqos.slice").memoryLow, std::optional<Bytes>(256 * kMiB));
    EXPECT_EQ(desired.at("memqos.slice").memoryMin, std::optional<Bytes>(512 * kMiB));
    EXPECT_EQ(desired.at("memqos-shared.slice").memoryLow, std::optional<Bytes>(256 * kMiB));
    EXPECT_FALSE(desired.at("memqos-shared.slice").memoryMin.has_value()); // never set, zero
    EXPECT_EQ(desired.at("memqos-dedicated.slice").memoryMin, std::optional<Bytes>(512 * kMiB));
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
    const auto desired = desiredProperties(w, {});
    EXPECT_TRUE(changedProperties(desired, desired).empty());
}

TEST(Reconcile, SliceLeftWithoutWorkloadsIsZeroedOnce) {
    const std::vector<PlacedTiers> w{{"a.service", "system.slice/a.service", shared256()}};
    const auto first = desiredProperties(w, {});
    const auto second = desiredProperties({}, first);
    ASSERT_TRUE(second.contains("system.slice"));
    EXPECT_EQ(second.at("system.slice").memoryLow, std::optional<Bytes>(0));
    const auto third = desiredProperties({}, second);
    EXPECT_FALSE(third.contains("system.slice")); // zero already applied: nothing more
}

TEST(Reconcile, WorkloadWithoutCgroupGetsItsOwnPropertiesOnly) {
    const std::vector<PlacedTiers> w{{"a.service", "", shared256()}};
    const auto desired = desiredProperties(w, {});
    EXPECT_EQ(desired.size(), 1U);
    EXPECT_EQ(daemon::sliceUnitOf("foo.service"), "");
    EXPECT_EQ(daemon::sliceUnitOf("memqos-shared.slice"), "memqos-shared.slice");
}

} // namespace

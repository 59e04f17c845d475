// SPDX-License-Identifier: Apache-2.0
#include "memqos/core/victims.hpp"

#include <gtest/gtest.h>

#include <string>

#include "literals.hpp"

namespace memqos::core {
namespace {

using namespace test; // NOLINT(google-build-using-namespace): unit literals

WorkloadSample sample(const std::string& id, const std::string& cls, Bytes request, Bytes usage,
                      Bytes swap = 0, std::int32_t priority = 0) {
    return WorkloadSample{
        .workload = {.id = id,
                     .kind = kindFromId(id).value_or(WorkloadKind::Service),
                     .className = cls,
                     .request = request,
                     .priority = priority},
        .cgroup = CgroupSample{.path = "memqos.slice/memqos-" + cls + ".slice/" + id,
                               .memoryCurrent = usage,
                               .swapCurrent = swap},
    };
}

struct VictimCase {
    const char* name;
    std::vector<WorkloadSample> workloads;
    bool swapTrigger;
    std::vector<std::string> order;
};

class RankVictims : public ::testing::TestWithParam<VictimCase> {};

TEST_P(RankVictims, Order) {
    const auto& c = GetParam();
    const Snapshot snap{.now = at(100), .workloads = c.workloads};
    std::vector<std::string> ids;
    for (const auto& v : rankVictims(snap, defaultClasses(), c.swapTrigger)) {
        ids.push_back(v.id);
    }
    EXPECT_EQ(ids, c.order);
}

INSTANTIATE_TEST_SUITE_P(
    CoreVictims, RankVictims,
    ::testing::Values(
        VictimCase{"empty", {}, false, {}},
        // A protected class is never a candidate, however much it uses.
        VictimCase{"protected_never",
                   {sample("db.service", "system", 1_GiB, 60_GiB),
                    sample("vm:gold", "dedicated", 8_GiB, 64_GiB),
                    sample("web.service", "shared", 1_GiB, 512_MiB)},
                   false,
                   {"web.service"}},
        VictimCase{"only_protected", {sample("db.service", "system", 0, 60_GiB)}, true, {}},
        VictimCase{"unknown_class_skipped", {sample("x.service", "nope", 0, 1_GiB)}, false, {}},
        VictimCase{"lowest_rank_first",
                   {sample("web.service", "shared", 0, 8_GiB),
                    sample("batch.service", "reclaimed", 1_GiB, 1_MiB)},
                   false,
                   {"batch.service", "web.service"}},
        VictimCase{"above_request_first",
                   {sample("below.service", "shared", 4_GiB, 3_GiB),
                    sample("above.service", "shared", 1_GiB, 1_GiB + 1)},
                   false,
                   {"above.service", "below.service"}},
        VictimCase{"at_request_is_not_above",
                   {sample("at.service", "shared", 1_GiB, 1_GiB),
                    sample("over.service", "shared", 1_GiB, 1_GiB + 1)},
                   false,
                   {"over.service", "at.service"}},
        VictimCase{
            "no_request_any_usage_is_above",
            {sample("a.service", "shared", 0, 1), sample("b.service", "shared", 1_GiB, 512_MiB)},
            false,
            {"a.service", "b.service"}},
        VictimCase{"lower_priority_first",
                   {sample("important.service", "shared", 0, 8_GiB, 0, 10),
                    sample("minor.service", "shared", 0, 1_MiB, 0, -5)},
                   false,
                   {"minor.service", "important.service"}},
        VictimCase{"larger_excess_first",
                   {sample("small.service", "shared", 1_GiB, 2_GiB),
                    sample("big.service", "shared", 1_GiB, 3_GiB),
                    sample("vm:mid", "shared", 4_GiB, 6_GiB)},
                   false,
                   {"big.service", "vm:mid", "small.service"}},
        // Below request, kubelet compares usage − request signed: the one
        // closest to its request first.
        VictimCase{"below_request_closest_first",
                   {sample("far.service", "shared", 4_GiB, 1_GiB),
                    sample("near.service", "shared", 2_GiB, 2_GiB - 1)},
                   false,
                   {"near.service", "far.service"}},
        VictimCase{"swap_trigger_largest_swap_first",
                   {sample("ram.service", "reclaimed", 0, 4_GiB, 10_MiB),
                    sample("vm:swappy", "reclaimed", 0, 1_GiB, 2_GiB),
                    sample("mid.service", "reclaimed", 0, 2_GiB, 1_GiB)},
                   true,
                   {"vm:swappy", "mid.service", "ram.service"}},
        VictimCase{"no_swap_trigger_ignores_swap",
                   {sample("ram.service", "reclaimed", 0, 4_GiB, 10_MiB),
                    sample("vm:swappy", "reclaimed", 0, 1_GiB, 2_GiB),
                    sample("mid.service", "reclaimed", 0, 2_GiB, 1_GiB)},
                   false,
                   {"ram.service", "mid.service", "vm:swappy"}},
        // Rank and priority still come before swap usage.
        VictimCase{"swap_trigger_after_rank_and_priority",
                   {sample("shared-swap.service", "shared", 0, 1_GiB, 8_GiB),
                    sample("prio.service", "reclaimed", 0, 1_GiB, 4_GiB, 1),
                    sample("low.service", "reclaimed", 0, 1_GiB, 0, 0)},
                   true,
                   {"low.service", "prio.service", "shared-swap.service"}},
        // A hog the guard holds at its cap has most of its memory in swap:
        // RAM and swap together decide (VM case 55-precision killed the
        // neighbour with more resident memory first).
        VictimCase{"swap_counts_in_the_footprint",
                   {sample("batch.service", "reclaimed", 0, 200_MiB, 0),
                    sample("surge.service", "reclaimed", 0, 100_MiB, 1_GiB)},
                   false,
                   {"surge.service", "batch.service"}},
        VictimCase{"ties_by_id",
                   {sample("c.service", "shared", 0, 1_GiB),
                    sample("a.service", "shared", 0, 1_GiB),
                    sample("b.service", "shared", 0, 1_GiB)},
                   false,
                   {"a.service", "b.service", "c.service"}}),
    test::ByName());

// A rule once adopted system.slice beside the services inside it: killing
// the slice would kill them all (the review of 2026-11-27, C3).
TEST(CoreVictims, ACgroupHoldingAnotherWorkloadIsNoCandidate) {
    auto slice = sample("system.slice", "reclaimed", 0, 8_GiB);
    slice.cgroup->path = "system.slice";
    auto inside = sample("web.service", "dedicated", 1_GiB, 1_GiB);
    inside.cgroup->path = "system.slice/web.service";
    auto sibling = sample("batch.service", "reclaimed", 0, 1_GiB);
    sibling.cgroup->path = "system.slice2/batch.service"; // a prefix, not a parent
    auto lookalike = sample("system.slice2", "reclaimed", 0, 2_GiB);
    lookalike.cgroup->path = "system.slice2x";
    const Snapshot snap{.now = at(1), .workloads = {slice, inside, sibling, lookalike}};
    std::vector<std::string> ids;
    for (const auto& c : rankVictims(snap, defaultClasses(), false)) {
        ids.push_back(c.id);
    }
    EXPECT_EQ(ids, (std::vector<std::string>{"system.slice2", "batch.service"}));
}

TEST(CoreModel, RulesNeverAdoptSlicesVmScopesOrTheHostsOwnUnits) {
    for (const char* unit : {"nginx.service", "batch.scope", "run-u12.service", "pg@main.service"}) {
        EXPECT_FALSE(ruleRefusal(unit)) << unit;
    }
    for (const char* unit :
         {"system.slice", "machine.slice", "memqos-reclaimed.slice", "foo.socket", "a.timer",
          "machine-qemu\\x2d1\\x2dweb.scope", "memqos-vm-web.example.com.scope",
          "memqosd.service", "init.scope", "dbus.service", "dbus-broker.service",
          "systemd-journald.service", "systemd-logind.service", "session-3.scope",
          "user@1000.service", "user-runtime-dir@1000.service"}) {
        EXPECT_TRUE(ruleRefusal(unit)) << unit;
    }
}

TEST(CoreVictims, NoSampleNoCandidate) {
    WorkloadSample gone = sample("gone.service", "reclaimed", 0, 1_GiB);
    gone.cgroup.reset();
    const Snapshot snap{.workloads = {gone, sample("here.service", "reclaimed", 0, 1)}};
    const auto v = rankVictims(snap, defaultClasses(), false);
    ASSERT_EQ(v.size(), 1U);
    EXPECT_EQ(v[0].id, "here.service");
}

TEST(CoreVictims, NothingToFreeNoCandidate) {
    // A unit that already ended: its cgroup is still sampled but holds
    // nothing. Killing it again would free nothing and be reported as a kill.
    WorkloadSample swapped = sample("swapped.service", "reclaimed", 0, 0);
    swapped.cgroup->swapCurrent = 1;
    const Snapshot snap{.workloads = {sample("ended.service", "reclaimed", 0, 0), swapped,
                                      sample("tiny.service", "shared", 0, 1)}};
    const auto v = rankVictims(snap, defaultClasses(), false);
    ASSERT_EQ(v.size(), 2U);
    EXPECT_EQ(v[0].id, "swapped.service");
    EXPECT_EQ(v[1].id, "tiny.service");
}

TEST(CoreVictims, SetAsideIsNoCandidate) {
    // A workload whose kill is on its way or failed a moment ago: the next
    // one is the victim, whatever the set-aside one uses.
    WorkloadSample aside = sample("big.service", "reclaimed", 0, 4_GiB);
    aside.setAside = true;
    const Snapshot snap{.workloads = {aside, sample("small.service", "reclaimed", 0, 1_GiB)}};
    const auto v = rankVictims(snap, defaultClasses(), false);
    ASSERT_EQ(v.size(), 1U);
    EXPECT_EQ(v[0].id, "small.service");
}

TEST(CoreVictims, CandidateFields) {
    const Snapshot snap{.workloads = {sample("vm:web", "shared", 1_GiB, 3_GiB, 5_MiB, -2),
                                      sample("idle.service", "shared", 2_GiB, 1_GiB)}};
    const auto v = rankVictims(snap, defaultClasses(), false);
    ASSERT_EQ(v.size(), 2U);
    EXPECT_EQ(v[0], (Candidate{.id = "vm:web",
                               .className = "shared",
                               .rank = 1,
                               .aboveRequest = true,
                               .priority = -2,
                               .usage = 3_GiB,
                               .request = 1_GiB,
                               .excess = 2_GiB + 5_MiB, // swap counts
                               .swapUsage = 5_MiB}));
    EXPECT_EQ(v[1].excess, 0U);
    EXPECT_FALSE(v[1].aboveRequest);
}

TEST(CoreVictims, ConfiguredClassesDecide) {
    // A class made non-killable by config protects its members; a renamed
    // class is found by its new name.
    auto classes = defaultClasses();
    classes[2].killable = false; // shared
    classes[3].name = "scavenger";
    const Snapshot snap{.workloads = {sample("web.service", "shared", 0, 1_GiB),
                                      sample("old.service", "reclaimed", 0, 1_GiB),
                                      sample("new.service", "scavenger", 0, 1_GiB)}};
    const auto v = rankVictims(snap, classes, false);
    ASSERT_EQ(v.size(), 1U);
    EXPECT_EQ(v[0].id, "new.service");
}

} // namespace
} // namespace memqos::core

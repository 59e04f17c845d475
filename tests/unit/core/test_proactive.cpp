// SPDX-License-Identifier: Apache-2.0
#include "memqos/core/proactive.hpp"

#include <gtest/gtest.h>

#include <string>

#include "literals.hpp"

namespace memqos::core {
namespace {

using namespace test; // NOLINT(google-build-using-namespace): unit literals

// One workload of class `cls` using `usage`, its cgroup's "some" stall total
// at `someUsec`, at `seconds`.
Snapshot one(std::int64_t seconds, const std::string& cls, Bytes usage, std::uint64_t someUsec,
             Bytes request = 0) {
    return Snapshot{
        .now = at(seconds),
        .system = {.mem = {.memTotal = 16_GiB, .memAvailable = 8_GiB}, .pageSize = 4096},
        .workloads = {WorkloadSample{
            .workload = {.id = "batch.service", .className = cls, .request = request},
            .cgroup = CgroupSample{.path = "memqos.slice/memqos-" + cls + ".slice/batch.service",
                                   .memoryCurrent = usage,
                                   .pressure = Pressure{.some = {.totalUsec = someUsec}}},
        }},
    };
}

struct Controller {
    ReclaimConfig config; // Interval 5 s, StallTarget 0.1 %, MaxStep 5 %
    std::map<std::string, WorkloadReclaim> state;
    std::uint32_t level = 0;
    ProactiveOutcome step(const Snapshot& s) {
        auto out = decideProactive(s, config, defaultClasses(), level, state);
        state = out.state;
        return out;
    }
    const WorkloadReclaim& w() { return state.at("batch.service"); }
};

TEST(Proactive, FirstSampleOnlyStartsTheMeasurement) {
    Controller r;
    EXPECT_TRUE(r.step(one(0, "reclaimed", 1_GiB, 0)).steps.empty());
    EXPECT_EQ(r.w().phase, ReclaimPhase::Waiting);
    // Within the interval: nothing.
    EXPECT_TRUE(r.step(one(4, "reclaimed", 1_GiB, 0)).steps.empty());
    EXPECT_EQ(r.w().phase, ReclaimPhase::Waiting);
}

TEST(Proactive, StepsStartSmallAndDoubleWhileTheStallStaysLow) {
    Controller r;
    r.step(one(0, "reclaimed", 1_GiB, 0));
    // No stall: the whole step. MaxStep 5 % / 8 = 0.62 % (62 permyriad).
    auto out = r.step(one(5, "reclaimed", 1000_MiB, 0));
    ASSERT_EQ(out.steps.size(), 1U);
    EXPECT_EQ(out.steps[0].workload, "batch.service");
    EXPECT_EQ(out.steps[0].cgroup, "memqos.slice/memqos-reclaimed.slice/batch.service");
    EXPECT_EQ(out.steps[0].bytes, (1000_MiB * 62 / 10000) / 4096 * 4096);
    EXPECT_EQ(r.w().phase, ReclaimPhase::Reclaiming);
    EXPECT_EQ(r.w().step, 62U);
    r.step(one(10, "reclaimed", 1000_MiB, 0));
    EXPECT_EQ(r.w().step, 124U);
    r.step(one(15, "reclaimed", 1000_MiB, 0));
    r.step(one(20, "reclaimed", 1000_MiB, 0));
    EXPECT_EQ(r.w().step, 496U);
    out = r.step(one(25, "reclaimed", 1000_MiB, 0));
    EXPECT_EQ(r.w().step, 500U); // capped at MaxStep
    EXPECT_EQ(out.steps.at(0).bytes, 50_MiB);
    EXPECT_EQ(r.w().steps, 5U);
}

TEST(Proactive, StepShrinksAsTheStallNearsItsTarget) {
    Controller r;
    r.config.maxStep = 800; // start at 1 %
    r.step(one(0, "reclaimed", 1000_MiB, 0));
    // 2500 µs stalled over 5 s = 0.05 %: half the target, half the step.
    const auto out = r.step(one(5, "reclaimed", 1000_MiB, 2500));
    ASSERT_EQ(out.steps.size(), 1U);
    EXPECT_NEAR(r.w().stall, 0.05, 1e-9);
    EXPECT_EQ(out.steps[0].bytes, (1000_MiB / 200) / 4096 * 4096);
}

TEST(Proactive, BacksOffAtOnceWhenTheStallReachesTheTarget) {
    Controller r;
    r.step(one(0, "reclaimed", 1_GiB, 0));
    r.step(one(5, "reclaimed", 1_GiB, 0));
    r.step(one(10, "reclaimed", 1_GiB, 0));
    ASSERT_EQ(r.w().step, 124U);
    // 5000 µs over 5 s = 0.1 %: at the target.
    EXPECT_TRUE(r.step(one(15, "reclaimed", 1_GiB, 5000)).steps.empty());
    EXPECT_EQ(r.w().phase, ReclaimPhase::BackedOff);
    EXPECT_EQ(r.w().step, 0U);
    // Calm again: starts over with the small step.
    const auto out = r.step(one(20, "reclaimed", 1_GiB, 5000));
    ASSERT_EQ(out.steps.size(), 1U);
    EXPECT_EQ(r.w().step, 62U);
}

TEST(Proactive, NeverBelowTheRequest) {
    Controller r;
    r.config.maxStep = 10000;
    r.step(one(0, "shared", 1_GiB, 0, 1000_MiB));
    for (int i = 1; i <= 5; ++i) {
        r.step(one(5 * i, "shared", 1_GiB, 0, 1000_MiB));
    }
    // A step of 100 % of usage is cut to usage − request.
    const auto out = r.step(one(30, "shared", 1_GiB, 0, 1000_MiB));
    ASSERT_EQ(out.steps.size(), 1U);
    EXPECT_EQ(out.steps[0].bytes, 24_MiB);
    EXPECT_TRUE(r.step(one(35, "shared", 1000_MiB, 0, 1000_MiB)).steps.empty());
    EXPECT_EQ(r.w().phase, ReclaimPhase::AtFloor);
}

TEST(Proactive, PausedWhileTheLadderIsAboveZero) {
    Controller r;
    r.step(one(0, "reclaimed", 1_GiB, 0));
    r.level = 1;
    EXPECT_TRUE(r.step(one(5, "reclaimed", 1_GiB, 0)).steps.empty());
    EXPECT_EQ(r.w().phase, ReclaimPhase::Paused);
    r.level = 0;
    EXPECT_EQ(r.step(one(10, "reclaimed", 1_GiB, 0)).steps.size(), 1U);
}

TEST(Proactive, ClassesWithoutReclaimOrWithMemoryMinAreNotTouched) {
    Controller r;
    for (const char* cls : {"dedicated", "system"}) {
        r.state.clear();
        r.step(one(0, cls, 1_GiB, 0));
        EXPECT_TRUE(r.step(one(5, cls, 1_GiB, 0)).steps.empty()) << cls;
        EXPECT_EQ(r.w().phase, ReclaimPhase::Off) << cls;
    }
    // Protection=min with Reclaim=yes needs MinProtected=yes.
    auto classes = defaultClasses();
    for (auto& c : classes) {
        if (c.name == "dedicated") {
            c.reclaim = true;
        }
    }
    std::map<std::string, WorkloadReclaim> st;
    st = decideProactive(one(0, "dedicated", 1_GiB, 0), r.config, classes, 0, st).state;
    EXPECT_TRUE(decideProactive(one(5, "dedicated", 1_GiB, 0), r.config, classes, 0, st)
                    .steps.empty());
    r.config.minProtected = true;
    st = decideProactive(one(0, "dedicated", 1_GiB, 0), r.config, classes, 0, {}).state;
    EXPECT_EQ(decideProactive(one(5, "dedicated", 1_GiB, 0), r.config, classes, 0, st)
                  .steps.size(),
              1U);
    // The controller off: nothing anywhere.
    r.config = ReclaimConfig{};
    r.config.enabled = false;
    r.state.clear();
    r.step(one(0, "reclaimed", 1_GiB, 0));
    EXPECT_TRUE(r.step(one(5, "reclaimed", 1_GiB, 0)).steps.empty());
    EXPECT_EQ(r.w().phase, ReclaimPhase::Off);
}

TEST(Proactive, NoPsiVanishedAndResetCounters) {
    Controller r;
    Snapshot s = one(0, "reclaimed", 1_GiB, 0);
    s.workloads[0].cgroup->pressure.reset();
    r.step(s);
    EXPECT_EQ(r.w().phase, ReclaimPhase::NoPsi);
    r.step(one(5, "reclaimed", 1_GiB, 0));
    EXPECT_EQ(r.w().phase, ReclaimPhase::Waiting);
    r.state["batch.service"].reclaimed = 7_MiB;
    // Vanished: keeps its count, measures anew.
    s = one(10, "reclaimed", 1_GiB, 0);
    s.workloads[0].cgroup.reset();
    r.step(s);
    EXPECT_EQ(r.w().phase, ReclaimPhase::Waiting);
    EXPECT_EQ(r.w().reclaimed, 7_MiB);
    r.step(one(15, "reclaimed", 1_GiB, 900'000));
    // A total that went backwards (a new cgroup) is a new baseline, not a
    // huge negative stall.
    EXPECT_TRUE(r.step(one(20, "reclaimed", 1_GiB, 10)).steps.empty());
    EXPECT_EQ(r.w().phase, ReclaimPhase::Waiting);
    EXPECT_EQ(r.step(one(25, "reclaimed", 1_GiB, 10)).steps.size(), 1U);
    // Gone from the snapshot: dropped.
    s.workloads.clear();
    r.step(s);
    EXPECT_TRUE(r.state.empty());
}

TEST(ReclaimedAllocatable, TotalLessReserveHeadroomAndTheOthersClaims) {
    Snapshot s{
        .system = {.mem = {.memTotal = 16_GiB, .memAvailable = 12_GiB}},
        .classes = {ClassSample{.name = "dedicated", .cgroup = CgroupSample{.memoryCurrent = 1_GiB}},
                    ClassSample{.name = "shared", .cgroup = CgroupSample{.memoryCurrent = 3_GiB}},
                    ClassSample{.name = "reclaimed",
                                .cgroup = CgroupSample{.memoryCurrent = 2_GiB}}},
        .workloads = {WorkloadSample{.workload = {.id = "db.service",
                                                  .className = "dedicated",
                                                  .request = 4_GiB}},
                      WorkloadSample{.workload = {.id = "web.service",
                                                  .className = "shared",
                                                  .request = 1_GiB}},
                      WorkloadSample{.workload = {.id = "b.service",
                                                  .className = "reclaimed",
                                                  .request = 8_GiB}}},
    };
    s.nodeReserved = 1_GiB;
    // 16 − 1 reserve − 0.8 headroom (5 %) − dedicated max(4, 1) − shared max(1, 3) = 7.2 GiB.
    const Bytes headroom = 16_GiB / 20;
    EXPECT_EQ(reclaimedAllocatable(s, defaultClasses(), "reclaimed", 500),
              16_GiB - 1_GiB - headroom - 4_GiB - 3_GiB);
    // Memory used outside the classes counts when it is more.
    s.system.mem.memAvailable = 2_GiB; // 14 GiB in use, 12 GiB of it not reclaimed
    EXPECT_EQ(reclaimedAllocatable(s, defaultClasses(), "reclaimed", 500),
              16_GiB - 1_GiB - headroom - 12_GiB);
    // Never negative.
    s.nodeReserved = 20_GiB;
    EXPECT_EQ(reclaimedAllocatable(s, defaultClasses(), "reclaimed", 500), 0U);
}

} // namespace
} // namespace memqos::core

// SPDX-License-Identifier: Apache-2.0
#include "memqos/core/proactive.hpp"

#include <gtest/gtest.h>

#include <map>
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

// The daemon's loop: decide, then write, and what the kernel freed (a
// `freed` share of each step, all of it by default) is added to the state.
// Phases not spread: the step law's tests read easier with a fixed phase.
struct Controller {
    ReclaimConfig config = [] {
        ReclaimConfig c; // Interval 5 s, StallTarget 0.1 %, MaxStep 5 %
        c.spreadPhases = false;
        return c;
    }();
    std::map<std::string, WorkloadReclaim> state;
    std::uint32_t level = 0;
    double freed = 1.0;
    ProactiveOutcome step(const Snapshot& s) {
        auto out = decideProactive(s, config, defaultClasses(), level, state);
        state = out.state;
        for (const auto& st : out.steps) {
            state[st.workload].reclaimed +=
                static_cast<Bytes>(static_cast<double>(st.bytes) * freed);
        }
        return out;
    }
    const WorkloadReclaim& w() { return state.at("batch.service"); }
};

// Two workloads, `a` in reclaimed and `b` in dedicated (not reclaimed), and,
// when `withC`, `c` in reclaimed.
Snapshot three(std::int64_t seconds, Bytes usage, std::uint64_t someUsec, bool withC) {
    Snapshot s = one(seconds, "reclaimed", usage, someUsec);
    s.workloads[0].workload.id = "a.service";
    auto b = s.workloads[0];
    b.workload.id = "b.service";
    b.workload.className = "dedicated";
    s.workloads.push_back(b);
    if (withC) {
        auto c = s.workloads[0];
        c.workload.id = "c.service";
        s.workloads.push_back(c);
    }
    return s;
}

TEST(Proactive, InPlaceUpdateIsTheSameDecisionAndNamesWhatChanged) {
    // updateProactive (the daemon's, issue 25) against decideProactive, tick
    // by tick: the same steps and the same state; a tick that changes no
    // entry reports none; a workload gone is dropped, one back is fresh.
    ReclaimConfig config;
    config.spreadPhases = false;
    std::map<std::string, WorkloadReclaim> byCopy;
    std::map<std::string, WorkloadReclaim> inPlace;
    std::uint64_t some = 0;
    std::size_t steps = 0;
    bool paused = false;
    for (std::int64_t t = 0; t <= 40; ++t) {
        const bool withC = t < 12 || t > 20;
        some += t % 7 == 0 ? 3000U : 0U;
        const Snapshot s = three(t, 1_GiB - static_cast<Bytes>(t) * 1_MiB, some, withC);
        const auto before = inPlace;
        auto copy = decideProactive(s, config, defaultClasses(), t >= 30 ? 1 : 0, byCopy);
        auto update = updateProactive(s, config, defaultClasses(), t >= 30 ? 1 : 0, inPlace);
        byCopy = copy.state;
        ASSERT_EQ(update.steps, copy.steps) << "t=" << t;
        steps += update.steps.size();
        paused = paused || inPlace.at("a.service").phase == ReclaimPhase::Paused;
        ASSERT_EQ(inPlace, byCopy) << "t=" << t;
        ASSERT_EQ(inPlace.contains("c.service"), withC) << "t=" << t;
        std::size_t differing = 0;
        for (const auto& [id, r] : inPlace) {
            const auto was = before.find(id);
            differing += was == before.end() || !(was->second == r) ? 1U : 0U;
        }
        ASSERT_EQ(update.changed.size(), differing) << "t=" << t;
        for (const auto& ch : update.changed) {
            const auto was = before.find(ch.workload);
            EXPECT_EQ(ch.fresh, was == before.end()) << ch.workload << " t=" << t;
            if (was != before.end()) {
                EXPECT_EQ(ch.before, was->second) << ch.workload << " t=" << t;
            }
        }
        for (const auto& [id, st] : byCopy) { // the daemon's accounting
            for (const auto& step : copy.steps) {
                if (step.workload == id) {
                    byCopy[id].reclaimed += step.bytes;
                    inPlace[id].reclaimed += step.bytes;
                }
            }
        }
    }
    EXPECT_GE(steps, 4U); // it reclaimed
    EXPECT_TRUE(paused);  // and paused at level 1
    // Within an interval nothing changes: no entry named.
    const Snapshot s = three(41, 1_GiB, some, true);
    updateProactive(s, config, defaultClasses(), 0, inPlace);
    EXPECT_TRUE(updateProactive(s, config, defaultClasses(), 0, inPlace).changed.empty());
}

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

// The daemon reads only so many workloads a tick (issue 25): one whose turn
// waits is left as it is, however long its interval has been over, and
// takes its step at the tick it is read.
TEST(Proactive, AWorkloadWhoseTurnWaitsIsLeftAsItIs) {
    Controller r;
    r.step(one(0, "reclaimed", 1000_MiB, 0));
    const WorkloadReclaim before = r.w();
    for (const std::int64_t t : {5, 6, 30}) {
        auto s = one(t, "reclaimed", 1000_MiB, 0);
        s.workloads[0].reclaimWaits = true;
        s.workloads[0].cgroup->pressure.reset(); // not read
        EXPECT_TRUE(r.step(s).steps.empty()) << "at " << t << " s";
        EXPECT_EQ(r.w(), before) << "at " << t << " s";
    }
    auto out = r.step(one(31, "reclaimed", 1000_MiB, 0));
    ASSERT_EQ(out.steps.size(), 1U);
    EXPECT_EQ(r.w().phase, ReclaimPhase::Reclaiming);
    EXPECT_EQ(r.w().lastAt, at(31));
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

// --- Issue 25: a controller that scales ---

// A thousand workloads adopted at once are not measured and stepped in one
// tick: their first intervals are spread by their ids.
TEST(Proactive, PhasesAreSpreadOverTheInterval) {
    ReclaimConfig config; // spreadPhases on, Interval 5 s
    std::map<std::string, WorkloadReclaim> state;
    const auto snap = [](std::int64_t seconds) {
        Snapshot s{.now = at(seconds),
                   .system = {.mem = {.memTotal = 64_GiB, .memAvailable = 32_GiB,
                                      .swapTotal = 8_GiB},
                              .pageSize = 4096}};
        for (int i = 0; i < 1000; ++i) {
            const std::string id = "ovh@" + std::to_string(i) + ".service";
            s.workloads.push_back(WorkloadSample{
                .workload = {.id = id, .className = "reclaimed"},
                .cgroup = CgroupSample{.path = "memqos.slice/memqos-reclaimed.slice/" + id,
                                       .memoryCurrent = 1_GiB,
                                       .pressure = Pressure{.some = {.totalUsec = 0}}}});
        }
        return s;
    };
    std::size_t most = 0;
    std::size_t total = 0;
    for (std::int64_t t = 0; t <= 30; ++t) {
        const Snapshot s = snap(t);
        std::size_t due = 0;
        for (const auto& ws : s.workloads) {
            const auto it = state.find(ws.workload.id);
            due += it == state.end() || proactiveDue(it->second, s.now, config, 0) ? 1U : 0U;
        }
        auto out = decideProactive(s, config, defaultClasses(), 0, state);
        state = out.state;
        for (const auto& st : out.steps) {
            state[st.workload].reclaimed += st.bytes;
        }
        if (t >= 10) { // after the first sighting and the first, spread intervals
            most = std::max(most, due);
            EXPECT_LE(out.steps.size(), 350U) << "at " << t << " s";
        }
        total += out.steps.size();
    }
    // 1000 workloads, Interval 5 s, a tick a second: about 200 a tick, never
    // all of them (1000 in one tick every 5 s without the spread).
    EXPECT_LE(most, 350U);
    EXPECT_GE(total, 4000U); // each still stepped about every interval
}

TEST(Proactive, AtLeast32PagesAStep) {
    Controller r;
    r.step(one(0, "reclaimed", 20_MiB, 0));
    // 0.62 % of 20 MiB is 31 pages: raised to 32 (128 KiB).
    auto out = r.step(one(5, "reclaimed", 20_MiB, 0));
    ASSERT_EQ(out.steps.size(), 1U);
    EXPECT_EQ(out.steps[0].bytes, kMinReclaimPages * 4096);
}

TEST(Proactive, LessThan32PagesToSpareIsTheFloor) {
    Controller r;
    r.step(one(0, "reclaimed", 1_GiB, 0, 1_GiB - 100_KiB));
    auto out = r.step(one(5, "reclaimed", 1_GiB, 0, 1_GiB - 100_KiB));
    EXPECT_TRUE(out.steps.empty());
    EXPECT_EQ(r.w().phase, ReclaimPhase::AtFloor);
}

TEST(Proactive, SmallWorkloadsAreAtTheSizeFloor) {
    Controller r;
    r.step(one(0, "reclaimed", kReclaimFloor, 0));
    EXPECT_TRUE(r.step(one(5, "reclaimed", kReclaimFloor, 0)).steps.empty());
    EXPECT_EQ(r.w().phase, ReclaimPhase::AtFloor);
}

// Issue 25: a workload at its floor is looked at by its usage alone (the
// daemon reads no memory.pressure of it), its stall keeps the last measured
// value; once it grows past the floor its stall is measured anew over one
// interval, not from the old total (10 s stalled meanwhile would read as a
// 100 % stall and back it off), and then it is reclaimed from.
TEST(Proactive, AtTheFloorTheUsageAloneIsLookedAtAndTheStallMeasuredAnewAfter) {
    Controller r;
    r.step(one(0, "reclaimed", 8_MiB, 0));
    r.step(one(5, "reclaimed", 8_MiB, 1000));
    ASSERT_EQ(r.w().phase, ReclaimPhase::AtFloor);
    EXPECT_NEAR(r.w().stall, 0.02, 1e-9);
    EXPECT_TRUE(staysAtFloor(r.w(), 8_MiB, 0, 4096));
    EXPECT_FALSE(staysAtFloor(r.w(), 1_GiB, 0, 4096));
    Snapshot usageOnly = one(10, "reclaimed", 10_MiB, 0);
    usageOnly.workloads[0].cgroup->pressure.reset();
    EXPECT_TRUE(r.step(usageOnly).steps.empty());
    EXPECT_EQ(r.w().phase, ReclaimPhase::AtFloor) << "not NoPsi: pressure was not read";
    EXPECT_NEAR(r.w().stall, 0.02, 1e-9);
    // Seen at its floor by its usage alone: looked at again after
    // kFloorIntervals intervals (30 s), not after one; at level 1 after one.
    const ReclaimConfig config;
    EXPECT_FALSE(proactiveDue(r.w(), TimePoint(std::chrono::seconds(15)), config, 0));
    EXPECT_FALSE(proactiveDue(r.w(), TimePoint(std::chrono::seconds(39)), config, 0));
    EXPECT_TRUE(proactiveDue(r.w(), TimePoint(std::chrono::seconds(40)), config, 0));
    EXPECT_TRUE(proactiveDue(r.w(), TimePoint(std::chrono::seconds(15)), config, 1));
    EXPECT_TRUE(r.step(one(15, "reclaimed", 1_GiB, 10'001'000)).steps.empty());
    EXPECT_EQ(r.w().phase, ReclaimPhase::AtFloor) << "looked at before its 30 s";
    // Grown past the floor, with 30 s stalled while nobody looked: a new
    // measurement starts.
    EXPECT_TRUE(r.step(one(40, "reclaimed", 1_GiB, 30'001'000)).steps.empty());
    EXPECT_EQ(r.w().phase, ReclaimPhase::Waiting);
    const auto out = r.step(one(45, "reclaimed", 1_GiB, 30'001'000));
    ASSERT_EQ(out.steps.size(), 1U);
    EXPECT_EQ(r.w().phase, ReclaimPhase::Reclaiming);
    EXPECT_EQ(r.w().stall, 0.0);
    // Other phases, and a pressure level above 0, need the pressure.
    EXPECT_FALSE(staysAtFloor(r.w(), 8_MiB, 0, 4096));
    r.step(one(50, "reclaimed", 8_MiB, 30'001'000));
    ASSERT_EQ(r.w().phase, ReclaimPhase::AtFloor);
    r.level = 1;
    usageOnly = one(55, "reclaimed", 8_MiB, 0);
    usageOnly.workloads[0].cgroup->pressure.reset();
    r.step(usageOnly);
    EXPECT_EQ(r.w().phase, ReclaimPhase::NoPsi);
}

// Issue 25: one that stays at its floor is looked at after 30 s, then 60,
// 120, 240 s and every 240 s from then on (kMaxFloorIntervals); once it has
// grown, the first look after its wait sees it and the waits start over.
TEST(Proactive, AtTheFloorEachLookWaitsTwiceAsLongUpToFourMinutes) {
    EXPECT_EQ(floorIntervals(0), kFloorIntervals);
    EXPECT_EQ(floorIntervals(1), 6);
    EXPECT_EQ(floorIntervals(2), 12);
    EXPECT_EQ(floorIntervals(3), 24);
    EXPECT_EQ(floorIntervals(4), 48);
    EXPECT_EQ(floorIntervals(5), kMaxFloorIntervals);
    EXPECT_EQ(floorIntervals(255), kMaxFloorIntervals);
    Controller r;
    r.step(one(0, "reclaimed", 8_MiB, 0));
    r.step(one(5, "reclaimed", 8_MiB, 1000));
    ASSERT_EQ(r.w().phase, ReclaimPhase::AtFloor);
    const auto usageOnly = [](std::int64_t t, Bytes usage) {
        Snapshot s = one(t, "reclaimed", usage, 0);
        s.workloads[0].cgroup->pressure.reset();
        return s;
    };
    const ReclaimConfig config;
    std::int64_t t = 10;
    r.step(usageOnly(t, 8_MiB)); // the first usage-only look
    for (const std::int64_t wait : {30, 60, 120, 240, 240, 240}) {
        EXPECT_FALSE(proactiveDue(r.w(), at(t + wait - 1), config, 0)) << "at " << t;
        ASSERT_TRUE(proactiveDue(r.w(), at(t + wait), config, 0)) << "at " << t;
        EXPECT_TRUE(proactiveDue(r.w(), at(t + 5), config, 1)) << "level 1: after one interval";
        t += wait;
        r.step(usageOnly(t, 8_MiB));
        ASSERT_EQ(r.w().phase, ReclaimPhase::AtFloor);
        EXPECT_TRUE(r.w().staleBaseline);
    }
    // Grown meanwhile: the next look (after 240 s) finds it, with its
    // pressure, and measures anew; back at the floor the waits start at 30 s.
    t += 240;
    r.step(one(t, "reclaimed", 1_GiB, 50'000'000));
    EXPECT_EQ(r.w().phase, ReclaimPhase::Waiting);
    EXPECT_EQ(r.w().floorLooks, 0);
    t += 5;
    r.step(one(t, "reclaimed", 8_MiB, 50'000'000));
    ASSERT_EQ(r.w().phase, ReclaimPhase::AtFloor);
    t += 5;
    r.step(usageOnly(t, 8_MiB));
    EXPECT_FALSE(proactiveDue(r.w(), at(t + 29), config, 0));
    EXPECT_TRUE(proactiveDue(r.w(), at(t + 30), config, 0));
}

// With swap: a step that freed less than half of what it asked halves the
// next (not below the start) instead of doubling it.
TEST(Proactive, StepShrinksWhenTheKernelFreesLittle) {
    Controller r;
    const auto swapped = [](Snapshot s) {
        s.system.mem.swapTotal = 8_GiB;
        return s;
    };
    r.step(swapped(one(0, "reclaimed", 1_GiB, 0)));
    r.step(swapped(one(5, "reclaimed", 1_GiB, 0)));
    EXPECT_EQ(r.w().step, 62);
    r.step(swapped(one(10, "reclaimed", 1_GiB, 0)));
    EXPECT_EQ(r.w().step, 124);
    r.step(swapped(one(15, "reclaimed", 1_GiB, 0)));
    EXPECT_EQ(r.w().step, 248);
    r.freed = 0.25; // the kernel frees a quarter of this step
    auto poor = r.step(swapped(one(20, "reclaimed", 1_GiB, 0)));
    EXPECT_EQ(r.w().step, 496);
    ASSERT_EQ(poor.steps.size(), 1U);
    auto next = r.step(swapped(one(25, "reclaimed", 1_GiB, 0)));
    EXPECT_EQ(r.w().step, 248) << "halved after a step that freed a quarter";
    ASSERT_EQ(next.steps.size(), 1U);
    r.step(swapped(one(30, "reclaimed", 1_GiB, 0)));
    r.step(swapped(one(35, "reclaimed", 1_GiB, 0)));
    r.step(swapped(one(40, "reclaimed", 1_GiB, 0)));
    EXPECT_EQ(r.w().step, 62) << "not below the start";
    EXPECT_EQ(r.w().phase, ReclaimPhase::Reclaiming);
}

// Without swap, what the kernel would not free is anonymous memory: the
// controller stops after an unproductive step and tries again only once the
// workload grew by kResumeGrowth.
TEST(Proactive, StopsWithoutSwapWhenTheKernelFreesLittle) {
    Controller r; // one(): a host without swap
    r.freed = 0.1;
    r.step(one(0, "reclaimed", 1_GiB, 0));
    ASSERT_EQ(r.step(one(5, "reclaimed", 1_GiB, 0)).steps.size(), 1U);
    EXPECT_TRUE(r.step(one(10, "reclaimed", 1_GiB, 0)).steps.empty());
    EXPECT_EQ(r.w().phase, ReclaimPhase::AtFloor);
    EXPECT_TRUE(r.step(one(15, "reclaimed", 1_GiB + 50_MiB, 0)).steps.empty());
    EXPECT_EQ(r.w().phase, ReclaimPhase::AtFloor);
    auto again = r.step(one(20, "reclaimed", 1_GiB + 120_MiB, 0));
    EXPECT_EQ(again.steps.size(), 1U) << "grew by more than 10 %: tried again";
    EXPECT_EQ(r.w().phase, ReclaimPhase::Reclaiming);
}

TEST(Proactive, StopsInASwapNoClassOnAHostWithSwap) {
    ReclaimConfig config;
    config.spreadPhases = false;
    auto classes = defaultClasses();
    for (auto& c : classes) {
        if (c.name == "reclaimed") {
            c.swap = false;
        }
    }
    std::map<std::string, WorkloadReclaim> state;
    const auto step = [&](std::int64_t t) {
        Snapshot s = one(t, "reclaimed", 1_GiB, 0);
        s.system.mem.swapTotal = 8_GiB;
        auto out = decideProactive(s, config, classes, 0, state);
        state = out.state;
        for (const auto& st : out.steps) {
            state[st.workload].reclaimed += st.bytes / 10;
        }
        return out.steps.size();
    };
    step(0);
    EXPECT_EQ(step(5), 1U);
    EXPECT_EQ(step(10), 0U);
    EXPECT_EQ(state.at("batch.service").phase, ReclaimPhase::AtFloor);
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
    // Memory used outside the classes counts instead of NodeReserved when
    // it is more (not on top of it: NodeReserved is for that use).
    s.system.mem.memAvailable = 2_GiB; // 14 GiB in use: 2 reclaimed, 4 the other classes
    EXPECT_EQ(reclaimedAllocatable(s, defaultClasses(), "reclaimed", 500),
              16_GiB - headroom - 4_GiB - 3_GiB - 8_GiB);
    // Never negative.
    s.nodeReserved = 20_GiB;
    EXPECT_EQ(reclaimedAllocatable(s, defaultClasses(), "reclaimed", 500), 0U);
}

// The requests are summed by class whatever the workloads' order, and a
// workload of no configured class (an unplaced VM's "") adds to none.
TEST(ReclaimedAllocatable, RequestsOfInterleavedClassesAreSummedByClass) {
    const auto w = [](const char* id, const char* cls, Bytes request) {
        return WorkloadSample{.workload = {.id = id, .className = cls, .request = request}};
    };
    Snapshot s{
        .system = {.mem = {.memTotal = 16_GiB, .memAvailable = 16_GiB}},
        .classes = {ClassSample{.name = "dedicated", .cgroup = CgroupSample{}},
                    ClassSample{.name = "shared", .cgroup = CgroupSample{}},
                    ClassSample{.name = "reclaimed", .cgroup = CgroupSample{}}},
        .workloads = {w("a.service", "dedicated", 1_GiB), w("b.service", "shared", 2_GiB),
                      w("c.service", "dedicated", 1_GiB), w("vm:x", "", 4_GiB),
                      w("d.service", "reclaimed", 8_GiB), w("e.service", "shared", 1_GiB)},
    };
    const Bytes headroom = 16_GiB / 20;
    // dedicated 2 + shared 3; reclaimed's own and the unplaced VM's not.
    EXPECT_EQ(reclaimedAllocatable(s, defaultClasses(), "reclaimed", 500),
              16_GiB - headroom - 2_GiB - 3_GiB);
    // From shared's side: dedicated 2 + reclaimed 8.
    EXPECT_EQ(reclaimedAllocatable(s, defaultClasses(), "shared", 500),
              16_GiB - headroom - 2_GiB - 8_GiB);
}

// clearSample (snapshot.hpp) makes a used sample a new one: every field.
// The size check fails when CgroupSample gains a field, so that the field
// is added to clearSample and here.
TEST(Snapshot, ClearedSampleIsANewOne) {
    static_assert(sizeof(CgroupSample) ==
                      sizeof(std::string) + 4 * sizeof(Bytes) + 3 * sizeof(Limit) +
                          sizeof(std::optional<Pressure>) + sizeof(MemoryStat) +
                          sizeof(std::vector<std::int32_t>),
                  "CgroupSample has a new field: reset it in clearSample and check it here");
    static_assert(sizeof(MemoryStat) == 11 * sizeof(std::uint64_t) +
                                            sizeof(std::map<std::string, std::uint64_t, std::less<>>),
                  "MemoryStat has a new field: reset it in clearSample and check it here");
    CgroupSample s;
    s.path = "memqos.slice/memqos-shared.slice/a.service";
    s.memoryCurrent = 1;
    s.swapCurrent = 2;
    s.memoryMin = 3;
    s.memoryLow = 4;
    s.memoryHigh = 5;
    s.memoryMax = 6;
    s.swapMax = 7;
    s.pressure = Pressure{.some = PressureLine{.avg10 = 1.0}, .full = PressureLine{}};
    s.stat = MemoryStat{.anon = 8, .file = 9, .shmem = 10, .fileDirty = 11, .inactiveFile = 12,
                        .activeFile = 13, .pgscan = 14, .pgsteal = 15, .pgmajfault = 16,
                        .workingsetRefaultAnon = 17, .workingsetRefaultFile = 18, .all = {}};
    s.stat.all["anon"] = 8;
    s.procs = {1, 2};
    clearSample(s);
    const CgroupSample fresh;
    EXPECT_EQ(s.path, fresh.path);
    EXPECT_EQ(s.memoryCurrent, fresh.memoryCurrent);
    EXPECT_EQ(s.swapCurrent, fresh.swapCurrent);
    EXPECT_EQ(s.memoryMin, fresh.memoryMin);
    EXPECT_EQ(s.memoryLow, fresh.memoryLow);
    EXPECT_EQ(s.memoryHigh, fresh.memoryHigh);
    EXPECT_EQ(s.memoryMax, fresh.memoryMax);
    EXPECT_EQ(s.swapMax, fresh.swapMax);
    EXPECT_FALSE(s.pressure.has_value());
    for (const std::uint64_t v :
         {s.stat.anon, s.stat.file, s.stat.shmem, s.stat.fileDirty, s.stat.inactiveFile,
          s.stat.activeFile, s.stat.pgscan, s.stat.pgsteal, s.stat.pgmajfault,
          s.stat.workingsetRefaultAnon, s.stat.workingsetRefaultFile}) {
        EXPECT_EQ(v, 0U);
    }
    EXPECT_TRUE(s.stat.all.empty());
    EXPECT_TRUE(s.procs.empty());
}

} // namespace
} // namespace memqos::core

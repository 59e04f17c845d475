// SPDX-License-Identifier: Apache-2.0
#include "memqos/core/pressure.hpp"
#include "memqos/core/proactive.hpp"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include "literals.hpp"

namespace memqos::core {
namespace {

using namespace test; // NOLINT(google-build-using-namespace): unit literals

// A host whose MemTotal is a multiple of 10000, so percentages are exact.
constexpr Bytes kTotal = 16'000'000'000;
constexpr Bytes kPerMyriad = kTotal / 10000;

WorkloadSample sample(const std::string& id, const std::string& cls, Bytes request, Bytes usage,
                      Bytes swap = 0) {
    return WorkloadSample{
        .workload = {.id = id, .className = cls, .request = request},
        .cgroup = CgroupSample{.path = "memqos.slice/memqos-" + cls + ".slice/" + id,
                               .memoryCurrent = usage,
                               .swapCurrent = swap},
    };
}

ClassSample classSample(const std::string& name, Bytes usage) {
    return ClassSample{.name = name,
                       .cgroup = CgroupSample{.path = "memqos.slice/memqos-" + name + ".slice",
                                              .memoryCurrent = usage}};
}

// Calm host at `seconds`: PSI 0, MemAvailable 50 %, no swap, no zones.
Snapshot calm(std::int64_t seconds) {
    return Snapshot{
        .now = at(seconds),
        .system = {.mem = {.memTotal = kTotal, .memFree = 4_GiB, .memAvailable = kTotal / 2},
                   .pressure = Pressure{.some = {}, .full = PressureLine{}},
                   .pageSize = 4096},
        .classes = {classSample("system", 12_GiB), classSample("shared", 4_GiB),
                    classSample("reclaimed", 2_GiB)},
        .workloads = {sample("db.service", "system", 1_GiB, 10_GiB),
                      sample("web.service", "shared", 1_GiB, 1536_MiB),
                      sample("batch.service", "reclaimed", 0, 1_GiB, 100_MiB),
                      sample("vm:scratch", "reclaimed", 768_MiB, 768_MiB, 1_GiB)},
    };
}

Snapshot psi(std::int64_t seconds, double some, double full) {
    Snapshot s = calm(seconds);
    s.system.pressure =
        Pressure{.some = {.avg10 = some}, .full = PressureLine{.avg10 = full}};
    return s;
}

// MemAvailable at `permyriad` of MemTotal, and no PSI file at all.
Snapshot available(std::int64_t seconds, std::uint64_t permyriad) {
    Snapshot s = calm(seconds);
    s.system.pressure.reset();
    s.system.mem.memAvailable = kPerMyriad * permyriad;
    return s;
}

Snapshot zone(std::int64_t seconds, std::uint64_t free, std::uint64_t managed = 1'000'000) {
    Snapshot s = calm(seconds);
    s.system.zones = {
        Zone{.node = 0,
                    .name = "DMA32",
                    .freePages = 100'000,
                    .minPages = 200,
                    .lowPages = 300,
                    .highPages = 400,
                    .managedPages = 500'000},
        Zone{.node = 0,
                    .name = "Normal",
                    .freePages = free,
                    .minPages = 2000,
                    .lowPages = 3000,
                    .highPages = 4000,
                    .managedPages = managed},
    };
    return s;
}

// 4 GiB swap, `usedPermyriad` of it used, with MemAvailable at `permyriad`.
Snapshot swapped(std::int64_t seconds, std::uint64_t permyriad,
                 std::uint64_t usedPermyriad = 9500) {
    Snapshot s = available(seconds, permyriad);
    s.system.mem.swapTotal = 4_GiB;
    s.system.mem.swapFree = 4_GiB / 10000 * (10000 - usedPermyriad);
    return s;
}

Snapshot onlyProtected(std::int64_t seconds) {
    Snapshot s = psi(seconds, 60, 50);
    s.workloads = {sample("db.service", "system", 1_GiB, 60_GiB),
                   sample("vm:gold", "dedicated", 8_GiB, 8_GiB)};
    return s;
}

Snapshot noWorkloads(std::int64_t seconds) {
    Snapshot s = psi(seconds, 60, 50);
    s.workloads.clear();
    return s;
}

std::string describe(const Action& a) {
    return std::visit(
        [](const auto& x) -> std::string {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, SetPressureLevel>) {
                return "level " + std::to_string(x.level);
            } else if constexpr (std::is_same_v<T, SetAdmission>) {
                return x.open ? "admission open" : "admission closed";
            } else if constexpr (std::is_same_v<T, ReclaimClass>) {
                return "reclaim " + x.className;
            } else if constexpr (std::is_same_v<T, CapClass>) {
                return std::string(toString(x.why)) + " " + x.className;
            } else if constexpr (std::is_same_v<T, ShrinkBalloons>) {
                return "shrink " + x.className;
            } else {
                return "kill " + x.victim.id;
            }
        },
        a);
}

std::vector<std::string> describe(const Decisions& d) {
    std::vector<std::string> out;
    for (const auto& a : d.actions) {
        out.push_back(describe(a));
    }
    return out;
}

using Strings = std::vector<std::string>;

Strings operator+(Strings a, const Strings& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// Per-tick actions at levels 1 and ≥ 2 with the default classes (by rank):
// only the guarded best-effort class is reclaimed (shared is Reclaim=yes but
// not guarded: its pages are the kernel's to reclaim).
Strings l1() {
    return {"reclaim reclaimed"};
}
// calm()'s classes use more than MemTotal, so the reclaimed class's cap is
// the guard's floor from the first tick on, and throttling cannot go under
// it: level 2 adds no CapClass here (see the Guard tests for those).
Strings l2() {
    return l1() + Strings{"shrink reclaimed"};
}
// Level ≥ 2 in a tick that kills: no reclaim (it would swap out the pages of
// the workload about to die, and delay the kill).
Strings l2k() {
    return {"shrink reclaimed"};
}
// The guard's floor: 2 % of kTotal, page-aligned.
constexpr Bytes kFloorCap = 320'000'000;

struct Step {
    Snapshot snapshot;
    std::uint32_t level;
    Strings actions;
};

struct LadderCase {
    const char* name;
    std::vector<Step> steps;
    PressureConfig config = {};
};

PressureConfig noWatermarks() {
    PressureConfig c;
    c.watermarks = false;
    return c;
}

class Ladder : public ::testing::TestWithParam<LadderCase> {};

TEST_P(Ladder, Steps) {
    const auto& c = GetParam();
    PressureState state;
    state.classHigh["reclaimed"] = kFloorCap; // decided on an earlier tick
    for (std::size_t i = 0; i < c.steps.size(); ++i) {
        const Step& step = c.steps[i];
        const PressureOutcome out = decide(step.snapshot, c.config, defaultClasses(), state);
        EXPECT_EQ(out.state.level, step.level)
            << "step " << i << " at " << step.snapshot.now.count() << "us";
        EXPECT_EQ(describe(out.decisions), step.actions) << "step " << i;
        EXPECT_EQ(out.state.admissionOpen, out.state.level == 0) << "step " << i;
        state = out.state;
    }
}

INSTANTIATE_TEST_SUITE_P(
    CorePressure, Ladder,
    ::testing::Values(
        LadderCase{"calm_stays_zero",
                   {{calm(0), 0, {}}, {calm(1), 0, {}}, {calm(5), 0, {}}, {calm(30), 0, {}}}},
        LadderCase{"spike_shorter_than_duration",
                   {{psi(0, 15, 0), 0, {}},
                    {psi(1, 15, 0), 0, {}},
                    {psi(2, 0, 0), 0, {}}, // dropped: the since resets
                    {psi(3, 15, 0), 0, {}},
                    {psi(4, 15, 0), 0, {}}}},
        LadderCase{"level_one_after_duration",
                   {{psi(0, 15, 0), 0, {}},
                    {psi(1, 15, 0), 0, {}},
                    {psi(2, 15, 0), 1, Strings{"level 1", "admission closed"} + l1()},
                    {psi(3, 15, 0), 1, l1()}}},
        LadderCase{"threshold_is_inclusive",
                   {{psi(0, 10, 0), 0, {}},
                    {psi(2, 10, 0), 1, Strings{"level 1", "admission closed"} + l1()}}},
        LadderCase{
            "jump_to_three",
            {{psi(0, 60, 50), 0, {}},
             {psi(10, 60, 50), 3,
              Strings{"level 3", "admission closed"} + l2k() + Strings{"kill batch.service"}}}},
        LadderCase{
            "climb_through_levels",
            {{psi(0, 60, 50), 0, {}},
             {psi(2, 60, 50), 1, Strings{"level 1", "admission closed"} + l1()},
             {psi(5, 60, 50), 2, Strings{"level 2"} + l2()},
             {psi(10, 60, 50), 3, Strings{"level 3"} + l2k() + Strings{"kill batch.service"}}}},
        LadderCase{"kill_once_per_cooldown",
                   {{psi(0, 60, 50), 0, {}},
                    {psi(10, 60, 50), 3,
                     Strings{"level 3", "admission closed"} + l2k() + Strings{"kill batch.service"}},
                    {psi(11, 60, 50), 3, l2()},
                    {psi(24, 60, 50), 3, l2()},
                    {psi(25, 60, 50), 3, l2k() + Strings{"kill batch.service"}},
                    {psi(26, 60, 50), 3, l2()}}},
        // Level 3 held by hysteresis only (full 18 % ≥ 20 % · 0.8): the
        // level stays, but no second kill after the cooldown: the relief of
        // the first shows in avg10 only seconds later.
        LadderCase{"held_level_three_kills_no_more",
                   {{psi(0, 60, 50), 0, {}},
                    {psi(10, 60, 50), 3,
                     Strings{"level 3", "admission closed"} + l2k() + Strings{"kill batch.service"}},
                    {psi(25, 60, 18), 3, l2()},
                    {psi(26, 60, 18), 3, l2()},
                    {psi(27, 60, 20), 3, l2k() + Strings{"kill batch.service"}}}},
        LadderCase{"hysteresis_keeps_level",
                   {{psi(0, 15, 0), 0, {}},
                    {psi(2, 15, 0), 1, Strings{"level 1", "admission closed"} + l1()},
                    {psi(3, 9, 0), 1, l1()},    // under 10 but ≥ 10·(1 − 0.2)
                    {psi(20, 8, 0), 1, l1()},   // exactly 8 still holds
                    {psi(21, 7.9, 0), 1, l1()}, // released: recovery starts
                    {psi(30, 7.9, 0), 1, l1()},
                    {psi(31, 7.9, 0), 0, {"level 0", "admission open"}},
                    {psi(32, 7.9, 0), 0, {}}}},
        LadderCase{"recovery_one_level_per_duration",
                   {{psi(0, 60, 50), 0, {}},
                    {psi(10, 60, 50), 3,
                     Strings{"level 3", "admission closed"} + l2k() + Strings{"kill batch.service"}},
                    {calm(11), 3, l2()},
                    {calm(20), 3, l2()},
                    {calm(21), 2, Strings{"level 2"} + l2()},
                    {calm(30), 2, l2()},
                    {calm(31), 1, Strings{"level 1"} + l1()},
                    {calm(41), 0, {"level 0", "admission open"}}}},
        LadderCase{"recovery_interrupted",
                   {{psi(0, 15, 0), 0, {}},
                    {psi(2, 15, 0), 1, Strings{"level 1", "admission closed"} + l1()},
                    {calm(3), 1, l1()},
                    {psi(8, 9, 0), 1, l1()}, // held again: recovery restarts
                    {calm(9), 1, l1()},
                    {calm(13), 1, l1()},
                    {calm(19), 0, {"level 0", "admission open"}}}},
        LadderCase{
            "memavailable_only_without_psi",
            {{available(0, 150), 0, {}},
             {available(2, 150), 1, Strings{"level 1", "admission closed"} + l1()},
             {available(5, 150), 2, Strings{"level 2"} + l2()},
             {available(10, 150), 3, Strings{"level 3"} + l2k() + Strings{"kill batch.service"}}}},
        LadderCase{"memavailable_threshold_is_inclusive",
                   {{available(0, 1000), 0, {}},
                    {available(2, 1000), 1, Strings{"level 1", "admission closed"} + l1()}}},
        LadderCase{"memavailable_hysteresis",
                   {{available(0, 900), 0, {}},
                    {available(2, 900), 1, Strings{"level 1", "admission closed"} + l1()},
                    {available(3, 1250), 1, l1()}, // ≤ 10 % / (1 − 0.2)
                    {available(4, 1251), 1, l1()}, // released
                    {available(13, 1300), 1, l1()},
                    {available(14, 1300), 0, {"level 0", "admission open"}}}},
        LadderCase{"no_psi_and_plenty_of_memory",
                   {{available(0, 5000), 0, {}}, {available(60, 5000), 0, {}}}},
        LadderCase{"watermark_low_is_level_two",
                   {{zone(0, 2500), 0, {}},
                    {zone(2, 2500), 1, Strings{"level 1", "admission closed"} + l1()},
                    {zone(5, 2500), 2, Strings{"level 2"} + l2()},
                    {zone(30, 2500), 2, l2()}}},
        LadderCase{
            "watermark_min_is_level_three",
            {{zone(0, 1999), 0, {}},
             {zone(10, 1999), 3,
              Strings{"level 3", "admission closed"} + l2k() + Strings{"kill batch.service"}}}},
        // Held while free ≤ low/(1 − 0.2) = 3750 pages; it was inverted
        // (free < 0.8 · low), so level 2 flapped every RecoveryDuration.
        LadderCase{"watermark_hysteresis",
                   {{zone(0, 2500), 0, {}},
                    {zone(2, 2500), 1, Strings{"level 1", "admission closed"} + l1()},
                    {zone(5, 2500), 2, Strings{"level 2"} + l2()},
                    {zone(6, 3700), 2, l2()},
                    {zone(16, 3700), 2, l2()},
                    {zone(17, 3760), 2, l2()}, // released: recovery starts
                    {zone(26, 3760), 2, l2()},
                    {zone(27, 3760), 1, Strings{"level 1"} + l1()}}},
        LadderCase{"watermark_at_low_is_fine", {{zone(0, 3000), 0, {}}, {zone(30, 3000), 0, {}}}},
        LadderCase{"zone_without_managed_pages_ignored",
                   {{zone(0, 0, 0), 0, {}}, {zone(30, 0, 0), 0, {}}}},
        LadderCase{"watermarks_off", {{zone(0, 0), 0, {}}, {zone(30, 0), 0, {}}}, noWatermarks()},
        // Memory and swap exhausted: level 3 and the kill at once.
        LadderCase{"swap_trigger_kills_largest_swap_user",
                   {{swapped(0, 150), 3,
                     Strings{"level 3", "admission closed"} + l2k() + Strings{"kill vm:scratch"}},
                    {swapped(10, 150), 3, Strings{"reclaim reclaimed", "shrink reclaimed"}}}},
        LadderCase{
            "swap_below_trigger_ranks_by_excess",
            {{swapped(0, 150, 8999), 0, {}},
             {swapped(10, 150, 8999), 3,
              Strings{"level 3", "admission closed"} + l2k() + Strings{"kill batch.service"}}}},
        // Memory and swap exhausted: level 3 and the kill at once.
        LadderCase{"swap_trigger_at_threshold",
                   {{swapped(0, 150, 9000), 3,
                     Strings{"level 3", "admission closed"} + l2k() + Strings{"kill vm:scratch"}},
                    {swapped(10, 150, 9000), 3, Strings{"reclaim reclaimed", "shrink reclaimed"}}}},
        LadderCase{"swap_full_memory_fine",
                   {{swapped(0, 5000), 0, {}}, {swapped(30, 5000), 0, {}}}},
        LadderCase{"protected_never_killed",
                   {{onlyProtected(0), 0, {}},
                    {onlyProtected(10), 3, Strings{"level 3", "admission closed"} + l2()}}},
        LadderCase{"no_candidate_no_kill",
                   {{noWorkloads(0), 0, {}},
                    {noWorkloads(10), 3, Strings{"level 3", "admission closed"} + l2()},
                    {noWorkloads(11), 3, l2()}}}),
    test::ByName());

PressureOutcome run(const std::vector<Snapshot>& snaps, const PressureConfig& cfg = {},
                    const std::vector<ClassPolicy>& classes = defaultClasses()) {
    PressureOutcome out{.decisions = {}, .state = {}};
    for (const auto& s : snaps) {
        out = decide(s, cfg, classes, out.state);
    }
    return out;
}

// The reasons carry the signals and numbers; tests/unit/wording words them.
TEST(CorePressure, LevelReasonNamesSignalAndNumbers) {
    const auto out = run({psi(0, 0, 32.5), psi(10, 0, 32.5)});
    ASSERT_FALSE(out.decisions.actions.empty());
    const LevelReason rose =
        LevelRose{.signals = {PsiSignal{.full = true, .avg10 = 32.5, .threshold = 20}},
                  .duration = std::chrono::seconds(10)};
    EXPECT_EQ(std::get<SetPressureLevel>(out.decisions.actions[0]),
              (SetPressureLevel{.level = 3, .reason = rose}));
    EXPECT_EQ(out.decisions.reasons,
              (std::vector<Note>{LevelChanged{.from = 0, .to = 3, .reason = rose},
                                 AdmissionChanged{.open = false, .level = 3}}));
    EXPECT_EQ(out.state.reason, rose);
}

const MemAvailableSignal kAvailable150{
    .memAvailable = kPerMyriad * 150, .memTotal = kTotal, .threshold = 200};

TEST(CorePressure, LevelReasonListsEverySignalOnce) {
    const auto out = run({available(0, 150), available(2, 150)});
    // Level 1 entered on MemAvailable; the threshold given is the highest
    // level's it passes (2 %), not one signal per level.
    EXPECT_EQ(out.state.reason, (LevelReason{LevelRose{.signals = {kAvailable150},
                                                        .duration = std::chrono::seconds(2)}}));
}

TEST(CorePressure, RecoveryReason) {
    const auto out = run({psi(0, 15, 0), psi(2, 15, 0), calm(3), calm(13)});
    EXPECT_EQ(out.state.level, 0U);
    EXPECT_EQ(out.state.reason, (LevelReason{LevelFell{.from = 1,
                                                       .hysteresis = 2000,
                                                       .duration = std::chrono::seconds(10),
                                                       .readings = {.someAvg10 = 0,
                                                                    .fullAvg10 = 0,
                                                                    .memAvailable = kTotal / 2,
                                                                    .memTotal = kTotal}}}));
}

TEST(CorePressure, WatermarkAndSwapReasons) {
    EXPECT_EQ(run({zone(0, 1000), zone(10, 1000)}).state.reason,
              (LevelReason{LevelRose{.signals = {WatermarkSignal{.zone = "Normal",
                                                                 .node = 0,
                                                                 .free = 1000 * 4096,
                                                                 .watermark = 2000 * 4096,
                                                                 .min = true}},
                                     .duration = std::chrono::seconds(10)}}));
    const SwapSignal swap{.used = 4_GiB - 4_GiB / 10000 * 500,
                          .swapTotal = 4_GiB,
                          .threshold = 9000,
                          .memAvailable = kAvailable150};
    // Memory and swap exhausted: level 3 at once (see below); the reason
    // says so.
    EXPECT_EQ(run({swapped(0, 150)}).state.reason,
              (LevelReason{LevelRose{.signals = {kAvailable150, swap},
                                     .duration = std::chrono::seconds(0),
                                     .exhausted = true}}));
}

// The kernel's OOM killer is seconds away once MemAvailable is under level
// 3's threshold and swap is used past SwapUsedKill: waiting Level3Duration
// let it fire first in the VM (52-kill-path, no throttle reaching systemd).
TEST(CorePressure, ExhaustedMemoryAndSwapKillAtOnce) {
    const auto out = run({calm(0), swapped(1, 150)});
    EXPECT_EQ(out.state.level, 3U);
    const auto d = describe(out.decisions);
    ASSERT_FALSE(d.empty());
    EXPECT_EQ(d.front(), "level 3");
    EXPECT_EQ(d.back(), "kill vm:scratch"); // ranked by swap under the swap signal
}

// Only both together: low memory with swap to spare, or swap full with
// memory to spare, still waits for Level3Duration; so does a host without
// swap, and SwapUsedKill=off turns it off.
TEST(CorePressure, ExhaustionNeedsMemoryAndSwapBothGone) {
    EXPECT_LT(run({swapped(0, 150, 5000), swapped(9, 150, 5000)}).state.level, 3U);
    EXPECT_LT(run({swapped(0, 400, 9900), swapped(9, 400, 9900)}).state.level, 3U);
    EXPECT_LT(run({available(0, 150), available(9, 150)}).state.level, 3U);
    EXPECT_EQ(run({available(0, 150), available(10, 150)}).state.level, 3U);
    PressureConfig off;
    off.swapUsedKill.reset();
    EXPECT_LT(run({swapped(0, 150), swapped(9, 150)}, off).state.level, 3U);
    EXPECT_EQ(run({swapped(0, 150), swapped(10, 150)}, off).state.level, 3U);
}

// Classes that leave the guard room: system 2 GiB, shared 4 GiB, reclaimed
// 2 GiB of 16e9 bytes.
Snapshot roomy(Snapshot s) {
    s.classes = {classSample("system", 2_GiB), classSample("shared", 4_GiB),
                 classSample("reclaimed", 2_GiB)};
    return s;
}

TEST(CorePressure, ActionAmounts) {
    const auto out = run({roomy(psi(0, 30, 6)), roomy(psi(5, 30, 6))});
    ASSERT_EQ(out.state.level, 2U);
    const std::vector<Action> expected{
        SetPressureLevel{.level = 2,
                         .reason = LevelRose{.signals = {PsiSignal{.full = false,
                                                                   .avg10 = 30,
                                                                   .threshold = 25},
                                                         PsiSignal{.full = true,
                                                                   .avg10 = 6,
                                                                   .threshold = 5}},
                                             .duration = std::chrono::seconds(5)}},
        SetAdmission{.open = false},
        // 1 % of 2 GiB, page-aligned down (the guarded class only)
        ReclaimClass{.className = "reclaimed", .bytes = 21471232},
        // 95 % of 2 GiB, page-aligned down, under the guard's cap
        CapClass{.className = "reclaimed",
                 .memoryHigh = 2040107008,
                 .why = CapClass::Why::Throttle,
                 .guard = {.memTotal = kTotal,
                           .others = 6_GiB,
                           .reserved = 0,
                           .headroom = 800'000'000,
                           .left = 8'757'549'056,
                           .floor = 320'000'000,
                           .floored = false,
                           .cap = 8'757'547'008},
                 .level = 2,
                 .usage = 2_GiB,
                 .previous = 8'757'547'008}, // the first tick's guard cap
        ShrinkBalloons{.className = "reclaimed"},
    };
    EXPECT_EQ(out.decisions.actions, expected);
    EXPECT_TRUE(out.decisions.consideredVictims.empty());
}

// The CapClass actions of one decision.
std::vector<CapClass> caps(const Decisions& d) {
    std::vector<CapClass> out;
    for (const auto& a : d.actions) {
        if (const auto* c = std::get_if<CapClass>(&a)) {
            out.push_back(*c);
        }
    }
    return out;
}

// roomy()'s guard: 16e9 − 6 GiB − 5 % of 16e9, page-aligned down.
constexpr Bytes kRoomyGuard = 8'757'547'008;
// 1 % of 16e9, page-aligned down.
constexpr Bytes kStep = 159'997'952;

TEST(CorePressureGuard, CapFollowsTheOtherClasses) {
    PressureState st;
    auto out = decide(roomy(calm(0)), {}, defaultClasses(), st);
    auto c = caps(out.decisions);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].className, "reclaimed");
    EXPECT_EQ(c[0].memoryHigh, kRoomyGuard);
    EXPECT_EQ(c[0].why, CapClass::Why::Guard);
    EXPECT_EQ(c[0].guard.memTotal, kTotal);
    EXPECT_EQ(c[0].guard.others, 6_GiB);
    EXPECT_EQ(c[0].guard.cap, kRoomyGuard);
    EXPECT_FALSE(c[0].guard.floored);
    EXPECT_EQ(out.state.classHigh.at("reclaimed"), kRoomyGuard);

    // Less than a step of change: nothing is written.
    Snapshot s = roomy(calm(1));
    s.classes[1].cgroup->memoryCurrent = 4_GiB + 100_MiB;
    out = decide(s, {}, defaultClasses(), out.state);
    EXPECT_TRUE(caps(out.decisions).empty());

    // The shared class grows by 1 GiB: the cap falls by as much.
    s.classes[1].cgroup->memoryCurrent = 5_GiB;
    out = decide(s, {}, defaultClasses(), out.state);
    c = caps(out.decisions);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].memoryHigh, kRoomyGuard - 1_GiB);

    // NodeReserved is left out too.
    s.nodeReserved = 1_GiB;
    out = decide(s, {}, defaultClasses(), out.state);
    c = caps(out.decisions);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].memoryHigh, kRoomyGuard - 2_GiB);
}

TEST(CorePressureGuard, CountsMemoryOutsideTheClassSlices) {
    // An assigned unit stays in system.slice, a libvirt VM in machine.slice:
    // their memory is in no class slice, but it is in use. The class slices
    // hold 8 GiB (reclaimed 2 GiB of them) and MemAvailable is 4 GiB: the
    // others use 16e9 − 4 GiB − 2 GiB, not the 6 GiB of the other slices.
    Snapshot s = roomy(calm(0));
    s.system.mem.memAvailable = 4_GiB;
    const Bytes others = kTotal - 4_GiB - 2_GiB;
    auto out = decide(s, {}, defaultClasses(), {});
    auto c = caps(out.decisions);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].guard.others, 6_GiB) << "the other class slices";
    EXPECT_EQ(c[0].guard.hostOwn, others - 6_GiB) << "in use outside them";
    // 16e9 − others − 5 % of 16e9 = 6 GiB − 8e8, page-aligned down.
    EXPECT_EQ(c[0].memoryHigh, 5'642'448'896U);
    // The same claim as ReclaimedAllocatable's: one formula.
    EXPECT_EQ(c[0].guard.left, reclaimedAllocatable(s, defaultClasses(), "reclaimed",
                                                    PressureConfig{}.guardHeadroom));

    // A class's requests count when above its slice's usage (here too).
    s.system.mem.memAvailable = kTotal / 2;
    s.workloads.push_back(sample("big.service", "shared", 5_GiB, 0));
    out = decide(s, {}, defaultClasses(), {});
    c = caps(out.decisions);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].guard.others, 2_GiB + 1_GiB + 5_GiB) << "system 2 GiB + shared's requests";
    EXPECT_EQ(c[0].guard.left, reclaimedAllocatable(s, defaultClasses(), "reclaimed",
                                                    PressureConfig{}.guardHeadroom));
}

// NodeReserved (Ganeti's mem_node) is what the host's own services may
// use, not memory on top of what they use: the host claims the larger of
// the two. Summed (before issue 23's fix), a 1 GiB reservation on a 2 GiB
// host with 724 MiB in use outside the classes left the reclaimed class
// 98 MiB on an idle host; now it has 822 MiB.
TEST(CorePressureGuard, HostClaimsTheLargerOfNodeReservedAndItsOwnUse) {
    Snapshot s = calm(0);
    s.system.mem.memTotal = 2_GiB;
    s.system.mem.memAvailable = 1_GiB;
    s.classes = {classSample("system", 100_MiB), classSample("shared", 0),
                 classSample("reclaimed", 200_MiB)};
    s.workloads.clear();
    s.nodeReserved = 1_GiB;
    auto c = caps(decide(s, {}, defaultClasses(), {}).decisions);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].guard.others, 100_MiB);
    EXPECT_EQ(c[0].guard.hostOwn, 2_GiB - 1_GiB - 200_MiB - 100_MiB); // 724 MiB
    EXPECT_EQ(c[0].guard.reserved, 1_GiB);
    // 2 GiB − 100 MiB − max(1 GiB, 724 MiB) − 5 %, page-aligned down.
    EXPECT_EQ(c[0].memoryHigh, 861'507'584U);
    EXPECT_FALSE(c[0].guard.floored);
    EXPECT_EQ(c[0].guard.left, reclaimedAllocatable(s, defaultClasses(), "reclaimed",
                                                    PressureConfig{}.guardHeadroom));

    // The host uses more than it reserved: its use counts, not both.
    s.nodeReserved = 256_MiB;
    c = caps(decide(s, {}, defaultClasses(), {}).decisions);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].memoryHigh, 1'176'080'384U); // 2 GiB − 100 MiB − 724 MiB − 5 %
}

// An unplaced VM (observed only, no class) in machine.slice: memqos frees
// none of its memory, so its usage counts in the guard's "others" like a
// protected class's; one inside a class slice is in that slice's usage
// already and is not counted twice.
TEST(CorePressureGuard, UnplacedVmsOutsideTheClassSlicesCountAsOthers) {
    Snapshot s = roomy(calm(0));
    s.workloads.push_back(WorkloadSample{
        .workload = {.id = "vm:web", .kind = WorkloadKind::Vm},
        .cgroup = CgroupSample{.path = "machine.slice/machine-qemu\\x2d1\\x2dweb.scope",
                               .memoryCurrent = 1_GiB},
        .neverKill = true,
        .unplaced = true,
    });
    s.workloads.push_back(WorkloadSample{
        .workload = {.id = "vm:inside", .kind = WorkloadKind::Vm},
        .cgroup = CgroupSample{.path = "memqos.slice/memqos-shared.slice/machine-x.scope",
                               .memoryCurrent = 512_MiB},
        .neverKill = true,
        .unplaced = true,
    });
    // Not running: nothing to count.
    s.workloads.push_back(WorkloadSample{.workload = {.id = "vm:off", .kind = WorkloadKind::Vm},
                                         .neverKill = true,
                                         .unplaced = true});
    const auto out = decide(s, {}, defaultClasses(), {});
    const auto c = caps(out.decisions);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].guard.others, 6_GiB + 1_GiB);
    EXPECT_EQ(c[0].memoryHigh, kRoomyGuard - 1_GiB);
}

// An unplaced VM is never a victim, even as the biggest at level 3, and
// even when a snapshot gives it a killable class by mistake.
TEST(CorePressure, UnplacedVmIsNoKillCandidate) {
    Snapshot s = psi(0, 60, 50);
    WorkloadSample vm = sample("vm:web", "reclaimed", 0, 8_GiB, 1_GiB);
    vm.workload.className.clear();
    vm.unplaced = true;
    s.workloads.push_back(vm);
    WorkloadSample classed = sample("vm:odd", "reclaimed", 0, 9_GiB, 1_GiB);
    classed.unplaced = true;
    s.workloads.push_back(classed);
    Snapshot later = s;
    later.now = at(10);
    const auto out = run({s, later});
    const auto& kill = std::get<KillWorkload>(out.decisions.actions.back());
    EXPECT_EQ(kill.victim.id, "batch.service");
    for (const auto& c : out.decisions.consideredVictims) {
        EXPECT_NE(c.id, "vm:web");
        EXPECT_NE(c.id, "vm:odd");
    }
}

TEST(CorePressureGuard, FloorWhenTheOthersUseEverything) {
    const auto out = decide(calm(0), {}, defaultClasses(), {});
    const auto c = caps(out.decisions);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].memoryHigh, kFloorCap);
    EXPECT_TRUE(c[0].guard.floored);
    EXPECT_EQ(c[0].guard.floor, 320'000'000U);
}

TEST(CorePressureGuard, ThrottleStepsDownThenRestoreStepsUp) {
    PressureState st;
    auto step = [&](Snapshot s) {
        auto out = decide(s, {}, defaultClasses(), st);
        st = out.state;
        return caps(out.decisions);
    };
    step(roomy(psi(0, 30, 6)));
    auto c = step(roomy(psi(5, 30, 6)));
    ASSERT_EQ(st.level, 2U);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].why, CapClass::Why::Throttle);
    EXPECT_EQ(c[0].memoryHigh, 2'040'107'008U);

    // Usage follows the cap down: the next cut is under the new usage.
    Snapshot lower = roomy(psi(6, 30, 6));
    lower.classes[2].cgroup->memoryCurrent = 1_GiB;
    c = step(lower);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].why, CapClass::Why::Throttle);
    EXPECT_EQ(c[0].memoryHigh, 1'020'051'456U);

    // Usage rising again does not lift the cap while at level 2.
    c = step(roomy(psi(7, 30, 6)));
    EXPECT_TRUE(c.empty());

    // Recovery to level 1 (10 s calm): the cap climbs back by time, 10 % of
    // MemTotal a second (1.6e9 bytes, page-aligned) since it was last held,
    // not by a step per tick; then reaches the guard's.
    for (std::int64_t t = 8; t < 18; ++t) {
        EXPECT_TRUE(step(roomy(calm(t))).empty()) << "still level 2 at t=" << t;
    }
    constexpr Bytes kPerSecond = 1'600'000'000;
    Bytes expect = 1'020'051'456U + kPerSecond;
    c = step(roomy(calm(18)));
    ASSERT_EQ(st.level, 1U);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].why, CapClass::Why::Restore);
    EXPECT_EQ(c[0].memoryHigh, expect);
    // A trigger-driven tick 0.5 s later climbs half as far (page-aligned).
    Snapshot early = roomy(calm(18));
    early.now += std::chrono::milliseconds(500);
    expect += 799'997'952U;
    c = step(early);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].memoryHigh, expect);
    expect += 2'399'997'952U; // 1.5 s
    c = step(roomy(calm(20)));
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].memoryHigh, expect);
    c = step(roomy(calm(21)));
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].memoryHigh, expect + kPerSecond);
    c = step(roomy(calm(22)));
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].memoryHigh, kRoomyGuard) << "never above the guard's";
    EXPECT_TRUE(step(roomy(calm(23))).empty());
    EXPECT_EQ(st.level, 1U);
}

TEST(CorePressureGuard, LevelZeroGivesTheCapBackAtOnce) {
    PressureState st;
    st.classHigh["reclaimed"] = 500_MiB; // left by an earlier throttle
    st.classHighAt["reclaimed"] = at(0);
    const auto out = decide(roomy(calm(1)), {}, defaultClasses(), st);
    const auto c = caps(out.decisions);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].why, CapClass::Why::Restore);
    EXPECT_EQ(c[0].memoryHigh, kRoomyGuard);
    EXPECT_EQ(c[0].previous, 500_MiB);
}

// calm() with the reclaimed class's own PSI "full" total at `fullUsec`,
// held at its cap: memory.high 2 GiB, its usage.
Snapshot stalled(std::int64_t seconds, std::uint64_t fullUsec) {
    Snapshot s = calm(seconds);
    s.classes[2].cgroup->pressure = Pressure{
        .some = {.totalUsec = fullUsec}, .full = PressureLine{.totalUsec = fullUsec}};
    s.classes[2].cgroup->memoryHigh = 2_GiB;
    return s;
}

Pressure fullFor(std::uint64_t usec) {
    return Pressure{.some = {.totalUsec = usec}, .full = PressureLine{.totalUsec = usec}};
}

// A reclaimed class that stalls `percent` of each second from t = 0 on, held
// at its cap. `hurt`: the protected system class stalls as long (evidence
// that the host is hurt); `stalling`: the workloads whose own
// memory.pressure stalls as long (the others' stays at 0).
struct Staller {
    std::uint64_t total = 0;
    std::int64_t last = 0;
    bool hurt = true;
    std::vector<std::string> stalling{"batch.service"};
    Snapshot at(std::int64_t t, double percent) {
        total += static_cast<std::uint64_t>(percent / 100.0 * 1e6 * static_cast<double>(t - last));
        last = t;
        Snapshot s = stalled(t, total);
        if (hurt) {
            s.classes[0].cgroup->pressure = fullFor(total);
        }
        for (auto& w : s.workloads) {
            const bool stalls =
                std::find(stalling.begin(), stalling.end(), w.workload.id) != stalling.end();
            w.cgroup->pressure = fullFor(stalls ? total : 0);
        }
        return s;
    }
};

std::vector<std::string> kills(const Decisions& d) {
    std::vector<std::string> out;
    for (const auto& a : d.actions) {
        if (const auto* k = std::get_if<KillWorkload>(&a)) {
            out.push_back(k->victim.id);
        }
    }
    return out;
}

// The guard's floor is the cap in force from the first tick (calm()'s other
// classes use more than MemTotal), so the class is held at its own cap.
TEST(CorePressureGuard, StalledGuardedClassLosesTheWorkloadThatStalls) {
    PressureState st;
    Staller cls;
    std::vector<std::string> seen;
    for (std::int64_t t = 0; t <= 18; ++t) {
        auto out = decide(cls.at(t, 50), {}, defaultClasses(), st);
        st = out.state;
        EXPECT_EQ(st.level, 0U) << "the host-wide ladder is calm";
        for (const auto& k : kills(out.decisions)) {
            seen.push_back(std::to_string(t) + " " + k);
        }
        if (t == 2) {
            EXPECT_TRUE(out.decisions.reasons.empty());
            ASSERT_FALSE(out.decisions.actions.empty());
            const auto* k = std::get_if<KillWorkload>(&out.decisions.actions.back());
            ASSERT_NE(k, nullptr);
            EXPECT_EQ(k->reason, (KillReason{StallKill{.share = 50,
                                                       .threshold = 20,
                                                       .duration = std::chrono::seconds(1),
                                                       .classUsage = 2_GiB,
                                                       .classCap = 2_GiB,
                                                       .host = {.memShort = std::nullopt,
                                                                .stalling = "class:system",
                                                                .stallingShare = 50}}}));
            EXPECT_EQ(k->numbers.back(), (std::pair<std::string, std::uint64_t>{
                                             "workload_full_stall_permyriad", 5000}));
        }
    }
    // t=0 opens the windows, t=1 ends them at 50 % (stall from here), t=2
    // has 1 s of it: kill; then one kill per 15 s cooldown.
    EXPECT_EQ(seen, (std::vector<std::string>{"2 batch.service", "17 batch.service"}));
}

// The review of 2026-11-27 (C1): a workload held at memqos's own cap on a
// calm host stalls on that cap alone, which harms nobody else; it was killed
// every cooldown.
TEST(CorePressureGuard, HeldAtItsCapOnACalmHostIsNoKill) {
    PressureState st;
    Staller cls;
    cls.hurt = false;
    for (std::int64_t t = 0; t < 40; ++t) {
        const auto out = decide(cls.at(t, 90), {}, defaultClasses(), st);
        st = out.state;
        EXPECT_TRUE(kills(out.decisions).empty()) << "t=" << t;
    }
    EXPECT_EQ(st.stallSince.count("reclaimed"), 1U) << "the class does stall at its cap";
}

// MemAvailable at or below level 1's threshold is evidence too.
TEST(CorePressureGuard, ShortOfMemoryIsEvidence) {
    PressureState st;
    Staller cls;
    cls.hurt = false;
    std::vector<std::string> seen;
    for (std::int64_t t = 0; t <= 3; ++t) {
        Snapshot s = cls.at(t, 50);
        s.system.mem.memAvailable = kPerMyriad * 1000; // 10 %: level 1 after 2 s
        const auto out = decide(s, {}, defaultClasses(), st);
        st = out.state;
        for (const auto& k : kills(out.decisions)) {
            seen.push_back(std::to_string(t) + " " + k);
        }
    }
    EXPECT_EQ(seen, std::vector<std::string>{"2 batch.service"});
}

// (C1 c) the class's top victim (batch.service, idle) is not the workload
// that stalls (vm:scratch); and a stalling neverKill VM is no reason to kill
// anything.
TEST(CorePressureGuard, OnlyAStallingKillableWorkloadIsAVictim) {
    PressureState st;
    Staller cls;
    cls.stalling = {"vm:scratch"};
    std::vector<std::string> seen;
    for (std::int64_t t = 0; t <= 3; ++t) {
        const auto out = decide(cls.at(t, 50), {}, defaultClasses(), st);
        st = out.state;
        for (const auto& k : kills(out.decisions)) {
            seen.push_back(std::to_string(t) + " " + k);
        }
    }
    EXPECT_EQ(seen, std::vector<std::string>{"2 vm:scratch"});

    PressureState p;
    Staller vm;
    vm.stalling = {"vm:scratch"};
    for (std::int64_t t = 0; t < 40; ++t) {
        Snapshot s = vm.at(t, 90);
        s.workloads[3].neverKill = true;
        ASSERT_EQ(s.workloads[3].workload.id, "vm:scratch");
        const auto out = decide(s, {}, defaultClasses(), p);
        p = out.state;
        EXPECT_TRUE(kills(out.decisions).empty()) << "t=" << t;
    }
}

// (C1 a, b) under a cap memqos is still lowering (level 2) or giving back
// (level 1), the stall is memqos's own doing: no kill, even with evidence.
TEST(CorePressureGuard, ThrottleOrRestoreInProgressIsNoStallKill) {
    PressureState st;
    Staller cls;
    // Level 2 by PSI, held; the guard is roomy so the throttle cuts under it.
    for (std::int64_t t = 0; t < 30; ++t) {
        Snapshot s = roomy(cls.at(t, t <= 5 ? 0 : 90)); // the stall starts at level 2
        s.classes[2].cgroup->pressure = fullFor(cls.total);
        s.classes[2].cgroup->memoryHigh = 2_GiB;
        s.classes[0].cgroup->pressure = fullFor(cls.total);
        s.system.pressure = Pressure{.some = {.avg10 = 30}, .full = PressureLine{.avg10 = 6}};
        const auto out = decide(s, {}, defaultClasses(), st);
        st = out.state;
        EXPECT_TRUE(kills(out.decisions).empty()) << "t=" << t;
    }
    ASSERT_EQ(st.level, 2U);
    // Level 1 (some 15 %): the cap climbs back; no kill while it does.
    bool restored = false;
    std::vector<std::string> seen;
    for (std::int64_t t = 30; t < 60; ++t) {
        Snapshot s = roomy(cls.at(t, 90));
        s.classes[2].cgroup->pressure = fullFor(cls.total);
        s.classes[2].cgroup->memoryHigh = 2_GiB;
        s.classes[0].cgroup->pressure = fullFor(cls.total);
        s.system.pressure = Pressure{.some = {.avg10 = 15}, .full = PressureLine{}};
        const auto out = decide(s, {}, defaultClasses(), st);
        st = out.state;
        if (st.level == 1 && st.classHigh.at("reclaimed") + kStep >= kRoomyGuard) {
            restored = true;
        }
        if (!restored) {
            EXPECT_TRUE(kills(out.decisions).empty()) << "t=" << t;
        }
        for (const auto& k : kills(out.decisions)) {
            seen.push_back(k);
        }
    }
    EXPECT_TRUE(restored);
    EXPECT_EQ(seen, std::vector<std::string>{"batch.service"}) << "at the guard's own cap";
}

// The VM case 55-precision (2026-11-27): after a level-3 kill the class's
// usage fell to what the survivors used, and the throttle cut the cap to
// 95 % of that, so a batch started after the kill could not get going.
TEST(CorePressureGuard, TheThrottleHoldsAfterAKill) {
    PressureState st;
    auto step = [&](const Snapshot& s) {
        auto out = decide(s, {}, defaultClasses(), st);
        st = out.state;
        return out.decisions;
    };
    step(roomy(psi(0, 60, 50)));
    const auto killed = step(roomy(psi(10, 60, 50)));
    ASSERT_EQ(st.level, 3U);
    ASSERT_EQ(kills(killed).size(), 1U);
    const Bytes held = st.classHigh.at("reclaimed");
    Snapshot after = roomy(psi(11, 60, 50));
    after.classes[2].cgroup->memoryCurrent = 300_MiB; // the victim's memory is free
    EXPECT_TRUE(caps(step(after)).empty()) << "cut under the survivors";
    EXPECT_EQ(st.classHigh.at("reclaimed"), held);
    // After the cooldown the throttle goes on (another kill came with it).
    after.now = at(25);
    const auto later = step(after);
    ASSERT_EQ(caps(later).size(), 1U);
    EXPECT_LT(caps(later)[0].memoryHigh, held);
}

TEST(CorePressureGuard, StallMustLastAndClassMustBeKillable) {
    PressureState st;
    Staller cls;
    const auto killsAt = [&](std::int64_t t, double percent) {
        const auto out = decide(cls.at(t, percent), {}, defaultClasses(), st);
        st = out.state;
        return kills(out.decisions);
    };
    EXPECT_TRUE(killsAt(0, 50).empty());
    EXPECT_TRUE(killsAt(1, 50).empty()); // stall from t=1
    EXPECT_TRUE(killsAt(2, 10).empty()); // below 20 %: resets
    EXPECT_TRUE(killsAt(3, 50).empty()); // stall from t=3
    EXPECT_EQ(killsAt(4, 50), std::vector<std::string>{"batch.service"});

    auto protectedClasses = defaultClasses();
    protectedClasses[3].killable = false;
    ASSERT_EQ(protectedClasses[3].name, "reclaimed");
    PressureState p;
    Staller other;
    for (std::int64_t t = 0; t < 30; ++t) {
        const auto out = decide(other.at(t, 90), {}, protectedClasses, p);
        p = out.state;
        EXPECT_TRUE(kills(out.decisions).empty()) << "t=" << t;
    }
}

TEST(CorePressureGuard, AtCapIsWithinTheSlackOfMemoryHigh) {
    CgroupSample s{.memoryCurrent = 1_GiB};
    EXPECT_FALSE(atCap(s)) << "no memory.high";
    s.memoryHigh = kNoLimit;
    EXPECT_FALSE(atCap(s)) << "memory.high max";
    s.memoryHigh = 1_GiB + 32_MiB; // slack 1/32 = 33.0 MiB
    EXPECT_TRUE(atCap(s));
    s.memoryHigh = 1_GiB + 34_MiB;
    EXPECT_FALSE(atCap(s));
    s.memoryHigh = 1_GiB - 100_MiB; // throttled below its usage
    EXPECT_TRUE(atCap(s));
    s = CgroupSample{.memoryCurrent = 90_MiB, .memoryHigh = 100_MiB}; // slack 16 MiB
    EXPECT_TRUE(atCap(s));
    s.memoryCurrent = 83_MiB;
    EXPECT_FALSE(atCap(s));
    s = CgroupSample{.memoryCurrent = 0, .memoryHigh = 8_MiB}; // slack capped at the cap
    EXPECT_TRUE(atCap(s));
}

// The CI case of 2026-11-26: a reclaimed workload reading back 500 MiB that
// proactive reclaim had swapped out stalled fully 27 % of the time, 130 MiB
// below its class's cap, and was killed as "stalled at its cap". The stall
// must meet the cap at every tick of it.
TEST(CorePressureGuard, StallBelowTheCapIsNoKill) {
    PressureState st;
    Staller cls;
    const auto killsAt = [&](std::int64_t t, double percent, Bytes usage) {
        Snapshot s = cls.at(t, percent);
        s.classes[2].cgroup->memoryCurrent = usage;
        s.classes[2].cgroup->memoryHigh = 733_MiB;
        const auto out = decide(s, {}, defaultClasses(), st);
        st = out.state;
        return kills(out.decisions);
    };
    for (std::int64_t t = 0; t < 20; ++t) {
        EXPECT_TRUE(killsAt(t, 90, 601_MiB).empty()) << "t=" << t;
    }
    EXPECT_EQ(st.stallSince.count("reclaimed"), 0U);
    // At the cap from t=20 (the window's share is 90 % already): 1 s of it.
    EXPECT_TRUE(killsAt(20, 90, 720_MiB).empty());
    EXPECT_TRUE(killsAt(21, 90, 601_MiB).empty()) << "left the cap: starts again";
    EXPECT_TRUE(killsAt(22, 90, 725_MiB).empty());
    EXPECT_EQ(killsAt(23, 90, 725_MiB), std::vector<std::string>{"batch.service"});
}

TEST(CorePressureGuard, StallShareNeedsAFullWindowAndSurvivesACounterReset) {
    PressureState st;
    const auto step = [&](const Snapshot& s) {
        const auto out = decide(s, {}, defaultClasses(), st);
        st = out.state;
        return kills(out.decisions);
    };
    step(stalled(0, 0));
    step(stalled(1, 900'000)); // 90 % over [0, 1]
    EXPECT_DOUBLE_EQ(st.stallWindow.at("reclaimed").share, 90.0);
    // The slice is created anew: its total starts again from 0. No share
    // until a new window is complete, and no kill from the old one.
    EXPECT_TRUE(step(stalled(2, 1000)).empty());
    EXPECT_DOUBLE_EQ(st.stallWindow.at("reclaimed").share, 0.0);
    EXPECT_EQ(st.stallSince.count("reclaimed"), 0U);
    // A tick within the window (PSI triggers tick early) keeps the last share.
    Snapshot early = stalled(2, 400'000);
    early.now += std::chrono::milliseconds(500);
    step(early);
    EXPECT_DOUBLE_EQ(st.stallWindow.at("reclaimed").share, 0.0);
    step(stalled(3, 801'000)); // 80 % over [2, 3]
    EXPECT_DOUBLE_EQ(st.stallWindow.at("reclaimed").share, 80.0);
    // Off: no window kept, never a kill.
    PressureConfig off;
    off.classStallFull.reset();
    const auto out = decide(stalled(10, 9'000'000), off, defaultClasses(), st);
    EXPECT_TRUE(kills(out.decisions).empty());
    EXPECT_EQ(out.state.stallWindow.count("reclaimed"), 0U);
}


TEST(CorePressure, ClassWithoutSampleIsSkipped) {
    Snapshot a = psi(0, 30, 6);
    a.classes = {classSample("shared", 4_GiB)};
    Snapshot b = a;
    b.now = at(5);
    const auto out = run({a, b});
    EXPECT_EQ(describe(out.decisions),
              (Strings{"level 2", "admission closed", "shrink reclaimed"}));
}

TEST(CorePressure, KillCarriesVictimsAndNumbers) {
    const auto out = run({psi(0, 60, 50), psi(10, 60, 50)});
    ASSERT_EQ(out.state.lastKill, at(10));
    const auto& kill = std::get<KillWorkload>(out.decisions.actions.back());
    EXPECT_EQ(kill.victim.id, "batch.service");
    EXPECT_EQ(kill.reason,
              (KillReason{LadderKill{
                  .level = 3,
                  .signals = {PsiSignal{.full = true, .avg10 = 50, .threshold = 20}},
                  .readings = {.someAvg10 = 60,
                               .fullAvg10 = 50,
                               .memAvailable = kTotal / 2,
                               .memTotal = kTotal}}}));
    const Numbers expected{
        {"pressure_level", 3},
        {"class_rank", 0},
        {"usage", 1_GiB},
        {"request", 0},
        {"excess", 1_GiB + 100_MiB}, // usage + swap − request
        {"swap_usage", 100_MiB},
        {"memory_total", kTotal},
        {"memory_available", kTotal / 2},
        {"swap_total", 0},
        {"swap_used", 0},
        {"swap_trigger", 0},
        {"psi_some_avg10_permyriad", 6000},
        {"psi_full_avg10_permyriad", 5000},
    };
    EXPECT_EQ(kill.numbers, expected);
    Strings considered;
    for (const auto& c : out.decisions.consideredVictims) {
        considered.push_back(c.id);
    }
    EXPECT_EQ(considered, (Strings{"batch.service", "vm:scratch", "web.service"}));
    // The kill is an action with its reason, not repeated as a note.
    EXPECT_EQ(out.decisions.reasons.size(), 2U);
}

TEST(CorePressure, CooldownAndNoCandidateReasons) {
    const auto cooling = run({psi(0, 60, 50), psi(10, 60, 50), psi(12, 60, 50)});
    EXPECT_EQ(cooling.decisions.reasons,
              (std::vector<Note>{KillCooldown{.left = std::chrono::seconds(13)}}));
    EXPECT_EQ(cooling.state.lastKill, at(10));
    const auto none = run({onlyProtected(0), onlyProtected(10)});
    EXPECT_EQ(none.decisions.reasons.back(), Note{NoKillCandidate{}});
    EXPECT_FALSE(none.state.lastKill.has_value());
    EXPECT_TRUE(none.decisions.consideredVictims.empty());
}

TEST(CorePressure, ConsideredVictimsAreTopTen) {
    Snapshot s = psi(0, 60, 50);
    s.workloads.clear();
    for (int i = 0; i < 12; ++i) {
        s.workloads.push_back(sample("w" + std::to_string(10 + i) + ".service", "reclaimed", 0,
                                     static_cast<Bytes>(i + 1) * 1_MiB));
    }
    Snapshot later = s;
    later.now = at(10);
    const auto out = run({s, later});
    ASSERT_EQ(out.decisions.consideredVictims.size(), kConsideredVictims);
    EXPECT_EQ(out.decisions.consideredVictims.front().id, "w21.service"); // largest excess
    EXPECT_EQ(out.decisions.consideredVictims.back().id, "w12.service");
}

TEST(CorePressure, StateTracksSinceTimes) {
    const auto first = run({psi(0, 30, 6)});
    EXPECT_EQ(first.state.aboveSince[0], at(0));
    EXPECT_EQ(first.state.aboveSince[1], at(0));
    EXPECT_EQ(first.state.aboveSince[2], std::nullopt);
    const auto dropped = run({psi(0, 30, 6), psi(1, 12, 0)});
    EXPECT_EQ(dropped.state.aboveSince[0], at(0));
    EXPECT_EQ(dropped.state.aboveSince[1], std::nullopt);
    EXPECT_EQ(dropped.state.level, 0U);
}

TEST(CorePressure, Deterministic) {
    PressureState state;
    state.aboveSince = {at(0), at(0), at(0)};
    const Snapshot s = swapped(10, 100);
    const auto a = decide(s, {}, defaultClasses(), state);
    const auto b = decide(s, {}, defaultClasses(), state);
    EXPECT_EQ(a.state, b.state);
    EXPECT_EQ(a.decisions.actions, b.decisions.actions);
    EXPECT_EQ(a.decisions.reasons, b.decisions.reasons);
    EXPECT_EQ(a.decisions.consideredVictims, b.decisions.consideredVictims);
}

TEST(CorePressure, ZeroDurationsAndRecovery) {
    PressureConfig cfg;
    for (auto& l : cfg.levels) {
        l.duration = Usec{0};
    }
    cfg.recoveryDuration = Usec{0};
    auto out = run({psi(0, 15, 0)}, cfg);
    EXPECT_EQ(out.state.level, 1U);
    // One level down per tick even with no recovery time.
    out = run({psi(0, 60, 50), calm(1)}, cfg);
    EXPECT_EQ(out.state.level, 2U);
    out = decide(calm(2), cfg, defaultClasses(), out.state);
    EXPECT_EQ(out.state.level, 1U);
}

TEST(CorePressure, FullLineMissingMeansFullSignalOff) {
    Snapshot a = psi(0, 0, 0);
    a.system.pressure->full.reset();
    Snapshot b = a;
    b.now = at(30);
    EXPECT_EQ(run({a, b}).state.level, 0U);
}

TEST(CorePressure, ClockGoingBackwardsIsHarmless) {
    const auto out = run({psi(10, 60, 50), psi(5, 60, 50)});
    EXPECT_EQ(out.state.level, 0U);
}

// Issue 24 item 4: a cap on a class that lost its guard, or left the
// configuration, is given back; a guarded class keeps its cap.
TEST(CapsToGiveBack, ClassesWithoutTheGuardOrGone) {
    auto classes = defaultClasses();
    ASSERT_TRUE(findClass(classes, "reclaimed")->memoryGuard);
    const std::vector<std::string> capped = {"reclaimed", "gold"};
    EXPECT_EQ(capsToGiveBack(capped, classes), std::vector<std::string>{"gold"});
    for (auto& c : classes) {
        c.memoryGuard = false;
    }
    EXPECT_EQ(capsToGiveBack(capped, classes), capped);
    EXPECT_TRUE(capsToGiveBack({}, classes).empty());
}

} // namespace
} // namespace memqos::core

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The pressure ladder (doc/DESIGN.md §4.2) as a pure function of a Snapshot, the
// config and the previous state. The thresholds and their meaning are in
// pressure_config.hpp; this header adds what that comment leaves open.
//
// Signals, each evaluated per level L = 1..3 with levels[L-1]'s thresholds:
//   some avg10 ≥ someAvg10, full avg10 ≥ fullAvg10
//       system memory PSI; off when the snapshot has no PSI (or no "full"
//       line), so a kernel without PSI decides on MemAvailable alone.
//   MemAvailable/MemTotal ≤ memAvailableBelow (exact, in permyriad); off
//       when MemTotal is 0.
//   watermarks (L = 2: free < low, L = 3: free < min) in any zone with
//       managed pages, when `watermarks` is on.
//   swap trigger (L = 3): swap used/total ≥ swapUsedKill while MemAvailable
//       is at or below level 3's memAvailableBelow; off when either
//       threshold is off or there is no swap.
// A level's condition is "any signal of this level OR A HIGHER ONE is on":
// pressure bad enough for level 3 also justifies levels 1 and 2, so a
// level-3-only signal (watermark min, swap trigger) climbs through them.
// The condition "holds" with hysteresis h when a signal is at or past
// threshold·(1 − h) (percentages, swap) or at or below threshold/(1 − h)
// (MemAvailable, watermarks); hysteresis must be below 100 %.
//
// Entry: aboveSince[L-1] is when level L's condition started holding
// (without hysteresis), reset when it stops. The new level is the highest L
// whose condition has held for ≥ levels[L-1].duration, if above the current
// one: several levels may be skipped at once.
// Exit: when the current level's condition with hysteresis has been false
// for ≥ recoveryDuration (belowSince), one level down; the next step down
// needs another recoveryDuration.
// Actions, every tick at the resulting level:
//   level change → SetPressureLevel; admission change → SetAdmission
//   ≥ 1: ReclaimClass for every class with memoryGuard or reclaim and a
//        sample: 1 % of its memory.current, page-aligned (skipped if 0)
//   (ReclaimClass: only killable memoryGuard classes, the guarded best-
//        effort class; none in a tick that decides a kill)
//   every tick, for each memoryGuard class with a sample (doc/DESIGN.md §4.5):
//        guard = MemTotal − claimOfOthers().total() (proactive.hpp: the
//                other classes' max(requests, usage) plus the unplaced
//                workloads outside the class slices, plus the larger of
//                nodeReserved and the memory in use outside all that) −
//                guardHeadroom·MemTotal, at least
//                kGuardFloor of MemTotal (page-aligned);
//        at level ≥ 2 the target is min(previous cap, guard, 95 % of the
//        class's memory.current) ("Throttle": lowered as usage follows),
//        except within killCooldown of a kill, when the cap holds (the
//        survivors are not squeezed for what the victim did);
//        below level 2, a cap more than a step under the guard's climbs
//        back ("Restore", see cap restore below); otherwise the target is
//        the guard's ("Guard"); step = kGuardStep of MemTotal, page-aligned.
//        CapClass is decided when there is no previous cap or the target
//        moved by a step or more; classHigh then holds the target.
//        ShrinkBalloons for each memoryGuard class at level ≥ 2.
//   3:   while level 3's condition is on now (not only held by
//        hysteresis: PSI avg10 lags a kill's relief by seconds):
//        consideredVictims = top 10 of rankVictims (by swap when the swap
//        trigger is on); KillWorkload of the first unless a kill happened
//        less than killCooldown ago; a note instead when there is no
//        candidate or the cooldown runs.
//   class stall (levels 0 and 1): a killable memoryGuard class whose own
//        slice's "full" stall share (Δ full total / Δ wall time over a
//        window of at least kClassStallWindow, stallWindow) is at or past
//        ClassStallFull in every window for ClassStallDuration (stallSince),
//        while its slice is at its cap (atCap below) AND that cap is the
//        guard's own (the decided cap is within a step of the guard's: no
//        throttle and no restore in progress) at every tick of it, is a hog
//        held at its cap. A task throttled at memory.high sleeps in memory
//        stall, so that alone is no harm: the rule kills only with evidence
//        that the host is hurt (hostHurt below), and only a workload of that
//        class that stalls itself (its own memory.pressure "full" share,
//        workloadStall, at or past ClassStallFull; the daemon reads it while
//        the class stalls) and may be killed (rankVictims: never neverKill,
//        never a protected class), the first of them in rank order; same
//        cooldown. No stalling candidate: no kill. A stall below the cap (a
//        workload reading back what was swapped out) or under a cap memqos
//        is still lowering or giving back is not this rule's.
//   hostHurt: MemAvailable/MemTotal at or below level 1's memAvailableBelow,
//        or a protected cgroup stalls: the "full" share of a non-killable
//        class's slice or of a Snapshot::protectedCgroups entry (system.slice,
//        machine.slice) at or past ClassStallFull over its last window. The
//        host-wide PSI is no evidence: it counts the throttled task's own
//        stall.
//   cap restore: below level 2 a cap under the guard's climbs back by
//        kRestoreRate of MemTotal per second since it was last moved or held
//        by a throttle (classHighAt; at least a step); at level 0 it goes
//        straight back to the guard's.
// A decided kill sets lastKill = now; the daemon puts the previous value
// back when a real kill did not happen (cgroup.kill failed, the victim had
// ended; under dry run it keeps it, so a would-be kill is logged once per
// cooldown) and marks workloads it must not pick now
// (WorkloadSample::setAside).
// Classes are visited by rank, then name. `now` is snapshot.now only.

#include "memqos/core/decisions.hpp"
#include "memqos/core/model.hpp"
#include "memqos/core/pressure_config.hpp"
#include "memqos/core/snapshot.hpp"
#include "memqos/core/types.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace memqos::core {

inline constexpr std::uint32_t kMaxPressureLevel = 3;
inline constexpr std::size_t kConsideredVictims = 10;
inline constexpr Permyriad kReclaimStep = 100; // 1 % of the class's usage per tick
inline constexpr Permyriad kThrottleCut = 500; // memory.high 5 % under usage
inline constexpr Permyriad kGuardFloor = 200;  // a guarded class keeps ≥ 2 % of MemTotal
inline constexpr Permyriad kGuardStep = 100;   // caps move by ≥ 1 % of MemTotal
inline constexpr Permyriad kRestoreRate = 1000; // a cap climbs back 10 % of MemTotal a second

// The memory guard's cap for class `cls` in `snap` (the "guard" formula
// above), with the numbers behind it. `page`: the page size to align to.
GuardCap guardCap(const Snapshot& snap, const PressureConfig& cfg,
                  const std::vector<ClassPolicy>& classes, const std::string& cls, Bytes page);

// Cross-tick memory of the ladder. A default-constructed state is level 0
// with admission open (the daemon's start state).
struct PressureState {
    std::uint32_t level = 0;
    // aboveSince[i]: since when level i+1's entry condition holds; nullopt
    // while it does not.
    std::array<std::optional<TimePoint>, 3> aboveSince;
    // Since when the current level's condition (with hysteresis) is false.
    std::optional<TimePoint> belowSince;
    std::optional<TimePoint> lastKill;
    bool admissionOpen = true;
    // Why the ladder is at `level` (the last SetPressureLevel reason).
    LevelReason reason;
    // Last decided MemoryHigh of each memoryGuard class slice.
    std::map<std::string, Bytes> classHigh;
    // Per guarded class: the start of the current stall window (time and
    // PSI full total) and the full stall share (percent) of the last
    // complete window.
    struct StallWindow {
        TimePoint at{};
        std::uint64_t fullUsec = 0;
        double share = 0;
        friend bool operator==(const StallWindow&, const StallWindow&) = default;
    };
    std::map<std::string, StallWindow> stallWindow;
    // Since when each guarded class's stall share meets ClassStallFull.
    std::map<std::string, TimePoint> stallSince;
    // When classHigh of each class was last moved, or held at level ≥ 2
    // (the restore's clock).
    std::map<std::string, TimePoint> classHighAt;
    // Stall windows of the workloads whose memory.pressure the snapshot has
    // (by workload id), and of the protected cgroups (by cgroup path).
    std::map<std::string, StallWindow> workloadStall;
    std::map<std::string, StallWindow> protectedStall;

    friend bool operator==(const PressureState&, const PressureState&) = default;
};

struct PressureOutcome {
    Decisions decisions;
    PressureState state;
};

// The shortest window over which a class's stall share is measured.
inline constexpr Usec kClassStallWindow = std::chrono::seconds(1);

// A slice held at its memory.high sits within a reclaim batch of it (the
// kernel reclaims the excess on every charge past it); usage sampled between
// two charges may be a little lower. "At its cap" is memory.current ≥
// memory.high − slack, slack = 1/32 of memory.high, at least 16 MiB. A slice
// without a memory.high is never at its cap.
bool atCap(const CgroupSample& slice);

// The classes of `capped` (those whose slice carries a MemoryHigh that
// memqos set: the guard's cap or a throttle) whose cap must be given back:
// the class is no longer in `classes`, or no longer has memoryGuard.
// decide() never caps those again, so without this the last cap would stay
// on the slice until reboot. In the order of `capped`.
std::vector<std::string> capsToGiveBack(const std::vector<std::string>& capped,
                                        const std::vector<ClassPolicy>& classes);

PressureOutcome decide(const Snapshot& snapshot, const PressureConfig& config,
                       const std::vector<ClassPolicy>& classes, const PressureState& state);

} // namespace memqos::core

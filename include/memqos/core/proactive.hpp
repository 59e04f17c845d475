// SPDX-License-Identifier: Apache-2.0
#pragma once
// Proactive reclaim (doc/DESIGN.md §4.6, senpai / TMO) as a pure function of a
// Snapshot, the [Reclaim] config, the pressure level and the previous state.
//
// For every workload of a class with Reclaim=yes, once per `interval`:
//   stall = Δ(memory.pressure "some" total) / Δ(wall time), in percent;
//   level > 0                 Paused: the ladder's own reclaim takes over;
//   stall ≥ stallTarget       BackedOff: nothing this interval, the step
//                             falls back to its start;
//   usage ≤ request           AtFloor: never below the workload's request;
//   otherwise                 Reclaiming: one ReclaimStep of
//       usage · step · (1 − stall/stallTarget), at most usage − request,
//       page-aligned down; the step (a share of usage) starts at
//       maxStep/kStepStartDivisor and doubles each interval the workload
//       stays below target, up to maxStep.
// Off: the controller or the class's Reclaim is off, or the class has
// Protection=min and minProtected is off. NoPsi: the cgroup has no
// memory.pressure (looked at again every interval). Waiting: the first
// sample (no interval measured yet).
// A workload that vanished (no cgroup sample) keeps its counters and
// measures anew when it is back; one no longer in the snapshot is dropped.
// A "some" total that went backwards (a new cgroup of the same name) starts
// a new measurement.
// The daemon executes the steps (memory.reclaim; EAGAIN is a partial
// success) and adds what was freed to `reclaimed` in the state.

#include "memqos/core/model.hpp"
#include "memqos/core/snapshot.hpp"
#include "memqos/core/types.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::core {

struct ReclaimConfig {
    bool enabled = true;
    Usec interval = std::chrono::seconds(5);
    double stallTarget = 0.1;   // percent of the interval spent stalled ("some")
    Permyriad maxStep = 500;    // at most 5 % of usage per step
    bool minProtected = false;  // also reclaim in classes with Protection=min
    bool operator==(const ReclaimConfig&) const = default;
};

inline constexpr Permyriad kStepStartDivisor = 8;

enum class ReclaimPhase { Off, NoPsi, Waiting, Reclaiming, BackedOff, AtFloor, Paused };
// "off", "no-psi", "waiting", "reclaiming", "backed-off", "at-floor", "paused"
std::string_view toString(ReclaimPhase phase);

// One workload's controller memory.
struct WorkloadReclaim {
    ReclaimPhase phase = ReclaimPhase::Waiting;
    std::optional<TimePoint> lastAt; // start of the interval being measured
    std::uint64_t lastSomeUsec = 0;
    Permyriad step = 0;    // current step as a share of usage (0: not started)
    double stall = 0;      // percent, over the last complete interval
    Bytes reclaimed = 0;   // cumulative, filled in by the daemon
    std::uint64_t steps = 0; // memory.reclaim writes decided (cumulative)
    friend bool operator==(const WorkloadReclaim&, const WorkloadReclaim&) = default;
};

// Write `bytes` (page-aligned, > 0) to memory.reclaim of `cgroup`.
struct ReclaimStep {
    std::string workload;
    std::string cgroup; // relative to the cgroup root
    Bytes bytes = 0;
    friend bool operator==(const ReclaimStep&, const ReclaimStep&) = default;
};

struct ProactiveOutcome {
    std::vector<ReclaimStep> steps;
    std::map<std::string, WorkloadReclaim> state; // by workload id
};

// Whether workloads of class `c` are reclaimed from at all: [Reclaim] is
// enabled, the class has Reclaim=yes, and it is not Protection=min unless
// [Reclaim] MinProtected=yes. nullptr (no such class) is not.
bool reclaimable(const ClassPolicy* c, const ReclaimConfig& config);

// Whether decideProactive looks at this workload's memory.pressure at `now`
// (its interval is over, or it has no measurement yet): the daemon reads the
// file only for those, and decideProactive ignores the pressure of others.
bool proactiveDue(const WorkloadReclaim& r, TimePoint now, const ReclaimConfig& config);

ProactiveOutcome decideProactive(const Snapshot& snapshot, const ReclaimConfig& config,
                                 const std::vector<ClassPolicy>& classes,
                                 std::uint32_t pressureLevel,
                                 const std::map<std::string, WorkloadReclaim>& state,
                                 Bytes pageSize = kDefaultPageSize);

// Memory claimed by everything but class `cls`: Σ over every class other
// than `cls` of max(Σ its workloads' requests, its slice's memory.current),
// plus the memory.current of unplaced workloads outside the class slices
// (WorkloadSample::unplaced: observed VMs) — or, when larger, MemTotal − MemAvailable − `cls`'s slice memory.current
// (memory used outside the class slices counts too: assigned units in their
// own slices such as system.slice, libvirt VMs in machine.slice, the host
// itself). The memory guard's "others" (pressure.hpp) and the claim
// reclaimedAllocatable subtracts: one formula for both.
Bytes claimedByOthers(const Snapshot& snapshot, const std::vector<ClassPolicy>& classes,
                      std::string_view cls);

// Memory the reclaimed class may use now without touching the others
// (Katalyst's reclaimed_memory): MemTotal − nodeReserved − guardHeadroom ·
// MemTotal − claimedByOthers(reclaimedClass); never negative.
Bytes reclaimedAllocatable(const Snapshot& snapshot, const std::vector<ClassPolicy>& classes,
                           std::string_view reclaimedClass, Permyriad guardHeadroom);

} // namespace memqos::core

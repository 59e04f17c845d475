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
//   usage ≤ kReclaimFloor     AtFloor: too small to be worth a write;
//   no swap (the host has none, or the class has Swap=no) and the last
//                             step freed less than half of what it asked:
//                             AtFloor, stopped (what is left is anonymous
//                             memory the kernel cannot page out) until the
//                             usage grows by kResumeGrowth over what it was;
//   otherwise                 Reclaiming: one ReclaimStep of
//       usage · step · (1 − stall/stallTarget), at most usage − request,
//       page-aligned down, and at least kMinReclaimPages pages (a smaller
//       write makes the kernel retry and fail with EAGAIN: AtFloor when the
//       spare memory is less than that); the step (a share of usage)
//       starts at maxStep/kStepStartDivisor and doubles each interval the
//       workload stays below target, up to maxStep, and halves (not below
//       the start) when the last step freed less than half of what it
//       asked (with swap: cold anonymous memory goes slowly).
// Phases are spread over the interval (issue 25): a workload's first
// interval is longer by a share of the interval taken from a hash of its
// id (spreadPhases), so a thousand workloads adopted at once are not all
// measured and stepped in the same tick.
// A workload at its floor at level 0 is looked at by its usage alone
// (staysAtFloor): while it stays there its memory.pressure is not read (a
// thousand small services would cost a thousand reads every interval for
// nothing), and its stall keeps the value last measured. Once it leaves the
// floor its stall is measured anew (one interval in Waiting) before a step.
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
    // Spread the workloads' intervals (see above); off only in tests of
    // the step law, where a fixed phase is easier to read. No config key.
    bool spreadPhases = true;
    bool operator==(const ReclaimConfig&) const = default;
};

inline constexpr Permyriad kStepStartDivisor = 8;
// The smallest write: memory.reclaim of a few pages makes the kernel try up
// to MAX_RECLAIM_RETRIES (16) times and fail with EAGAIN.
inline constexpr Bytes kMinReclaimPages = 32;
// A workload using at most this is not reclaimed from.
inline constexpr Bytes kReclaimFloor = Bytes{16} << 20U;
// A workload stopped for want of swap resumes when its usage grew by this
// share of what it was.
inline constexpr Permyriad kResumeGrowth = 1000; // 10 %

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
    Usec firstDelay{0};    // added to the first interval (spreadPhases)
    Bytes asked = 0;       // the last step's bytes (0: no step outstanding)
    Bytes reclaimedBefore = 0; // `reclaimed` when that step was decided
    Bytes stoppedAt = 0;   // usage when stopped for want of swap (0: not)
    bool staleBaseline = false; // lastSomeUsec predates lastAt (pressure not read at the floor)
    std::uint8_t floorLooks = 0; // usage-only looks at the floor in a row (with staleBaseline)
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

// Whether decideProactive looks at this workload at `now` (its interval is
// over, or it has no measurement yet): the daemon reads its files only for
// those, and decideProactive ignores the readings of others. At pressure
// level 0 a workload last seen at its floor by its usage alone (AtFloor,
// staleBaseline) is looked at after kFloorIntervals intervals, not after
// one, and while it stays there after twice as long each time, up to
// kMaxFloorIntervals: most of a host's small services sit there for good
// (issue 25; at 1000 of them and a 5 s interval ~4 reads a second instead
// of ~33). One that grows past its floor is seen within that wait.
inline constexpr std::int64_t kFloorIntervals = 6;     // 30 s at the default 5 s
inline constexpr std::int64_t kMaxFloorIntervals = 48; // 4 min at the default 5 s
// The wait after `floorLooks` usage-only looks in a row, in intervals.
std::int64_t floorIntervals(std::uint8_t floorLooks);
bool proactiveDue(const WorkloadReclaim& r, TimePoint now, const ReclaimConfig& config,
                  std::uint32_t pressureLevel);

// Whether a workload at its floor (AtFloor) stays there with `memoryCurrent`:
// then decideProactive needs no memory.pressure of it at level 0, and the
// daemon reads only memory.current. False for any other phase.
bool staysAtFloor(const WorkloadReclaim& r, Bytes memoryCurrent, Bytes request, Bytes pageSize);

ProactiveOutcome decideProactive(const Snapshot& snapshot, const ReclaimConfig& config,
                                 const std::vector<ClassPolicy>& classes,
                                 std::uint32_t pressureLevel,
                                 const std::map<std::string, WorkloadReclaim>& state,
                                 Bytes pageSize = kDefaultPageSize);

// The same decision made in place, as the daemon makes it every tick
// (issue 25): `state` becomes what decideProactive's `state` would be (the
// entries of workloads not in the snapshot are dropped), without building a
// new map; the steps, and the entries that changed, with what they were.
struct ProactiveChange {
    std::string workload;
    bool fresh = false;            // no entry before
    WorkloadReclaim before;        // the entry before (default when fresh)
};
struct ProactiveUpdate {
    std::vector<ReclaimStep> steps;
    std::vector<ProactiveChange> changed;
};
ProactiveUpdate updateProactive(const Snapshot& snapshot, const ReclaimConfig& config,
                                const std::vector<ClassPolicy>& classes,
                                std::uint32_t pressureLevel,
                                std::map<std::string, WorkloadReclaim>& state,
                                Bytes pageSize = kDefaultPageSize);

// Memory claimed by everything but class `cls` (the memory guard's "others"
// in pressure.hpp and the claim reclaimedAllocatable subtracts: one formula
// for both):
//   classes  Σ over every class other than `cls` of max(Σ its workloads'
//            requests, its slice's memory.current), plus the memory.current
//            of unplaced workloads outside the class slices
//            (WorkloadSample::unplaced: observed VMs);
//   hostOwn  the memory in use outside all that: MemTotal − MemAvailable −
//            `cls`'s slice memory.current − the usage counted in `classes`
//            (assigned units in their own slices such as system.slice,
//            libvirt VMs in machine.slice, the host itself);
//   reserved nodeReserved (Ganeti's mem_node): kept for the host's own use.
// The host claims the larger of reserved and hostOwn, not their sum:
// NodeReserved is what the host's own services may use, not memory on top
// of what they use (summed, a 1 GiB reservation on a 2 GiB host left the
// guarded class at its floor on an idle host; issue 23).
struct OthersClaim {
    Bytes classes = 0;
    Bytes hostOwn = 0;
    Bytes reserved = 0;
    Bytes host() const { return hostOwn > reserved ? hostOwn : reserved; }
    Bytes total() const;
    friend bool operator==(const OthersClaim&, const OthersClaim&) = default;
};
OthersClaim claimOfOthers(const Snapshot& snapshot, const std::vector<ClassPolicy>& classes,
                          std::string_view cls);

// Memory the reclaimed class may use now without touching the others
// (Katalyst's reclaimed_memory): MemTotal − guardHeadroom · MemTotal −
// claimOfOthers(reclaimedClass).total(); never negative.
Bytes reclaimedAllocatable(const Snapshot& snapshot, const std::vector<ClassPolicy>& classes,
                           std::string_view reclaimedClass, Permyriad guardHeadroom);

} // namespace memqos::core

// SPDX-License-Identifier: Apache-2.0
// Proactive reclaim: the senpai / TMO controller (see proactive.hpp).
#include "memqos/core/proactive.hpp"

#include "numeric.hpp"

#include <algorithm>
#include <set>

namespace memqos::core {

using detail::U128;

std::string_view toString(ReclaimPhase phase) {
    switch (phase) {
    case ReclaimPhase::Off:
        return "off";
    case ReclaimPhase::NoPsi:
        return "no-psi";
    case ReclaimPhase::Waiting:
        return "waiting";
    case ReclaimPhase::Reclaiming:
        return "reclaiming";
    case ReclaimPhase::BackedOff:
        return "backed-off";
    case ReclaimPhase::AtFloor:
        return "at-floor";
    case ReclaimPhase::Paused:
        return "paused";
    }
    return "off";
}

bool reclaimable(const ClassPolicy* c, const ReclaimConfig& config) {
    return config.enabled && c != nullptr && c->reclaim &&
           (c->protection != Protection::Min || config.minProtected);
}

namespace {

// Starts a new measurement at `now`.
void baseline(WorkloadReclaim& r, TimePoint now, std::uint64_t some) {
    r.lastAt = now;
    r.lastSomeUsec = some;
}

// A share of the interval from the workload's id (FNV-1a): where in the
// interval its phase lies.
Usec spreadOf(std::string_view id, Usec interval) {
    if (interval.count() <= 0) {
        return Usec{0};
    }
    std::uint64_t h = 14695981039346656037ULL;
    for (const char c : id) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ULL;
    }
    return Usec{static_cast<Usec::rep>(h % static_cast<std::uint64_t>(interval.count()))};
}

} // namespace

namespace {

// Where WorkloadReclaim::floorLooks stops counting: floorIntervals
// reaches kMaxFloorIntervals well before it.
constexpr std::uint8_t kMaxFloorLooks = 16;

// Too little to reclaim from: at or below the request, less than
// kMinReclaimPages above it, or at most kReclaimFloor.
bool belowFloor(Bytes memoryCurrent, Bytes request, Bytes page) {
    return memoryCurrent <= request || memoryCurrent - request < kMinReclaimPages * page ||
           memoryCurrent <= kReclaimFloor;
}

// A workload stopped for want of swap has grown by kResumeGrowth since.
bool grewSinceStop(const WorkloadReclaim& r, Bytes memoryCurrent) {
    return r.stoppedAt > 0 && U128{memoryCurrent} * kPermyriadOne >=
                                  U128{r.stoppedAt} * (kPermyriadOne + kResumeGrowth);
}

} // namespace

bool staysAtFloor(const WorkloadReclaim& r, Bytes memoryCurrent, Bytes request, Bytes pageSize) {
    if (r.phase != ReclaimPhase::AtFloor) {
        return false;
    }
    return belowFloor(memoryCurrent, request, pageSize == 0 ? kDefaultPageSize : pageSize) ||
           (r.stoppedAt > 0 && !grewSinceStop(r, memoryCurrent));
}

std::int64_t floorIntervals(std::uint8_t floorLooks) {
    std::int64_t n = kFloorIntervals;
    for (std::uint8_t i = 1; i < floorLooks && n < kMaxFloorIntervals; ++i) {
        n *= 2;
    }
    return std::min(n, kMaxFloorIntervals);
}

bool proactiveDue(const WorkloadReclaim& r, TimePoint now, const ReclaimConfig& config,
                  std::uint32_t pressureLevel) {
    const bool atFloor =
        pressureLevel == 0 && r.phase == ReclaimPhase::AtFloor && r.staleBaseline;
    const auto wait = atFloor ? config.interval * floorIntervals(r.floorLooks)
                              : config.interval + r.firstDelay;
    return !r.lastAt || now < *r.lastAt || now - *r.lastAt >= wait;
}

namespace {

// What the last step freed decides the next: a step that freed less than
// half of what it asked (the daemon adds what was freed to `reclaimed`).
bool unproductive(const WorkloadReclaim& r) {
    return r.asked > 0 && U128{r.reclaimed - r.reclaimedBefore} * 2 < r.asked;
}

// One workload's turn: `r` (its entry, a copy) updated; a step appended to
// `steps`.
void decideOne(const Snapshot& snapshot, const WorkloadSample& ws, const ReclaimConfig& config,
               const std::vector<ClassPolicy>& classes, std::uint32_t pressureLevel, Bytes page,
               WorkloadReclaim& r, std::vector<ReclaimStep>& steps) {
    const std::string& id = ws.workload.id;
    const Permyriad start = std::max<Permyriad>(1, config.maxStep / kStepStartDivisor);
    if (!reclaimable(findClass(classes, ws.workload.className), config)) {
        r.phase = ReclaimPhase::Off;
        r.floorLooks = 0;
        r.lastAt.reset();
        r.step = 0;
        r.stall = 0;
        return;
    }
    if (!ws.cgroup) {
        // Not running now: measure anew when it is back.
        r.lastAt.reset();
        r.floorLooks = 0;
        r.phase = ReclaimPhase::Waiting;
        return;
    }
    if (!proactiveDue(r, snapshot.now, config, pressureLevel)) {
        return; // the interval is not over (pressure not needed)
    }
    if (ws.reclaimWaits) {
        return; // not read this tick: its turn comes at a later one
    }
    const CgroupSample& cg = *ws.cgroup;
    if (!cg.pressure && pressureLevel == 0 &&
        staysAtFloor(r, cg.memoryCurrent, ws.workload.request, page)) {
        // Still at its floor, looked at by its usage alone.
        r.lastAt = snapshot.now;
        r.staleBaseline = true;
        if (r.floorLooks < kMaxFloorLooks) {
            ++r.floorLooks; // the next look waits twice as long (floorIntervals)
        }
        return;
    }
    if (!cg.pressure) {
        r.phase = ReclaimPhase::NoPsi;
        r.lastAt = snapshot.now; // look again after an interval
        return;
    }
    const std::uint64_t some = cg.pressure->some.totalUsec;
    if (!r.lastAt || r.phase == ReclaimPhase::NoPsi || r.staleBaseline ||
        some < r.lastSomeUsec) {
        // A first or new measurement. One that left its floor starts
        // without a spread: its phase in the interval is its own already.
        const bool leftFloor = r.staleBaseline;
        baseline(r, snapshot.now, some);
        r.staleBaseline = false;
        r.floorLooks = 0;
        r.phase = ReclaimPhase::Waiting;
        r.firstDelay = config.spreadPhases && !leftFloor ? spreadOf(id, config.interval)
                                                         : Usec{0};
        r.asked = 0;
        return;
    }
    r.firstDelay = Usec{0};
    const auto elapsed = snapshot.now - *r.lastAt;
    r.stall = 100.0 * static_cast<double>(some - r.lastSomeUsec) /
              static_cast<double>(elapsed.count());
    baseline(r, snapshot.now, some);
    const bool poor = unproductive(r);
    r.asked = 0;
    const ClassPolicy* cls = findClass(classes, ws.workload.className);
    const bool swap = snapshot.system.mem.swapTotal > 0 && cls != nullptr && cls->swap;
    const Bytes minBytes = kMinReclaimPages * page;
    if (grewSinceStop(r, cg.memoryCurrent)) {
        r.stoppedAt = 0; // grew since: worth another try
    }
    if (pressureLevel > 0) {
        r.phase = ReclaimPhase::Paused;
        r.step = 0;
    } else if (r.stall >= config.stallTarget) {
        r.phase = ReclaimPhase::BackedOff;
        r.step = 0;
    } else if (belowFloor(cg.memoryCurrent, ws.workload.request, page)) {
        r.phase = ReclaimPhase::AtFloor;
    } else if (r.stoppedAt > 0 || (poor && !swap)) {
        // Without swap what the kernel would not free is anonymous
        // memory: stop writing until the workload grows.
        if (r.stoppedAt == 0) {
            r.stoppedAt = cg.memoryCurrent;
        }
        r.phase = ReclaimPhase::AtFloor;
        r.step = 0;
    } else {
        r.step = r.step == 0 ? start
                 : poor      ? std::max<Permyriad>(start, r.step / 2)
                             : std::min<Permyriad>(config.maxStep, r.step * 2);
        // Scaled down as the stall nears its target (senpai's
        // 1 − pressure/target); stall < target here.
        const double room =
            config.stallTarget > 0 ? 1.0 - r.stall / config.stallTarget : 1.0;
        const auto want = static_cast<U128>(static_cast<double>(cg.memoryCurrent) *
                                            r.step / kPermyriadOne * room);
        const Bytes spare = cg.memoryCurrent - ws.workload.request;
        // At least kMinReclaimPages (spare ≥ that here).
        const Bytes bytes =
            detail::pageFloor(std::min<U128>(std::max<U128>(want, minBytes), spare), page);
        r.phase = ReclaimPhase::Reclaiming;
        ++r.steps;
        r.asked = bytes;
        r.reclaimedBefore = r.reclaimed;
        steps.push_back({id, cg.path, bytes});
    }
}

} // namespace

ProactiveUpdate updateProactive(const Snapshot& snapshot, const ReclaimConfig& config,
                                const std::vector<ClassPolicy>& classes,
                                std::uint32_t pressureLevel,
                                std::map<std::string, WorkloadReclaim>& state, Bytes pageSize) {
    ProactiveUpdate out;
    const Bytes page = pageSize == 0 ? kDefaultPageSize : pageSize;
    std::size_t seen = 0;
    // The daemon's snapshot lists the workloads in id order, the state's
    // order: the entry after the last one is where the next one is, found
    // without a search (any other order still works, with one).
    auto hint = state.begin();
    for (const auto& ws : snapshot.workloads) {
        auto [it, fresh] = hint != state.end() && hint->first == ws.workload.id
                               ? std::pair(hint, false)
                               : state.try_emplace(ws.workload.id);
        hint = std::next(it);
        WorkloadReclaim r = it->second;
        decideOne(snapshot, ws, config, classes, pressureLevel, page, r, out.steps);
        if (fresh || !(r == it->second)) {
            out.changed.push_back({ws.workload.id, fresh, it->second});
            it->second = r;
        }
        ++seen;
    }
    if (state.size() != seen) {
        // Workloads gone since the last call (or an id twice in the
        // snapshot): keep the snapshot's alone.
        std::set<std::string_view> ids;
        for (const auto& ws : snapshot.workloads) {
            ids.insert(ws.workload.id);
        }
        std::erase_if(state, [&](const auto& entry) { return !ids.contains(entry.first); });
    }
    return out;
}

ProactiveOutcome decideProactive(const Snapshot& snapshot, const ReclaimConfig& config,
                                 const std::vector<ClassPolicy>& classes,
                                 std::uint32_t pressureLevel,
                                 const std::map<std::string, WorkloadReclaim>& state,
                                 Bytes pageSize) {
    ProactiveOutcome out;
    out.state = state;
    out.steps = updateProactive(snapshot, config, classes, pressureLevel, out.state, pageSize).steps;
    return out;
}

Bytes OthersClaim::total() const {
    return detail::saturate(U128{classes} + host());
}

OthersClaim claimOfOthers(const Snapshot& snapshot, const std::vector<ClassPolicy>& classes,
                          std::string_view cls) {
    const Bytes total = snapshot.system.mem.memTotal;
    // The requests by class, in `classes`' order: a few names compared per
    // workload (the last one's class first), no map (issue 25: a map by
    // name here, built twice a tick, was 5-10 % of a quiet tick at 1000).
    std::vector<Bytes> requests(classes.size(), 0);
    std::size_t last = 0;
    for (const auto& ws : snapshot.workloads) {
        const std::string& name = ws.workload.className;
        std::size_t i = last < classes.size() && classes[last].name == name ? last : 0;
        while (i < classes.size() && classes[i].name != name) {
            ++i;
        }
        if (i == classes.size()) {
            continue; // no class of the configuration (an unplaced VM's "")
        }
        last = i;
        requests[i] = detail::saturate(U128{requests[i]} + ws.workload.request);
    }
    Bytes claimed = 0;
    Bytes counted = 0; // the usage behind `claimed`
    for (const auto& c : classes) {
        if (c.name == cls) {
            continue;
        }
        const CgroupSample* sample = classSample(snapshot, c.name);
        const Bytes usage = sample != nullptr ? sample->memoryCurrent : 0;
        // The sum sits at the name's first entry (a class named twice comes
        // only from an unchecked configuration: each entry counts it, as
        // with a map by name).
        const ClassPolicy* first = findClass(classes, c.name);
        const Bytes req = requests[static_cast<std::size_t>(first - classes.data())];
        claimed = detail::saturate(U128{claimed} + std::max(req, usage));
        counted = detail::saturate(U128{counted} + usage);
    }
    // Unplaced VMs: memqos frees none of their memory, so it is as good as
    // a protected class's. Only those outside the class slices (machine.slice,
    // say): a slice's memory.current above has its members' already.
    const auto inClassSlice = [&](const std::string& path) {
        return std::any_of(snapshot.classes.begin(), snapshot.classes.end(),
                           [&](const ClassSample& c) {
                               return c.cgroup && !c.cgroup->path.empty() &&
                                      path.starts_with(c.cgroup->path + "/");
                           });
    };
    for (const auto& ws : snapshot.workloads) {
        if (ws.unplaced && ws.cgroup && !inClassSlice(ws.cgroup->path)) {
            claimed = detail::saturate(U128{claimed} + ws.cgroup->memoryCurrent);
            counted = detail::saturate(U128{counted} + ws.cgroup->memoryCurrent);
        }
    }
    // Memory in use outside the classes (the host's own, other slices):
    // what the host uses minus the class's own and what is counted above.
    const CgroupSample* own = classSample(snapshot, cls);
    const Bytes ownUsage = own != nullptr ? own->memoryCurrent : 0;
    const Bytes inUse =
        detail::subOrZero(detail::subOrZero(total, snapshot.system.mem.memAvailable), ownUsage);
    return OthersClaim{.classes = claimed,
                       .hostOwn = detail::subOrZero(inUse, counted),
                       .reserved = snapshot.nodeReserved};
}

Bytes reclaimedAllocatable(const Snapshot& snapshot, const std::vector<ClassPolicy>& classes,
                           std::string_view reclaimedClass, Permyriad guardHeadroom) {
    const Bytes total = snapshot.system.mem.memTotal;
    const Bytes claimed = claimOfOthers(snapshot, classes, reclaimedClass).total();
    const Bytes headroom = detail::permyriadOf(total, guardHeadroom);
    return detail::subOrZero(detail::subOrZero(total, headroom), claimed);
}

} // namespace memqos::core

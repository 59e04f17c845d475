// SPDX-License-Identifier: Apache-2.0
#pragma once
// The immutable picture one tick decides on. Built by io/ (CgroupFs, ProcFs,
// later libvirt), read by core/. `now` is here so the core never reads a clock.

#include "memqos/core/kernel.hpp"
#include "memqos/core/model.hpp"
#include "memqos/core/types.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::core {

// One cgroup's memory files. Files a kernel may lack (memory.swap.current
// with swapaccount=0, memory.pressure without PSI) are optional / zero.
struct CgroupSample {
    std::string path; // relative to the cgroup root, e.g. "memqos.slice/memqos-shared.slice"
    Bytes memoryCurrent = 0;
    Bytes swapCurrent = 0;
    Bytes memoryMin = 0;
    Bytes memoryLow = 0;
    Limit memoryHigh;
    Limit memoryMax;
    Limit swapMax;
    std::optional<Pressure> pressure;
    MemoryStat stat;
    std::vector<std::int32_t> procs;
};

// `s` as a new CgroupSample, its path and procs keeping their buffers (the
// daemon rewrites last tick's samples in place). A field added to
// CgroupSample is reset here too (unit test Snapshot.ClearedSampleIsANewOne).
inline void clearSample(CgroupSample& s) {
    s.path.clear();
    s.memoryCurrent = 0;
    s.swapCurrent = 0;
    s.memoryMin = 0;
    s.memoryLow = 0;
    s.memoryHigh = Limit{};
    s.memoryMax = Limit{};
    s.swapMax = Limit{};
    s.pressure.reset();
    // Field by field: a new MemoryStat builds and drops a map.
    s.stat.anon = 0;
    s.stat.file = 0;
    s.stat.shmem = 0;
    s.stat.fileDirty = 0;
    s.stat.inactiveFile = 0;
    s.stat.activeFile = 0;
    s.stat.pgscan = 0;
    s.stat.pgsteal = 0;
    s.stat.pgmajfault = 0;
    s.stat.workingsetRefaultAnon = 0;
    s.stat.workingsetRefaultFile = 0;
    s.stat.all.clear();
    s.procs.clear();
}

struct SystemSample {
    MemInfo mem;
    std::optional<Pressure> pressure; // /proc/pressure/memory
    VmStat vmstat;
    std::vector<Zone> zones;
    std::vector<SwapDevice> swaps;
    Bytes pageSize = kDefaultPageSize;
};

struct WorkloadSample {
    Workload workload;
    std::optional<CgroupSample> cgroup; // nullopt: vanished or not started
    // Never a victim, whatever its class (a Ganeti instance: ganeti-watcher
    // would start it again).
    bool neverKill = false;
    // Not a victim now: the daemon has a kill of it on its way, or a kill of
    // it failed a short while ago (the next candidate is tried instead of
    // the same one at every tick). The daemon decides when it is over.
    bool setAside = false;
    // A VM nothing placed (no class): observed only. Never a victim and
    // never reclaimed (it has no class); its usage counts in every memory
    // guard's "others" when its cgroup is outside the class slices (inside
    // one, the slice's memory.current has it already).
    bool unplaced = false;
    // Proactive reclaim's turn waits for a later tick although its interval
    // is over: the daemon read only so many workloads this tick
    // (Manager::kReclaimTurnsPerTick). Left as it is by updateProactive.
    bool reclaimWaits = false;
};

struct ClassSample {
    std::string name;
    std::optional<CgroupSample> cgroup;
};

struct Snapshot {
    TimePoint now{0};
    // [Overcommit] NodeReserved resolved against MemTotal: memory kept for
    // the host itself, which the memory guard leaves out of its cap.
    Bytes nodeReserved = 0;
    SystemSample system;
    std::vector<ClassSample> classes;
    std::vector<WorkloadSample> workloads;
    // Cgroups outside the classes whose memory stall is the host being hurt
    // (system.slice, machine.slice): only their path and memory.pressure
    // matter. Evidence for the class-stall rule (pressure.hpp).
    std::vector<CgroupSample> protectedCgroups;
};

// The sample of class `name`'s slice, or nullptr when the class or its
// cgroup is not in the snapshot.
inline const CgroupSample* classSample(const Snapshot& snapshot, std::string_view name) {
    for (const auto& c : snapshot.classes) {
        if (c.name == name && c.cgroup) {
            return &*c.cgroup;
        }
    }
    return nullptr;
}

} // namespace memqos::core

// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the kernel reports about memory, as plain values: /proc/meminfo,
// PSI, memory.stat, /proc/swaps, /proc/vmstat, /proc/zoneinfo. The core
// decides on these; parse/proc.hpp turns the kernel's text into them (its
// comments give each file's format and the parsing rules). No parsing here,
// so the core depends on nothing above it.

#include "memqos/core/types.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace memqos::core {

// /proc/meminfo, in bytes.
struct MemInfo {
    Bytes memTotal = 0;
    Bytes memFree = 0;
    Bytes memAvailable = 0;
    Bytes buffers = 0;
    Bytes cached = 0;
    Bytes swapCached = 0;
    Bytes swapTotal = 0;
    Bytes swapFree = 0;
    Bytes shmem = 0;
    Bytes sReclaimable = 0;
};

// One line of a PSI file: avg* are percentages (0..100), total is the
// cumulative stall in microseconds.
struct PressureLine {
    double avg10 = 0;
    double avg60 = 0;
    double avg300 = 0;
    std::uint64_t totalUsec = 0;
};

// /proc/pressure/memory or a cgroup's memory.pressure ("full" may be absent).
struct Pressure {
    PressureLine some;
    std::optional<PressureLine> full;
};

// memory.stat: every key in `all`; the ones the core uses also named (0 when
// the kernel lacks them).
struct MemoryStat {
    Bytes anon = 0;
    Bytes file = 0;
    Bytes shmem = 0;
    Bytes fileDirty = 0;
    Bytes inactiveFile = 0;
    Bytes activeFile = 0;
    std::uint64_t pgscan = 0;
    std::uint64_t pgsteal = 0;
    std::uint64_t pgmajfault = 0;
    std::uint64_t workingsetRefaultAnon = 0;
    std::uint64_t workingsetRefaultFile = 0;
    std::map<std::string, std::uint64_t, std::less<>> all;
};

// One swap device of /proc/swaps (sizes in bytes).
struct SwapDevice {
    std::string filename;
    std::string type;
    Bytes size = 0;
    Bytes used = 0;
    std::int32_t priority = 0;
};

// /proc/vmstat's reclaim counters (pages).
struct VmStat {
    std::uint64_t pgscanKswapd = 0;
    std::uint64_t pgscanDirect = 0;
    std::uint64_t pgstealKswapd = 0;
    std::uint64_t pgstealDirect = 0;
    std::uint64_t pswpin = 0;
    std::uint64_t pswpout = 0;
    std::uint64_t oomKill = 0;
};

// One zone of /proc/zoneinfo: free pages and watermarks.
struct Zone {
    std::int32_t node = 0;
    std::string name;
    std::uint64_t freePages = 0;
    std::uint64_t minPages = 0;
    std::uint64_t lowPages = 0;
    std::uint64_t highPages = 0;
    std::uint64_t managedPages = 0;
};

} // namespace memqos::core

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Parsers of kernel text: procfs and cgroupfs files. Each is a pure function
// std::string_view -> Result<T>: it never throws, never reads past the end,
// and rejects malformed input with an Error whose `what` names the field
// ("meminfo: MemTotal: not a number"). Readers (io/) only open files and call
// these; the file name is prefixed by the reader.

#include "memqos/core/types.hpp"
#include "memqos/util/result.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::parse {

// /proc/meminfo, in bytes (the file says kB). MemTotal, MemFree and
// MemAvailable are required; the rest default to 0 when absent.
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
Result<MemInfo> parseMeminfo(std::string_view text);

// One line of a PSI file: "some avg10=0.12 avg60=0.00 avg300=0.00 total=1234".
// avg* are percentages (0..100), total is cumulative stall in microseconds.
struct PressureLine {
    double avg10 = 0;
    double avg60 = 0;
    double avg300 = 0;
    std::uint64_t totalUsec = 0;
};
// /proc/pressure/memory or a cgroup's memory.pressure. "some" is required;
// "full" is optional (absent in old kernels' cpu.pressure).
struct Pressure {
    PressureLine some;
    std::optional<PressureLine> full;
};
Result<Pressure> parsePressure(std::string_view text);

// memory.stat: "key value" lines. Every key is kept; the ones the core uses
// are also named. Missing named keys are 0.
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
Result<MemoryStat> parseMemoryStat(std::string_view text);

// memory.current, memory.swap.current, memory.peak: one decimal number.
Result<Bytes> parseCounter(std::string_view text);
// memory.min/low/high/max, memory.swap.max: a number or "max" (-> nullopt).
Result<Limit> parseLimit(std::string_view text);

// cgroup.procs: one PID per line (may be empty).
Result<std::vector<std::int32_t>> parseCgroupProcs(std::string_view text);

// /proc/swaps: header line, then "Filename Type Size Used Priority" (kB).
struct SwapDevice {
    std::string filename;
    std::string type;
    Bytes size = 0;
    Bytes used = 0;
    std::int32_t priority = 0;
};
Result<std::vector<SwapDevice>> parseSwaps(std::string_view text);

// /proc/vmstat: the reclaim counters (pages). Missing keys are 0 (they differ
// between kernels), but the file must be well-formed "key value" lines.
struct VmStat {
    std::uint64_t pgscanKswapd = 0;
    std::uint64_t pgscanDirect = 0;
    std::uint64_t pgstealKswapd = 0;
    std::uint64_t pgstealDirect = 0;
    std::uint64_t pswpin = 0;
    std::uint64_t pswpout = 0;
    std::uint64_t oomKill = 0;
};
Result<VmStat> parseVmstat(std::string_view text);

// /proc/zoneinfo: per zone, pages free and the min/low/high watermarks.
struct Zone {
    std::int32_t node = 0;
    std::string name;
    std::uint64_t freePages = 0;
    std::uint64_t minPages = 0;
    std::uint64_t lowPages = 0;
    std::uint64_t highPages = 0;
    std::uint64_t managedPages = 0;
};
Result<std::vector<Zone>> parseZoneinfo(std::string_view text);

} // namespace memqos::parse

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Parsers of kernel text: procfs and cgroupfs files. Each is a pure function
// std::string_view -> Result<T>: it never throws, never reads past the end,
// and rejects malformed input with an Error{invalid_argument} whose `what`
// names the field or line ("MemTotal: not a number: 'abc'",
// "some: field avg10 missing", "line 3: expected 'key value'"). Readers (io/)
// only open files and call these; the reader prefixes the file's path.
//
// Common rules for every parser below:
//  - Lines end in '\n'; a final newline is optional, '\r' before it (CRLF)
//    and runs of spaces/tabs are plain whitespace. Blank lines are skipped.
//  - Numbers are decimal, must be the whole token, have no sign unless the
//    field is signed, and must fit their type: "12abc", "-1", "+1" and
//    "99999999999999999999999" are errors, never clamped or truncated.
//  - A key that appears twice in one file (or one zone, or one PSI line) is an
//    error: the kernel prints each once, so a repeat means we are not reading
//    what we think and neither value can be trusted.
//  - Keys we do not know are accepted (kernels add fields) but their values
//    must still be well-formed where the format defines them (meminfo,
//    memory.stat, vmstat).

#include "memqos/core/kernel.hpp"
#include "memqos/core/types.hpp"
#include "memqos/util/result.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::parse {

// /proc/meminfo, in bytes (the file says kB; values are multiplied by 1024
// with an overflow check). Lines are "Key:   value kB" or "Key:   value"
// (HugePages_* counts). MemTotal, MemFree and MemAvailable are required
// ("field MemTotal missing"); the rest default to 0 when absent. The named
// fields must carry the "kB" unit. Empty text is an error.
using core::MemInfo;
Result<MemInfo> parseMeminfo(std::string_view text);

// One line of a PSI file: "some avg10=0.12 avg60=0.00 avg300=0.00 total=1234".
// avg* are percentages (0..100), total is cumulative stall in microseconds.
using core::PressureLine;
// /proc/pressure/memory or a cgroup's memory.pressure. "some" is required;
// "full" is optional (absent in old kernels' cpu.pressure); they may come in
// either order. avg10, avg60, avg300 and total are required on each line
// ("some: field avg10 missing"); unknown key=value fields are ignored. avg*
// must be finite and within 0..100 (NaN, inf, -1, 101 are errors); total must
// fit uint64. Any line other than "some ..." / "full ..." is an error, and so
// is empty text.
using core::Pressure;
Result<Pressure> parsePressure(std::string_view text);

// memory.stat: "key value" lines, values unsigned. Every key is kept in
// `all`; the ones the core uses are also named. Missing named keys are 0
// (workingset_refault_{anon,file} appeared in 5.9, file_dirty in 5.4). Empty
// text is an error.
using core::MemoryStat;
Result<MemoryStat> parseMemoryStat(std::string_view text);

// memory.current, memory.swap.current, memory.peak: one decimal number,
// surrounding whitespace allowed. Errors: "empty input", "not a number: 'x'",
// "out of range: 'x'", "expected one number: ...".
Result<Bytes> parseCounter(std::string_view text);
// memory.min/low/high/max, memory.swap.max: a number or exactly "max"
// (-> nullopt). "maxx", "MAX" and "-1" are errors.
Result<Limit> parseLimit(std::string_view text);

// cgroup.procs: one PID (a positive int32) per line. Empty text is an empty
// list (a cgroup with no processes), not an error.
Result<std::vector<std::int32_t>> parseCgroupProcs(std::string_view text);

// /proc/swaps: the header "Filename Type Size Used Priority", then one line
// per device with those five columns; Size and Used are kB in the file and
// bytes here, Priority is signed. The kernel escapes ' ', '\t', '\n' and '\\'
// in file names as \040, \011, \012, \134 (seq_file_path); these and any
// other three-digit octal escape except \000 are decoded; any other backslash,
// and a raw NUL byte, is an error. A header alone is an empty list; empty text (no header) is an
// error.
using core::SwapDevice;
Result<std::vector<SwapDevice>> parseSwaps(std::string_view text);

// /proc/vmstat: the reclaim counters (pages). Missing keys are 0 (they differ
// between kernels), but the file must be well-formed "key value" lines with
// unsigned values. Empty text is an error.
using core::VmStat;
Result<VmStat> parseVmstat(std::string_view text);

// /proc/zoneinfo: per zone, pages free and the min/low/high watermarks, in
// file order. A zone starts at "Node <n>, zone <name>"; within it, "pages
// free N" and the watermark lines "min N", "low N", "high N", "managed N" are
// read and every other line (per-node stats, nr_* counters, protection,
// pagesets with their "high:" lines, start_pfn, ...) is skipped. Each zone
// must have free, min, low and high ("node 0, zone Normal: field low
// missing"); managed is 0 when absent. Text before the first zone header,
// no zone at all, or a repeated key within a zone is an error.
using core::Zone;
Result<std::vector<Zone>> parseZoneinfo(std::string_view text);

// /proc/PID/stat: the process's start time (field 22, clock ticks after
// boot). With the pid it names one process for as long as the system runs:
// a reused pid has a later start time. The second field, the command in
// parentheses, may itself hold spaces and ')' (a process names itself), so
// the fields are counted from the last ')'. Errors: no "(...)", fewer than
// 22 fields, a start time that is not an unsigned number.
Result<std::uint64_t> parseProcStatStartTime(std::string_view text);

// /proc/stat: the boot time ("btime N", seconds since the epoch). Errors: no
// btime line, a value that is not an unsigned number.
Result<std::int64_t> parseProcStatBootTime(std::string_view text);

// What /proc/PID/cmdline (NUL-separated arguments) says about a qemu: the
// program (argv[0]), the guest name of "-name NAME", "-name guest=NAME,..."
// or "-name NAME,process=..." (QEMU's ",," is a literal ','; "--name" too),
// and the "-pidfile PATH". Ganeti's KVM hypervisor passes "-name <instance>
// -pidfile <dir>/pid/<instance>", libvirt "-name guest=<domain>,...". Errors:
// an empty command line; "-name" or "-pidfile" without a value.
struct QemuCmdline {
    std::string program;
    std::optional<std::string> name;
    std::optional<std::string> pidfile;
};
Result<QemuCmdline> parseQemuCmdline(std::string_view text);
// Whether the command line is a qemu's (argv[0]'s file name holds "qemu" or
// is "kvm") for the guest `name`.
bool isQemuFor(const QemuCmdline& cmd, std::string_view name);

} // namespace memqos::parse

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The only files memqosd writes itself (doc/DESIGN.md §2.4 "Who writes what"): the
// knobs systemd has no property for, and cgroup.kill. Everything else goes
// through PID 1.
//   memory.reclaim     proactive and pressure reclaim of a cgroup
//   memory.oom.group   the kernel OOM killer takes the whole cgroup
//   /proc/PID/oom_score_adj
//   cgroup.kill        a kill of a workload's whole cgroup: a kill must not
//                      wait for dbus-daemon or PID 1 (KillUnit), which a
//                      memory surge stalls first (issue 23)
// Each setter (killCgroup aside: a kill is an event, not a value) reads first and writes only when the value differs, so a tick
// can call it for every workload without churn and still repair a value
// someone changed behind memqosd's back (systemd re-applies memory.oom.group
// from OOMPolicy= when it re-realizes a unit's cgroup; a restarted unit's new
// processes start with the unit's OOMScoreAdjust=).
// Paths are checked with CgroupFs::resolve (no escape from the root).

#include "memqos/core/types.hpp"
#include "memqos/io/cgroupfs.hpp"
#include "memqos/util/result.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

namespace memqos::io {

enum class Written {
    Unchanged, // the file already had the value
    Changed,   // memqosd wrote it
    Vanished,  // the cgroup or process is gone (not an error)
};

enum class Reclaimed {
    Full,     // the kernel reclaimed the whole amount
    Partial,  // EAGAIN: it reclaimed less (not an error, per cgroup-v2.rst)
    Vanished, // the cgroup is gone
};

class KernelKnobs {
public:
    KernelKnobs(std::filesystem::path cgroupRoot, std::filesystem::path procRoot);

    // Writes `bytes` (> 0) to <cgroup>/memory.reclaim. The write blocks for
    // as long as the kernel reclaims: keep `bytes` small.
    Result<Reclaimed> reclaim(std::string_view cgroup, Bytes bytes) const;
    // <cgroup>/memory.oom.group = 1 or 0.
    Result<Written> setOomGroup(std::string_view cgroup, bool on) const;
    // /proc/<pid>/oom_score_adj = value (-1000..1000). Lowering it needs
    // CAP_SYS_RESOURCE; another user's process needs CAP_DAC_OVERRIDE.
    Result<Written> setOomScoreAdj(std::int32_t pid, int value) const;
    // A process's oom_score_adj with its start time (/proc/<pid>/stat field
    // 22), read stat first: nullopt when the process is gone; an error for
    // text that is no stat or no number (never thrown).
    struct ProcessOom {
        std::uint64_t startTime = 0;
        int oomScoreAdj = 0;
    };
    Result<std::optional<ProcessOom>> readOomScoreAdj(std::int32_t pid) const;
    // Writes `value` without reading first (the caller just read it):
    // Changed, or Vanished when the process is gone.
    Result<Written> writeOomScoreAdj(std::int32_t pid, int value) const;
    // Writes "1" to <cgroup>/cgroup.kill (Linux >= 5.14): the kernel sends
    // SIGKILL to every process of the cgroup and of its descendants, and to
    // those they fork meanwhile. Returns
    //  - Changed when the kernel took the write (the processes are dying,
    //    not necessarily dead);
    //  - Vanished when the cgroup is gone (ENOENT/ENODEV and no directory);
    //  - Error{function_not_supported, "<path>: no such file (cgroup.kill
    //    needs Linux 5.14 or later)"} when the cgroup exists without the
    //    file, Error{invalid_argument} for "" (the root cgroup, which has
    //    no cgroup.kill) or a path CgroupFs::resolve refuses, or the errno
    //    of the write (EOPNOTSUPP for a threaded cgroup, EACCES).
    // The file belongs to root (mode 0200, or a delegated unit's user): uid 0
    // writes it, with CAP_DAC_OVERRIDE for a delegated one. No CAP_KILL: the
    // kernel signals from its own context (send_sig, no permission check).
    Result<Written> killCgroup(std::string_view cgroup) const;

private:
    CgroupFs cgroups_;
    std::filesystem::path procRoot_;
};

} // namespace memqos::io

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The only files memqosd writes itself (DESIGN §2 "Who writes what"): the
// knobs systemd has no property for. Everything else goes through PID 1.
//   memory.reclaim     proactive and pressure reclaim of a cgroup
//   memory.oom.group   the kernel OOM killer takes the whole cgroup
//   /proc/PID/oom_score_adj
// Each setter reads first and writes only when the value differs, so a tick
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

private:
    CgroupFs cgroups_;
    std::filesystem::path procRoot_;
};

} // namespace memqos::io

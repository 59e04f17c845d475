// SPDX-License-Identifier: Apache-2.0
#pragma once
// Per-cgroup memory samples from a cgroup v2 tree, and the Snapshot built
// from ProcFs + CgroupFs each tick. All reads go through one root
// ("/sys/fs/cgroup" in production, a copied fixture tree in tests).

#include "memqos/core/model.hpp"
#include "memqos/core/snapshot.hpp"
#include "memqos/core/types.hpp"
#include "memqos/io/file.hpp"
#include "memqos/io/procfs.hpp"
#include "memqos/util/result.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::io {

// Where memqos puts things, relative to the cgroup root (doc/DESIGN.md §1.2: slices
// memqos.slice/memqos-<class>.slice hold services and VMs alike).
inline constexpr std::string_view kTopSlice = "memqos.slice";
// "memqos.slice/memqos-<className>.slice"
std::string classSlicePath(std::string_view className);
// "memqos.slice/memqos-<className>.slice/<unit>"
std::string unitCgroupPath(std::string_view className, std::string_view unit);

class CgroupFs {
public:
    // `root` is the cgroup2 mount point (normally "/sys/fs/cgroup").
    explicit CgroupFs(std::filesystem::path root = "/sys/fs/cgroup");

    // root / relPath, after checking that relPath cannot leave the root:
    // "" is the root itself; otherwise '/'-separated components, none of them
    // empty, "." or "..", no leading '/' and no NUL byte. Anything else is
    // Error{invalid_argument, "cgroup path '<relPath>': <reason>"}. Symlinks
    // are not checked: cgroupfs has none, and the root is trusted.
    Result<std::filesystem::path> resolve(std::string_view relPath) const;

    // One cgroup's memory files. Returns
    //  - a sample (path = relPath) when the cgroup could be read;
    //  - nullopt when the cgroup is gone: a required file (memory.current,
    //    memory.min/low/high/max, memory.stat, cgroup.procs) fails with
    //    ENOENT/ENODEV, or an optional file does and the directory is then
    //    gone too. This covers a cgroup removed before or during the read,
    //    and one without the memory controller (no memory.current);
    //  - an error for a bad relPath (invalid_argument), a malformed file
    //    (invalid_argument, `what` starts with the file's path) or another
    //    read error (EACCES, EIO, ...: errno as std::errc).
    // Optional files, absent while the cgroup exists:
    //   memory.swap.current -> 0, memory.swap.max -> nullopt (swapaccount=0
    //     or a kernel without CONFIG_MEMCG_SWAP has no memory.swap.* files);
    //   memory.pressure -> nullopt (no PSI; EOPNOTSUPP counts as absent).
    // memory.min/low of "max" are reported as kNoLimit bytes.
    Result<std::optional<core::CgroupSample>> sample(std::string_view relPath) const;

    // What the daemon reads of a workload's cgroup on most ticks: memory.current
    // and memory.swap.current, cgroup.procs when `withProcs` and
    // memory.pressure when `withPressure`; 2 to 4 files instead of
    // sample()'s 10, which matters with a thousand workloads. Results and
    // vanishing as for sample() (memory.swap.current and memory.pressure
    // optional).
    struct Usage {
        Bytes memoryCurrent = 0;
        Bytes swapCurrent = 0;
        std::vector<std::int32_t> procs;         // empty unless withProcs
        std::optional<parse::Pressure> pressure; // nullopt unless withPressure and PSI
    };
    Result<std::optional<Usage>> usage(std::string_view relPath, bool withProcs,
                                       bool withPressure = false) const;

    // What a tick's decisions read of a class slice (issue 25):
    // memory.current always, memory.high when `withHigh` (the memory guard's
    // class: its cap, core::atCap), memory.pressure when `withPressure` (the
    // class-stall rule); the other fields stay at their defaults. Results
    // and vanishing as for sample() (memory.pressure optional).
    Result<std::optional<core::CgroupSample>> slice(std::string_view relPath, bool withHigh,
                                                    bool withPressure) const;

    // memory.min and memory.low of a cgroup ("max" as the largest byte
    // count): the protection it claims from its parent. nullopt when the
    // cgroup has gone.
    struct Protection {
        Bytes memoryMin = 0;
        Bytes memoryLow = 0;
    };
    Result<std::optional<Protection>> protection(std::string_view relPath) const;

    // Names of the child cgroups (subdirectories, symlinks not followed) of
    // relPath, sorted. A vanished relPath is an error with code
    // no_such_file_or_directory (test with isVanished()).
    Result<std::vector<std::string>> children(std::string_view relPath) const;

    // The files of cgroup `relPath` (not its children's) are read through
    // kept fds from now on (OpenFiles): for the cgroups memqosd reads every
    // tick and that live as long as it watches them (the class slices,
    // system.slice, machine.slice); a workload's are opened and closed.
    void keepOpen(std::string_view relPath);
    // Closes the kept fds of files under `relPath` (a class dropped by a
    // reload). A removed cgroup's are dropped at their next read anyway.
    void forget(std::string_view relPath);
    // How many fds are kept for keepOpen()'s cgroups (tests, the benchmark).
    std::size_t openFiles() const noexcept { return files_.size(); }

    // Issue 25 item 3, for the workloads: the files a tick reads of any
    // other cgroup (memory.current, memory.swap.current, memory.pressure)
    // are kept open too, up to `capacity` fds (0, the default: opened and
    // closed each read). Past the capacity a file is opened and closed as
    // before. A cgroup removed (and made again, a unit's restart) shows on
    // its kept fd and is opened afresh; keepWorkloadFilesOf() closes those
    // of cgroups the caller no longer watches.
    void keepWorkloadFiles(std::size_t capacity);
    // Closes the workload fds of every cgroup for which `watched(relPath)`
    // is false.
    void keepWorkloadFilesOf(const std::function<bool(std::string_view relPath)>& watched);
    // How many workload fds are kept (tests, the benchmark).
    std::size_t workloadFiles() const noexcept { return workloadFiles_.size(); }

    const std::filesystem::path& root() const noexcept { return root_; }

private:
    // root + '/' + relPath after resolve()'s checks.
    Result<std::string> dirOf(std::string_view relPath) const;
    // Whether relPath is one of keepOpen()'s cgroups.
    bool isKept(std::string_view relPath) const;
    // Reads files of the cgroup at `relPath` into `value`, in the order
    // `fill(step, value)` names them (cgroupfs.cpp's ReadSequence): an error
    // or a vanished cgroup (nullopt) stops the sequence. Defined and used in
    // cgroupfs.cpp only.
    template <typename T, typename Fill>
    Result<std::optional<T>> readCgroup(std::string_view relPath, T value, Fill fill) const;

    std::filesystem::path root_;
    std::string rootText_;
    std::vector<std::string> kept_;
    mutable OpenFiles files_;
    mutable OpenFiles workloadFiles_;
};

// Where a workload's cgroup is, relative to the cgroup root; nullopt when it
// is not known (yet).
using CgroupPathOf = std::function<std::optional<std::string>(const core::Workload&)>;

// The default mapping: services and scopes live at
// unitCgroupPath(className, id); VMs -> nullopt, because libvirt names their
// machine scope itself and the hypervisor adapter must supply that path.
std::optional<std::string> defaultCgroupPath(const core::Workload& workload);

// One tick's Snapshot: the system sample from `proc`, one ClassSample per
// class name (classSlicePath) and one WorkloadSample per workload, in the
// given orders, with `now` as given. A vanished or unmapped cgroup gives a
// nullopt sample; any error (including a malformed file of a single cgroup)
// fails the whole snapshot, so decisions are never taken on partly-read data.
Result<core::Snapshot> buildSnapshot(const ProcFs& proc, const CgroupFs& cgroups, TimePoint now,
                                     const std::vector<std::string>& classNames,
                                     const std::vector<core::Workload>& workloads,
                                     const CgroupPathOf& cgroupPathOf = defaultCgroupPath);

} // namespace memqos::io

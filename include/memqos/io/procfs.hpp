// SPDX-License-Identifier: Apache-2.0
#pragma once
// The system-wide memory picture from a procfs tree. All reads go through one
// root ("/proc" in production, a copied fixture tree in tests).

#include "memqos/core/snapshot.hpp"
#include "memqos/core/types.hpp"
#include "memqos/io/file.hpp"
#include "memqos/parse/proc.hpp"
#include "memqos/util/result.hpp"

#include <filesystem>

namespace memqos::io {

class ProcFs {
public:
    // `root` is the directory that holds meminfo, vmstat, ... (normally
    // "/proc"). `pageSize` is copied into SystemSample::pageSize; the daemon
    // passes sysconf(_SC_PAGESIZE), tests keep the deterministic default.
    explicit ProcFs(std::filesystem::path root = "/proc", Bytes pageSize = kDefaultPageSize);

    // Reads, from `root`:
    //   meminfo          required
    //   pressure/memory  optional: absent (no PSI: CONFIG_PSI=n or psi=0) or
    //                    EOPNOTSUPP -> nullopt; malformed -> error
    //   vmstat, zoneinfo required
    //   swaps            optional: absent (CONFIG_SWAP=n) -> no devices
    // Every error's `what` starts with the file's path ("/proc/meminfo:
    // MemTotal: not a number: 'abc'"), and its code is the read's errno
    // (ENOENT for a missing required file) or invalid_argument (malformed).
    Result<core::SystemSample> system() const;

    // What system(reads) reads besides meminfo (issue 25: a tick reads only
    // what a decision takes). A file not read leaves its part of the sample
    // empty (no pressure, no zones, zero vmstat, no swap devices).
    struct Reads {
        bool pressure = true;
        bool zones = true;  // only the watermark signals ([Pressure] Watermarks=yes)
        bool vmstat = true; // no decision reads it
        bool swaps = true;  // no decision reads it (swap figures are meminfo's)
    };
    Result<core::SystemSample> system(const Reads& reads) const;

    // Only /proc/meminfo, for callers that need MemTotal and nothing else
    // (memqosd --check-config --print).
    Result<parse::MemInfo> meminfo() const;

    const std::filesystem::path& root() const noexcept { return root_; }
    Bytes pageSize() const noexcept { return pageSize_; }

    // How many fds are kept (tests): the files above are read through kept
    // fds (OpenFiles), one pread() each.
    std::size_t openFiles() const noexcept { return files_.size(); }

private:
    std::filesystem::path root_;
    Bytes pageSize_;
    std::string meminfo_, pressure_, vmstat_, zoneinfo_, swaps_;
    mutable OpenFiles files_;
};

} // namespace memqos::io

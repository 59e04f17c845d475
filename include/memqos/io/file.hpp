// SPDX-License-Identifier: Apache-2.0
#pragma once
// Whole-file reads for procfs, sysfs and cgroupfs, where st_size means
// nothing (0 or 4096) and a file may vanish between open() and read().

#include "memqos/util/result.hpp"

#include "memqos/io/fd.hpp"

#include <array>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace memqos::io {

inline constexpr std::size_t kDefaultMaxFileBytes = std::size_t{1} << 20;

// Reads `path` to its end (retrying EINTR). Errors carry std::errc made from
// errno, so ENOENT -> no_such_file_or_directory and ENODEV -> no_such_device
// (a cgroup removed while we read it); a file longer than `maxBytes` is
// file_too_large. `what` is "<path>: <reason>". Never throws.
Result<std::string> readFile(const std::filesystem::path& path,
                             std::size_t maxBytes = kDefaultMaxFileBytes);

// True for the errors that mean "it is gone" (ENOENT, ENODEV): a vanished
// cgroup or process is normal and callers drop the sample instead of failing.
bool isVanished(const Error& error) noexcept;

// Error{code, "<path>: <reason>"} for an errno value.
Error errnoError(int err, const std::filesystem::path& path);

// Where one read of a small file lands: `stack` first (never zero-filled:
// declare a ReadBuffer on the stack and only what pread() wrote is read);
// a file longer than it continues in `heap`. The string_view a read
// returns points into one of them and lives as long as the buffer and
// until its next read.
struct ReadBuffer {
    std::array<char, 8192> stack;
    std::string heap;
};

// The whole of an open file, read with pread() from offset 0, so the same
// fd can be read again at the next tick. A read shorter than asked ends the
// file: seq_file and kernfs (procfs, cgroupfs) fill the buffer up to the
// end of what they show, and so does a regular file. Errors as readFile();
// `path` only names the file in them. Never throws.
Result<std::string_view> preadWhole(int fd, ReadBuffer& buf, const std::string& path,
                                    std::size_t maxBytes = kDefaultMaxFileBytes);

// open() + preadWhole() + close(): one file read once (a workload's cgroup
// file, whose fd memqos does not keep). Errors as readFile().
Result<std::string_view> readSmall(const std::string& path, ReadBuffer& buf,
                                   std::size_t maxBytes = kDefaultMaxFileBytes);

// Files kept open between reads (issue 25: a tick's node and class-slice
// files are read with one pread() each instead of open/read/read/close).
// Only for files that live as long as the daemon watches them: /proc's,
// the class slices', system.slice's; a workload's cgroup comes and goes,
// and an fd kept on a removed cgroup's file pins nothing memqos wants.
//
// A file that vanished shows as an error on its cached fd: ENODEV (kernfs:
// the cgroup was removed), ESTALE, ENOENT. Then the entry is dropped and
// the path opened afresh once, so a cgroup removed and created again under
// the same name (a restarted unit) is read, and one that is gone reports
// the open's ENOENT like readFile(). On a tree that is not kernfs (tmpfs
// fixture trees in tests: a removed file stays readable through an open
// fd) `checkUnlinked` makes every cached read also fstat() the fd and
// treat a link count of 0 as gone; the kernfs roots leave it off.
//
// One thread only. Copying gives an empty cache (a copy used on another
// thread shares no fd); at most `capacity` fds are kept, further files are
// read with readSmall().
class OpenFiles {
public:
    static constexpr std::size_t kDefaultCapacity = 512;
    explicit OpenFiles(bool checkUnlinked = false, std::size_t capacity = kDefaultCapacity)
        : checkUnlinked_(checkUnlinked), capacity_(capacity) {}
    OpenFiles(const OpenFiles& other)
        : checkUnlinked_(other.checkUnlinked_), capacity_(other.capacity_) {}
    OpenFiles& operator=(const OpenFiles& other) {
        if (this != &other) {
            fds_.clear();
            checkUnlinked_ = other.checkUnlinked_;
            capacity_ = other.capacity_;
        }
        return *this;
    }
    OpenFiles(OpenFiles&&) noexcept = default;
    OpenFiles& operator=(OpenFiles&&) noexcept = default;
    ~OpenFiles() = default;

    // The content of `path` (see preadWhole), through its kept fd.
    Result<std::string_view> read(const std::string& path, ReadBuffer& buf,
                                  std::size_t maxBytes = kDefaultMaxFileBytes);
    // Closes the kept fds of files under directory `dir` (no trailing '/').
    void forgetUnder(std::string_view dir);
    // Closes the kept fds of the files whose directory `keep(dir)` rejects.
    void keepOnly(const std::function<bool(std::string_view dir)>& keep);
    void setCapacity(std::size_t capacity) noexcept { capacity_ = capacity; }
    // How many fds are kept (tests).
    std::size_t size() const noexcept { return fds_.size(); }
    bool contains(const std::string& path) const { return fds_.contains(path); }

private:
    std::unordered_map<std::string, Fd> fds_;
    bool checkUnlinked_ = false;
    std::size_t capacity_ = kDefaultCapacity;
};

// Whether the filesystem at `dir` is one whose removed files fail reads on
// an open fd (cgroup2, procfs, sysfs); false for tmpfs and the rest, and
// when statfs() fails.
bool isKernfs(const std::filesystem::path& dir) noexcept;

} // namespace memqos::io

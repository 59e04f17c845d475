// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/kernel_knobs.hpp"

#include "memqos/io/fd.hpp"
#include "memqos/io/file.hpp"
#include "memqos/parse/proc.hpp"
#include "memqos/parse/text.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

namespace memqos::io {
namespace {

// One write(2) of `text`, as the kernel's single-write knobs want it.
// Returns 0 or the errno.
int writeOnce(const std::filesystem::path& path, const std::string& text) {
    const Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) {
        return errno;
    }
    int err = 0;
    ssize_t n = 0;
    do {
        n = ::write(fd.get(), text.data(), text.size());
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        err = errno;
    } else if (static_cast<std::size_t>(n) != text.size()) {
        err = EIO;
    }
    return err;
}

bool vanishedErrno(int err) {
    return err == ENOENT || err == ENODEV || err == ESRCH;
}

// Reads the integer in `path`, then writes `value` if it differs.
Result<Written> setInteger(const std::filesystem::path& path, std::int32_t value) {
    ReadBuffer buf; // one pread, no zero-filled buffer: read every sweep turn
    auto current = readSmall(path.string(), buf, 64);
    if (!current) {
        if (isVanished(current.error()) || current.error().code == std::errc::no_such_process) {
            return Written::Vanished;
        }
        return current.error();
    }
    const auto parsed = parse::text::toI32(parse::text::trimText(*current), "value");
    if (parsed && *parsed == value) {
        return Written::Unchanged;
    }
    if (const int err = writeOnce(path, std::to_string(value)); err != 0) {
        if (vanishedErrno(err)) {
            return Written::Vanished;
        }
        return errnoError(err, path);
    }
    return Written::Changed;
}

} // namespace

KernelKnobs::KernelKnobs(std::filesystem::path cgroupRoot, std::filesystem::path procRoot)
    : cgroups_(std::move(cgroupRoot)), procRoot_(std::move(procRoot)) {}

Result<Reclaimed> KernelKnobs::reclaim(std::string_view cgroup, Bytes bytes) const {
    auto dir = cgroups_.resolve(cgroup);
    if (!dir) {
        return dir.error();
    }
    const auto path = *dir / "memory.reclaim";
    const int err = writeOnce(path, std::to_string(bytes));
    if (err == 0) {
        return Reclaimed::Full;
    }
    if (err == EAGAIN) {
        return Reclaimed::Partial;
    }
    if (vanishedErrno(err)) {
        return Reclaimed::Vanished;
    }
    return errnoError(err, path);
}

Result<Written> KernelKnobs::setOomGroup(std::string_view cgroup, bool on) const {
    auto dir = cgroups_.resolve(cgroup);
    if (!dir) {
        return dir.error();
    }
    return setInteger(*dir / "memory.oom.group", on ? 1 : 0);
}

Result<Written> KernelKnobs::setOomScoreAdj(std::int32_t pid, int value) const {
    if (pid <= 0) {
        return Error{std::errc::invalid_argument, "pid " + std::to_string(pid) + " is not a process"};
    }
    return setInteger(procRoot_ / std::to_string(pid) / "oom_score_adj", value);
}

Result<std::optional<KernelKnobs::ProcessOom>>
KernelKnobs::readOomScoreAdj(std::int32_t pid) const {
    if (pid <= 0) {
        return Error{std::errc::invalid_argument, "pid " + std::to_string(pid) + " is not a process"};
    }
    const auto dir = procRoot_ / std::to_string(pid);
    auto gone = [](const Error& e) {
        return isVanished(e) || e.code == std::errc::no_such_process;
    };
    ReadBuffer buf; // one pread each, no zero-filled buffer: read every sweep turn
    auto stat = readSmall((dir / "stat").string(), buf, 4096);
    if (!stat) {
        if (gone(stat.error())) {
            return std::optional<ProcessOom>{};
        }
        return stat.error();
    }
    auto start = parse::parseProcStatStartTime(*stat);
    if (!start) {
        return Error{start.error().code, (dir / "stat").string() + ": " + start.error().what};
    }
    auto adj = readSmall((dir / "oom_score_adj").string(), buf, 64);
    if (!adj) {
        if (gone(adj.error())) {
            return std::optional<ProcessOom>{};
        }
        return adj.error();
    }
    auto value = parse::text::toI32(parse::text::trimText(*adj), "oom_score_adj");
    if (!value) {
        return Error{value.error().code,
                     (dir / "oom_score_adj").string() + ": " + value.error().what};
    }
    return std::optional<ProcessOom>{ProcessOom{.startTime = *start, .oomScoreAdj = *value}};
}

Result<Written> KernelKnobs::writeOomScoreAdj(std::int32_t pid, int value) const {
    if (pid <= 0) {
        return Error{std::errc::invalid_argument, "pid " + std::to_string(pid) + " is not a process"};
    }
    const auto path = procRoot_ / std::to_string(pid) / "oom_score_adj";
    if (const int err = writeOnce(path, std::to_string(value)); err != 0) {
        if (vanishedErrno(err)) {
            return Written::Vanished;
        }
        return errnoError(err, path);
    }
    return Written::Changed;
}

Result<Written> KernelKnobs::killCgroup(std::string_view cgroup) const {
    // resolve("") is the root, which has no cgroup.kill: never a victim.
    if (cgroup.empty()) {
        return Error{std::errc::invalid_argument, "the root cgroup is never killed"};
    }
    auto dir = cgroups_.resolve(cgroup);
    if (!dir) {
        return dir.error();
    }
    const auto path = *dir / "cgroup.kill";
    const int err = writeOnce(path, "1");
    if (err == 0) {
        return Written::Changed;
    }
    if (vanishedErrno(err)) {
        // ENOENT is also what a kernel before 5.14 answers for the file of a
        // live cgroup: tell the two apart by the directory.
        std::error_code ec;
        if (err == ENOENT && std::filesystem::is_directory(*dir, ec)) {
            return Error{std::errc::function_not_supported,
                         path.string() + ": no such file (cgroup.kill needs Linux 5.14 or later)"};
        }
        return Written::Vanished;
    }
    return errnoError(err, path);
}

} // namespace memqos::io

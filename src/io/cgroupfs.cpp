// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/cgroupfs.hpp"

#include "memqos/io/file.hpp"
#include "memqos/parse/proc.hpp"
#include "memqos/parse/text.hpp"

#include <algorithm>
#include <cerrno>
#include <sys/stat.h>
#include <system_error>
#include <utility>

namespace memqos::io {
namespace {

Error badPath(std::string_view relPath, std::string_view reason) {
    // relPath may come from a D-Bus caller: keep the message printable.
    std::string what = "cgroup path '";
    what += parse::text::printable(relPath, 256);
    what += "': ";
    what += reason;
    return invalid(std::move(what));
}

// cgroup.procs of a cgroup holding every possible PID (pid_max is at most
// 2^22, 8 bytes a line) still fits; the other files are a few KiB.
constexpr std::size_t kMaxProcsBytes = std::size_t{32} << 20;

// The outcome of reading one file of a cgroup.
enum class Got {
    Value,    // read and parsed into the output
    Absent,   // optional file missing while the cgroup still exists
    Vanished, // the cgroup is gone
};

class CgroupReader {
public:
    // `files`: the cache to read through (the cgroup's files are kept
    // open), or nullptr (open, pread, close); with `tickFilesOnly` only
    // the files a tick reads of a workload go through it.
    CgroupReader(std::string dir, OpenFiles* files, bool tickFilesOnly = false)
        : dir_(std::move(dir)), files_(files), tickFilesOnly_(tickFilesOnly) {}

    // Reads `name` and stores parser's value in `out`. ENOENT/ENODEV on a
    // required file means the cgroup went away (or never had the memory
    // controller); on an optional one it means "absent" unless the directory
    // has gone too.
    template <typename Parser, typename Out>
    Result<Got> read(std::string_view name, bool required, Parser parser, Out& out) const {
        std::string path;
        path.reserve(dir_.size() + 1 + name.size());
        path += dir_;
        path += '/';
        path += name;
        const std::size_t max = name == "cgroup.procs" ? kMaxProcsBytes : kDefaultMaxFileBytes;
        ReadBuffer buf; // not zero-filled: only what pread() wrote is read
        OpenFiles* through = files_;
        if (tickFilesOnly_ && name != "memory.current" && name != "memory.swap.current" &&
            name != "memory.pressure") {
            through = nullptr;
        }
        auto content = through != nullptr ? through->read(path, buf, max) : readSmall(path, buf, max);
        if (!content) {
            const Error& e = content.error();
            if (isVanished(e)) {
                if (required || dirGone()) {
                    if (files_ != nullptr) {
                        files_->forgetUnder(dir_); // the cgroup's other kept fds too
                    }
                    return Got::Vanished;
                }
                return Got::Absent;
            }
            if (!required && e.code == std::errc::operation_not_supported) {
                return Got::Absent; // memory.pressure with PSI disabled
            }
            return e;
        }
        auto parsed = parser(*content);
        if (!parsed) {
            return makeError(parsed.error().code, path + ": " + parsed.error().what);
        }
        out = std::move(*parsed);
        return Got::Value;
    }

private:
    bool dirGone() const {
        struct stat st {};
        return ::stat(dir_.c_str(), &st) != 0 && (errno == ENOENT || errno == ENODEV);
    }

    std::string dir_;
    OpenFiles* files_;
    bool tickFilesOnly_;
};

// Reads files of one cgroup in order, stopping at the first error or sign
// that the cgroup is gone; result() is the first such outcome, else Value.
class ReadSequence {
public:
    explicit ReadSequence(const CgroupReader& reader) : reader_(reader) {}
    template <typename Parser, typename Out>
    void operator()(std::string_view name, bool required, Parser parser, Out& out) {
        if (got_.ok() && *got_ != Got::Vanished) {
            got_ = reader_.read(name, required, parser, out);
        }
    }
    const Result<Got>& result() const { return got_; }

private:
    const CgroupReader& reader_;
    Result<Got> got_ = Got::Value;
};

} // namespace

std::string classSlicePath(std::string_view className) {
    std::string out(kTopSlice);
    out += "/memqos-";
    out += className;
    out += ".slice";
    return out;
}

std::string unitCgroupPath(std::string_view className, std::string_view unit) {
    std::string out = classSlicePath(className);
    out += '/';
    out += unit;
    return out;
}

CgroupFs::CgroupFs(std::filesystem::path root)
    : root_(std::move(root)), rootText_(root_.string()), files_(!isKernfs(root_)),
      workloadFiles_(!isKernfs(root_), 0) {}

Result<std::string> CgroupFs::dirOf(std::string_view relPath) const {
    if (relPath.empty()) {
        return rootText_;
    }
    if (relPath.find('\0') != std::string_view::npos) {
        return badPath(relPath, "contains a NUL byte");
    }
    if (relPath.front() == '/') {
        return badPath(relPath, "must be relative to the cgroup root");
    }
    std::string_view rest = relPath;
    for (;;) {
        const auto slash = rest.find('/');
        const auto component = rest.substr(0, slash);
        if (component.empty()) {
            return badPath(relPath, "empty path component");
        }
        if (component == "." || component == "..") {
            return badPath(relPath, "'.' and '..' are not allowed");
        }
        if (slash == std::string_view::npos) {
            break;
        }
        rest.remove_prefix(slash + 1);
    }
    // One string, not a std::filesystem::path built component by component.
    std::string out;
    out.reserve(rootText_.size() + 1 + relPath.size());
    out += rootText_;
    if (!out.empty() && out.back() != '/') {
        out += '/';
    }
    out += relPath;
    return out;
}

Result<std::filesystem::path> CgroupFs::resolve(std::string_view relPath) const {
    auto dir = dirOf(relPath);
    if (!dir) {
        return dir.error();
    }
    return std::filesystem::path(std::move(*dir));
}

void CgroupFs::keepOpen(std::string_view relPath) {
    if (std::find(kept_.begin(), kept_.end(), relPath) == kept_.end()) {
        kept_.emplace_back(relPath);
    }
}

void CgroupFs::forget(std::string_view relPath) {
    if (auto dir = dirOf(relPath)) {
        files_.forgetUnder(*dir);
    }
}

void CgroupFs::keepWorkloadFiles(std::size_t capacity) {
    workloadFiles_.setCapacity(capacity);
    if (capacity == 0) {
        workloadFiles_.keepOnly([](std::string_view) { return false; });
    }
}

void CgroupFs::keepWorkloadFilesOf(
    const std::function<bool(std::string_view relPath)>& watched) {
    const std::string_view root = rootText_;
    workloadFiles_.keepOnly([&](std::string_view dir) {
        if (!dir.starts_with(root)) {
            return false;
        }
        dir.remove_prefix(root.size());
        if (!dir.empty() && dir.front() == '/') {
            dir.remove_prefix(1);
        }
        return watched(dir);
    });
}

bool CgroupFs::isKept(std::string_view relPath) const {
    return std::find(kept_.begin(), kept_.end(), relPath) != kept_.end();
}

template <typename T, typename Fill>
Result<std::optional<T>> CgroupFs::readCgroup(std::string_view relPath, T value,
                                              Fill fill) const {
    auto dir = dirOf(relPath);
    if (!dir) {
        return dir.error();
    }
    const bool kept = isKept(relPath);
    const CgroupReader reader(std::move(*dir), kept ? &files_ : &workloadFiles_, !kept);
    ReadSequence step(reader);
    fill(step, value);
    const Result<Got>& got = step.result();
    if (!got) {
        return got.error();
    }
    if (*got == Got::Vanished) {
        return std::optional<T>{};
    }
    return std::optional<T>{std::move(value)};
}

Result<std::optional<core::CgroupSample>> CgroupFs::sample(std::string_view relPath) const {
    core::CgroupSample start;
    start.path = std::string(relPath);
    Limit memoryMin;
    Limit memoryLow;
    // File by file, stopping at the first error or sign that the cgroup is
    // gone. memory.current comes first: it is the file that tells us most
    // cheaply that the cgroup vanished or has no memory controller.
    auto got = readCgroup(relPath, std::move(start), [&](ReadSequence& step, core::CgroupSample& s) {
        step("memory.current", true, parse::parseCounter, s.memoryCurrent);
        step("memory.min", true, parse::parseLimit, memoryMin);
        step("memory.low", true, parse::parseLimit, memoryLow);
        step("memory.high", true, parse::parseLimit, s.memoryHigh);
        step("memory.max", true, parse::parseLimit, s.memoryMax);
        step("memory.swap.current", false, parse::parseCounter, s.swapCurrent);
        step("memory.swap.max", false, parse::parseLimit, s.swapMax);
        step("memory.pressure", false, parse::parsePressure, s.pressure);
        step("memory.stat", true, parse::parseMemoryStat, s.stat);
        step("cgroup.procs", true, parse::parseCgroupProcs, s.procs);
    });
    if (got && got->has_value()) {
        // memory.min/low accept "max" (protect everything); as a byte count
        // that is the largest one.
        (*got)->memoryMin = limitToBus(memoryMin);
        (*got)->memoryLow = limitToBus(memoryLow);
    }
    return got;
}

Result<std::optional<CgroupFs::Usage>> CgroupFs::usage(std::string_view relPath, bool withProcs,
                                                        bool withPressure) const {
    return readCgroup(relPath, Usage{}, [&](ReadSequence& step, Usage& u) {
        step("memory.current", true, parse::parseCounter, u.memoryCurrent);
        step("memory.swap.current", false, parse::parseCounter, u.swapCurrent);
        if (withProcs) {
            step("cgroup.procs", true, parse::parseCgroupProcs, u.procs);
        }
        if (withPressure) {
            step("memory.pressure", false, parse::parsePressure, u.pressure);
        }
    });
}

Result<std::optional<core::CgroupSample>> CgroupFs::slice(std::string_view relPath, bool withHigh,
                                                         bool withPressure) const {
    core::CgroupSample start;
    start.path = std::string(relPath);
    return readCgroup(relPath, std::move(start), [&](ReadSequence& step, core::CgroupSample& s) {
        step("memory.current", true, parse::parseCounter, s.memoryCurrent);
        if (withHigh) {
            step("memory.high", true, parse::parseLimit, s.memoryHigh);
        }
        if (withPressure) {
            step("memory.pressure", false, parse::parsePressure, s.pressure);
        }
    });
}

Result<std::optional<CgroupFs::Protection>> CgroupFs::protection(std::string_view relPath) const {
    Limit memoryMin;
    Limit memoryLow;
    auto got = readCgroup(relPath, Protection{}, [&](ReadSequence& step, Protection&) {
        step("memory.min", true, parse::parseLimit, memoryMin);
        step("memory.low", true, parse::parseLimit, memoryLow);
    });
    if (got && got->has_value()) {
        **got = Protection{limitToBus(memoryMin), limitToBus(memoryLow)};
    }
    return got;
}

Result<std::vector<std::string>> CgroupFs::children(std::string_view relPath) const {
    auto dir = resolve(relPath);
    if (!dir) {
        return dir.error();
    }
    std::vector<std::string> out;
    std::error_code ec;
    std::filesystem::directory_iterator it(*dir, ec);
    const std::filesystem::directory_iterator end;
    for (; !ec && it != end; it.increment(ec)) {
        std::error_code typeEc;
        // symlink_status: never follow a link out of the tree. An entry that
        // disappears between readdir() and here is a child that vanished.
        const auto type = it->symlink_status(typeEc).type();
        if (!typeEc && type == std::filesystem::file_type::directory) {
            out.push_back(it->path().filename().string());
        }
    }
    if (ec) {
        return makeError(static_cast<std::errc>(ec.value()), dir->string() + ": " + ec.message());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::optional<std::string> defaultCgroupPath(const core::Workload& workload) {
    if (workload.kind == core::WorkloadKind::Vm) {
        return std::nullopt;
    }
    return unitCgroupPath(workload.className, workload.id);
}

Result<core::Snapshot> buildSnapshot(const ProcFs& proc, const CgroupFs& cgroups, TimePoint now,
                                     const std::vector<std::string>& classNames,
                                     const std::vector<core::Workload>& workloads,
                                     const CgroupPathOf& cgroupPathOf) {
    core::Snapshot snap;
    snap.now = now;
    auto system = proc.system();
    if (!system) {
        return system.error();
    }
    snap.system = std::move(*system);

    snap.classes.reserve(classNames.size());
    for (const auto& name : classNames) {
        auto sample = cgroups.sample(classSlicePath(name));
        if (!sample) {
            return sample.error();
        }
        snap.classes.push_back(core::ClassSample{.name = name, .cgroup = std::move(*sample)});
    }

    snap.workloads.reserve(workloads.size());
    for (const auto& w : workloads) {
        core::WorkloadSample ws{.workload = w, .cgroup = std::nullopt};
        if (auto path = cgroupPathOf ? cgroupPathOf(w) : std::nullopt) {
            auto sample = cgroups.sample(*path);
            if (!sample) {
                return sample.error();
            }
            ws.cgroup = std::move(*sample);
        }
        snap.workloads.push_back(std::move(ws));
    }
    return snap;
}

} // namespace memqos::io

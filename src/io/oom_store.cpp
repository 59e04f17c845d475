// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/oom_store.hpp"

#include "memqos/io/file.hpp"
#include "memqos/io/state_store.hpp"
#include "memqos/parse/text.hpp"

#include <algorithm>
#include <cerrno>
#include <optional>
#include <unistd.h>

namespace memqos::io {
namespace {

constexpr std::string_view kHeader =
    "# memqos oom_score_adj record; written by memqosd, do not edit while it runs\n";
// ~40 bytes a process: room for ~25 000 processes of one workload.
constexpr std::size_t kMaxRecordBytes = std::size_t{1} << 20U;
constexpr int kAdjMin = -1000;
constexpr int kAdjMax = 1000;

namespace text = parse::text;

bool validId(std::string_view id) {
    if (id.empty() || text::isSpace(id.front()) || text::isSpace(id.back())) {
        return false;
    }
    for (const char c : id) {
        const auto b = static_cast<unsigned char>(c);
        if (b < 0x20U || b == 0x7fU) {
            return false;
        }
    }
    return true;
}

bool validCgroup(std::string_view path) {
    if (path.empty() || path.front() == '/' || path.back() == '/') {
        return false;
    }
    std::size_t start = 0;
    while (start <= path.size()) {
        const auto end = std::min(path.find('/', start), path.size());
        const auto part = path.substr(start, end - start);
        if (part.empty() || part == "." || part == "..") {
            return false;
        }
        for (const char c : part) {
            const auto b = static_cast<unsigned char>(c);
            if (b <= 0x20U || b == 0x7fU) {
                return false;
            }
        }
        start = end + 1;
    }
    return true;
}

Result<int> toAdj(std::string_view token, std::string_view field) {
    auto v = text::toI32(token, field);
    if (!v) {
        return v.error();
    }
    if (*v < kAdjMin || *v > kAdjMax) {
        return invalid(std::string(field) + ": out of range (-1000..1000): '" +
                       text::printable(token, 20) + "'");
    }
    return static_cast<int>(*v);
}

Result<OomProcess> parseProcess(std::string_view value) {
    auto fields = text::splitExact<4>(value);
    if (!fields) {
        return invalid("expected 'PID STARTTIME ORIGINAL WRITTEN'");
    }
    auto pid = text::toI32((*fields)[0], "pid");
    if (!pid) {
        return pid.error();
    }
    if (*pid <= 0) {
        return invalid("pid: not a process: '" + std::string((*fields)[0]) + "'");
    }
    auto start = text::toU64((*fields)[1], "start time");
    if (!start) {
        return start.error();
    }
    auto original = toAdj((*fields)[2], "original");
    if (!original) {
        return original.error();
    }
    auto written = toAdj((*fields)[3], "written");
    if (!written) {
        return written.error();
    }
    return OomProcess{.pid = *pid, .startTime = *start, .original = *original, .written = *written};
}

} // namespace

std::string formatOomRecord(const OomRecord& r) {
    std::string out(kHeader);
    out += "Workload=" + r.workload + "\n";
    out += "Cgroup=" + r.cgroup + "\n";
    out += "Written=" + std::to_string(r.written) + "\n";
    out += "Base=" + std::to_string(r.base) + "\n";
    for (const auto& [pid, p] : r.processes) {
        out += "Process=" + std::to_string(p.pid) + " " + std::to_string(p.startTime) + " " +
               std::to_string(p.original) + " " + std::to_string(p.written) + "\n";
    }
    return out;
}

Result<OomRecord> parseOomRecord(std::string_view input) {
    OomRecord r;
    std::optional<std::string> workload;
    std::optional<std::string> cgroup;
    std::optional<int> written;
    std::optional<int> base;
    text::Lines lines(input);
    std::string_view line;
    while (lines.next(line)) {
        const auto t = text::trim(line);
        if (t.empty() || t.front() == '#') {
            continue;
        }
        auto fail = [&](const std::string& why) {
            return text::lineError(lines.number(), text::printable(t, 80) + ": " + why);
        };
        const auto eq = t.find('=');
        if (eq == std::string_view::npos) {
            return fail("expected 'Key=Value'");
        }
        const auto key = text::trim(t.substr(0, eq));
        const auto value = text::trim(t.substr(eq + 1));
        auto once = [&](auto& slot, auto parsed) -> Status {
            if (slot) {
                return fail("key given twice");
            }
            slot = std::move(parsed);
            return okStatus();
        };
        Status st = okStatus();
        if (key == "Workload") {
            if (!validId(value)) {
                return fail("not a workload id");
            }
            st = once(workload, std::string(value));
        } else if (key == "Cgroup") {
            if (!validCgroup(value)) {
                return fail("not a relative cgroup path");
            }
            st = once(cgroup, std::string(value));
        } else if (key == "Written" || key == "Base") {
            auto v = toAdj(value, key);
            if (!v) {
                return fail(v.error().what);
            }
            st = once(key == "Written" ? written : base, *v);
        } else if (key == "Process") {
            auto p = parseProcess(value);
            if (!p) {
                return fail(p.error().what);
            }
            if (!r.processes.emplace(p->pid, *p).second) {
                return fail("pid " + std::to_string(p->pid) + " given twice");
            }
        } else {
            return fail("unknown key");
        }
        if (!st) {
            return st.error();
        }
    }
    if (!workload || !cgroup || !written || !base) {
        return invalid(!workload ? "Workload= missing"
                       : !cgroup ? "Cgroup= missing"
                       : !written ? "Written= missing"
                                  : "Base= missing");
    }
    r.workload = std::move(*workload);
    r.cgroup = std::move(*cgroup);
    r.written = *written;
    r.base = *base;
    return r;
}

OomStore::OomStore(std::filesystem::path dir) : dir_(std::move(dir)) {}

Status OomStore::save(const OomRecord& r) {
    // Refuse what would not read back: a record memqos could not load is no
    // record at all.
    if (auto back = parseOomRecord(formatOomRecord(r)); !back || !(*back == r)) {
        return Error{std::errc::invalid_argument,
                     (dir_ / encodeFileName(r.workload)).string() +
                         ": the record would not read back" +
                         (back ? std::string() : ": " + back.error().what)};
    }
    return writeFileAtomically(dir_, encodeFileName(r.workload), formatOomRecord(r));
}

Status OomStore::remove(std::string_view workload) {
    const auto path = dir_ / encodeFileName(workload);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT && errno != ENOTDIR) {
        return errnoError(errno, path);
    }
    return okStatus();
}

OomStore::Loaded OomStore::loadAll() const {
    Loaded out;
    std::optional<OomRecord> pending;
    out.problems = loadRecordFiles(
        dir_, "an oom_score_adj record", "Workload", kMaxRecordBytes,
        [&pending](std::string_view t) -> Result<std::string> {
            auto r = parseOomRecord(t);
            if (!r) {
                return r.error();
            }
            pending = std::move(*r);
            return pending->workload;
        },
        [&] { out.records.push_back(std::move(*pending)); });
    return out;
}

} // namespace memqos::io

// SPDX-License-Identifier: Apache-2.0
#pragma once
// What each process of a workload had in /proc/PID/oom_score_adj before
// memqos first changed it, so that memqos can give it back when it lets go
// of the workload (unassign, class removed or switched to
// OOMScoreAdjust=keep, rule no longer matching, workload only observed).
// A process is named by its pid and its start time (/proc/PID/stat field
// 22): a reused pid has another start time and is not the process recorded.
// Pids mean nothing after a reboot, so the records live under the runtime
// directory (/run/memqos/oom-scores/), one file per workload, named by the
// workload's id encoded like an assignment file (encodeFileName):
//   # memqos oom_score_adj record; written by memqosd, do not edit while it runs
//   Workload=db.service
//   Cgroup=system.slice/db.service   where its processes were at the last sweep
//   Written=-997                     the value memqos last wrote (workload-wide)
//   Base=-500                        given back to processes forked after
//                                    memqos's change (they inherited its value)
//   Process=4242 123456 -500 -997    pid, start time, original, memqos's value
// Every key but Process exactly once, any order; Process once per pid;
// blank lines and '#' lines ignored.

#include "memqos/util/result.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::io {

struct OomProcess {
    std::int32_t pid = 0;
    std::uint64_t startTime = 0; // /proc/PID/stat field 22
    int original = 0;            // its value before memqos changed it
    int written = 0;             // what memqos wrote to it last
    bool operator==(const OomProcess&) const = default;
};

struct OomRecord {
    std::string workload; // the workload's id
    std::string cgroup;   // relative cgroup path, no leading '/'
    int written = 0;      // the value memqos last wrote to its processes
    // What a process gets back that memqos never saw before its change (it
    // was forked after it and inherited memqos's value): the original of
    // the workload's oldest recorded process, usually its main process,
    // which got the unit's OOMScoreAdjust= at exec.
    int base = 0;
    std::map<std::int32_t, OomProcess> processes; // by pid
    bool operator==(const OomRecord&) const = default;
};

// Pure (exposed for tests and fuzzing). parseOomRecord never throws; its
// errors name the line ("line 6: Process=12 x 0 0: start time: not a
// number: 'x'"). Values: pid 1..2^31-1, start time u64, oom_score_adj
// -1000..1000, the workload id non-empty without control bytes or blanks at
// either end, the cgroup a relative path without "." or ".." components.
// parseOomRecord(formatOomRecord(r)) == r for every record it can return.
std::string formatOomRecord(const OomRecord& r);
Result<OomRecord> parseOomRecord(std::string_view text);

class OomStore {
public:
    explicit OomStore(std::filesystem::path dir);
    // Writes (or replaces) the workload's record atomically.
    Status save(const OomRecord& r);
    // A missing file or directory is not an error.
    Status remove(std::string_view workload);
    // Every good record; a bad or foreign file is reported in `problems`
    // (naming the file and why) and set aside, never fatal (loadRecordFiles).
    struct Loaded {
        std::vector<OomRecord> records; // sorted by workload
        std::vector<std::string> problems;
    };
    Loaded loadAll() const;
    const std::filesystem::path& dir() const { return dir_; }

private:
    std::filesystem::path dir_;
};

} // namespace memqos::io

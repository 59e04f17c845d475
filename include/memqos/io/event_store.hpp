// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kill history (doc/DESIGN.md §4.4 "Victim ranking"): every workload memqosd
// killed, with the numbers that caused it, kept in
// <StateDirectory>/kills (/var/lib/memqos/kills) so it survives a restart,
// a kill -9 and a reboot. Bounded: only the newest kMaxKillRecords are kept.
// The whole file is rewritten atomically on each append (temp file, fsync,
// rename, fsync of the directory), so a crash leaves the old or the new
// history, never half of one. Kills are rare (at most one per KillCooldown),
// so rewriting a few kilobytes per kill costs nothing.

#include "memqos/core/model.hpp"
#include "memqos/util/result.hpp"

#include <cstdint>
#include <deque>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::io {

inline constexpr std::size_t kMaxKillRecords = 100;

struct KillRecord {
    std::uint64_t timeUsec = 0; // CLOCK_REALTIME, microseconds since the epoch
    std::string id;             // workload id ("batch.service", "vm:web1")
    std::string className;
    std::string unit;           // systemd unit killed ("" for a VM)
    std::string reason;         // the decision's one-line reason
    core::Numbers numbers;      // what caused it (same keys as WorkloadKilled)
    bool operator==(const KillRecord&) const = default;
};

// Pure (exposed for tests and fuzzing): the file format. Never throws; a
// malformed record is skipped and named in `problems`, the others kept.
struct ParsedKills {
    std::vector<KillRecord> records; // oldest first
    std::vector<std::string> problems;
};
ParsedKills parseKills(std::string_view text);
std::string formatKills(const std::deque<KillRecord>& records);

class EventStore {
public:
    // `file` is the history file, e.g. /var/lib/memqos/kills. Its directory
    // is created on the first append if missing.
    explicit EventStore(std::filesystem::path file);

    // Reads the file (a missing file is an empty history). Problems are for
    // the journal; the readable records are kept.
    ParsedKills load();
    // Appends, drops the oldest beyond kMaxKillRecords, rewrites atomically.
    // On error the in-memory history is unchanged.
    Status append(const KillRecord& record);
    // The two halves of append() for a caller that writes off its thread:
    // add() puts the record in the in-memory history at once (dropping the
    // oldest beyond kMaxKillRecords) and returns the file's new text;
    // writeText() writes such a text atomically. writeText() reads nothing
    // but the file's path, so it may run on another thread than add(); the
    // texts must be written in the order add() returned them.
    std::string add(const KillRecord& record);
    Status writeText(const std::string& text) const;
    const std::deque<KillRecord>& records() const { return records_; }

private:
    std::filesystem::path file_;
    std::deque<KillRecord> records_;
};

} // namespace memqos::io

// SPDX-License-Identifier: Apache-2.0
#include "journal.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <systemd/sd-journal.h>
#include <unistd.h>

namespace memqos::ctl {
namespace {

struct JournalCloser {
    void operator()(sd_journal* j) const { sd_journal_close(j); }
};

// The value of FIELD in the current entry, "" when absent.
std::string field(sd_journal* j, std::string_view name) {
    const void* data = nullptr;
    std::size_t length = 0;
    const std::string key(name);
    if (sd_journal_get_data(j, key.c_str(), &data, &length) < 0 || length <= key.size()) {
        return {};
    }
    // "NAME=value"
    return {static_cast<const char*>(data) + key.size() + 1, length - key.size() - 1};
}

} // namespace

JournalTail readWorkloadJournal(std::string_view id, std::size_t lines) {
    JournalTail tail;
    sd_journal* raw = nullptr;
    if (int r = sd_journal_open(&raw, SD_JOURNAL_LOCAL_ONLY | SD_JOURNAL_SYSTEM); r < 0) {
        // strerror() is not thread-safe; memqosctl is single-threaded.
        tail.note = "Journal not readable (" +
                    std::string(std::strerror(-r)) + // NOLINT(concurrency-mt-unsafe)
                    "): see journalctl WORKLOAD=" + std::string(id);
        return tail;
    }
    const std::unique_ptr<sd_journal, JournalCloser> j(raw);
    const std::string workload = "WORKLOAD=" + std::string(id);
    constexpr std::string_view kIdentifier = "SYSLOG_IDENTIFIER=memqosd";
    if (sd_journal_add_match(j.get(), workload.data(), workload.size()) < 0 ||
        sd_journal_add_match(j.get(), kIdentifier.data(), kIdentifier.size()) < 0 ||
        sd_journal_seek_tail(j.get()) < 0) {
        tail.note = "Journal not readable: see journalctl WORKLOAD=" + std::string(id);
        return tail;
    }
    while (tail.lines.size() < lines && sd_journal_previous(j.get()) > 0) {
        JournalLine line;
        if (sd_journal_get_realtime_usec(j.get(), &line.realtimeUsec) < 0) {
            continue;
        }
        line.identifier = field(j.get(), "SYSLOG_IDENTIFIER");
        line.pid = field(j.get(), "_PID");
        line.message = field(j.get(), "MESSAGE");
        tail.lines.push_back(std::move(line));
    }
    std::reverse(tail.lines.begin(), tail.lines.end());
    if (tail.lines.empty()) {
        // Without root or the systemd-journal/adm group, the system
        // journal's files are skipped without an error: say so.
        tail.note = geteuid() == 0
                        ? "No journal lines about " + std::string(id) + "."
                        : "No journal lines about " + std::string(id) +
                              " readable by this user (root and the groups systemd-journal "
                              "and adm can read memqosd's).";
    }
    return tail;
}

} // namespace memqos::ctl

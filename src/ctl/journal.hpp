// SPDX-License-Identifier: Apache-2.0
#pragma once
// The last lines memqosd logged about one workload, from the system journal
// (sd-journal): entries of SYSLOG_IDENTIFIER=memqosd with WORKLOAD=<id>,
// the field memqosd's log calls carry (io/log.hpp).

#include <cstddef>
#include <string_view>

#include "show.hpp"

namespace memqos::ctl {

// At most `lines` lines, oldest first. Never fails: when the journal cannot
// be opened, or holds nothing about `id` that this user may read, `note`
// says so in one line.
JournalTail readWorkloadJournal(std::string_view id, std::size_t lines);

} // namespace memqos::ctl

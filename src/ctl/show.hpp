// SPDX-License-Identifier: Apache-2.0
#pragma once
// `memqosctl show [ID]` and `memqosctl status ID`, rendered from the
// properties memqosd serves, pure (the bus and the journal are read by the
// caller). Every string ends with a newline.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model.hpp"
#include "render.hpp"

namespace memqos::ctl {

// show: one "Name=Value" line per property, by name; with `only`, just
// those, in the order given (a name the object does not have prints
// nothing, as with systemctl show -p). `valueOnly` (--value) leaves out
// "Name=". JSON: one object of the properties, values as on the bus.
std::string renderShow(const PropertyMap& props, const std::vector<std::string>& only,
                       bool valueOnly, Format format);

// A property value as show prints it: yes/no, numbers in decimal,
// UINT64_MAX (memqosd's "no limit") as "infinity" like systemctl show,
// arrays of strings and object paths space-separated.
std::string showValue(const Value& value);

// One line of the journal about a workload.
struct JournalLine {
    std::uint64_t realtimeUsec = 0;
    std::string identifier; // SYSLOG_IDENTIFIER ("memqosd")
    std::string pid;        // _PID, "" if absent
    std::string message;
};

// What status ID could read from the journal: its lines, oldest first, or
// one line saying why there are none (`note`, no newline).
struct JournalTail {
    std::vector<JournalLine> lines;
    std::string note;
};

// "Nov 28 05:01:02 memqosd[412]: message": journalctl's short format, the
// time in local time.
std::string formatJournalLine(const JournalLine& line);

// status ID: the workload's class, tiers, usage, PSI, reclaim and balloon
// state (from its Workload properties), the class's rank and protection
// when `classProps` is given, then the journal lines. JSON: {"Workload":
// {its properties, ObjectPath}, "Class": {...} or null, "Journal": [...],
// "JournalNote": "..." when not empty}.
std::string renderWorkloadStatus(const PropertyMap& workload, std::string_view objectPath,
                                 const std::optional<PropertyMap>& classProps,
                                 const JournalTail& journal, Format format);

} // namespace memqos::ctl

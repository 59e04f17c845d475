// SPDX-License-Identifier: Apache-2.0
#pragma once
// memqosctl top's frames, pure: what one frame holds (the daemon's Manager,
// Class and Workload properties, read once per frame), the sort orders, and
// the frame as text or JSON. The refresh loop is in top.hpp.
//
// Nothing here computes a number of its own: every cell is a property as the
// daemon sent it, formatted. PSI is memqosd's MemoryPressure (memory.pressure
// "some" avg10 of the class slice or workload cgroup) and, in the summary,
// MemoryPressureSome/Full (/proc/pressure/memory avg10).

#include "memqos/util/result.hpp"

#include <cstddef>
#include <string>
#include <vector>

#include "command.hpp"
#include "model.hpp"
#include "render.hpp"

namespace memqos::ctl {

struct TopFrame {
    ManagerStatus status; // without the instance record
    std::vector<ClassInfo> classes;
    std::vector<WorkloadInfo> workloads;
};

struct TopStyle {
    Format format = Format::Text;
    Legend legend = Legend::Show;
    bool bold = false; // table headers in bold: a terminal, and NO_COLOR unset
};

// A frame from the Manager's GetAll (a{sv}) and GetManagedObjects
// (a{oa{sa{sv}}}) replies (BusClient::managerAndObjects): the objects with an
// org.memqos1.Class interface are the classes, in rank order; those with
// org.memqos1.Workload the workloads, by id. Error: malformedReply().
Result<TopFrame> topFrameFromReplies(const ValueArray& manager, const ValueArray& managed);

// Cuts a text frame to the first `rows` - 1 lines of a terminal that many
// rows high (so the last line's newline does not scroll the first away);
// when lines were cut, the last line kept says how many. rows 0: unchanged
// (the size is unknown).
std::string fitToHeight(const std::string& frame, std::size_t rows);

// Sorts the rows, largest first for usage, pressure (MemoryPressure) and
// swap, alphabetically for name; ties by name (workloads) or the daemon's
// order (classes).
void sortTop(TopFrame& frame, TopOrder order);

// One frame: two summary lines, the class table and the workload table
// (text), or one JSON document {"Manager": {...}, "Classes": [...],
// "Workloads": [...]} with the members of status/classes/workloads --json.
// Ends with a newline; no screen control codes (the loop adds them).
std::string renderTopFrame(const TopFrame& frame, const TopStyle& style);

// ESC [H ESC [2J: cursor home, clear the screen (a terminal, not --batch).
inline constexpr std::string_view kClearScreen = "\x1b[H\x1b[2J";

} // namespace memqos::ctl

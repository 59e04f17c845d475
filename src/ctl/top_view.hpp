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

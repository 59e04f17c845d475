// SPDX-License-Identifier: Apache-2.0
#pragma once
// memqosctl top's frames, pure: what one frame holds (the daemon's Manager,
// Class and Workload properties, read once per frame), the sort orders, and
// the frame as text or JSON. The refresh loop is in top.hpp.
//
// Nothing here computes a number of its own: every cell is a property as the
// daemon sent it, formatted. Classes have no swap or PSI property, so the
// pressure and swap orders leave them in the daemon's rank order.

#include <optional>
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

// A workload's memory stall (PSI "some", percent) as memqosd reports it in
// ReclaimStall, or nullopt where memqosd does not measure it (ReclaimState
// "off", "no-psi", "waiting", or empty from a memqosd without reclaim).
std::optional<double> measuredStall(const WorkloadInfo& workload);

// Sorts the rows, largest first for usage, pressure and swap (unmeasured PSI
// last), alphabetically for name; ties by name (workloads) or the daemon's
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

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which memory properties every unit should have, from the managed workloads
// (pure). Workload units get their full tiers; every ancestor slice of a
// workload's cgroup gets MemoryMin/MemoryLow = Σ of the managed workloads
// below it, because cgroup v2 protection is only effective up to the
// parent's. The daemon then sends only what differs from what it sent last.

#include "memqos/core/tiers.hpp"
#include "memqos/core/unit_memory.hpp"

#include <map>
#include <string>
#include <vector>

namespace memqos::daemon {

struct PlacedTiers {
    std::string unit;       // "nginx.service"
    std::string cgroupPath; // "system.slice/nginx.service" (no leading '/'); may be empty
    core::Tiers tiers;
};

// Properties for a workload unit: every tier, "max" as infinity.
core::MemoryProperties unitProperties(const core::Tiers& t);

struct ReconcileInput {
    std::vector<PlacedTiers> workloads;
    // unit -> what its own configuration gives (memqos's record of the unit
    // before its first change); a slice missing here counts as 0.
    std::map<std::string, core::MemoryProperties> own;
    // The protection cgroups memqos does not manage claim now (their
    // memory.min/low), for the direct children of the workloads' ancestors.
    std::vector<core::CgroupProtection> others;
};

// unit -> properties for workloads and their ancestor slices. A workload's
// unit gets its tiers. An ancestor slice gets, for MemoryMin and MemoryLow
// alike, the larger of its own configured value and the sum of what its
// direct children claim: a managed child its tiers (or, for a slice, the
// value computed here), any other child what its cgroup has now. So every
// child's protection is covered in full (the kernel would otherwise share a
// short parent among all its children, lowering others' too), and what an
// administrator set on the slice is never lowered. A slice whose value is
// its own configured one in both fields gets no entry (nothing to change).
std::map<std::string, core::MemoryProperties> desiredProperties(const ReconcileInput& in);

// Every proper ancestor (relative path, no leading '/') of the workloads'
// cgroups, the root excluded, sorted.
std::vector<std::string> ancestorPaths(const std::vector<PlacedTiers>& workloads);

// The slice unit of a cgroup path component ("memqos-shared.slice"), or ""
// when the component is not a slice.
std::string sliceUnitOf(const std::string& component);

// The properties to send: entries of `desired` that differ from `applied`.
std::vector<std::pair<std::string, core::MemoryProperties>>
changedProperties(const std::map<std::string, core::MemoryProperties>& desired,
                  const std::map<std::string, core::MemoryProperties>& applied);

} // namespace memqos::daemon

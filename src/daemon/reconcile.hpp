// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which memory properties every unit should have, from the managed workloads
// (pure). Workload units get their full tiers; every ancestor slice of a
// workload's cgroup gets MemoryMin/MemoryLow = Σ of the managed workloads
// below it, because cgroup v2 protection is only effective up to the
// parent's. The daemon then sends only what differs from what it sent last.

#include "memqos/core/tiers.hpp"
#include "memqos/io/systemd.hpp"

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
io::MemoryProperties unitProperties(const core::Tiers& t);

// unit -> properties for workloads and their ancestor slices. Slices whose
// sums are zero get no entry unless `previous` holds one for them (then
// zeros, to take back what memqos set).
std::map<std::string, io::MemoryProperties>
desiredProperties(const std::vector<PlacedTiers>& workloads,
                  const std::map<std::string, io::MemoryProperties>& previous);

// The slice unit of a cgroup path component ("memqos-shared.slice"), or ""
// when the component is not a slice.
std::string sliceUnitOf(const std::string& component);

// The properties to send: entries of `desired` that differ from `applied`.
std::vector<std::pair<std::string, io::MemoryProperties>>
changedProperties(const std::map<std::string, io::MemoryProperties>& desired,
                  const std::map<std::string, io::MemoryProperties>& applied);

} // namespace memqos::daemon

// SPDX-License-Identifier: Apache-2.0
#include "reconcile.hpp"

#include <algorithm>

namespace memqos::daemon {

io::MemoryProperties unitProperties(const core::Tiers& t) {
    io::MemoryProperties p;
    p.memoryMin = t.memoryMin;
    p.memoryLow = t.memoryLow;
    p.memoryHigh = t.memoryHigh;
    p.memoryMax = t.memoryMax;
    p.memorySwapMax = t.swapMax;
    return p;
}

std::string sliceUnitOf(const std::string& component) {
    if (component.size() > 6 && component.ends_with(".slice")) {
        return component;
    }
    return {};
}

std::map<std::string, io::MemoryProperties>
desiredProperties(const std::vector<PlacedTiers>& workloads,
                  const std::map<std::string, io::MemoryProperties>& previous) {
    std::map<std::string, io::MemoryProperties> out;
    std::vector<core::CgroupProtection> leaves;
    for (const auto& w : workloads) {
        out[w.unit] = unitProperties(w.tiers);
        if (!w.cgroupPath.empty()) {
            leaves.push_back({w.cgroupPath, w.tiers.memoryMin, w.tiers.memoryLow});
        }
    }
    for (const auto& a : core::propagateProtection(leaves)) {
        const auto slash = a.path.rfind('/');
        const std::string unit =
            sliceUnitOf(slash == std::string::npos ? a.path : a.path.substr(slash + 1));
        if (unit.empty() || out.contains(unit)) {
            continue; // not a slice, or itself a managed workload
        }
        const auto prev = previous.find(unit);
        const bool hadValue = prev != previous.end();
        if (a.memoryMin == 0 && a.memoryLow == 0 && !hadValue) {
            continue;
        }
        io::MemoryProperties p;
        // Send a field when it carries protection or when memqos set it
        // before (to lower it); leave untouched what memqos never set.
        if (a.memoryMin > 0 || (hadValue && prev->second.memoryMin)) {
            p.memoryMin = a.memoryMin;
        }
        if (a.memoryLow > 0 || (hadValue && prev->second.memoryLow)) {
            p.memoryLow = a.memoryLow;
        }
        out[unit] = p;
    }
    // Slices memqos set before that no longer have managed workloads below.
    for (const auto& [unit, p] : previous) {
        if (!out.contains(unit) && !sliceUnitOf(unit).empty() &&
            (p.memoryMin.value_or(0) > 0 || p.memoryLow.value_or(0) > 0)) {
            io::MemoryProperties zero;
            if (p.memoryMin) {
                zero.memoryMin = 0;
            }
            if (p.memoryLow) {
                zero.memoryLow = 0;
            }
            out[unit] = zero;
        }
    }
    return out;
}

std::vector<std::pair<std::string, io::MemoryProperties>>
changedProperties(const std::map<std::string, io::MemoryProperties>& desired,
                  const std::map<std::string, io::MemoryProperties>& applied) {
    std::vector<std::pair<std::string, io::MemoryProperties>> out;
    for (const auto& [unit, p] : desired) {
        auto it = applied.find(unit);
        if (it == applied.end() || !(it->second == p)) {
            out.emplace_back(unit, p);
        }
    }
    // Slices first, parents before children (a slice's depth is its number
    // of '-': memqos.slice, then memqos-shared.slice): raise a parent's
    // protection before its child's so the child's is effective at once.
    auto depth = [](const std::string& unit) {
        return unit.ends_with(".slice") ? std::count(unit.begin(), unit.end(), '-')
                                        : std::ptrdiff_t{1} << 20;
    };
    std::stable_sort(out.begin(), out.end(),
                     [&](const auto& a, const auto& b) { return depth(a.first) < depth(b.first); });
    return out;
}

} // namespace memqos::daemon

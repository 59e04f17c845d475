// SPDX-License-Identifier: Apache-2.0
#include "reconcile.hpp"

#include <algorithm>
#include <set>

namespace memqos::daemon {

core::MemoryProperties unitProperties(const core::Tiers& t) {
    core::MemoryProperties p;
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

namespace {

std::string parentOf(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::string lastComponent(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "a//b/" -> "a/b"
std::string normalized(std::string_view path) {
    std::string out;
    std::size_t i = 0;
    while (i < path.size()) {
        const auto next = path.find('/', i);
        const auto part = path.substr(i, next == std::string_view::npos ? next : next - i);
        if (!part.empty()) {
            if (!out.empty()) {
                out += '/';
            }
            out += part;
        }
        if (next == std::string_view::npos) {
            break;
        }
        i = next + 1;
    }
    return out;
}

struct Claim {
    Bytes min = 0;
    Bytes low = 0;
};

} // namespace

std::vector<std::string> ancestorPaths(const std::vector<PlacedTiers>& workloads) {
    std::set<std::string> out;
    for (const auto& w : workloads) {
        std::string p = parentOf(normalized(w.cgroupPath));
        while (!p.empty() && out.insert(p).second) {
            p = parentOf(p);
        }
    }
    return {out.begin(), out.end()};
}

std::map<std::string, core::MemoryProperties> desiredProperties(const ReconcileInput& in) {
    std::map<std::string, core::MemoryProperties> out;
    std::map<std::string, Claim> claims; // cgroup path -> protection it claims
    for (const auto& w : in.workloads) {
        out[w.unit] = unitProperties(w.tiers);
        const auto path = normalized(w.cgroupPath);
        if (!path.empty()) {
            auto& c = claims[path];
            c.min = core::saturatingAdd(c.min, w.tiers.memoryMin);
            c.low = core::saturatingAdd(c.low, w.tiers.memoryLow);
        }
    }
    const auto ancestors = ancestorPaths(in.workloads);
    const std::set<std::string> ancestorSet(ancestors.begin(), ancestors.end());
    for (const auto& o : in.others) {
        const auto path = normalized(o.path);
        if (!path.empty() && !claims.contains(path) && !ancestorSet.contains(path)) {
            claims[path] = Claim{o.memoryMin, o.memoryLow};
        }
    }
    // Children's sums, deepest ancestors first (a longer path is never an
    // ancestor of a shorter one).
    std::vector<std::string> order(ancestors);
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
        return std::count(a.begin(), a.end(), '/') > std::count(b.begin(), b.end(), '/');
    });
    std::map<std::string, Claim> sums;
    for (const auto& [path, c] : claims) {
        auto& s = sums[parentOf(path)];
        s.min = core::saturatingAdd(s.min, c.min);
        s.low = core::saturatingAdd(s.low, c.low);
    }
    for (const auto& a : order) {
        const std::string unit = sliceUnitOf(lastComponent(a));
        const Claim children = sums[a];
        Claim own;
        if (auto it = in.own.find(unit); !unit.empty() && it != in.own.end()) {
            own.min = it->second.memoryMin.value_or(0);
            own.low = it->second.memoryLow.value_or(0);
        }
        const Claim value{std::max(own.min, children.min), std::max(own.low, children.low)};
        // What this ancestor claims from its own parent (a managed
        // workload's own claim is counted already).
        if (!claims.contains(a)) {
            auto& up = sums[parentOf(a)];
            up.min = core::saturatingAdd(up.min, value.min);
            up.low = core::saturatingAdd(up.low, value.low);
        }
        if (unit.empty() || out.contains(unit) || (value.min == own.min && value.low == own.low)) {
            continue; // not a slice, itself a managed workload, or nothing to add
        }
        core::MemoryProperties p;
        p.memoryMin = value.min;
        p.memoryLow = value.low;
        out[unit] = p;
    }
    return out;
}

std::vector<std::pair<std::string, core::MemoryProperties>>
changedProperties(const std::map<std::string, core::MemoryProperties>& desired,
                  const std::map<std::string, core::MemoryProperties>& applied) {
    std::vector<std::pair<std::string, core::MemoryProperties>> out;
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

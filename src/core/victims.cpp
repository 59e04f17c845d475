// SPDX-License-Identifier: Apache-2.0
#include "memqos/core/victims.hpp"

#include <algorithm>
#include <string_view>
#include <tuple>

#include "numeric.hpp"

namespace memqos::core {

std::vector<Candidate> rankVictims(const Snapshot& snapshot,
                                   const std::vector<ClassPolicy>& classes, bool swapTrigger) {
    // A cgroup that holds another workload's (a slice, or a unit that
    // another one runs inside) is never a victim: killing it kills that one.
    std::vector<std::string_view> paths;
    for (const auto& ws : snapshot.workloads) {
        if (ws.cgroup && !ws.cgroup->path.empty()) {
            paths.push_back(ws.cgroup->path);
        }
    }
    std::sort(paths.begin(), paths.end());
    const auto holdsAnother = [&](const std::string& path) {
        if (path.empty()) {
            return false;
        }
        const std::string prefix = path + "/";
        const auto it = std::lower_bound(paths.begin(), paths.end(), std::string_view(prefix));
        return it != paths.end() && it->starts_with(prefix);
    };
    std::vector<Candidate> out;
    for (const auto& ws : snapshot.workloads) {
        const ClassPolicy* cls = findClass(classes, ws.workload.className);
        if (cls == nullptr || !cls->killable || !ws.cgroup || ws.neverKill || ws.unplaced ||
            ws.setAside || holdsAnother(ws.cgroup->path)) {
            continue;
        }
        // Nothing to free (a unit that already ended, whose cgroup lingers):
        // killing it would relieve nothing, and would be reported as a kill.
        if (ws.cgroup->memoryCurrent == 0 && ws.cgroup->swapCurrent == 0) {
            continue;
        }
        const Bytes usage = ws.cgroup->memoryCurrent;
        const Bytes request = ws.workload.request;
        // What it holds of the host: RAM and swap. A hog the guard keeps at
        // its cap has most of its memory in swap; by memory.current alone a
        // smaller neighbour looked bigger (VM case 55-precision).
        const Bytes footprint = detail::saturate(detail::U128{usage} + ws.cgroup->swapCurrent);
        out.push_back(Candidate{
            .id = ws.workload.id,
            .className = cls->name,
            .rank = cls->rank,
            .aboveRequest = footprint > request,
            .priority = ws.workload.priority,
            .usage = usage,
            .request = request,
            .excess = detail::subOrZero(footprint, request),
            .swapUsage = ws.cgroup->swapCurrent,
        });
    }
    // footprint − request as a signed quantity without overflow: compare
    // footprint_a + request_b with footprint_b + request_a in 128 bits.
    const auto moreExcess = [](const Candidate& a, const Candidate& b) {
        return detail::U128{a.usage} + a.swapUsage + b.request >
               detail::U128{b.usage} + b.swapUsage + a.request;
    };
    // stable: two entries with the same id (a caller bug) keep snapshot order.
    std::stable_sort(out.begin(), out.end(), [&](const Candidate& a, const Candidate& b) {
        if (a.rank != b.rank) {
            return a.rank < b.rank;
        }
        if (a.aboveRequest != b.aboveRequest) {
            return a.aboveRequest;
        }
        if (a.priority != b.priority) {
            return a.priority < b.priority;
        }
        if (swapTrigger && a.swapUsage != b.swapUsage) {
            return a.swapUsage > b.swapUsage;
        }
        if (moreExcess(a, b) || moreExcess(b, a)) {
            return moreExcess(a, b);
        }
        return a.id < b.id;
    });
    return out;
}

} // namespace memqos::core

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Victim ranking for the last pressure level (doc/DESIGN.md §4.4, after kubelet's
// eviction ranking and Katalyst's QoS levels).

#include "memqos/core/model.hpp"
#include "memqos/core/snapshot.hpp"
#include "memqos/core/types.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace memqos::core {

struct Candidate {
    std::string id; // workload id ("nginx.service", "vm:web1")
    std::string className;
    std::uint32_t rank = 0;    // the class's rank
    bool aboveRequest = false; // usage + swap > request (any usage with no request)
    std::int32_t priority = 0;
    Bytes usage = 0; // memory.current
    Bytes request = 0;
    Bytes excess = 0;    // usage + swapUsage − request, 0 when below
    Bytes swapUsage = 0; // memory.swap.current

    friend bool operator==(const Candidate&, const Candidate&) = default;
};

// The workloads that may be killed, best victim first. Only workloads whose
// class exists in `classes` and is killable, and whose cgroup sample is
// present, are candidates: a protected (non-killable) class never is,
// whatever it uses. Nor is a workload marked neverKill or setAside, nor one
// whose cgroup holds another workload's cgroup (killing it would kill that
// one too). Order:
//   1. lower class rank first;
//   2. above request first (footprint = memory.current + memory.swap.current
//      above the request);
//   3. lower priority first;
//   4. on a swap trigger only: larger swap usage first;
//   5. larger footprint − request first, compared signed as kubelet does (of
//      two workloads below their request, the one closer to it comes
//      first). Swap counts: a hog held at its cap has most of its memory in
//      swap, where memory.current alone would not show it;
//   6. id, so the order is total and deterministic.
std::vector<Candidate> rankVictims(const Snapshot& snapshot,
                                   const std::vector<ClassPolicy>& classes, bool swapTrigger);

} // namespace memqos::core

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Classes and workloads: what memqos manages (DESIGN §1).

#include "memqos/core/types.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::core {

enum class WorkloadKind { Service, Scope, Vm };
std::string_view toString(WorkloadKind k);

// How a class protects its members' request from reclaim.
//  Min:  memory.min = request (never reclaimed; system, dedicated)
//  Low:  memory.low = request (best effort; shared)
//  None: no protection (reclaimed)
enum class Protection { Min, Low, None };
std::string_view toString(Protection p);

struct ClassPolicy {
    std::string name;
    // Importance: higher is more important. Victims are taken from the lowest
    // rank first; two classes may not share a rank.
    std::uint32_t rank = 0;
    Protection protection = Protection::None;
    // Kubernetes' memory throttling factor f (9000 = 0.9); nullopt = off,
    // i.e. the class sets no per-workload memory.high.
    std::optional<Permyriad> throttlingFactor;
    bool killable = false;
    // May members use swap? No -> memory.swap.max = 0.
    bool swap = false;
    // Fixed oom_score_adj, or nullopt for the Burstable formula
    // 1000 - 1000*request/MemTotal clamped to [3, 999].
    std::optional<int> oomScoreAdj;
    // Proactive reclaim (memory.reclaim) for members.
    bool reclaim = false;
    // Class-wide cap computed each tick (DESIGN §4 "memory guard").
    bool memoryGuard = false;

    // "memqos-<name>.slice"
    std::string slice() const;
};

// The four embedded defaults of DESIGN §1: system, dedicated, shared, reclaimed.
std::vector<ClassPolicy> defaultClasses();
const ClassPolicy* findClass(const std::vector<ClassPolicy>& classes, std::string_view name);

// A workload: one systemd unit (service or scope) or one libvirt domain.
// id: the unit name ("nginx.service", "x.scope") or "vm:<domain name>".
struct Workload {
    std::string id;
    WorkloadKind kind = WorkloadKind::Service;
    std::string className;
    Bytes request = 0;     // 0 = no request
    Limit limit;           // nullopt = no limit
    std::int32_t priority = 0; // higher = more important within a class
};

// Kind from an id: "*.service" Service, "*.scope" Scope, "vm:*" Vm; nullopt otherwise.
std::optional<WorkloadKind> kindFromId(std::string_view id);

} // namespace memqos::core

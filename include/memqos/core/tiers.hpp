// SPDX-License-Identifier: Apache-2.0
#pragma once
// cgroup v2 memory tiers of a workload and of the slices above it
// (doc/DESIGN.md §1.3-§1.4, Kubernetes Memory QoS 1.27+). All values in bytes.

#include "memqos/core/model.hpp"
#include "memqos/core/types.hpp"
#include "memqos/util/result.hpp"

#include <string>
#include <vector>

namespace memqos::core {

// What memqos asks systemd to set (MemoryMin/Low/High/Max, MemorySwapMax).
// For Limit fields nullopt means "max" / "not set by memqos".
struct Tiers {
    Bytes memoryMin = 0;
    Bytes memoryLow = 0;
    Limit memoryHigh;
    Limit memoryMax;
    Limit swapMax;

    friend bool operator==(const Tiers&, const Tiers&) = default;
};

// a + b, or UINT64_MAX when that overflows. Sums of protections saturate
// rather than wrap: "everything" is the right reading of an absurd sum.
Bytes saturatingAdd(Bytes a, Bytes b);

// The tiers of one workload under its class.
//  memory.max  = limit (nullopt: "max").
//  memory.min  = request if the class protects with Min, else 0.
//  memory.low  = request if the class protects with Low, else 0.
//  memory.high = floor((request + f·(L − request)) / pageSize) · pageSize,
//                exact integer arithmetic, f = class.throttlingFactor in
//                permyriad, L = min(limit, memTotal); with no limit L =
//                memTotal (Kubernetes uses node allocatable: the formula
//                needs a ceiling, and MemTotal is the only one a host has;
//                memory.max still stays "max"). A limit above MemTotal is
//                capped to MemTotal in the formula too, so a huge limit
//                does not turn into "never throttled".
//                nullopt when f is off, request == 0 (no request),
//                request == limit, or when the result is not above the
//                request (kubelet's `memoryHigh > request` rule: this also
//                covers request ≥ MemTotal and results that floor to 0).
//  swapMax     = 0 if the class may not swap, else nullopt (unchanged).
// request, limit and memTotal need not be page-aligned: memory.min/low/max
// are passed through as given and the kernel rounds them down to pages;
// memory.high is floored here so that reading it back gives the same number.
// Errors (invalid_argument): limit == 0, request > limit, pageSize == 0,
// throttling factor above 10000 (1.0).
Result<Tiers> computeTiers(const ClassPolicy& cls, const Workload& w, Bytes memTotal,
                           Bytes pageSize);

// Tiers of a class slice (memqos-<class>.slice): memory.min and memory.low
// are the saturating sums of its children's, because cgroup v2 protection
// is only effective up to the parent's. No high, max or swap (nullopt).
Tiers sliceTiers(const std::vector<Tiers>& children);

// A cgroup path relative to the cgroup root ("memqos.slice/memqos-shared.slice/nginx.service")
// with its protections.
struct CgroupProtection {
    std::string path;
    Bytes memoryMin = 0;
    Bytes memoryLow = 0;

    friend bool operator==(const CgroupProtection&, const CgroupProtection&) = default;
};

// For every proper ancestor of every entry of `leaves`, the saturating sums
// of memory.min and memory.low of the entries strictly below it. The root
// ("") is excluded; leading, trailing and doubled "/" are ignored; entries
// with the same path add up. An entry that is itself an ancestor of another
// entry appears in the result with the sum of the entries below it only
// (its own value is the caller's). Sorted by path, so every ancestor
// precedes its descendants (set parents first when raising protection).
std::vector<CgroupProtection> propagateProtection(const std::vector<CgroupProtection>& leaves);

} // namespace memqos::core

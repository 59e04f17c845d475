// SPDX-License-Identifier: Apache-2.0
#pragma once
// A unit's memory properties as systemd takes them (MemoryMin=, MemoryLow=,
// MemoryHigh=, MemoryMax=, MemorySwapMax=): what the reconciler decides and
// io/systemd sends.

#include "memqos/core/types.hpp"

#include <optional>

namespace memqos::core {

// Memory properties of a unit. Unset fields are not sent. A Limit of nullopt
// is sent as UINT64_MAX, which systemd reads as "infinity".
struct MemoryProperties {
    std::optional<Bytes> memoryMin;
    std::optional<Bytes> memoryLow;
    std::optional<Limit> memoryHigh;
    std::optional<Limit> memoryMax;
    std::optional<Limit> memorySwapMax;
    bool empty() const {
        return !memoryMin && !memoryLow && !memoryHigh && !memoryMax && !memorySwapMax;
    }
    bool operator==(const MemoryProperties&) const = default;
};

// Calls fn(name, value) for each set property of `p`, in the order above;
// `value` is a Limit (nullopt: infinity; MemoryMin and MemoryLow are never
// nullopt). The one walk over the properties: the D-Bus call's a(sv) and
// the dry run's "would set" line.
template <typename Fn>
void forEachProperty(const MemoryProperties& p, Fn&& fn) {
    if (p.memoryMin) {
        fn("MemoryMin", Limit{*p.memoryMin});
    }
    if (p.memoryLow) {
        fn("MemoryLow", Limit{*p.memoryLow});
    }
    if (p.memoryHigh) {
        fn("MemoryHigh", *p.memoryHigh);
    }
    if (p.memoryMax) {
        fn("MemoryMax", *p.memoryMax);
    }
    if (p.memorySwapMax) {
        fn("MemorySwapMax", *p.memorySwapMax);
    }
}

// What systemd reports for a unit whose configuration sets no memory
// property: no protection, no limits.
inline MemoryProperties unconfiguredMemory() {
    MemoryProperties p;
    p.memoryMin = 0;
    p.memoryLow = 0;
    p.memoryHigh = Limit{};
    p.memoryMax = Limit{};
    p.memorySwapMax = Limit{};
    return p;
}

} // namespace memqos::core

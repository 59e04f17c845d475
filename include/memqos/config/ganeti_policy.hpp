// SPDX-License-Identifier: Apache-2.0
#pragma once
// The cluster's memory policy as Ganeti tags (pure; shared by the
// iallocator, memqos-cluster and memqosd's verify, so that all three read
// the tags alike; in the config layer because it is configuration, read
// with config's own parsers, and programs may not include each other).
//
// Policy, from Ganeti tags (the first level that has the tag wins: node,
// then its node group, then the cluster):
//   memqos:memory-ratio:R   R as in memqosd.conf MemoryRatio: a decimal
//                           number from 1.0 to 100, at most 6 decimals
//   memqos:mem-node:SIZE    SIZE as in memqosd.conf (512M, 1G, 1.5G; bytes
//                           without a unit), rounded up to whole MiB
// A node under neither tag (at any level) is left exactly as Ganeti gave it:
// hail's own behaviour. A node under only one of them gets ratio 1.0 or
// hail's own nMem for the missing one. Two different values of one tag at
// one level, an empty or malformed value, or "memqos:memory-ratio" /
// "memqos:mem-node" without a value are errors. Other memqos:* tags
// (memqos:class:NAME on instances) are not read here.
//   memqos:vm-overhead:SIZE  on the cluster only: memqosd's VMOverhead, added
//                           to every instance's memory (maxmem) wherever the
//                           ratio is applied, as memqosd adds it on the node
//
// A Ganeti node sees only the cluster's tags (ssconf_cluster_tags); node
// and group tags are known on the master only (luxi, hscan, iallocator
// input).

#include "memqos/util/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::config {

inline constexpr std::uint64_t kMicro = 1'000'000;
// Memory figures in MiB above this (4 PiB) are refused, in tags and in
// Ganeti's input alike.
inline constexpr std::uint64_t kMaxMib = std::uint64_t{1} << 32;

inline constexpr std::string_view kRatioTag = "memqos:memory-ratio:";
inline constexpr std::string_view kMemNodeTag = "memqos:mem-node:";
inline constexpr std::string_view kVmOverheadTag = "memqos:vm-overhead:";

// The policy of one level (cluster, group or node) from its tags.
struct TagPolicy {
    std::optional<std::uint64_t> ratioMicro; // memory ratio × 10^6
    std::optional<std::uint64_t> memNodeMib;
    std::optional<std::uint64_t> vmOverheadMib; // memqos:vm-overhead, cluster level only
    friend bool operator==(const TagPolicy&, const TagPolicy&) = default;
};

// `where` names the level in errors ("cluster", "node group default",
// "node node1.example.test").
Result<TagPolicy> parseTagPolicy(const std::vector<std::string>& tags, std::string_view where);
// A node or node group level with memqos:vm-overhead is an error: an
// instance's overhead (memqosd's VMOverhead) must be the same on every node
// it may move to, so the tag is read from the cluster only. `where` as above.
Status noVmOverheadBelowCluster(const TagPolicy& policy, std::string_view where);

// The resolved policy of one node (node tag, else its group's, else the
// cluster's), or none when no level has a memqos tag: then the node keeps
// Ganeti's own figures. A missing ratio is 1.0; a missing mem_node is
// htools' own nMem.
struct NodePolicy {
    std::uint64_t ratioMicro = 1'000'000;
    std::optional<std::uint64_t> memNodeMib;
    friend bool operator==(const NodePolicy&, const NodePolicy&) = default;
};
std::optional<NodePolicy> resolvePolicy(const TagPolicy& node, const TagPolicy& group,
                                        const TagPolicy& cluster);

// A ratio in millionths as text: "1.5", "2", "1.333333" (trailing zeros
// dropped), or with all six decimals ("1.500000") when `sixDecimals`.
std::string ratioText(std::uint64_t micro, bool sixDecimals = false);
// memqosd's MemoryRatio (a double) in millionths, rounded to nearest.
std::uint64_t ratioMicro(double ratio);
// Bytes in whole MiB, rounded up (as the mem-node tag is).
std::uint64_t ceilMib(std::uint64_t bytes);

// What differs between a node's memqosd (MemoryRatio, NodeReserved in
// bytes) and the policy its tags give; "" when they agree. The ratio is
// compared in millionths; NodeReserved in whole MiB rounded up, and only
// when the tags set mem-node. E.g. "memqosd's MemoryRatio 2 but the tags
// say 1.5; memqosd's NodeReserved 536870912 bytes but the tags say 768 MiB".
std::string policyDrift(const NodePolicy& tags, double memqosdRatio,
                        std::uint64_t memqosdNodeReservedBytes);
// The same for memqosd's VMOverhead (bytes, compared in whole MiB rounded
// up) and the cluster's memqos:vm-overhead tag; "" when they agree or the
// tag is not set.
std::string vmOverheadDrift(const TagPolicy& cluster, std::uint64_t memqosdVmOverheadBytes);

} // namespace memqos::config

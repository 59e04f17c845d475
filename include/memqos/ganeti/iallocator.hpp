// SPDX-License-Identifier: Apache-2.0
#pragma once
// The memqos iallocator (pure part): Ganeti's iallocator input rewritten so
// that Ganeti's own allocator, hail, places instances under the memory-ratio
// model instead of its own free-memory model. memqos-iallocator (main) reads
// the input file, calls transformForHail(), runs hail on the result and
// relays hail's answer.
//
// What Ganeti 3.0.2 gives an iallocator (ganeti/masterd/iallocator.py): a
// JSON object with cluster_tags (array of strings), nodegroups (uuid ->
// {name, alloc_policy, networks, ipolicy, tags, ...}), nodes (name ->
// {tags, group, offline, drained, vm_capable, ndparams, total_memory,
// reserved_memory, free_memory, ... in MiB; the memory figures only for a
// node that is not offline}), instances (name -> {memory (maxmem, MiB),
// admin_state, nodes [primary, secondaries...], ...}) and request
// ({type, ...}).
//
// How hail 3.0.2 sees memory (src/Ganeti/HTools/Node.hs, Loader.hs): for a
// node, tMem = total_memory, nMem = reserved_memory (but on KVM, the first
// enabled hypervisor, its option --static-kvm-node-memory, default 4096,
// replaces it when > 0), iMem = Σ memory of the primary instances that use
// memory (admin_state up, or absent), fMem = free_memory; it places while
//   min(tMem − nMem − iMem, fMem) − instance > 0
// and, in its strict pass (the default for allocations), also while
//   fMem − Σ memory of the node's down and forthcoming instances − instance > 0
// (fMemForth: room for the down instances to start again) and while the
// node keeps the memory its N+1 check wants for DRBD secondaries' failover.
// By default (no --no-capacity-checks) it also refuses an allocation after
// which some node of the group could not be evacuated onto the others
// (GlobalN1.hs, "FailN1").
//
// The rewrite: for a node under a memqos policy (see below),
//   available = total_memory − mem_node           (MiB, 0 when negative)
//   capacity  = floor(ratio × available)
//   total_memory'  = nMem + capacity + 1  (nMem: what hail will use)
//   free_memory'   = max(0, capacity + 1 − iMem + Σ memory of down instances)
//   reserved_memory unchanged
// so hail's free memory is capacity + 1 − iMem in both checks, and it places
// an instance of m MiB exactly when iMem + m ≤ capacity: core::checkPlacement's
// "not hard" (the +1 turns hail's "> 0" into memqos's "≤"; down instances do
// not count, as in memqosd's record, where a stopped instance is checked when
// it starts). Forthcoming instances stay reserved. hail's N+1 checks stay as
// they are, on these figures: they are the model's soft line (failover room),
// stricter than memqos's soft (allowed). available 0 gets no +1: nothing fits
// (checkPlacement: always hard). free_memory' drops Ganeti's measured free
// memory on purpose: under overcommit the ratio decides, not what is free
// right now. The cluster's memqos:vm-overhead:SIZE (memqosd's VMOverhead) is
// added to the memory of every instance in the input and of every instance
// the request asks for (allocate, multi-allocate) before hail reads them.
//
// The policy: config/ganeti_policy.hpp (the tags memqos:memory-ratio:R and
// memqos:mem-node:SIZE; node, then node group, then cluster).

#include "memqos/config/ganeti_policy.hpp"
#include "memqos/util/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::ganeti {

// The tag policy lives in the config layer (memqosd's verify reads it too).
using config::ceilMib;
using config::kMaxMib;
using config::kMemNodeTag;
using config::kMicro;
using config::kRatioTag;
using config::kVmOverheadTag;
using config::noVmOverheadBelowCluster;
using config::NodePolicy;
using config::parseTagPolicy;
using config::policyDrift;
using config::ratioMicro;
using config::ratioText;
using config::resolvePolicy;
using config::TagPolicy;
using config::vmOverheadDrift;


// The rewrite above for one node, in MiB: totalMib (Ganeti's total memory)
// and the node memory htools uses (htoolsNodeMib: hail's nMem, or the
// text file's n_mem), the node's policy and the memory of its primary
// instances that are up (upMib, htools' iMem) and down (downMib). Gives
// the node's total_memory' and free_memory' for htools and the figures
// behind them. Every input ≤ 2^32 MiB and ratio ≤ 100: no overflow.
struct HtoolsMemory {
    std::uint64_t memNodeMib = 0;   // the policy's, else htoolsNodeMib
    std::uint64_t availableMib = 0; // total − memNode, 0 when negative
    std::uint64_t capacityMib = 0;  // floor(ratio · available)
    std::uint64_t totalMib = 0;     // htoolsNodeMib + capacity + 1 (0 room when available is 0)
    std::uint64_t freeMib = 0;      // max(0, capacity + 1 − up + down)
    friend bool operator==(const HtoolsMemory&, const HtoolsMemory&) = default;
};
HtoolsMemory htoolsMemory(std::uint64_t totalMib, std::uint64_t htoolsNodeMib,
                          const NodePolicy& policy, std::uint64_t upMib, std::uint64_t downMib);

// Options of hail that change its memory model, from the iallocator's own
// arguments after the input file (Ganeti passes the cluster's default
// iallocator parameters as --key=value; memqos-iallocator hands them to hail
// unchanged). Only --static-kvm-node-memory=N (or "--static-kvm-node-memory
// N") is read; the last one wins, as in hail. A malformed N is an error.
struct HailOptions {
    std::int64_t staticKvmNodeMemoryMib = 4096; // hail's default
};
Result<HailOptions> hailOptionsFromArgs(const std::vector<std::string>& args);

// What transformForHail() did to one node, for messages and tests.
struct NodeChange {
    std::string node;
    std::uint64_t ratioMicro = 0;
    std::uint64_t memNodeMib = 0;
    std::uint64_t capacityMib = 0;
    std::uint64_t instancesMib = 0; // hail's iMem: the up instances
    friend bool operator==(const NodeChange&, const NodeChange&) = default;
};

// "memqos: node NAME: ratio R, mem_node M MiB, capacity C MiB, instances I MiB"
// (R with 6 decimals): the line the programs print on stderr per rewritten node.
std::string describe(const NodeChange& change);

struct Transformed {
    std::string json; // the input for hail (compact JSON)
    std::vector<NodeChange> changes;
};

// The iallocator input rewritten for hail (above). Errors (not JSON, not an
// object, a missing or ill-typed key that this rewrite or hail needs, an
// unknown request type, a malformed tag, a memory figure that is negative
// or above 2^32 MiB, nesting deeper than 64 levels) say what and where.
// Never throws.
Result<Transformed> transformForHail(std::string_view inputJson, const HailOptions& options = {});

// Ganeti's answer for a failed iallocator run:
//   {"success": false, "info": "memqos: <message>", "result": []}
// (as hail answers a request it cannot satisfy). Always valid JSON, and
// ASCII only: the signs of memqos's messages are spelled out (">=", "x",
// "-", "..."), any other non-ASCII character becomes '?' (Ganeti showed a
// UTF-8 "\u2265" to the operator as "e").
std::string failureReply(std::string_view message);

} // namespace memqos::ganeti

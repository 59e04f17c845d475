// SPDX-License-Identifier: Apache-2.0
#pragma once
// memqos-cluster (pure part): the Ganeti master's view of the whole cluster
// under the memory-ratio model of the tags memqos:memory-ratio:R and
// memqos:mem-node:SIZE (iallocator.hpp: node tag, else group tag, else
// cluster tag; the same node rewrite).
//
// Inputs, both text that Ganeti 3.0.2's own tools print (the program
// gathers them, cluster_main.cpp; everything here is pure and never throws):
//
// 1. The cluster: htools' text format (src/Ganeti/HTools/Backend/Text.hs,
//    what `hscan` writes to LOCAL.data from luxi and `hbal -t`/`hcheck -t`
//    read). Sections separated by one empty line: node groups
//      name|uuid|alloc_policy|tags|networks
//    nodes
//      name|t_mem|n_mem|f_mem|t_disk|f_disk|t_cpu|offline(Y/M/N)|group_uuid|
//      spindles|tags|excl_storage|free_spindles|cpus|cpu_speed
//    instances
//      name|mem|disk|vcpus|status|auto_balance|pnode|snode|disk_template|
//      tags|spindle_use|spindles|forthcoming
//    cluster tags (one a line), instance policies (not read). Memory in MiB,
//    tags comma-separated. Shorter node and instance lines are accepted as
//    htools accepts them (nodes from 9 fields, instances from 10).
//
// 2. Each node's memqosd: the output of
//      gnt-cluster command 'memqosctl --no-pager show -p
//      MemoryRatio,NodeReserved,SwapTotal,MemoryTotal'
//    (lib/client/gnt_cluster.py RunClusterCommand: per online node a line of
//    48 '-', "node: NAME", the command's stdout and stderr, "return code = N").
//
// What verify checks, per online node under a memqos policy (a node under
// none keeps Ganeti's model: ratio 1.0 and its n_mem; offline nodes are
// skipped and are no failover target):
//   capacity  = floor(ratio · (t_mem − mem_node))   (htoolsMemory)
//   used      = Σ mem of its primary instances that use memory (htools'
//               Instance.usesMemory: not forthcoming, status not ADMIN_down,
//               ADMIN_offline, ERROR_down or USER_down)
//   over-capacity      used > capacity
//   not-n-plus-1       node F fails: its DRBD instances go to their secondary,
//                      its externally mirrored ones (diskless, sharedfile,
//                      blockdev, rbd, ext, gluster) to the other online nodes
//                      of its group (largest first, onto the node with most
//                      room), and a target T ends with used(T) + moved > capacity(T)
//                      (or no node takes an instance, or its secondary is offline)
//   no-failover        (info) an up instance without a secondary (plain, file)
//   swap-insufficient  SwapTotal < requiredSwap(available, ratio) (core)
//   overcommitted-beyond-swap  available + SwapTotal < used
//   policy-drift       memqosd's MemoryRatio or NodeReserved disagrees with
//                      the tags' ratio or mem_node (NodeReserved compared in
//                      whole MiB, rounded up as the tag is)
//   node-unchecked     no usable memqosd figures from the node (it failed,
//                      did not answer, or is missing from the node data)

#include "memqos/ganeti/iallocator.hpp"
#include "memqos/util/result.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::ganeti::cluster {

struct Group {
    std::string name;
    std::string uuid;
    std::vector<std::string> tags;
};

struct Node {
    std::string name;
    std::uint64_t totalMib = 0;
    std::uint64_t nodeMib = 0;
    std::uint64_t freeMib = 0;
    bool offline = false;
    bool unknown = false; // "?" figures: htools takes the node as offline
    std::string groupUuid;
    std::vector<std::string> tags;
};

enum class Mirror { None, Internal, External };

struct Instance {
    std::string name;
    std::uint64_t memMib = 0; // htools' mem + the cluster's memqos:vm-overhead
    std::string status; // htools' raw status: running, ADMIN_down, ...
    bool forthcoming = false;
    std::string pnode;
    std::string snode; // "" when none
    std::string diskTemplate;
    bool usesMemory() const;
    Mirror mirror() const;
    // Whether Ganeti 3.0's hbal may move it at all (htools'
    // Instance.movableDiskTemplates: drbd, blockdev, sharedfile, gluster,
    // rbd, ext). diskless, plain and file instances are never in its plan,
    // although hail relocates and evacuates diskless ones.
    bool hbalMovable() const;
};

struct Model {
    std::vector<Group> groups;
    std::vector<Node> nodes;
    std::vector<Instance> instances;
    std::vector<std::string> clusterTags;
    // The cluster's memqos:vm-overhead (memqosd's VMOverhead) in MiB, 0 when
    // not set; already added to every instance's memMib.
    std::uint64_t vmOverheadMib = 0;
};

// At most this much text (a 10 000-node cluster is ~2 MB).
inline constexpr std::size_t kMaxTextBytes = std::size_t{64} << 20;

// htools' text format (above). Errors name the section, line and field.
Result<Model> parseHtoolsText(std::string_view text);

// The text with every node under a memqos policy rewritten as for hail
// (htoolsMemory, with the file's n_mem as htools' nMem): t_mem and f_mem
// replaced, and with the cluster's memqos:vm-overhead every instance's mem
// grown by it; every other byte kept. `changes` as the iallocator reports them.
struct Rewritten {
    std::string text;
    std::vector<NodeChange> changes;
};
Result<Rewritten> rewriteHtoolsText(std::string_view text);

// What `memqos-cluster hbal` tells the operator before hbal runs: "" when
// hbal may move every instance, else one line naming the instances it
// never moves (at most 10 names, then "and N more") and why.
std::string hbalUnmovableNote(const Model& model);

// One node's memqosd figures, or why there are none.
struct NodeData {
    std::optional<double> memoryRatio;
    std::optional<std::uint64_t> nodeReservedBytes;
    std::optional<std::uint64_t> swapTotalBytes;
    std::optional<std::uint64_t> memoryTotalBytes;
    int returnCode = 0;
    std::string problem; // "" when the figures are usable
};

// gnt-cluster command's output (above). Lines that are not NAME=VALUE of a
// known property are kept as the node's problem text when the figures are
// incomplete. An error only when the text is not that format at all.
Result<std::map<std::string, NodeData, std::less<>>> parseNodeData(std::string_view text);

enum class Kind {
    OverCapacity,
    NotNPlus1,
    NoFailover,
    SwapInsufficient,
    OvercommittedBeyondSwap,
    PolicyDrift,
    NodeUnchecked,
};
// "over-capacity", "not-n-plus-1", "no-failover", "swap-insufficient",
// "overcommitted-beyond-swap", "policy-drift", "node-unchecked"
std::string_view toString(Kind k);
// error (exit 1), info (no effect), unchecked (exit 2)
enum class Severity { Error, Info, Unchecked };
std::string_view toString(Severity s);
Severity severityOf(Kind k);

struct Finding {
    Kind kind = Kind::OverCapacity;
    std::string node;   // the node the finding is about (the failed one for N+1)
    std::string group;  // its group's name
    std::string target; // N+1: the node that would be overfull ("" when none takes it)
    std::vector<std::string> instances;
    // Numbers, by name, in MiB unless the name ends in _bytes; ratios in millionths.
    std::vector<std::pair<std::string, std::uint64_t>> numbers;
    std::string message; // one line for people
};

struct NodeReport {
    std::string name;
    std::string group;
    bool offline = false;
    std::optional<NodePolicy> policy; // none: Ganeti's model
    std::uint64_t memNodeMib = 0;
    std::uint64_t availableMib = 0;
    std::uint64_t capacityMib = 0;
    std::uint64_t usedMib = 0;
    std::optional<std::uint64_t> swapTotalBytes;
    std::uint64_t swapRequiredBytes = 0;
    bool nPlus1 = true;
};

struct GroupReport {
    std::string name;
    std::string uuid;
    std::vector<std::string> nodes;
    std::vector<std::string> notNPlus1; // failed nodes whose instances do not fit
    std::uint64_t capacityMib = 0;
    std::uint64_t usedMib = 0;
};

struct Report {
    std::vector<NodeReport> nodes;
    std::vector<GroupReport> groups;
    std::vector<Finding> findings;
    int exitCode() const; // 2 if unchecked, else 1 if an error, else 0
};

// The checks above. nodeData: by node name; a missing online node is
// node-unchecked. Policy tags are parsed here: a malformed tag is an error.
Result<Report> verify(const Model& model,
                      const std::map<std::string, NodeData, std::less<>>& nodeData);

// One JSON document (pretty, two spaces) / lines for people.
std::string renderJson(const Report& report);
std::string renderText(const Report& report);

} // namespace memqos::ganeti::cluster

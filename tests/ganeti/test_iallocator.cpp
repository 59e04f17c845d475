// SPDX-License-Identifier: Apache-2.0
// The iallocator's rewrite of Ganeti's input for hail: the ratio applied,
// node tag over group tag over cluster tag, no tags = unchanged figures,
// and every malformed input an error (never an exception).

#include "memqos/core/types.hpp"
#include "memqos/ganeti/iallocator.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace memqos::ganeti {
namespace {

using Json = nlohmann::json;

// Two KVM nodes in one group as Ganeti 3.0.2 describes them (the fields
// hail reads; memory in MiB), one instance up on node1 and one down.
Json twoNodes() {
    return Json::parse(R"({
  "cluster_name": "cluster.example.test",
  "cluster_tags": [],
  "enabled_hypervisors": ["kvm"],
  "ipolicy": {},
  "nodegroups": {
    "uuid-g1": {"name": "default", "alloc_policy": "preferred", "networks": [],
                "ipolicy": {}, "tags": []}},
  "nodes": {
    "node1.example.test": {"tags": [], "group": "uuid-g1", "offline": false,
      "drained": false, "vm_capable": true, "master_candidate": true,
      "ndparams": {"exclusive_storage": false, "spindle_count": 1},
      "total_memory": 8192, "reserved_memory": 1200, "free_memory": 3000,
      "total_disk": 10240, "free_disk": 10240, "total_spindles": 1,
      "free_spindles": 1, "total_cpus": 4, "reserved_cpus": 1,
      "i_pri_memory": 3072, "i_pri_up_memory": 2048},
    "node2.example.test": {"tags": [], "group": "uuid-g1", "offline": false,
      "drained": false, "vm_capable": true, "master_candidate": true,
      "ndparams": {"exclusive_storage": false, "spindle_count": 1},
      "total_memory": 4096, "reserved_memory": 900, "free_memory": 3500,
      "total_disk": 10240, "free_disk": 10240, "total_spindles": 1,
      "free_spindles": 1, "total_cpus": 4, "reserved_cpus": 1,
      "i_pri_memory": 0, "i_pri_up_memory": 0}},
  "instances": {
    "inst1.example.test": {"tags": [], "admin_state": "up", "vcpus": 1,
      "memory": 2048, "spindle_use": 1, "os": "debootstrap",
      "nodes": ["node1.example.test"], "nics": [], "disks": [],
      "disk_template": "plain", "disks_active": true, "hypervisor": "kvm",
      "disk_space_total": 0},
    "inst2.example.test": {"tags": [], "admin_state": "down", "vcpus": 1,
      "memory": 1024, "spindle_use": 1, "os": "debootstrap",
      "nodes": ["node1.example.test"], "nics": [], "disks": [],
      "disk_template": "plain", "disks_active": false, "hypervisor": "kvm",
      "disk_space_total": 0}},
  "request": {"type": "allocate", "name": "new.example.test", "memory": 3000,
    "disks": [], "disk_template": "plain", "os": "debootstrap", "tags": [],
    "nics": [], "vcpus": 1, "spindle_use": 1, "required_nodes": 1,
    "disk_space_total": 0}
})");
}

Json transformed(const Json& input, const HailOptions& options = {}) {
    auto t = transformForHail(input.dump(), options);
    EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().what);
    if (!t.ok()) {
        return Json();
    }
    return Json::parse(t->json);
}

const Json& node(const Json& j, const char* name) {
    return j["nodes"][name];
}

// What hail computes as the node's free memory with nMem = its static KVM
// node memory: the smaller of Node.unallocatedMem and, for its strict pass,
// fMemForth (free_memory minus the down instances' memory).
std::int64_t hailFree(const Json& n, std::int64_t nMem, std::int64_t iMem,
                      std::int64_t downMem = 0) {
    const auto recorded = n["total_memory"].get<std::int64_t>() - nMem - iMem;
    const auto missing = recorded - n["free_memory"].get<std::int64_t>();
    const auto unallocated = recorded - std::max<std::int64_t>(0, missing);
    return std::min(unallocated, n["free_memory"].get<std::int64_t>() - downMem);
}

TEST(IAllocator, RatioOnTwoNodes) {
    auto in = twoNodes();
    in["cluster_tags"] = {"memqos:memory-ratio:1.5", "memqos:mem-node:1G"};
    const auto out = transformed(in);
    // node1: available 8192 − 1024 = 7168, capacity 10752; hail's nMem 4096.
    EXPECT_EQ(node(out, "node1.example.test")["total_memory"], 4096 + 10752 + 1);
    // inst2 (down, 1024) is added back: hail's strict pass would keep it.
    EXPECT_EQ(node(out, "node1.example.test")["free_memory"], 10752 + 1 - 2048 + 1024);
    EXPECT_EQ(node(out, "node1.example.test")["reserved_memory"], 1200);
    EXPECT_EQ(hailFree(node(out, "node1.example.test"), 4096, 2048, 1024), 10752 + 1 - 2048);
    // node2: available 3072, capacity 4608, no instance.
    EXPECT_EQ(node(out, "node2.example.test")["total_memory"], 4096 + 4608 + 1);
    EXPECT_EQ(hailFree(node(out, "node2.example.test"), 4096, 0), 4608 + 1);
    // Everything else is as Ganeti sent it.
    auto back = out;
    for (const char* n : {"node1.example.test", "node2.example.test"}) {
        back["nodes"][n]["total_memory"] = in["nodes"][n]["total_memory"];
        back["nodes"][n]["free_memory"] = in["nodes"][n]["free_memory"];
    }
    EXPECT_EQ(back, in);
}

TEST(IAllocator, ExactlyAtCapacityFitsOneMoreDoesNot) {
    auto in = twoNodes();
    in["cluster_tags"] = {"memqos:memory-ratio:1.0", "memqos:mem-node:1024M"};
    const auto out = transformed(in);
    // node1: capacity 7168, instances 2048: 5120 MiB fit (hail: free after
    // the placement 1 > 0), 5121 do not (0).
    const auto free = hailFree(node(out, "node1.example.test"), 4096, 2048, 1024);
    EXPECT_GT(free - 5120, 0);
    EXPECT_LE(free - 5121, 0);
}

// The cluster's memqos:vm-overhead (memqosd's VMOverhead) is part of every
// instance's memory: the recorded ones (hail's iMem), the one asked for,
// and so the capacity left is checked as the node's hook checks it
// (Σ (maxmem + overhead) + maxmem + overhead ≤ ratio · available).
TEST(IAllocator, VmOverheadIsPartOfEveryInstance) {
    auto in = twoNodes();
    in["cluster_tags"] = {"memqos:memory-ratio:1.0", "memqos:mem-node:1024M",
                          "memqos:vm-overhead:100M"};
    const auto out = transformed(in);
    EXPECT_EQ(out["instances"]["inst1.example.test"]["memory"], 2048 + 100);
    EXPECT_EQ(out["instances"]["inst2.example.test"]["memory"], 1024 + 100);
    EXPECT_EQ(out["request"]["memory"], 3000 + 100);
    // node1: capacity 7168, up instances 2148: an instance of m MiB fits
    // while 2148 + m + 100 ≤ 7168, so 4920 fits and 4921 does not.
    const auto free = hailFree(node(out, "node1.example.test"), 4096, 2148, 1124);
    EXPECT_GT(free - (4920 + 100), 0);
    EXPECT_LE(free - (4921 + 100), 0);

    auto multi = twoNodes();
    multi["cluster_tags"] = {"memqos:vm-overhead:64M"};
    multi["request"] = Json::parse(R"({"type": "multi-allocate", "instances": [
        {"name": "a", "memory": 512}, {"name": "b", "memory": 256}]})");
    const auto m = transformed(multi);
    EXPECT_EQ(m["request"]["instances"][0]["memory"], 512 + 64);
    EXPECT_EQ(m["request"]["instances"][1]["memory"], 256 + 64);
    // No ratio or mem-node tag: the nodes stay as Ganeti sent them.
    EXPECT_EQ(m["nodes"], multi["nodes"]);

    // On a node or node group it is an error: the overhead must not depend
    // on the node an instance is on.
    auto bad = twoNodes();
    bad["nodes"]["node2.example.test"]["tags"] = {"memqos:vm-overhead:64M"};
    auto r = transformForHail(bad.dump(), {});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().what.find("set memqos:vm-overhead on the cluster only"), std::string::npos)
        << r.error().what;
    bad = twoNodes();
    bad["nodegroups"]["uuid-g1"]["tags"] = {"memqos:vm-overhead:64M"};
    EXPECT_FALSE(transformForHail(bad.dump(), {}).ok());
    bad = twoNodes();
    bad["cluster_tags"] = {"memqos:vm-overhead:lots"};
    EXPECT_FALSE(transformForHail(bad.dump(), {}).ok());
}

TEST(IAllocator, StaticKvmNodeMemoryAndOtherHypervisors) {
    auto in = twoNodes();
    in["cluster_tags"] = {"memqos:memory-ratio:2"};
    // No mem-node tag: hail's own node memory, here --static-kvm-node-memory=0,
    // i.e. reserved_memory.
    auto out = transformed(in, HailOptions{.staticKvmNodeMemoryMib = 0});
    EXPECT_EQ(node(out, "node1.example.test")["total_memory"], 1200 + (8192 - 1200) * 2 + 1);
    in["enabled_hypervisors"] = {"xen-pvm", "kvm"};
    out = transformed(in);
    EXPECT_EQ(node(out, "node2.example.test")["total_memory"], 900 + (4096 - 900) * 2 + 1);
    EXPECT_EQ(hailFree(node(out, "node2.example.test"), 900, 0), (4096 - 900) * 2 + 1);
}

TEST(IAllocator, NodeTagOverGroupTagOverClusterTag) {
    auto in = twoNodes();
    in["cluster_tags"] = {"memqos:memory-ratio:3", "memqos:mem-node:2G"};
    in["nodegroups"]["uuid-g1"]["tags"] = {"memqos:memory-ratio:2", "other:tag"};
    in["nodes"]["node1.example.test"]["tags"] = {"memqos:memory-ratio:1.25"};
    auto t = transformForHail(in.dump());
    ASSERT_TRUE(t.ok()) << t.error().what;
    ASSERT_EQ(t->changes.size(), 2U);
    // std::map order: node1, node2.
    EXPECT_EQ(t->changes[0], (NodeChange{.node = "node1.example.test",
                                         .ratioMicro = 1'250'000,
                                         .memNodeMib = 2048,
                                         .capacityMib = (8192 - 2048) * 5 / 4,
                                         .instancesMib = 2048}));
    EXPECT_EQ(t->changes[1], (NodeChange{.node = "node2.example.test",
                                         .ratioMicro = 2'000'000,
                                         .memNodeMib = 2048,
                                         .capacityMib = (4096 - 2048) * 2,
                                         .instancesMib = 0}));
}

TEST(IAllocator, NoTagsLeaveTheInputUnchanged) {
    const auto in = twoNodes();
    auto t = transformForHail(in.dump());
    ASSERT_TRUE(t.ok()) << t.error().what;
    EXPECT_TRUE(t->changes.empty());
    EXPECT_EQ(Json::parse(t->json), in);
    // A tag on one node changes that node only.
    auto one = in;
    one["nodes"]["node2.example.test"]["tags"] = {"memqos:mem-node:512M"};
    const auto out = transformed(one);
    EXPECT_EQ(out["nodes"]["node1.example.test"], in["nodes"]["node1.example.test"]);
    EXPECT_EQ(node(out, "node2.example.test")["total_memory"], 4096 + (4096 - 512) + 1);
}

TEST(IAllocator, OfflineNodeAndNoAvailableMemory) {
    auto in = twoNodes();
    in["cluster_tags"] = {"memqos:mem-node:8G"};
    auto& off = in["nodes"]["node2.example.test"];
    off["offline"] = true;
    off.erase("total_memory");
    off.erase("free_memory");
    off.erase("reserved_memory");
    const auto out = transformed(in);
    EXPECT_EQ(out["nodes"]["node2.example.test"], off);
    // node1: mem_node 8192 ≥ total: nothing fits, not even 1 MiB.
    EXPECT_EQ(node(out, "node1.example.test")["total_memory"], 4096);
    EXPECT_LE(hailFree(node(out, "node1.example.test"), 4096, 2048, 1024) - 1, 0);
}

TEST(IAllocator, TagPolicyGrammar) {
    auto p = parseTagPolicy({"memqos:memory-ratio:1.5", "memqos:mem-node:1.5G", "memqos:class:x"},
                            "cluster");
    ASSERT_TRUE(p.ok()) << p.error().what;
    EXPECT_EQ(p->ratioMicro, 1'500'000U);
    EXPECT_EQ(p->memNodeMib, 1536U);
    p = parseTagPolicy({"memqos:mem-node:1000000"}, "cluster"); // bytes, rounded up
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->memNodeMib, 1U);
    EXPECT_EQ(parseTagPolicy({}, "cluster").value(), TagPolicy{});
    for (const auto* bad :
         {"memqos:memory-ratio:", "memqos:memory-ratio", "memqos:memory-ratio:0.5",
          "memqos:memory-ratio:abc", "memqos:memory-ratio:101",
          "memqos:mem-node:", "memqos:mem-node", "memqos:mem-node:10%", "memqos:mem-node:max",
          "memqos:mem-node:-1G", "memqos:mem-node:1Q"}) {
        auto r = parseTagPolicy({bad}, "node n1");
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_NE(r.error().what.find("node n1"), std::string::npos) << r.error().what;
    }
    auto r = parseTagPolicy({"memqos:memory-ratio:1.5", "memqos:memory-ratio:2"}, "cluster");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().what.find("disagree"), std::string::npos);
}

TEST(IAllocator, HailOptions) {
    EXPECT_EQ(hailOptionsFromArgs({}).value().staticKvmNodeMemoryMib, 4096);
    EXPECT_EQ(
        hailOptionsFromArgs({"--static-kvm-node-memory=0", "--x"}).value().staticKvmNodeMemoryMib,
        0);
    EXPECT_EQ(
        hailOptionsFromArgs({"--static-kvm-node-memory", "512", "--static-kvm-node-memory=1024"})
            .value()
            .staticKvmNodeMemoryMib,
        1024);
    EXPECT_FALSE(hailOptionsFromArgs({"--static-kvm-node-memory=1G"}).ok());
    EXPECT_FALSE(hailOptionsFromArgs({"--static-kvm-node-memory"}).ok());
    EXPECT_FALSE(hailOptionsFromArgs({"--static-kvm-node-memory=99999999999"}).ok());
}

TEST(IAllocator, MalformedInputIsAnErrorNeverAnException) {
    std::vector<std::string> inputs = {"",         "{",
                                       "[]",       "null",
                                       "42",       "{\"request\":1}",
                                       "\xff\xfe", R"({"request":{"type":"allocate"}})"};
    const auto mutate = [](auto&& f) {
        auto j = twoNodes();
        j["cluster_tags"] = {"memqos:memory-ratio:1.5"};
        f(j);
        return j.dump();
    };
    inputs.push_back(mutate([](Json& j) { j["request"]["type"] = "bogus"; }));
    inputs.push_back(mutate([](Json& j) { j["request"].erase("type"); }));
    inputs.push_back(mutate([](Json& j) { j.erase("request"); }));
    inputs.push_back(mutate([](Json& j) { j.erase("nodes"); }));
    inputs.push_back(mutate([](Json& j) { j.erase("nodegroups"); }));
    inputs.push_back(mutate([](Json& j) { j.erase("instances"); }));
    inputs.push_back(mutate([](Json& j) { j.erase("cluster_tags"); }));
    inputs.push_back(mutate([](Json& j) { j.erase("enabled_hypervisors"); }));
    inputs.push_back(mutate([](Json& j) { j["cluster_tags"] = {1}; }));
    inputs.push_back(mutate([](Json& j) { j["cluster_tags"] = {"memqos:memory-ratio:x"}; }));
    inputs.push_back(mutate([](Json& j) { j["nodegroups"]["uuid-g1"]["tags"] = "a"; }));
    inputs.push_back(
        mutate([](Json& j) { j["nodegroups"]["uuid-g1"]["tags"] = {"memqos:mem-node:lots"}; }));
    inputs.push_back(mutate([](Json& j) { j["nodegroups"]["uuid-g1"] = 3; }));
    inputs.push_back(mutate([](Json& j) { j["nodes"]["node1.example.test"]["group"] = "x"; }));
    inputs.push_back(mutate([](Json& j) { j["nodes"]["node1.example.test"].erase("group"); }));
    inputs.push_back(mutate([](Json& j) { j["nodes"]["node1.example.test"]["tags"] = {2}; }));
    inputs.push_back(
        mutate([](Json& j) { j["nodes"]["node1.example.test"].erase("total_memory"); }));
    inputs.push_back(
        mutate([](Json& j) { j["nodes"]["node1.example.test"]["free_memory"] = "3000"; }));
    inputs.push_back(
        mutate([](Json& j) { j["nodes"]["node1.example.test"]["reserved_memory"] = -1; }));
    inputs.push_back(
        mutate([](Json& j) { j["nodes"]["node1.example.test"]["total_memory"] = 1e300; }));
    inputs.push_back(mutate([](Json& j) { j["nodes"]["node1.example.test"] = nullptr; }));
    inputs.push_back(mutate([](Json& j) { j["instances"]["inst1.example.test"]["nodes"] = {}; }));
    inputs.push_back(mutate([](Json& j) { j["instances"]["inst1.example.test"].erase("memory"); }));
    inputs.push_back(mutate([](Json& j) { j["instances"]["inst1.example.test"]["memory"] = -5; }));
    inputs.push_back(mutate([](Json& j) {
        Json deep = Json::array();
        for (int i = 0; i < 100; ++i) {
            deep = Json::array({deep});
        }
        j["request"]["extra"] = deep;
    }));
    for (const auto& text : inputs) {
        Result<Transformed> r = invalid("not run");
        EXPECT_NO_THROW(r = transformForHail(text)) << text;
        ASSERT_FALSE(r.ok()) << text;
        EXPECT_FALSE(r.error().what.empty());
        EXPECT_LT(r.error().what.size(), 400U) << r.error().what;
    }
}

TEST(IAllocator, EveryRequestTypeOfGaneti302) {
    for (const auto* type : {"allocate", "allocate-secondary", "change-group", "multi-allocate",
                             "node-evacuate", "relocate"}) {
        auto in = twoNodes();
        in["request"] = {{"type", type}};
        EXPECT_TRUE(transformForHail(in.dump()).ok()) << type;
    }
}

// `gnt-instance failover|migrate -I` (relocate) and `gnt-node evacuate -I`
// (node-evacuate) as Ganeti 3.0.2 sends them for a diskless instance up on a
// node where it is overcommitted: Ganeti's free_memory is the hypervisor's
// free memory minus (maxmem - running memory) of each up instance
// (iallocator.py _ComputeInstanceMemory), below 0 here (the two-node bed:
// inst5, maxmem 2359, runs with 2200 of node1's 2300 MiB free). memqos
// takes it, and rewrites the nodes as for an allocation: the instance
// counts on its primary, the target's room is its capacity.
TEST(IAllocator, RelocateAndNodeEvacuateFromAnOvercommittedNode) {
    auto in = twoNodes();
    in["cluster_tags"] = {"memqos:memory-ratio:2", "memqos:mem-node:256M"};
    in["enabled_hypervisors"] = {"fake"};
    auto& n1 = in["nodes"]["node1.example.test"];
    n1["total_memory"] = 2465;
    n1["reserved_memory"] = 234;
    n1["free_memory"] = 2300 - 2200 - (2359 - 2200); // -59
    auto& n2 = in["nodes"]["node2.example.test"];
    n2["total_memory"] = 1964;
    n2["reserved_memory"] = 278;
    n2["free_memory"] = 1686;
    in["instances"] = Json::parse(R"({"inst5.example.test": {"tags": [], "admin_state": "up",
      "admin_state_source": "admin", "vcpus": 1, "memory": 2359, "spindle_use": 1,
      "os": "noop", "nodes": ["node1.example.test"], "nics": [], "disks": [],
      "disk_template": "diskless", "disks_active": true, "hypervisor": "fake",
      "disk_space_total": 0}})");
    const Json relocate = {{"type", "relocate"},
                           {"name", "inst5.example.test"},
                           {"disk_space_total", 0},
                           {"required_nodes", 1},
                           {"relocate_from", {"node1.example.test"}}};
    const Json evacuate = {{"type", "node-evacuate"},
                           {"instances", {"inst5.example.test"}},
                           {"evac_mode", "primary-only"}};
    for (const auto& request : {relocate, evacuate}) {
        in["request"] = request;
        const auto out = transformed(in);
        // node1: capacity (2465 - 256) * 2 = 4418, inst5 up on it.
        EXPECT_EQ(node(out, "node1.example.test")["total_memory"], 234 + 4418 + 1);
        EXPECT_EQ(node(out, "node1.example.test")["free_memory"], 4418 + 1 - 2359);
        // node2, the target: capacity 3416; hail sees room for inst5 there
        // (it saw 1686 MiB free).
        EXPECT_EQ(node(out, "node2.example.test")["total_memory"], 278 + 3416 + 1);
        EXPECT_GT(hailFree(node(out, "node2.example.test"), 278, 0) - 2359, 0);
        EXPECT_LE(hailFree(n2, 278, 0) - 2359, 0);
        EXPECT_EQ(out["request"], request);
    }
    // Below -2^32 MiB it is an error, as any figure out of range.
    n1["free_memory"] = -5'000'000'000;
    EXPECT_FALSE(transformForHail(in.dump()).ok());
    n1["free_memory"] = -59.5;
    EXPECT_TRUE(transformForHail(in.dump()).ok());
}

TEST(IAllocator, FailureReply) {
    const auto reply = Json::parse(failureReply("bad \"tag\"\n\xff"));
    EXPECT_EQ(reply["success"], false);
    EXPECT_EQ(reply["result"], Json::array());
    EXPECT_EQ(reply["info"].get<std::string>(), "memqos: bad \"tag\"\n?");
}

// Ganeti showed "\u2265" of a config message as "e": the reply is ASCII.
TEST(IAllocator, FailureReplyIsAscii) {
    const std::string text = failureReply("ratio \u2265 1.0, 2 \u00d7 3 \u2212 1 \u2026 \u00e9");
    for (const char c : text) {
        EXPECT_LT(static_cast<unsigned char>(c), 0x80) << text;
    }
    EXPECT_EQ(Json::parse(text)["info"].get<std::string>(),
              "memqos: ratio >= 1.0, 2 x 3 - 1 ... ?");
}

TEST(Policy, RatioText) {
    EXPECT_EQ(ratioText(1'500'000), "1.5");
    EXPECT_EQ(ratioText(2'000'000), "2");
    EXPECT_EQ(ratioText(1'333'333), "1.333333");
    EXPECT_EQ(ratioText(1'050'000), "1.05");
    EXPECT_EQ(ratioText(1'500'000, true), "1.500000");
    EXPECT_EQ(ratioText(2'000'000, true), "2.000000");
    EXPECT_EQ(ratioMicro(1.5), 1'500'000U);
    EXPECT_EQ(ratioMicro(0.0), 0U);
}

TEST(Policy, DriftNamesWhatDiffers) {
    const NodePolicy tags{1'500'000, 768};
    EXPECT_EQ(policyDrift(tags, 1.5, 768 * kMiB), "");
    EXPECT_EQ(policyDrift(tags, 1.5, 768 * kMiB - 1), "") << "rounded up to whole MiB";
    EXPECT_EQ(policyDrift(tags, 2.0, 768 * kMiB), "memqosd's MemoryRatio 2 but the tags say 1.5");
    EXPECT_EQ(policyDrift(tags, 1.5, 512 * kMiB),
              "memqosd's NodeReserved 536870912 bytes but the tags say 768 MiB");
    EXPECT_EQ(policyDrift(NodePolicy{1'500'000, std::nullopt}, 1.5, 1), "")
        << "no mem-node tag: NodeReserved is not compared";
    TagPolicy cluster;
    EXPECT_EQ(vmOverheadDrift(cluster, 5), "") << "no vm-overhead tag";
    cluster.vmOverheadMib = 100;
    EXPECT_EQ(vmOverheadDrift(cluster, 100 * kMiB), "");
    EXPECT_EQ(vmOverheadDrift(cluster, 0), "memqosd's VMOverhead 0 bytes but the tags say 100 MiB");
}

} // namespace
} // namespace memqos::ganeti

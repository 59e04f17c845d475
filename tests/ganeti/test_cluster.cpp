// SPDX-License-Identifier: Apache-2.0
// memqos-cluster's pure part: htools' text format, gnt-cluster command's
// output, the rewrite for hbal/hcheck and verify's checks.
#include "memqos/ganeti/cluster.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace memqos::ganeti::cluster {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

// A text file as hscan writes it (Text.hs serializeCluster), two nodes in
// group "default" under the cluster tags ratio 1.5 and mem_node 1G:
// available 3072 MiB, capacity 4608 MiB each.
//   node1: inst1 1024 drbd (secondary node2), inst2 1024 plain: used 2048
//   node2: inst3 3000 drbd (secondary node1), inst4 512 drbd down: used 3000
// node2 fails: node1 gets 3000 on 2048 = 5048 > 4608 (not N+1);
// node1 fails: node2 gets 1024 on 3000 = 4024 (fine; inst2 cannot move).
std::string groups(std::string_view tags = "") {
    return "default|uuid-g1|preferred|" + std::string(tags) + "|\n";
}
std::string node(std::string_view name, int total, int nodeMem, std::string_view offline = "N",
                 std::string_view tags = "", std::string_view group = "uuid-g1") {
    return std::string(name) + "|" + std::to_string(total) + "|" + std::to_string(nodeMem) +
           "|1000|102400|51200|4|" + std::string(offline) + "|" + std::string(group) + "|1|" +
           std::string(tags) + "|N|1|4|1.000000\n";
}
std::string inst(std::string_view name, int mem, std::string_view status, std::string_view p,
                 std::string_view s, std::string_view dt, std::string_view forth = "N") {
    return std::string(name) + "|" + std::to_string(mem) + "|1024|1|" + std::string(status) +
           "|Y|" + std::string(p) + "|" + std::string(s) + "|" + std::string(dt) + "||1|-|" +
           std::string(forth) + "\n";
}
constexpr std::string_view kPolicies =
    "|128,1,1024,1,1,1|32,1,1024,1,1,1;8192,8,1048576,16,8,12|drbd,plain,diskless|4.0|32.0\n"
    "default|128,1,1024,1,1,1|32,1,1024,1,1,1;8192,8,1048576,16,8,12|drbd,plain,diskless|4.0|"
    "32.0\n";

std::string cluster(const std::string& nodes, const std::string& instances,
                    std::string_view clusterTags = "memqos:memory-ratio:1.5\nmemqos:mem-node:1G\n",
                    const std::string& groupLines = groups()) {
    return groupLines + "\n" + nodes + "\n" + instances + "\n" + std::string(clusterTags) + "\n" +
           std::string(kPolicies);
}

std::string pairNodes() {
    return node("node1", 4096, 900) + node("node2", 4096, 900);
}
std::string pairInstances() {
    return inst("inst1", 1024, "running", "node1", "node2", "drbd") +
           inst("inst2", 1024, "running", "node1", "", "plain") +
           inst("inst3", 3000, "running", "node2", "node1", "drbd") +
           inst("inst4", 512, "ADMIN_down", "node2", "node1", "drbd");
}

std::string nodeBlock(std::string_view name, std::string_view ratio, std::uint64_t reserved,
                      std::uint64_t swap, int rc = 0) {
    return "------------------------------------------------\nnode: " + std::string(name) +
           "\nMemoryRatio=" + std::string(ratio) + "\nNodeReserved=" + std::to_string(reserved) +
           "\nSwapTotal=" + std::to_string(swap) +
           "\nMemoryTotal=4294967296\n\nreturn code = " + std::to_string(rc) + "\n";
}
// Swap enough for ratio 1.5 on 3072 MiB: 1536 MiB.
std::string goodNodes() {
    return nodeBlock("node1", "1.5", 1024 * kMiB, 2048 * kMiB) +
           nodeBlock("node2", "1.5", 1024 * kMiB, 2048 * kMiB);
}

Model parsed(const std::string& text) {
    auto m = parseHtoolsText(text);
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().what);
    return m.ok() ? *m : Model{};
}
std::map<std::string, NodeData, std::less<>> nodeData(const std::string& text) {
    auto d = parseNodeData(text);
    EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().what);
    return d.ok() ? *d : std::map<std::string, NodeData, std::less<>>{};
}
Report verified(const std::string& text, const std::string& nodes) {
    auto r = verify(parsed(text), nodeData(nodes));
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().what);
    return r.ok() ? *r : Report{};
}
std::vector<const Finding*> findings(const Report& r, Kind kind) {
    std::vector<const Finding*> out;
    for (const auto& f : r.findings) {
        if (f.kind == kind) {
            out.push_back(&f);
        }
    }
    return out;
}
const NodeReport& nodeReport(const Report& r, std::string_view name) {
    for (const auto& n : r.nodes) {
        if (n.name == name) {
            return n;
        }
    }
    static const NodeReport none;
    ADD_FAILURE() << "no node " << name;
    return none;
}

TEST(ClusterText, ParsesHscansFormat) {
    const auto m = parsed(
        cluster(pairNodes() + node("node3", 0, 0, "Y", "a,b"),
                pairInstances() + inst("inst5", 256, "running", "node3", "", "diskless", "Y")));
    ASSERT_EQ(m.groups.size(), 1U);
    EXPECT_EQ(m.groups[0].name, "default");
    EXPECT_EQ(m.groups[0].uuid, "uuid-g1");
    ASSERT_EQ(m.nodes.size(), 3U);
    EXPECT_EQ(m.nodes[0].totalMib, 4096U);
    EXPECT_EQ(m.nodes[0].nodeMib, 900U);
    EXPECT_EQ(m.nodes[0].freeMib, 1000U);
    EXPECT_FALSE(m.nodes[0].offline);
    EXPECT_TRUE(m.nodes[2].offline);
    EXPECT_EQ(m.nodes[2].tags, (std::vector<std::string>{"a", "b"}));
    ASSERT_EQ(m.instances.size(), 5U);
    EXPECT_EQ(m.instances[0].snode, "node2");
    EXPECT_EQ(m.instances[1].snode, "");
    EXPECT_TRUE(m.instances[0].usesMemory());
    EXPECT_FALSE(m.instances[3].usesMemory()); // ADMIN_down
    EXPECT_TRUE(m.instances[4].forthcoming);
    EXPECT_FALSE(m.instances[4].usesMemory());
    EXPECT_EQ(m.instances[0].mirror(), Mirror::Internal);
    EXPECT_EQ(m.instances[1].mirror(), Mirror::None);
    EXPECT_EQ(m.instances[4].mirror(), Mirror::External);
    EXPECT_EQ(m.clusterTags,
              (std::vector<std::string>{"memqos:memory-ratio:1.5", "memqos:mem-node:1G"}));
}

TEST(ClusterText, HbalMovesOnlyTheDiskTemplatesHtoolsMoves) {
    // Ganeti 3.0.2 htools: Instance.movableDiskTemplates. On the two-node bed
    // (diskless instances only) hbal found no solution, plain or rewritten.
    for (const char* dt : {"drbd", "blockdev", "sharedfile", "gluster", "rbd", "ext"}) {
        Instance i;
        i.diskTemplate = dt;
        EXPECT_TRUE(i.hbalMovable()) << dt;
    }
    for (const char* dt : {"diskless", "plain", "file", "", "DRBD"}) {
        Instance i;
        i.diskTemplate = dt;
        EXPECT_FALSE(i.hbalMovable()) << dt;
    }
    const auto m = parsed(cluster(
        pairNodes(), pairInstances() + inst("inst5", 256, "running", "node1", "", "diskless")));
    EXPECT_EQ(hbalUnmovableNote(m),
              "memqos-cluster: note: hbal moves no instance of disk template diskless, plain or "
              "file (Ganeti 3.0's htools move only drbd, blockdev, sharedfile, gluster, rbd and "
              "ext); 2 of 5 instance(s) stay where they are: inst2 (plain), inst5 (diskless). "
              "Move those with gnt-instance failover/migrate -I memqos or gnt-node evacuate -I "
              "memqos");
    std::string many;
    for (int k = 0; k < 12; ++k) {
        many += inst("d" + std::to_string(k), 128, "running", "node1", "", "diskless");
    }
    const auto note = hbalUnmovableNote(parsed(cluster(pairNodes(), many)));
    EXPECT_NE(note.find("12 of 12 instance(s)"), std::string::npos) << note;
    EXPECT_NE(note.find("d9 (diskless) and 2 more."), std::string::npos) << note;
    EXPECT_EQ(note.find("d10"), std::string::npos) << note;
    const auto drbdOnly = parsed(cluster(
        pairNodes(), inst("inst1", 1024, "running", "node1", "node2", "drbd")));
    EXPECT_EQ(hbalUnmovableNote(drbdOnly), "");
}

TEST(ClusterText, AcceptsShortLinesUnknownFiguresAndNoInstances) {
    // 9-field node (htools' oldest), "?" figures (htools: offline), no instances.
    const auto m = parsed("g|u|preferred|\n\nn1|?|?|?|?|?|?|N|u\nn2|2048|512|100|1|1|1|M|u\n"
                          "\n\n\n");
    ASSERT_EQ(m.nodes.size(), 2U);
    EXPECT_TRUE(m.nodes[0].unknown);
    EXPECT_FALSE(m.nodes[1].offline); // M: the master
    EXPECT_TRUE(m.instances.empty());
}

TEST(ClusterText, RefusesMalformedInput) {
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"", "sections"},
        {"g|u|preferred|\n\nn1|1|1|1|1|1|1|N|u\n", "sections"},
        {cluster(node("n1", 1, 1, "N", "", "nope"), ""), "unknown node group nope"},
        {cluster(node("n1", 1, 1, "X"), ""), "offline field"},
        {cluster(node("n1", 1, 1) + node("n1", 1, 1), ""), "given twice"},
        {cluster(pairNodes(), inst("i", 1, "running", "node9", "", "plain")),
         "unknown primary node node9"},
        {cluster(pairNodes(), inst("i", 1, "running", "node1", "node9", "drbd")),
         "unknown secondary node node9"},
        {cluster(pairNodes(), inst("i", 1, "running", "node1", "", "plain", "maybe")),
         "forthcoming"},
        {cluster(pairNodes(), "i|-5|1|1|running|Y|node1||plain|\n"), "instance i: mem"},
        {cluster("n1|99999999999|1|1|1|1|1|N|uuid-g1\n", ""), "t_mem"},
        {cluster("n1|1\n", ""), "fewer than 9 fields"},
    };
    for (const auto& [text, what] : bad) {
        auto m = parseHtoolsText(text);
        ASSERT_FALSE(m.ok()) << text;
        EXPECT_NE(m.error().what.find(what), std::string::npos) << m.error().what;
    }
}

TEST(ClusterText, RewriteChangesOnlyPolicyNodesMemory) {
    // node3 has no policy: its group "other" and the cluster have no tags.
    const std::string text = cluster(
        pairNodes() + node("node3", 8192, 1024, "N", "", "uuid-g2"), pairInstances(), "",
        groups("memqos:memory-ratio:1.5,memqos:mem-node:1G") + "other|uuid-g2|preferred||\n");
    auto r = rewriteHtoolsText(text);
    ASSERT_TRUE(r.ok()) << r.error().what;
    // node1: available 4096 − 1024 = 3072, capacity 4608, t_mem' = n_mem 900 +
    // 4609, f_mem' = 4609 − 2048 used + 0 down.
    EXPECT_NE(r->text.find("\nnode1|5509|900|2561|102400|51200|4|N|uuid-g1|1||N|1|4|1.000000\n"),
              std::string::npos)
        << r->text;
    // node2: used 3000, down 512: f_mem' = 4609 − 3000 + 512.
    EXPECT_NE(r->text.find("\nnode2|5509|900|2121|"), std::string::npos) << r->text;
    EXPECT_NE(r->text.find(node("node3", 8192, 1024, "N", "", "uuid-g2")), std::string::npos);
    ASSERT_EQ(r->changes.size(), 2U);
    EXPECT_EQ(r->changes[0], (NodeChange{.node = "node1",
                                         .ratioMicro = 1'500'000,
                                         .memNodeMib = 1024,
                                         .capacityMib = 4608,
                                         .instancesMib = 2048}));
    // Everything but the two node lines is kept byte for byte.
    auto original = text;
    const auto a = original.find("node1|");
    original.replace(a, original.find('\n', a) - a, r->text.substr(a, r->text.find('\n', a) - a));
    const auto b = original.find("node2|");
    const auto rb = r->text.find("node2|");
    original.replace(b, original.find('\n', b) - b,
                     r->text.substr(rb, r->text.find('\n', rb) - rb));
    EXPECT_EQ(original, r->text);
    // The result parses again, as htools would.
    EXPECT_TRUE(parseHtoolsText(r->text).ok());
}

TEST(ClusterText, RewriteAgreesWithTheIallocatorsFormula) {
    const NodePolicy p{.ratioMicro = 2'000'000, .memNodeMib = 1024};
    const auto m = htoolsMemory(4096, 900, p, 1000, 200);
    EXPECT_EQ(m.availableMib, 3072U);
    EXPECT_EQ(m.capacityMib, 6144U);
    EXPECT_EQ(m.totalMib, 900U + 6145U);
    EXPECT_EQ(m.freeMib, 6145U - 1000U + 200U);
    // No available memory: nothing fits, no +1.
    const auto z = htoolsMemory(512, 900, p, 0, 0);
    EXPECT_EQ(z.capacityMib, 0U);
    EXPECT_EQ(z.totalMib, 900U);
    EXPECT_EQ(z.freeMib, 0U);
}

TEST(ClusterText, RewriteRefusesMalformedTags) {
    auto r = rewriteHtoolsText(cluster(pairNodes(), "", "memqos:memory-ratio:lots\n"));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().what.find("cluster: tag memqos:memory-ratio:lots"), std::string::npos)
        << r.error().what;
}

// The cluster's memqos:vm-overhead is part of every instance's memory: in
// the rewritten file (so hbal and hcheck count it) and in verify's sums.
TEST(ClusterText, VmOverheadGrowsEveryInstance) {
    const std::string tags = "memqos:memory-ratio:1.5\nmemqos:mem-node:1G\nmemqos:vm-overhead:100M\n";
    auto r = rewriteHtoolsText(cluster(pairNodes(), pairInstances(), tags));
    ASSERT_TRUE(r.ok()) << r.error().what;
    EXPECT_NE(r->text.find("\ninst1|1124|1024|"), std::string::npos) << r->text;
    EXPECT_NE(r->text.find("\ninst4|612|1024|"), std::string::npos) << r->text;
    // node1: up instances 1124 + 1124; f_mem' = 4609 − 2248.
    EXPECT_NE(r->text.find("\nnode1|5509|900|2361|"), std::string::npos) << r->text;
    EXPECT_EQ(r->changes[0].instancesMib, 2248U);
    EXPECT_TRUE(parseHtoolsText(r->text).ok());

    // verify: node2 fails, node1 gets inst3 (3100) on top of 2248.
    const auto v = verified(cluster(pairNodes(), pairInstances(), tags), goodNodes());
    const auto n1 = findings(v, Kind::NotNPlus1);
    ASSERT_EQ(n1.size(), 1U);
    EXPECT_EQ(n1[0]->message, "not N+1 redundant: if node2 fails, node1 gets 3100 MiB (inst3) on "
                              "top of 2248 MiB: 5348 MiB > capacity 4608 MiB");

    // Not on a node or a group.
    auto bad = rewriteHtoolsText(
        cluster(node("node1", 4096, 900, "N", "memqos:vm-overhead:64M") + node("node2", 4096, 900),
                pairInstances()));
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().what.find("set memqos:vm-overhead on the cluster only"),
              std::string::npos)
        << bad.error().what;
}

TEST(NodeData, ParsesGntClusterCommandOutput) {
    const auto d =
        nodeData(goodNodes() + "------------------------------------------------\nnode: node3\n"
                               "ssh: connect to host node3 port 22: No route to host\n"
                               "return code = 255\n");
    ASSERT_EQ(d.size(), 3U);
    const auto& n1 = d.at("node1");
    EXPECT_EQ(n1.memoryRatio, 1.5);
    EXPECT_EQ(n1.nodeReservedBytes, 1024 * kMiB);
    EXPECT_EQ(n1.swapTotalBytes, 2048 * kMiB);
    EXPECT_EQ(n1.memoryTotalBytes, 4294967296U);
    EXPECT_EQ(n1.problem, "");
    const auto& n3 = d.at("node3");
    EXPECT_EQ(n3.returnCode, 255);
    EXPECT_NE(n3.problem.find("exited with status 255"), std::string::npos) << n3.problem;
    EXPECT_NE(n3.problem.find("No route to host"), std::string::npos) << n3.problem;
}

TEST(NodeData, IncompleteFiguresAreTheNodesProblem) {
    const auto d = nodeData("------------------------------------------------\nnode: n1\n"
                            "MemoryRatio=1.5\nFailed to connect to bus: No such file\n"
                            "return code = 0\n");
    EXPECT_NE(d.at("n1").problem.find("no NodeReserved"), std::string::npos) << d.at("n1").problem;
    EXPECT_NE(d.at("n1").problem.find("Failed to connect"), std::string::npos);
    EXPECT_TRUE(nodeData("").empty());
}

TEST(NodeData, RefusesWhatIsNotThatFormat) {
    for (const std::string& text :
         {std::string("node1: MemoryRatio=1.5\n"),
          std::string("------------------------------------------------\nMemoryRatio=1\n"),
          std::string("------------------------------------------------\nnode: a\nX=1\n"),
          std::string("------------------------------------------------\nnode: a\n"
                      "return code = x\n"),
          nodeBlock("a", "1", 0, 0) + nodeBlock("a", "1", 0, 0)}) {
        auto d = parseNodeData(text);
        EXPECT_FALSE(d.ok()) << text;
    }
}

TEST(Verify, NotNPlus1NamesTheNodeTargetAndInstances) {
    const auto r = verified(cluster(pairNodes(), pairInstances()), goodNodes());
    const auto n1 = findings(r, Kind::NotNPlus1);
    ASSERT_EQ(n1.size(), 1U);
    EXPECT_EQ(n1[0]->node, "node2");
    EXPECT_EQ(n1[0]->group, "default");
    EXPECT_EQ(n1[0]->target, "node1");
    EXPECT_EQ(n1[0]->instances, (std::vector<std::string>{"inst3"}));
    EXPECT_EQ(n1[0]->numbers,
              (std::vector<std::pair<std::string, std::uint64_t>>{
                  {"target_used_mib", 2048}, {"moved_mib", 3000}, {"target_capacity_mib", 4608}}));
    EXPECT_EQ(n1[0]->message, "not N+1 redundant: if node2 fails, node1 gets 3000 MiB (inst3) on "
                              "top of 2048 MiB: 5048 MiB > capacity 4608 MiB");
    EXPECT_TRUE(nodeReport(r, "node1").nPlus1);
    EXPECT_FALSE(nodeReport(r, "node2").nPlus1);
    ASSERT_EQ(r.groups.size(), 1U);
    EXPECT_EQ(r.groups[0].notNPlus1, (std::vector<std::string>{"node2"}));
    EXPECT_EQ(r.groups[0].capacityMib, 9216U);
    EXPECT_EQ(r.groups[0].usedMib, 5048U);
    // The plain instance cannot fail over: said, as info.
    const auto nf = findings(r, Kind::NoFailover);
    ASSERT_EQ(nf.size(), 1U);
    EXPECT_EQ(nf[0]->instances, (std::vector<std::string>{"inst2"}));
    EXPECT_EQ(r.exitCode(), 1);
}

TEST(Verify, NPlus1HoldsWhenTheSecondaryHasRoom) {
    // inst3 of 2000: node1 ends with 2048 + 2000 = 4048 ≤ 4608.
    const auto r = verified(
        cluster(pairNodes(), inst("inst1", 1024, "running", "node1", "node2", "drbd") +
                                 inst("inst3", 2000, "running", "node2", "node1", "drbd") +
                                 inst("inst4", 3000, "ADMIN_down", "node2", "node1", "drbd")),
        goodNodes());
    EXPECT_TRUE(r.findings.empty()) << renderText(r);
    EXPECT_EQ(r.exitCode(), 0);
    EXPECT_EQ(nodeReport(r, "node1").capacityMib, 4608U);
    EXPECT_EQ(nodeReport(r, "node2").usedMib, 2000U); // the down one does not count
    EXPECT_EQ(nodeReport(r, "node1").swapRequiredBytes, 1536 * kMiB);
}

TEST(Verify, OverCapacity) {
    const auto r = verified(
        cluster(pairNodes(), inst("big", 5000, "running", "node1", "", "plain")), goodNodes());
    const auto f = findings(r, Kind::OverCapacity);
    ASSERT_EQ(f.size(), 1U);
    EXPECT_EQ(f[0]->node, "node1");
    EXPECT_EQ(f[0]->message, "up instances 5000 MiB > capacity 4608 MiB");
}

TEST(Verify, SwapShort) {
    // 1536 MiB needed; 1535 MiB is short, on node2 only.
    const auto r =
        verified(cluster(pairNodes(), ""), nodeBlock("node1", "1.5", 1024 * kMiB, 1536 * kMiB) +
                                               nodeBlock("node2", "1.5", 1024 * kMiB, 1535 * kMiB));
    const auto f = findings(r, Kind::SwapInsufficient);
    ASSERT_EQ(f.size(), 1U);
    EXPECT_EQ(f[0]->node, "node2");
    EXPECT_EQ(f[0]->numbers[0],
              (std::pair<std::string, std::uint64_t>{"swap_total_bytes", 1535 * kMiB}));
    EXPECT_EQ(f[0]->numbers[1],
              (std::pair<std::string, std::uint64_t>{"swap_required_bytes", 1536 * kMiB}));
    EXPECT_EQ(r.exitCode(), 1);
}

TEST(Verify, AvailablePlusSwapBelowUsed) {
    // ratio 3 (capacity 9216), used 4000 on 3072 available with 512 MiB of swap
    // (also short of the 6144 MiB ratio 3 wants).
    const auto r = verified(cluster(pairNodes(), inst("big", 4000, "running", "node1", "", "plain"),
                                    "memqos:memory-ratio:3\nmemqos:mem-node:1G\n"),
                            nodeBlock("node1", "3", 1024 * kMiB, 512 * kMiB) +
                                nodeBlock("node2", "3", 1024 * kMiB, 8192 * kMiB));
    const auto f = findings(r, Kind::OvercommittedBeyondSwap);
    ASSERT_EQ(f.size(), 1U);
    EXPECT_EQ(f[0]->node, "node1");
    EXPECT_EQ(f[0]->message, "available 3072 MiB + swap 536870912 bytes < up instances 4000 MiB");
    EXPECT_EQ(findings(r, Kind::SwapInsufficient).size(), 1U);
    EXPECT_TRUE(findings(r, Kind::OverCapacity).empty());
}

TEST(Verify, PolicyDrift) {
    // node1: ratio 2 in memqosd; node2: NodeReserved 512M; a NodeReserved
    // that rounds up to the tag's 1024 MiB is no drift.
    const auto r =
        verified(cluster(pairNodes(), ""), nodeBlock("node1", "2", 1024 * kMiB - 1, 4096 * kMiB) +
                                               nodeBlock("node2", "1.5", 512 * kMiB, 4096 * kMiB));
    const auto f = findings(r, Kind::PolicyDrift);
    ASSERT_EQ(f.size(), 2U);
    EXPECT_EQ(f[0]->node, "node1");
    EXPECT_EQ(f[0]->message, "policy drift: memqosd's MemoryRatio 2 but the tags say 1.5 (set "
                             "[Overcommit] in memqosd.conf or change the tags)");
    EXPECT_EQ(f[1]->node, "node2");
    EXPECT_NE(f[1]->message.find("NodeReserved 536870912 bytes but the tags say 1024 MiB"),
              std::string::npos)
        << f[1]->message;
    EXPECT_EQ(r.exitCode(), 1);
}

TEST(Verify, NodeTagBeatsGroupAndClusterTags) {
    const auto r = verified(
        cluster(node("node1", 4096, 900, "N", "memqos:memory-ratio:2") + node("node2", 4096, 900),
                "", "memqos:memory-ratio:1.2\n",
                groups("memqos:memory-ratio:1.5,memqos:mem-node:1G")),
        nodeBlock("node1", "2", 1024 * kMiB, 8192 * kMiB) +
            nodeBlock("node2", "1.5", 1024 * kMiB, 8192 * kMiB));
    EXPECT_TRUE(r.findings.empty()) << renderText(r);
    EXPECT_EQ(nodeReport(r, "node1").capacityMib, 6144U);
    EXPECT_EQ(nodeReport(r, "node2").capacityMib, 4608U);
}

TEST(Verify, OfflineNodesAreSkippedAndTakeNothing) {
    const auto r = verified(cluster(node("node1", 4096, 900) + node("node2", 4096, 900, "Y"),
                                    inst("inst1", 1024, "running", "node1", "node2", "drbd")),
                            nodeBlock("node1", "1.5", 1024 * kMiB, 4096 * kMiB));
    EXPECT_TRUE(nodeReport(r, "node2").offline);
    const auto f = findings(r, Kind::NotNPlus1);
    ASSERT_EQ(f.size(), 1U);
    EXPECT_EQ(f[0]->node, "node1");
    EXPECT_EQ(f[0]->target, "node2");
    EXPECT_EQ(f[0]->message,
              "not N+1 redundant: instance inst1 cannot fail over, its secondary node node2 is "
              "offline");
    EXPECT_TRUE(findings(r, Kind::NodeUnchecked).empty()); // node2's data is not wanted
}

TEST(Verify, NodeWithoutPolicyKeepsGanetisModel) {
    // No memqos tag anywhere: capacity = t_mem − n_mem, memqosd not asked.
    // node2 fails: node1 gets 3000 on 300 = 3300 > 3196; node1 fails: node2
    // gets 100 on 3000 = 3100.
    const auto r = verified(cluster(pairNodes(),
                                    inst("inst3", 3000, "running", "node2", "node1", "drbd") +
                                        inst("inst1", 100, "running", "node1", "node2", "drbd") +
                                        inst("inst5", 200, "running", "node1", "", "plain"),
                                    ""),
                            "");
    EXPECT_FALSE(nodeReport(r, "node1").policy.has_value());
    EXPECT_EQ(nodeReport(r, "node1").capacityMib, 3196U);
    const auto f = findings(r, Kind::NotNPlus1);
    ASSERT_EQ(f.size(), 1U);
    EXPECT_EQ(f[0]->node, "node2");
    EXPECT_TRUE(findings(r, Kind::NodeUnchecked).empty());
    EXPECT_EQ(r.exitCode(), 1);
}

TEST(Verify, UnreachableNodeIsUncheckedExit2) {
    const auto r = verified(cluster(pairNodes(), ""),
                            nodeBlock("node1", "1.5", 1024 * kMiB, 4096 * kMiB) +
                                "------------------------------------------------\nnode: node2\n"
                                "ssh: connect to host node2 port 22: Connection refused\n"
                                "return code = 255\n");
    const auto f = findings(r, Kind::NodeUnchecked);
    ASSERT_EQ(f.size(), 1U);
    EXPECT_EQ(f[0]->node, "node2");
    EXPECT_NE(f[0]->message.find("Connection refused"), std::string::npos) << f[0]->message;
    EXPECT_NE(f[0]->message.find("gnt-cluster command -n node2 memqosctl status"),
              std::string::npos);
    EXPECT_EQ(r.exitCode(), 2);
    // Missing from the node data altogether: the same.
    const auto missing =
        verified(cluster(pairNodes(), ""), nodeBlock("node1", "1.5", 1024 * kMiB, 4096 * kMiB));
    EXPECT_EQ(findings(missing, Kind::NodeUnchecked).size(), 1U);
    EXPECT_EQ(missing.exitCode(), 2);
}

TEST(Verify, ExternallyMirroredInstancesGoToTheGroupsOtherNodes) {
    // Three nodes of capacity 4608; node1's diskless 2500 and 1500 go to
    // node2 (room 4608) and node3 (room 4108). With node2 holding 4200 of
    // sharedfile, node1's both go to node3 (4108: 2500 + 1500 fit), and
    // node2's 4200 finds no room (node1 608, node3 4108).
    const std::string nodes = pairNodes() + node("node3", 4096, 900);
    const std::string ok = inst("d1", 2500, "running", "node1", "", "diskless") +
                           inst("d2", 1500, "running", "node1", "", "diskless") +
                           inst("x", 500, "running", "node3", "", "plain");
    const auto dataThree = goodNodes() + nodeBlock("node3", "1.5", 1024 * kMiB, 2048 * kMiB);
    const auto r = verified(cluster(nodes, ok), dataThree);
    EXPECT_TRUE(findings(r, Kind::NotNPlus1).empty()) << renderText(r);
    const auto bad = verified(
        cluster(nodes, ok + inst("d3", 4200, "running", "node2", "", "sharedfile")), dataThree);
    const auto f = findings(bad, Kind::NotNPlus1);
    ASSERT_EQ(f.size(), 1U) << renderText(bad);
    EXPECT_EQ(f[0]->node, "node2");
    EXPECT_EQ(f[0]->instances, (std::vector<std::string>{"d3"}));
    EXPECT_EQ(f[0]->target, "");
}

TEST(Verify, MalformedTagCannotBeChecked) {
    auto r = verify(parsed(cluster(pairNodes(), "", "memqos:mem-node\n")), {});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().what.find("no value"), std::string::npos);
}

TEST(Render, JsonCarriesNodesGroupsAndFindings) {
    const auto r = verified(cluster(pairNodes(), pairInstances()), goodNodes());
    const auto j = nlohmann::json::parse(renderJson(r));
    EXPECT_EQ(j["status"], "findings");
    EXPECT_EQ(j["nodes"][0]["name"], "node1");
    EXPECT_EQ(j["nodes"][0]["policy"]["ratio_micro"], 1500000);
    EXPECT_EQ(j["nodes"][0]["capacity_mib"], 4608);
    EXPECT_EQ(j["nodes"][1]["n_plus_1"], false);
    EXPECT_EQ(j["groups"][0]["not_n_plus_1_nodes"][0], "node2");
    bool seen = false;
    for (const auto& f : j["findings"]) {
        if (f["kind"] == "not-n-plus-1") {
            seen = true;
            EXPECT_EQ(f["severity"], "error");
            EXPECT_EQ(f["node"], "node2");
            EXPECT_EQ(f["target"], "node1");
            EXPECT_EQ(f["numbers"]["moved_mib"], 3000);
        }
    }
    EXPECT_TRUE(seen);
    const auto text = renderText(r);
    EXPECT_NE(text.find("group default: 2 node(s), capacity 9216 MiB, up instances 5048 MiB, not "
                        "N+1 redundant (node2)\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("1 finding(s), 0 node(s) not checked\n"), std::string::npos) << text;
}

} // namespace
} // namespace memqos::ganeti::cluster

// SPDX-License-Identifier: Apache-2.0
#include "memqos/ganeti/cluster.hpp"

#include "memqos/core/placement.hpp"
#include "memqos/core/tiers.hpp"
#include "memqos/core/types.hpp"
#include "memqos/parse/text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

namespace memqos::ganeti::cluster {
namespace {

constexpr std::string_view kSeparator = "------------------------------------------------";

using parse::text::bounded;

// Haskell's `lines`: a final newline ends the last line, it does not start
// an empty one.
std::vector<std::string_view> splitLines(std::string_view text) {
    std::vector<std::string_view> out;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        out.push_back(text.substr(0, nl));
        if (nl == std::string_view::npos) {
            break;
        }
        text.remove_prefix(nl + 1);
    }
    return out;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
    std::vector<std::string_view> out;
    for (;;) {
        const auto p = text.find(sep);
        out.push_back(text.substr(0, p));
        if (p == std::string_view::npos) {
            return out;
        }
        text.remove_prefix(p + 1);
    }
}

// htools' commaSplit: "" is no tags.
std::vector<std::string> tagList(std::string_view field) {
    std::vector<std::string> out;
    if (field.empty()) {
        return out;
    }
    for (const auto t : split(field, ',')) {
        out.emplace_back(t);
    }
    return out;
}

// A whole number of MiB (htools writes t_mem with %.0f; a fraction is
// rounded down as hail truncates it).
Result<std::uint64_t> mib(std::string_view field, const std::string& where) {
    const auto* end = field.data() + field.size();
    std::uint64_t n = 0;
    auto [ptr, ec] = std::from_chars(field.data(), end, n);
    if (ec == std::errc{} && ptr != field.data() && ptr != end && *ptr == '.') {
        const auto* q = ptr + 1;
        while (q != end && *q >= '0' && *q <= '9') {
            ++q;
        }
        ptr = q == ptr + 1 ? ptr : q;
    }
    if (field.empty() || ec != std::errc{} || ptr != end || n > kMaxMib) {
        return invalid(where + ": '" + bounded(field) + "' is not a number of MiB from 0 to 2^32");
    }
    return n;
}

using Sections = std::vector<std::vector<std::string_view>>;

// Ganeti's sepSplit "" over the lines.
Sections sections(const std::vector<std::string_view>& lines) {
    Sections out;
    if (lines.empty()) {
        return out;
    }
    out.emplace_back();
    for (const auto l : lines) {
        if (l.empty()) {
            out.emplace_back();
        } else {
            out.back().push_back(l);
        }
    }
    return out;
}

// Per primary node: the memory of its instances that use memory and of the
// down ones (forthcoming ones count in neither, as in the iallocator).
struct NodeLoad {
    std::uint64_t upMib = 0;
    std::uint64_t downMib = 0;
};

std::map<std::string, NodeLoad, std::less<>> loads(const Model& model) {
    std::map<std::string, NodeLoad, std::less<>> out;
    for (const auto& i : model.instances) {
        if (i.usesMemory()) {
            out[i.pnode].upMib += i.memMib;
        } else if (!i.forthcoming) {
            out[i.pnode].downMib += i.memMib;
        }
    }
    return out;
}

// Every node's policy (none: Ganeti's model), from the three levels.
Result<std::map<std::string, std::optional<NodePolicy>, std::less<>>> policies(const Model& model) {
    auto cluster = parseTagPolicy(model.clusterTags, "cluster");
    if (!cluster) {
        return cluster.error();
    }
    std::map<std::string, TagPolicy, std::less<>> groups;
    for (const auto& g : model.groups) {
        auto p = parseTagPolicy(g.tags, "node group " + bounded(g.name));
        if (!p) {
            return p.error();
        }
        if (auto st = noVmOverheadBelowCluster(*p, "node group " + bounded(g.name)); !st) {
            return st.error();
        }
        groups.emplace(g.uuid, *p);
    }
    std::map<std::string, std::optional<NodePolicy>, std::less<>> out;
    for (const auto& n : model.nodes) {
        auto p = parseTagPolicy(n.tags, "node " + bounded(n.name));
        if (!p) {
            return p.error();
        }
        if (auto st = noVmOverheadBelowCluster(*p, "node " + bounded(n.name)); !st) {
            return st.error();
        }
        const auto g = groups.find(n.groupUuid);
        out[n.name] = resolvePolicy(*p, g == groups.end() ? TagPolicy{} : g->second, *cluster);
    }
    return out;
}

} // namespace

bool Instance::usesMemory() const {
    if (forthcoming) {
        return false;
    }
    return status != "ADMIN_down" && status != "ADMIN_offline" && status != "ERROR_down" &&
           status != "USER_down";
}

Mirror Instance::mirror() const {
    if (diskTemplate == "drbd") {
        return Mirror::Internal;
    }
    if (diskTemplate == "plain" || diskTemplate == "file") {
        return Mirror::None;
    }
    return Mirror::External;
}

bool Instance::hbalMovable() const {
    for (const char* dt : {"drbd", "blockdev", "sharedfile", "gluster", "rbd", "ext"}) {
        if (diskTemplate == dt) {
            return true;
        }
    }
    return false;
}

std::string hbalUnmovableNote(const Model& model) {
    constexpr std::size_t kNamed = 10;
    std::vector<const Instance*> fixed;
    for (const auto& i : model.instances) {
        if (!i.hbalMovable()) {
            fixed.push_back(&i);
        }
    }
    if (fixed.empty()) {
        return "";
    }
    std::string names;
    for (std::size_t k = 0; k < fixed.size() && k < kNamed; ++k) {
        names += (k == 0 ? "" : ", ") + fixed[k]->name + " (" +
                 (fixed[k]->diskTemplate.empty() ? std::string("?") : fixed[k]->diskTemplate) +
                 ")";
    }
    if (fixed.size() > kNamed) {
        names += " and " + std::to_string(fixed.size() - kNamed) + " more";
    }
    return "memqos-cluster: note: hbal moves no instance of disk template diskless, plain or "
           "file (Ganeti 3.0's htools move only drbd, blockdev, sharedfile, gluster, rbd and "
           "ext); " +
           std::to_string(fixed.size()) + " of " + std::to_string(model.instances.size()) +
           " instance(s) stay where they are: " + names +
           ". Move those with gnt-instance failover/migrate -I memqos or gnt-node evacuate -I "
           "memqos";
}

Result<Model> parseHtoolsText(std::string_view text) {
    if (text.size() > kMaxTextBytes) {
        return invalid("the cluster data is larger than 64 MiB");
    }
    const auto lines = splitLines(text);
    const auto secs = sections(lines);
    if (secs.size() < 4) {
        return invalid("the cluster data has " + std::to_string(secs.size()) +
                       " sections instead of 4 or more (groups, nodes, instances, cluster "
                       "tags): not htools' text format");
    }
    Model model;
    std::set<std::string, std::less<>> uuids;
    for (const auto l : secs[0]) {
        const auto f = split(l, '|');
        if (f.size() < 4 || f[0].empty() || f[1].empty()) {
            return invalid("node group line '" + bounded(l) +
                           "': not name|uuid|alloc_policy|tags[|networks]");
        }
        if (!uuids.emplace(f[1]).second) {
            return invalid("node group " + bounded(f[0]) + ": uuid " + bounded(f[1]) +
                           " given twice");
        }
        model.groups.push_back(Group{std::string(f[0]), std::string(f[1]), tagList(f[3])});
    }
    std::set<std::string, std::less<>> names;
    for (const auto l : secs[1]) {
        const auto f = split(l, '|');
        if (f.size() < 9 || f[0].empty()) {
            return invalid("node line '" + bounded(l) +
                           "': fewer than 9 fields (name|t_mem|n_mem|f_mem|t_disk|f_disk|"
                           "t_cpu|offline|group_uuid...)");
        }
        const std::string where = "node " + bounded(f[0]);
        if (!names.emplace(f[0]).second) {
            return invalid(where + ": given twice");
        }
        Node n;
        n.name = std::string(f[0]);
        if (f[7] != "Y" && f[7] != "N" && f[7] != "M") {
            return invalid(where + ": offline field '" + bounded(f[7]) + "' is not Y, N or M");
        }
        n.offline = f[7] == "Y";
        n.groupUuid = std::string(f[8]);
        if (!uuids.contains(f[8])) {
            return invalid(where + ": unknown node group " + bounded(f[8]));
        }
        n.tags = f.size() > 10 ? tagList(f[10]) : std::vector<std::string>{};
        n.unknown =
            std::any_of(f.begin() + 1, f.begin() + 7, [](std::string_view v) { return v == "?"; });
        if (!n.unknown) {
            auto t = mib(f[1], where + ": t_mem");
            auto nm = mib(f[2], where + ": n_mem");
            auto fm = mib(f[3], where + ": f_mem");
            if (!t || !nm || !fm) {
                return !t ? t.error() : (!nm ? nm.error() : fm.error());
            }
            n.totalMib = *t;
            n.nodeMib = *nm;
            n.freeMib = *fm;
        }
        model.nodes.push_back(std::move(n));
    }
    std::set<std::string, std::less<>> instanceNames;
    for (const auto l : secs[2]) {
        const auto f = split(l, '|');
        if (f.size() < 10 || f[0].empty()) {
            return invalid("instance line '" + bounded(l) +
                           "': fewer than 10 fields (name|mem|disk|vcpus|status|auto_balance|"
                           "pnode|snode|disk_template|tags...)");
        }
        const std::string where = "instance " + bounded(f[0]);
        if (!instanceNames.emplace(f[0]).second) {
            return invalid(where + ": given twice");
        }
        Instance i;
        i.name = std::string(f[0]);
        auto m = mib(f[1], where + ": mem");
        if (!m) {
            return m.error();
        }
        i.memMib = *m;
        i.status = std::string(f[4]);
        i.pnode = std::string(f[6]);
        i.snode = std::string(f[7]);
        i.diskTemplate = std::string(f[8]);
        if (!names.contains(f[6])) {
            return invalid(where + ": unknown primary node " + bounded(f[6]));
        }
        if (!i.snode.empty() && !names.contains(f[7])) {
            return invalid(where + ": unknown secondary node " + bounded(f[7]));
        }
        if (f.size() > 12) {
            if (f[12] != "Y" && f[12] != "N") {
                return invalid(where + ": forthcoming field '" + bounded(f[12]) +
                               "' is not Y or N");
            }
            i.forthcoming = f[12] == "Y";
        }
        model.instances.push_back(std::move(i));
    }
    for (const auto l : secs[3]) {
        model.clusterTags.emplace_back(l);
    }
    // memqosd's VMOverhead, from the cluster's tags: part of every
    // instance's memory wherever the ratio is applied (as in the iallocator).
    // Malformed tags are not this parser's error: every user of the model
    // resolves the policies (policies()) first and reports them.
    const auto cluster = parseTagPolicy(model.clusterTags, "cluster");
    model.vmOverheadMib = cluster ? cluster->vmOverheadMib.value_or(0) : 0;
    for (auto& i : model.instances) {
        i.memMib += model.vmOverheadMib;
    }
    return model;
}

Result<Rewritten> rewriteHtoolsText(std::string_view text) {
    auto model = parseHtoolsText(text);
    if (!model) {
        return model.error();
    }
    auto pol = policies(*model);
    if (!pol) {
        return pol.error();
    }
    const auto load = loads(*model);
    Rewritten out;
    out.text.reserve(text.size() + 64);
    const auto lines = splitLines(text);
    std::size_t section = 0;
    std::size_t nodeIndex = 0;
    std::size_t instanceIndex = 0;
    for (const auto l : lines) {
        if (l.empty()) {
            ++section;
            out.text += '\n';
            continue;
        }
        if (section == 2 && model->vmOverheadMib != 0) {
            // The instance's mem with the overhead (index-aligned: the
            // parser kept every instance line in order).
            auto f = split(l, '|');
            const auto mem = std::to_string(model->instances[instanceIndex++].memMib);
            f[1] = mem;
            for (std::size_t k = 0; k < f.size(); ++k) {
                out.text += k == 0 ? "" : "|";
                out.text.append(f[k]);
            }
            out.text += '\n';
            continue;
        }
        if (section != 1) {
            out.text.append(l);
            out.text += '\n';
            continue;
        }
        const Node& n = model->nodes[nodeIndex++];
        const auto& p = pol->at(n.name);
        if (!p || n.offline || n.unknown) {
            out.text.append(l);
            out.text += '\n';
            continue;
        }
        const auto it = load.find(n.name);
        const NodeLoad on = it == load.end() ? NodeLoad{} : it->second;
        const auto m = htoolsMemory(n.totalMib, n.nodeMib, *p, on.upMib, on.downMib);
        auto f = split(l, '|');
        const auto total = std::to_string(m.totalMib);
        const auto free = std::to_string(m.freeMib);
        f[1] = total;
        f[3] = free;
        for (std::size_t k = 0; k < f.size(); ++k) {
            out.text += k == 0 ? "" : "|";
            out.text.append(f[k]);
        }
        out.text += '\n';
        out.changes.push_back(NodeChange{.node = n.name,
                                         .ratioMicro = p->ratioMicro,
                                         .memNodeMib = m.memNodeMib,
                                         .capacityMib = m.capacityMib,
                                         .instancesMib = on.upMib});
    }
    if (!text.empty() && text.back() != '\n') {
        out.text.pop_back();
    }
    return out;
}

Result<std::map<std::string, NodeData, std::less<>>> parseNodeData(std::string_view text) {
    if (text.size() > kMaxTextBytes) {
        return invalid("the node data is larger than 64 MiB");
    }
    std::map<std::string, NodeData, std::less<>> out;
    const auto lines = splitLines(text);
    std::size_t i = 0;
    while (i < lines.size() && lines[i].empty()) {
        ++i;
    }
    while (i < lines.size()) {
        if (lines[i] != kSeparator) {
            return invalid("node data line " + std::to_string(i + 1) + " '" + bounded(lines[i]) +
                           "': expected a line of 48 '-' (the output of gnt-cluster command "
                           "without -M)");
        }
        ++i;
        constexpr std::string_view kNode = "node: ";
        if (i >= lines.size() || !lines[i].starts_with(kNode) || lines[i].size() == kNode.size()) {
            return invalid("node data line " + std::to_string(i + 1) + ": expected 'node: NAME'");
        }
        const std::string name(lines[i].substr(kNode.size()));
        ++i;
        std::size_t end = i;
        while (end < lines.size() && lines[end] != kSeparator) {
            ++end;
        }
        // The block's last "return code = N" line ends it.
        std::size_t rc = end;
        for (std::size_t k = end; k > i; --k) {
            if (lines[k - 1].starts_with("return code = ")) {
                rc = k - 1;
                break;
            }
        }
        if (rc == end) {
            return invalid("node data for " + bounded(name) + ": no 'return code = N' line");
        }
        NodeData d;
        const auto code = lines[rc].substr(14);
        const auto [p, ec] = std::from_chars(code.data(), code.data() + code.size(), d.returnCode);
        if (ec != std::errc{} || p != code.data() + code.size()) {
            return invalid("node data for " + bounded(name) + ": '" + bounded(lines[rc]) +
                           "' is no return code");
        }
        std::string other;
        for (std::size_t k = i; k < rc; ++k) {
            const auto l = lines[k];
            const auto eq = l.find('=');
            const auto key = l.substr(0, eq == std::string_view::npos ? 0 : eq);
            const auto value = eq == std::string_view::npos ? l : l.substr(eq + 1);
            const auto* vend = value.data() + value.size();
            bool known = true;
            if (key == "MemoryRatio") {
                double r = 0;
                const auto [q, e] = std::from_chars(value.data(), vend, r);
                if (e == std::errc{} && q == vend && std::isfinite(r) && r >= 0 && r <= 1000) {
                    d.memoryRatio = r;
                } else {
                    known = false;
                }
            } else if (key == "NodeReserved" || key == "SwapTotal" || key == "MemoryTotal") {
                std::uint64_t n = 0;
                const auto [q, e] = std::from_chars(value.data(), vend, n);
                if (e == std::errc{} && q == vend && !value.empty()) {
                    (key == "NodeReserved"
                         ? d.nodeReservedBytes
                         : (key == "SwapTotal" ? d.swapTotalBytes : d.memoryTotalBytes)) = n;
                } else {
                    known = false;
                }
            } else {
                known = false;
            }
            if (!known && !l.empty() && other.empty()) {
                other = bounded(l);
            }
        }
        if (d.returnCode != 0) {
            d.problem = "memqosctl exited with status " + std::to_string(d.returnCode) +
                        (other.empty() ? "" : ": " + other);
        } else if (!d.memoryRatio || !d.nodeReservedBytes || !d.swapTotalBytes) {
            d.problem = std::string("no ") +
                        (!d.memoryRatio ? "MemoryRatio"
                                        : (!d.nodeReservedBytes ? "NodeReserved" : "SwapTotal")) +
                        " in memqosctl's output" +
                        (other.empty() ? "" : " (it said: " + other + ")");
        }
        if (!out.emplace(name, std::move(d)).second) {
            return invalid("node data: node " + bounded(name) + " given twice");
        }
        i = end;
    }
    return out;
}

std::string_view toString(Kind k) {
    switch (k) {
    case Kind::OverCapacity:
        return "over-capacity";
    case Kind::NotNPlus1:
        return "not-n-plus-1";
    case Kind::NoFailover:
        return "no-failover";
    case Kind::SwapInsufficient:
        return "swap-insufficient";
    case Kind::OvercommittedBeyondSwap:
        return "overcommitted-beyond-swap";
    case Kind::PolicyDrift:
        return "policy-drift";
    case Kind::NodeUnchecked:
        return "node-unchecked";
    }
    return "?";
}

std::string_view toString(Severity s) {
    switch (s) {
    case Severity::Error:
        return "error";
    case Severity::Info:
        return "info";
    case Severity::Unchecked:
        return "unchecked";
    }
    return "?";
}

Severity severityOf(Kind k) {
    switch (k) {
    case Kind::NoFailover:
        return Severity::Info;
    case Kind::NodeUnchecked:
        return Severity::Unchecked;
    default:
        return Severity::Error;
    }
}

int Report::exitCode() const {
    int code = 0;
    for (const auto& f : findings) {
        const auto s = severityOf(f.kind);
        if (s == Severity::Unchecked) {
            return 2;
        }
        if (s == Severity::Error) {
            code = 1;
        }
    }
    return code;
}

namespace {

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) {
        out += (out.empty() ? "" : ", ") + n;
    }
    return out;
}

std::string mibText(std::uint64_t v) {
    return std::to_string(v) + " MiB";
}

// The N+1 simulation for one failed node (header: not-n-plus-1).
void failOver(const Model& model, const NodeReport& failed,
              std::map<std::string, NodeReport*, std::less<>>& byName, Report& report) {
    struct Moved {
        std::uint64_t mib = 0;
        std::vector<std::string> names;
    };
    std::map<std::string, Moved, std::less<>> moved;
    std::vector<const Instance*> external;
    auto finding = [&](Kind kind) {
        Finding f;
        f.kind = kind;
        f.node = failed.name;
        f.group = failed.group;
        return f;
    };
    for (const auto& i : model.instances) {
        if (i.pnode != failed.name || !i.usesMemory()) {
            continue;
        }
        switch (i.mirror()) {
        case Mirror::None: {
            auto f = finding(Kind::NoFailover);
            f.instances = {i.name};
            f.numbers = {{"instance_mib", i.memMib}};
            f.message = "instance " + i.name + " (" + i.diskTemplate +
                        ") has no secondary node: it cannot fail over when " + failed.name +
                        " fails";
            report.findings.push_back(std::move(f));
            break;
        }
        case Mirror::Internal: {
            const auto t = byName.find(i.snode);
            if (i.snode.empty() || t == byName.end() || t->second->offline) {
                auto f = finding(Kind::NotNPlus1);
                f.target = i.snode;
                f.instances = {i.name};
                f.numbers = {{"instance_mib", i.memMib}};
                f.message = "not N+1 redundant: instance " + i.name +
                            " cannot fail over, its secondary node " +
                            (i.snode.empty() ? std::string("is missing") : i.snode + " is offline");
                report.findings.push_back(std::move(f));
            } else {
                moved[i.snode].mib += i.memMib;
                moved[i.snode].names.push_back(i.name);
            }
            break;
        }
        case Mirror::External:
            external.push_back(&i);
            break;
        }
    }
    std::map<std::string, std::int64_t, std::less<>> room;
    for (auto& [name, r] : byName) {
        if (!r->offline && r->group == failed.group && name != failed.name) {
            room[name] =
                static_cast<std::int64_t>(r->capacityMib) - static_cast<std::int64_t>(r->usedMib);
        }
    }
    for (const auto& [target, m] : moved) {
        const auto* t = byName.at(target);
        if (auto r = room.find(target); r != room.end()) {
            r->second -= static_cast<std::int64_t>(m.mib);
        }
        if (t->usedMib + m.mib > t->capacityMib) {
            auto f = finding(Kind::NotNPlus1);
            f.target = target;
            f.instances = m.names;
            f.numbers = {{"target_used_mib", t->usedMib},
                         {"moved_mib", m.mib},
                         {"target_capacity_mib", t->capacityMib}};
            f.message = "not N+1 redundant: if " + failed.name + " fails, " + target + " gets " +
                        mibText(m.mib) + " (" + joined(m.names) + ") on top of " +
                        mibText(t->usedMib) + ": " + mibText(t->usedMib + m.mib) + " > capacity " +
                        mibText(t->capacityMib);
            report.findings.push_back(std::move(f));
        }
    }
    std::stable_sort(external.begin(), external.end(),
                     [](const Instance* a, const Instance* b) { return a->memMib > b->memMib; });
    for (const auto* i : external) {
        auto best = room.end();
        for (auto r = room.begin(); r != room.end(); ++r) {
            if (best == room.end() || r->second > best->second) {
                best = r;
            }
        }
        if (best != room.end() && best->second >= static_cast<std::int64_t>(i->memMib)) {
            best->second -= static_cast<std::int64_t>(i->memMib);
            continue;
        }
        auto f = finding(Kind::NotNPlus1);
        f.instances = {i->name};
        const std::uint64_t most =
            best == room.end() || best->second < 0 ? 0 : static_cast<std::uint64_t>(best->second);
        f.numbers = {{"instance_mib", i->memMib}, {"largest_room_mib", most}};
        f.message = "not N+1 redundant: if " + failed.name + " fails, no other node of group " +
                    failed.group + " has room for instance " + i->name + " (" + mibText(i->memMib) +
                    "; the most room left is " + mibText(most) + ")";
        report.findings.push_back(std::move(f));
    }
}

} // namespace

Result<Report> verify(const Model& model,
                      const std::map<std::string, NodeData, std::less<>>& nodeData) {
    auto pol = policies(model);
    if (!pol) {
        return pol.error();
    }
    const auto load = loads(model);
    std::map<std::string, std::string, std::less<>> groupName;
    Report report;
    for (const auto& g : model.groups) {
        groupName[g.uuid] = g.name;
        GroupReport gr;
        gr.name = g.name;
        gr.uuid = g.uuid;
        report.groups.push_back(std::move(gr));
    }
    for (const auto& n : model.nodes) {
        NodeReport r;
        r.name = n.name;
        const auto g = groupName.find(n.groupUuid); // parseHtoolsText checked it
        r.group = g == groupName.end() ? n.groupUuid : g->second;
        r.offline = n.offline || n.unknown;
        r.policy = pol->at(n.name);
        const auto it = load.find(n.name);
        r.usedMib = it == load.end() ? 0 : it->second.upMib;
        if (r.policy) {
            const auto m = htoolsMemory(n.totalMib, n.nodeMib, *r.policy, 0, 0);
            r.memNodeMib = m.memNodeMib;
            r.availableMib = m.availableMib;
            r.capacityMib = m.capacityMib;
        } else {
            r.memNodeMib = n.nodeMib;
            r.availableMib = n.totalMib > n.nodeMib ? n.totalMib - n.nodeMib : 0;
            r.capacityMib = r.availableMib;
        }
        report.nodes.push_back(std::move(r));
    }
    std::map<std::string, NodeReport*, std::less<>> byName;
    for (auto& r : report.nodes) {
        byName[r.name] = &r;
    }
    for (auto& r : report.nodes) {
        if (r.offline) {
            continue;
        }
        auto finding = [&](Kind kind) {
            Finding f;
            f.kind = kind;
            f.node = r.name;
            f.group = r.group;
            return f;
        };
        if (r.usedMib > r.capacityMib) {
            auto f = finding(Kind::OverCapacity);
            f.numbers = {{"used_mib", r.usedMib}, {"capacity_mib", r.capacityMib}};
            f.message =
                "up instances " + mibText(r.usedMib) + " > capacity " + mibText(r.capacityMib);
            report.findings.push_back(std::move(f));
        }
        const auto before = report.findings.size();
        failOver(model, r, byName, report);
        r.nPlus1 = std::none_of(report.findings.begin() + static_cast<std::ptrdiff_t>(before),
                                report.findings.end(),
                                [](const Finding& f) { return f.kind == Kind::NotNPlus1; });
        if (!r.policy) {
            continue; // Ganeti's model: memqosd is not asked
        }
        const auto d = nodeData.find(r.name);
        if (d == nodeData.end() || !d->second.problem.empty()) {
            auto f = finding(Kind::NodeUnchecked);
            f.message = "cannot check swap and policy: " +
                        (d == nodeData.end() ? std::string("no answer from the node in the node "
                                                           "data")
                                             : d->second.problem) +
                        "; check memqosd there: gnt-cluster command -n " + r.name +
                        " memqosctl status";
            report.findings.push_back(std::move(f));
            continue;
        }
        const NodeData& nd = d->second;
        const auto ratio = static_cast<double>(r.policy->ratioMicro) / static_cast<double>(kMicro);
        const std::uint64_t availableBytes = r.availableMib * kMiB;
        r.swapTotalBytes = nd.swapTotalBytes;
        r.swapRequiredBytes = core::requiredSwap(availableBytes, ratio);
        if (*nd.swapTotalBytes < r.swapRequiredBytes) {
            auto f = finding(Kind::SwapInsufficient);
            f.numbers = {{"swap_total_bytes", *nd.swapTotalBytes},
                         {"swap_required_bytes", r.swapRequiredBytes},
                         {"available_mib", r.availableMib},
                         {"ratio_micro", r.policy->ratioMicro}};
            f.message = "swap " + std::to_string(*nd.swapTotalBytes) + " bytes < (ratio " +
                        ratioText(r.policy->ratioMicro) + " - 1) * available " +
                        mibText(r.availableMib) + " = " + std::to_string(r.swapRequiredBytes) +
                        " bytes";
            report.findings.push_back(std::move(f));
        }
        const std::uint64_t usedBytes = r.usedMib * kMiB;
        if (core::saturatingAdd(availableBytes, *nd.swapTotalBytes) < usedBytes) {
            auto f = finding(Kind::OvercommittedBeyondSwap);
            f.numbers = {{"available_mib", r.availableMib},
                         {"swap_total_bytes", *nd.swapTotalBytes},
                         {"used_mib", r.usedMib}};
            f.message = "available " + mibText(r.availableMib) + " + swap " +
                        std::to_string(*nd.swapTotalBytes) + " bytes < up instances " +
                        mibText(r.usedMib);
            report.findings.push_back(std::move(f));
        }
        const auto what = policyDrift(*r.policy, *nd.memoryRatio, *nd.nodeReservedBytes);
        if (!what.empty()) {
            auto f = finding(Kind::PolicyDrift);
            f.numbers = {{"tag_ratio_micro", r.policy->ratioMicro},
                         {"memqosd_ratio_micro", ratioMicro(*nd.memoryRatio)},
                         {"memqosd_node_reserved_bytes", *nd.nodeReservedBytes}};
            if (r.policy->memNodeMib) {
                f.numbers.emplace_back("tag_mem_node_mib", *r.policy->memNodeMib);
            }
            f.message =
                "policy drift: " + what + " (set [Overcommit] in memqosd.conf or change the tags)";
            report.findings.push_back(std::move(f));
        }
    }
    for (auto& g : report.groups) {
        for (const auto& r : report.nodes) {
            if (r.group != g.name) {
                continue;
            }
            g.nodes.push_back(r.name);
            if (r.offline) {
                continue;
            }
            g.capacityMib += r.capacityMib;
            g.usedMib += r.usedMib;
            if (!r.nPlus1) {
                g.notNPlus1.push_back(r.name);
            }
        }
    }
    return report;
}

std::string renderJson(const Report& report) {
    using Json = nlohmann::ordered_json;
    Json out = Json::object();
    const int code = report.exitCode();
    out["status"] = code == 0 ? "ok" : (code == 1 ? "findings" : "unchecked");
    Json nodes = Json::array();
    for (const auto& r : report.nodes) {
        Json n = Json::object();
        n["name"] = r.name;
        n["group"] = r.group;
        n["offline"] = r.offline;
        if (r.policy) {
            n["policy"] = {{"ratio_micro", r.policy->ratioMicro},
                           {"mem_node_mib", r.memNodeMib},
                           {"mem_node_from_tags", r.policy->memNodeMib.has_value()}};
        } else {
            n["policy"] = nullptr;
        }
        n["available_mib"] = r.availableMib;
        n["capacity_mib"] = r.capacityMib;
        n["used_mib"] = r.usedMib;
        n["swap_total_bytes"] = r.swapTotalBytes ? Json(*r.swapTotalBytes) : Json(nullptr);
        n["swap_required_bytes"] = r.swapRequiredBytes;
        n["n_plus_1"] = r.nPlus1;
        nodes.push_back(std::move(n));
    }
    out["nodes"] = std::move(nodes);
    Json groups = Json::array();
    for (const auto& g : report.groups) {
        groups.push_back({{"name", g.name},
                          {"uuid", g.uuid},
                          {"nodes", g.nodes},
                          {"n_plus_1", g.notNPlus1.empty()},
                          {"not_n_plus_1_nodes", g.notNPlus1},
                          {"capacity_mib", g.capacityMib},
                          {"used_mib", g.usedMib}});
    }
    out["groups"] = std::move(groups);
    Json findings = Json::array();
    for (const auto& f : report.findings) {
        Json j = Json::object();
        j["kind"] = toString(f.kind);
        j["severity"] = toString(severityOf(f.kind));
        j["node"] = f.node;
        j["group"] = f.group;
        if (f.kind == Kind::NotNPlus1) {
            j["target"] = f.target.empty() ? Json(nullptr) : Json(f.target);
        }
        if (!f.instances.empty()) {
            j["instances"] = f.instances;
        }
        Json numbers = Json::object();
        for (const auto& [k, v] : f.numbers) {
            numbers[k] = v;
        }
        j["numbers"] = std::move(numbers);
        j["message"] = f.message;
        findings.push_back(std::move(j));
    }
    out["findings"] = std::move(findings);
    return out.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string renderText(const Report& report) {
    std::string out;
    for (const auto& r : report.nodes) {
        out += "node " + r.name + " (group " + r.group + "): ";
        if (r.offline) {
            out += "offline, not checked\n";
            continue;
        }
        out += r.policy ? "ratio " + ratioText(r.policy->ratioMicro) + ", mem_node " +
                              mibText(r.memNodeMib) + (r.policy->memNodeMib ? "" : " (Ganeti's)")
                        : std::string("no memqos policy (Ganeti's model), mem_node ") +
                              mibText(r.memNodeMib);
        out += ", capacity " + mibText(r.capacityMib) + ", up instances " + mibText(r.usedMib);
        if (r.swapTotalBytes) {
            out += ", swap " + std::to_string(*r.swapTotalBytes) + " bytes (needs " +
                   std::to_string(r.swapRequiredBytes) + ")";
        }
        out += r.nPlus1 ? ", N+1 ok\n" : ", NOT N+1 redundant\n";
    }
    for (const auto& g : report.groups) {
        out += "group " + g.name + ": " + std::to_string(g.nodes.size()) + " node(s), capacity " +
               mibText(g.capacityMib) + ", up instances " + mibText(g.usedMib) + ", " +
               (g.notNPlus1.empty() ? std::string("N+1 redundant")
                                    : "not N+1 redundant (" + joined(g.notNPlus1) + ")") +
               "\n";
    }
    std::size_t errors = 0;
    std::size_t unchecked = 0;
    for (const auto& f : report.findings) {
        const auto s = severityOf(f.kind);
        errors += s == Severity::Error ? 1 : 0;
        unchecked += s == Severity::Unchecked ? 1 : 0;
        out += std::string(toString(s)) + ": " + std::string(toString(f.kind)) + ": node " +
               f.node + ": " + f.message + "\n";
    }
    out += std::to_string(errors) + " finding(s), " + std::to_string(unchecked) +
           " node(s) not checked\n";
    return out;
}

} // namespace memqos::ganeti::cluster

// SPDX-License-Identifier: Apache-2.0
#include "memqos/ganeti/iallocator.hpp"

#include "memqos/config/values.hpp"
#include "memqos/core/types.hpp"
#include "memqos/parse/text.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

namespace memqos::ganeti {
namespace {

using Json = nlohmann::json;

// Memory figures above kMaxMib (4 PiB in MiB) are refused: with a ratio of
// at most 100 (10^8 millionths) the products stay far below 2^63.
constexpr int kMaxDepth = 64;

// The request types of Ganeti 3.0.2 (VALID_IALLOCATOR_MODES).
constexpr std::array<std::string_view, 6> kRequestTypes = {"allocate",      "allocate-secondary",
                                                           "change-group",  "multi-allocate",
                                                           "node-evacuate", "relocate"};

using parse::text::bounded;

const Json* member(const Json& object, std::string_view key) {
    if (!object.is_object()) {
        return nullptr;
    }
    const auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
}

Result<std::vector<std::string>> stringList(const Json* value, std::string_view what) {
    if (value == nullptr || !value->is_array()) {
        return invalid(std::string(what) + ": not a list of strings");
    }
    std::vector<std::string> out;
    out.reserve(value->size());
    for (const auto& item : *value) {
        if (!item.is_string()) {
            return invalid(std::string(what) + ": not a list of strings");
        }
        out.push_back(item.get<std::string>());
    }
    return out;
}

// A memory figure in MiB: a JSON number from 0 (or, `negative`, from
// -kMaxMib) to kMaxMib; a fraction is rounded down, as hail truncates
// total_memory.
Result<std::int64_t> mebibytesFrom(const Json* value, std::string_view what, bool negative) {
    if (value == nullptr) {
        return invalid(std::string(what) + ": missing");
    }
    constexpr auto kMax = static_cast<std::int64_t>(kMaxMib);
    const std::int64_t low = negative ? -kMax : 0;
    if (value->is_number_unsigned()) {
        const auto v = value->get<std::uint64_t>();
        if (v <= kMaxMib) {
            return static_cast<std::int64_t>(v);
        }
    } else if (value->is_number_integer()) {
        const auto v = value->get<std::int64_t>();
        if (v >= low && v <= kMax) {
            return v;
        }
    } else if (value->is_number_float()) {
        const auto v = value->get<double>();
        if (v >= static_cast<double>(low) && v <= static_cast<double>(kMax)) {
            return static_cast<std::int64_t>(std::floor(v));
        }
    } else {
        return invalid(std::string(what) + ": not a number");
    }
    return invalid(std::string(what) + (negative ? ": not a number of MiB from -2^32 to 2^32"
                                                 : ": not a number of MiB from 0 to 2^32"));
}

Result<std::uint64_t> mebibytes(const Json* value, std::string_view what) {
    auto v = mebibytesFrom(value, what, false);
    if (!v) {
        return v.error();
    }
    return static_cast<std::uint64_t>(*v);
}

// A node's free_memory may be negative. Ganeti 3.0.2 sends the hypervisor's
// free memory minus, for each up instance of the node, its maxmem less the
// memory it runs with (iallocator.py _ComputeInstanceMemory): below 0 on a
// node whose up instances are overcommitted and run ballooned below their
// maxmem.
Result<std::int64_t> signedMebibytes(const Json* value, std::string_view what) {
    return mebibytesFrom(value, what, true);
}

bool flag(const Json& object, std::string_view key, bool fallback) {
    const auto* v = member(object, key);
    return v != nullptr && v->is_boolean() ? v->get<bool>() : fallback;
}

// hail's view of an instance's memory (IAlloc.hs parseBaseInstance,
// Instance.usesMemory): a forthcoming one and one whose admin_state is
// "down" or "offline" use none; any other or no admin_state counts as up.
enum class InstanceUse { Up, Down, Forthcoming };
InstanceUse instanceUse(const Json& instance) {
    if (flag(instance, "forthcoming", false)) {
        return InstanceUse::Forthcoming;
    }
    const auto* state = member(instance, "admin_state");
    if (state != nullptr && state->is_string()) {
        const auto& s = state->get_ref<const std::string&>();
        if (s == "down" || s == "offline") {
            return InstanceUse::Down;
        }
    }
    return InstanceUse::Up;
}

// Per primary node: hail's iMem (up) and the memory of its down instances.
struct NodeInstances {
    std::uint64_t upMib = 0;
    std::uint64_t downMib = 0;
};

} // namespace

HtoolsMemory htoolsMemory(std::uint64_t totalMib, std::uint64_t htoolsNodeMib,
                          const NodePolicy& policy, std::uint64_t upMib, std::uint64_t downMib) {
    HtoolsMemory m;
    m.memNodeMib = policy.memNodeMib.value_or(htoolsNodeMib);
    m.availableMib = totalMib > m.memNodeMib ? totalMib - m.memNodeMib : 0;
    // ≤ 2^32 · 10^8 / 10^6: no overflow.
    m.capacityMib = m.availableMib * policy.ratioMicro / kMicro;
    const std::uint64_t room = m.availableMib == 0 ? 0 : m.capacityMib + 1;
    m.totalMib = htoolsNodeMib + room;
    // hail's strict pass also keeps the memory of the node's down
    // instances free (fMemForth: free_memory minus them); memqos counts
    // up instances only, so it is added back.
    m.freeMib = room + downMib > upMib ? room + downMib - upMib : 0;
    return m;
}

Result<HailOptions> hailOptionsFromArgs(const std::vector<std::string>& args) {
    constexpr std::string_view kOption = "--static-kvm-node-memory";
    HailOptions options;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string_view a(args[i]);
        std::string_view value;
        if (a.starts_with(kOption) && a.size() > kOption.size() && a[kOption.size()] == '=') {
            value = a.substr(kOption.size() + 1);
        } else if (a == kOption) {
            if (i + 1 >= args.size()) {
                return invalid("option --static-kvm-node-memory: no value");
            }
            value = args[++i];
        } else {
            continue;
        }
        std::int64_t n = 0;
        const auto* end = value.data() + value.size();
        const auto [ptr, ec] = std::from_chars(value.data(), end, n);
        if (value.empty() || ec != std::errc{} || ptr != end) {
            return invalid("option --static-kvm-node-memory=" + bounded(value) +
                           ": not a whole number of MiB");
        }
        if (n > static_cast<std::int64_t>(kMaxMib)) {
            return invalid("option --static-kvm-node-memory=" + bounded(value) +
                           ": more than 2^32 MiB");
        }
        options.staticKvmNodeMemoryMib = n;
    }
    return options;
}

Result<Transformed> transformForHail(std::string_view inputJson, const HailOptions& options) {
    // The parser and the destructor do not recurse, but dump() does: a
    // deeper input is refused (Ganeti's nests about 6 levels).
    int depth = 0;
    const Json::parser_callback_t deepest = [&depth](int d, Json::parse_event_t, Json&) {
        depth = d > depth ? d : depth;
        return true;
    };
    Json input = Json::parse(inputJson.begin(), inputJson.end(), deepest, false);
    if (input.is_discarded()) {
        return invalid("the iallocator input is not JSON");
    }
    if (depth > kMaxDepth) {
        return invalid("the iallocator input is nested deeper than " + std::to_string(kMaxDepth) +
                       " levels");
    }
    if (!input.is_object()) {
        return invalid("the iallocator input is not a JSON object");
    }

    const auto* request = member(input, "request");
    if (request == nullptr || !request->is_object()) {
        return invalid("the iallocator input has no request object");
    }
    const auto* type = member(*request, "type");
    if (type == nullptr || !type->is_string()) {
        return invalid("request: no type");
    }
    const auto& typeName = type->get_ref<const std::string&>();
    bool known = false;
    for (const auto t : kRequestTypes) {
        known = known || typeName == t;
    }
    if (!known) {
        return invalid("request: unknown type " + bounded(typeName));
    }

    auto clusterTags = stringList(member(input, "cluster_tags"), "cluster_tags");
    if (!clusterTags) {
        return clusterTags.error();
    }
    auto clusterPolicy = parseTagPolicy(*clusterTags, "cluster");
    if (!clusterPolicy) {
        return clusterPolicy.error();
    }
    // memqosd's VMOverhead, the same on every node: added to every
    // instance's memory, the new ones' included, so that hail counts it
    // wherever it counts an instance (iMem, moves, N+1).
    const std::uint64_t overheadMib = clusterPolicy->vmOverheadMib.value_or(0);
    const auto addOverhead = [overheadMib](Json& object, const std::string& where) -> Status {
        if (overheadMib == 0) {
            return okStatus();
        }
        auto memory = mebibytes(member(object, "memory"), where + ": memory");
        if (!memory) {
            return memory.error();
        }
        object["memory"] = *memory + overheadMib;
        return okStatus();
    };
    if (typeName == "allocate") {
        if (auto st = addOverhead(input["request"], "request"); !st) {
            return st.error();
        }
    } else if (typeName == "multi-allocate" && overheadMib != 0) {
        auto& list = input["request"]["instances"];
        if (!list.is_array()) {
            return invalid("request: instances: not a list");
        }
        for (auto& one : list) {
            if (auto st = addOverhead(one, "request: instance"); !st) {
                return st.error();
            }
        }
    }

    const auto* hypervisors = member(input, "enabled_hypervisors");
    auto hvList = stringList(hypervisors, "enabled_hypervisors");
    if (!hvList) {
        return hvList.error();
    }
    // hail replaces every node's reserved memory with its static value on
    // KVM (the first enabled hypervisor), when that value is above 0.
    const bool staticNodeMemory =
        !hvList->empty() && hvList->front() == "kvm" && options.staticKvmNodeMemoryMib > 0;

    auto* groups = input.contains("nodegroups") ? &input["nodegroups"] : nullptr;
    if (groups == nullptr || !groups->is_object()) {
        return invalid("the iallocator input has no nodegroups object");
    }
    std::map<std::string, TagPolicy, std::less<>> groupPolicies;
    for (const auto& [uuid, group] : groups->items()) {
        if (!group.is_object()) {
            return invalid("node group " + bounded(uuid) + ": not an object");
        }
        auto tags = stringList(member(group, "tags"), "node group " + bounded(uuid) + ": tags");
        if (!tags) {
            return tags.error();
        }
        auto policy = parseTagPolicy(*tags, "node group " + bounded(uuid));
        if (!policy) {
            return policy.error();
        }
        if (auto st = noVmOverheadBelowCluster(*policy, "node group " + bounded(uuid)); !st) {
            return st.error();
        }
        groupPolicies.emplace(uuid, *policy);
    }

    const auto* instances = member(input, "instances");
    if (instances == nullptr || !instances->is_object()) {
        return invalid("the iallocator input has no instances object");
    }
    std::map<std::string, NodeInstances, std::less<>> instanceMemory;
    for (auto& [name, instance] : input["instances"].items()) {
        const std::string where = "instance " + bounded(name);
        if (!instance.is_object()) {
            return invalid(where + ": not an object");
        }
        const auto* nodes = member(instance, "nodes");
        if (nodes == nullptr || !nodes->is_array() || nodes->empty() ||
            !nodes->front().is_string()) {
            return invalid(where + ": nodes: not a list starting with the primary node");
        }
        if (auto st = addOverhead(instance, where); !st) {
            return st.error();
        }
        auto memory = mebibytes(member(instance, "memory"), where + ": memory");
        if (!memory) {
            return memory.error();
        }
        // At most 2^32 per instance: no overflow in practice.
        const auto use = instanceUse(instance);
        if (use == InstanceUse::Up) {
            instanceMemory[nodes->front().get<std::string>()].upMib += *memory;
        } else if (use == InstanceUse::Down) {
            instanceMemory[nodes->front().get<std::string>()].downMib += *memory;
        }
    }

    auto* nodes = input.contains("nodes") ? &input["nodes"] : nullptr;
    if (nodes == nullptr || !nodes->is_object()) {
        return invalid("the iallocator input has no nodes object");
    }
    Transformed out;
    for (auto& [name, node] : nodes->items()) {
        const std::string where = "node " + bounded(name);
        if (!node.is_object()) {
            return invalid(where + ": not an object");
        }
        const auto* tagsValue = member(node, "tags");
        std::vector<std::string> tagList;
        if (tagsValue != nullptr) { // hail too takes a missing list as empty
            auto tags = stringList(tagsValue, where + ": tags");
            if (!tags) {
                return tags.error();
            }
            tagList = std::move(*tags);
        }
        auto nodePolicy = parseTagPolicy(tagList, where);
        if (!nodePolicy) {
            return nodePolicy.error();
        }
        if (auto st = noVmOverheadBelowCluster(*nodePolicy, where); !st) {
            return st.error();
        }
        const auto* group = member(node, "group");
        if (group == nullptr || !group->is_string()) {
            return invalid(where + ": no group");
        }
        const auto g = groupPolicies.find(group->get_ref<const std::string&>());
        if (g == groupPolicies.end()) {
            return invalid(where + ": group " + bounded(group->get<std::string>()) +
                           " is not in nodegroups");
        }
        const auto policy = resolvePolicy(*nodePolicy, g->second, *clusterPolicy);
        if (!policy) {
            continue; // hail's own behaviour
        }
        // hail reads no memory figures of a node that is offline or not
        // vm_capable (and Ganeti sends none for an offline one).
        if (flag(node, "offline", false) || !flag(node, "vm_capable", true)) {
            continue;
        }
        auto total = mebibytes(member(node, "total_memory"), where + ": total_memory");
        if (!total) {
            return total.error();
        }
        auto reserved = mebibytes(member(node, "reserved_memory"), where + ": reserved_memory");
        if (!reserved) {
            return reserved.error();
        }
        // Only checked: a rewritten node's free memory is computed anew.
        auto freeMemory = signedMebibytes(member(node, "free_memory"), where + ": free_memory");
        if (!freeMemory) {
            return freeMemory.error();
        }
        const std::uint64_t hailNodeMemory =
            staticNodeMemory ? static_cast<std::uint64_t>(options.staticKvmNodeMemoryMib)
                             : *reserved;
        const auto it = instanceMemory.find(name);
        const NodeInstances on = it == instanceMemory.end() ? NodeInstances{} : it->second;
        const auto m = htoolsMemory(*total, hailNodeMemory, *policy, on.upMib, on.downMib);
        node["total_memory"] = m.totalMib;
        node["free_memory"] = m.freeMib;
        out.changes.push_back(NodeChange{.node = name,
                                         .ratioMicro = policy->ratioMicro,
                                         .memNodeMib = m.memNodeMib,
                                         .capacityMib = m.capacityMib,
                                         .instancesMib = on.upMib});
    }
    // The input was valid UTF-8 (the parser checks), so nothing is replaced.
    out.json = input.dump(-1, ' ', false, Json::error_handler_t::replace);
    return out;
}

namespace {

// `text` in ASCII: the signs memqos's messages use spelled out, any other
// non-ASCII byte as '?'. Ganeti shows an iallocator's "info" to the operator
// through a path that does not keep UTF-8 ("≥" arrived as "e").
std::string asciiOnly(std::string_view text) {
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kSigns = {{
        {"\u2265", ">="},
        {"\u2264", "<="},
        {"\u00d7", "x"},
        {"\u2212", "-"},
        {"\u00b7", "*"},
        {"\u2026", "..."},
        {"\u2192", "->"},
    }};
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) {
            out.push_back(static_cast<char>(c));
            ++i;
            continue;
        }
        bool spelled = false;
        for (const auto& [sign, ascii] : kSigns) {
            if (text.substr(i).starts_with(sign)) {
                out.append(ascii);
                i += sign.size();
                spelled = true;
                break;
            }
        }
        if (!spelled) {
            out.push_back('?');
            ++i;
            // the rest of a multi-byte sequence
            while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) {
                ++i;
            }
        }
    }
    return out;
}

} // namespace

std::string describe(const NodeChange& c) {
    return "memqos: node " + c.node + ": ratio " + ratioText(c.ratioMicro, true) + ", mem_node " +
           std::to_string(c.memNodeMib) + " MiB, capacity " + std::to_string(c.capacityMib) +
           " MiB, instances " + std::to_string(c.instancesMib) + " MiB";
}

std::string failureReply(std::string_view message) {
    Json reply = Json::object();
    reply["success"] = false;
    reply["info"] = asciiOnly("memqos: " + std::string(message));
    reply["result"] = Json::array();
    return reply.dump(-1, ' ', false, Json::error_handler_t::replace);
}

} // namespace memqos::ganeti

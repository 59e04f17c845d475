// SPDX-License-Identifier: Apache-2.0
#include "memqos/config/ganeti_policy.hpp"

#include "memqos/config/values.hpp"
#include "memqos/core/types.hpp"
#include "memqos/parse/text.hpp"

#include <cmath>

namespace memqos::config {
namespace {

using parse::text::bounded;

} // namespace

std::uint64_t ceilMib(std::uint64_t bytes) {
    return bytes / kMiB + (bytes % kMiB != 0 ? 1 : 0);
}

std::uint64_t ratioMicro(double ratio) {
    if (!(ratio > 0)) { // NaN or not positive
        return 0;
    }
    return static_cast<std::uint64_t>(std::llround(ratio * static_cast<double>(kMicro)));
}

std::string ratioText(std::uint64_t micro, bool sixDecimals) {
    std::string s = std::to_string(micro / kMicro);
    const auto frac = micro % kMicro;
    if (frac == 0 && !sixDecimals) {
        return s;
    }
    std::string f = std::to_string(frac);
    f.insert(0, 6 - f.size(), '0');
    while (!sixDecimals && f.back() == '0') {
        f.pop_back();
    }
    return s + "." + f;
}

std::optional<NodePolicy> resolvePolicy(const TagPolicy& node, const TagPolicy& group,
                                        const TagPolicy& cluster) {
    const auto pick = [](const auto& a, const auto& b, const auto& c) {
        return a ? a : (b ? b : c);
    };
    const auto ratio = pick(node.ratioMicro, group.ratioMicro, cluster.ratioMicro);
    const auto memNode = pick(node.memNodeMib, group.memNodeMib, cluster.memNodeMib);
    if (!ratio && !memNode) {
        return std::nullopt;
    }
    return NodePolicy{ratio.value_or(kMicro), memNode};
}

Result<TagPolicy> parseTagPolicy(const std::vector<std::string>& tags, std::string_view where) {
    TagPolicy policy;
    std::string ratioTag;
    std::string memNodeTag;
    std::string vmOverheadTag;
    // A size tag (mem-node, vm-overhead) into `slot`, in whole MiB rounded
    // up; `seen` is the tag that set it first (one level, one value).
    const auto sizeTag = [where](std::string_view t, std::string_view prefix,
                                 std::optional<std::uint64_t>& slot, std::string& seen) -> Status {
        auto size = parseSize(t.substr(prefix.size()));
        if (!size) {
            return invalid(std::string(where) + ": tag " + bounded(t) + ": " + size.error().what);
        }
        const auto mib = ceilMib(*size);
        if (mib > kMaxMib) {
            return invalid(std::string(where) + ": tag " + bounded(t) + ": more than 2^32 MiB");
        }
        if (slot && *slot != mib) {
            return invalid(std::string(where) + ": tags " + bounded(seen) + " and " + bounded(t) +
                           " disagree");
        }
        slot = mib;
        seen = std::string(t);
        return okStatus();
    };
    for (const auto& tag : tags) {
        const std::string_view t(tag);
        if (t.starts_with(kRatioTag)) {
            const auto value = t.substr(kRatioTag.size());
            auto ratio = parseRatio(value);
            if (!ratio) {
                return invalid(std::string(where) + ": tag " + bounded(t) + ": " +
                               ratio.error().what);
            }
            const auto micro = ratioMicro(*ratio);
            if (policy.ratioMicro && *policy.ratioMicro != micro) {
                return invalid(std::string(where) + ": tags " + bounded(ratioTag) + " and " +
                               bounded(t) + " disagree");
            }
            policy.ratioMicro = micro;
            ratioTag = tag;
        } else if (t.starts_with(kMemNodeTag)) {
            if (auto st = sizeTag(t, kMemNodeTag, policy.memNodeMib, memNodeTag); !st) {
                return st.error();
            }
        } else if (t.starts_with(kVmOverheadTag)) {
            if (auto st = sizeTag(t, kVmOverheadTag, policy.vmOverheadMib, vmOverheadTag); !st) {
                return st.error();
            }
        } else if (t == kRatioTag.substr(0, kRatioTag.size() - 1) ||
                   t == kMemNodeTag.substr(0, kMemNodeTag.size() - 1) ||
                   t == kVmOverheadTag.substr(0, kVmOverheadTag.size() - 1)) {
            return invalid(std::string(where) + ": tag " + bounded(t) +
                           ": no value (expected e.g. memqos:memory-ratio:1.5, "
                           "memqos:mem-node:1G or memqos:vm-overhead:64M)");
        }
    }
    return policy;
}

std::string policyDrift(const NodePolicy& tags, double memqosdRatio,
                        std::uint64_t memqosdNodeReservedBytes) {
    std::string what;
    const auto memqosdMicro = ratioMicro(memqosdRatio);
    if (memqosdMicro != tags.ratioMicro) {
        what = "memqosd's MemoryRatio " + ratioText(memqosdMicro) + " but the tags say " +
               ratioText(tags.ratioMicro);
    }
    if (tags.memNodeMib && ceilMib(memqosdNodeReservedBytes) != *tags.memNodeMib) {
        what += (what.empty() ? "" : "; ") + std::string("memqosd's NodeReserved ") +
                std::to_string(memqosdNodeReservedBytes) + " bytes but the tags say " +
                std::to_string(*tags.memNodeMib) + " MiB";
    }
    return what;
}

Status noVmOverheadBelowCluster(const TagPolicy& policy, std::string_view where) {
    if (!policy.vmOverheadMib) {
        return okStatus();
    }
    return invalid(std::string(where) + ": tag " + std::string(kVmOverheadTag) +
                   std::to_string(*policy.vmOverheadMib) +
                   "M: set memqos:vm-overhead on the cluster only (an instance's overhead must "
                   "be the same on every node it may move to)");
}

std::string vmOverheadDrift(const TagPolicy& cluster, std::uint64_t memqosdVmOverheadBytes) {
    if (!cluster.vmOverheadMib || ceilMib(memqosdVmOverheadBytes) == *cluster.vmOverheadMib) {
        return "";
    }
    return "memqosd's VMOverhead " + std::to_string(memqosdVmOverheadBytes) +
           " bytes but the tags say " + std::to_string(*cluster.vmOverheadMib) + " MiB";
}

} // namespace memqos::config

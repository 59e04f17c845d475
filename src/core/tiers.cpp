// SPDX-License-Identifier: Apache-2.0
#include "memqos/core/tiers.hpp"

#include <algorithm>
#include <map>
#include <string_view>

#include "numeric.hpp"

namespace memqos::core {

using detail::U128;

Bytes saturatingAdd(Bytes a, Bytes b) {
    return detail::saturate(U128{a} + b);
}

Result<Tiers> computeTiers(const ClassPolicy& cls, const Workload& w, Bytes memTotal,
                           Bytes pageSize) {
    const std::string who = w.id + " (class " + cls.name + ")";
    if (pageSize == 0) {
        return invalid(who + ": page size is 0");
    }
    if (w.limit && *w.limit == 0) {
        return invalid(who + ": limit is 0 (use no limit for \"max\")");
    }
    if (w.limit && w.request > *w.limit) {
        return invalid(who + ": request " + detail::toText(w.request) + " is above limit " +
                       detail::toText(*w.limit));
    }
    if (cls.throttlingFactor && *cls.throttlingFactor > kPermyriadOne) {
        return invalid(who + ": throttling factor " + detail::permyriadText(*cls.throttlingFactor) +
                       " is above 100%");
    }

    Tiers t;
    t.memoryMax = w.limit;
    switch (cls.protection) {
    case Protection::Min:
        t.memoryMin = w.request;
        break;
    case Protection::Low:
        t.memoryLow = w.request;
        break;
    case Protection::None:
        break;
    }
    if (!cls.swap) {
        t.swapMax = 0;
    }

    const bool requestIsLimit = w.limit && *w.limit == w.request;
    if (cls.throttlingFactor && w.request > 0 && !requestIsLimit) {
        const Bytes ceiling = std::min(w.limit.value_or(memTotal), memTotal);
        if (ceiling > w.request) {
            // floor(floor(x)/p) == floor(x/p), so one integer division by
            // 10000·page is the exact floor of the Kubernetes formula.
            const U128 f = *cls.throttlingFactor;
            const U128 scaled = U128{w.request} * kPermyriadOne + f * (ceiling - w.request);
            const U128 unit = U128{kPermyriadOne} * pageSize;
            const auto high = static_cast<Bytes>(scaled / unit * pageSize); // ≤ ceiling, fits
            if (high > w.request) {
                t.memoryHigh = high;
            }
        }
    }
    return t;
}

Tiers sliceTiers(const std::vector<Tiers>& children) {
    Tiers t;
    for (const auto& c : children) {
        t.memoryMin = saturatingAdd(t.memoryMin, c.memoryMin);
        t.memoryLow = saturatingAdd(t.memoryLow, c.memoryLow);
    }
    return t;
}

std::vector<CgroupProtection> propagateProtection(const std::vector<CgroupProtection>& leaves) {
    std::map<std::string, CgroupProtection, std::less<>> sums;
    for (const auto& leaf : leaves) {
        // Split into components, skipping empty ones ("/a//b/" is "a/b").
        std::vector<std::string_view> parts;
        std::string_view rest = leaf.path;
        while (!rest.empty()) {
            const auto slash = rest.find('/');
            const auto part = rest.substr(0, slash);
            if (!part.empty()) {
                parts.push_back(part);
            }
            if (slash == std::string_view::npos) {
                break;
            }
            rest.remove_prefix(slash + 1);
        }
        std::string prefix;
        for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
            if (i > 0) {
                prefix += '/';
            }
            prefix += parts[i];
            auto [it, inserted] = sums.try_emplace(prefix, CgroupProtection{.path = prefix});
            it->second.memoryMin = saturatingAdd(it->second.memoryMin, leaf.memoryMin);
            it->second.memoryLow = saturatingAdd(it->second.memoryLow, leaf.memoryLow);
        }
    }
    std::vector<CgroupProtection> out;
    out.reserve(sums.size());
    for (auto& [path, p] : sums) {
        out.push_back(std::move(p));
    }
    return out;
}

} // namespace memqos::core

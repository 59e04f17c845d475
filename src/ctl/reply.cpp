// SPDX-License-Identifier: Apache-2.0
#include "reply.hpp"

#include "bus_error.hpp"

namespace memqos::ctl {
namespace {

const ValueArray* asArray(const Value& v) {
    return std::get_if<ValueArray>(&v.v);
}
const ValueObject* asObject(const Value& v) {
    return std::get_if<ValueObject>(&v.v);
}
const std::string* asString(const Value& v) {
    return std::get_if<std::string>(&v.v);
}

// A struct of `n` strings, as in a(so), a(ssso), a(sss).
bool stringStruct(const Value& v, std::size_t n, std::vector<std::string>& out) {
    const ValueArray* fields = asArray(v);
    if (fields == nullptr || fields->size() != n) {
        return false;
    }
    out.clear();
    for (const auto& f : *fields) {
        const std::string* s = asString(f);
        if (s == nullptr) {
            return false;
        }
        out.push_back(*s);
    }
    return true;
}

// The single array out-argument of a list method.
const ValueArray* listArgument(const ValueArray& out) {
    return out.size() == 1 ? asArray(out[0]) : nullptr;
}

} // namespace

Result<std::vector<ClassRef>> classRefsFromReply(const ValueArray& out) {
    const ValueArray* list = listArgument(out);
    if (list == nullptr) {
        return malformedReply("ListClasses", "expected one array a(so)");
    }
    std::vector<ClassRef> refs;
    std::vector<std::string> f;
    for (const auto& entry : *list) {
        if (!stringStruct(entry, 2, f)) {
            return malformedReply("ListClasses", "an entry is not (so)");
        }
        refs.push_back({f[0], f[1]});
    }
    return refs;
}

Result<std::vector<WorkloadRef>> workloadRefsFromReply(const ValueArray& out) {
    const ValueArray* list = listArgument(out);
    if (list == nullptr) {
        return malformedReply("ListWorkloads", "expected one array a(ssso)");
    }
    std::vector<WorkloadRef> refs;
    std::vector<std::string> f;
    for (const auto& entry : *list) {
        if (!stringStruct(entry, 4, f)) {
            return malformedReply("ListWorkloads", "an entry is not (ssso)");
        }
        refs.push_back({f[0], f[1], f[2], f[3]});
    }
    return refs;
}

Result<PlacementVerdict> placementFromReply(const ValueArray& out) {
    const std::string* verdict = out.size() == 3 ? asString(out[0]) : nullptr;
    const std::string* message = out.size() == 3 ? asString(out[1]) : nullptr;
    if (verdict == nullptr || message == nullptr) {
        return malformedReply("VerifyPlacement", "expected (verdict s, message s, numbers a{st})");
    }
    PlacementVerdict p{*verdict, *message, {}};
    if (const ValueObject* numbers = asObject(out[2])) {
        for (const auto& [k, v] : *numbers) {
            const auto* n = std::get_if<std::uint64_t>(&v.v);
            if (n == nullptr) {
                return malformedReply("VerifyPlacement", "number '" + k + "' is not a uint64");
            }
            p.numbers.emplace_back(k, *n);
        }
    } else if (out[2].size() != 0 || !std::holds_alternative<ValueArray>(out[2].v)) {
        // An empty a{st} reads as an empty array: accepted.
        return malformedReply("VerifyPlacement", "numbers is not a{st}");
    }
    return p;
}

Result<std::vector<Finding>> findingsFromReply(const ValueArray& out) {
    const ValueArray* list = listArgument(out);
    if (list == nullptr) {
        return malformedReply("Verify", "expected one array a(sss)");
    }
    std::vector<Finding> findings;
    std::vector<std::string> f;
    for (const auto& entry : *list) {
        if (!stringStruct(entry, 3, f)) {
            return malformedReply("Verify", "a finding is not (sss)");
        }
        findings.push_back({f[0], f[1], f[2]});
    }
    return findings;
}

Result<std::string> objectPathFromReply(const ValueArray& out, std::string_view member) {
    const std::string* path = out.size() == 1 ? asString(out[0]) : nullptr;
    if (path == nullptr) {
        return malformedReply(member, "expected one object path");
    }
    return *path;
}

Result<PropertyMap> propertiesFromReply(const ValueArray& out) {
    if (out.size() != 1) {
        return malformedReply("GetAll", "expected one a{sv}");
    }
    PropertyMap props;
    if (const ValueObject* dict = asObject(out[0])) {
        for (const auto& [k, v] : *dict) {
            props.insert_or_assign(k, v);
        }
    } else if (out[0].size() != 0 || !std::holds_alternative<ValueArray>(out[0].v)) {
        return malformedReply("GetAll", "expected a{sv}");
    }
    return props;
}

Result<std::vector<Instance>> instancesFromReply(const ValueArray& out) {
    const ValueArray* list = listArgument(out);
    if (list == nullptr) {
        return malformedReply("ListInstances", "expected one array a(sttb)");
    }
    std::vector<Instance> instances;
    for (const auto& entry : *list) {
        const ValueArray* f = asArray(entry);
        const std::string* name = f != nullptr && f->size() == 4 ? asString((*f)[0]) : nullptr;
        const auto* min = name != nullptr ? std::get_if<std::uint64_t>(&(*f)[1].v) : nullptr;
        const auto* max = name != nullptr ? std::get_if<std::uint64_t>(&(*f)[2].v) : nullptr;
        const auto* up = name != nullptr ? std::get_if<bool>(&(*f)[3].v) : nullptr;
        if (min == nullptr || max == nullptr || up == nullptr) {
            return malformedReply("ListInstances", "an entry is not (sttb)");
        }
        instances.push_back({*name, *min, *max, *up});
    }
    return instances;
}

Result<std::vector<KillInfo>> killsFromReply(const ValueArray& out) {
    const ValueArray* list = listArgument(out);
    if (list == nullptr) {
        return malformedReply("ListKills", "expected one array a(tsssa{st})");
    }
    std::vector<KillInfo> kills;
    for (const auto& entry : *list) {
        const ValueArray* f = asArray(entry);
        const auto* time = f != nullptr && f->size() == 5 ? std::get_if<std::uint64_t>(&(*f)[0].v)
                                                          : nullptr;
        const std::string* id = time != nullptr ? asString((*f)[1]) : nullptr;
        const std::string* cls = id != nullptr ? asString((*f)[2]) : nullptr;
        const std::string* reason = cls != nullptr ? asString((*f)[3]) : nullptr;
        if (reason == nullptr) {
            return malformedReply("ListKills", "an entry is not (tsssa{st})");
        }
        KillInfo k{*time, *id, *cls, *reason, {}};
        if (const ValueObject* numbers = asObject((*f)[4])) {
            for (const auto& [key, v] : *numbers) {
                const auto* n = std::get_if<std::uint64_t>(&v.v);
                if (n == nullptr) {
                    return malformedReply("ListKills", "number '" + key + "' is not a uint64");
                }
                k.numbers.emplace_back(key, *n);
            }
        }
        kills.push_back(std::move(k));
    }
    return kills;
}

} // namespace memqos::ctl

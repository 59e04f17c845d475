// SPDX-License-Identifier: Apache-2.0
#include "reply.hpp"

#include "memqos/io/bus_names.hpp"

#include <algorithm>
#include <utility>

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

// The reply of a list method, one array of `signature` ("(sttb)"): each
// element made into a T by `make(element)` -> Result<T>; its first error is
// the reply's.
template <typename T, typename Make>
Result<std::vector<T>> listReply(const ValueArray& out, std::string_view member,
                                 std::string_view signature, Make make) {
    const ValueArray* list = listArgument(out);
    if (list == nullptr) {
        return malformedReply(member, "expected one array a" + std::string(signature));
    }
    std::vector<T> items;
    for (const auto& entry : *list) {
        Result<T> item = make(entry);
        if (!item) {
            return item.error();
        }
        items.push_back(std::move(*item));
    }
    return items;
}

// listReply() for elements that are structs of strings, `signature`
// "(so)", "(ssso)", "(sss)": each one's fields made into a T by `make`.
// `element` names one in the error ("an entry").
template <typename T, typename Make>
Result<std::vector<T>> stringStructs(const ValueArray& out, std::string_view member,
                                     std::string_view signature, std::string_view element,
                                     Make make) {
    std::vector<std::string> f;
    return listReply<T>(out, member, signature, [&](const Value& entry) -> Result<T> {
        if (!stringStruct(entry, signature.size() - 2, f)) {
            return malformedReply(member,
                                  std::string(element) + " is not " + std::string(signature));
        }
        return make(f);
    });
}

// The a{st} `numbers` appended to `out`; an error names the first whose
// value is not a uint64.
Status readNumbers(const ValueObject& numbers, std::string_view member,
                   std::vector<std::pair<std::string, std::uint64_t>>& out) {
    for (const auto& [k, v] : numbers) {
        const auto* n = std::get_if<std::uint64_t>(&v.v);
        if (n == nullptr) {
            return malformedReply(member, "number '" + k + "' is not a uint64");
        }
        out.emplace_back(k, *n);
    }
    return okStatus();
}

} // namespace

Result<std::vector<ClassRef>> classRefsFromReply(const ValueArray& out) {
    return stringStructs<ClassRef>(out, "ListClasses", "(so)", "an entry", [](const auto& f) {
        return ClassRef{f[0], f[1]};
    });
}

Result<std::vector<WorkloadRef>> workloadRefsFromReply(const ValueArray& out) {
    return stringStructs<WorkloadRef>(out, "ListWorkloads", "(ssso)", "an entry",
                                      [](const auto& f) {
                                          return WorkloadRef{f[0], f[1], f[2], f[3]};
                                      });
}

Result<PlacementVerdict> placementFromReply(const ValueArray& out) {
    const std::string* verdict = out.size() == 3 ? asString(out[0]) : nullptr;
    const std::string* message = out.size() == 3 ? asString(out[1]) : nullptr;
    if (verdict == nullptr || message == nullptr) {
        return malformedReply("VerifyPlacement", "expected (verdict s, message s, numbers a{st})");
    }
    PlacementVerdict p{*verdict, *message, {}};
    if (const ValueObject* numbers = asObject(out[2])) {
        if (auto ok = readNumbers(*numbers, "VerifyPlacement", p.numbers); !ok) {
            return ok.error();
        }
    } else if (out[2].size() != 0 || !std::holds_alternative<ValueArray>(out[2].v)) {
        // An empty a{st} reads as an empty array: accepted.
        return malformedReply("VerifyPlacement", "numbers is not a{st}");
    }
    return p;
}

Result<std::vector<Finding>> findingsFromReply(const ValueArray& out) {
    return stringStructs<Finding>(out, "Verify", "(sss)", "a finding", [](const auto& f) {
        return Finding{f[0], f[1], f[2]};
    });
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
    return listReply<Instance>(
        out, "ListInstances", "(sttb)", [](const Value& entry) -> Result<Instance> {
            const ValueArray* f = asArray(entry);
            const std::string* name = f != nullptr && f->size() == 4 ? asString((*f)[0]) : nullptr;
            const auto* min = name != nullptr ? std::get_if<std::uint64_t>(&(*f)[1].v) : nullptr;
            const auto* max = name != nullptr ? std::get_if<std::uint64_t>(&(*f)[2].v) : nullptr;
            const auto* up = name != nullptr ? std::get_if<bool>(&(*f)[3].v) : nullptr;
            if (min == nullptr || max == nullptr || up == nullptr) {
                return malformedReply("ListInstances", "an entry is not (sttb)");
            }
            return Instance{*name, *min, *max, *up};
        });
}

Result<std::vector<KillInfo>> killsFromReply(const ValueArray& out) {
    return listReply<KillInfo>(
        out, "ListKills", "(tsssa{st})", [](const Value& entry) -> Result<KillInfo> {
            const ValueArray* f = asArray(entry);
            const auto* time =
                f != nullptr && f->size() == 5 ? std::get_if<std::uint64_t>(&(*f)[0].v) : nullptr;
            const std::string* id = time != nullptr ? asString((*f)[1]) : nullptr;
            const std::string* cls = id != nullptr ? asString((*f)[2]) : nullptr;
            const std::string* reason = cls != nullptr ? asString((*f)[3]) : nullptr;
            if (reason == nullptr) {
                return malformedReply("ListKills", "an entry is not (tsssa{st})");
            }
            KillInfo k{*time, *id, *cls, *reason, {}};
            if (const ValueObject* numbers = asObject((*f)[4])) {
                if (auto ok = readNumbers(*numbers, "ListKills", k.numbers); !ok) {
                    return ok.error();
                }
            }
            return k;
        });
}

Result<ManagedObjects> managedObjectsFromReply(const ValueArray& managed) {
    const ValueObject* objects = managed.size() == 1 ? asObject(managed[0]) : nullptr;
    const ValueArray* none = managed.size() == 1 ? asArray(managed[0]) : nullptr;
    if (objects == nullptr && (none == nullptr || !none->empty())) {
        return malformedReply("GetManagedObjects", "expected a{oa{sa{sv}}}");
    }
    ManagedObjects out;
    for (const auto& [path, interfaces] : objects != nullptr ? *objects : ValueObject{}) {
        const ValueObject* byInterface = asObject(interfaces);
        if (byInterface == nullptr) {
            continue; // an object without interfaces (a{} read as an empty array)
        }
        for (const auto& [interface, dict] : *byInterface) {
            const bool isClass = interface == io::bus_names::kClassInterface;
            if (!isClass && interface != io::bus_names::kWorkloadInterface) {
                continue;
            }
            auto props = propertiesFromReply(ValueArray{dict});
            if (!props) {
                return malformedReply("GetManagedObjects", path + ": expected a{sv}");
            }
            if (isClass) {
                out.classes.push_back(classFromProperties(path, *props));
            } else {
                out.workloads.push_back(workloadFromProperties(path, *props));
            }
        }
    }
    return out;
}

namespace {

template <typename Info, typename Ref>
std::vector<Info> orderedLike(const std::vector<Ref>& refs, std::vector<Info> objects) {
    std::vector<Info> out;
    out.reserve(refs.size());
    for (const auto& ref : refs) {
        auto it = std::find_if(objects.begin(), objects.end(),
                               [&](const Info& o) { return o.objectPath == ref.objectPath; });
        if (it != objects.end()) {
            out.push_back(std::move(*it));
            objects.erase(it);
        }
    }
    return out;
}

} // namespace

std::vector<ClassInfo> inListOrder(const std::vector<ClassRef>& refs,
                                   std::vector<ClassInfo> objects) {
    return orderedLike(refs, std::move(objects));
}

std::vector<WorkloadInfo> inListOrder(const std::vector<WorkloadRef>& refs,
                                      std::vector<WorkloadInfo> objects) {
    return orderedLike(refs, std::move(objects));
}

} // namespace memqos::ctl

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Method replies of org.memqos1 → plain structs, pure. The bus client has
// already read the reply body into one Value per out-argument and checked the
// signature; these functions still check the shape and return
// malformedReply() instead of indexing past the end.

#include "memqos/util/result.hpp"

#include <string>
#include <string_view>
#include <vector>

#include "model.hpp"

namespace memqos::ctl {

struct ClassRef {
    std::string name;
    std::string objectPath;
};

struct WorkloadRef {
    std::string id;
    std::string kind;
    std::string className;
    std::string objectPath;
};

Result<std::vector<ClassRef>> classRefsFromReply(const ValueArray& out);       // a(so)
Result<std::vector<WorkloadRef>> workloadRefsFromReply(const ValueArray& out); // a(ssso)
Result<PlacementVerdict> placementFromReply(const ValueArray& out);            // s s a{st}
Result<std::vector<Finding>> findingsFromReply(const ValueArray& out);         // a(sss)
Result<std::string> objectPathFromReply(const ValueArray& out, std::string_view member); // o
Result<PropertyMap> propertiesFromReply(const ValueArray& out);                          // a{sv}
Result<std::vector<Instance>> instancesFromReply(const ValueArray& out);
Result<std::vector<KillInfo>> killsFromReply(const ValueArray& out); // a(tsssa{st})             // a(sttb)

// The org.memqos1.Class and org.memqos1.Workload objects of an
// ObjectManager.GetManagedObjects reply (a{oa{sa{sv}}}), each with its
// properties, in the reply's order; other interfaces are passed over.
struct ManagedObjects {
    std::vector<ClassInfo> classes;
    std::vector<WorkloadInfo> workloads;
};
Result<ManagedObjects> managedObjectsFromReply(const ValueArray& managed);

// The classes of `objects` in the order of `refs` (ListClasses: the
// daemon's rank order), matched by object path; likewise the workloads in
// the order of ListWorkloads. A listed object that is not among `objects`
// (gone between the two calls) is left out, as is one that was not listed.
std::vector<ClassInfo> inListOrder(const std::vector<ClassRef>& refs,
                                   std::vector<ClassInfo> objects);
std::vector<WorkloadInfo> inListOrder(const std::vector<WorkloadRef>& refs,
                                      std::vector<WorkloadInfo> objects);

} // namespace memqos::ctl

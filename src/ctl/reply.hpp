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

} // namespace memqos::ctl

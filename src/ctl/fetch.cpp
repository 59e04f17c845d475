// SPDX-License-Identifier: Apache-2.0
#include "fetch.hpp"

#include <string>
#include <utility>

namespace memqos::ctl {

Result<std::vector<ClassInfo>> fetchClasses(BusClient& client) {
    auto replies = client.classesAndObjects();
    if (!replies) {
        return replies.error();
    }
    auto refs = classRefsFromReply(replies->first);
    if (!refs) {
        return refs.error();
    }
    auto objects = managedObjectsFromReply(replies->second);
    if (!objects) {
        return objects.error();
    }
    return inListOrder(*refs, std::move(objects->classes));
}

Result<std::vector<WorkloadInfo>> fetchWorkloads(BusClient& client) {
    auto replies = client.workloadsAndObjects();
    if (!replies) {
        return replies.error();
    }
    auto refs = workloadRefsFromReply(replies->first);
    if (!refs) {
        return refs.error();
    }
    auto objects = managedObjectsFromReply(replies->second);
    if (!objects) {
        return objects.error();
    }
    return inListOrder(*refs, std::move(objects->workloads));
}

Result<WorkloadRef> findWorkload(BusClient& client, std::string_view id) {
    auto refs = client.listWorkloads();
    if (!refs) {
        return refs.error();
    }
    for (auto& ref : *refs) {
        if (ref.id == id) {
            return std::move(ref);
        }
    }
    return makeError(std::errc::no_such_file_or_directory,
                     "no workload '" + std::string(id) +
                         "' is managed by memqos (memqosctl workloads lists them)");
}

} // namespace memqos::ctl

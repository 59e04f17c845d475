// SPDX-License-Identifier: Apache-2.0
#pragma once
// Every class and every workload with its properties: the List* call, then
// GetAll on each object. Used by classes, workloads and top.

#include "memqos/util/result.hpp"

#include <string_view>
#include <vector>

#include "bus_client.hpp"
#include "model.hpp"

namespace memqos::ctl {

// An object that vanished between the list and its GetAll (UnknownObject) is
// left out: it is no longer there to show.
Result<std::vector<ClassInfo>> fetchClasses(BusClient& client);
Result<std::vector<WorkloadInfo>> fetchWorkloads(BusClient& client);

// The managed workload `id` (ListWorkloads), or an error with
// std::errc::no_such_file_or_directory (exit status 6) naming it.
Result<WorkloadRef> findWorkload(BusClient& client, std::string_view id);

} // namespace memqos::ctl

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Every class and every workload with its properties: the List* call, then
// GetAll on each object. Used by classes, workloads and top.

#include "memqos/util/result.hpp"

#include <vector>

#include "bus_client.hpp"
#include "model.hpp"

namespace memqos::ctl {

// An object that vanished between the list and its GetAll (UnknownObject) is
// left out: it is no longer there to show.
Result<std::vector<ClassInfo>> fetchClasses(BusClient& client);
Result<std::vector<WorkloadInfo>> fetchWorkloads(BusClient& client);

} // namespace memqos::ctl

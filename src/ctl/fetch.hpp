// SPDX-License-Identifier: Apache-2.0
#pragma once
// Every class and every workload with its properties, in one bus round trip:
// the List* call and ObjectManager.GetManagedObjects go out together
// (BusClient::classesAndObjects), the list giving the order (the daemon's
// rank order for classes). Used by classes, workloads and their completion.

#include "memqos/util/result.hpp"

#include <string_view>
#include <vector>

#include "bus_client.hpp"
#include "model.hpp"

namespace memqos::ctl {

// An object that the list names but GetManagedObjects no longer has (gone
// between the two) is left out: it is no longer there to show.
Result<std::vector<ClassInfo>> fetchClasses(BusClient& client);
Result<std::vector<WorkloadInfo>> fetchWorkloads(BusClient& client);

// The managed workload `id` (ListWorkloads), or an error with
// std::errc::no_such_file_or_directory (exit status 6) naming it.
Result<WorkloadRef> findWorkload(BusClient& client, std::string_view id);

} // namespace memqos::ctl

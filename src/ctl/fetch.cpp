// SPDX-License-Identifier: Apache-2.0
#include "fetch.hpp"

#include <string>
#include <utility>

namespace memqos::ctl {
namespace {

template <typename Item, typename Ref>
Result<std::vector<Item>> fetchAll(BusClient& client, const std::vector<Ref>& refs,
                                   const char* interface,
                                   Item (*make)(std::string, const PropertyMap&)) {
    std::vector<Item> items;
    for (const auto& ref : refs) {
        auto props = client.getAll(ref.objectPath, interface);
        if (!props) {
            if (props.error().what.starts_with("org.freedesktop.DBus.Error.UnknownObject")) {
                continue;
            }
            return props.error();
        }
        items.push_back(make(ref.objectPath, *props));
    }
    return items;
}

} // namespace

Result<std::vector<ClassInfo>> fetchClasses(BusClient& client) {
    auto refs = client.listClasses();
    if (!refs) {
        return refs.error();
    }
    return fetchAll(client, *refs, io::bus_names::kClassInterface, classFromProperties);
}

Result<std::vector<WorkloadInfo>> fetchWorkloads(BusClient& client) {
    auto refs = client.listWorkloads();
    if (!refs) {
        return refs.error();
    }
    return fetchAll(client, *refs, io::bus_names::kWorkloadInterface, workloadFromProperties);
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

// SPDX-License-Identifier: Apache-2.0
#pragma once
// memqosctl's connection to memqosd: raw sd-bus, synchronous calls (a CLI
// blocks anyway; the default 25 s method timeout applies). Every reply is
// read into Value trees and mapped by reply.hpp; every failure is an Error
// classified by bus_error.hpp, so the exit status follows from it.

#include "memqos/io/bus_message.hpp"
#include "memqos/io/bus_names.hpp"
#include "memqos/util/result.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "command.hpp"
#include "model.hpp"
#include "reply.hpp"

namespace memqos::ctl {

// Reads the rest of `m`'s current container (the body at top level) as one
// Value per element. Returns a negative errno on a malformed message.
int readValues(sd_bus_message* m, ValueArray& out);

// VerifyPlacement's options; only those set are sent.
struct PlacementOptions {
    std::optional<Bytes> failoverReserve; // "failover_reserve" t
    bool refuseSoft = false;              // "refuse_soft" b, sent when true
    std::string instance;                 // "instance" s, sent when not empty
    std::string className;                // "class" s, sent when not empty
};

class BusClient {
public:
    static Result<BusClient> connect(const BusChoice& bus);

    Result<PropertyMap> getAll(const std::string& path, const char* interface);
    Result<std::vector<ClassRef>> listClasses();
    Result<std::vector<WorkloadRef>> listWorkloads();
    Result<std::string> assignWorkload(const std::string& id, const std::string& className,
                                       Bytes request, Bytes limit, bool persist);
    Status unassignWorkload(const std::string& id);
    // Reclaim(id, bytes): the bytes freed.
    Result<Bytes> reclaim(const std::string& id, Bytes bytes);
    Result<std::string> runWorkload(const std::string& name, const std::string& className,
                                    Bytes request, Bytes limit,
                                    const std::vector<std::string>& argv);
    Result<PlacementVerdict> verifyPlacement(Bytes memory, Bytes minMemory,
                                             const PlacementOptions& options);
    Status recordInstance(const std::string& name, Bytes minMemory, Bytes maxMemory, bool up);
    Status forgetInstance(const std::string& name);
    Result<std::vector<Instance>> listInstances();
    Result<std::vector<KillInfo>> listKills();
    Result<std::vector<Finding>> verify();
    // The keys that need a restart to take effect (empty: all did).
    Result<std::vector<std::string>> reload();
    // Release: every workload given back, then memqosd stops; the ids.
    Result<std::vector<std::string>> release();
    // The Manager's properties (GetAll, a{sv}) and every class and workload
    // object with its properties (ObjectManager.GetManagedObjects on
    // /org/memqos1, a{oa{sa{sv}}}): both requests are sent before either
    // answer is awaited, one round trip for top's frame.
    Result<std::pair<ValueArray, ValueArray>> managerAndObjects();
    // ListClasses (a(so), the daemon's rank order) or ListWorkloads (a(ssso))
    // and GetManagedObjects, sent together in the same way: one round trip
    // for every class or workload with its properties (classes, workloads).
    Result<std::pair<ValueArray, ValueArray>> classesAndObjects();
    Result<std::pair<ValueArray, ValueArray>> workloadsAndObjects();
    // Whether org.memqos1 has an owner right now.
    Result<bool> daemonOnBus();

    sd_bus* raw() const { return bus_.get(); }

private:
    explicit BusClient(sd_bus* bus) : bus_(bus) {}

    // A method call to memqosd, without auto-start.
    Result<io::MessagePtr> newCall(const char* path, const char* interface, const char* member);
    // Calls `member` and reads the whole reply body. `expectedSignature` is
    // checked first; `append` adds the arguments (returns a negative errno).
    template <typename Append>
    Result<ValueArray> call(const char* path, const char* interface, const char* member,
                            std::string_view expectedSignature, Append&& append);
    // call() on the Manager object, its reply mapped by `map` (one of
    // reply.hpp's xFromReply): an error of the call is returned as it is.
    template <typename Append, typename Map>
    std::invoke_result_t<Map&, const ValueArray&>
    callManager(const char* member, std::string_view expectedSignature, Append&& append, Map&& map);

    // The call `member` (with `stringArgument` as its one argument when not
    // null) and GetManagedObjects on /org/memqos1, both sent before either
    // answer is awaited; their reply bodies, each checked against its
    // signature, in that order.
    Result<std::pair<ValueArray, ValueArray>>
    withManagedObjects(const char* path, const char* interface, const char* member,
                       std::string_view signature, const char* stringArgument);

    io::BusPtr bus_;
};

} // namespace memqos::ctl

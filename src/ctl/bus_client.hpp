// SPDX-License-Identifier: Apache-2.0
#pragma once
// memqosctl's connection to memqosd: raw sd-bus, synchronous calls (a CLI
// blocks anyway; the default 25 s method timeout applies). Every reply is
// read into Value trees and mapped by reply.hpp; every failure is an Error
// classified by bus_error.hpp, so the exit status follows from it.

#include "memqos/util/result.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "command.hpp"
#include "model.hpp"
#include "reply.hpp"

struct sd_bus;
struct sd_bus_message;

namespace memqos::ctl {

inline constexpr const char* kBusName = "org.memqos1";
inline constexpr const char* kManagerPath = "/org/memqos1";
inline constexpr const char* kManagerInterface = "org.memqos1.Manager";
inline constexpr const char* kClassInterface = "org.memqos1.Class";
inline constexpr const char* kWorkloadInterface = "org.memqos1.Workload";

// Reads the rest of `m`'s current container (the body at top level) as one
// Value per element. Returns a negative errno on a malformed message.
int readValues(sd_bus_message* m, ValueArray& out);

// VerifyPlacement's options; only those set are sent.
struct PlacementOptions {
    std::optional<Bytes> failoverReserve; // "failover_reserve" t
    bool refuseSoft = false;              // "refuse_soft" b, sent when true
    std::string instance;                 // "instance" s, sent when not empty
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
    // Whether org.memqos1 has an owner right now.
    Result<bool> daemonOnBus();

    sd_bus* raw() const { return bus_.get(); }

private:
    struct Unref {
        void operator()(sd_bus* bus) const;
    };
    explicit BusClient(sd_bus* bus) : bus_(bus) {}

    // Calls `member` and reads the whole reply body. `expectedSignature` is
    // checked first; `append` adds the arguments (returns a negative errno).
    template <typename Append>
    Result<ValueArray> call(const char* path, const char* interface, const char* member,
                            std::string_view expectedSignature, Append&& append);

    std::unique_ptr<sd_bus, Unref> bus_;
};

} // namespace memqos::ctl

// SPDX-License-Identifier: Apache-2.0
#pragma once
// libvirt as memqosd sees it: a small interface so the daemon can be tested
// with a mock, and one implementation over the libvirt C API
// (libvirt_hypervisor.hpp). Every call is asynchronous: the callback runs
// later on the io thread, never inside the call.

#include "memqos/core/types.hpp"
#include "memqos/util/result.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace memqos::io {

// The XML namespace of memqos's domain metadata:
//   <memqos:workload xmlns:memqos="…" class="shared" request="512M"
//                    limit="1G" priority="0"/>
inline constexpr const char* kMetadataNamespace = "https://memqos.org/xmlns/workload/1";
inline constexpr const char* kMetadataPrefix = "memqos";

struct DomainInfo {
    std::string name;
    bool active = false;
    int id = -1;           // libvirt's id of a running domain, -1 otherwise
    std::int32_t pid = 0;  // its qemu process (from libvirt's pidfile), 0 = unknown
    Bytes maxMemory = 0;   // <memory>
    Bytes memory = 0;      // <currentMemory>: the balloon's target
    std::string metadata;  // memqos's metadata element, "" when there is none
    bool persistent = false;
};

// What the guest's balloon driver reports (virDomainMemoryStats); a field
// the guest does not report stays unset.
struct BalloonStats {
    std::optional<Bytes> actual; // balloon size as the guest sees it
    std::optional<Bytes> usable; // guest MemAvailable: inflating by more makes it swap
    std::optional<Bytes> rss;    // qemu's resident memory on the host
};

enum class DomainEvent { Started, Stopped, Defined, Undefined, Other };

class Hypervisor {
public:
    using Done = std::function<void(Status)>;
    template <typename T>
    using Then = std::function<void(Result<T>)>;

    struct Events {
        // A connection is open (first or after libvirtd came back): list the
        // domains again; events from before are lost.
        std::function<void()> connected;
        // The connection closed (libvirtd stopped or restarted); the client
        // reconnects by itself with backoff.
        std::function<void(const std::string& why)> disconnected;
        std::function<void(const std::string& domain, DomainEvent event)> lifecycle;
        // The balloon moved (VIR_DOMAIN_EVENT_ID_BALLOON_CHANGE): actual.
        std::function<void(const std::string& domain, Bytes actual)> balloonChanged;
    };

    virtual ~Hypervisor() = default;

    // Connects (and keeps reconnecting) and reports through `events`.
    virtual void start(Events events) = 0;
    virtual bool connected() const = 0;
    // Every domain libvirt knows, running or not.
    virtual void listDomains(Then<std::vector<DomainInfo>> then) = 0;
    virtual void domain(const std::string& name, Then<DomainInfo> then) = 0;
    // Turns on balloon statistics (period in seconds) when they are off,
    // then reads them.
    virtual void balloonStats(const std::string& name, Then<BalloonStats> then) = 0;
    // virDomainSetMemory on the running domain (not its persistent config).
    virtual void setBalloon(const std::string& name, Bytes target, Done done) = 0;
    // virDomainDestroy.
    virtual void destroy(const std::string& name, Done done) = 0;
    // Stores memqos's metadata element (live and persistent config), and
    // with a partition, sets <resource><partition> in the persistent config
    // so the next start lands there. An empty `metadata` removes ours.
    virtual void place(const std::string& name, const std::string& metadata,
                       const std::string& partition, Done done) = 0;
};

} // namespace memqos::io

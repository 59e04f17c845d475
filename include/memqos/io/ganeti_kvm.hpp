// SPDX-License-Identifier: Apache-2.0
#pragma once
// Ganeti's KVM hypervisor as memqosd sees it: where an instance's qemu runs
// (Ganeti's pidfile) and its balloon (the instance's HMP monitor socket).
// Ganeti 3.0 keeps both under /run/ganeti/kvm-hypervisor:
//   pid/<instance>             qemu's pid (-pidfile)
//   ctrl/<instance>.monitor    the human monitor (-monitor unix:…,server,nowait)
// and the cluster's instance list and tags in /var/lib/ganeti/ssconf_*.
// Balloon calls are asynchronous: the callback runs later on the io thread,
// never inside the call (HmpGanetiKvm talks to the monitor on a worker thread).

#include "memqos/core/types.hpp"
#include "memqos/util/result.hpp"

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace memqos::io {

class GanetiKvm {
public:
    using Done = std::function<void(Status)>;
    template <typename T>
    using Then = std::function<void(Result<T>)>;

    virtual ~GanetiKvm() = default;
    // Instances with a pidfile (running, or stopped without cleanup).
    virtual std::vector<std::string> instances() const = 0;
    // The pid in the instance's pidfile; ENOENT when there is none.
    virtual Result<std::int32_t> pid(const std::string& instance) const = 0;
    // When the pidfile was last written (seconds since the epoch): a process
    // that started well after it cannot be the qemu that wrote it.
    virtual Result<std::int64_t> pidfileWritten(const std::string& instance) const = 0;
    // The cluster's instances as Ganeti last wrote them on this node
    // (ssconf_instance_list, sorted); an error when the file is missing (not
    // a Ganeti node, or one that left its cluster) or malformed.
    virtual Result<std::vector<std::string>> clusterInstances() const = 0;
    // The cluster's tags as Ganeti last wrote them on this node
    // (ssconf_cluster_tags, one a line; empty lines skipped); an error when
    // the file is missing (not a Ganeti node) or cannot be read. Node and
    // node group tags are not on the nodes.
    virtual Result<std::vector<std::string>> clusterTags() const = 0;
    virtual void balloonActual(const std::string& instance, Then<Bytes> then) = 0;
    virtual void setBalloon(const std::string& instance, Bytes target, Done done) = 0;
};

} // namespace memqos::io

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Hypervisor over the libvirt C API (qemu:///system by default).
//
// Threads: libvirt's default event loop (virEventRegisterDefaultImpl)
// runs on a thread of its own, as libvirt requires for domain events and
// for noticing that libvirtd went away; every libvirt call (a round trip to
// libvirtd) runs on one worker thread, so the io thread never blocks on
// libvirtd. Results and events are posted to the io_context. No GLib: the
// default event implementation is libvirt's own poll loop.
//
// Loading: libvirt is not linked but loaded (dlopen of libvirt.so.0) at the
// first connection tried with a daemon there to answer: for a local
// qemu:///system URI once libvirtd's or virtqemud's socket (or the URI's
// ?socket=) exists, for any other URI at once. Until then no libvirt code
// runs in the process (no event loop thread either), and a connection is
// tried again as below. Linked, libvirt's libraries cost ~10 MiB of RSS.
//
// Connection: opened at start(); when it closes (libvirtd stopped or
// restarted), `disconnected` is posted and a reconnect is tried after 1 s,
// doubling to at most kMaxBackoff; `connected` is posted on every success.
// A call while disconnected fails with ENOTCONN.
//
// Ownership: the io_context must outlive this object; the destructor stops
// both threads (callbacks not yet posted are dropped).

#include "memqos/io/hypervisor.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::io {

// The sockets of which one must exist for `uri` to have a daemon to
// answer: a local qemu:///system's (also qemu+unix://), its ?socket= if it
// has one, else /run/libvirt/libvirt-sock and /run/libvirt/virtqemud-sock;
// none (nothing to look for) for any other URI: another driver, a host, a
// session daemon, an escaped socket path.
std::vector<std::string> localSockets(std::string_view uri);

class LibvirtHypervisor final : public Hypervisor {
public:
    static constexpr std::chrono::seconds kMaxBackoff{30};
    // Balloon statistics period set on domains that have none (seconds).
    static constexpr int kStatsPeriod = 2;

    LibvirtHypervisor(boost::asio::io_context& io, std::string uri,
                      std::string pidDirectory = "/run/libvirt/qemu");
    ~LibvirtHypervisor() override;
    LibvirtHypervisor(const LibvirtHypervisor&) = delete;
    LibvirtHypervisor& operator=(const LibvirtHypervisor&) = delete;

    void start(Events events) override;
    bool connected() const override;
    void listDomains(Then<std::vector<DomainInfo>> then) override;
    void domain(const std::string& name, Then<DomainInfo> then) override;
    void balloonStats(const std::string& name, Then<BalloonStats> then) override;
    void setBalloon(const std::string& name, Bytes target, Done done) override;
    void destroy(const std::string& name, Done done) override;
    void place(const std::string& name, const std::string& metadata, const std::string& partition,
               Done done) override;

    struct State; // shared with the threads and libvirt's callbacks

private:
    void connect();
    void scheduleReconnect();

    boost::asio::io_context& io_;
    std::shared_ptr<State> state_;
    boost::asio::steady_timer retry_;
    std::chrono::seconds backoff_{1};
};

} // namespace memqos::io

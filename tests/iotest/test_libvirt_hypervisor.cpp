// SPDX-License-Identifier: Apache-2.0
// LibvirtHypervisor against libvirt's own in-process test driver
// (test:///default: one running domain "test", 8 GiB, no libvirtd): the
// threads, the posting back to the io thread, and every call's effect as
// libvirt reports it afterwards. The qemu driver (pidfiles, scopes,
// balloons a guest really moves) is tested in the VM suite.
#include "memqos/io/libvirt_hypervisor.hpp"

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

namespace memqos::io {
namespace {

using namespace std::chrono_literals;

class LibvirtTest : public ::testing::Test {
protected:
    boost::asio::io_context io;

    // Runs the io_context until `done` or 10 s.
    void runUntil(const std::function<bool()>& done) {
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (!done() && std::chrono::steady_clock::now() < deadline) {
            io.run_for(20ms);
            io.restart();
        }
        ASSERT_TRUE(done()) << "timed out";
    }

    template <typename T>
    T wait(const std::function<void(std::function<void(T)>)>& call) {
        std::optional<T> out;
        call([&](T r) { out.emplace(std::move(r)); });
        runUntil([&] { return out.has_value(); });
        return std::move(*out);
    }
};

bool libvirtMapped() {
    std::ifstream maps("/proc/self/maps");
    std::stringstream text;
    text << maps.rdbuf();
    return text.str().find("libvirt.so") != std::string::npos;
}

// Issue 25: libvirt is not linked, and not loaded while a local daemon's
// socket is absent. First in this file: once a test has loaded libvirt it
// stays mapped (gtest runs a file's tests in order).
TEST_F(LibvirtTest, NotLoadedWhileTheDaemonsSocketIsAbsent) {
    ASSERT_FALSE(libvirtMapped()) << "libvirt.so is linked into the test (and memqosd)";
    LibvirtHypervisor hv(io, "qemu+unix:///system?socket=/nonexistent/libvirt-sock");
    hv.start({});
    io.run_for(300ms);
    io.restart();
    EXPECT_FALSE(hv.connected());
    auto r = wait<Result<std::vector<DomainInfo>>>([&](auto cb) { hv.listDomains(std::move(cb)); });
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, std::errc::not_connected);
    EXPECT_FALSE(libvirtMapped()) << "loaded with no daemon to answer";
    // Any other URI loads it at the first try: the next test's test:///default.
}

TEST(LibvirtSockets, OnlyALocalSystemDaemonHasSocketsToLookFor) {
    const std::vector<std::string> daemons{"/run/libvirt/libvirt-sock",
                                           "/run/libvirt/virtqemud-sock"};
    EXPECT_EQ(localSockets("qemu:///system"), daemons);
    EXPECT_EQ(localSockets("qemu+unix:///system"), daemons);
    EXPECT_EQ(localSockets("qemu:///system?mode=direct"), daemons);
    EXPECT_EQ(localSockets("qemu+unix:///system?socket=/srv/s"),
              std::vector<std::string>{"/srv/s"});
    EXPECT_EQ(localSockets("qemu:///system?mode=legacy&socket=/srv/s"),
              std::vector<std::string>{"/srv/s"});
    for (const char* other : {"test:///default", "qemu:///session", "qemu+ssh://host/system",
                              "qemu+tcp://host/system", "qemu://host/system", "xen:///system",
                              "qemu:///system?socket=%2Fsrv%2Fs", "qemu:///system?socket=",
                              "qemu", "", "qemu:/system"}) {
        EXPECT_TRUE(localSockets(other).empty()) << other;
    }
}

TEST_F(LibvirtTest, ListsPlacesBalloonsAndDestroys) {
    LibvirtHypervisor hv(io, "test:///default", "/nonexistent");
    bool connected = false;
    std::vector<std::pair<std::string, DomainEvent>> events;
    Hypervisor::Events ev;
    ev.connected = [&] { connected = true; };
    ev.lifecycle = [&](const std::string& n, DomainEvent e) { events.emplace_back(n, e); };
    hv.start(std::move(ev));
    runUntil([&] { return connected; });
    EXPECT_TRUE(hv.connected());
    EXPECT_TRUE(libvirtMapped()) << "connected without loading libvirt?";

    auto list = wait<Result<std::vector<DomainInfo>>>(
        [&](auto cb) { hv.listDomains(std::move(cb)); });
    ASSERT_TRUE(list) << list.error().what;
    ASSERT_EQ(list->size(), 1u);
    const auto& d = list->front();
    EXPECT_EQ(d.name, "test");
    EXPECT_TRUE(d.active);
    EXPECT_GT(d.id, 0);
    EXPECT_EQ(d.pid, 0); // no pidfile in /nonexistent
    EXPECT_GT(d.maxMemory, 0u);
    EXPECT_EQ(d.metadata, "");

    const std::string md = "<workload class=\"reclaimed\" request=\"1G\"/>";
    auto placed = wait<Status>([&](auto cb) { hv.place("test", md, "/memqos/reclaimed", cb); });
    ASSERT_TRUE(placed) << placed.error().what;
    auto after = wait<Result<DomainInfo>>([&](auto cb) { hv.domain("test", std::move(cb)); });
    ASSERT_TRUE(after) << after.error().what;
    EXPECT_NE(after->metadata.find("class=\"reclaimed\""), std::string::npos) << after->metadata;

    auto moved = wait<Status>([&](auto cb) { hv.setBalloon("test", d.maxMemory / 2, cb); });
    ASSERT_TRUE(moved) << moved.error().what;
    auto shrunk = wait<Result<DomainInfo>>([&](auto cb) { hv.domain("test", std::move(cb)); });
    ASSERT_TRUE(shrunk);
    EXPECT_EQ(shrunk->memory, d.maxMemory / 2);

    auto missing = wait<Result<DomainInfo>>([&](auto cb) { hv.domain("nope", std::move(cb)); });
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, std::errc::no_such_file_or_directory);
    EXPECT_NE(missing.error().what.find("nope"), std::string::npos);

    auto destroyed = wait<Status>([&](auto cb) { hv.destroy("test", cb); });
    ASSERT_TRUE(destroyed) << destroyed.error().what;
    runUntil([&] {
        for (const auto& [n, e] : events) {
            if (n == "test" && e == DomainEvent::Stopped) {
                return true;
            }
        }
        return false;
    });
    auto stopped = wait<Result<DomainInfo>>([&](auto cb) { hv.domain("test", std::move(cb)); });
    ASSERT_TRUE(stopped);
    EXPECT_FALSE(stopped->active);

    // Removing memqos's metadata.
    auto cleared = wait<Status>([&](auto cb) { hv.place("test", "", "", cb); });
    ASSERT_TRUE(cleared) << cleared.error().what;
    auto bare = wait<Result<DomainInfo>>([&](auto cb) { hv.domain("test", std::move(cb)); });
    ASSERT_TRUE(bare);
    EXPECT_EQ(bare->metadata, "");
}

// A socket path that exists (here a plain file) with no daemon behind it:
// libvirt is loaded, and its connect fails.
TEST_F(LibvirtTest, RetriesAnUnreachableDaemonWithoutBlocking) {
    const std::string socket = ::testing::TempDir() + "memqos-libvirt-sock";
    std::ofstream(socket) << "";
    LibvirtHypervisor hv(io, "qemu+unix:///system?socket=" + socket);
    bool connected = false;
    Hypervisor::Events ev;
    ev.connected = [&] { connected = true; };
    hv.start(std::move(ev));
    io.run_for(300ms);
    EXPECT_FALSE(connected);
    EXPECT_FALSE(hv.connected());
    auto r = wait<Result<std::vector<DomainInfo>>>([&](auto cb) { hv.listDomains(std::move(cb)); });
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, std::errc::not_connected);
    std::remove(socket.c_str());
}

} // namespace
} // namespace memqos::io

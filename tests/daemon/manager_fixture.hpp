// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one Manager test fixture (issue 26 item 6), for test_manager.cpp and
// test_manager_state.cpp: a temp dir holding a fixture cgroup and proc tree
// (nginx.service and db.service in system.slice, 8 GiB of memory, no
// pressure), a fake systemd (FakeSystemd or a subclass of it), the Manager's
// stores, and the helpers the component tests share.
#include "fake_systemd.hpp"
#include "manager.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

namespace memqos::test {

inline void writeFile(const std::filesystem::path& p, const std::string& text) {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

// A state writer that holds every write until the test runs it: the worker
// thread's order of events, one step at a time.
class HeldStateWriter : public io::StateWriter {
public:
    struct Pending {
        Op op;
        Done done;
    };
    std::deque<Pending> queue;
    void write(Op op, Done done) override { queue.push_back({std::move(op), std::move(done)}); }
    Status writeNow(const Op& op) override {
        runAll();
        return op();
    }
    void runOne() {
        auto p = std::move(queue.front());
        queue.pop_front();
        p.done(p.op());
    }
    void runAll() {
        while (!queue.empty()) {
            auto p = std::move(queue.front());
            queue.pop_front();
            p.done(p.op());
        }
    }
};

// RecordInstance and ForgetInstance, answered: the Manager's writer is
// inline in these tests, so the reply comes before the call returns.
inline daemon::ApiResult<daemon::Done> recordInstance(daemon::Manager& m, const std::string& name,
                                                      Bytes minMemory, Bytes maxMemory, bool up) {
    std::optional<daemon::ApiResult<daemon::Done>> out;
    m.recordInstance(name, minMemory, maxMemory, up,
                     [&](daemon::ApiResult<daemon::Done> r) { out = r; });
    EXPECT_TRUE(out.has_value()) << "no reply";
    return out.value_or(daemon::apiError("NoReply", ""));
}

inline daemon::ApiResult<daemon::Done> forgetInstance(daemon::Manager& m, const std::string& name) {
    std::optional<daemon::ApiResult<daemon::Done>> out;
    m.forgetInstance(name, [&](daemon::ApiResult<daemon::Done> r) { out = r; });
    EXPECT_TRUE(out.has_value()) << "no reply";
    return out.value_or(daemon::apiError("NoReply", ""));
}

template <class Systemd = FakeSystemd>
class ManagerFixture : public testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/memqos-manager-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        systemd_.dropInDir = dir_ / "run/system.control"; // as setRuntimeDropInDir
        writeFile(dir_ / "cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
        writeUnitCgroup("nginx.service");
        writeFile(dir_ / "proc/meminfo", "MemTotal:        8388608 kB\n"
                                         "MemFree:         4194304 kB\n"
                                         "MemAvailable:    6291456 kB\n"
                                         "SwapTotal:       2097152 kB\n"
                                         "SwapFree:        2097152 kB\n");
        writeFile(dir_ / "proc/pressure/memory", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                                                 "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
        writeFile(dir_ / "proc/vmstat", "pgscan_kswapd 0\n");
        writeFile(dir_ / "proc/zoneinfo", "Node 0, zone   Normal\n"
                                          "  pages free     500000\n"
                                          "        boost    0\n"
                                          "        min      11000\n"
                                          "        low      13750\n"
                                          "        high     16500\n"
                                          "        spanned  2097152\n"
                                          "        present  2097152\n"
                                          "        managed  2000000\n");
        writeFile(dir_ / "proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n");
        systemd_.addUnit("nginx.service", "/system.slice/nginx.service");
        systemd_.addUnit("db.service", "/system.slice/db.service");
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    // A unit's cgroup in system.slice: 100 MiB in use, no tiers, pid 4242.
    void writeUnitCgroup(const std::string& unit) {
        const auto u = dir_ / "cgroup/system.slice" / unit;
        writeFile(u / "memory.current", "104857600\n");
        writeFile(u / "memory.min", "0\n");
        writeFile(u / "memory.low", "0\n");
        writeFile(u / "memory.high", "max\n");
        writeFile(u / "memory.max", "max\n");
        writeFile(u / "memory.stat", "anon 1\n");
        writeFile(u / "cgroup.procs", "4242\n");
    }

    // The stores in dir_ (state/, run/); without this they are nowhere
    // (/nonexistent: every write fails, nothing is loaded).
    void useStores() {
        store_ = io::StateStore(dir_ / "state/assignments", dir_ / "run/assignments");
        instances_ = io::InstanceStore(dir_ / "state/instances");
        originals_ = std::make_unique<io::OriginalStore>(dir_ / "state/originals");
    }

    std::unique_ptr<daemon::Manager> makeManager(bool dryRun = false) {
        // The workloads' files through kept fds, as memqosd reads them
        // (service.cpp): every daemon test reads through them.
        io::CgroupFs cgroups(dir_ / "cgroup");
        cgroups.keepWorkloadFiles(256);
        auto m = std::make_unique<daemon::Manager>(
            config_, [this] { return Result<config::Config>(config_); }, systemd_, store_,
            instances_, kills_, std::move(cgroups), io::ProcFs(dir_ / "proc"), dryRun);
        m->setOriginalStore(originals_.get());
        m->setRuntimeDropInDir(dir_ / "run/system.control");
        if (!bootId_.empty()) {
            m->setBootId(bootId_);
        }
        bool ready = false;
        m->start([&](Status st) {
            EXPECT_TRUE(st.ok());
            ready = true;
        });
        systemd_.flush();
        EXPECT_TRUE(ready);
        return m;
    }

    daemon::ApiResult<std::string> assign(daemon::Manager& m, const std::string& id,
                                          const std::string& cls, Bytes request, Bytes limit,
                                          bool persist = true) {
        std::optional<daemon::ApiResult<std::string>> out;
        m.assign(id, cls, request, limit, persist,
                 [&](daemon::ApiResult<std::string> r) { out = r; });
        systemd_.flush();
        EXPECT_TRUE(out.has_value()) << "no reply";
        return out.value_or(daemon::apiError("NoReply", ""));
    }

    std::filesystem::path dir_;
    std::string bootId_; // empty: no boot id (runtime records carry none)
    config::Config config_;
    Systemd systemd_;
    io::StateStore store_{std::filesystem::path("/nonexistent"),
                          std::filesystem::path("/nonexistent")};
    io::InstanceStore instances_{std::filesystem::path("/nonexistent")};
    io::EventStore kills_{std::filesystem::path("/nonexistent/kills")};
    std::unique_ptr<io::OriginalStore> originals_;
};

} // namespace memqos::test

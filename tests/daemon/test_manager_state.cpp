// SPDX-License-Identifier: Apache-2.0
// Component tests of issue 11's defects 4 and 5: state writes that fail
// (named error, old file intact, rollback failures reported) and what a
// reload changes (DryRun both ways, start-only keys reported). The Manager
// runs against the fake systemd, a fixture cgroup/proc tree and a real
// StateStore in a temp dir; failures are real ones of the file system
// (EFBIG from RLIMIT_FSIZE, a directory where a state file should be), so
// they work as root too.
#include "fake_systemd.hpp"
#include "manager.hpp"
#include "manager_fixture.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace memqos;
using memqos::daemon::ApiResult;
using memqos::daemon::Done;
using memqos::daemon::Manager;

namespace {

using test::writeFile;

std::string readText(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The fake systemd, with a hook that runs when a unit's properties are set:
// the moment between the stored assignment and systemd's answer.
class HookedSystemd : public test::FakeSystemd {
public:
    std::function<void(const std::string&)> beforeSet;
    void setUnitProperties(const std::string& unit, const io::MemoryProperties& props,
                           Done done) override {
        if (beforeSet) {
            beforeSet(unit);
        }
        FakeSystemd::setUnitProperties(unit, props, std::move(done));
    }
};

// Makes every write of this process fail with EFBIG (like ENOSPC) while it
// lives; SIGXFSZ is ignored so the write returns the error.
class TinyFileSizeLimit {
public:
    TinyFileSizeLimit() {
        ::getrlimit(RLIMIT_FSIZE, &saved_);
        oldHandler_ = std::signal(SIGXFSZ, SIG_IGN);
        struct rlimit tiny = saved_;
        tiny.rlim_cur = 16;
        ::setrlimit(RLIMIT_FSIZE, &tiny);
    }
    ~TinyFileSizeLimit() {
        ::setrlimit(RLIMIT_FSIZE, &saved_);
        std::signal(SIGXFSZ, oldHandler_);
    }
    TinyFileSizeLimit(const TinyFileSizeLimit&) = delete;
    TinyFileSizeLimit& operator=(const TinyFileSizeLimit&) = delete;

private:
    struct rlimit saved_ {};
    void (*oldHandler_)(int) = nullptr;
};

// The shared fixture (manager_fixture.hpp) with its stores in the temp dir,
// db.service's cgroup too, and a fake systemd with a hook.
class StateFaultTest : public test::ManagerFixture<HookedSystemd> {
protected:
    void SetUp() override {
        test::ManagerFixture<HookedSystemd>::SetUp();
        writeUnitCgroup("db.service");
        config_.vm.libvirtUri = "";
        useStores();
    }

    using test::ManagerFixture<HookedSystemd>::assign;
    ApiResult<std::string> assign(Manager& m, const std::string& id, const std::string& cls,
                                  bool persist = true) {
        return assign(m, id, cls, 256 * kMiB, kGiB, persist);
    }
    ApiResult<Done> unassign(Manager& m, const std::string& id) {
        std::optional<ApiResult<Done>> out;
        m.unassign(id, [&](ApiResult<Done> r) { out = r; });
        systemd_.flush();
        EXPECT_TRUE(out.has_value()) << "no reply";
        return out.value_or(daemon::apiError("NoReply", ""));
    }
    std::size_t setsOf(const std::string& unit) const {
        std::size_t n = 0;
        for (const auto& c : systemd_.setCalls) {
            n += c.unit == unit ? 1U : 0U;
        }
        return n;
    }
    // Puts a non-empty directory where a state file is: unlink and rename
    // over it fail (EISDIR), even for root.
    void blockFile(const fs::path& file) {
        fs::remove(file);
        writeFile(file / "blocker", "x");
    }

    // Runs the held writes and systemd's answers until neither is left.
    void runHeld(test::HeldStateWriter& held) {
        while (!held.queue.empty()) {
            held.runAll();
            systemd_.flush();
        }
    }

    fs::path state() const { return dir_ / "state/assignments"; }
    fs::path runtime() const { return dir_ / "run/assignments"; }
};

// ---- issue 25: state writes off the loop ------------------------------------------

TEST_F(StateFaultTest, AWriteCallIsAnsweredOnceItsRecordIsOnDiskAndSystemdHearsOfItAfter) {
    test::HeldStateWriter held; // outlives the manager
    auto m = makeManager();
    m->setStateWriter(&held);
    const auto file = state() / "nginx_2eservice";
    auto runHeld = [&] { StateFaultTest::runHeld(held); };

    std::optional<ApiResult<std::string>> assigned;
    m->assign("nginx.service", "shared", 64 * kMiB, kGiB, true,
              [&](ApiResult<std::string> r) { assigned = r; });
    systemd_.flush();
    ASSERT_FALSE(held.queue.empty()) << "nothing was given to the writer";
    EXPECT_FALSE(assigned.has_value()) << "answered before the record was written";
    EXPECT_FALSE(fs::exists(file));
    EXPECT_EQ(setsOf("nginx.service"), 0U) << "systemd heard of it before it was stored";
    EXPECT_EQ(m->workloads().count("nginx.service"), 0U);
    runHeld();
    ASSERT_TRUE(assigned.has_value());
    ASSERT_TRUE(assigned->ok()) << assigned->error().message;
    EXPECT_TRUE(fs::exists(file));
    EXPECT_GE(setsOf("nginx.service"), 1U);

    std::optional<ApiResult<Done>> unassigned;
    m->unassign("nginx.service", [&](ApiResult<Done> r) { unassigned = r; });
    systemd_.flush();
    EXPECT_FALSE(unassigned.has_value());
    EXPECT_TRUE(fs::exists(file));
    EXPECT_EQ(m->workloads().count("nginx.service"), 1U);
    // A second UnassignWorkload while the first one's write is on its way.
    std::optional<ApiResult<Done>> again;
    m->unassign("nginx.service", [&](ApiResult<Done> r) { again = r; });
    runHeld();
    ASSERT_TRUE(unassigned.has_value());
    EXPECT_TRUE(unassigned->ok()) << unassigned->error().message;
    ASSERT_TRUE(again.has_value());
    ASSERT_FALSE(again->ok());
    EXPECT_EQ(again->error().name, "org.memqos1.Error.NoSuchWorkload");
    EXPECT_FALSE(fs::exists(file));
    EXPECT_EQ(m->workloads().count("nginx.service"), 0U);

    std::optional<ApiResult<Done>> recorded;
    m->recordInstance("inst1.example.test", kGiB, 2 * kGiB, true,
                      [&](ApiResult<Done> r) { recorded = r; });
    EXPECT_FALSE(recorded.has_value());
    EXPECT_EQ(m->instances().count("inst1.example.test"), 0U);
    runHeld();
    ASSERT_TRUE(recorded.has_value());
    EXPECT_TRUE(recorded->ok());
    EXPECT_TRUE(fs::exists(dir_ / "state/instances/inst1_2eexample_2etest"));
    EXPECT_EQ(m->instances().count("inst1.example.test"), 1U);
}

TEST_F(StateFaultTest, AUnitsOwnValuesForgottenWhileOnTheirWayToDiskDoNotComeBack) {
    test::HeldStateWriter held;
    systemd_.addUnit("x.scope", "/system.slice/x.scope");
    writeUnitCgroup("x.scope");
    auto m = makeManager();
    m->setStateWriter(&held);
    const auto record = dir_ / "state/originals/x_2escope";
    std::optional<ApiResult<std::string>> assigned;
    m->assign("x.scope", "shared", 64 * kMiB, kGiB, false,
              [&](ApiResult<std::string> r) { assigned = r; });
    systemd_.flush();
    ASSERT_EQ(held.queue.size(), 1U) << "x.scope's own values were not given to the writer";
    // The scope ends (its qemu, its job) while that record is on its way.
    systemd_.events.unitRemoved("x.scope");
    runHeld(held);
    EXPECT_FALSE(fs::exists(record)) << "the record of a forgotten unit stayed on disk";
}

// A reconcile (a daemon-reload, a tick) while an assignment is on its way to
// disk: the unit's own values are recorded, the unit is not in the managed
// set yet. It is no orphan: its record stays (VM faults case 47-own-later
// found it gone, so the unassign would have given systemd's defaults).
TEST_F(StateFaultTest, AnAssignmentOnItsWayToDiskKeepsTheRecordOfTheUnitsOwnValues) {
    test::HeldStateWriter held;
    auto m = makeManager();
    m->setStateWriter(&held);
    const auto record = dir_ / "state/originals/nginx_2eservice";
    std::optional<ApiResult<std::string>> assigned;
    m->assign("nginx.service", "shared", 64 * kMiB, kGiB, true,
              [&](ApiResult<std::string> r) { assigned = r; });
    systemd_.flush();
    ASSERT_EQ(held.queue.size(), 1U) << "nginx.service's own values were not given to the writer";
    held.runOne(); // the record
    systemd_.flush();
    ASSERT_TRUE(fs::exists(record));
    ASSERT_EQ(held.queue.size(), 1U) << "the assignment is not on its way";
    systemd_.events.reloaded(); // an administrator's daemon-reload, meanwhile
    systemd_.flush();
    runHeld(held);
    ASSERT_TRUE(assigned.has_value());
    ASSERT_TRUE(assigned->ok()) << assigned->error().message;
    EXPECT_TRUE(fs::exists(record)) << "the record was given back as an orphan's";
    // The unassign gives the unit its own configuration through a reload,
    // not systemd's defaults through a set of its properties.
    const auto sets = setsOf("nginx.service");
    std::optional<ApiResult<Done>> unassigned;
    m->unassign("nginx.service", [&](ApiResult<Done> r) { unassigned = r; });
    systemd_.flush();
    runHeld(held);
    ASSERT_TRUE(unassigned.has_value());
    EXPECT_EQ(setsOf("nginx.service"), sets) << "given systemd's defaults, not its own values";
    EXPECT_FALSE(fs::exists(record));
}

// ---- defect 5: failed state writes ----------------------------------------------

TEST_F(StateFaultTest, AFailedWriteIsAStateWriteFailedAndChangesNothing) {
    auto m = makeManager();
    ASSERT_TRUE(assign(*m, "nginx.service", "shared").ok());
    const auto file = state() / "nginx_2eservice";
    const std::string before = readText(file);
    const auto setsBefore = systemd_.setCalls.size();

    std::optional<ApiResult<std::string>> r;
    {
        const TinyFileSizeLimit full; // the disk is full
        r = assign(*m, "nginx.service", "dedicated");
    }
    ASSERT_FALSE(r->ok());
    EXPECT_EQ(r->error().name, "org.memqos1.Error.StateWriteFailed");
    EXPECT_NE(r->error().message.find("cannot store the assignment of nginx.service: " +
                                      file.string() + ": File too large"),
              std::string::npos)
        << r->error().message;
    EXPECT_NE(r->error().message.find("state file as it was is kept"), std::string::npos);
    EXPECT_EQ(readText(file), before);
    EXPECT_EQ(m->workloads().at("nginx.service").workload.className, "shared");
    EXPECT_EQ(systemd_.setCalls.size(), setsBefore) << "systemd was told about a refused change";

    // A new workload: refused, not managed, nothing stored.
    std::optional<ApiResult<std::string>> fresh;
    {
        const TinyFileSizeLimit full;
        fresh = assign(*m, "db.service", "shared");
    }
    ASSERT_FALSE(fresh->ok());
    EXPECT_EQ(fresh->error().name, "org.memqos1.Error.StateWriteFailed");
    EXPECT_EQ(m->workloads().count("db.service"), 0U);
    EXPECT_FALSE(fs::exists(state() / "db_2eservice"));
    EXPECT_EQ(setsOf("db.service"), 0U);
}

TEST_F(StateFaultTest, AFailedRemovalIsAStateWriteFailedAndKeepsTheWorkload) {
    auto m = makeManager();
    ASSERT_TRUE(assign(*m, "nginx.service", "shared").ok());
    blockFile(state() / "nginx_2eservice");
    auto r = unassign(*m, "nginx.service");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().name, "org.memqos1.Error.StateWriteFailed");
    EXPECT_NE(r.error().message.find((state() / "nginx_2eservice").string() + ": Is a directory"),
              std::string::npos)
        << r.error().message;
    EXPECT_EQ(m->workloads().count("nginx.service"), 1U) << "still managed, so a retry can work";
}

TEST_F(StateFaultTest, AFailedRollbackIsReportedNotDropped) {
    // systemd refuses the new tiers, and the stored assignment cannot be put
    // back: the reply says both, and what the file now holds.
    auto m = makeManager();
    ASSERT_TRUE(assign(*m, "nginx.service", "shared").ok());
    systemd_.failSet = makeError(std::errc::permission_denied, "access denied");
    systemd_.beforeSet = [this](const std::string& unit) {
        if (unit == "nginx.service") {
            blockFile(state() / "nginx_2eservice");
        }
    };
    auto r = assign(*m, "nginx.service", "dedicated");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().name, "org.memqos1.Error.SystemdFailed");
    const auto& msg = r.error().message;
    EXPECT_NE(msg.find("systemd refused the memory properties of nginx.service"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("rolling back its stored state failed too: " +
                       (state() / "nginx_2eservice").string() + ": Is a directory"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("the next start applies"), std::string::npos) << msg;
    EXPECT_EQ(m->workloads().at("nginx.service").workload.className, "shared");

    // A new workload whose stored assignment cannot be removed again.
    systemd_.beforeSet = [this](const std::string& unit) {
        if (unit == "db.service") {
            blockFile(state() / "db_2eservice");
        }
    };
    auto fresh = assign(*m, "db.service", "shared");
    ASSERT_FALSE(fresh.ok());
    EXPECT_EQ(fresh.error().name, "org.memqos1.Error.SystemdFailed");
    EXPECT_NE(fresh.error().message.find("rolling back its stored state failed too: " +
                                         (state() / "db_2eservice").string()),
              std::string::npos)
        << fresh.error().message;
    EXPECT_EQ(m->workloads().count("db.service"), 0U);
}

TEST_F(StateFaultTest, RunStoresFirstAndStartsNothingWhenItCannot) {
    auto m = makeManager();
    writeFile(runtime(), "a file where the runtime directory should be");
    std::optional<ApiResult<std::string>> r;
    m->run("job", "reclaimed", 0, kGiB, {"/bin/true"}, [&](ApiResult<std::string> x) { r = x; });
    systemd_.flush();
    ASSERT_TRUE(r.has_value());
    ASSERT_FALSE(r->ok());
    EXPECT_EQ(r->error().name, "org.memqos1.Error.StateWriteFailed");
    EXPECT_NE(r->error().message.find(runtime().string()), std::string::npos)
        << r->error().message;
    EXPECT_TRUE(systemd_.started.empty()) << "started a unit memqos could not record";
}

TEST_F(StateFaultTest, RecordInstanceThatCannotBeStoredIsAStateWriteFailed) {
    auto m = makeManager();
    writeFile(dir_ / "state/instances", "a file where the directory should be");
    auto r = test::recordInstance(*m, "inst1.example.test", kGiB, 2 * kGiB, true);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().name, "org.memqos1.Error.StateWriteFailed");
    EXPECT_TRUE(m->instances().empty());
}

// ---- defect 4: reload --------------------------------------------------------------

TEST_F(StateFaultTest, ReloadSwitchesDryRunOffAndTheTiersAreSetThen) {
    config_.manager.dryRun = true;
    auto m = makeManager();
    ASSERT_TRUE(m->dryRun());
    ASSERT_TRUE(assign(*m, "nginx.service", "shared").ok());
    EXPECT_EQ(setsOf("nginx.service"), 0U) << "a dry run set properties";

    config_.manager.dryRun = false;
    auto r = m->reload();
    systemd_.flush();
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(r.value().empty());
    EXPECT_FALSE(m->dryRun());
    ASSERT_GE(setsOf("nginx.service"), 1U) << "what the dry run only pretended was not done";
    const auto* set = systemd_.lastSet("nginx.service");
    ASSERT_NE(set, nullptr);
    EXPECT_EQ(set->memoryLow, std::optional<Bytes>(256 * kMiB));

    // And on again: a new assignment is only logged.
    config_.manager.dryRun = true;
    ASSERT_TRUE(m->reload().ok());
    EXPECT_TRUE(m->dryRun());
    ASSERT_TRUE(assign(*m, "db.service", "shared").ok());
    EXPECT_EQ(setsOf("db.service"), 0U);
}

TEST_F(StateFaultTest, OwnValuesLearnedInADryRunAreStoredWhenItEnds) {
    // A dry run keeps what it learns of a unit's own values in memory; the
    // first real change needs them on disk (to give them back after a restart).
    config_.manager.dryRun = true;
    auto m = makeManager();
    ASSERT_TRUE(assign(*m, "nginx.service", "shared").ok());
    const auto stored = [this] {
        std::vector<std::string> units;
        for (const auto& o : io::OriginalStore(dir_ / "state/originals").loadAll().originals) {
            units.push_back(o.unit);
        }
        return units;
    };
    EXPECT_TRUE(stored().empty());
    config_.manager.dryRun = false;
    ASSERT_TRUE(m->reload().ok());
    systemd_.flush();
    const auto units = stored();
    EXPECT_NE(std::find(units.begin(), units.end(), "nginx.service"), units.end())
        << testing::PrintToString(units);
    EXPECT_GE(setsOf("nginx.service"), 1U);
}

TEST_F(StateFaultTest, ReloadCannotEndADryRunOfTheCommandLine) {
    auto m = makeManager(true); // --dry-run
    config_.manager.dryRun = false;
    auto r = m->reload();
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(m->dryRun());
    ASSERT_EQ(r.value().size(), 1U);
    EXPECT_EQ(r.value()[0].rfind("Manager.DryRun=no has no effect: memqosd was started with "
                                 "--dry-run",
                                 0),
              0U)
        << r.value()[0];
}

TEST_F(StateFaultTest, ReloadNamesEveryStartOnlyKeyThatChangedAndKeepsItsValue) {
    auto m = makeManager();
    const auto running = m->config();
    config_.manager.cgroupRoot = "/elsewhere/cgroup";
    config_.manager.procRoot = "/elsewhere/proc";
    config_.manager.stateDirectory = "/srv/memqos";
    config_.vm.libvirtUri = "qemu:///session";
    config_.overcommit.memoryRatio = 2.0; // takes effect
    auto r = m->reload();
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r.value().size(), 4U);
    EXPECT_EQ(r.value()[0], "Manager.CgroupRoot needs a restart: " + running.manager.cgroupRoot +
                                " stays in use until memqosd restarts (the configuration now "
                                "says /elsewhere/cgroup)");
    EXPECT_EQ(r.value()[1].rfind("Manager.ProcRoot needs a restart: ", 0), 0U);
    EXPECT_EQ(r.value()[2], "Manager.StateDirectory needs a restart: " +
                                running.manager.stateDirectory +
                                " stays in use until memqosd restarts (the configuration now "
                                "says /srv/memqos)");
    EXPECT_EQ(r.value()[3], "VM.LibvirtURI needs a restart: \"\" (off) stays in use until "
                            "memqosd restarts (the configuration now says qemu:///session)");
    // The configuration in force: the running start-only values, the rest new.
    EXPECT_EQ(m->config().manager.stateDirectory, running.manager.stateDirectory);
    EXPECT_EQ(m->config().manager.cgroupRoot, running.manager.cgroupRoot);
    EXPECT_EQ(m->config().vm.libvirtUri, "");
    EXPECT_DOUBLE_EQ(m->config().overcommit.memoryRatio, 2.0);
    // Said again at the next reload: the restart is still due.
    auto again = m->reload();
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again.value().size(), 4U);
}

} // namespace

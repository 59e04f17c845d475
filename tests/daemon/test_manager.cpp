// SPDX-License-Identifier: Apache-2.0
// Component tests: the Manager against a fake systemd, a fixture cgroup and
// proc tree in a temp dir, and a real StateStore there.
#include "fake_systemd.hpp"
#include "manager.hpp"
#include "manager_fixture.hpp"
#include "recording_actuator.hpp"

#include "memqos/io/file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>

namespace fs = std::filesystem;
using namespace memqos;
using memqos::daemon::ApiResult;
using memqos::daemon::Manager;
using memqos::test::FakeSystemd;
using memqos::daemon::TickDurations;

namespace {

constexpr Bytes kMemTotal = 8 * kGiB;

std::string readText(const fs::path& p) {
    auto text = io::readFile(p);
    return text ? *text : "<" + text.error().what + ">";
}

using test::writeFile;

// A process in the fake /proc: its stat (start time, field 22) and
// oom_score_adj.
void writeProcess(const fs::path& proc, std::int32_t pid, const std::string& adj,
                  std::uint64_t startTime = 100) {
    const auto dir = proc / std::to_string(pid);
    writeFile(dir / "stat", std::to_string(pid) + " (p) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " +
                                std::to_string(startTime) + " 0 0\n");
    writeFile(dir / "oom_score_adj", adj);
}

// The shared fixture (manager_fixture.hpp), with system.slice loaded as on
// any host and a boot id.
class ManagerTest : public test::ManagerFixture<> {
protected:
    void SetUp() override {
        test::ManagerFixture<>::SetUp();
        systemd_.addUnit("system.slice", "/system.slice"); // loaded, as on any host
        bootId_ = "0b5c0ffee";
    }
};

class ManagerStoreTest : public ManagerTest {
protected:
    void SetUp() override {
        ManagerTest::SetUp();
        useStores();
    }

    // A class NAME, a copy of class FROM, added to the configuration.
    void addClassLike(const char* from, const char* name) {
        core::ClassPolicy c = *core::findClass(config_.classes, from);
        c.name = name;
        config_.classes.push_back(c);
    }
};

TEST_F(ManagerStoreTest, AssignSharedAppliesKubernetesTiersAndParentSum) {
    auto m = makeManager();
    auto r = assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB);
    ASSERT_TRUE(r.ok()) << r.error().name << ": " << r.error().message;
    EXPECT_EQ(r.value(), "nginx.service");

    const auto* p = systemd_.lastSet("nginx.service");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->memoryLow, std::optional<Bytes>(268435456));
    EXPECT_EQ(p->memoryMin, std::optional<Bytes>(0));
    EXPECT_EQ(p->memoryHigh, std::optional<Limit>(Limit(993210368)));
    EXPECT_EQ(p->memoryMax, std::optional<Limit>(Limit(1073741824)));
    EXPECT_EQ(p->memorySwapMax, std::optional<Limit>(Limit{})); // shared may swap: "max"

    const auto* slice = systemd_.lastSet("system.slice");
    ASSERT_NE(slice, nullptr) << "protection not pushed up to the parent slice";
    EXPECT_EQ(slice->memoryLow, std::optional<Bytes>(268435456));
    EXPECT_FALSE(slice->memoryMax.has_value());
    EXPECT_TRUE(fs::exists(dir_ / "state/assignments"));
    EXPECT_EQ(m->workloads().at("nginx.service").cgroupPath, "system.slice/nginx.service");
}

// Issue 24 ("the shape of the fix"): the client heard "assigned" while the
// slice above the unit had no protection for it yet; the reply now waits
// until systemd has answered the slice's sum too.
TEST_F(ManagerStoreTest, AnAssignmentIsAnsweredOnceTheSliceAboveHasItsSum) {
    auto m = makeManager();
    systemd_.holdSet.insert("system.slice");
    std::optional<ApiResult<std::string>> out;
    m->assign("nginx.service", "shared", 256 * kMiB, 1 * kGiB, false,
              [&](ApiResult<std::string> r) { out = r; });
    systemd_.flush();
    ASSERT_NE(systemd_.lastSet("nginx.service"), nullptr);
    ASSERT_NE(systemd_.lastSet("system.slice"), nullptr) << "the sum was not sent";
    EXPECT_FALSE(out.has_value()) << "answered before system.slice had its memory.low";
    systemd_.releaseHeld();
    systemd_.flush();
    ASSERT_TRUE(out.has_value());
    EXPECT_TRUE(out->ok());
    // A PID 1 that never answers keeps the reply at most kSettleTicks ticks.
    out.reset();
    m->assign("nginx.service", "shared", 128 * kMiB, 1 * kGiB, false,
              [&](ApiResult<std::string> r) { out = r; });
    systemd_.flush();
    EXPECT_FALSE(out.has_value());
    for (int t = 1; t <= static_cast<int>(Manager::kSettleTicks) && !out; ++t) {
        m->tick(TimePoint(std::chrono::seconds(t)));
        systemd_.flush();
    }
    EXPECT_TRUE(out.has_value()) << "still waiting after " << Manager::kSettleTicks << " ticks";
}

// Issue 25 item 6: every unit's own values arrive in an answer of their
// own, and a reconcile per answer was O(units²) at start (tick-bench's
// set-up of 1000 units: 8 s). A unit learned while another answer is
// outstanding gets its tiers when the last one arrives or at the next tick,
// and no assignment is answered before its unit's properties were set.
TEST_F(ManagerStoreTest, AUnitLearnedWhileAnotherAnswerIsOutstandingGetsItsTiersByTheNextTick) {
    auto m = makeManager();
    systemd_.holdGet.insert("db.service");
    std::optional<ApiResult<std::string>> nginx;
    std::optional<ApiResult<std::string>> db;
    bool nginxSetBeforeReply = false;
    m->assign("db.service", "dedicated", 512 * kMiB, 512 * kMiB, false,
              [&](ApiResult<std::string> r) { db = r; });
    m->assign("nginx.service", "shared", 256 * kMiB, 1 * kGiB, false,
              [&](ApiResult<std::string> r) {
                  nginxSetBeforeReply = systemd_.lastSet("nginx.service") != nullptr;
                  nginx = r;
              });
    systemd_.flush();
    m->tick(TimePoint(std::chrono::seconds(1))); // does not wait for db.service
    systemd_.flush();
    ASSERT_NE(systemd_.lastSet("nginx.service"), nullptr);
    EXPECT_EQ(systemd_.lastSet("db.service"), nullptr) << "its answer is held";
    ASSERT_TRUE(nginx.has_value());
    EXPECT_TRUE(nginx->ok());
    EXPECT_TRUE(nginxSetBeforeReply) << "answered before its properties were set";
    systemd_.releaseHeld();
    systemd_.flush();
    ASSERT_NE(systemd_.lastSet("db.service"), nullptr);
    ASSERT_TRUE(db.has_value());
    EXPECT_TRUE(db->ok());
}

TEST_F(ManagerStoreTest, ParentSliceGetsTheSumOfItsWorkloads) {
    auto m = makeManager();
    ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB).ok());
    ASSERT_TRUE(assign(*m, "db.service", "dedicated", 512 * kMiB, 512 * kMiB).ok());
    const auto* slice = systemd_.lastSet("system.slice");
    ASSERT_NE(slice, nullptr);
    EXPECT_EQ(slice->memoryLow, std::optional<Bytes>(256 * kMiB));
    EXPECT_EQ(slice->memoryMin, std::optional<Bytes>(512 * kMiB));
    const auto* db = systemd_.lastSet("db.service");
    ASSERT_NE(db, nullptr);
    EXPECT_EQ(db->memoryMin, std::optional<Bytes>(512 * kMiB));
    EXPECT_EQ(db->memoryHigh, std::optional<Limit>(Limit{})); // request == limit: no high
    EXPECT_EQ(db->memorySwapMax, std::optional<Limit>(Limit(0))); // dedicated: no swap
}

TEST_F(ManagerStoreTest, SendsOnlyWhatDiffers) {
    auto m = makeManager();
    ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB).ok());
    const auto calls = systemd_.setCalls.size();
    m->tick(TimePoint(std::chrono::seconds(100)));
    systemd_.flush();
    ASSERT_TRUE(m->reload().ok()); // same config: same tiers
    systemd_.flush();
    EXPECT_EQ(systemd_.setCalls.size(), calls);
}

struct BadAssign {
    std::string id;
    std::string cls;
    Bytes request;
    Bytes limit;
    std::string error;
};

class ManagerBadInput : public ManagerStoreTest, public testing::WithParamInterface<BadAssign> {};

TEST_P(ManagerBadInput, NamedErrorAndNothingChanges) {
    auto m = makeManager();
    const auto& c = GetParam();
    auto r = assign(*m, c.id, c.cls, c.request, c.limit);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().name, "org.memqos1.Error." + c.error) << r.error().message;
    EXPECT_FALSE(r.error().message.empty());
    EXPECT_TRUE(systemd_.setCalls.empty());
    EXPECT_TRUE(m->workloads().empty());
    EXPECT_TRUE(store_.loadAll().assignments.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ManagerBadInput,
    testing::Values(BadAssign{"nginx.service", "gold", 0, kNoLimit, "UnknownClass"},
                    BadAssign{"nginx.service", "shared", 2 * kGiB, 1 * kGiB, "RequestAboveLimit"},
                    BadAssign{"nginx.service", "shared", 0, 0, "SizeOutOfRange"},
                    BadAssign{"nginx.service", "shared", 0, 600 * kGiB, "SizeOutOfRange"},
                    BadAssign{"nginx.service", "shared", 9 * kGiB, kNoLimit, "SizeOutOfRange"},
                    BadAssign{"../etc/passwd.service", "shared", 0, kNoLimit, "InvalidUnit"},
                    BadAssign{"nginx", "shared", 0, kNoLimit, "InvalidUnit"},
                    BadAssign{"", "shared", 0, kNoLimit, "InvalidUnit"},
                    BadAssign{"ghost.service", "shared", 0, kNoLimit, "NoSuchUnit"}),
    [](const testing::TestParamInfo<BadAssign>& p) { return std::to_string(p.index) + "_" + p.param.error; });

TEST_F(ManagerStoreTest, SystemdRefusalRollsBack) {
    auto m = makeManager();
    systemd_.failSet = invalid("org.freedesktop.DBus.Error.AccessDenied: nope");
    auto r = assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().name, "org.memqos1.Error.SystemdFailed");
    EXPECT_NE(r.error().message.find("AccessDenied"), std::string::npos);
    EXPECT_TRUE(m->workloads().empty());
    EXPECT_TRUE(store_.loadAll().assignments.empty());
}

TEST_F(ManagerStoreTest, PersistentAssignmentSurvivesARestart) {
    {
        auto m = makeManager();
        ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB, true).ok());
        ASSERT_TRUE(assign(*m, "db.service", "shared", 0, kNoLimit, false).ok());
    }
    systemd_.setCalls.clear();
    {
        auto m = makeManager(); // a new daemon (kill -9 and restart)
        ASSERT_EQ(m->workloads().size(), 2U);
        EXPECT_TRUE(m->workloads().at("nginx.service").persistent);
        EXPECT_FALSE(m->workloads().at("db.service").persistent);
        // systemd still has memqos's values (its runtime drop-ins): nothing
        // is sent again (issue 25: PID 1 applied 1000 unchanged sets).
        EXPECT_EQ(systemd_.lastSet("nginx.service"), nullptr);
        EXPECT_EQ(systemd_.units["nginx.service"].memory->memoryHigh,
                  std::optional<Limit>(Limit(993210368)));
    }
    // The drop-ins gone (a reboot: they live in /run): the tiers are sent.
    systemd_.units["nginx.service"].memory->memoryHigh = Limit{};
    auto m = makeManager();
    const auto* p = systemd_.lastSet("nginx.service");
    ASSERT_NE(p, nullptr) << "tiers not re-applied after restart";
    EXPECT_EQ(p->memoryHigh, std::optional<Limit>(Limit(993210368)));
}

// Issue 24 item 1: after a daemon-reload memqos compares what systemd has
// with what it wants and sends only what differs: a plain reload (memqos's
// drop-ins keep its values) sends nothing; a value someone changed behind
// memqos on a workload is set again.
TEST_F(ManagerStoreTest, ReappliesAfterDaemonReloadAndUnitRestart) {
    auto m = makeManager();
    ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB).ok());
    systemd_.setCalls.clear();
    systemd_.reload([](Status) {});
    systemd_.flush();
    EXPECT_EQ(systemd_.lastSet("nginx.service"), nullptr);
    EXPECT_EQ(systemd_.lastSet("system.slice"), nullptr);
    EXPECT_EQ(systemd_.units["nginx.service"].memory->memoryLow, std::optional<Bytes>(256 * kMiB));
    systemd_.persistent["nginx.service"].memoryLow = 0; // an admin's set-property
    systemd_.reload([](Status) {});
    systemd_.flush();
    ASSERT_NE(systemd_.lastSet("nginx.service"), nullptr);
    EXPECT_EQ(systemd_.lastSet("nginx.service")->memoryLow, std::optional<Bytes>(256 * kMiB));
    // A restarted unit: systemd applies the unit's properties, memqos's
    // drop-ins too, to its new cgroup; nothing to send. One that comes back
    // with other values (a transient unit started again) gets its tiers.
    systemd_.setCalls.clear();
    systemd_.events.unitStarted("nginx.service");
    systemd_.flush();
    EXPECT_EQ(systemd_.lastSet("nginx.service"), nullptr);
    systemd_.units["nginx.service"].memory->memoryLow = 0;
    systemd_.events.unitStarted("nginx.service");
    systemd_.flush();
    ASSERT_NE(systemd_.lastSet("nginx.service"), nullptr);
    EXPECT_EQ(systemd_.lastSet("nginx.service")->memoryLow, std::optional<Bytes>(256 * kMiB));
}

TEST_F(ManagerStoreTest, UnassignClearsTiersAndParentSum) {
    auto m = makeManager();
    ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB).ok());
    std::optional<ApiResult<daemon::Done>> out;
    m->unassign("nginx.service", [&](ApiResult<daemon::Done> r) { out = r; });
    systemd_.flush();
    ASSERT_TRUE(out && out->ok());
    const auto& p = *systemd_.units["nginx.service"].memory;
    EXPECT_EQ(p.memoryLow, std::optional<Bytes>(0));
    EXPECT_EQ(p.memoryMax, std::optional<Limit>(Limit{}));
    EXPECT_EQ(systemd_.units["system.slice"].memory->memoryLow, std::optional<Bytes>(0));
    EXPECT_GE(systemd_.reloads, 1);
    EXPECT_TRUE(store_.loadAll().assignments.empty());

    std::optional<ApiResult<daemon::Done>> again;
    m->unassign("nginx.service", [&](ApiResult<daemon::Done> r) { again = r; });
    ASSERT_TRUE(again && !again->ok());
    EXPECT_EQ(again->error().name, "org.memqos1.Error.NoSuchWorkload");
}

// Issue 25 item 3: a workload's tick files (memory.current, swap, PSI) are
// read through kept fds, and those of a workload memqos no longer manages
// are closed at the next pruning turn (every kSweepTicks ticks) where the
// number of workloads changed, else within kKeptFilesTicks ticks.
TEST_F(ManagerStoreTest, AWorkloadsKeptFilesAreClosedOnceItIsNoLongerManaged) {
    writeUnitCgroup("nginx.service");
    auto m = makeManager();
    int t = 100;
    const auto ticks = [&](std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
            m->tick(TimePoint(std::chrono::seconds(++t)));
            systemd_.flush();
        }
    };
    const auto unassign = [&](const char* unit) {
        std::optional<ApiResult<daemon::Done>> out;
        m->unassign(unit, [&](ApiResult<daemon::Done> r) { out = r; });
        systemd_.flush();
        return out && out->ok();
    };
    ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB).ok());
    ticks(12);
    EXPECT_GE(m->keptWorkloadFiles(), 1U);
    ASSERT_TRUE(unassign("nginx.service"));
    ASSERT_TRUE(m->workloads().empty());
    ticks(12);
    EXPECT_EQ(m->keptWorkloadFiles(), 0U);
    // One workload for another between two turns: the count stays.
    writeUnitCgroup("redis.service");
    systemd_.addUnit("redis.service", "/system.slice/redis.service");
    ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB).ok());
    ticks(12);
    const std::size_t nginxFiles = m->keptWorkloadFiles();
    ASSERT_GE(nginxFiles, 1U);
    ASSERT_TRUE(unassign("nginx.service"));
    ASSERT_TRUE(assign(*m, "redis.service", "shared", 256 * kMiB, 1 * kGiB).ok());
    ticks(12);
    EXPECT_EQ(m->keptWorkloadFiles(), 2 * nginxFiles)
        << "nginx's closed at once, or redis's not kept";
    std::size_t i = 0;
    for (; i < Manager::kKeptFilesTicks && m->keptWorkloadFiles() != nginxFiles; ++i) {
        ticks(1);
    }
    EXPECT_EQ(m->keptWorkloadFiles(), nginxFiles) << "nginx's not closed within kKeptFilesTicks";
}

// Issue 11, defect 2: unassign gives the unit exactly what its own
// configuration gives, remembered before memqos's first change, across a
// restart (systemd by then reports memqos's values, not the unit's own).
TEST_F(ManagerStoreTest, UnassignGivesBackTheUnitsOwnConfigurationEvenAfterARestart) {
    auto& own = *systemd_.units["nginx.service"].memory;
    own.memoryMax = Limit(300 * kMiB);
    own.memoryHigh = Limit(280 * kMiB);
    own.memoryLow = 10 * kMiB;
    {
        auto m = makeManager();
        ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB).ok());
    }
    // systemd now has memqos's values.
    EXPECT_EQ(systemd_.units["nginx.service"].memory->memoryMax, std::optional<Limit>(1 * kGiB));
    EXPECT_TRUE(fs::exists(dir_ / "state/originals"));
    auto m = makeManager(); // kill -9 and restart
    std::optional<ApiResult<daemon::Done>> out;
    m->unassign("nginx.service", [&](ApiResult<daemon::Done> r) { out = r; });
    systemd_.flush();
    ASSERT_TRUE(out && out->ok());
    const auto& now = *systemd_.units["nginx.service"].memory;
    EXPECT_EQ(now.memoryMax, std::optional<Limit>(300 * kMiB));
    EXPECT_EQ(now.memoryHigh, std::optional<Limit>(280 * kMiB));
    EXPECT_EQ(now.memoryLow, std::optional<Bytes>(10 * kMiB));
    EXPECT_EQ(now.memoryMin, std::optional<Bytes>(0));
    EXPECT_EQ(now.memorySwapMax, std::optional<Limit>(Limit{}));
    // What is left is the record of the guarded class's slice (what its cap
    // gives back), kept while the class is guarded.
    std::vector<std::string> left;
    for (const auto& o : io::OriginalStore(dir_ / "state/originals").loadAll().originals) {
        left.push_back(o.unit);
    }
    EXPECT_EQ(left, std::vector<std::string>{"memqos-reclaimed.slice"})
        << "the record outlived the unit's return to its own values";
}

// After giving the values back, memqos's runtime drop-ins go (so the unit's
// own configuration rules again at the next daemon-reload); one that was
// there before memqos (an administrator's set-property) stays.
TEST_F(ManagerStoreTest, UnassignRemovesOnlyMemqossOwnRuntimeDropIns) {
    const auto d = dir_ / "run/system.control/nginx.service.d";
    writeFile(d / "50-MemoryMax.conf", "[Service]\nMemoryMax=500M\n"); // the admin's
    auto m = makeManager();
    ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB).ok());
    // systemd wrote the five files for memqos's call, the admin's MemoryMax
    // file among them (same name), and memqos marked them.
    EXPECT_TRUE(io::hasOwnMarker(readText(d / "50-MemoryMax.conf")));
    EXPECT_TRUE(fs::exists(d / ("50-MemoryMax.conf" + std::string(io::kSavedSuffix))));
    writeFile(d / "50-CPUWeight.conf", "[Service]\nCPUWeight=50\n");
    std::optional<ApiResult<daemon::Done>> out;
    m->unassign("nginx.service", [&](ApiResult<daemon::Done> r) { out = r; });
    systemd_.flush();
    ASSERT_TRUE(out && out->ok());
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(d)) {
        left.push_back(e.path().filename().string());
    }
    std::sort(left.begin(), left.end());
    EXPECT_EQ(left, (std::vector<std::string>{"50-CPUWeight.conf", "50-MemoryMax.conf"}));
    EXPECT_EQ(readText(d / "50-MemoryMax.conf"), "[Service]\nMemoryMax=500M\n")
        << "the admin's runtime drop-in is back as it was";
}

// Issue 24 item 1: an administrator raises a slice's protection after
// memqos first touched it (set-property, written to /etc and so stronger than
// memqos's runtime drop-in at the next daemon-reload): memqos learns the new
// value, never lowers it, and leaves it when it lets go.
TEST_F(ManagerStoreTest, AnAdminsLaterRaiseOfASlicesProtectionIsKeptAcrossDaemonReload) {
    systemd_.units["system.slice"].memory->memoryLow = 64 * kMiB;
    auto m = makeManager();
    ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB).ok());
    EXPECT_EQ(systemd_.units["system.slice"].memory->memoryLow, std::optional<Bytes>(256 * kMiB));
    // systemctl set-property system.slice MemoryLow=2G
    systemd_.persistent["system.slice"].memoryLow = 2 * kGiB;
    systemd_.units["system.slice"].memory->memoryLow = 2 * kGiB;
    systemd_.reload([](Status) {});
    systemd_.flush();
    EXPECT_EQ(systemd_.units["system.slice"].memory->memoryLow, std::optional<Bytes>(2 * kGiB));
    systemd_.setCalls.clear();
    // A change below it: the slice is learned again, its 2 GiB stay.
    ASSERT_TRUE(assign(*m, "db.service", "shared", 512 * kMiB, 1 * kGiB).ok());
    for (const auto& c : systemd_.setCalls) {
        if (c.unit == "system.slice" && c.props.memoryLow) {
            EXPECT_GE(*c.props.memoryLow, 2 * kGiB) << "memqos lowered the admin's value";
        }
    }
    EXPECT_EQ(systemd_.units["system.slice"].memory->memoryLow, std::optional<Bytes>(2 * kGiB));
    for (const char* id : {"nginx.service", "db.service"}) {
        std::optional<ApiResult<daemon::Done>> out;
        m->unassign(id, [&](ApiResult<daemon::Done> r) { out = r; });
        systemd_.flush();
        ASSERT_TRUE(out && out->ok());
    }
    EXPECT_EQ(systemd_.units["system.slice"].memory->memoryLow, std::optional<Bytes>(2 * kGiB));
}

// The same with `set-property --runtime`: the admin's file replaces
// memqos's (same name, no marker). memqos learns the value before its next
// change, keeps the admin's file aside while its own call overwrites it, and
// puts it back when it lets go.
TEST_F(ManagerStoreTest, AnAdminsRuntimeDropInIsLearnedKeptAsideAndPutBack) {
    const auto d = dir_ / "run/system.control/system.slice.d";
    auto m = makeManager();
    ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB).ok());
    const std::string admins = "[Slice]\nMemoryLow=1073741824\n";
    writeFile(d / "50-MemoryLow.conf", admins);
    systemd_.units["system.slice"].memory->memoryLow = 1 * kGiB;
    ASSERT_TRUE(assign(*m, "db.service", "shared", 1 * kGiB, 2 * kGiB).ok());
    const auto* slice = systemd_.lastSet("system.slice");
    ASSERT_NE(slice, nullptr);
    EXPECT_EQ(slice->memoryLow, std::optional<Bytes>(1 * kGiB + 256 * kMiB))
        << "the children's sum, above the admin's 1 GiB";
    for (const char* id : {"nginx.service", "db.service"}) {
        std::optional<ApiResult<daemon::Done>> out;
        m->unassign(id, [&](ApiResult<daemon::Done> r) { out = r; });
        systemd_.flush();
        ASSERT_TRUE(out && out->ok());
    }
    EXPECT_EQ(readText(d / "50-MemoryLow.conf"), admins);
    EXPECT_EQ(systemd_.units["system.slice"].memory->memoryLow, std::optional<Bytes>(1 * kGiB));
}

// Issue 24 item 2: the unit file's MemoryMax is raised while memqos manages
// the unit; unassign gives it the new value (systemd re-reads the
// configuration), not the one remembered at the first touch.
TEST_F(ManagerStoreTest, UnassignGivesTheUnitFilesValueOfNowNotTheRememberedOne) {
    systemd_.units["nginx.service"].memory->memoryMax = Limit(300 * kMiB);
    auto m = makeManager();
    ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB).ok());
    systemd_.configured["nginx.service"].memoryMax = Limit(600 * kMiB); // edited, not reloaded
    const int reloads = systemd_.reloads;
    std::optional<ApiResult<daemon::Done>> out;
    m->unassign("nginx.service", [&](ApiResult<daemon::Done> r) { out = r; });
    systemd_.flush();
    ASSERT_TRUE(out && out->ok());
    EXPECT_EQ(systemd_.units["nginx.service"].memory->memoryMax, std::optional<Limit>(600 * kMiB));
    EXPECT_GT(systemd_.reloads, reloads);
    const auto* last = systemd_.lastSet("nginx.service");
    ASSERT_NE(last, nullptr);
    EXPECT_EQ(last->memoryMax, std::optional<Limit>(1 * kGiB)) << "no values re-sent";
}

// A record made in another boot guards drop-ins that went with that boot:
// it is dropped at start; the unit's values then are its own and are
// learned afresh before memqos changes it.
TEST_F(ManagerStoreTest, ARecordFromAnEarlierBootIsNotTrusted) {
    systemd_.units["nginx.service"].memory->memoryMax = Limit(300 * kMiB);
    {
        auto m = makeManager();
        ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB, true).ok());
    }
    // Reboot: /run is empty, the unit runs with what its file says now.
    fs::remove_all(dir_ / "run/system.control");
    systemd_.configured["nginx.service"].memoryMax = Limit(700 * kMiB);
    *systemd_.units["nginx.service"].memory = systemd_.configured["nginx.service"];
    bootId_ = "0b5cbeef";
    auto m = makeManager(); // re-applies the persistent assignment
    bool seen = false;
    for (const auto& o : io::OriginalStore(dir_ / "state/originals").loadAll().originals) {
        if (o.unit == "nginx.service") {
            seen = true;
            EXPECT_EQ(o.bootId, "0b5cbeef");
            EXPECT_EQ(o.values.memoryMax, std::optional<Limit>(700 * kMiB))
                << "the old boot's record was trusted";
        }
    }
    EXPECT_TRUE(seen);
    std::optional<ApiResult<daemon::Done>> out;
    m->unassign("nginx.service", [&](ApiResult<daemon::Done> r) { out = r; });
    systemd_.flush();
    ASSERT_TRUE(out && out->ok());
    EXPECT_EQ(systemd_.units["nginx.service"].memory->memoryMax, std::optional<Limit>(700 * kMiB));
}

// Issue 24 item 6: release gives every workload back, forgets the stored
// assignments, gives the slices their own protection, then takes nothing on
// any more and calls the hook that stops memqosd.
TEST_F(ManagerStoreTest, ReleaseGivesEverythingBackForgetsAssignmentsAndStops) {
    systemd_.units["nginx.service"].memory->memoryMax = Limit(300 * kMiB);
    auto m = makeManager();
    ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB).ok());
    ASSERT_TRUE(assign(*m, "db.service", "dedicated", 512 * kMiB, 512 * kMiB).ok());
    bool stopped = false;
    m->setReleaseHook([&] { stopped = true; });
    std::optional<ApiResult<std::vector<std::string>>> out;
    m->releaseAll([&](ApiResult<std::vector<std::string>> r) { out = r; });
    systemd_.flush();
    ASSERT_TRUE(out && out->ok());
    auto ids = out->value();
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(ids, (std::vector<std::string>{"db.service", "nginx.service"}));
    EXPECT_TRUE(stopped);
    EXPECT_EQ(systemd_.units["nginx.service"].memory->memoryMax, std::optional<Limit>(300 * kMiB));
    EXPECT_EQ(systemd_.units["db.service"].memory->memoryMin, std::optional<Bytes>(0));
    EXPECT_EQ(systemd_.units["system.slice"].memory->memoryMin, std::optional<Bytes>(0));
    EXPECT_EQ(systemd_.units["system.slice"].memory->memoryLow, std::optional<Bytes>(0));
    EXPECT_TRUE(store_.loadAll().assignments.empty());
    EXPECT_TRUE(io::OriginalStore(dir_ / "state/originals").loadAll().originals.empty());
    for (const auto& e : fs::recursive_directory_iterator(dir_ / "run/system.control")) {
        if (e.is_regular_file()) {
            EXPECT_FALSE(io::hasOwnMarker(readText(e.path()))) << e.path();
        }
    }
    // Nothing is taken on or changed any more.
    systemd_.setCalls.clear();
    auto again = assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB);
    EXPECT_FALSE(again.ok());
    m->tick(TimePoint(std::chrono::seconds(100)));
    systemd_.events.reloaded();
    systemd_.flush();
    EXPECT_TRUE(systemd_.setCalls.empty());
}

// A transient unit that stopped never runs again with these properties:
// nothing to give back, and no SetUnitProperties (systemd would create an
// empty cgroup for it, which a later start would adopt as a workload).
TEST_F(ManagerStoreTest, AStoppedTransientUnitIsNotGivenAnythingBack) {
    auto m = makeManager();
    ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB).ok());
    auto& u = systemd_.units["nginx.service"];
    u.transient = true;
    u.activeState = "failed";
    systemd_.setCalls.clear();
    std::optional<ApiResult<daemon::Done>> out;
    m->unassign("nginx.service", [&](ApiResult<daemon::Done> r) { out = r; });
    systemd_.flush();
    ASSERT_TRUE(out && out->ok());
    EXPECT_EQ(systemd_.lastSet("nginx.service"), nullptr);
    for (const auto& o : io::OriginalStore(dir_ / "state/originals").loadAll().originals) {
        EXPECT_NE(o.unit, "nginx.service") << "the record outlived the unit";
    }
    // A transient unit still running is given its values back.
    ASSERT_TRUE(assign(*m, "db.service", "shared", 256 * kMiB, 1 * kGiB).ok());
    systemd_.units["db.service"].transient = true;
    systemd_.setCalls.clear();
    std::optional<ApiResult<daemon::Done>> second;
    m->unassign("db.service", [&](ApiResult<daemon::Done> r) { second = r; });
    systemd_.flush();
    ASSERT_TRUE(second && second->ok());
    EXPECT_EQ(systemd_.units["db.service"].memory->memoryMax, std::optional<Limit>(Limit{}));
    EXPECT_EQ(systemd_.units["db.service"].memory->memoryLow, std::optional<Bytes>(0));
}

// Issue 11, defect 1: a slice's own protection is never lowered, and the
// slice gets it back once memqos manages nothing below it.
TEST_F(ManagerStoreTest, AnAncestorSlicesOwnProtectionIsNeverLowered) {
    systemd_.addUnit("system.slice", "/system.slice");
    systemd_.units["system.slice"].memory->memoryLow = 1 * kGiB;
    systemd_.units["system.slice"].memory->memoryMin = 64 * kMiB;
    auto m = makeManager();
    ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB).ok());
    // 256 MiB below a slice with 1 GiB of its own: nothing to add.
    for (const auto& c : systemd_.setCalls) {
        if (c.unit == "system.slice") {
            EXPECT_GE(c.props.memoryLow.value_or(kNoLimit), 1 * kGiB);
            EXPECT_GE(c.props.memoryMin.value_or(kNoLimit), 64 * kMiB);
        }
    }
    ASSERT_TRUE(assign(*m, "db.service", "dedicated", 2 * kGiB, 2 * kGiB).ok());
    const auto* slice = systemd_.lastSet("system.slice");
    ASSERT_NE(slice, nullptr);
    EXPECT_EQ(slice->memoryMin, std::optional<Bytes>(2 * kGiB));
    EXPECT_EQ(slice->memoryLow, std::optional<Bytes>(1 * kGiB)); // its own, larger than 256M+0
    std::optional<ApiResult<daemon::Done>> a;
    std::optional<ApiResult<daemon::Done>> b;
    m->unassign("db.service", [&](ApiResult<daemon::Done> r) { a = r; });
    m->unassign("nginx.service", [&](ApiResult<daemon::Done> r) { b = r; });
    systemd_.flush();
    ASSERT_TRUE(a && a->ok() && b && b->ok());
    const auto& now = *systemd_.units["system.slice"].memory;
    EXPECT_EQ(now.memoryLow, std::optional<Bytes>(1 * kGiB));
    EXPECT_EQ(now.memoryMin, std::optional<Bytes>(64 * kMiB));
    const auto* last = systemd_.lastSet("system.slice");
    EXPECT_FALSE(last->memoryMax.has_value()) << "a slice's limits are not memqos's to set";
}

// A class removed from the configuration: its workloads' units get their
// own values back at the reload, not at the next reboot.
TEST_F(ManagerStoreTest, ClassRemovedOnReloadGivesTheUnitsOwnValuesBack) {
    addClassLike("shared", "gold");
    systemd_.units["nginx.service"].memory->memoryMax = Limit(300 * kMiB);
    auto m = makeManager();
    ASSERT_TRUE(assign(*m, "nginx.service", "gold", 256 * kMiB, 1 * kGiB).ok());
    config_.classes.pop_back(); // the reader now returns the config without gold
    ASSERT_TRUE(m->reload().ok());
    systemd_.flush();
    EXPECT_FALSE(m->workloads().contains("nginx.service"));
    EXPECT_EQ(systemd_.units["nginx.service"].memory->memoryMax, std::optional<Limit>(300 * kMiB));
}

TEST_F(ManagerStoreTest, RunStartsATransientServiceInTheClassSlice) {
    auto m = makeManager();
    std::optional<ApiResult<std::string>> out;
    m->run("batch1", "reclaimed", 0, 512 * kMiB, {"/bin/sleep", "60"},
           [&](ApiResult<std::string> r) { out = r; });
    systemd_.flush();
    ASSERT_TRUE(out && out->ok()) << out->error().message;
    EXPECT_EQ(out->value(), "batch1.service");
    ASSERT_EQ(systemd_.started.size(), 1U);
    EXPECT_EQ(systemd_.startedSlices[0], "memqos-reclaimed.slice");
    EXPECT_EQ(systemd_.startedArgv[0], (std::vector<std::string>{"/bin/sleep", "60"}));
    EXPECT_EQ(m->workloads().at("batch1.service").cgroupPath,
              "memqos.slice/memqos-reclaimed.slice/batch1.service");

    std::optional<ApiResult<std::string>> bad;
    m->run("x", "shared", 0, kNoLimit, {"sleep"}, [&](ApiResult<std::string> r) { bad = r; });
    ASSERT_TRUE(bad && !bad->ok());
    EXPECT_EQ(bad->error().name, "org.memqos1.Error.InvalidArgument");
}

TEST_F(ManagerStoreTest, GoneUnitsGetNoPropertiesAndTransientOnesAreDropped) {
    auto m = makeManager();
    std::optional<ApiResult<std::string>> out;
    m->run("job", "shared", 0, 256 * kMiB, {"/bin/true"}, [&](ApiResult<std::string> r) { out = r; });
    systemd_.flush();
    ASSERT_TRUE(out && out->ok());
    ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB).ok());

    // The transient unit ran and systemd dropped it: no longer managed.
    systemd_.events.unitRemoved("job.service");
    systemd_.flush();
    EXPECT_FALSE(m->workloads().contains("job.service"));

    // An assigned unit systemd no longer knows: kept, but nothing is sent to
    // it (SetUnitProperties would fail, and systemd would load it to say so).
    systemd_.units.erase("nginx.service");
    systemd_.setCalls.clear();
    systemd_.events.unitRemoved("nginx.service");
    systemd_.events.unitStarted("nginx.service"); // e.g. JobRemoved of its stop job
    systemd_.flush();
    EXPECT_TRUE(m->workloads().contains("nginx.service"));
    EXPECT_EQ(systemd_.lastSet("nginx.service"), nullptr);

    // It comes back: its tiers are applied again.
    systemd_.addUnit("nginx.service", "/system.slice/nginx.service");
    systemd_.events.unitStarted("nginx.service");
    systemd_.flush();
    ASSERT_NE(systemd_.lastSet("nginx.service"), nullptr);
}

TEST_F(ManagerStoreTest, DryRunDecidesButSendsNothing) {
    auto m = makeManager(true);
    testing::internal::CaptureStderr();
    ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB).ok());
    systemd_.flush();
    const std::string said = testing::internal::GetCapturedStderr();
    // What it would set on the unit itself is said, not only on the slice
    // above (the demo found only system.slice's line).
    EXPECT_NE(said.find("Dry run: would set memory properties of nginx.service: MemoryMin=0 B "
                        "MemoryLow=256.0 MiB MemoryHigh=947.2 MiB MemoryMax=1.0 GiB "
                        "MemorySwapMax=infinity"),
              std::string::npos)
        << said;
    EXPECT_NE(said.find("Dry run: would set memory properties of system.slice"), std::string::npos)
        << said;
    EXPECT_TRUE(systemd_.setCalls.empty());
    EXPECT_TRUE(m->dryRun());
    EXPECT_EQ(m->workloads().at("nginx.service").tiers.memoryHigh, Limit(993210368));
}

// Rule "web": nginx*.service into shared, 128 MiB / 512 MiB.
config::WorkloadRule webRule() {
    config::WorkloadRule rule;
    rule.name = "web";
    rule.match = "nginx*.service";
    rule.className = "shared";
    rule.request = 128 * kMiB;
    rule.limit = 512 * kMiB;
    return rule;
}

TEST_F(ManagerStoreTest, RuleAdoptsMatchingUnitsAtStart) {
    config_.rules.push_back(webRule());
    auto m = makeManager();
    ASSERT_TRUE(m->workloads().contains("nginx.service"));
    EXPECT_FALSE(m->workloads().contains("db.service"));
    const auto* p = systemd_.lastSet("nginx.service");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->memoryLow, std::optional<Bytes>(128 * kMiB));
}

// Issue 24 item 5: a reload re-derives what rules gave running units: the
// new request reaches the unit, a unit no rule matches any more gets its own
// values back, and a running unit a rule matches now is adopted.
TEST_F(ManagerStoreTest, AReloadReDerivesRulesForRunningUnits) {
    config_.rules.push_back(webRule());
    systemd_.units["nginx.service"].memory->memoryMax = Limit(300 * kMiB);
    auto m = makeManager();
    ASSERT_TRUE(m->workloads().contains("nginx.service"));
    config_.rules[0].request = 256 * kMiB;
    ASSERT_TRUE(m->reload().ok());
    systemd_.flush();
    ASSERT_TRUE(m->workloads().contains("nginx.service"));
    EXPECT_EQ(m->workloads().at("nginx.service").workload.request, 256 * kMiB);
    const auto* p = systemd_.lastSet("nginx.service");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->memoryLow, std::optional<Bytes>(256 * kMiB)) << "the old rule's request stays";

    config_.rules[0].match = "db*.service";
    ASSERT_TRUE(m->reload().ok());
    systemd_.flush();
    EXPECT_FALSE(m->workloads().contains("nginx.service"));
    EXPECT_EQ(systemd_.units["nginx.service"].memory->memoryMax, std::optional<Limit>(300 * kMiB))
        << "a unit no rule matches keeps the rule's limit";
    ASSERT_TRUE(m->workloads().contains("db.service"))
        << "a unit the rule matches now is not adopted";
    const auto* db = systemd_.lastSet("db.service");
    ASSERT_NE(db, nullptr);
    EXPECT_EQ(db->memoryLow, std::optional<Bytes>(256 * kMiB));
}

// The review of 2026-11-27 (C3): Match=* adopted slices, VM scopes and the
// host's own units, so that level 3 could KillUnit a slice or a VM's scope.
TEST_F(ManagerStoreTest, ABroadRuleAdoptsNoSliceVmScopeOrHostUnit) {
    config::WorkloadRule rule;
    rule.name = "all";
    rule.match = "*";
    rule.className = "reclaimed";
    config_.rules.push_back(rule);
    const std::vector<std::string> never{"system.slice",
                                         "machine.slice",
                                         "init.scope",
                                         "dbus.service",
                                         "memqosd.service",
                                         "systemd-journald.service",
                                         "session-2.scope",
                                         "user@1000.service",
                                         "machine-qemu\\x2d1\\x2dweb.scope",
                                         "memqos-vm-web.scope"};
    for (const auto& u : never) {
        systemd_.addUnit(u, "/" + u);
    }
    auto m = makeManager();
    EXPECT_TRUE(m->workloads().contains("nginx.service")) << "a service still matches";
    for (const auto& u : never) {
        EXPECT_FALSE(m->workloads().contains(u)) << u << " adopted at start";
        systemd_.events.unitStarted(u);
        systemd_.flush();
        EXPECT_FALSE(m->workloads().contains(u)) << u << " adopted when started";
        EXPECT_EQ(systemd_.lastSet(u), nullptr) << u;
    }
}

TEST_F(ManagerStoreTest, ClassesFromTheConfigGetTransientSlices) {
    core::ClassPolicy gold;
    gold.name = "gold";
    gold.rank = 5;
    gold.protection = core::Protection::Min;
    config_.classes.push_back(gold);
    auto m = makeManager();
    EXPECT_EQ(systemd_.startedSlicesOnly, std::vector<std::string>{"memqos-gold.slice"});
    ASSERT_TRUE(assign(*m, "db.service", "gold", 256 * kMiB, 256 * kMiB).ok());
    EXPECT_EQ(systemd_.lastSet("db.service")->memoryMin, std::optional<Bytes>(256 * kMiB));
}

TEST_F(ManagerStoreTest, ASliceStartThatFailedIsTriedAgainWhenSystemdComesBack) {
    // 1000 slice starts once made systemd drop off the bus: the calls in
    // flight got NoReply and those slices stayed unstarted until a reload.
    for (const char* name : {"gold", "iron"}) {
        core::ClassPolicy c;
        c.name = name;
        c.rank = name[0] == 'g' ? 5 : 6;
        config_.classes.push_back(c);
    }
    systemd_.failSlice = invalid("org.freedesktop.DBus.Error.NoReply: systemd left");
    auto m = makeManager();
    systemd_.flush();
    EXPECT_EQ(systemd_.startedSlicesOnly,
              (std::vector<std::string>{"memqos-gold.slice", "memqos-iron.slice"}));
    // systemd is back (its owner watch and a daemon-reload both end here).
    systemd_.failSlice = okStatus();
    systemd_.startedSlicesOnly.clear();
    systemd_.events.reloaded();
    systemd_.flush();
    EXPECT_EQ(systemd_.startedSlicesOnly,
              (std::vector<std::string>{"memqos-gold.slice", "memqos-iron.slice"}));
    // Started now: a further reload asks for nothing.
    systemd_.startedSlicesOnly.clear();
    systemd_.events.reloaded();
    systemd_.flush();
    EXPECT_TRUE(systemd_.startedSlicesOnly.empty());
}

TEST_F(ManagerStoreTest, TickSamplesUsageAndNode) {
    auto m = makeManager();
    ASSERT_TRUE(assign(*m, "nginx.service", "shared", 256 * kMiB, 1 * kGiB).ok());
    m->tick(TimePoint(std::chrono::seconds(5)));
    EXPECT_EQ(m->memoryTotal(), kMemTotal);
    EXPECT_EQ(m->memoryAvailable(), 6 * kGiB);
    EXPECT_EQ(m->swapTotal(), 2 * kGiB);
    EXPECT_EQ(m->workloads().at("nginx.service").memoryCurrent, 104857600U);
    EXPECT_EQ(m->pressureLevel(), 0U);
    EXPECT_TRUE(m->admissionOpen());
}

TEST_F(ManagerStoreTest, VerifyPlacementCountsManagedServices) {
    auto m = makeManager();
    ASSERT_TRUE(assign(*m, "db.service", "dedicated", 1 * kGiB, 1 * kGiB).ok());
    // available = 8 GiB − 1 GiB reserve − 1 GiB services = 6 GiB
    auto fits = m->verifyPlacement(6 * kGiB, 6 * kGiB, {});
    EXPECT_EQ(fits.kind, core::VerdictKind::Fits) << fits.message;
    auto hard = m->verifyPlacement(6 * kGiB + 4096, 0, {});
    EXPECT_EQ(hard.kind, core::VerdictKind::Hard) << hard.message;
    auto soft = m->verifyPlacement(5 * kGiB, 0, {Bytes(2 * kGiB), false, "", std::nullopt});
    EXPECT_EQ(soft.kind, core::VerdictKind::Soft) << soft.message;
    auto refused = m->verifyPlacement(5 * kGiB, 0, {Bytes(2 * kGiB), true, "", std::nullopt});
    EXPECT_EQ(refused.kind, core::VerdictKind::Hard) << refused.message;
    EXPECT_NE(refused.message.find("soft violations are refused"), std::string::npos)
        << refused.message;
}

std::uint64_t number(const Manager::PlacementAnswer& v, const std::string& key) {
    for (const auto& [k, n] : v.numbers) {
        if (k == key) {
            return n;
        }
    }
    ADD_FAILURE() << "no number " << key;
    return 0;
}

TEST_F(ManagerStoreTest, VerifyPlacementCountsUpInstancesOnly) {
    auto m = makeManager();
    // available = 8 GiB − 1 GiB reserve = 7 GiB
    ASSERT_TRUE(test::recordInstance(*m, "a.example.test", 1 * kGiB, 2 * kGiB, true).ok());
    ASSERT_TRUE(test::recordInstance(*m, "b.example.test", 1 * kGiB, 3 * kGiB, false).ok());
    auto v = m->verifyPlacement(5 * kGiB, 0, {});
    EXPECT_EQ(number(v, "instances"), 2 * kGiB);
    EXPECT_EQ(v.kind, core::VerdictKind::Fits) << v.message;
    v = m->verifyPlacement(5 * kGiB + 4096, 0, {});
    EXPECT_EQ(v.kind, core::VerdictKind::Hard) << v.message;
    // Its own record is not counted twice (start of b, modify of a).
    v = m->verifyPlacement(7 * kGiB, 0, {std::nullopt, false, "a.example.test", std::nullopt});
    EXPECT_EQ(number(v, "instances"), 0U);
    EXPECT_EQ(v.kind, core::VerdictKind::Fits) << v.message;
}

TEST_F(ManagerStoreTest, InstanceRecordSurvivesARestartAndRefusesBadInput) {
    {
        auto m = makeManager();
        ASSERT_TRUE(
            test::recordInstance(*m, "inst1.example.test", 256 * kMiB, 512 * kMiB, true).ok());
        ASSERT_TRUE(test::recordInstance(*m, "inst2", 256 * kMiB, 512 * kMiB, false).ok());
        ASSERT_TRUE(test::recordInstance(*m, "inst2", 256 * kMiB, 768 * kMiB, true).ok());
        ASSERT_TRUE(test::forgetInstance(*m, "inst1.example.test").ok());
        auto e = test::forgetInstance(*m, "inst1.example.test");
        ASSERT_FALSE(e.ok());
        EXPECT_EQ(e.error().name, "org.memqos1.Error.NoSuchInstance");
        e = test::recordInstance(*m, "bad name", 0, kGiB, true);
        ASSERT_FALSE(e.ok());
        EXPECT_EQ(e.error().name, "org.memqos1.Error.InvalidArgument");
        e = test::recordInstance(*m, "x", 2 * kGiB, kGiB, true);
        ASSERT_FALSE(e.ok());
        EXPECT_EQ(e.error().name, "org.memqos1.Error.InvalidArgument");
        e = test::recordInstance(*m, "x", 0, 0, true);
        ASSERT_FALSE(e.ok());
        EXPECT_EQ(e.error().name, "org.memqos1.Error.SizeOutOfRange");
        EXPECT_EQ(m->instances().size(), 1U);
    }
    auto m = makeManager(); // kill -9 and restart
    ASSERT_EQ(m->instances().size(), 1U);
    const auto& i = m->instances().at("inst2");
    EXPECT_EQ(i, (core::Instance{"inst2", 256 * kMiB, 768 * kMiB, true}));
    const auto findings = m->verify();
    ASSERT_FALSE(findings.empty());
    EXPECT_NE(findings.back().message.find("instances 768.0 MiB"), std::string::npos)
        << findings.back().message;
}


// --- the pressure engine's actions (doc/DESIGN.md §4.2) ---

class RecordingListener : public daemon::Listener {
public:
    void managerPropertiesChanged(const std::vector<const char*>& names) override {
        changed.insert(changed.end(), names.begin(), names.end());
    }
    void pressureLevelChanged(std::uint32_t level, const std::string&) override {
        levels.push_back(level);
    }
    void workloadKilled(const io::KillRecord& record) override { killed.push_back(record); }
    bool announced(std::string_view name) const {
        return std::find(changed.begin(), changed.end(), name) != changed.end();
    }
    std::vector<std::string> changed; // Manager properties announced, in order
    std::vector<std::uint32_t> levels;
    std::vector<io::KillRecord> killed;
};

// UpInstancesMaxMemory: Σ max_memory of the up records, announced when a
// record changes it.
TEST_F(ManagerStoreTest, UpInstancesMaxMemorySumsTheUpRecords) {
    RecordingListener listener;
    auto m = makeManager();
    m->setListener(&listener);
    EXPECT_EQ(m->upInstancesMaxMemory(), 0U);
    ASSERT_TRUE(test::recordInstance(*m, "a.example.test", kGiB, 2 * kGiB, true).ok());
    ASSERT_TRUE(test::recordInstance(*m, "b.example.test", kGiB, 3 * kGiB, false).ok());
    EXPECT_EQ(m->upInstancesMaxMemory(), 2 * kGiB);
    EXPECT_EQ(listener.changed, std::vector<std::string>{"UpInstancesMaxMemory"})
        << "a down record changes nothing";
    ASSERT_TRUE(test::recordInstance(*m, "b.example.test", kGiB, 3 * kGiB, true).ok());
    EXPECT_EQ(m->upInstancesMaxMemory(), 5 * kGiB);
    ASSERT_TRUE(test::forgetInstance(*m, "a.example.test").ok());
    EXPECT_EQ(m->upInstancesMaxMemory(), 3 * kGiB);
    EXPECT_EQ(listener.changed.size(), 3U);
    m->setListener(nullptr);
}

class PressureTest : public ManagerStoreTest {
protected:
    void SetUp() override {
        ManagerStoreTest::SetUp();
        events_ = std::make_unique<io::EventStore>(dir_ / "state/kills");
        oomStore_ = io::OomStore(dir_ / "run/oom-scores");
        // These tests step at fixed times: phases not spread over the
        // interval (core's tests cover the spread).
        config_.reclaim.spreadPhases = false;
        // batch.service in the reclaimed class slice, pid 4343; the slice
        // itself with a memory.reclaim knob.
        const fs::path slice = dir_ / "cgroup/memqos.slice/memqos-reclaimed.slice";
        cgroupFiles(slice, 600 * kMiB, "");
        writeFile(slice / "memory.reclaim", "");
        cgroupFiles(slice / "batch.service", 600 * kMiB, "4343\n");
        writeFile(slice / "batch.service/memory.oom.group", "0\n");
        writeProcess(dir_ / "proc", 4343, "0\n");
        writeProcess(dir_ / "proc", 4242, "0\n");
        writeFile(dir_ / "cgroup/system.slice/nginx.service/memory.oom.group", "0\n");
        writeFile(slice / "batch.service/cgroup.kill", "");
        systemd_.addUnit("batch.service", "/memqos.slice/memqos-reclaimed.slice/batch.service");
    }

    // /proc/meminfo of an 8 GiB host: free, available, swap total and free in KiB.
    void meminfo8G(Bytes freeKiB, Bytes availableKiB, Bytes swapTotalKiB, Bytes swapFreeKiB) {
        writeFile(dir_ / "proc/meminfo",
                  "MemTotal:        8388608 kB\nMemFree:         " + std::to_string(freeKiB) +
                      " kB\nMemAvailable:    " + std::to_string(availableKiB) +
                      " kB\nSwapTotal:       " + std::to_string(swapTotalKiB) +
                      " kB\nSwapFree:        " + std::to_string(swapFreeKiB) + " kB\n");
    }

    // A service in the reclaimed class slice with one process (`pid`,
    // oom_score_adj 0) that a kill can reach; returns its cgroup path.
    std::string reclaimedUnit(const std::string& unit, Bytes current, int pid) {
        const std::string cg = "memqos.slice/memqos-reclaimed.slice/" + unit;
        cgroupFiles(dir_ / "cgroup" / cg, current, std::to_string(pid) + "\n");
        writeFile(dir_ / "cgroup" / cg / "memory.oom.group", "0\n");
        writeFile(dir_ / "cgroup" / cg / "cgroup.kill", "");
        writeProcess(dir_ / "proc", pid, "0\n");
        systemd_.addUnit(unit, "/" + cg);
        return cg;
    }

    static void cgroupFiles(const fs::path& dir, Bytes current, const std::string& procs) {
        writeFile(dir / "memory.current", std::to_string(current) + "\n");
        writeFile(dir / "memory.min", "0\n");
        writeFile(dir / "memory.low", "0\n");
        writeFile(dir / "memory.high", "max\n");
        writeFile(dir / "memory.max", "max\n");
        writeFile(dir / "memory.stat", "anon 1\n");
        writeFile(dir / "cgroup.procs", procs);
    }

    // What memqosd wrote to <cgroup>/cgroup.kill ("1": killed).
    std::string killFile(const std::string& cgroup) const {
        return readText(dir_ / "cgroup" / cgroup / "cgroup.kill");
    }
    static constexpr const char* kBatch = "memqos.slice/memqos-reclaimed.slice/batch.service";

    void setPsi(double some, double full) {
        writeFile(dir_ / "proc/pressure/memory",
                  "some avg10=" + std::to_string(some) + " avg60=0.00 avg300=0.00 total=0\n" +
                      "full avg10=" + std::to_string(full) + " avg60=0.00 avg300=0.00 total=0\n");
    }

    // nginx (dedicated, bigger) and batch (reclaimed) managed.
    std::unique_ptr<Manager> makeEngine(bool dryRun = false, bool assignBoth = true) {
        auto m = std::make_unique<Manager>(
            config_, [this] { return Result<config::Config>(config_); }, systemd_, store_,
            instances_, *events_, io::CgroupFs(dir_ / "cgroup"), io::ProcFs(dir_ / "proc"),
            dryRun);
        m->setListener(&listener_);
        m->setRuntimeDropInDir(dir_ / "run/system.control");
        m->setOomStore(&oomStore_);
        m->start([](Status st) { EXPECT_TRUE(st.ok()); });
        systemd_.flush();
        if (assignBoth) {
            EXPECT_TRUE(assign(*m, "nginx.service", "dedicated", 64 * kMiB, 64 * kMiB).ok());
            EXPECT_TRUE(assign(*m, "batch.service", "reclaimed", 0, kNoLimit).ok());
        }
        return m;
    }
    // Where the oom_score_adj records live (the runtime directory's).
    io::OomStore oomStore_{fs::path("/nonexistent")};

    void tickAt(Manager& m, int seconds) {
        m.tick(TimePoint(std::chrono::seconds(seconds)));
        systemd_.flush();
    }

public:
    void tick(Manager& m, int seconds) { tickAt(m, seconds); }

protected:

    std::unique_ptr<io::EventStore> events_;
    RecordingListener listener_;
};

// --- proactive reclaim (core/proactive.hpp) ---

std::string psiText(std::uint64_t someTotal) {
    return "some avg10=0.00 avg60=0.00 avg300=0.00 total=" + std::to_string(someTotal) +
           "\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
}

class ProactiveTest : public PressureTest {
protected:
    void SetUp() override {
        PressureTest::SetUp();
        batch_ = dir_ / "cgroup/memqos.slice/memqos-reclaimed.slice/batch.service";
        nginx_ = dir_ / "cgroup/system.slice/nginx.service";
        for (const auto& d : {batch_, nginx_}) {
            writeFile(d / "memory.pressure", psiText(0));
            writeFile(d / "memory.reclaim", "");
        }
        setPsi(0, 0);
    }
    fs::path batch_; // set in SetUp, once dir_ is
    fs::path nginx_;
    // The first step: MaxStep 5 % / 8 = 0.62 % of batch's 600 MiB, page-aligned.
    const Bytes firstStep_ = 600 * kMiB * 62 / 10000 / 4096 * 4096;
    // batch.service and n more reclaimed services of 600 MiB (r100.service
    // on), each with memory.pressure and memory.reclaim: their ids.
    std::vector<std::string> reclaimedUnits(std::size_t n) {
        std::vector<std::string> units{"batch.service"};
        for (std::size_t i = 0; i < n; ++i) {
            const std::string unit = "r" + std::to_string(100 + i) + ".service";
            const std::string cg = reclaimedUnit(unit, 600 * kMiB, 5000 + static_cast<int>(i));
            writeFile(dir_ / "cgroup" / cg / "memory.pressure", psiText(0));
            writeFile(dir_ / "cgroup" / cg / "memory.reclaim", "");
            units.push_back(unit);
        }
        return units;
    }
    // The engine after ticks 0, 1 and 2, of which 1 and 2 were light.
    std::unique_ptr<Manager> lightAtTwo() {
        auto m = makeEngine();
        for (int t = 0; t <= 2; ++t) {
            tickAt(*m, t);
        }
        return m;
    }
};

TEST_F(ProactiveTest, StepsWhileTheStallIsLowBacksOffWhenItRisesNeverTouchesDedicated) {
    auto m = makeEngine();
    tickAt(*m, 0); // the first measurement starts
    EXPECT_EQ(readText(batch_ / "memory.reclaim"), "");
    tickAt(*m, 5);
    EXPECT_EQ(readText(batch_ / "memory.reclaim"), std::to_string(firstStep_));
    auto r = m->reclaimOf("batch.service");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->phase, core::ReclaimPhase::Reclaiming);
    EXPECT_EQ(r->reclaimed, firstStep_); // the whole write went through
    // 10 ms stalled over 5 s = 0.2 %, above the 0.1 % target: no write.
    writeFile(batch_ / "memory.reclaim", "");
    writeFile(batch_ / "memory.pressure", psiText(10'000));
    tickAt(*m, 10);
    EXPECT_EQ(readText(batch_ / "memory.reclaim"), "");
    r = m->reclaimOf("batch.service");
    EXPECT_EQ(r->phase, core::ReclaimPhase::BackedOff);
    EXPECT_NEAR(r->stall, 0.2, 1e-9);
    EXPECT_EQ(r->reclaimed, firstStep_);
    // nginx is dedicated (Reclaim=no, memory.min).
    EXPECT_EQ(readText(nginx_ / "memory.reclaim"), "");
    EXPECT_EQ(m->reclaimOf("nginx.service")->phase, core::ReclaimPhase::Off);
}

// Issue 25: a workload at its floor is looked at by its memory.current alone
// at level 0; its memory.pressure is read again once it has grown past the
// floor. (A memory.pressure that does not parse makes the read fail, and
// the workload counts as gone: Waiting.)
TEST_F(ProactiveTest, AtItsFloorOnlyTheUsageIsReadUntilItGrows) {
    writeFile(batch_ / "memory.current", std::to_string(8 * kMiB) + "\n");
    auto m = makeEngine();
    tickAt(*m, 0);
    tickAt(*m, 5);
    ASSERT_EQ(m->reclaimOf("batch.service")->phase, core::ReclaimPhase::AtFloor);
    // (Nothing else reads its memory.pressure at level 0: the repair turn
    // reads usage and processes, no usage sweep reads pressure any more.)
    tickAt(*m, 7);
    writeFile(batch_ / "memory.pressure", "not psi\n");
    tickAt(*m, 10);
    EXPECT_EQ(m->reclaimOf("batch.service")->phase, core::ReclaimPhase::AtFloor)
        << "memory.pressure was read at the floor";
    writeFile(batch_ / "memory.current", std::to_string(600 * kMiB) + "\n");
    // Looked at by its usage alone at 10 s: next at 10 + 6 intervals (40 s).
    tickAt(*m, 15);
    EXPECT_EQ(m->reclaimOf("batch.service")->phase, core::ReclaimPhase::AtFloor)
        << "looked at before kFloorIntervals intervals";
    tickAt(*m, 40);
    EXPECT_NE(m->reclaimOf("batch.service")->phase, core::ReclaimPhase::AtFloor)
        << "memory.pressure was not read once it left the floor";
    // Readable again: measured anew, then reclaimed from (its first
    // interval is spread by up to one interval).
    writeFile(batch_ / "memory.pressure", psiText(0));
    const std::string before = readText(batch_ / "memory.reclaim");
    int t = 45;
    for (; t <= 55 && readText(batch_ / "memory.reclaim") == before; ++t) {
        tickAt(*m, t);
    }
    EXPECT_EQ(m->reclaimOf("batch.service")->phase, core::ReclaimPhase::Reclaiming);
    EXPECT_EQ(readText(batch_ / "memory.reclaim"), std::to_string(firstStep_))
        << "its first step, at tick " << t - 1;
}

// The PSI and swap properties (Manager MemoryPressureSome/Full, Class
// SwapCurrent/MemoryPressure, Workload MemoryPressure) are what the tick read
// from /proc/pressure/memory and the cgroups' files.
TEST_F(ProactiveTest, PressureAndSwapPropertiesComeFromTheSampledFiles) {
    const fs::path slice = dir_ / "cgroup/memqos.slice/memqos-reclaimed.slice";
    writeFile(slice / "memory.pressure", "some avg10=12.50 avg60=1.00 avg300=0.50 total=99\n"
                                         "full avg10=6.00 avg60=0.00 avg300=0.00 total=9\n");
    writeFile(slice / "memory.swap.current", "7340032\n");
    writeFile(batch_ / "memory.pressure", "some avg10=3.25 avg60=0.00 avg300=0.00 total=7\n"
                                          "full avg10=1.00 avg60=0.00 avg300=0.00 total=1\n");
    setPsi(1.5, 0.75);
    auto m = makeEngine();
    tickAt(*m, 0);
    EXPECT_DOUBLE_EQ(m->memoryPressureSome(), 1.5);
    EXPECT_DOUBLE_EQ(m->memoryPressureFull(), 0.75);
    EXPECT_TRUE(listener_.announced("MemoryPressureSome"));
    EXPECT_TRUE(listener_.announced("MemoryPressureFull"));
    EXPECT_EQ(m->classSwapCurrent("reclaimed"), 7340032U);
    EXPECT_DOUBLE_EQ(m->classMemoryPressure("reclaimed"), 12.5);
    EXPECT_EQ(m->classMemoryCurrent("reclaimed"), 600 * kMiB);
    EXPECT_EQ(m->classSwapCurrent("shared"), 0U); // no slice yet
    EXPECT_DOUBLE_EQ(m->classMemoryPressure("shared"), 0.0);
    EXPECT_DOUBLE_EQ(m->workloadUsage(m->workloads().at("batch.service"), true).memoryPressure,
                     3.25);
    EXPECT_DOUBLE_EQ(m->workloadUsage(m->workloads().at("nginx.service"), true).memoryPressure,
                     0.0); // psiText: 0.00

    // A move under 0.1 point is not announced (no signal every tick), but the
    // property has the new value; 0.1 point away from the last announced
    // value (not from the last tick's) is.
    listener_.changed.clear();
    setPsi(1.55, 0.75);
    tickAt(*m, 1);
    EXPECT_DOUBLE_EQ(m->memoryPressureSome(), 1.55);
    EXPECT_FALSE(listener_.announced("MemoryPressureSome"));
    EXPECT_FALSE(listener_.announced("MemoryPressureFull"));
    setPsi(1.62, 0.75);
    tickAt(*m, 2);
    EXPECT_TRUE(listener_.announced("MemoryPressureSome"));
    EXPECT_FALSE(listener_.announced("MemoryPressureFull"));
    listener_.changed.clear();
    setPsi(1.65, 0.7);
    tickAt(*m, 3);
    EXPECT_FALSE(listener_.announced("MemoryPressureSome"));
    EXPECT_FALSE(listener_.announced("MemoryPressureFull"));
    // Back to 0 is always announced, however small the move.
    setPsi(0, 0);
    tickAt(*m, 4);
    EXPECT_TRUE(listener_.announced("MemoryPressureSome"));
    EXPECT_TRUE(listener_.announced("MemoryPressureFull"));
    EXPECT_DOUBLE_EQ(m->memoryPressureFull(), 0.0);

    // The slice's files are read again every tick.
    writeFile(slice / "memory.pressure", "some avg10=0.40 avg60=1.00 avg300=0.50 total=99\n");
    writeFile(slice / "memory.swap.current", "0\n");
    tickAt(*m, 5);
    EXPECT_DOUBLE_EQ(m->classMemoryPressure("reclaimed"), 0.4);
    EXPECT_EQ(m->classSwapCurrent("reclaimed"), 0U);
}

// Issue 25: Class SwapCurrent and MemoryPressure are read when asked, not
// kept from the last tick.
TEST_F(ProactiveTest, ClassPropertiesAreReadWhenAsked) {
    const fs::path slice = dir_ / "cgroup/memqos.slice/memqos-reclaimed.slice";
    auto m = makeEngine();
    tickAt(*m, 0);
    writeFile(slice / "memory.swap.current", "4096\n");
    writeFile(slice / "memory.pressure", "some avg10=2.50 avg60=1.00 avg300=0.50 total=99\n");
    EXPECT_EQ(m->classSwapCurrent("reclaimed"), 4096U);
    EXPECT_DOUBLE_EQ(m->classMemoryPressure("reclaimed"), 2.5);
    EXPECT_EQ(m->classSwapCurrent("no-such-class"), 0U);
}

// Issue 25: between whole samples (every kSweepTicks ticks) a tick reads of a
// class slice only what the decisions take: memory.current, and memory.high
// and memory.pressure of the guarded class. The files nothing decides on may
// be gone (they are not read) and the class's usage is still fresh.
TEST_F(ProactiveTest, TickReadsOnlyWhatTheDecisionsTakeOfAClassSlice) {
    const fs::path slice = dir_ / "cgroup/memqos.slice/memqos-reclaimed.slice";
    auto m = makeEngine();
    tickAt(*m, 0); // a whole sample
    for (const char* f : {"memory.min", "memory.low", "memory.max", "memory.stat",
                          "memory.swap.max", "cgroup.procs"}) {
        fs::remove(slice / f);
    }
    writeFile(slice / "memory.current", std::to_string(700 * kMiB) + "\n");
    tickAt(*m, 1);
    EXPECT_EQ(m->classMemoryCurrent("reclaimed"), 700 * kMiB);
    // And the tick after: the last whole sample is carried from tick to
    // tick (a tick that found none would read the slice whole, and fail).
    writeFile(slice / "memory.current", std::to_string(800 * kMiB) + "\n");
    tickAt(*m, 2);
    EXPECT_EQ(m->classMemoryCurrent("reclaimed"), 800 * kMiB);
}

TEST_F(ProactiveTest, MetricsFileHasWhatWasReclaimed) {
    config_.manager.metricsFile = (dir_ / "prom/memqos.prom").string();
    auto m = makeEngine();
    tickAt(*m, 0);
    tickAt(*m, 5);
    const std::string text = readText(dir_ / "prom/memqos.prom");
    EXPECT_NE(text.find("memqos_workload_reclaimed_bytes_total{workload=\"batch.service\"} " +
                        std::to_string(firstStep_) + "\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("{workload=\"nginx.service\"}"), std::string::npos) << "off: not listed";
    EXPECT_NE(text.find("\nmemqos_reclaimed_allocatable_bytes " +
                        std::to_string(m->reclaimedAllocatable()) + "\n"),
              std::string::npos)
        << text;
}

TEST_F(ProactiveTest, PausedAboveLevelZeroAndDryRunWritesNothing) {
    auto m = makeEngine(/*dryRun=*/true);
    tickAt(*m, 0);
    tickAt(*m, 5);
    EXPECT_EQ(readText(batch_ / "memory.reclaim"), "");
    auto r = m->reclaimOf("batch.service");
    EXPECT_EQ(r->phase, core::ReclaimPhase::Reclaiming);
    EXPECT_EQ(r->reclaimed, 0U);

    auto live = makeEngine();
    setPsi(60, 0); // level 1 after 2 s
    tickAt(*live, 0);
    tickAt(*live, 3);
    ASSERT_GE(live->pressureLevel(), 1U);
    writeFile(batch_ / "memory.reclaim", ""); // the ladder's own class reclaim is elsewhere
    tickAt(*live, 6);
    EXPECT_EQ(live->reclaimOf("batch.service")->phase, core::ReclaimPhase::Paused);
    EXPECT_EQ(readText(batch_ / "memory.reclaim"), "");
}

TEST_F(ProactiveTest, AnOperatorsReclaimIsCountedAndNamedErrorsOtherwise) {
    auto m = makeEngine();
    tickAt(*m, 0);
    std::optional<ApiResult<Bytes>> out;
    m->reclaimNow("batch.service", 64 * kMiB, [&](ApiResult<Bytes> r) { out = r; });
    ASSERT_TRUE(out && out->ok());
    EXPECT_EQ(out->value(), 64 * kMiB);
    // Written in chunks; the file keeps the last one.
    EXPECT_EQ(readText(batch_ / "memory.reclaim"), std::to_string(io::kReclaimChunk));
    EXPECT_EQ(m->reclaimOf("batch.service")->reclaimed, 64 * kMiB);
    m->reclaimNow("nope.service", 1, [&](ApiResult<Bytes> r) { out = r; });
    ASSERT_TRUE(out && !out->ok());
    EXPECT_EQ(out->error().name, "org.memqos1.Error.NoSuchWorkload");
    m->reclaimNow("batch.service", 0, [&](ApiResult<Bytes> r) { out = r; });
    EXPECT_EQ(out->error().name, "org.memqos1.Error.InvalidArgument");
}

// Issue 24 item 9: the kernel ignores the target's own memory.low/min for
// memory.reclaim, so an operator's Reclaim keeps the workload's request
// itself unless forced, and does not start while proactive reclaim is backed
// off for the workload.
TEST_F(ProactiveTest, AnOperatorsReclaimStopsAtTheRequestUnlessForced) {
    auto m = makeEngine();
    tickAt(*m, 0);
    // nginx: dedicated, request 64 MiB, using 100 MiB.
    writeFile(nginx_ / "memory.current", std::to_string(100 * kMiB) + "\n");
    std::optional<ApiResult<Bytes>> out;
    m->reclaimNow("nginx.service", 1024 * kMiB, false, [&](ApiResult<Bytes> r) { out = r; });
    ASSERT_TRUE(out && out->ok()) << (out ? out->error().message : "no answer");
    EXPECT_EQ(out->value(), 36 * kMiB) << "reclaimed below the request";

    writeFile(nginx_ / "memory.current", std::to_string(60 * kMiB) + "\n");
    writeFile(nginx_ / "memory.reclaim", "");
    out.reset();
    m->reclaimNow("nginx.service", 16 * kMiB, [&](ApiResult<Bytes> r) { out = r; });
    ASSERT_TRUE(out && !out->ok());
    EXPECT_EQ(out->error().name, "org.memqos1.Error.AtFloor");
    EXPECT_NE(out->error().message.find("request"), std::string::npos) << out->error().message;
    EXPECT_EQ(readText(nginx_ / "memory.reclaim"), "") << "written at the floor";

    out.reset();
    m->reclaimNow("nginx.service", 16 * kMiB, true, [&](ApiResult<Bytes> r) { out = r; });
    ASSERT_TRUE(out && out->ok());
    EXPECT_EQ(out->value(), 16 * kMiB) << "forced: the whole amount";
}

TEST_F(ProactiveTest, AnOperatorsReclaimWaitsWhileProactiveReclaimIsBackedOff) {
    auto m = makeEngine();
    tickAt(*m, 0);
    tickAt(*m, 5);
    writeFile(batch_ / "memory.pressure", psiText(10'000)); // 0.2 % stalled: back off
    tickAt(*m, 10);
    ASSERT_EQ(m->reclaimOf("batch.service")->phase, core::ReclaimPhase::BackedOff);
    writeFile(batch_ / "memory.reclaim", "");
    std::optional<ApiResult<Bytes>> out;
    m->reclaimNow("batch.service", 64 * kMiB, [&](ApiResult<Bytes> r) { out = r; });
    ASSERT_TRUE(out && !out->ok());
    EXPECT_EQ(out->error().name, "org.memqos1.Error.BackedOff");
    EXPECT_EQ(readText(batch_ / "memory.reclaim"), "");
    out.reset();
    m->reclaimNow("batch.service", 8 * kMiB, true, [&](ApiResult<Bytes> r) { out = r; });
    ASSERT_TRUE(out && out->ok());
    EXPECT_EQ(out->value(), 8 * kMiB);
}

TEST_F(ProactiveTest, ReclaimedAllocatableLeavesTheOthersTheirs) {
    auto m = makeEngine();
    tickAt(*m, 0);
    // Whatever the fixture's numbers, it is what the core computes from
    // MemTotal, NodeReserved, the headroom and the other classes' claims,
    // and below MemTotal − NodeReserved.
    EXPECT_GT(m->reclaimedAllocatable(), 0U);
    EXPECT_LT(m->reclaimedAllocatable(), m->memoryTotal() - m->nodeReserved());
}

// (a) A service dies by memqosd's own write of its cgroup.kill: no KillUnit,
// so no dbus-daemon and no PID 1 on the way.
TEST_F(PressureTest, KillsTheTopVictimThroughCgroupKillAndKeepsTheRecord) {
    auto m = makeEngine();
    setPsi(60, 50);
    tickAt(*m, 0);
    EXPECT_EQ(killFile(kBatch), "");
    tickAt(*m, 10); // level 3 after Level3Duration
    ASSERT_EQ(m->pressureLevel(), 3U);
    // nginx uses more, but dedicated is never killable.
    EXPECT_EQ(killFile(kBatch), "1");
    EXPECT_TRUE(systemd_.killCalls.empty()) << "a service is not killed with KillUnit";
    EXPECT_EQ(readText(dir_ / "cgroup/system.slice/nginx.service/cgroup.kill"),
              "<" + (dir_ / "cgroup/system.slice/nginx.service/cgroup.kill").string() +
                  ": No such file or directory>");
    ASSERT_EQ(m->kills().size(), 1U);
    EXPECT_EQ(m->kills()[0].id, "batch.service");
    EXPECT_EQ(m->kills()[0].className, "reclaimed");
    EXPECT_EQ(m->kills()[0].unit, "batch.service");
    EXPECT_GT(m->kills()[0].timeUsec, 0U);
    ASSERT_EQ(listener_.killed.size(), 1U);
    EXPECT_EQ(listener_.killed[0], m->kills()[0]);
    // On disk: a restarted daemon sees it.
    io::EventStore again(dir_ / "state/kills");
    EXPECT_EQ(again.load().records.size(), 1U);

    // (A fixture's processes do not die: batch is still there.)
    writeFile(dir_ / "cgroup" / kBatch / "cgroup.kill", "");
    tickAt(*m, 11); // cooldown
    EXPECT_EQ(killFile(kBatch), "");
    EXPECT_EQ(m->kills().size(), 1U);
    tickAt(*m, 25);
    EXPECT_EQ(killFile(kBatch), "1");
    EXPECT_EQ(m->kills().size(), 2U);
    EXPECT_TRUE(systemd_.killCalls.empty());
}

// VM case 50-pressure (2026-11-28): memory and swap exhausted put level 3
// on at once, from calm, and the swap-usage ranking used the sweep's older
// readings, in which swapper.service had not been read since its memory went
// to swap: big.service, the bigger in RAM, was killed. A kill decided on
// such readings is decided again on what the candidates hold now.
TEST_F(PressureTest, AKillFromCalmRanksOnFreshReadings) {
    config_.pressure.swapUsedKill = 100; // 1 %
    for (auto& l : config_.pressure.levels) {
        l.memAvailableBelow = 9900; // 99 %
    }
    const std::string swapper = reclaimedUnit("swapper.service", 100 * kMiB, 4646);
    writeFile(dir_ / "cgroup" / swapper / "memory.swap.current", "0\n");
    writeFile(dir_ / "cgroup" / kBatch / "memory.swap.current", "0\n");
    meminfo8G(8000000, 8388608, 2097152, 2097152);
    auto m = makeEngine();
    ASSERT_TRUE(assign(*m, "swapper.service", "reclaimed", 0, kNoLimit).ok());
    // Every workload read by the sweep (one of the three a tick, in id
    // order): swapper holds no swap. 21 ticks: the next turn is batch's.
    for (int t = 0; t < 21; ++t) {
        tickAt(*m, t);
    }
    ASSERT_EQ(m->pressureLevel(), 0U);
    // swapper's memory goes to swap behind the sweep's back; then memory and
    // swap run short.
    writeFile(dir_ / "cgroup" / swapper / "memory.current", std::to_string(4 * kMiB) + "\n");
    writeFile(dir_ / "cgroup" / swapper / "memory.swap.current",
              std::to_string(500 * kMiB) + "\n");
    meminfo8G(4000000, 4194304, 2097152, 1000000);
    tickAt(*m, 100);
    ASSERT_EQ(m->pressureLevel(), 3U);
    EXPECT_EQ(killFile(swapper), "1") << "the swap ranking puts swapper first";
    EXPECT_EQ(killFile(kBatch), "") << "batch is bigger in RAM only";
}

// Issue 25 item 2: killable workloads are read every tick only while a kill
// is near (level 2 and above, level 3's condition building up, a class
// stalling). Level 3 reached at once from calm, where the sweep's older
// readings had no candidate (every killable workload empty when last read),
// is decided again on what they hold now: the hog that grew since is killed,
// not left to the kernel with "level 3 but no killable candidate".
TEST_F(PressureTest, LevelThreeFromCalmWithNoCandidateOnOlderReadingsReadsThemAgain) {
    for (auto& l : config_.pressure.levels) {
        l.memAvailableBelow = 9900; // 99 %
        l.duration = std::chrono::seconds(0); // every level at once
    }
    const std::string hog = reclaimedUnit("hog.service", 0, 4646);
    writeFile(dir_ / "cgroup" / kBatch / "memory.current", "0\n");
    meminfo8G(8000000, 8388608, 0, 0);
    auto m = makeEngine();
    ASSERT_TRUE(assign(*m, "hog.service", "reclaimed", 0, kNoLimit).ok());
    for (int t = 0; t < 21; ++t) {
        tickAt(*m, t);
    }
    ASSERT_EQ(m->pressureLevel(), 0U);
    // The hog grows behind the sweep's back, and memory runs out at once.
    writeFile(dir_ / "cgroup" / hog / "memory.current", std::to_string(900 * kMiB) + "\n");
    meminfo8G(4000, 4096, 0, 0);
    tickAt(*m, 100);
    ASSERT_EQ(m->pressureLevel(), 3U);
    EXPECT_EQ(killFile(hog), "1") << "the hog holds 900 MiB now";
    EXPECT_EQ(killFile(kBatch), "");
}

// Issue 25 item 2, from the other side: while only level 1's condition
// builds up, a killable workload is read by the sweep's turn alone, not every
// tick; once level 3's condition builds up (a kill is near), every tick. The
// metrics file says which: memqos_pressure_condition_level, memqos_kill_near.
TEST_F(PressureTest, KillableWorkloadsAreReadEveryTickOnlyWhileAKillIsNear) {
    config_.manager.metricsFile = (dir_ / "prom/memqos.prom").string();
    config_.pressure.levels[0].memAvailableBelow = 9900; // 99 %: holds
    for (auto& l : config_.pressure.levels) {
        l.duration = std::chrono::hours(1); // building up, never entered
    }
    config_.pressure.levels[1].memAvailableBelow = 0;
    config_.pressure.levels[2].memAvailableBelow = 0;
    const std::string hog = reclaimedUnit("hog.service", 0, 4646);
    meminfo8G(8000000, 8000000, 0, 0); // 95 % available
    auto m = makeEngine();
    ASSERT_TRUE(assign(*m, "hog.service", "reclaimed", 0, kNoLimit).ok());
    const auto prom = [&] { return readText(dir_ / "prom/memqos.prom"); };
    // Grows behind memqosd's back between ticks; how many of the next ticks
    // saw each size tells whether it was read every tick.
    const auto ticksThatSawEachSize = [&](int first) {
        int seen = 0;
        for (int t = first; t < first + 3; ++t) {
            const Bytes size = static_cast<Bytes>(t + 1) * kMiB;
            writeFile(dir_ / "cgroup" / hog / "memory.current", std::to_string(size) + "\n");
            tickAt(*m, t);
            seen += m->workloads().at("hog.service").memoryCurrent == size ? 1 : 0;
        }
        return seen;
    };
    for (int t = 0; t < 21; ++t) {
        tickAt(*m, t);
    }
    ASSERT_EQ(m->pressureLevel(), 0U);
    ASSERT_NE(prom().find("\nmemqos_pressure_condition_level 1\n"), std::string::npos) << prom();
    ASSERT_NE(prom().find("\nmemqos_kill_near 0\n"), std::string::npos) << prom();
    EXPECT_LT(ticksThatSawEachSize(30), 3) << "read every tick with only level 1 building up";

    config_.pressure.levels[1].memAvailableBelow = 9900;
    config_.pressure.levels[2].memAvailableBelow = 9900;
    ASSERT_TRUE(m->reload().ok());
    tickAt(*m, 40);
    ASSERT_EQ(m->pressureLevel(), 0U);
    ASSERT_NE(prom().find("\nmemqos_pressure_condition_level 3\n"), std::string::npos) << prom();
    ASSERT_NE(prom().find("\nmemqos_kill_near 1\n"), std::string::npos) << prom();
    EXPECT_EQ(ticksThatSawEachSize(50), 3) << "level 3 building up: read every tick";
}

// Issue 25: at level 0 with nothing building up, a tick reads a placed
// workload's cgroup only at its OOM priority's repair turn (one workload
// every kRepairTicks ticks), no longer at a usage sweep's turn
// too; its Workload properties read its files when asked.
TEST_F(PressureTest, AtLevelZeroAPlacedWorkloadIsReadOnlyAtItsRepairTurn) {
    meminfo8G(8000000, 8000000, 0, 0); // 95 % available
    std::vector<std::string> cgroups;
    for (int i = 0; i < 20; ++i) {
        cgroups.push_back(reclaimedUnit("w" + std::to_string(i) + ".service", kMiB, 5000 + i));
    }
    auto m = makeEngine();
    for (int i = 0; i < 20; ++i) {
        ASSERT_TRUE(assign(*m, "w" + std::to_string(i) + ".service", "reclaimed", 0, kNoLimit).ok());
    }
    for (int t = 0; t < 5; ++t) {
        tickAt(*m, t); // the new workloads' first reads (oomDue)
    }
    ASSERT_EQ(m->pressureLevel(), 0U);
    // Each tick every workload grows behind memqosd's back to a size of that
    // tick; a workload holding it after the tick was read by the tick.
    int reads = 0;
    for (int t = 10; t < 30; ++t) {
        const Bytes size = static_cast<Bytes>(t) * kMiB;
        for (const auto& cg : cgroups) {
            writeFile(dir_ / "cgroup" / cg / "memory.current", std::to_string(size) + "\n");
        }
        tickAt(*m, t);
        for (int i = 0; i < 20; ++i) {
            reads += m->workloads().at("w" + std::to_string(i) + ".service").memoryCurrent == size;
        }
    }
    // 22 workloads with the fixture's nginx and batch: one repair turn
    // every kRepairTicks (2) ticks reads one of these 20 on 9 or so of the
    // 10 turns in 20 ticks. One a tick would read about 18, a usage sweep
    // (3 a tick) about 60.
    static_assert(Manager::kRepairTicks == 2);
    EXPECT_LE(reads, 10) << "more than one read every kRepairTicks ticks";
    EXPECT_GE(reads, 7) << "the repair sweep did not read them";
    // The properties read the files when asked, without a tick.
    writeFile(dir_ / "cgroup" / cgroups[3] / "memory.current", std::to_string(77 * kMiB) + "\n");
    writeFile(dir_ / "cgroup" / cgroups[3] / "memory.swap.current", "8192\n");
    writeFile(dir_ / "cgroup" / cgroups[3] / "memory.pressure",
              "some avg10=4.50 avg60=0.00 avg300=0.00 total=7\n");
    const auto u = m->workloadUsage(m->workloads().at("w3.service"), true);
    EXPECT_EQ(u.memoryCurrent, 77 * kMiB);
    EXPECT_EQ(u.swapCurrent, 8192U);
    EXPECT_DOUBLE_EQ(u.memoryPressure, 4.5);
    EXPECT_NE(m->workloads().at("w3.service").memoryCurrent, 77 * kMiB) << "not the tick's copy";
}

// A unit systemd never announced (its UnitNew goes through dbus-daemon,
// which may be stopped or swapped out) is still found in its class slice
// under pressure, and is the one killed (VM case 52-kill-path: "level 3 but
// no killable candidate" until the kernel killed the hog). Not at level 0,
// and not a lingering cgroup without processes.
TEST_F(PressureTest, UnderPressureAnUnannouncedUnitInAClassSliceIsFoundAndKilled) {
    auto m = makeEngine();
    // batch.service (600 MiB) is there too: the hog (900 MiB) ranks first.
    const std::string hog = "memqos.slice/memqos-reclaimed.slice/hog.service";
    cgroupFiles(dir_ / "cgroup" / hog, 900 * kMiB, "4545\n");
    writeFile(dir_ / "cgroup" / hog / "cgroup.kill", "");
    writeProcess(dir_ / "proc", 4545, "0\n");
    const std::string gone = "memqos.slice/memqos-reclaimed.slice/gone.service";
    cgroupFiles(dir_ / "cgroup" / gone, 0, "");
    writeFile(dir_ / "cgroup" / gone / "cgroup.kill", "");
    tickAt(*m, 0);
    EXPECT_FALSE(m->workloads().contains("hog.service")) << "level 0: systemd's events suffice";
    setPsi(60, 50);
    tickAt(*m, 1);
    tickAt(*m, 3); // level 1 after Level1Duration
    ASSERT_GE(m->pressureLevel(), 1U);
    EXPECT_FALSE(m->workloads().contains("hog.service")) << "read before this tick's decision";
    tickAt(*m, 4);
    EXPECT_TRUE(m->workloads().contains("hog.service"));
    EXPECT_FALSE(m->workloads().contains("gone.service")) << "no processes: not adopted";
    tickAt(*m, 11);
    ASSERT_EQ(m->pressureLevel(), 3U);
    EXPECT_EQ(killFile(hog), "1");
    EXPECT_EQ(killFile(kBatch), "");
    EXPECT_EQ(killFile(gone), "");
}

TEST_F(PressureTest, AKilledWorkloadWhoseCgroupIsGoneIsNotKilledAgain) {
    auto m = makeEngine();
    setPsi(60, 50);
    tickAt(*m, 0);
    tickAt(*m, 10);
    ASSERT_EQ(m->kills().size(), 1U);
    // The unit ended: systemd removed its cgroup (it stays failed, and a
    // workload, in systemd's view and ours).
    fs::remove_all(dir_ / "cgroup/memqos.slice/memqos-reclaimed.slice/batch.service");
    for (int t = 11; t <= 40; ++t) {
        tickAt(*m, t); // still level 3, cooldown over from t = 25
    }
    ASSERT_EQ(m->pressureLevel(), 3U);
    EXPECT_EQ(m->kills().size(), 1U) << "killed again: " << m->kills().back().id;
}

// (b) A kill that fails gives the cooldown back and sets the victim aside
// for kSetAsideCooldowns × KillCooldown: the next candidate dies at the next
// tick, instead of the same failure at every tick.
TEST_F(PressureTest, FailedKillSetsTheVictimAsideAndTheNextCandidateDies) {
    const std::string other = "memqos.slice/memqos-reclaimed.slice/other.service";
    cgroupFiles(dir_ / "cgroup" / other, 300 * kMiB, "4444\n");
    writeFile(dir_ / "cgroup" / other / "memory.oom.group", "0\n");
    writeFile(dir_ / "cgroup" / other / "cgroup.kill", "");
    writeProcess(dir_ / "proc", 4444, "0\n");
    systemd_.addUnit("other.service", "/" + other);
    // batch (600 MiB, the top victim) without cgroup.kill: a kernel before
    // 5.14, say.
    fs::remove(dir_ / "cgroup" / kBatch / "cgroup.kill");
    // (systemd would refuse a KillUnit too: memqosd before issue 23 tried
    // batch again at every tick and never got to other.)
    systemd_.failKill = Status(Error{std::errc::permission_denied, "Access denied"});
    auto m = makeEngine();
    ASSERT_TRUE(assign(*m, "other.service", "reclaimed", 0, kNoLimit).ok());
    setPsi(60, 50);
    tickAt(*m, 0);
    tickAt(*m, 10);
    ASSERT_EQ(m->pressureLevel(), 3U);
    EXPECT_TRUE(m->kills().empty());
    EXPECT_EQ(killFile(other), "");
    tickAt(*m, 11); // no cooldown: nothing was killed
    EXPECT_EQ(killFile(other), "1") << "the next candidate is not killed";
    ASSERT_EQ(m->kills().size(), 1U);
    EXPECT_EQ(m->kills()[0].id, "other.service");
    ASSERT_EQ(listener_.killed.size(), 1U);
    EXPECT_TRUE(systemd_.killCalls.empty());

    // batch stays aside even once it could be killed again...
    writeFile(dir_ / "cgroup" / kBatch / "cgroup.kill", "");
    writeFile(dir_ / "cgroup" / other / "cgroup.kill", "");
    tickAt(*m, 30);
    EXPECT_EQ(killFile(kBatch), "");
    EXPECT_EQ(killFile(other), "1");
    ASSERT_EQ(m->kills().size(), 2U);
    // ... until 20 cooldowns after its failure.
    const int aside = static_cast<int>(
        Manager::kSetAsideCooldowns *
        std::chrono::duration_cast<std::chrono::seconds>(config_.pressure.killCooldown).count());
    tickAt(*m, 10 + aside - 1); // other again: batch's last second aside
    EXPECT_EQ(killFile(kBatch), "");
    ASSERT_EQ(m->kills().size(), 3U);
    tickAt(*m, 10 + aside - 1 + 15); // the next kill after that cooldown
    EXPECT_EQ(killFile(kBatch), "1");
    ASSERT_EQ(m->kills().size(), 4U);
    EXPECT_EQ(m->kills()[3].id, "batch.service");
}

// --- the class-stall rule (core/pressure.hpp) on the daemon's reads ---

std::string fullText(std::uint64_t fullTotal) {
    return "some avg10=0.00 avg60=0.00 avg300=0.00 total=" + std::to_string(fullTotal) +
           "\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=" + std::to_string(fullTotal) + "\n";
}

// The reclaimed slice held at its cap (memory.high = its usage) and fully
// stalled half of every second; `hostHurt`: system.slice stalls as long;
// `batchStalls`: batch.service's own memory.pressure does. The kills seen
// over 20 one-second ticks.
std::vector<std::string> stallKills(PressureTest& t, Manager& m, bool hostHurt,
                                    bool batchStalls, const fs::path& root) {
    const fs::path slice = root / "cgroup/memqos.slice/memqos-reclaimed.slice";
    writeFile(slice / "memory.high", std::to_string(600 * kMiB) + "\n");
    writeFile(root / "cgroup/system.slice/memory.current", "1048576\n");
    std::vector<std::string> seen;
    for (int s = 0; s < 20; ++s) {
        const std::uint64_t total = static_cast<std::uint64_t>(s) * 500'000;
        writeFile(slice / "memory.pressure", fullText(total));
        writeFile(root / "cgroup/system.slice/memory.pressure", fullText(hostHurt ? total : 0));
        writeFile(slice / "batch.service/memory.pressure", fullText(batchStalls ? total : 0));
        const auto before = m.kills().size();
        t.tick(m, s);
        if (m.kills().size() > before) {
            seen.push_back(std::to_string(s) + " " + m.kills().back().id);
        }
    }
    return seen;
}

// The review of 2026-11-27 (C1): held at memqos's own cap on a calm host, a
// workload was killed every cooldown for stalling on that cap alone.
TEST_F(PressureTest, StallAtTheGuardsCapKillsOnlyWhenTheHostIsHurt) {
    setPsi(0, 0);
    {
        auto m = makeEngine();
        EXPECT_TRUE(stallKills(*this, *m, false, true, dir_).empty()) << "a calm host";
    }
    {
        auto m = makeEngine();
        // Windows: t=0 opens the class's, t=1 ends it (stall from t=1, the
        // workloads' pressure read from t=2), t=3 ends batch's: kill.
        EXPECT_EQ(stallKills(*this, *m, true, true, dir_),
                  (std::vector<std::string>{"3 batch.service", "18 batch.service"}));
    }
}

TEST_F(PressureTest, StallKillNeedsTheVictimToStallItself) {
    setPsi(0, 0);
    auto m = makeEngine();
    EXPECT_TRUE(stallKills(*this, *m, true, false, dir_).empty());
}

// The review of 2026-11-27 (C2): systemd writes memory.high from PID 1 and
// the kernel reclaims the excess in the writer, so a cap far under the usage
// made PID 1 swap for memqos. memqosd reclaims first (its own worker) and
// sets the cap at most 2 MiB under the usage (8 MiB before 2026-12-05); later
// ticks lower it further.
TEST_F(PressureTest, ALoweredCapNeverLeavesPid1MoreThan2MiBToReclaim) {
    config_.pressure.killCooldown = std::chrono::hours(1);
    auto m = makeEngine();
    tickAt(*m, 0);
    const fs::path slice = dir_ / "cgroup/memqos.slice/memqos-reclaimed.slice";
    writeFile(slice / "memory.reclaim", "");
    writeFile(slice / "memory.current", std::to_string(2048 * kMiB) + "\n");
    setPsi(30, 6); // level 2 after 5 s: throttle to 95 % of 2 GiB
    const auto sets = systemd_.setCalls.size();
    tickAt(*m, 1);
    tickAt(*m, 6);
    ASSERT_EQ(m->pressureLevel(), 2U);
    const auto* p = systemd_.lastSet("memqos-reclaimed.slice");
    ASSERT_NE(p, nullptr);
    ASSERT_GT(systemd_.setCalls.size(), sets);
    ASSERT_TRUE(p->memoryHigh && *p->memoryHigh);
    EXPECT_EQ(**p->memoryHigh, 2048 * kMiB - 2 * kMiB) << "not 95 % of the usage at once";
    // usage − the cut (2 GiB − 2040107008 = 107376640 bytes) asked of
    // memory.reclaim first, in chunks of 8 MiB; then, the worker being
    // synchronous here, the ladder's 1 % (21471232: 8 + 8 MiB, then 4694016;
    // the fixture file keeps the last write). Which goes first when the
    // worker is busy: TheThrottlesReclaimGetsTheWorkerBeforeTheLaddersStep.
    EXPECT_EQ(readText(slice / "memory.reclaim"), "4694016");
    // The class grows faster than memqosd reclaims (a hog): the cap in force
    // holds, it never follows the usage up (VM case 55-precision, where it
    // did and the kernel OOM killer fired).
    // 2056 MiB: the throttle's next target (95 %, 1953 MiB) is a step under
    // the cap in force, and usage − 2 MiB (2054 MiB) above it.
    writeFile(slice / "memory.current", std::to_string(2056 * kMiB) + "\n");
    const auto before = systemd_.setCalls.size();
    tickAt(*m, 7);
    tickAt(*m, 8);
    for (auto i = before; i < systemd_.setCalls.size(); ++i) {
        const auto& [unit, props, urgent] = systemd_.setCalls[i];
        if (urgent && unit == "memqos-reclaimed.slice" && props.memoryHigh && *props.memoryHigh) {
            EXPECT_LE(**props.memoryHigh, 2048 * kMiB - 2 * kMiB) << "the cap went up";
        }
    }
    EXPECT_EQ(**systemd_.lastSet("memqos-reclaimed.slice")->memoryHigh, 2048 * kMiB - 2 * kMiB);
}

// A reclaim worker that holds every write until the test lets it end.
class HeldRunner final : public io::ReclaimRunner {
public:
    std::vector<std::pair<std::string, Bytes>> asked;
    void reclaim(const std::string& cgroup, Bytes bytes, Done done) override {
        asked.emplace_back(cgroup, bytes);
        held_.push_back([done = std::move(done), bytes] {
            done(io::ReclaimResult{.outcome = io::Reclaimed::Full, .freed = bytes});
        });
    }
    void cancel(const std::string& /*cgroup*/) override {}
    void release() {
        auto held = std::move(held_);
        held_.clear();
        for (auto& f : held) {
            f();
        }
    }

private:
    std::vector<std::function<void()>> held_;
};

// VM case 56-pid1-latency (CI of 2026-12-04): the ladder's 1 % reclaim of
// the class, decided in the same tick before the throttle's cap, took the
// worker (one reclaim per class at a time), so the cap's own reclaim never
// started and PID 1 reclaimed the slack at every step. Now the cap's reclaim
// goes first and the ladder's finds the class busy.
TEST_F(PressureTest, TheThrottlesReclaimGetsTheWorkerBeforeTheLaddersStep) {
    config_.pressure.killCooldown = std::chrono::hours(1);
    HeldRunner runner;
    auto m = makeEngine();
    m->setReclaimRunner(&runner);
    tickAt(*m, 0);
    const fs::path slice = dir_ / "cgroup/memqos.slice/memqos-reclaimed.slice";
    writeFile(slice / "memory.current", std::to_string(2048 * kMiB) + "\n");
    setPsi(30, 6); // level 2 after 5 s
    tickAt(*m, 1);
    runner.release(); // anything asked before the throttle is over
    runner.asked.clear();
    tickAt(*m, 6);
    ASSERT_EQ(m->pressureLevel(), 2U);
    ASSERT_EQ(runner.asked.size(), 1U) << "one reclaim of the class at a time";
    EXPECT_EQ(runner.asked[0].first, "memqos.slice/memqos-reclaimed.slice");
    // usage − the throttle's target (95 % of 2 GiB, page-floored), not 1 %.
    EXPECT_EQ(runner.asked[0].second, 107376640U);
    const auto* p = systemd_.lastSet("memqos-reclaimed.slice");
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(p->memoryHigh && *p->memoryHigh);
    EXPECT_EQ(**p->memoryHigh, 2048 * kMiB - 2 * kMiB);
    runner.release();
    m->setReclaimRunner(nullptr);
}

TEST_F(PressureTest, DryRunWritesAndKillsNothing) {
    auto m = makeEngine(true);
    const auto setsBefore = systemd_.setCalls.size();
    setPsi(60, 50);
    for (int t : {0, 10, 11, 12}) {
        tickAt(*m, t);
    }
    EXPECT_EQ(m->pressureLevel(), 3U);
    EXPECT_TRUE(systemd_.killCalls.empty());
    EXPECT_TRUE(m->kills().empty());
    EXPECT_EQ(systemd_.setCalls.size(), setsBefore) << "no MemoryHigh under dry run";
    EXPECT_EQ(killFile(kBatch), "");
    EXPECT_EQ(readText(dir_ / "cgroup/memqos.slice/memqos-reclaimed.slice/memory.reclaim"), "");
    EXPECT_EQ(readText(dir_ / "proc/4343/oom_score_adj"), "0\n");
    EXPECT_EQ(readText(dir_ / "cgroup/memqos.slice/memqos-reclaimed.slice/batch.service/"
                              "memory.oom.group"),
              "0\n");
    EXPECT_FALSE(fs::exists(dir_ / "state/kills"));
}

// --- the actuator (actuator.hpp): decisions go out as orders, outcomes come back ---

using daemon::Outcome;
using test::RecordingActuator;

// The decisions of a level-3 tick reach the actuator as orders (admission,
// the guard's cap, OOM priority, the kill), and the Manager folds in what it
// answered: a Done kill is recorded and starts the cooldown. The actuator
// here acts on nothing, so nothing is written.
TEST_F(PressureTest, ADecisionsActionsReachTheActuatorAndTheirOutcomesAreFoldedIn) {
    RecordingActuator live;
    auto m = makeEngine(false, false);
    m->setActuators(&live, nullptr);
    ASSERT_TRUE(assign(*m, "nginx.service", "dedicated", 64 * kMiB, 64 * kMiB).ok());
    ASSERT_TRUE(assign(*m, "batch.service", "reclaimed", 0, kNoLimit).ok());
    setPsi(60, 50);
    tickAt(*m, 0);
    tickAt(*m, 10);
    ASSERT_EQ(m->pressureLevel(), 3U);

    const auto kills = live.of("kill");
    ASSERT_EQ(kills.size(), 1U);
    EXPECT_EQ(kills[0].subject, "batch.service");
    EXPECT_EQ(kills[0].kind, Outcome::Kind::Done);
    ASSERT_EQ(m->kills().size(), 1U) << "a Done kill is recorded";
    EXPECT_EQ(m->kills()[0].id, "batch.service");
    ASSERT_EQ(listener_.killed.size(), 1U);
    EXPECT_EQ(killFile(kBatch), "") << "the Manager wrote cgroup.kill itself";

    const auto admission = live.of("admission");
    ASSERT_EQ(admission.size(), 1U);
    EXPECT_EQ(admission[0].subject, "close");
    EXPECT_EQ(admission[0].bytes, 3U) << "the pressure level";
    EXPECT_FALSE(m->admissionOpen());

    const auto caps = live.of("cap");
    ASSERT_FALSE(caps.empty());
    EXPECT_EQ(caps[0].subject, "reclaimed");
    // The guard's cap, as GuardCapsTheReclaimedSliceThroughSystemd sends it.
    EXPECT_EQ(caps[0].bytes, 6574989312ULL);

    // OOM priority: memory.oom.group only of the killable workload,
    // oom_score_adj of both; the fixture's files untouched.
    const auto groups = live.of("oom-group");
    ASSERT_FALSE(groups.empty());
    EXPECT_TRUE(std::all_of(groups.begin(), groups.end(),
                            [](const auto& c) { return c.subject == "batch.service"; }));
    std::set<std::string> scored;
    for (const auto& c : live.of("oom-score")) {
        scored.insert(c.subject);
    }
    EXPECT_EQ(scored, (std::set<std::string>{"batch.service", "nginx.service"}));
    EXPECT_EQ(readText(dir_ / "proc/4343/oom_score_adj"), "0\n");
    EXPECT_FALSE(std::any_of(systemd_.setCalls.begin(), systemd_.setCalls.end(),
                             [](const auto& c) { return c.urgent; }))
        << "a cap went to systemd around the actuator";

    // The cooldown runs from the Done kill.
    tickAt(*m, 11);
    EXPECT_EQ(live.of("kill").size(), 1U);
    tickAt(*m, 25);
    ASSERT_EQ(live.of("kill").size(), 2U);
    EXPECT_EQ(m->kills().size(), 2U);
}

// A Failed kill outcome: nothing recorded, the cooldown given back (the next
// candidate is ordered killed at the next tick) and the victim set aside.
TEST_F(PressureTest, AFailedKillOutcomeSetsTheVictimAsideAndGivesTheCooldownBack) {
    const std::string other = "memqos.slice/memqos-reclaimed.slice/other.service";
    cgroupFiles(dir_ / "cgroup" / other, 300 * kMiB, "4444\n");
    writeProcess(dir_ / "proc", 4444, "0\n");
    systemd_.addUnit("other.service", "/" + other);
    RecordingActuator live;
    live.killOutcomes["batch.service"] = Outcome::failed("refused by the test");
    auto m = makeEngine();
    m->setActuators(&live, nullptr);
    ASSERT_TRUE(assign(*m, "other.service", "reclaimed", 0, kNoLimit).ok());
    setPsi(60, 50);
    tickAt(*m, 0);
    tickAt(*m, 10);
    ASSERT_EQ(m->pressureLevel(), 3U);
    auto kills = live.of("kill");
    ASSERT_EQ(kills.size(), 1U);
    EXPECT_EQ(kills[0].subject, "batch.service");
    EXPECT_EQ(kills[0].kind, Outcome::Kind::Failed);
    EXPECT_TRUE(m->kills().empty());
    EXPECT_TRUE(listener_.killed.empty());

    tickAt(*m, 11); // within KillCooldown of t=10: only a given-back cooldown allows it
    kills = live.of("kill");
    ASSERT_EQ(kills.size(), 2U);
    EXPECT_EQ(kills[1].subject, "other.service");
    EXPECT_EQ(kills[1].kind, Outcome::Kind::Done);
    ASSERT_EQ(m->kills().size(), 1U);
    EXPECT_EQ(m->kills()[0].id, "other.service");

    // batch, the larger, stays aside: the kill after the cooldown is other's again.
    tickAt(*m, 30);
    kills = live.of("kill");
    ASSERT_EQ(kills.size(), 3U);
    EXPECT_EQ(kills[2].subject, "other.service");
}

// Under DryRun=yes every order goes to the dry run's actuator, which writes
// nothing and answers Would (the Manager keeps the kill cooldown, as for a
// kill); a reload that turns the dry run off swaps in the live actuator.
TEST_F(PressureTest, UnderDryRunEveryOrderIsAWouldAndAReloadSwapsTheActuator) {
    config_.manager.dryRun = true;
    daemon::DryRunActuator dryRun;
    RecordingActuator dry(&dryRun);
    RecordingActuator live;
    auto m = makeEngine();
    ASSERT_TRUE(m->dryRun());
    m->setActuators(&live, &dry);
    const auto setsBefore = systemd_.setCalls.size();
    setPsi(60, 50);
    for (int t : {0, 10, 11}) {
        tickAt(*m, t);
    }
    ASSERT_EQ(m->pressureLevel(), 3U);
    EXPECT_TRUE(live.calls.empty());
    ASSERT_FALSE(dry.calls.empty());
    for (const auto& c : dry.calls) {
        EXPECT_EQ(c.kind, Outcome::Kind::Would) << c.what << " " << c.subject;
    }
    for (const char* what : {"kill", "admission", "cap", "oom-group", "oom-score"}) {
        EXPECT_FALSE(dry.of(what).empty()) << what << " did not reach the dry run";
    }
    EXPECT_EQ(dry.of("kill").size(), 1U) << "the would-be kill keeps the cooldown";
    EXPECT_TRUE(m->kills().empty());
    EXPECT_EQ(systemd_.setCalls.size(), setsBefore);
    EXPECT_EQ(killFile(kBatch), "");
    EXPECT_EQ(readText(dir_ / "proc/4343/oom_score_adj"), "0\n");
    EXPECT_EQ(readText(dir_ / "cgroup/memqos.slice/memqos-reclaimed.slice/batch.service/"
                              "memory.oom.group"),
              "0\n");

    config_.manager.dryRun = false;
    ASSERT_TRUE(m->reload().ok());
    systemd_.flush();
    EXPECT_FALSE(m->dryRun());
    const auto dryCalls = dry.calls.size();
    tickAt(*m, 30); // the would-be kill's cooldown is over
    EXPECT_EQ(dry.calls.size(), dryCalls) << "the dry run's actuator still used";
    ASSERT_EQ(live.of("kill").size(), 1U);
    EXPECT_EQ(live.of("kill")[0].kind, Outcome::Kind::Done);
    EXPECT_EQ(m->kills().size(), 1U);
}

TEST_F(PressureTest, OomPriorityPerClassKeptRight) {
    auto m = makeEngine();
    tickAt(*m, 0);
    EXPECT_EQ(readText(dir_ / "proc/4343/oom_score_adj"), "1000");
    EXPECT_EQ(readText(dir_ / "proc/4242/oom_score_adj"), "-997");
    // (A fixture file is not truncated by the write: "0\n" becomes "1\n".)
    EXPECT_EQ(readText(dir_ / "cgroup/memqos.slice/memqos-reclaimed.slice/batch.service/"
                              "memory.oom.group"),
              "1\n");
    // A protected workload's memory.oom.group is left as it was.
    EXPECT_EQ(readText(dir_ / "cgroup/system.slice/nginx.service/memory.oom.group"), "0\n");
    // Changed behind memqosd's back: repaired at the workload's turn in the
    // repair sweep, one workload a tick: within their number of ticks.
    const auto oomGroup = dir_ / "cgroup/memqos.slice/memqos-reclaimed.slice/batch.service/"
                                 "memory.oom.group";
    writeFile(dir_ / "proc/4343/oom_score_adj", "0\n");
    writeFile(oomGroup, "0\n");
    int t = 1;
    for (; t <= 300; ++t) {
        tickAt(*m, t);
        if (readText(dir_ / "proc/4343/oom_score_adj") == "1000") {
            break;
        }
    }
    EXPECT_LE(t, static_cast<int>(Manager::kSweepTicks)) << "not repaired in a sweep";
    EXPECT_EQ(readText(dir_ / "proc/4343/oom_score_adj"), "1000");
    // (A fixture file is not truncated by the write: "0\n" becomes "1\n".)
    EXPECT_EQ(readText(oomGroup), "1\n");

    // A unit that (re)started has new processes: checked at the next tick,
    // whatever its turn (two rounds: one of them is not nginx's turn).
    for (int round = 0; round < 2; ++round) {
        writeFile(dir_ / "proc/4242/oom_score_adj", "0\n");
        systemd_.events.unitStarted("nginx.service");
        systemd_.flush();
        tickAt(*m, ++t);
        EXPECT_EQ(readText(dir_ / "proc/4242/oom_score_adj"), "-997") << "round " << round;
    }
}

// --- oom_score_adj given back (issue 24 item 3) ---

// The number in a fake /proc/PID/oom_score_adj. A fixture file is not
// truncated by memqosd's single write ("1000" over "-500\n" is "1000\n",
// "0" over "1000" is "0000"), which this reads as the kernel would.
int adjOf(const fs::path& proc, std::int32_t pid) {
    const std::string text = readText(proc / std::to_string(pid) / "oom_score_adj");
    std::string_view t = text;
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) {
        t.remove_suffix(1);
    }
    int v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    EXPECT_TRUE(ec == std::errc{} && end == t.data() + t.size()) << pid << ": '" << text << "'";
    return v;
}

class OomGiveBackTest : public PressureTest {
protected:
    void SetUp() override {
        PressureTest::SetUp();
        // batch.service (class reclaimed: 1000) like a PostgreSQL: the main
        // process -500 from its unit's OOMScoreAdjust=, a backend that set
        // itself 0, and two more processes.
        writeProcess(dir_ / "proc", 4343, "-500\n", 100);
        writeProcess(dir_ / "proc", 4344, "0\n", 200);
        writeProcess(dir_ / "proc", 4345, "0\n", 210);
        writeProcess(dir_ / "proc", 4347, "-100\n", 220);
        setProcs("4343\n4344\n4345\n4347\n");
    }
    void setProcs(const std::string& procs) {
        writeFile(dir_ / "cgroup" / kBatch / "cgroup.procs", procs);
    }
    int adj(std::int32_t pid) const { return adjOf(dir_ / "proc", pid); }
    fs::path recordFile() const { return dir_ / "run/oom-scores/batch_2eservice"; }
    daemon::ApiResult<daemon::Done> unassign(Manager& m, const std::string& id) {
        std::optional<daemon::ApiResult<daemon::Done>> out;
        m.unassign(id, [&](daemon::ApiResult<daemon::Done> r) { out = r; });
        systemd_.flush();
        EXPECT_TRUE(out.has_value()) << "no reply";
        return out.value_or(daemon::apiError("NoReply", ""));
    }
};

TEST_F(OomGiveBackTest, UnassignGivesEachProcessItsOwnValueBack) {
    auto m = makeEngine();
    tickAt(*m, 0);
    for (std::int32_t pid : {4343, 4344, 4345, 4347}) {
        EXPECT_EQ(adj(pid), 1000) << pid;
    }
    EXPECT_TRUE(fs::exists(recordFile())) << "remembered before the change";
    // Since memqos's change: 4345 set its own value; 4346 was forked and
    // inherited memqos's 1000; 4347 exited and its pid went to a process
    // outside the workload (another start time) that has 1000 too.
    writeFile(dir_ / "proc/4345/oom_score_adj", "300\n");
    writeProcess(dir_ / "proc", 4346, "1000\n", 400);
    writeProcess(dir_ / "proc", 4347, "1000\n", 999);
    setProcs("4343\n4344\n4345\n4346\n");
    ASSERT_TRUE(unassign(*m, "batch.service").ok());
    EXPECT_EQ(adj(4343), -500) << "the main process: its unit's value";
    EXPECT_EQ(adj(4344), 0) << "the backend: its own value";
    EXPECT_EQ(adj(4345), 300) << "changed its own value since: left alone";
    EXPECT_EQ(adj(4346), -500) << "forked after the change: the main process's value";
    EXPECT_EQ(adj(4347), 1000) << "a reused pid is another process: left alone";
    EXPECT_FALSE(fs::exists(recordFile())) << "forgotten once given back";
    // nginx (dedicated) is still managed: its value stays.
    EXPECT_EQ(adj(4242), -997);
    // Nothing is written for it any more.
    tickAt(*m, 1);
    EXPECT_EQ(adj(4343), -500);
}

TEST_F(OomGiveBackTest, TheSweepRemembersANewOwnValueAndTellsPidReuse) {
    auto m = makeEngine();
    tickAt(*m, 0);
    // 4344 sets its own value again: repaired at its sweep turn, and that
    // is its value to give back. Pid 4345 is reused within the workload by
    // a new process (later start time) that set its own -200.
    writeFile(dir_ / "proc/4344/oom_score_adj", "-700\n");
    writeProcess(dir_ / "proc", 4345, "-200\n", 500);
    for (int t = 1; t <= static_cast<int>(Manager::kSweepTicks); ++t) {
        tickAt(*m, t);
    }
    EXPECT_EQ(adj(4344), 1000);
    EXPECT_EQ(adj(4345), 1000);
    ASSERT_TRUE(unassign(*m, "batch.service").ok());
    EXPECT_EQ(adj(4344), -700);
    EXPECT_EQ(adj(4345), -200) << "the new process's own value, not the old one's 0";
}

TEST_F(OomGiveBackTest, TheRecordOutlivesARestartOfMemqosd) {
    {
        auto m = makeEngine();
        tickAt(*m, 0);
        EXPECT_EQ(adj(4343), 1000);
    }
    // A bad file beside it: reported and set aside, never fatal.
    writeFile(dir_ / "run/oom-scores/other_2eservice", "Workload=other.service\nBase=x\n");
    auto m = makeEngine(false, false); // batch comes back from the state store
    tickAt(*m, 1);
    EXPECT_EQ(adj(4343), 1000);
    EXPECT_FALSE(fs::exists(dir_ / "run/oom-scores/other_2eservice"));
    ASSERT_TRUE(unassign(*m, "batch.service").ok());
    EXPECT_EQ(adj(4343), -500);
    EXPECT_EQ(adj(4344), 0);
}

TEST_F(OomGiveBackTest, AClassThatKeepsIsNeverWrittenAndAReloadToKeepGivesBack) {
    auto m = makeEngine();
    tickAt(*m, 0);
    EXPECT_EQ(adj(4344), 1000);
    for (auto& c : config_.classes) {
        if (c.name == "reclaimed") {
            c.oomScoreAdj = core::OomScoreAdjust::keep();
        }
    }
    ASSERT_TRUE(m->reload().ok());
    EXPECT_EQ(adj(4343), -500);
    EXPECT_EQ(adj(4344), 0);
    EXPECT_FALSE(fs::exists(recordFile()));
    // The processes' own changes are theirs from now on.
    writeFile(dir_ / "proc/4344/oom_score_adj", "5\n");
    for (int t = 1; t <= static_cast<int>(Manager::kSweepTicks); ++t) {
        tickAt(*m, t);
    }
    EXPECT_EQ(adj(4344), 5);
    EXPECT_EQ(adj(4242), -997) << "dedicated does not keep";
}

// Issue 25: the tick looks over the records for a give-back when a
// workload came or went, else at the sweep turn only. A workload moved in
// place to a class that keeps (AssignWorkload of an assigned one) gets its
// processes' own values back by the next sweep turn, and is not written to
// meanwhile.
TEST_F(OomGiveBackTest, AMoveInPlaceToAClassThatKeepsGivesBackByTheSweepTurn) {
    core::ClassPolicy gold = *core::findClass(config_.classes, "reclaimed");
    gold.name = "gold";
    gold.rank = 7;
    gold.oomScoreAdj = core::OomScoreAdjust::keep();
    config_.classes.push_back(gold);
    auto m = makeEngine();
    int t = 0;
    tickAt(*m, t);
    while (m->ticks() % Manager::kSweepTicks != 0) {
        tickAt(*m, ++t); // up to a sweep turn
    }
    ASSERT_EQ(adj(4343), 1000);
    ASSERT_TRUE(assign(*m, "batch.service", "gold", 0, kNoLimit).ok());
    const auto revision = m->workloadsRevision();
    for (std::size_t i = 0; i + 1 < Manager::kSweepTicks; ++i) {
        tickAt(*m, ++t); // not a sweep turn: the class change is not looked at yet
    }
    ASSERT_EQ(m->workloadsRevision(), revision) << "moved in place, not removed and added";
    EXPECT_EQ(adj(4343), 1000) << "memqos's value until the sweep turn looks";
    EXPECT_TRUE(fs::exists(recordFile()));
    while (m->ticks() % Manager::kSweepTicks != 0) {
        tickAt(*m, ++t);
    }
    EXPECT_EQ(adj(4343), -500) << "given back at the sweep turn";
    EXPECT_EQ(adj(4344), 0);
    EXPECT_FALSE(fs::exists(recordFile()));
}

TEST_F(OomGiveBackTest, AClassRemovedByReloadGivesBack) {
    core::ClassPolicy gold = *core::findClass(config_.classes, "reclaimed");
    gold.name = "gold";
    gold.rank = 7;
    config_.classes.push_back(gold);
    auto m = makeEngine(false, false);
    ASSERT_TRUE(assign(*m, "batch.service", "gold", 0, kNoLimit).ok());
    tickAt(*m, 0);
    EXPECT_EQ(adj(4343), 1000);
    config_.classes.pop_back();
    ASSERT_TRUE(m->reload().ok());
    EXPECT_EQ(adj(4343), -500);
    EXPECT_EQ(adj(4344), 0);
}

TEST_F(OomGiveBackTest, UnderDryRunNothingIsGivenBackUntilItEnds) {
    auto m = makeEngine();
    tickAt(*m, 0);
    config_.manager.dryRun = true;
    ASSERT_TRUE(m->reload().ok());
    ASSERT_TRUE(unassign(*m, "batch.service").ok());
    tickAt(*m, 1);
    EXPECT_EQ(adj(4343), 1000) << "dry run: would";
    EXPECT_TRUE(fs::exists(recordFile()));
    config_.manager.dryRun = false;
    ASSERT_TRUE(m->reload().ok());
    EXPECT_EQ(adj(4343), -500);
    EXPECT_EQ(adj(4344), 0);
}

TEST_F(PressureTest, GuardCapsTheReclaimedSliceThroughSystemd) {
    auto m = makeEngine();
    tickAt(*m, 0);
    // 8 GiB − others − max(1 GiB NodeReserved, in use outside) − 5 %,
    // page-aligned down. No other class slice here: others are nginx's
    // request (dedicated, 64 MiB, in system.slice); in use outside the
    // classes: MemTotal 8 GiB − MemAvailable 6 GiB − the reclaimed slice's
    // 600 MiB = 1448 MiB, more than NodeReserved.
    const auto* set = systemd_.lastSet("memqos-reclaimed.slice");
    ASSERT_NE(set, nullptr);
    EXPECT_EQ(set->memoryHigh, std::optional<Limit>(Limit{6574989312ULL}));
    // Sent urgent: not queued behind a reconcile storm's writes.
    const auto cap = std::find_if(systemd_.setCalls.rbegin(), systemd_.setCalls.rend(),
                                  [](const auto& c) { return c.unit == "memqos-reclaimed.slice"; });
    ASSERT_NE(cap, systemd_.setCalls.rend());
    EXPECT_TRUE(cap->urgent) << "the guard's cap waits behind queued property writes";
    const auto calls = systemd_.setCalls.size();
    tickAt(*m, 1);
    EXPECT_EQ(systemd_.setCalls.size(), calls) << "an unchanged cap is not written again";
}

// Issue 24 item 4: the guard's cap is given back (the slice's own
// MemoryHigh, through systemd; memqos's runtime drop-in removed) when a
// reload turns the guard off, when the class leaves the configuration, and
// at stop. The own value is learned before the first cap.
TEST_F(PressureTest, AReloadWithoutTheGuardGivesTheCapBack) {
    const auto d = dir_ / "run/system.control/memqos-reclaimed.slice.d";
    systemd_.addUnit("memqos-reclaimed.slice", "/memqos.slice/memqos-reclaimed.slice");
    systemd_.units["memqos-reclaimed.slice"].memory->memoryHigh = Limit(7 * kGiB); // the admin's
    auto m = std::make_unique<Manager>(
        config_, [this] { return Result<config::Config>(config_); }, systemd_, store_, instances_,
        *events_, io::CgroupFs(dir_ / "cgroup"), io::ProcFs(dir_ / "proc"), false);
    m->setRuntimeDropInDir(dir_ / "run/system.control");
    m->start([](Status st) { EXPECT_TRUE(st.ok()); });
    systemd_.flush();
    tickAt(*m, 0);
    const auto* cap = systemd_.lastSet("memqos-reclaimed.slice");
    ASSERT_NE(cap, nullptr);
    ASSERT_EQ(cap->memoryHigh, std::optional<Limit>(Limit{6642098176ULL}));
    EXPECT_TRUE(fs::exists(d / "50-MemoryHigh.conf")); // systemd's, for memqos's call
    for (auto& c : config_.classes) {
        c.memoryGuard = false;
    }
    ASSERT_TRUE(m->reload().ok());
    systemd_.flush();
    EXPECT_EQ(systemd_.units["memqos-reclaimed.slice"].memory->memoryHigh,
              std::optional<Limit>(7 * kGiB))
        << "the guard's cap stays on the slice";
    EXPECT_FALSE(fs::exists(d / "50-MemoryHigh.conf"));
    EXPECT_TRUE(m->capped().empty());
    const auto calls = systemd_.setCalls.size();
    tickAt(*m, 1);
    EXPECT_EQ(systemd_.setCalls.size(), calls) << "an unguarded class is capped again";
}

TEST_F(PressureTest, ARemovedClassAndAStopGiveTheCapBack) {
    addClassLike("reclaimed", "gold");
    const fs::path slice = dir_ / "cgroup/memqos.slice/memqos-gold.slice";
    cgroupFiles(slice, 100 * kMiB, "");
    systemd_.addUnit("memqos-gold.slice", "/memqos.slice/memqos-gold.slice");
    systemd_.addUnit("memqos-reclaimed.slice", "/memqos.slice/memqos-reclaimed.slice");
    auto m = makeEngine();
    tickAt(*m, 0);
    ASSERT_TRUE(systemd_.units["memqos-gold.slice"].memory->memoryHigh.value_or(Limit{}))
        << "no cap on the gold class to give back";
    ASSERT_TRUE(systemd_.units["memqos-reclaimed.slice"].memory->memoryHigh.value_or(Limit{}));
    config_.classes.pop_back(); // gold removed
    ASSERT_TRUE(m->reload().ok());
    systemd_.flush();
    EXPECT_EQ(systemd_.units["memqos-gold.slice"].memory->memoryHigh, std::optional<Limit>(Limit{}))
        << "a removed class keeps its last cap";
    EXPECT_TRUE(systemd_.units["memqos-reclaimed.slice"].memory->memoryHigh.value_or(Limit{}));
    // Stop: the cap of every class goes, and memory.oom.group where
    // memqosd set it.
    ASSERT_EQ(readText(dir_ / "cgroup" / kBatch / "memory.oom.group"), "1\n");
    bool done = false;
    m->giveBackOnStop([&] { done = true; });
    EXPECT_FALSE(done) << "done before systemd answered";
    systemd_.flush();
    EXPECT_TRUE(done);
    EXPECT_EQ(systemd_.units["memqos-reclaimed.slice"].memory->memoryHigh,
              std::optional<Limit>(Limit{}))
        << "the stop left the guard's cap";
    EXPECT_EQ(readText(dir_ / "cgroup" / kBatch / "memory.oom.group"), "0\n");
}

// The record of a guarded class's slice (what its cap gives back) stays
// while the class is guarded; its protection sum still goes back when its
// last workload goes.
TEST_F(PressureTest, AGuardedSliceGetsItsProtectionBackAndKeepsItsRecord) {
    for (auto& c : config_.classes) {
        if (c.name == "reclaimed") {
            c.protection = core::Protection::Low;
        }
    }
    systemd_.addUnit("memqos-reclaimed.slice", "/memqos.slice/memqos-reclaimed.slice");
    auto m = makeEngine();
    ASSERT_TRUE(assign(*m, "batch.service", "reclaimed", 100 * kMiB, kNoLimit).ok());
    EXPECT_EQ(systemd_.units["memqos-reclaimed.slice"].memory->memoryLow,
              std::optional<Bytes>(100 * kMiB));
    std::optional<ApiResult<daemon::Done>> out;
    m->unassign("batch.service", [&](ApiResult<daemon::Done> r) { out = r; });
    systemd_.flush();
    ASSERT_TRUE(out && out->ok());
    EXPECT_EQ(systemd_.units["memqos-reclaimed.slice"].memory->memoryLow, std::optional<Bytes>(0))
        << "the slice kept the sum of a workload that is gone";
    const auto calls = systemd_.setCalls.size();
    m->assign("nginx.service", "dedicated", 64 * kMiB, 64 * kMiB, true, [](auto) {});
    systemd_.flush(); // a reconcile: the slice is not given back again
    for (std::size_t i = calls; i < systemd_.setCalls.size(); ++i) {
        EXPECT_NE(systemd_.setCalls[i].unit, "memqos-reclaimed.slice");
    }
}

TEST_F(PressureTest, AdmissionClosedRefusesKillableClassesOnly) {
    auto m = makeEngine();
    setPsi(15, 0);
    tickAt(*m, 0);
    tickAt(*m, 2); // level 1 after Level1Duration
    ASSERT_EQ(m->pressureLevel(), 1U);
    EXPECT_FALSE(m->admissionOpen());
    // Reclaim of the reclaimed class: 1 % of its 600 MiB, page-aligned.
    EXPECT_EQ(readText(dir_ / "cgroup/memqos.slice/memqos-reclaimed.slice/memory.reclaim"),
              "6291456");

    // A unit that does not run: a new placement, refused in a killable class.
    systemd_.addUnit("later.service", "");
    auto refused = assign(*m, "later.service", "shared", 0, kNoLimit);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().name, "org.memqos1.Error.AdmissionClosed");
    EXPECT_NE(refused.error().message.find("pressure level 1"), std::string::npos)
        << refused.error().message;
    EXPECT_TRUE(assign(*m, "later.service", "dedicated", 0, kNoLimit).ok());
    // A unit that runs adds no memory when its class changes: never refused.
    systemd_.addUnit("more.service", "/system.slice/more.service");
    auto running = assign(*m, "more.service", "shared", 0, kNoLimit);
    EXPECT_TRUE(running.ok()) << running.error().message;
    auto v = m->verifyPlacement(kMiB, 0, {});
    EXPECT_EQ(v.kind, core::VerdictKind::Hard) << "no class given: taken to be killable";
    EXPECT_NE(v.message.find("admission is closed"), std::string::npos) << v.message;
    // With the class the VM will run in: only a killable class is refused.
    const auto inClass = [&](std::optional<std::string> cls, std::string instance = "") {
        return m->verifyPlacement(kMiB, 0, {std::nullopt, false, std::move(instance), cls});
    };
    v = inClass("dedicated");
    EXPECT_EQ(v.kind, core::VerdictKind::Fits) << v.message;
    v = inClass("shared");
    EXPECT_EQ(v.kind, core::VerdictKind::Hard);
    EXPECT_NE(v.message.find("class shared is killable"), std::string::npos) << v.message;
    // "": the class memqosd gives it: [VM] DefaultClass (shared), or a rule.
    EXPECT_EQ(inClass("").kind, core::VerdictKind::Hard);
    config::WorkloadRule rule;
    rule.match = "vm:db*";
    rule.className = "dedicated";
    config_.rules.push_back(rule);
    ASSERT_TRUE(m->reload().ok());
    EXPECT_EQ(inClass("", "db1.example.test").kind, core::VerdictKind::Fits);
    EXPECT_EQ(inClass("", "web1.example.test").kind, core::VerdictKind::Hard);

    setPsi(0, 0);
    for (int t = 3; t <= 14; ++t) {
        tickAt(*m, t);
    }
    EXPECT_TRUE(m->admissionOpen());
    EXPECT_TRUE(assign(*m, "later.service", "shared", 0, kNoLimit).ok());
}

} // namespace

namespace {

TEST_F(PressureTest, MetricsFileHasTheLevelClassesAndCounters) {
    config_.manager.metricsFile = (dir_ / "prom/memqos.prom").string();
    auto m = makeEngine();
    setPsi(60, 50);
    tickAt(*m, 0);
    tickAt(*m, 10);
    tickAt(*m, 11); // the kill completed after tick 10 wrote the file
    const std::string text = readText(dir_ / "prom/memqos.prom");
    EXPECT_NE(text.find("\nmemqos_pressure_level 3\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\nmemqos_pressure_condition_level 3\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\nmemqos_kill_near 1\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\nmemqos_admission_open 0\n"), std::string::npos) << text;
    EXPECT_NE(text.find("memqos_class_memory_current_bytes{class=\"reclaimed\"} 629145600\n"),
              std::string::npos)
        << text;
    // Reclaim at tick 11 only (tick 10 killed: no reclaim in a tick that
    // kills); the guard's first cap at tick 0 and the level-3 throttle at 10.
    EXPECT_NE(text.find("memqos_actions_total{action=\"reclaim\"} 1\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("memqos_actions_total{action=\"cap\"} 2\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\nmemqos_kills_total 1\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\nmemqos_psi_triggered_ticks_total 0\n"), std::string::npos) << text;
    m->triggeredTick();
    tickAt(*m, 12);
    EXPECT_NE(readText(dir_ / "prom/memqos.prom").find("\nmemqos_psi_triggered_ticks_total 1\n"),
              std::string::npos);
    // Three ticks; the file written by the third holds the two before it (a
    // tick's duration takes in formatting the text: it is in the next one).
    EXPECT_NE(text.find("# TYPE memqos_tick_duration_seconds summary\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("\nmemqos_tick_duration_seconds{quantile=\"0.99\"} "), std::string::npos)
        << text;
    EXPECT_NE(text.find("\nmemqos_tick_duration_seconds_count 2\n"), std::string::npos) << text;
}

// Issue 24 item 5: a reload that moves or clears MetricsFile removes the
// file memqosd wrote, so node_exporter stops exporting numbers that no
// longer move.
TEST_F(PressureTest, AReloadThatMovesOrClearsTheMetricsFileRemovesTheOldOne) {
    const fs::path first = dir_ / "prom/memqos.prom";
    const fs::path second = dir_ / "prom2/memqos.prom";
    config_.manager.metricsFile = first.string();
    auto m = makeEngine();
    tickAt(*m, 0);
    ASSERT_TRUE(fs::exists(first));
    config_.manager.metricsFile = second.string();
    auto r = m->reload();
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r.value().empty());
    EXPECT_FALSE(fs::exists(first)) << "the old file is still exported";
    tickAt(*m, 1);
    EXPECT_TRUE(fs::exists(second));
    config_.manager.metricsFile.clear();
    ASSERT_TRUE(m->reload().ok());
    EXPECT_FALSE(fs::exists(second)) << "a cleared MetricsFile left its file";
    tickAt(*m, 2);
    EXPECT_FALSE(fs::exists(second));
}

// Issue 24 item 10: a metrics file that cannot be written is warned about
// once, not at every tick, and said again when it can be written again.
TEST_F(PressureTest, AnUnwritableMetricsFileIsWarnedAboutOnceAndItsRecoverySaid) {
    const fs::path blocker = dir_ / "prom"; // a file where the directory should be
    writeFile(blocker, "not a directory\n");
    config_.manager.metricsFile = (blocker / "memqos.prom").string();
    config_.manager.metricsInterval = std::chrono::seconds(1); // a write at every tick
    auto m = makeEngine();
    auto count = [](const std::string& text, const std::string& what) {
        std::size_t n = 0;
        for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
            ++n;
        }
        return n;
    };
    testing::internal::CaptureStderr();
    for (int t = 0; t < 5; ++t) {
        tickAt(*m, t);
    }
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(count(err, "Cannot write the metrics file"), 1U) << err;

    fs::remove(blocker);
    testing::internal::CaptureStderr();
    tickAt(*m, 5);
    tickAt(*m, 6);
    err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(count(err, "Writing the metrics file " + config_.manager.metricsFile + " again"), 1U)
        << err;
    EXPECT_EQ(count(err, "Cannot write"), 0U) << err;
    EXPECT_TRUE(fs::exists(config_.manager.metricsFile));

    // Failing again is warned about again (once).
    fs::remove_all(blocker);
    writeFile(blocker, "not a directory\n");
    testing::internal::CaptureStderr();
    tickAt(*m, 7);
    tickAt(*m, 8);
    err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(count(err, "Cannot write the metrics file"), 1U) << err;
}

// A writer that keeps what it was asked (the daemon's is a thread).
class RecordingMetricsWriter final : public io::MetricsWriter {
public:
    void write(std::filesystem::path file, std::string text, Done done) override {
        writes.push_back({std::move(file), std::move(text), std::move(done)});
    }
    void forget(const std::filesystem::path& file) override { forgotten.push_back(file); }
    struct Write {
        std::filesystem::path file;
        std::string text;
        Done done;
    };
    std::vector<Write> writes;
    std::vector<std::filesystem::path> forgotten;
};

// With a writer set, the tick only hands the text over: the file is written
// off the loop, and its result (a failure) is reported once.
TEST_F(PressureTest, WithAMetricsWriterTheTickHandsTheFileOverAndWritesNothingItself) {
    const fs::path file = dir_ / "prom/memqos.prom";
    config_.manager.metricsFile = file.string();
    auto m = makeEngine();
    RecordingMetricsWriter writer;
    m->setMetricsWriter(&writer);
    tickAt(*m, 0);
    tickAt(*m, 1);
    ASSERT_EQ(writer.writes.size(), 2U);
    EXPECT_EQ(writer.writes[0].file, file);
    EXPECT_NE(writer.writes[1].text.find("\nmemqos_pressure_level "), std::string::npos);
    EXPECT_FALSE(fs::exists(file)) << "the tick wrote the file itself";

    testing::internal::CaptureStderr();
    for (auto& w : writer.writes) {
        w.done(makeError(std::errc::read_only_file_system, file.string() + ": Read-only"));
    }
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("Cannot write the metrics file"), std::string::npos) << err;
    EXPECT_EQ(err.find("Cannot write the metrics file"), err.rfind("Cannot write the metrics file"))
        << err;

    // A write that worked is the file a reload that moves MetricsFile drops:
    // the writer is told, so a write under way cannot bring it back.
    writer.writes.back().done(okStatus());
    config_.manager.metricsFile = (dir_ / "prom2/memqos.prom").string();
    ASSERT_TRUE(m->reload().ok());
    ASSERT_EQ(writer.forgotten.size(), 1U);
    EXPECT_EQ(writer.forgotten[0], file);
}

// Issue 25 item 6: the file is written at a tick where something a script
// waits on changed (level, condition level, kill near, admission, a counter,
// the workload count), else once every MetricsInterval: not ~150 KB of
// text at every tick of a 1000-workload host.
TEST_F(PressureTest, MetricsFileIsWrittenOnAChangeOrOnceAMetricsInterval) {
    config_.manager.metricsFile = (dir_ / "prom/memqos.prom").string();
    config_.manager.metricsInterval = std::chrono::seconds(10);
    auto m = makeEngine();
    RecordingMetricsWriter writer;
    m->setMetricsWriter(&writer);
    const auto writtenAt = [&](int seconds) {
        const std::size_t before = writer.writes.size();
        tickAt(*m, seconds);
        return writer.writes.size() > before;
    };
    EXPECT_TRUE(writtenAt(0)) << "the first tick";
    // Settled: nothing a script waits on changes (the tiers' first cap is
    // taken by then).
    int t = 1;
    for (; t < 4 && writtenAt(t); ++t) {
    }
    ASSERT_LT(t, 4) << "still writing at every tick at t=" << t;
    int last = t - 1; // the last write
    const std::size_t writes = writer.writes.size();
    for (++t; t < last + 10; ++t) {
        tickAt(*m, t);
    }
    EXPECT_EQ(writer.writes.size(), writes) << "written within the interval with nothing changed";
    // MetricsInterval after the last write: written, with the new numbers.
    meminfo8G(3 * 1024 * 1024, 3 * 1024 * 1024 + 1, 0, 0);
    EXPECT_TRUE(writtenAt(last + 10)) << "not written once the interval was over";
    t = last + 10;
    EXPECT_NE(writer.writes.back().text.find("\nmemqos_memory_available_bytes " +
                                             std::to_string((3ULL * 1024 * 1024 + 1) * 1024) +
                                             "\n"),
              std::string::npos)
        << writer.writes.back().text;
    last = t - 1;
    // A PSI-triggered tick: counted, written at the next tick.
    m->triggeredTick();
    EXPECT_TRUE(writtenAt(last + 1));
    EXPECT_NE(writer.writes.back().text.find("\nmemqos_psi_triggered_ticks_total 1\n"),
              std::string::npos);
    EXPECT_FALSE(writtenAt(last + 2));
    // A level's condition building up: written at the tick it starts.
    setPsi(60, 50);
    EXPECT_TRUE(writtenAt(last + 3));
    EXPECT_EQ(writer.writes.back().text.find("\nmemqos_pressure_condition_level 0\n"),
              std::string::npos)
        << writer.writes.back().text;
    // A reload: the next tick writes.
    setPsi(0, 0);
    for (t = last + 4; t < last + 30; ++t) {
        tickAt(*m, t);
    }
    const std::size_t settled = writer.writes.size();
    EXPECT_FALSE(writtenAt(t++));
    ASSERT_TRUE(m->reload().ok());
    EXPECT_TRUE(writtenAt(t++));
    EXPECT_EQ(writer.writes.size(), settled + 1);
}

// Issue 25: a tick reads no more than kReclaimTurnsPerTick workloads for
// proactive reclaim; the others wait for the next tick, in turn, so none
// waits for ever. With Interval=1s every workload is due at every tick:
// looked at from the first workload on each time, the last 9 of these 41
// would never get a turn.
TEST_F(ProactiveTest, NoMoreThanSoManyWorkloadsATickAndEachInTurn) {
    constexpr std::size_t kTurns = daemon::Manager::kReclaimTurnsPerTick;
    const std::vector<std::string> units = reclaimedUnits(kTurns + 8);
    config_.reclaim.interval = std::chrono::seconds(1);
    auto m = makeEngine();
    const auto stepsOf = [&](const std::string& unit) -> std::uint64_t {
        const auto r = m->reclaimOf(unit);
        return r ? r->steps : 0;
    };
    std::uint64_t total = 0;
    for (int t = 0; t < 6; ++t) {
        tickAt(*m, t);
        std::uint64_t now = 0;
        for (const auto& u : units) {
            now += stepsOf(u);
        }
        EXPECT_LE(now - total, kTurns) << "steps decided at tick " << t;
        total = now;
    }
    // 6 ticks × 32 turns over 41 workloads, round: each had 4 or 5 turns,
    // the first its measurement's start.
    for (const auto& u : units) {
        EXPECT_GE(stepsOf(u), 3U) << u;
    }
    EXPECT_EQ(total, 6 * kTurns - units.size());
}

// Issue 25: while proactive reclaim is behind (more workloads due than a
// pass has turns), its pass runs every tick but the snapshot of the
// workloads is kept, as in a light tick: only the pass's own reads are
// made. Here 41 workloads are due at once with the default 5 s interval:
// tick 0 makes the snapshot and takes 32 first looks, tick 1 keeps the
// snapshot and takes the other 9, ticks 2-4 are light (none due), tick 5
// makes the snapshot anew.
TEST_F(ProactiveTest, BehindItsPassRunsEveryTickOnTheKeptSnapshot) {
    constexpr std::size_t kTurns = daemon::Manager::kReclaimTurnsPerTick;
    ASSERT_EQ(config_.reclaim.interval, std::chrono::seconds(5));
    const std::vector<std::string> units = reclaimedUnits(kTurns + 8);
    auto m = makeEngine();
    const auto looked = [&] {
        std::size_t n = 0;
        for (const auto& u : units) {
            const auto r = m->reclaimOf(u);
            if (r && r->lastAt) {
                ++n;
            }
        }
        return n;
    };
    tickAt(*m, 0);
    EXPECT_EQ(looked(), kTurns);
    EXPECT_EQ(m->keptTickCount(), 0U);
    tickAt(*m, 1);
    EXPECT_EQ(looked(), units.size()) << "the 9 left waiting had no turn at tick 1";
    EXPECT_EQ(m->keptTickCount(), 1U) << "tick 1 made the snapshot anew";
    EXPECT_EQ(m->lightTickCount(), 0U);
    for (int t = 2; t <= 4; ++t) {
        tickAt(*m, t);
    }
    EXPECT_EQ(m->lightTickCount(), 3U) << "nothing due at 2-4: light";
    EXPECT_EQ(m->keptTickCount(), 1U);
    tickAt(*m, 5);
    EXPECT_EQ(m->lightTickCount(), 3U) << "the snapshot was not made anew at 5";
    EXPECT_EQ(m->keptTickCount(), 1U);
}

// Issue 25: at level 0 with nothing building up, the workloads' part of a
// tick (their snapshot, proactive reclaim's pass over them) runs once in
// each reclaim interval's worth of ticks (5 at [Manager] Interval=1s and the
// default 5 s); the ticks between are light. A step due at 5 s comes at the
// first whole tick from then on: at most 4 ticks late.
TEST_F(ProactiveTest, QuietTicksBetweenTheWorkloadsPartsAreLight) {
    ASSERT_EQ(config_.reclaim.interval, std::chrono::seconds(5));
    auto m = makeEngine();
    std::vector<int> steps; // the ticks that wrote a step
    std::vector<int> light; // the light ones
    for (int t = 0; t <= 14; ++t) {
        const auto before = m->lightTickCount();
        tickAt(*m, t);
        if (m->lightTickCount() > before) {
            light.push_back(t);
        }
        if (!readText(batch_ / "memory.reclaim").empty()) {
            steps.push_back(t);
            writeFile(batch_ / "memory.reclaim", "");
        }
    }
    // Whole: 0 (the measurement) and every 5 s from there; light in
    // between, 4 in a row (the sweep turn at 9, the 10th tick, only reads
    // the workloads). The steps come when they are due.
    EXPECT_EQ(light, (std::vector<int>{1, 2, 3, 4, 6, 7, 8, 9, 11, 12, 13, 14}));
    ASSERT_EQ(steps.size(), 2U);
    EXPECT_EQ(steps[0], 5) << "the step due at 5";
    EXPECT_EQ(steps[1], 10) << "the step due at 10";
    // A late tick (the loop held up) is never light.
    tickAt(*m, 30);
    EXPECT_EQ(m->lightTickCount(), light.size());
    // The metrics file counts them.
    config_.manager.metricsFile = (dir_ / "prom/memqos.prom").string();
    config_.manager.metricsInterval = std::chrono::seconds(1);
    ASSERT_TRUE(m->reload().ok());
    tickAt(*m, 31);
    EXPECT_NE(readText(dir_ / "prom/memqos.prom")
                  .find("\nmemqos_light_ticks_total " + std::to_string(light.size()) + "\n"),
              std::string::npos);
    // An interval of one tick: no light tick.
    config_.reclaim.interval = std::chrono::seconds(1);
    ASSERT_TRUE(m->reload().ok());
    for (int t = 32; t <= 36; ++t) {
        tickAt(*m, t);
    }
    EXPECT_EQ(m->lightTickCount(), light.size());
}

// A workload changed between two ticks (here moved to a class without
// proactive reclaim) ends the light run: the next tick takes it as it is.
TEST_F(ProactiveTest, AWorkloadChangedBetweenTicksEndsTheLightRun) {
    auto m = lightAtTwo();
    ASSERT_EQ(m->lightTickCount(), 2U);
    ASSERT_EQ(m->reclaimOf("batch.service")->phase, core::ReclaimPhase::Waiting);
    ASSERT_TRUE(assign(*m, "batch.service", "dedicated", 64 * kMiB, 64 * kMiB).ok());
    tickAt(*m, 3);
    EXPECT_EQ(m->lightTickCount(), 2U) << "the tick after the change was light";
    EXPECT_EQ(m->reclaimOf("batch.service")->phase, core::ReclaimPhase::Off);
    tickAt(*m, 4);
    EXPECT_EQ(m->lightTickCount(), 3U) << "nothing changed since: light again";
}

// A level's condition building up ends the light run in the tick that sees
// it (decided again on a fresh snapshot) and keeps every tick whole until
// it is quiet again; at the level, proactive reclaim pauses at once.
TEST_F(ProactiveTest, ALevelBuildingUpEndsTheLightRun) {
    auto m = lightAtTwo();
    ASSERT_EQ(m->lightTickCount(), 2U);
    setPsi(60, 0); // level 1 after 2 s
    tickAt(*m, 3);
    tickAt(*m, 4);
    EXPECT_EQ(m->lightTickCount(), 2U);
    tickAt(*m, 5);
    ASSERT_GE(m->pressureLevel(), 1U);
    EXPECT_EQ(m->reclaimOf("batch.service")->phase, core::ReclaimPhase::Paused);
    EXPECT_EQ(m->lightTickCount(), 2U);
}

// Proactive reclaim's steps are routine: their count and bytes wait for
// [Manager] MetricsInterval; any other action's count writes the file.
TEST_F(ProactiveTest, ItsStepsWaitForTheMetricsInterval) {
    config_.manager.metricsFile = (dir_ / "prom/memqos.prom").string();
    config_.manager.metricsInterval = std::chrono::seconds(60);
    auto m = makeEngine();
    RecordingMetricsWriter writer;
    m->setMetricsWriter(&writer);
    tickAt(*m, 0);
    tickAt(*m, 5);
    tickAt(*m, 10);
    const std::size_t writes = writer.writes.size();
    const Bytes before = m->reclaimOf("batch.service")->reclaimed;
    for (int t = 15; t < 60; t += 5) {
        tickAt(*m, t);
    }
    EXPECT_GT(m->reclaimOf("batch.service")->reclaimed, before) << "no step was made";
    EXPECT_EQ(writer.writes.size(), writes) << "a proactive step wrote the file";
    tickAt(*m, 70);
    ASSERT_EQ(writer.writes.size(), writes + 1) << "not written once the interval was over";
    EXPECT_NE(writer.writes.back().text.find(
                  "memqos_workload_reclaimed_bytes_total{workload=\"batch.service\"} " +
                  std::to_string(m->reclaimOf("batch.service")->reclaimed) + "\n"),
              std::string::npos)
        << writer.writes.back().text;
    // Any other action's count does not wait: an operator's reclaim is in
    // the file at the next tick, well within the interval; the first (a new
    // count) and the second (a count in the file already, going up).
    for (const int n : {1, 2}) {
        std::optional<ApiResult<Bytes>> out;
        m->reclaimNow("batch.service", 64 * kMiB, [&](ApiResult<Bytes> r) { out = r; });
        ASSERT_TRUE(out && out->ok());
        tickAt(*m, 70 + 5 * n);
        ASSERT_EQ(writer.writes.size(), writes + 1 + static_cast<std::size_t>(n))
            << "operator's reclaim " << n << " waited for the interval";
        EXPECT_NE(writer.writes.back().text.find(
                      "memqos_actions_total{action=\"reclaim-request\"} " + std::to_string(n) +
                      "\n"),
                  std::string::npos)
            << writer.writes.back().text;
    }
}

TEST(TickDurations, QuantilesByNearestRankOverTheLastWindow) {
    TickDurations t;
    EXPECT_EQ(t.quantile(0.99), 0.0);
    for (int i = 1; i <= 100; ++i) {
        t.add(i / 1000.0); // 1 ms .. 100 ms
    }
    EXPECT_DOUBLE_EQ(t.quantile(0.5), 0.050);
    EXPECT_DOUBLE_EQ(t.quantile(0.99), 0.099);
    EXPECT_DOUBLE_EQ(t.quantile(1), 0.100);
    EXPECT_DOUBLE_EQ(t.quantile(0), 0.001);
    EXPECT_EQ(t.count(), 100u);
    EXPECT_NEAR(t.sum(), 5.050, 1e-9);
    // Older ticks leave the window: 1024 ticks of 1 s push every ms value out.
    for (std::size_t i = 0; i < TickDurations::kWindow; ++i) {
        t.add(1.0);
    }
    EXPECT_DOUBLE_EQ(t.quantile(0), 1.0);
    EXPECT_EQ(t.count(), 100u + TickDurations::kWindow);
}

} // namespace

// --- VMs: libvirt domains as workloads (issue 10) ---

namespace {

// libvirt as a map of domains; calls are answered at flush().
// Answers queued by a fake, run at flush() (and those they queue) until
// none is left.
class CallQueue {
public:
    void post(std::function<void()> f) { queue_.push_back(std::move(f)); }
    void flush() {
        while (!queue_.empty()) {
            auto f = std::move(queue_.front());
            queue_.erase(queue_.begin());
            f();
        }
    }

private:
    std::vector<std::function<void()>> queue_;
};

class FakeHypervisor : public io::Hypervisor, public CallQueue {
public:
    std::map<std::string, io::DomainInfo> domains;
    std::map<std::string, io::BalloonStats> stats;
    std::vector<std::pair<std::string, Bytes>> balloonCalls;
    std::vector<std::string> destroyCalls;
    std::vector<std::tuple<std::string, std::string, std::string>> placeCalls;
    // Destroys are answered at flush() with destroyAnswer, or, while
    // holdDestroy, kept in heldDestroys for the test to answer.
    Status destroyAnswer = okStatus();
    bool holdDestroy = false;
    std::vector<Done> heldDestroys;
    Events events;

    void start(Events e) override {
        events = std::move(e);
        post([this] { events.connected(); });
    }
    bool isConnected = true;
    std::size_t listCalls = 0;
    bool connected() const override { return isConnected; }
    void listDomains(Then<std::vector<io::DomainInfo>> then) override {
        ++listCalls;
        post([this, then] {
            std::vector<io::DomainInfo> v;
            for (const auto& [n, d] : domains) {
                v.push_back(d);
            }
            then(v);
        });
    }
    void domain(const std::string& name, Then<io::DomainInfo> then) override {
        post([this, name, then] {
            auto it = domains.find(name);
            if (it == domains.end()) {
                then(makeError(std::errc::no_such_file_or_directory, "no domain " + name));
            } else {
                then(it->second);
            }
        });
    }
    void balloonStats(const std::string& name, Then<io::BalloonStats> then) override {
        post([this, name, then] { then(stats[name]); });
    }
    void setBalloon(const std::string& name, Bytes target, Done done) override {
        balloonCalls.emplace_back(name, target);
        post([this, name, target, done] {
            stats[name].actual = target;
            done(okStatus());
        });
    }
    void destroy(const std::string& name, Done done) override {
        destroyCalls.push_back(name);
        if (holdDestroy) {
            heldDestroys.push_back(std::move(done));
            return;
        }
        post([this, name, done] {
            if (destroyAnswer) {
                domains[name].active = false;
            }
            done(destroyAnswer);
        });
    }
    void place(const std::string& name, const std::string& metadata, const std::string& partition,
               Done done) override {
        placeCalls.emplace_back(name, metadata, partition);
        post([this, name, metadata, done] {
            domains[name].metadata = metadata;
            done(okStatus());
        });
    }
};

class FakeGanetiKvm : public io::GanetiKvm, public CallQueue {
public:
    std::map<std::string, std::int32_t> pids;
    std::map<std::string, Bytes> actual;
    std::vector<std::pair<std::string, Bytes>> balloonCalls;

    std::vector<std::string> instances() const override {
        std::vector<std::string> v;
        for (const auto& [n, p] : pids) {
            v.push_back(n);
        }
        return v;
    }
    Result<std::int32_t> pid(const std::string& instance) const override {
        auto it = pids.find(instance);
        if (it == pids.end()) {
            return makeError(std::errc::no_such_file_or_directory, "no pidfile");
        }
        return it->second;
    }
    // When the pidfile was written; unset: kPidfileWritten.
    std::map<std::string, std::int64_t> written;
    static constexpr std::int64_t kPidfileWritten = 1'700'000'000;
    Result<std::int64_t> pidfileWritten(const std::string& instance) const override {
        if (!pids.contains(instance)) {
            return makeError(std::errc::no_such_file_or_directory, "no pidfile");
        }
        auto it = written.find(instance);
        return it == written.end() ? kPidfileWritten : it->second;
    }
    // ssconf_instance_list; unset: there is none (not a Ganeti node).
    std::optional<std::vector<std::string>> cluster;
    Result<std::vector<std::string>> clusterInstances() const override {
        if (!cluster) {
            return makeError(std::errc::no_such_file_or_directory, "no ssconf_instance_list");
        }
        auto v = *cluster;
        std::sort(v.begin(), v.end());
        return v;
    }
    // ssconf_cluster_tags; unset: there is none.
    std::optional<std::vector<std::string>> tags;
    Result<std::vector<std::string>> clusterTags() const override {
        if (!tags) {
            return makeError(std::errc::no_such_file_or_directory, "no ssconf_cluster_tags");
        }
        return *tags;
    }
    void balloonActual(const std::string& instance, Then<Bytes> then) override {
        post([this, instance, then] { then(actual[instance]); });
    }
    void setBalloon(const std::string& instance, Bytes target, Done done) override {
        balloonCalls.emplace_back(instance, target);
        post([this, instance, target, done] {
            actual[instance] = target;
            done(okStatus());
        });
    }
};

// The Manager with a fake libvirt and/or a fake Ganeti KVM hypervisor.
class VmFixture : public PressureTest {
protected:
    std::unique_ptr<Manager> makeWith(io::Hypervisor* hv, io::GanetiKvm* kvm,
                                      bool dryRun = false) {
        auto m = std::make_unique<Manager>(
            config_, [this] { return Result<config::Config>(config_); }, systemd_, store_,
            instances_, *events_, io::CgroupFs(dir_ / "cgroup"), io::ProcFs(dir_ / "proc"),
            dryRun);
        m->setListener(&listener_);
        m->setHypervisor(hv);
        m->setGanetiKvm(kvm);
        m->setOriginalStore(vmOriginals_);
        m->setRuntimeDropInDir(dir_ / "run/system.control");
        m->start([](Status st) { EXPECT_TRUE(st.ok()); });
        flush();
        return m;
    }
    void flush() {
        for (int i = 0; i < 5; ++i) {
            systemd_.flush();
            hv_.flush();
            kvm_.flush();
        }
    }

    FakeHypervisor hv_;
    FakeGanetiKvm kvm_;
    io::OriginalStore* vmOriginals_ = nullptr; // what makeWith gives the Manager
};

class VmTest : public VmFixture {
protected:
    static constexpr const char* kScopePath = "machine.slice/machine-qemu\\x2d1\\x2dweb.scope";
    static constexpr const char* kScope = "machine-qemu\\x2d1\\x2dweb.scope";

    void SetUp() override {
        PressureTest::SetUp();
        // Domain "web": 1 GiB, qemu pid 5001 in its machine scope.
        const fs::path scope = dir_ / "cgroup/machine.slice" / kScope;
        cgroupFiles(scope, 700 * kMiB, "5001\n");
        writeFile(scope / "cgroup.kill", "");
        writeFile(scope / "memory.oom.group", "0\n");
        writeFile(dir_ / "proc/5001/cgroup",
                  std::string("0::/machine.slice/") + kScope + "/libvirt/emulator\n");
        writeProcess(dir_ / "proc", 5001, "0\n");
        using namespace std::string_literals;
        writeFile(dir_ / "proc/5001/cmdline",
                  "/usr/bin/qemu-system-x86_64\0-name\0guest=web,debug-threads=on\0-S\0"s);
        io::DomainInfo d;
        d.name = "web";
        d.active = true;
        d.id = 1;
        d.pid = 5001;
        d.maxMemory = 1 * kGiB;
        d.memory = 1 * kGiB;
        d.persistent = true;
        hv_.domains["web"] = d;
    }

    std::unique_ptr<Manager> makeVmManager(bool dryRun = false) {
        return makeWith(&hv_, nullptr, dryRun);
    }
    void vmTick(Manager& m, int seconds) {
        m.tick(TimePoint(std::chrono::seconds(seconds)));
        flush();
    }
    ApiResult<std::string> assignVm(Manager& m, const std::string& id, const std::string& cls,
                                    Bytes request, Bytes limit, bool persist) {
        std::optional<ApiResult<std::string>> out;
        m.assign(id, cls, request, limit, persist, [&](ApiResult<std::string> r) { out = r; });
        flush();
        EXPECT_TRUE(out.has_value()) << "no reply";
        return out.value_or(daemon::apiError("NoReply", ""));
    }
};

// A reload lists libvirt's domains again (a VM's class may come from the
// new configuration), but not while libvirt is not connected (a host without
// libvirtd: "Cannot list libvirt's domains" at every reload, seen in the
// overhead benchmark with --libvirt absent); the connection lists them.
TEST_F(VmTest, AReloadListsTheDomainsOnlyWhileConnected) {
    auto m = makeVmManager();
    flush();
    const std::size_t calls = hv_.listCalls;
    ASSERT_TRUE(m->reload().ok());
    flush();
    EXPECT_EQ(hv_.listCalls, calls + 1);
    hv_.isConnected = false;
    ASSERT_TRUE(m->reload().ok());
    flush();
    EXPECT_EQ(hv_.listCalls, calls + 1) << "listed while not connected";
}

// Issue 24 item 8, libvirt: the pid libvirt's pidfile gave the hypervisor
// thread names another process by the time it is used.
TEST_F(VmTest, ADomainPidThatIsNoLongerItsQemuGivesNoUnit) {
    config_.vm.defaultClass = "shared";
    using namespace std::string_literals;
    writeFile(dir_ / "proc/5001/cmdline", "/usr/bin/qemu-system-x86_64\0-name\0guest=db\0"s);
    auto m = makeVmManager();
    ASSERT_TRUE(m->workloads().contains("vm:web"));
    EXPECT_TRUE(m->workloads().at("vm:web").unit.empty()) << "db's qemu taken for web's";
    EXPECT_EQ(systemd_.lastSet(kScope), nullptr);
}

// [VM] DefaultClass=shared set explicitly: the behaviour before issue 23
// (every unplaced VM limited, re-prioritised and killable) is one line away.
TEST_F(VmTest, DomainWithoutMetadataIsInAnExplicitDefaultClassWithTiersOnItsScope) {
    config_.vm.defaultClass = "shared";
    auto m = makeVmManager();
    ASSERT_TRUE(m->workloads().contains("vm:web"));
    const auto& w = m->workloads().at("vm:web");
    EXPECT_EQ(w.workload.className, "shared");
    EXPECT_EQ(w.source, daemon::Source::Default);
    EXPECT_EQ(w.unit, kScope);
    EXPECT_EQ(w.cgroupPath, std::string("machine.slice/") + kScope);
    const auto* p = systemd_.lastSet(kScope);
    ASSERT_NE(p, nullptr) << "no tiers on the domain's scope";
    // limit = <memory> 1 GiB + [VM] LimitOverhead 256 MiB; no request.
    EXPECT_EQ(p->memoryMax, std::optional<Limit>(Limit(1 * kGiB + 256 * kMiB)));
    EXPECT_EQ(p->memoryLow, std::optional<Bytes>(0));
    vmTick(*m, 0); // its turn: the shared class's OOM priority (Burstable, no request)
    EXPECT_EQ(readText(dir_ / "proc/5001/oom_score_adj"), "999");
}

// The shipped default (no [VM] DefaultClass): a domain that no metadata,
// rule or AssignWorkload placed is observed only. Listed, its usage read;
// no properties on its scope, its qemu's OOM priority and memory.oom.group
// untouched, no proactive or pressure reclaim of it, no balloon move, and
// never killed at level 3 even as the biggest workload by far.
TEST_F(VmTest, UnplacedDomainIsObservedOnlyAndNeverKilled) {
    ASSERT_EQ(config_.vm.defaultClass, "");
    const fs::path scope = dir_ / "cgroup" / kScopePath;
    cgroupFiles(scope, 4 * kGiB, "5001\n");
    writeFile(scope / "memory.pressure", psiText(0));
    writeFile(scope / "memory.reclaim", "");
    hv_.stats["web"] = io::BalloonStats{1 * kGiB, 900 * kMiB, 700 * kMiB};
    auto m = makeVmManager();
    ASSERT_TRUE(m->workloads().contains("vm:web")) << "not listed";
    const auto& w = m->workloads().at("vm:web");
    EXPECT_EQ(w.source, daemon::Source::Unplaced);
    EXPECT_EQ(daemon::toString(w.source), "unplaced");
    EXPECT_EQ(w.workload.className, "");
    EXPECT_EQ(w.unit, kScope);
    EXPECT_EQ(w.tiers, core::Tiers{});
    ASSERT_TRUE(assign(*m, "batch.service", "reclaimed", 0, kNoLimit).ok());
    for (int t = 0; t < 12; ++t) {
        vmTick(*m, t);
    }
    EXPECT_EQ(m->workloads().at("vm:web").memoryCurrent, 4 * kGiB) << "its usage is not read";
    setPsi(60, 50);
    for (int t = 12; t < 60; ++t) {
        vmTick(*m, t);
    }
    ASSERT_EQ(m->pressureLevel(), 3U);
    EXPECT_EQ(systemd_.lastSet(kScope), nullptr) << "properties sent to an unplaced VM's scope";
    EXPECT_EQ(systemd_.lastSet("machine.slice"), nullptr);
    EXPECT_EQ(readText(dir_ / "proc/5001/oom_score_adj"), "0\n");
    EXPECT_EQ(readText(scope / "memory.oom.group"), "0\n");
    EXPECT_EQ(readText(scope / "memory.reclaim"), "");
    EXPECT_TRUE(hv_.balloonCalls.empty());
    EXPECT_TRUE(hv_.destroyCalls.empty());
    EXPECT_EQ(killFile(kScopePath), "");
    ASSERT_FALSE(m->kills().empty()) << "level 3 killed nothing at all";
    for (const auto& k : m->kills()) {
        EXPECT_EQ(k.id, "batch.service");
    }
    EXPECT_TRUE(m->workloads().contains("vm:web"));
}

// The memory guard leaves an unplaced VM's usage to it: the reclaimed
// class's cap falls by what the VM grows (MemAvailable falls as much, as the
// kernel's would: the guard counts all memory in use outside the class).
TEST_F(VmTest, UnplacedDomainsUsageCountsInTheMemoryGuard) {
    auto m = makeVmManager();
    vmTick(*m, 0);
    const auto* before = systemd_.lastSet("memqos-reclaimed.slice");
    ASSERT_NE(before, nullptr);
    ASSERT_TRUE(before->memoryHigh && *before->memoryHigh);
    const Bytes capBefore = **before->memoryHigh;
    cgroupFiles(dir_ / "cgroup" / kScopePath, 700 * kMiB + 1 * kGiB, "5001\n");
    writeFile(dir_ / "proc/meminfo", "MemTotal:        8388608 kB\n"
                                     "MemFree:         3145728 kB\n"
                                     "MemAvailable:    5242880 kB\n"
                                     "SwapTotal:       2097152 kB\n"
                                     "SwapFree:        2097152 kB\n");
    for (int t = 1; t <= static_cast<int>(Manager::kSweepTicks); ++t) {
        vmTick(*m, t);
    }
    const auto* after = systemd_.lastSet("memqos-reclaimed.slice");
    ASSERT_TRUE(after->memoryHigh && *after->memoryHigh);
    EXPECT_EQ(**after->memoryHigh, capBefore - 1 * kGiB);
}

// Unassigning a VM nothing placed is refused, and writes nothing: giving
// its scope "its own values" would put systemd's defaults over its own.
TEST_F(VmTest, UnassignOfAnUnplacedDomainIsRefusedAndWritesNothing) {
    systemd_.addUnit(kScope, std::string("/machine.slice/") + kScope);
    auto m = makeVmManager();
    ASSERT_EQ(m->workloads().at("vm:web").source, daemon::Source::Unplaced);
    std::optional<ApiResult<daemon::Done>> un;
    m->unassign("vm:web", [&](ApiResult<daemon::Done> x) { un = x; });
    flush();
    ASSERT_TRUE(un.has_value());
    ASSERT_FALSE(un->ok());
    EXPECT_EQ(un->error().name, "org.memqos1.Error.NoSuchWorkload");
    EXPECT_EQ(systemd_.lastSet(kScope), nullptr);
    EXPECT_TRUE(hv_.placeCalls.empty());
    EXPECT_EQ(m->workloads().at("vm:web").source, daemon::Source::Unplaced);
}

// AssignWorkload places an unplaced VM (its class's tiers, as before);
// UnassignWorkload makes it unplaced again and gives its scope back what
// it had.
TEST_F(VmTest, AssignPlacesAnUnplacedDomainAndUnassignReturnsIt) {
    systemd_.addUnit(kScope, std::string("/machine.slice/") + kScope);
    auto m = makeVmManager();
    ASSERT_EQ(m->workloads().at("vm:web").source, daemon::Source::Unplaced);
    ASSERT_TRUE(assignVm(*m, "vm:web", "shared", 0, 2 * kGiB, false).ok());
    EXPECT_EQ(m->workloads().at("vm:web").source, daemon::Source::Api);
    EXPECT_EQ(m->workloads().at("vm:web").workload.className, "shared");
    const auto* p = systemd_.lastSet(kScope);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->memoryMax, std::optional<Limit>(Limit(2 * kGiB)));
    std::optional<ApiResult<daemon::Done>> un;
    m->unassign("vm:web", [&](ApiResult<daemon::Done> x) { un = x; });
    flush();
    ASSERT_TRUE(un && un->ok());
    EXPECT_EQ(m->workloads().at("vm:web").source, daemon::Source::Unplaced);
    EXPECT_EQ(systemd_.units[kScope].memory->memoryMax, std::optional<Limit>(Limit{}))
        << "the scope keeps memqos's limit";
}

// A host that upgrades: the old default (shared) limited the VM's scope
// and memqos remembered the scope's own values. After the upgrade the VM is
// unplaced, and its scope gets them back; so does a reload that empties
// [VM] DefaultClass.
TEST_F(VmTest, AVmTheOldDefaultPlacedGetsItsScopeBackAfterUpgradeOrReload) {
    systemd_.addUnit(kScope, std::string("/machine.slice/") + kScope);
    vmOriginals_ = originals_.get();
    config_.vm.defaultClass = "shared";
    {
        auto old = makeVmManager();
        ASSERT_EQ(systemd_.lastSet(kScope)->memoryMax,
                  std::optional<Limit>(Limit(1 * kGiB + 256 * kMiB)));
    }
    config_.vm.defaultClass = "";
    auto m = makeVmManager(); // the upgraded memqosd
    EXPECT_EQ(m->workloads().at("vm:web").source, daemon::Source::Unplaced);
    EXPECT_EQ(systemd_.units[kScope].memory->memoryMax, std::optional<Limit>(Limit{}))
        << "after the upgrade the scope keeps the old default's limit";

    config_.vm.defaultClass = "shared";
    ASSERT_TRUE(m->reload().ok());
    flush();
    EXPECT_EQ(m->workloads().at("vm:web").source, daemon::Source::Default);
    EXPECT_EQ(systemd_.lastSet(kScope)->memoryMax,
              std::optional<Limit>(Limit(1 * kGiB + 256 * kMiB)));
    config_.vm.defaultClass = "";
    ASSERT_TRUE(m->reload().ok());
    flush();
    EXPECT_EQ(m->workloads().at("vm:web").source, daemon::Source::Unplaced);
    EXPECT_EQ(systemd_.units[kScope].memory->memoryMax, std::optional<Limit>(Limit{}))
        << "a reload that unplaces it leaves the limit on";
}

// Issue 24 item 5: a reload re-derives a running VM's [VM] defaults: a new
// LimitOverhead reaches its scope's MemoryMax at the reload.
TEST_F(VmTest, AReloadAppliesANewLimitOverheadToARunningVm) {
    systemd_.addUnit(kScope, std::string("/machine.slice/") + kScope);
    config_.vm.defaultClass = "shared";
    auto m = makeVmManager();
    ASSERT_EQ(systemd_.lastSet(kScope)->memoryMax,
              std::optional<Limit>(Limit(1 * kGiB + 256 * kMiB)));
    config_.vm.limitOverhead = 512 * kMiB;
    ASSERT_TRUE(m->reload().ok());
    flush();
    EXPECT_EQ(systemd_.lastSet(kScope)->memoryMax,
              std::optional<Limit>(Limit(1 * kGiB + 512 * kMiB)));
}

// Verify counts an unplaced running VM's memory as protected: memqos frees
// none of it.
TEST_F(VmTest, VerifyCountsAnUnplacedVmsMemoryAsProtected) {
    hv_.domains["web"].maxMemory = 8 * kGiB;
    auto m = makeVmManager();
    ASSERT_EQ(m->workloads().at("vm:web").source, daemon::Source::Unplaced);
    bool found = false;
    for (const auto& f : m->verify()) {
        found = found || f.code == "protection-exceeds-available";
    }
    EXPECT_TRUE(found) << "the unplaced VM's memory was not counted";
}

TEST_F(VmTest, MetadataPlacesTheDomainAndTheSliceGetsTheSum) {
    hv_.domains["web"].metadata =
        "<memqos:workload xmlns:memqos=\"https://memqos.org/xmlns/workload/1\" "
        "class=\"dedicated\" request=\"512M\" limit=\"768M\"/>";
    auto m = makeVmManager();
    const auto& w = m->workloads().at("vm:web");
    EXPECT_EQ(w.workload.className, "dedicated");
    EXPECT_EQ(w.source, daemon::Source::Metadata);
    const auto* p = systemd_.lastSet(kScope);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->memoryMin, std::optional<Bytes>(512 * kMiB));
    EXPECT_EQ(p->memoryMax, std::optional<Limit>(Limit(768 * kMiB)));
    const auto* slice = systemd_.lastSet("machine.slice");
    ASSERT_NE(slice, nullptr) << "machine.slice got no protection sum";
    EXPECT_EQ(slice->memoryMin, std::optional<Bytes>(512 * kMiB));
}

TEST_F(VmTest, AssignPersistStoresMetadataAndPartitionAndUnassignTakesThemBack) {
    auto m = makeVmManager();
    auto r = assignVm(*m, "vm:web", "reclaimed", 256 * kMiB, 1 * kGiB, true);
    ASSERT_TRUE(r.ok()) << r.error().name << ": " << r.error().message;
    ASSERT_EQ(hv_.placeCalls.size(), 1U);
    EXPECT_EQ(std::get<2>(hv_.placeCalls[0]), "/memqos/reclaimed");
    EXPECT_NE(std::get<1>(hv_.placeCalls[0]).find("class=\"reclaimed\""), std::string::npos);
    EXPECT_EQ(m->workloads().at("vm:web").source, daemon::Source::Api);
    EXPECT_EQ(systemd_.lastSet(kScope)->memoryMax, std::optional<Limit>(Limit(1 * kGiB)));

    std::optional<ApiResult<daemon::Done>> un;
    m->unassign("vm:web", [&](ApiResult<daemon::Done> x) { un = x; });
    flush();
    ASSERT_TRUE(un && un->ok());
    ASSERT_EQ(hv_.placeCalls.size(), 2U);
    EXPECT_EQ(std::get<1>(hv_.placeCalls[1]), "");
    EXPECT_EQ(std::get<2>(hv_.placeCalls[1]), "/machine");
    // Back to unplaced (no [VM] DefaultClass).
    EXPECT_EQ(m->workloads().at("vm:web").source, daemon::Source::Unplaced);
}

TEST_F(VmTest, RunningDomainIsNeverRefusedForAdmission) {
    auto m = makeVmManager();
    setPsi(15, 0);
    vmTick(*m, 0);
    vmTick(*m, 2); // level 1 after Level1Duration
    ASSERT_EQ(m->pressureLevel(), 1U);
    auto r = assignVm(*m, "vm:web", "reclaimed", 0, 1 * kGiB, false);
    EXPECT_TRUE(r.ok()) << r.error().name << ": " << r.error().message;
    // A defined domain that does not run: a new placement, refused.
    hv_.domains["web"].active = false;
    hv_.domains["web"].id = -1;
    r = assignVm(*m, "vm:web", "shared", 0, 1 * kGiB, false);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().name, "org.memqos1.Error.AdmissionClosed");
}

TEST_F(VmTest, AssignOfAnUnknownDomainIsRefused) {
    auto m = makeVmManager();
    auto r = assignVm(*m, "vm:nope", "shared", 0, 1 * kGiB, false);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().name, "org.memqos1.Error.NoSuchUnit");
    EXPECT_TRUE(hv_.placeCalls.empty());
}

TEST_F(VmTest, LevelThreeDestroysAReclaimedVmThroughLibvirt) {
    auto m = makeVmManager();
    ASSERT_TRUE(assignVm(*m, "vm:web", "reclaimed", 0, 2 * kGiB, false).ok());
    // batch.service (600 MiB) would be the unit victim; the VM uses more.
    ASSERT_TRUE(assign(*m, "batch.service", "reclaimed", 0, kNoLimit).ok());
    setPsi(60, 50);
    vmTick(*m, 0);
    vmTick(*m, 10);
    ASSERT_EQ(m->pressureLevel(), 3U);
    ASSERT_EQ(hv_.destroyCalls.size(), 1U);
    EXPECT_EQ(hv_.destroyCalls[0], "web");
    EXPECT_TRUE(systemd_.killCalls.empty()) << "a VM is not killed with KillUnit";
    ASSERT_EQ(m->kills().size(), 1U);
    EXPECT_EQ(m->kills()[0].id, "vm:web");
    // libvirt answered at once: its scope's cgroup.kill is not needed.
    vmTick(*m, 11);
    EXPECT_EQ(killFile(kScopePath), "");
    EXPECT_EQ(m->kills().size(), 1U);
}

// (c) libvirt does not answer the destroy (libvirtd stalled): the VM's
// scope is killed through cgroup.kill once kDestroyPatience is over, and
// libvirt's late answer records no second kill.
TEST_F(VmTest, AnUnansweredDestroyIsFollowedByCgroupKillAndOneRecord) {
    hv_.holdDestroy = true;
    auto m = makeVmManager();
    ASSERT_TRUE(assignVm(*m, "vm:web", "reclaimed", 0, 2 * kGiB, false).ok());
    ASSERT_TRUE(assign(*m, "batch.service", "reclaimed", 0, kNoLimit).ok());
    setPsi(60, 50);
    vmTick(*m, 0);
    vmTick(*m, 10);
    ASSERT_EQ(m->pressureLevel(), 3U);
    ASSERT_EQ(hv_.destroyCalls.size(), 1U);
    EXPECT_TRUE(m->kills().empty()) << "recorded before anything answered";
    m->tick(TimePoint(std::chrono::milliseconds(10'500))); // patience not over
    flush();
    EXPECT_EQ(killFile(kScopePath), "");
    vmTick(*m, 11);
    EXPECT_EQ(killFile(kScopePath), "1");
    ASSERT_EQ(m->kills().size(), 1U);
    EXPECT_EQ(m->kills()[0].id, "vm:web");
    EXPECT_EQ(listener_.killed.size(), 1U);
    EXPECT_EQ(killFile(kBatch), "") << "the cooldown runs from the VM's kill";
    EXPECT_TRUE(systemd_.killCalls.empty());
    // libvirt wakes up.
    ASSERT_EQ(hv_.heldDestroys.size(), 1U);
    hv_.heldDestroys[0](okStatus());
    flush();
    EXPECT_EQ(m->kills().size(), 1U) << "the late destroy answer recorded a second kill";
    EXPECT_EQ(listener_.killed.size(), 1U);
}

// libvirt refuses the destroy: the next tick kills the scope's cgroup.
TEST_F(VmTest, ARefusedDestroyIsFollowedByCgroupKill) {
    hv_.destroyAnswer = Status(Error{std::errc::io_error, "cannot connect to libvirtd"});
    auto m = makeVmManager();
    ASSERT_TRUE(assignVm(*m, "vm:web", "reclaimed", 0, 2 * kGiB, false).ok());
    setPsi(60, 50);
    vmTick(*m, 0);
    vmTick(*m, 10);
    ASSERT_EQ(hv_.destroyCalls.size(), 1U);
    EXPECT_TRUE(m->kills().empty());
    EXPECT_EQ(killFile(kScopePath), "");
    m->tick(TimePoint(std::chrono::milliseconds(10'100))); // before the patience is over
    flush();
    EXPECT_EQ(killFile(kScopePath), "1");
    ASSERT_EQ(m->kills().size(), 1U);
    EXPECT_EQ(m->kills()[0].id, "vm:web");
    EXPECT_EQ(hv_.destroyCalls.size(), 1U);
}

// (d) One kill in flight per workload: while libvirt has not answered, the
// VM is no victim, even with a cooldown shorter than the wait; the next
// candidate is.
TEST_F(VmTest, NoSecondKillOfAWorkloadWhoseKillIsOnItsWay) {
    config_.pressure.killCooldown = std::chrono::milliseconds(200);
    hv_.holdDestroy = true;
    auto m = makeVmManager();
    ASSERT_TRUE(assignVm(*m, "vm:web", "reclaimed", 0, 2 * kGiB, false).ok());
    ASSERT_TRUE(assign(*m, "batch.service", "reclaimed", 0, kNoLimit).ok());
    setPsi(60, 50);
    vmTick(*m, 0);
    vmTick(*m, 10);
    ASSERT_EQ(hv_.destroyCalls.size(), 1U);
    m->tick(TimePoint(std::chrono::milliseconds(10'300))); // cooldown over, destroy not answered
    flush();
    EXPECT_EQ(hv_.destroyCalls.size(), 1U) << "a second kill of vm:web was decided";
    EXPECT_EQ(killFile(kScopePath), "");
    EXPECT_EQ(killFile(kBatch), "1") << "the next candidate is the victim";
    ASSERT_EQ(m->kills().size(), 1U);
    EXPECT_EQ(m->kills()[0].id, "batch.service");
}

TEST_F(VmTest, LevelTwoShrinksTheBalloonTowardTheRequestAndGivesItBack) {
    auto m = makeVmManager();
    ASSERT_TRUE(assignVm(*m, "vm:web", "reclaimed", 512 * kMiB, 2 * kGiB, false).ok());
    hv_.stats["web"] = io::BalloonStats{1 * kGiB, 900 * kMiB, 700 * kMiB};
    setPsi(30, 10); // level 2 signals (some 25 %, full 5 %), below level 3's
    int t = 0;
    for (; t <= 60 && m->pressureLevel() < 2; t += 1) {
        vmTick(*m, t);
    }
    ASSERT_EQ(m->pressureLevel(), 2U);
    for (int i = 0; i < 40; ++i, ++t) {
        vmTick(*m, t);
    }
    ASSERT_FALSE(hv_.balloonCalls.empty());
    EXPECT_EQ(hv_.balloonCalls.front().second, 768 * kMiB); // a 25 % step of 1 GiB
    for (const auto& [name, target] : hv_.balloonCalls) {
        EXPECT_GE(target, 512 * kMiB) << "below the request";
    }
    EXPECT_EQ(hv_.stats["web"].actual, std::optional<Bytes>(512 * kMiB));
    EXPECT_EQ(m->workloads().at("vm:web").vm->balloonTarget, std::optional<Bytes>(512 * kMiB));
    const auto shrinks = hv_.balloonCalls.size();

    setPsi(0, 0);
    for (int i = 0; i < 120 && m->pressureLevel() > 0; ++i, ++t) {
        vmTick(*m, t);
    }
    ASSERT_EQ(m->pressureLevel(), 0U);
    for (int i = 0; i < 30; ++i, ++t) {
        vmTick(*m, t);
    }
    ASSERT_GT(hv_.balloonCalls.size(), shrinks);
    EXPECT_EQ(hv_.balloonCalls.back().second, 1 * kGiB) << "not given back to where it was";
    EXPECT_FALSE(m->workloads().at("vm:web").vm->balloonTarget) << "memqos still holds it";
}

TEST_F(VmTest, VerifyCountsVmProtection) {
    auto m = makeVmManager();
    // 8 GiB − 1 GiB NodeReserved − 64 MiB of nginx = less than 7.5 GiB.
    ASSERT_TRUE(assign(*m, "nginx.service", "dedicated", 64 * kMiB, 64 * kMiB).ok());
    hv_.domains["web"].maxMemory = 8 * kGiB;
    ASSERT_TRUE(assignVm(*m, "vm:web", "dedicated", 7 * kGiB + 512 * kMiB, 8 * kGiB, false).ok());
    bool found = false;
    for (const auto& f : m->verify()) {
        found = found || f.code == "protection-exceeds-available";
    }
    EXPECT_TRUE(found) << "the VM's memory.min was not counted";
}

TEST_F(VmTest, UndefinedDomainIsForgotten) {
    auto m = makeVmManager();
    ASSERT_TRUE(m->workloads().contains("vm:web"));
    hv_.domains.erase("web");
    hv_.events.lifecycle("web", io::DomainEvent::Undefined);
    flush();
    EXPECT_FALSE(m->workloads().contains("vm:web"));
}

// --- Ganeti KVM instances: adopted into memqos-vm-<instance>.scope ---

class GanetiTest : public VmFixture {
protected:
    void SetUp() override {
        PressureTest::SetUp();
        kvm_.pids["inst1.example.test"] = 6001;
        kvm_.actual["inst1.example.test"] = 1 * kGiB;
        writeFile(dir_ / "proc/6001/cgroup", "0::/system.slice/ganeti.service\n");
        // Booted an hour before the pidfile was written; qemu started 1 s
        // after boot (100 ticks), as Ganeti starts it.
        writeFile(dir_ / "proc/stat",
                  "cpu 1 2 3\nbtime " +
                      std::to_string(FakeGanetiKvm::kPidfileWritten - 3600) + "\n");
        writeProcess(dir_ / "proc", 6001, "0\n");
        writeQemu(6001, "inst1.example.test");
    }
    // Ganeti's command line for an instance's qemu (NUL-separated).
    void writeQemu(std::int32_t pid, const std::string& instance) {
        using namespace std::string_literals;
        writeFile(dir_ / "proc" / std::to_string(pid) / "cmdline",
                  "qemu-system-x86_64\0-enable-kvm\0-name\0"s + instance +
                      "\0-m\0512\0-pidfile\0/run/ganeti/kvm-hypervisor/pid/"s + instance +
                      "\0-daemonize\0"s);
    }
    std::unique_ptr<Manager> makeGanetiManager() { return makeWith(nullptr, &kvm_); }
    // What systemd does with StartTransientUnit(PIDs): the qemu moves.
    void moveIntoScope(const std::string& slice) {
        const std::string cg =
            "memqos.slice/" + slice + "/memqos-vm-inst1.example.test.scope";
        writeFile(dir_ / "proc/6001/cgroup", "0::/" + cg + "\n");
        cgroupFiles(dir_ / "cgroup" / cg, 900 * kMiB, "6001\n");
        writeFile(dir_ / "cgroup" / cg / "memory.oom.group", "0\n");
    }
};

// Issue 27 item 1: a node whose [Overcommit] disagrees with the cluster's
// memqos tags (ssconf_cluster_tags, all a node sees) is reported by verify,
// as a warning (a node or group tag may rightly set its own); agreement,
// no tags and no ssconf file report nothing; malformed tags are named.
TEST_F(GanetiTest, VerifyReportsDriftFromTheClusterTags) {
    config_.overcommit.memoryRatio = 2.0;
    config_.overcommit.nodeReserved = config::SizeSpec{512 * kMiB, std::nullopt};
    const auto policyFinding = [](const std::vector<wording::FindingText>& all)
        -> std::optional<wording::FindingText> {
        for (const auto& f : all) {
            if (f.code.starts_with("policy-")) {
                return f;
            }
        }
        return std::nullopt;
    };
    auto m = makeGanetiManager();
    EXPECT_EQ(policyFinding(m->verify()), std::nullopt) << "no ssconf_cluster_tags: no finding";

    kvm_.tags = std::vector<std::string>{"memqos:memory-ratio:1.5", "memqos:mem-node:768M",
                                         "other:tag"};
    auto f = policyFinding(m->verify());
    ASSERT_TRUE(f);
    EXPECT_EQ(f->severity, "warning");
    EXPECT_EQ(f->code, "policy-drift");
    EXPECT_NE(f->message.find("memqosd's MemoryRatio 2 but the tags say 1.5; memqosd's "
                              "NodeReserved 536870912 bytes but the tags say 768 MiB"),
              std::string::npos)
        << f->message;

    kvm_.tags = std::vector<std::string>{"memqos:memory-ratio:2", "memqos:mem-node:512M"};
    EXPECT_EQ(policyFinding(m->verify()), std::nullopt) << "the tags agree";
    kvm_.tags = std::vector<std::string>{"memqos:memory-ratio:2"};
    EXPECT_EQ(policyFinding(m->verify()), std::nullopt) << "no mem-node tag: NodeReserved free";
    kvm_.tags = std::vector<std::string>{"other:tag"};
    EXPECT_EQ(policyFinding(m->verify()), std::nullopt) << "no memqos policy in the tags";

    kvm_.tags = std::vector<std::string>{"memqos:memory-ratio:2", "memqos:vm-overhead:64M"};
    f = policyFinding(m->verify());
    ASSERT_TRUE(f) << "VMOverhead 0 but the tags say 64M";
    EXPECT_NE(f->message.find("memqosd's VMOverhead 0 bytes but the tags say 64 MiB"),
              std::string::npos)
        << f->message;

    kvm_.tags = std::vector<std::string>{"memqos:memory-ratio:lots"};
    f = policyFinding(m->verify());
    ASSERT_TRUE(f);
    EXPECT_EQ(f->severity, "warning");
    EXPECT_EQ(f->code, "policy-tags-malformed");
    EXPECT_NE(f->message.find("memqos:memory-ratio:lots"), std::string::npos) << f->message;
}

TEST_F(GanetiTest, RecordedInstanceIsAdoptedIntoItsScopeWithTiers) {
    config_.vm.defaultClass = "shared"; // placed by an explicit default class
    auto m = makeGanetiManager();
    // At start: the pidfile is there but there is no record yet (no sizes).
    ASSERT_EQ(systemd_.scopeCalls.size(), 1U);
    moveIntoScope("memqos-shared.slice");
    ASSERT_TRUE(test::recordInstance(*m, "inst1.example.test", 512 * kMiB, 1 * kGiB, true).ok());
    flush();
    const auto& w = m->workloads().at("vm:inst1.example.test");
    EXPECT_EQ(w.unit, "memqos-vm-inst1.example.test.scope");
    EXPECT_EQ(w.workload.className, "shared");
    EXPECT_EQ(w.workload.request, 512 * kMiB);
    const auto& call = systemd_.scopeCalls[0];
    EXPECT_EQ(call.unit, "memqos-vm-inst1.example.test.scope");
    EXPECT_EQ(call.slice, "memqos-shared.slice");
    EXPECT_EQ(call.pids, std::vector<std::uint32_t>{6001});
    // The record's sizes reach the scope: low = minmem, max = maxmem + 256 MiB.
    const auto* p = systemd_.lastSet("memqos-vm-inst1.example.test.scope");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->memoryLow, std::optional<Bytes>(512 * kMiB));
    EXPECT_EQ(p->memoryMax, std::optional<Limit>(Limit(1 * kGiB + 256 * kMiB)));
    bool finding = false;
    for (const auto& f : m->verify()) {
        finding = finding || f.code.starts_with("instance-");
    }
    EXPECT_FALSE(finding) << "record and scope agree";
}

// CI 2026-11-25: a scan adopted the qemu before the post-hook's
// AssignWorkload and RecordInstance arrived; they came while the scope was
// being started and its memory.low stayed 0.
TEST_F(GanetiTest, AssignmentAndRecordArrivingDuringTheAdoptionReachTheScope) {
    config_.vm.defaultClass = "shared"; // the scan adopts it before the hook's assignment
    kvm_.pids.erase("inst1.example.test");
    auto m = makeGanetiManager();
    ASSERT_TRUE(systemd_.scopeCalls.empty());
    kvm_.pids["inst1.example.test"] = 6001; // qemu started; the hook has not run yet
    for (int t = 1; t <= static_cast<int>(Manager::kSweepTicks); ++t) {
        m->tick(TimePoint(std::chrono::seconds(t))); // the scan adopts, unanswered
    }
    ASSERT_EQ(systemd_.scopeCalls.size(), 1U);
    EXPECT_EQ(systemd_.scopeCalls[0].props.memoryLow, std::optional<Bytes>(0));
    std::optional<ApiResult<std::string>> assigned;
    m->assign("vm:inst1.example.test", "shared", 512 * kMiB, 1 * kGiB + 256 * kMiB, true,
              [&](ApiResult<std::string> r) { assigned = r; });
    ASSERT_TRUE(test::recordInstance(*m, "inst1.example.test", 512 * kMiB, 1 * kGiB, true).ok());
    moveIntoScope("memqos-shared.slice");
    flush(); // the scope is started now
    ASSERT_TRUE(assigned && assigned->ok());
    const auto* p = systemd_.lastSet("memqos-vm-inst1.example.test.scope");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->memoryLow, std::optional<Bytes>(512 * kMiB));
    EXPECT_EQ(p->memoryMax, std::optional<Limit>(Limit(1 * kGiB + 256 * kMiB)));
}

// The shipped default: an instance that no tag (AssignWorkload), rule or
// [VM] DefaultClass placed is listed but not adopted: no scope is started,
// its qemu stays where Ganeti put it, with its OOM priority. A tag's
// AssignWorkload later adopts it with its class's tiers.
TEST_F(GanetiTest, UnplacedInstanceIsListedButNotAdoptedUntilAssigned) {
    ASSERT_EQ(config_.vm.defaultClass, "");
    auto m = makeGanetiManager();
    ASSERT_TRUE(test::recordInstance(*m, "inst1.example.test", 512 * kMiB, 1 * kGiB, true).ok());
    for (int t = 1; t <= static_cast<int>(Manager::kSweepTicks); ++t) {
        m->tick(TimePoint(std::chrono::seconds(t)));
        flush();
    }
    ASSERT_TRUE(m->workloads().contains("vm:inst1.example.test")) << "not listed";
    const auto& w = m->workloads().at("vm:inst1.example.test");
    EXPECT_EQ(w.source, daemon::Source::Unplaced);
    EXPECT_EQ(w.workload.className, "");
    EXPECT_EQ(w.unit, "");
    EXPECT_TRUE(w.vm && w.vm->running);
    EXPECT_TRUE(systemd_.scopeCalls.empty()) << "an unplaced instance was moved into a scope";
    EXPECT_EQ(systemd_.lastSet("memqos-vm-inst1.example.test.scope"), nullptr);
    EXPECT_EQ(readText(dir_ / "proc/6001/oom_score_adj"), "0\n");
    std::vector<std::string> codes;
    for (const auto& f : m->verify()) {
        codes.push_back(f.code);
    }
    EXPECT_NE(std::find(codes.begin(), codes.end(), "instance-unplaced"), codes.end());
    EXPECT_EQ(std::find(codes.begin(), codes.end(), "instance-not-adopted"), codes.end())
        << "an unplaced instance is not a failed adoption";
    ASSERT_TRUE(assign(*m, "vm:inst1.example.test", "shared", 512 * kMiB, 2 * kGiB).ok());
    flush();
    ASSERT_EQ(systemd_.scopeCalls.size(), 1U);
    EXPECT_EQ(systemd_.scopeCalls[0].slice, "memqos-shared.slice");
    EXPECT_EQ(m->workloads().at("vm:inst1.example.test").source, daemon::Source::Api);
}

// An instance an older memqos adopted (its default class placed it) is
// found in its scope after the upgrade: observed there, and the scope gets
// systemd's defaults back (memqos created it: it has no values of its own).
TEST_F(GanetiTest, UnplacedInstanceInAnOldScopeGetsTheScopeDefaultsBack) {
    moveIntoScope("memqos-shared.slice");
    systemd_.addUnit("memqos-vm-inst1.example.test.scope",
                     "/memqos.slice/memqos-shared.slice/memqos-vm-inst1.example.test.scope");
    auto m = makeGanetiManager();
    const auto& w = m->workloads().at("vm:inst1.example.test");
    EXPECT_EQ(w.source, daemon::Source::Unplaced);
    EXPECT_EQ(w.unit, "memqos-vm-inst1.example.test.scope");
    EXPECT_TRUE(systemd_.scopeCalls.empty());
    const auto* p = systemd_.lastSet("memqos-vm-inst1.example.test.scope");
    ASSERT_NE(p, nullptr) << "the old limits stay on the scope";
    EXPECT_EQ(p->memoryMax, std::optional<Limit>(Limit{}));
    EXPECT_EQ(p->memoryLow, std::optional<Bytes>(0));
}

// A reload that empties [VM] DefaultClass unplaces an instance it had
// placed: it stays in its scope, which gets systemd's defaults back.
TEST_F(GanetiTest, AReloadThatUnplacesAnInstanceGivesItsScopeTheDefaultsBack) {
    config_.vm.defaultClass = "shared";
    systemd_.addUnit("memqos-vm-inst1.example.test.scope",
                     "/memqos.slice/memqos-shared.slice/memqos-vm-inst1.example.test.scope");
    auto m = makeGanetiManager();
    ASSERT_TRUE(test::recordInstance(*m, "inst1.example.test", 512 * kMiB, 1 * kGiB, true).ok());
    moveIntoScope("memqos-shared.slice");
    flush();
    ASSERT_EQ(systemd_.lastSet("memqos-vm-inst1.example.test.scope")->memoryMax,
              std::optional<Limit>(Limit(1 * kGiB + 256 * kMiB)));
    config_.vm.defaultClass = "";
    ASSERT_TRUE(m->reload().ok());
    flush();
    const auto& w = m->workloads().at("vm:inst1.example.test");
    EXPECT_EQ(w.source, daemon::Source::Unplaced);
    EXPECT_EQ(w.unit, "memqos-vm-inst1.example.test.scope");
    EXPECT_EQ(systemd_.lastSet("memqos-vm-inst1.example.test.scope")->memoryMax,
              std::optional<Limit>(Limit{}))
        << "the reload left the old default's limit on the scope";
}

TEST_F(GanetiTest, AssignedClassDecidesTheSliceAndTheInstanceIsNeverKilled) {
    auto m = makeGanetiManager();
    systemd_.scopeCalls.clear();
    ASSERT_TRUE(test::recordInstance(*m, "inst1.example.test", 512 * kMiB, 1 * kGiB, true).ok());
    flush();
    auto r = assign(*m, "vm:inst1.example.test", "reclaimed", 256 * kMiB, 2 * kGiB);
    flush();
    ASSERT_TRUE(r.ok()) << r.error().name << ": " << r.error().message;
    ASSERT_FALSE(systemd_.scopeCalls.empty());
    EXPECT_EQ(systemd_.scopeCalls.back().slice, "memqos-reclaimed.slice");
    moveIntoScope("memqos-reclaimed.slice");
    m->tick(TimePoint(std::chrono::seconds(0)));
    flush();
    // Level 3: batch.service is killed, never the instance, whose balloon
    // shrinks instead (HMP, down to its request at most).
    ASSERT_TRUE(assign(*m, "batch.service", "reclaimed", 0, kNoLimit).ok());
    setPsi(60, 50);
    for (int t = 1; t <= 40; ++t) {
        m->tick(TimePoint(std::chrono::seconds(t)));
        flush();
    }
    ASSERT_EQ(m->pressureLevel(), 3U);
    ASSERT_FALSE(m->kills().empty());
    for (const auto& k : m->kills()) {
        EXPECT_EQ(k.id, "batch.service");
    }
    ASSERT_FALSE(kvm_.balloonCalls.empty());
    for (const auto& [inst, target] : kvm_.balloonCalls) {
        EXPECT_GE(target, 256 * kMiB);
    }
}

TEST_F(GanetiTest, RunningInstanceIsNeverRefusedForAdmission) {
    auto m = makeGanetiManager();
    setPsi(15, 0);
    tickAt(*m, 0);
    tickAt(*m, 2); // level 1 after Level1Duration
    ASSERT_EQ(m->pressureLevel(), 1U);
    ASSERT_FALSE(m->admissionOpen());
    // The post-hook's AssignWorkload for the tag memqos:class:reclaimed of
    // the instance it started (its qemu, pid 6001, runs): it adds no memory.
    ASSERT_TRUE(test::recordInstance(*m, "inst1.example.test", 512 * kMiB, 1 * kGiB, true).ok());
    auto r = assign(*m, "vm:inst1.example.test", "reclaimed", 512 * kMiB, 1280 * kMiB);
    ASSERT_TRUE(r.ok()) << r.error().message;
    flush();
    EXPECT_EQ(m->workloads().at("vm:inst1.example.test").workload.className, "reclaimed");
    // An instance whose qemu does not run: a new placement, refused.
    ASSERT_TRUE(test::recordInstance(*m, "inst2.example.test", 512 * kMiB, 1 * kGiB, false).ok());
    auto refused = assign(*m, "vm:inst2.example.test", "reclaimed", 0, kNoLimit);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().name, "org.memqos1.Error.AdmissionClosed");
    // A pidfile whose process is gone is no running instance either.
    kvm_.pids["inst2.example.test"] = 6002;
    refused = assign(*m, "vm:inst2.example.test", "reclaimed", 0, kNoLimit);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().name, "org.memqos1.Error.AdmissionClosed");
}

TEST_F(GanetiTest, ForgottenInstanceTakesItsAssignmentAlong) {
    auto m = makeGanetiManager();
    ASSERT_TRUE(test::recordInstance(*m, "inst1.example.test", 512 * kMiB, 1 * kGiB, true).ok());
    flush();
    ASSERT_TRUE(assign(*m, "vm:inst1.example.test", "reclaimed", 256 * kMiB, 2 * kGiB).ok());
    flush();
    kvm_.pids.clear(); // gnt-instance remove: qemu and pidfile gone
    ASSERT_TRUE(test::forgetInstance(*m, "inst1.example.test").ok());
    flush();
    EXPECT_FALSE(m->workloads().contains("vm:inst1.example.test"));
    auto fresh = makeGanetiManager(); // nothing stored for it either
    EXPECT_FALSE(fresh->workloads().contains("vm:inst1.example.test"));
}

// CI 2026-11-28: Ganeti's RPC to the node timed out during `gnt-instance
// remove`, its post-hook never ran, and memqosd kept the removed instance's
// record and assignment for good. Ganeti's own instance list settles it.
TEST_F(GanetiTest, ARecordGanetiNoLongerListsIsForgottenOnTheSecondScan) {
    kvm_.cluster = std::vector<std::string>{"inst1.example.test", "other.example.test"};
    auto m = makeGanetiManager();
    ASSERT_TRUE(test::recordInstance(*m, "inst1.example.test", 512 * kMiB, 1 * kGiB, true).ok());
    flush();
    ASSERT_TRUE(assign(*m, "vm:inst1.example.test", "reclaimed", 256 * kMiB, 2 * kGiB).ok());
    flush();
    ASSERT_TRUE(test::recordInstance(*m, "other.example.test", 256 * kMiB, 512 * kMiB, false).ok());
    std::uint64_t t = 0;
    const auto scan = [&] {
        for (std::size_t i = 0; i < Manager::kSweepTicks; ++i) {
            m->tick(TimePoint(std::chrono::seconds(++t)));
            flush();
        }
    };
    const auto recorded = [&](const std::string& name) { return m->instances().contains(name); };
    // Removed, but the qemu still runs here: kept.
    kvm_.cluster = std::vector<std::string>{"other.example.test"};
    scan();
    scan();
    EXPECT_TRUE(recorded("inst1.example.test")) << "its qemu still runs here";
    // Gone from the node too; no list (a node that left its cluster): kept.
    kvm_.pids.clear();
    kvm_.cluster.reset();
    scan();
    scan();
    EXPECT_TRUE(recorded("inst1.example.test")) << "no list says nothing";
    // Listed again (the list was written before the instance-add): kept.
    kvm_.cluster = std::vector<std::string>{"other.example.test"};
    scan();
    EXPECT_TRUE(recorded("inst1.example.test")) << "one scan is not enough";
    kvm_.cluster = std::vector<std::string>{"inst1.example.test", "other.example.test"};
    scan();
    kvm_.cluster = std::vector<std::string>{"other.example.test"};
    scan();
    EXPECT_TRUE(recorded("inst1.example.test")) << "the two scans were not in a row";
    scan();
    EXPECT_FALSE(recorded("inst1.example.test"));
    EXPECT_TRUE(recorded("other.example.test")) << "a stopped, listed instance stays";
    EXPECT_FALSE(m->workloads().contains("vm:inst1.example.test"));
    auto fresh = makeGanetiManager(); // its record and assignment are gone from the store too
    EXPECT_FALSE(fresh->workloads().contains("vm:inst1.example.test"));
    EXPECT_FALSE(fresh->instances().contains("inst1.example.test"));
}

TEST_F(GanetiTest, ItsScopeInAClassSliceIsNotASecondWorkload) {
    moveIntoScope("memqos-shared.slice"); // adopted by a memqosd before this one
    systemd_.addUnit("memqos-vm-inst1.example.test.scope",
                     "/memqos.slice/memqos-shared.slice/memqos-vm-inst1.example.test.scope");
    auto m = makeGanetiManager();
    EXPECT_TRUE(m->workloads().contains("vm:inst1.example.test"));
    EXPECT_FALSE(m->workloads().contains("memqos-vm-inst1.example.test.scope"));
    EXPECT_TRUE(systemd_.scopeCalls.empty()) << "already in its scope";
    systemd_.events.unitStarted("memqos-vm-inst1.example.test.scope");
    flush();
    EXPECT_FALSE(m->workloads().contains("memqos-vm-inst1.example.test.scope"));
}

TEST_F(GanetiTest, AnInstanceWhosePidfileIsGoneIsDroppedAtTheNextScan) {
    auto m = makeGanetiManager(); // not recorded: found by its pidfile
    ASSERT_TRUE(m->workloads().contains("vm:inst1.example.test"));
    kvm_.pids.clear(); // removed while no hook told memqosd
    for (int t = 0; t < static_cast<int>(Manager::kSweepTicks); ++t) {
        m->tick(TimePoint(std::chrono::seconds(t)));
        flush();
    }
    EXPECT_FALSE(m->workloads().contains("vm:inst1.example.test"));
}

// Issue 24 item 8: a pidfile left behind by a qemu that is gone, its pid
// now another process's. memqosd moved whatever the pid named into a capped
// scope; now the process must be the instance's qemu.
TEST_F(GanetiTest, AStalePidfileNamingAnotherProcessMovesNothing) {
    config_.vm.defaultClass = "shared"; // placed, so memqos would adopt it
    using namespace std::string_literals;
    writeFile(dir_ / "proc/6001/cmdline", "/usr/sbin/sshd\0-D\0"s);
    auto m = makeGanetiManager();
    ASSERT_TRUE(test::recordInstance(*m, "inst1.example.test", 512 * kMiB, 1 * kGiB, true).ok());
    for (int t = 1; t <= static_cast<int>(Manager::kSweepTicks); ++t) {
        m->tick(TimePoint(std::chrono::seconds(t)));
        flush();
    }
    EXPECT_TRUE(systemd_.scopeCalls.empty()) << "sshd was moved into the instance's scope";
    EXPECT_FALSE(m->workloads().contains("vm:inst1.example.test"));
    // Another instance's qemu is no more this one's.
    writeQemu(6001, "inst2.example.test");
    for (int t = 11; t <= 10 + static_cast<int>(Manager::kSweepTicks); ++t) {
        m->tick(TimePoint(std::chrono::seconds(t)));
        flush();
    }
    EXPECT_TRUE(systemd_.scopeCalls.empty()) << "inst2's qemu moved as inst1's";
    // Its own qemu is adopted at the next scan.
    writeQemu(6001, "inst1.example.test");
    for (int t = 21; t <= 20 + static_cast<int>(Manager::kSweepTicks); ++t) {
        m->tick(TimePoint(std::chrono::seconds(t)));
        flush();
    }
    ASSERT_EQ(systemd_.scopeCalls.size(), 1U);
    EXPECT_EQ(systemd_.scopeCalls[0].pids, std::vector<std::uint32_t>{6001});
}

TEST_F(GanetiTest, AQemuThatStartedLongAfterItsPidfileWasWrittenReusedThePid) {
    config_.vm.defaultClass = "shared";
    // The pidfile was written two hours before this qemu started (an hour
    // before boot): written by a qemu of an earlier boot, its pid reused.
    kvm_.written["inst1.example.test"] = FakeGanetiKvm::kPidfileWritten - 7200;
    auto m = makeGanetiManager();
    EXPECT_TRUE(systemd_.scopeCalls.empty());
    ASSERT_TRUE(test::recordInstance(*m, "inst1.example.test", 512 * kMiB, 1 * kGiB, true).ok());
    flush();
    EXPECT_TRUE(systemd_.scopeCalls.empty());
    // A qemu started within the slack after its pidfile (a clock step) is
    // its writer.
    kvm_.written["inst1.example.test"] =
        FakeGanetiKvm::kPidfileWritten - 3600 + 1 - Manager::kPidfileSlack + 5;
    ASSERT_TRUE(test::recordInstance(*m, "inst1.example.test", 512 * kMiB, 1 * kGiB, true).ok());
    flush();
    EXPECT_EQ(systemd_.scopeCalls.size(), 1U);
}

TEST_F(GanetiTest, VerifySaysWhenRecordAndScopesDisagree) {
    config_.vm.defaultClass = "shared"; // placed, so memqos tries to adopt it
    systemd_.failScope = makeError(std::errc::io_error, "refused");
    auto m = makeGanetiManager();
    ASSERT_TRUE(test::recordInstance(*m, "inst1.example.test", 512 * kMiB, 1 * kGiB, true).ok());
    flush();
    bool notAdopted = false;
    for (const auto& f : m->verify()) {
        notAdopted = notAdopted || f.code == "instance-not-adopted";
    }
    EXPECT_TRUE(notAdopted);
}

TEST_F(GanetiTest, StoppedInstanceLeavesNoWorkloadBehind) {
    auto m = makeGanetiManager();
    ASSERT_TRUE(test::recordInstance(*m, "inst1.example.test", 512 * kMiB, 1 * kGiB, true).ok());
    flush();
    moveIntoScope("memqos-shared.slice");
    ASSERT_TRUE(m->workloads().contains("vm:inst1.example.test"));
    kvm_.pids.clear();
    ASSERT_TRUE(test::recordInstance(*m, "inst1.example.test", 512 * kMiB, 1 * kGiB, false).ok());
    flush();
    EXPECT_FALSE(m->workloads().contains("vm:inst1.example.test"));
}

// The bus service compares its objects with the workloads only when their
// revision moved: every way a workload is added or removed must move it,
// and nothing else may.
TEST(WorkloadMapTest, ItsRevisionMovesWhenAWorkloadIsAddedOrRemovedOnly) {
    daemon::WorkloadMap map;
    EXPECT_EQ(map.revision(), 0U);
    map["a.service"].unit = "a.service";
    map["b.service"];
    EXPECT_EQ(map.revision(), 2U);
    map["a.service"].persistent = true; // there already
    map.find("b.service")->second.unit = "b.service";
    EXPECT_EQ(map.revision(), 2U);
    EXPECT_EQ(map.erase("nothing.service"), 0U);
    EXPECT_EQ(map.revision(), 2U);
    EXPECT_EQ(map.erase("a.service"), 1U);
    EXPECT_EQ(map.revision(), 3U);
    map.erase(map.begin());
    EXPECT_EQ(map.revision(), 4U);
    EXPECT_TRUE(map.empty());
}

} // namespace



// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/cgroupfs.hpp"
#include "memqos/io/procfs.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "fixture_tree.hpp"

namespace memqos::io {
namespace {

using test::copyFixture;
using test::writeFile;

std::vector<std::string> classNames() {
    return {"system", "dedicated", "shared", "reclaimed"};
}

std::vector<core::Workload> workloads() {
    return {
        core::Workload{.id = "nginx.service",
                       .kind = core::WorkloadKind::Service,
                       .className = "shared",
                       .request = kGiB,
                       .limit = 2 * kGiB,
                       .priority = 0},
        core::Workload{.id = "batch.service",
                       .kind = core::WorkloadKind::Service,
                       .className = "reclaimed",
                       .request = 0,
                       .limit = std::nullopt,
                       .priority = 0},
        core::Workload{.id = "stopped.service",
                       .kind = core::WorkloadKind::Service,
                       .className = "shared",
                       .request = 0,
                       .limit = std::nullopt,
                       .priority = 0},
        core::Workload{.id = "vm:db01",
                       .kind = core::WorkloadKind::Vm,
                       .className = "dedicated",
                       .request = 4 * kGiB,
                       .limit = 4 * kGiB,
                       .priority = 0},
    };
}

TEST(BuildSnapshot, DefaultMappingFromFixtureTrees) {
    const auto proc = copyFixture("proc/normal");
    const auto cgroups = copyFixture("cgroupfs/normal");
    auto r = buildSnapshot(ProcFs(proc.path()), CgroupFs(cgroups.path()), TimePoint{123456789},
                           classNames(), workloads());
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(r->now, TimePoint{123456789});
    EXPECT_EQ(r->system.mem.memTotal, 65856896ULL * kKiB);
    ASSERT_EQ(r->classes.size(), 4U);
    for (std::size_t i = 0; i < classNames().size(); ++i) {
        EXPECT_EQ(r->classes[i].name, classNames()[i]);
        ASSERT_TRUE(r->classes[i].cgroup.has_value()) << classNames()[i];
        EXPECT_EQ(r->classes[i].cgroup->path, classSlicePath(classNames()[i]));
    }
    EXPECT_EQ(r->classes[1].cgroup->memoryMin, 805306368U);
    EXPECT_EQ(r->classes[3].cgroup->memoryHigh, Limit{536870912U});

    ASSERT_EQ(r->workloads.size(), 4U);
    EXPECT_EQ(r->workloads[0].workload.id, "nginx.service");
    ASSERT_TRUE(r->workloads[0].cgroup.has_value());
    EXPECT_EQ(r->workloads[0].cgroup->memoryCurrent, 1610612736U);
    ASSERT_TRUE(r->workloads[1].cgroup.has_value());
    EXPECT_EQ(r->workloads[1].cgroup->swapCurrent, 67108864U);
    EXPECT_DOUBLE_EQ(r->workloads[1].cgroup->pressure->some.avg10, 9.5);
    EXPECT_FALSE(r->workloads[2].cgroup.has_value()); // not started
    EXPECT_FALSE(r->workloads[3].cgroup.has_value()); // VM: no path by default
}

TEST(BuildSnapshot, CallerMapsVmScopes) {
    const auto proc = copyFixture("proc/normal");
    const auto cgroups = copyFixture("cgroupfs/normal");
    auto mapping = [](const core::Workload& w) -> std::optional<std::string> {
        if (w.id == "vm:db01") {
            return unitCgroupPath(w.className, "machine-qemu\\x2d1\\x2ddb01.scope");
        }
        return defaultCgroupPath(w);
    };
    auto r = buildSnapshot(ProcFs(proc.path()), CgroupFs(cgroups.path()), TimePoint{1},
                           classNames(), workloads(), mapping);
    ASSERT_TRUE(r) << r.error().what;
    ASSERT_TRUE(r->workloads[3].cgroup.has_value());
    EXPECT_EQ(r->workloads[3].cgroup->memoryCurrent, 4294967296U);
    EXPECT_EQ(r->workloads[3].cgroup->procs, (std::vector<std::int32_t>{4711}));
}

TEST(BuildSnapshot, HostWithoutSwapAccountingOrPsi) {
    const auto proc = copyFixture("proc/no_psi");
    const auto cgroups = copyFixture("cgroupfs/no_swap_accounting");
    auto r = buildSnapshot(ProcFs(proc.path()), CgroupFs(cgroups.path()), TimePoint{0},
                           classNames(), workloads());
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_FALSE(r->system.pressure.has_value());
    for (const auto& w : r->workloads) {
        if (w.cgroup) {
            EXPECT_EQ(w.cgroup->swapCurrent, 0U) << w.workload.id;
            EXPECT_EQ(w.cgroup->swapMax, std::nullopt) << w.workload.id;
        }
    }
}

TEST(BuildSnapshot, MissingClassSliceIsNullopt) {
    const auto proc = copyFixture("proc/normal");
    const auto cgroups = copyFixture("cgroupfs/normal");
    std::filesystem::remove_all(cgroups.path() / classSlicePath("reclaimed"));
    auto r = buildSnapshot(ProcFs(proc.path()), CgroupFs(cgroups.path()), TimePoint{0},
                           classNames(), workloads());
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_FALSE(r->classes[3].cgroup.has_value());
    EXPECT_FALSE(r->workloads[1].cgroup.has_value());
}

TEST(BuildSnapshot, MalformedCgroupFileFailsTheSnapshot) {
    const auto proc = copyFixture("proc/normal");
    const auto cgroups = copyFixture("cgroupfs/normal");
    const auto bad = cgroups.path() / unitCgroupPath("shared", "nginx.service") / "memory.max";
    writeFile(bad, "maxx\n");
    auto r = buildSnapshot(ProcFs(proc.path()), CgroupFs(cgroups.path()), TimePoint{0},
                           classNames(), workloads());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().what, bad.string() + ": not a number or 'max': 'maxx'");
}

TEST(BuildSnapshot, MalformedProcFileFailsTheSnapshot) {
    const auto proc = copyFixture("proc/normal");
    const auto cgroups = copyFixture("cgroupfs/normal");
    writeFile(proc.path() / "meminfo", "MemTotal: 1 kB\n");
    auto r = buildSnapshot(ProcFs(proc.path()), CgroupFs(cgroups.path()), TimePoint{0},
                           classNames(), workloads());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().what, (proc.path() / "meminfo").string() + ": field MemFree missing");
}

TEST(BuildSnapshot, BadWorkloadIdIsRejected) {
    const auto proc = copyFixture("proc/normal");
    const auto cgroups = copyFixture("cgroupfs/normal");
    auto ws = workloads();
    ws[0].id = "../../../etc";
    auto r = buildSnapshot(ProcFs(proc.path()), CgroupFs(cgroups.path()), TimePoint{0},
                           classNames(), ws);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, std::errc::invalid_argument);
}

} // namespace
} // namespace memqos::io

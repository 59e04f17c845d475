// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/file.hpp"
#include "memqos/io/procfs.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>
#include <string>

#include "fixture_tree.hpp"

namespace memqos::io {
namespace {

using test::copyFixture;
using test::writeFile;

TEST(ProcFs, NormalHost) {
    const auto tree = copyFixture("proc/normal");
    auto r = ProcFs(tree.path()).system();
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(r->mem.memTotal, 65856896ULL * kKiB);
    EXPECT_EQ(r->mem.memAvailable, 23519640ULL * kKiB);
    EXPECT_EQ(r->mem.swapTotal, 12582908ULL * kKiB);
    EXPECT_EQ(r->mem.swapFree, 10485756ULL * kKiB);
    ASSERT_TRUE(r->pressure.has_value());
    EXPECT_DOUBLE_EQ(r->pressure->some.avg10, 1.53);
    ASSERT_TRUE(r->pressure->full.has_value());
    EXPECT_EQ(r->pressure->full->totalUsec, 27635011U);
    EXPECT_EQ(r->vmstat.pgscanKswapd, 9441208U);
    EXPECT_EQ(r->vmstat.oomKill, 3U);
    ASSERT_EQ(r->zones.size(), 5U);
    EXPECT_EQ(r->zones[2].name, "Normal");
    EXPECT_EQ(r->zones[2].lowPages, 9115U);
    ASSERT_EQ(r->swaps.size(), 2U);
    EXPECT_EQ(r->swaps[1].filename, "/var/lib/swap files/swap0");
    EXPECT_EQ(r->swaps[1].used, 1048576ULL * kKiB);
    EXPECT_EQ(r->pageSize, kDefaultPageSize);
}

// Issue 25: /proc's files are read through kept fds; a fixture's file
// replaced by rename (a new inode) is read afresh, not through the old fd.
TEST(ProcFs, KeptFdsFollowTheFile) {
    const auto tree = copyFixture("proc/normal");
    const ProcFs proc(tree.path());
    auto a = proc.system();
    ASSERT_TRUE(a) << a.error().what;
    EXPECT_EQ(proc.openFiles(), 5U);
    writeFile(tree.path() / "meminfo.new", "MemTotal: 1000 kB\nMemFree: 10 kB\n"
                                           "MemAvailable: 20 kB\nSwapTotal: 0 kB\n"
                                           "SwapFree: 0 kB\n");
    std::filesystem::rename(tree.path() / "meminfo.new", tree.path() / "meminfo");
    auto b = proc.system();
    ASSERT_TRUE(b) << b.error().what;
    EXPECT_EQ(b->mem.memAvailable, 20 * kKiB);
    EXPECT_EQ(proc.openFiles(), 5U);
}

// Issue 25: the daemon's tick reads meminfo and PSI, zoneinfo only with
// Watermarks=yes, never vmstat or swaps.
TEST(ProcFs, ReadsOnlyWhatIsAskedFor) {
    const auto tree = copyFixture("proc/normal");
    for (const char* f : {"vmstat", "swaps", "zoneinfo"}) {
        std::filesystem::remove(tree.path() / f);
    }
    const ProcFs proc(tree.path());
    EXPECT_FALSE(proc.system()); // vmstat and zoneinfo are required when read
    auto r = proc.system(ProcFs::Reads{.pressure = true, .zones = false, .vmstat = false,
                                       .swaps = false});
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(r->mem.memAvailable, 23519640ULL * kKiB);
    EXPECT_TRUE(r->pressure.has_value());
    EXPECT_TRUE(r->zones.empty());
    EXPECT_TRUE(r->swaps.empty());
    EXPECT_EQ(proc.openFiles(), 2U); // meminfo, pressure/memory
}

TEST(ProcFs, PageSizeIsPassedThrough) {
    const auto tree = copyFixture("proc/normal");
    auto r = ProcFs(tree.path(), 65536).system();
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(r->pageSize, 65536U);
}

TEST(ProcFs, WithoutPsi) {
    const auto tree = copyFixture("proc/no_psi");
    ASSERT_FALSE(std::filesystem::exists(tree.path() / "pressure"));
    auto r = ProcFs(tree.path()).system();
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_FALSE(r->pressure.has_value());
    EXPECT_EQ(r->mem.memTotal, 65856896ULL * kKiB);
}

TEST(ProcFs, WithoutSwap) {
    const auto tree = copyFixture("proc/no_swap");
    auto r = ProcFs(tree.path()).system();
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_TRUE(r->swaps.empty());
    EXPECT_EQ(r->mem.swapTotal, 0U);
    ASSERT_TRUE(r->pressure.has_value());
    EXPECT_EQ(r->pressure->some.totalUsec, 0U);
}

TEST(ProcFs, SwapsFileAbsentIsNoSwap) {
    // CONFIG_SWAP=n kernels have no /proc/swaps.
    const auto tree = copyFixture("proc/normal");
    std::filesystem::remove(tree.path() / "swaps");
    auto r = ProcFs(tree.path()).system();
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_TRUE(r->swaps.empty());
}

TEST(ProcFs, MeminfoOnly) {
    const auto tree = copyFixture("proc/normal");
    auto r = ProcFs(tree.path()).meminfo();
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(r->memTotal, 65856896ULL * kKiB);
}

struct BrokenCase {
    std::string name;
    std::string file;                   // relative to the proc root
    std::optional<std::string> content; // nullopt: delete the file
    std::errc code;
    std::string error; // after "<root>/<file>: "; empty: only check the prefix
};
// NOLINTNEXTLINE(readability-identifier-naming): gtest looks this name up
void PrintTo(const BrokenCase& c, std::ostream* os) {
    *os << c.name;
}

class ProcFsBroken : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(ProcFsBroken, ErrorNamesThePath) {
    const auto& c = GetParam();
    const auto tree = copyFixture("proc/normal");
    const auto path = tree.path() / c.file;
    if (c.content) {
        writeFile(path, *c.content);
    } else {
        std::filesystem::remove(path);
    }
    auto r = ProcFs(tree.path()).system();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, c.code);
    const std::string prefix = path.string() + ": ";
    ASSERT_EQ(r.error().what.rfind(prefix, 0), 0U) << r.error().what;
    if (!c.error.empty()) {
        EXPECT_EQ(r.error().what.substr(prefix.size()), c.error);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ProcFsBroken,
    ::testing::Values(
        BrokenCase{"MeminfoMissing", "meminfo", std::nullopt, std::errc::no_such_file_or_directory,
                   ""},
        BrokenCase{"MeminfoMalformed", "meminfo", "MemTotal: abc kB\n", std::errc::invalid_argument,
                   "MemTotal: not a number: 'abc'"},
        BrokenCase{"MeminfoEmpty", "meminfo", "", std::errc::invalid_argument, "empty input"},
        BrokenCase{"PressureMalformed", "pressure/memory",
                   "some avg10=101 avg60=0 avg300=0 total=0\n", std::errc::invalid_argument,
                   "some: avg10: out of range 0..100: '101'"},
        BrokenCase{"PressureEmpty", "pressure/memory", "", std::errc::invalid_argument,
                   "empty input"},
        BrokenCase{"VmstatMissing", "vmstat", std::nullopt, std::errc::no_such_file_or_directory,
                   ""},
        BrokenCase{"VmstatMalformed", "vmstat", "pgscan_kswapd\n", std::errc::invalid_argument,
                   "line 1: expected 'key value'"},
        BrokenCase{"ZoneinfoMissing", "zoneinfo", std::nullopt,
                   std::errc::no_such_file_or_directory, ""},
        BrokenCase{"ZoneinfoMalformed", "zoneinfo", "Node 0, zone Normal\n  pages free 1\n",
                   std::errc::invalid_argument, "node 0, zone Normal: field min missing"},
        BrokenCase{"SwapsMalformed", "swaps", "garbage\n", std::errc::invalid_argument,
                   "line 1: expected header 'Filename Type Size Used Priority'"}),
    [](const auto& tp) { return tp.param.name; });

TEST(ProcFs, RootMissing) {
    auto r = ProcFs("/nonexistent/memqos-test-root").system();
    ASSERT_FALSE(r);
    EXPECT_TRUE(isVanished(r.error()));
    EXPECT_EQ(r.error().what.rfind("/nonexistent/memqos-test-root/meminfo: ", 0), 0U)
        << r.error().what;
}

} // namespace
} // namespace memqos::io

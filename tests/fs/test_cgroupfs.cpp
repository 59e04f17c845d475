// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/cgroupfs.hpp"
#include "memqos/io/file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>
#include <string>

#include "fixture_tree.hpp"

namespace memqos::io {
namespace {

using test::copyFixture;
using test::makeDir;
using test::makeFile;
using test::materialize;
using test::TempDir;
using test::writeFile;

constexpr std::string_view kNginx = "memqos.slice/memqos-shared.slice/nginx.service";
constexpr std::string_view kDb =
    "memqos.slice/memqos-dedicated.slice/machine-qemu\\x2d1\\x2ddb01.scope";

TEST(CgroupPaths, Layout) {
    EXPECT_EQ(classSlicePath("shared"), "memqos.slice/memqos-shared.slice");
    EXPECT_EQ(unitCgroupPath("shared", "nginx.service"), kNginx);
}

TEST(CgroupFs, NormalService) {
    const auto tree = copyFixture("cgroupfs/normal");
    auto r = CgroupFs(tree.path()).sample(kNginx);
    ASSERT_TRUE(r) << r.error().what;
    ASSERT_TRUE(r->has_value());
    const core::CgroupSample& s = **r;
    EXPECT_EQ(s.path, kNginx);
    EXPECT_EQ(s.memoryCurrent, 1610612736U);
    EXPECT_EQ(s.memoryMin, 0U);
    EXPECT_EQ(s.memoryLow, 1073741824U);
    EXPECT_EQ(s.memoryHigh, Limit{1932735283U});
    EXPECT_EQ(s.memoryMax, Limit{2147483648U});
    EXPECT_EQ(s.swapCurrent, 134217728U);
    EXPECT_EQ(s.swapMax, std::nullopt);
    ASSERT_TRUE(s.pressure.has_value());
    EXPECT_DOUBLE_EQ(s.pressure->some.avg10, 2.25);
    EXPECT_EQ(s.pressure->some.totalUsec, 987654U);
    ASSERT_TRUE(s.pressure->full.has_value());
    EXPECT_DOUBLE_EQ(s.pressure->full->avg10, 1.10);
    EXPECT_EQ(s.pressure->full->totalUsec, 123456U);
    EXPECT_EQ(s.stat.anon, 1073741824U);
    EXPECT_EQ(s.stat.file, 402653184U);
    EXPECT_EQ(s.stat.inactiveFile, 201326592U);
    EXPECT_EQ(s.stat.activeFile, 201326592U);
    EXPECT_EQ(s.stat.fileDirty, 8192U);
    EXPECT_EQ(s.stat.pgscan, 5000U);
    EXPECT_EQ(s.stat.pgsteal, 4200U);
    EXPECT_EQ(s.stat.pgmajfault, 321U);
    EXPECT_EQ(s.stat.workingsetRefaultFile, 40U);
    EXPECT_EQ(s.stat.all.size(), 51U);
    EXPECT_EQ(s.procs, (std::vector<std::int32_t>{1201, 1202, 1203}));
}

TEST(CgroupFs, VmScopeWithZeroSwapMax) {
    const auto tree = copyFixture("cgroupfs/normal");
    auto r = CgroupFs(tree.path()).sample(kDb);
    ASSERT_TRUE(r) << r.error().what;
    ASSERT_TRUE(r->has_value());
    EXPECT_EQ((*r)->memoryMin, 805306368U);
    EXPECT_EQ((*r)->memoryHigh, std::nullopt);
    EXPECT_EQ((*r)->memoryMax, Limit{4294967296U});
    EXPECT_EQ((*r)->swapMax, Limit{0});
    EXPECT_EQ((*r)->procs, (std::vector<std::int32_t>{4711}));
}

TEST(CgroupFs, SliceWithNoProcesses) {
    const auto tree = copyFixture("cgroupfs/normal");
    auto r = CgroupFs(tree.path()).sample("memqos.slice");
    ASSERT_TRUE(r) << r.error().what;
    ASSERT_TRUE(r->has_value());
    EXPECT_EQ((*r)->memoryMin, 1073741824U);
    EXPECT_EQ((*r)->memoryLow, 2147483648U);
    EXPECT_TRUE((*r)->procs.empty());
}

TEST(CgroupFs, UsageReadsOnlyWhatATickNeeds) {
    const auto tree = copyFixture("cgroupfs/normal");
    // Files usage() does not read may be anything, even malformed.
    for (const char* f : {"memory.min", "memory.low", "memory.high", "memory.max",
                          "memory.swap.max", "memory.pressure", "memory.stat"}) {
        writeFile(tree.path() / kNginx / f, "garbage\n");
    }
    const CgroupFs fs(tree.path());
    auto lean = fs.usage(kNginx, false);
    ASSERT_TRUE(lean) << lean.error().what;
    ASSERT_TRUE(lean->has_value());
    EXPECT_EQ((*lean)->memoryCurrent, 1610612736U);
    EXPECT_EQ((*lean)->swapCurrent, 134217728U);
    EXPECT_TRUE((*lean)->procs.empty());
    auto full = fs.usage(kNginx, true);
    ASSERT_TRUE(full) << full.error().what;
    ASSERT_TRUE(full->has_value());
    EXPECT_EQ((*full)->procs, (std::vector<std::int32_t>{1201, 1202, 1203}));
    // cgroup.procs malformed: an error naming the file, only when it is read.
    writeFile(tree.path() / kNginx / "cgroup.procs", "12x\n");
    EXPECT_TRUE(fs.usage(kNginx, false));
    auto bad = fs.usage(kNginx, true);
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().what.find("cgroup.procs"), std::string::npos) << bad.error().what;
    // Gone: nullopt, not an error.
    auto gone = fs.usage("memqos.slice/memqos-shared.slice/gone.service", true);
    ASSERT_TRUE(gone) << gone.error().what;
    EXPECT_FALSE(gone->has_value());
}

TEST(CgroupFs, NoSwapAccounting) {
    const auto tree = copyFixture("cgroupfs/no_swap_accounting");
    ASSERT_FALSE(std::filesystem::exists(tree.path() / kNginx / "memory.swap.current"));
    auto r = CgroupFs(tree.path()).sample(kNginx);
    ASSERT_TRUE(r) << r.error().what;
    ASSERT_TRUE(r->has_value());
    EXPECT_EQ((*r)->swapCurrent, 0U);
    EXPECT_EQ((*r)->swapMax, std::nullopt);
    EXPECT_EQ((*r)->memoryCurrent, 1610612736U);
    EXPECT_TRUE((*r)->pressure.has_value());
}

TEST(CgroupFs, NoPsi) {
    const auto tree = copyFixture("cgroupfs/no_psi");
    auto r = CgroupFs(tree.path()).sample(kNginx);
    ASSERT_TRUE(r) << r.error().what;
    ASSERT_TRUE(r->has_value());
    EXPECT_FALSE((*r)->pressure.has_value());
    EXPECT_EQ((*r)->swapCurrent, 134217728U);
    EXPECT_EQ((*r)->stat.pgscan, 5000U);
}

TEST(CgroupFs, VanishedDirectoryIsNulloptNotError) {
    const auto tree = copyFixture("cgroupfs/normal");
    const CgroupFs fs(tree.path());
    auto r = fs.sample("memqos.slice/memqos-shared.slice/gone.service");
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_FALSE(r->has_value());

    std::filesystem::remove_all(tree.path() / kNginx);
    auto again = fs.sample(kNginx);
    ASSERT_TRUE(again) << again.error().what;
    EXPECT_FALSE(again->has_value());
}

// The cgroup disappears after memory.current was read: any later required
// file fails with ENOENT (ENODEV when the fd was already open).
class CgroupFsRemovedMidway : public ::testing::TestWithParam<std::string> {};

TEST_P(CgroupFsRemovedMidway, IsNullopt) {
    const auto tree = copyFixture("cgroupfs/normal");
    std::filesystem::remove(tree.path() / kNginx / GetParam());
    auto r = CgroupFs(tree.path()).sample(kNginx);
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_FALSE(r->has_value());
}

INSTANTIATE_TEST_SUITE_P(RequiredFiles, CgroupFsRemovedMidway,
                         ::testing::Values("memory.current", "memory.min", "memory.low",
                                           "memory.high", "memory.max", "memory.stat",
                                           "cgroup.procs"),
                         [](const auto& tp) {
                             std::string n = tp.param;
                             for (auto& ch : n) {
                                 ch = ch == '.' ? '_' : ch;
                             }
                             return n;
                         });

TEST(CgroupFs, OptionalFilesMissingWhileDirectoryExists) {
    const auto tree = copyFixture("cgroupfs/normal");
    for (const char* f : {"memory.swap.current", "memory.swap.max", "memory.pressure"}) {
        std::filesystem::remove(tree.path() / kNginx / f);
    }
    auto r = CgroupFs(tree.path()).sample(kNginx);
    ASSERT_TRUE(r) << r.error().what;
    ASSERT_TRUE(r->has_value());
    EXPECT_EQ((*r)->swapCurrent, 0U);
    EXPECT_EQ((*r)->swapMax, std::nullopt);
    EXPECT_FALSE((*r)->pressure.has_value());
}

// Issue 25: a kept cgroup's files are read through kept fds; one that is
// removed shows as gone on them, its entries are dropped, and a cgroup
// created again under the same name is read afresh.
TEST(CgroupFs, KeptSliceIsReadThroughKeptFdsAndVanishes) {
    const auto tree = copyFixture("cgroupfs/normal");
    const std::string slice = "memqos.slice/memqos-shared.slice";
    CgroupFs fs(tree.path());
    fs.keepOpen(slice);
    auto a = fs.usage(slice, false, true);
    ASSERT_TRUE(a) << a.error().what;
    ASSERT_TRUE(a->has_value());
    EXPECT_EQ(fs.openFiles(), 3U); // memory.current, memory.swap.current, memory.pressure
    writeFile(tree.path() / slice / "memory.current", "4096\n");
    auto b = fs.usage(slice, false, true);
    ASSERT_TRUE(b && b->has_value());
    EXPECT_EQ((*b)->memoryCurrent, 4096U);
    EXPECT_EQ(fs.openFiles(), 3U);

    std::filesystem::remove_all(tree.path() / slice);
    auto gone = fs.usage(slice, false, true);
    ASSERT_TRUE(gone) << gone.error().what;
    EXPECT_FALSE(gone->has_value()) << "a removed slice read through its old fds";
    EXPECT_EQ(fs.openFiles(), 0U);

    materialize(tree.path() / "memqos.slice",
                {makeDir("memqos-shared.slice", {makeFile("memory.current", "8192\n")})});
    auto again = fs.usage(slice, false, false);
    ASSERT_TRUE(again) << again.error().what;
    ASSERT_TRUE(again->has_value());
    EXPECT_EQ((*again)->memoryCurrent, 8192U);
}

TEST(CgroupFs, SliceReadsOnlyWhatItIsAskedFor) {
    const auto tree = copyFixture("cgroupfs/normal");
    for (const char* f : {"memory.min", "memory.low", "memory.max", "memory.stat",
                          "memory.swap.current", "memory.swap.max", "cgroup.procs"}) {
        std::filesystem::remove(tree.path() / kNginx / f);
    }
    const CgroupFs fs(tree.path());
    auto bare = fs.slice(kNginx, false, false);
    ASSERT_TRUE(bare) << bare.error().what;
    ASSERT_TRUE(bare->has_value());
    EXPECT_EQ((*bare)->memoryCurrent, 1610612736U);
    EXPECT_EQ((*bare)->memoryHigh, Limit{});
    EXPECT_FALSE((*bare)->pressure.has_value());
    auto guarded = fs.slice(kNginx, true, true);
    ASSERT_TRUE(guarded && guarded->has_value());
    EXPECT_EQ((*guarded)->memoryHigh, Limit{1932735283U});
    ASSERT_TRUE((*guarded)->pressure.has_value());
    EXPECT_EQ((*guarded)->pressure->some.totalUsec, 987654U);
    std::filesystem::remove_all(tree.path() / kNginx);
    auto gone = fs.slice(kNginx, true, true);
    ASSERT_TRUE(gone) << gone.error().what;
    EXPECT_FALSE(gone->has_value());
}

TEST(CgroupFs, WorkloadFilesAreNotKeptOpen) {
    const auto tree = copyFixture("cgroupfs/normal");
    CgroupFs fs(tree.path());
    fs.keepOpen("memqos.slice/memqos-shared.slice");
    auto r = fs.sample(kNginx);
    ASSERT_TRUE(r && r->has_value());
    EXPECT_EQ(fs.openFiles(), 0U);
    fs.forget("memqos.slice/memqos-shared.slice");
    EXPECT_EQ(fs.openFiles(), 0U);
}

// Issue 25 item 3 for the workloads: with a budget, the files a tick reads
// of a workload's cgroup (memory.current, memory.swap.current,
// memory.pressure) are read through kept fds, the others opened and closed;
// a removed cgroup is gone on them and one made again (a unit's restart)
// read afresh; cgroups the caller no longer watches lose theirs; past the
// budget files are opened and closed as before.
TEST(CgroupFs, WorkloadTickFilesAreKeptWithinTheBudget) {
    const auto tree = copyFixture("cgroupfs/normal");
    CgroupFs fs(tree.path());
    fs.keepWorkloadFiles(4);
    auto a = fs.usage(kNginx, true, true);
    ASSERT_TRUE(a) << a.error().what;
    ASSERT_TRUE(a->has_value());
    EXPECT_FALSE((*a)->procs.empty());
    EXPECT_EQ(fs.workloadFiles(), 3U) << "cgroup.procs is not kept";
    EXPECT_EQ(fs.openFiles(), 0U);
    auto whole = fs.sample(kNginx);
    ASSERT_TRUE(whole && whole->has_value());
    EXPECT_EQ(fs.workloadFiles(), 3U) << "memory.min/low/high/max/stat are not kept";

    writeFile(tree.path() / kNginx / "memory.current", "4096\n");
    auto b = fs.usage(kNginx, false, false);
    ASSERT_TRUE(b && b->has_value());
    EXPECT_EQ((*b)->memoryCurrent, 4096U);

    // The budget (4): the second cgroup's first file is kept, the rest not.
    auto db = fs.usage(kDb, false, true);
    ASSERT_TRUE(db && db->has_value());
    EXPECT_EQ(fs.workloadFiles(), 4U);
    auto db2 = fs.usage(kDb, false, true);
    ASSERT_TRUE(db2 && db2->has_value());
    EXPECT_EQ((*db2)->memoryCurrent, (*db)->memoryCurrent);

    const std::string nginxDir = std::string(kNginx);
    std::filesystem::remove_all(tree.path() / kNginx);
    auto gone = fs.usage(kNginx, false, true);
    ASSERT_TRUE(gone) << gone.error().what;
    EXPECT_FALSE(gone->has_value()) << "a removed cgroup read through its old fds";
    EXPECT_EQ(fs.workloadFiles(), 1U);
    materialize(tree.path() / "memqos.slice/memqos-shared.slice",
                {makeDir("nginx.service", {makeFile("memory.current", "8192\n")})});
    auto again = fs.usage(kNginx, false, false);
    ASSERT_TRUE(again && again->has_value());
    EXPECT_EQ((*again)->memoryCurrent, 8192U);
    EXPECT_EQ(fs.workloadFiles(), 2U);

    fs.keepWorkloadFilesOf([](std::string_view rel) { return rel == kNginx; });
    EXPECT_EQ(fs.workloadFiles(), 1U) << "kDb's kept fd stays after it is no longer watched";
    fs.keepWorkloadFiles(0);
    EXPECT_EQ(fs.workloadFiles(), 0U);
    auto after = fs.usage(kNginx, false, false);
    ASSERT_TRUE(after && after->has_value());
    EXPECT_EQ(fs.workloadFiles(), 0U);
}

TEST(CgroupFs, NoMemoryControllerIsNullopt) {
    // A directory without memory.* files: the memory controller is not
    // enabled for it, so there is nothing to sample.
    TempDir tmp;
    materialize(tmp.path(), {makeDir("a.slice", {makeFile("cgroup.procs", "1\n")})});
    auto r = CgroupFs(tmp.path()).sample("a.slice");
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_FALSE(r->has_value());
}

TEST(CgroupFs, MemoryMinMaxIsLargestByteCount) {
    TempDir tmp;
    materialize(tmp.path(), {makeDir("x.service", {
                                                      makeFile("memory.current", "10\n"),
                                                      makeFile("memory.min", "max\n"),
                                                      makeFile("memory.low", "max\n"),
                                                      makeFile("memory.high", "max\n"),
                                                      makeFile("memory.max", "max\n"),
                                                      makeFile("memory.stat", "anon 1\n"),
                                                      makeFile("cgroup.procs", ""),
                                                  })});
    auto r = CgroupFs(tmp.path()).sample("x.service");
    ASSERT_TRUE(r) << r.error().what;
    ASSERT_TRUE(r->has_value());
    EXPECT_EQ((*r)->memoryMin, kNoLimit);
    EXPECT_EQ((*r)->memoryLow, kNoLimit);
    EXPECT_FALSE((*r)->pressure.has_value());
    EXPECT_EQ((*r)->stat.anon, 1U);
}

struct MalformedCase {
    std::string name;
    std::string file;
    std::string content;
    std::string error; // after "<path>: "
};
// NOLINTNEXTLINE(readability-identifier-naming): gtest looks this name up
void PrintTo(const MalformedCase& c, std::ostream* os) {
    *os << c.name;
}

class CgroupFsMalformed : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(CgroupFsMalformed, ErrorNamesThePath) {
    const auto& c = GetParam();
    const auto tree = copyFixture("cgroupfs/normal");
    const auto path = tree.path() / kNginx / c.file;
    writeFile(path, c.content);
    auto r = CgroupFs(tree.path()).sample(kNginx);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, std::errc::invalid_argument);
    EXPECT_EQ(r.error().what, path.string() + ": " + c.error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CgroupFsMalformed,
    ::testing::Values(
        MalformedCase{"CurrentEmpty", "memory.current", "", "empty input"},
        MalformedCase{"CurrentWord", "memory.current", "lots\n", "not a number: 'lots'"},
        MalformedCase{"HighMaxx", "memory.high", "maxx\n", "not a number or 'max': 'maxx'"},
        MalformedCase{"MaxOverflow", "memory.max", "99999999999999999999999\n",
                      "out of range: '99999999999999999999999'"},
        MalformedCase{"SwapCurrentNegative", "memory.swap.current", "-1\n", "not a number: '-1'"},
        MalformedCase{"SwapMaxGarbage", "memory.swap.max", "\x01\n",
                      "not a number or 'max': '\\x01'"},
        MalformedCase{"PressureMissingField", "memory.pressure",
                      "some avg10=0.00 avg60=0.00 total=0\n", "some: field avg300 missing"},
        MalformedCase{"PressureNaN", "memory.pressure", "some avg10=nan avg60=0 avg300=0 total=0\n",
                      "some: avg10: out of range 0..100: 'nan'"},
        MalformedCase{"StatTruncated", "memory.stat", "anon 1\nfile",
                      "line 2: expected 'key value'"},
        MalformedCase{"ProcsWord", "cgroup.procs", "12\nabc\n",
                      "line 2: pid: not a number: 'abc'"}),
    [](const auto& tp) { return tp.param.name; });

TEST(CgroupFs, OtherReadErrorsAreErrorsNotVanished) {
    // EISDIR stands for any errno other than ENOENT/ENODEV (EACCES, EIO):
    // it must surface, not be mistaken for a vanished cgroup. (A directory,
    // because chmod 0 does not stop root, and the tests may run as root.)
    const auto tree = copyFixture("cgroupfs/normal");
    const auto path = tree.path() / kNginx / "memory.stat";
    std::filesystem::remove(path);
    std::filesystem::create_directory(path);
    auto r = CgroupFs(tree.path()).sample(kNginx);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, std::errc::is_a_directory);
    EXPECT_EQ(r.error().what.rfind(path.string() + ": ", 0), 0U) << r.error().what;
}

TEST(CgroupFs, OptionalFileReadErrorIsAnError) {
    const auto tree = copyFixture("cgroupfs/normal");
    const auto path = tree.path() / kNginx / "memory.swap.current";
    std::filesystem::remove(path);
    std::filesystem::create_directory(path);
    auto r = CgroupFs(tree.path()).sample(kNginx);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, std::errc::is_a_directory);
}

struct EscapeCase {
    std::string name;
    std::string relPath;
};
// NOLINTNEXTLINE(readability-identifier-naming): gtest looks this name up
void PrintTo(const EscapeCase& c, std::ostream* os) {
    *os << c.name;
}

class CgroupFsPathEscape : public ::testing::TestWithParam<EscapeCase> {};

TEST_P(CgroupFsPathEscape, Rejected) {
    // Put a readable cgroup just outside the root, so that a path that
    // escaped would sample successfully instead of failing by accident.
    TempDir tmp;
    materialize(
        tmp.path(),
        {makeDir("root/inner"),
         makeDir("outside", {makeFile("memory.current", "1\n"), makeFile("memory.min", "0\n"),
                             makeFile("memory.low", "0\n"), makeFile("memory.high", "max\n"),
                             makeFile("memory.max", "max\n"), makeFile("memory.stat", "anon 1\n"),
                             makeFile("cgroup.procs", "")})});
    const CgroupFs fs(tmp.path() / "root");
    const auto& relPath = GetParam().relPath;
    auto sample = fs.sample(relPath);
    ASSERT_FALSE(sample);
    EXPECT_EQ(sample.error().code, std::errc::invalid_argument);
    EXPECT_EQ(sample.error().what.rfind("cgroup path '", 0), 0U) << sample.error().what;
    auto children = fs.children(relPath);
    ASSERT_FALSE(children);
    EXPECT_EQ(children.error().code, std::errc::invalid_argument);
    EXPECT_FALSE(fs.resolve(relPath));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CgroupFsPathEscape,
    ::testing::Values(EscapeCase{"Absolute", "/etc"}, EscapeCase{"AbsoluteRoot", "/"},
                      EscapeCase{"DotDot", ".."}, EscapeCase{"DotDotSibling", "../outside"},
                      EscapeCase{"InnerDotDot", "inner/../../outside"},
                      EscapeCase{"TrailingDotDot", "inner/.."}, EscapeCase{"Dot", "./inner"},
                      EscapeCase{"TrailingDot", "inner/."}, EscapeCase{"DoubleSlash", "inner//x"},
                      EscapeCase{"TrailingSlash", "inner/"},
                      EscapeCase{"Nul", std::string("inner\0/../..", 12)}),
    [](const auto& tp) { return tp.param.name; });

TEST(CgroupFs, ResolveAcceptsDotsInsideNames) {
    const CgroupFs fs("/r");
    EXPECT_EQ(*fs.resolve(""), std::filesystem::path("/r"));
    EXPECT_EQ(fs.resolve("a.slice/..b/c..d/...")->string(), "/r/a.slice/..b/c..d/...");
}

TEST(CgroupFs, ChildrenSortedDirectoriesOnly) {
    const auto tree = copyFixture("cgroupfs/normal");
    const CgroupFs fs(tree.path());
    auto top = fs.children("");
    ASSERT_TRUE(top) << top.error().what;
    EXPECT_EQ(*top, (std::vector<std::string>{"memqos.slice", "system.slice"}));
    std::filesystem::create_directory_symlink(tree.path() / "system.slice",
                                              tree.path() / "memqos.slice" / "link.slice");
    auto classes = fs.children("memqos.slice");
    ASSERT_TRUE(classes) << classes.error().what;
    EXPECT_EQ(*classes,
              (std::vector<std::string>{"memqos-dedicated.slice", "memqos-reclaimed.slice",
                                        "memqos-shared.slice", "memqos-system.slice"}));
    auto leaf = fs.children(kNginx);
    ASSERT_TRUE(leaf) << leaf.error().what;
    EXPECT_TRUE(leaf->empty());
}

TEST(CgroupFs, ChildrenOfVanishedCgroup) {
    const auto tree = copyFixture("cgroupfs/normal");
    auto r = CgroupFs(tree.path()).children("memqos.slice/gone.slice");
    ASSERT_FALSE(r);
    EXPECT_TRUE(isVanished(r.error()));
    EXPECT_NE(r.error().what.find("gone.slice"), std::string::npos) << r.error().what;
}

} // namespace
} // namespace memqos::io

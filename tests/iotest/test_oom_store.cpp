// SPDX-License-Identifier: Apache-2.0
// The oom_score_adj records (io/oom_store.hpp): the file format, and the
// store on a temp directory; KernelKnobs' reads of a process's start time and
// oom_score_adj on a fake /proc.
#include "memqos/io/file.hpp"
#include "memqos/io/kernel_knobs.hpp"
#include "memqos/io/oom_store.hpp"
#include "memqos/io/state_store.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "fixture_tree.hpp"

namespace memqos::io {
namespace {

namespace fs = std::filesystem;
using test::TempDir;
using test::writeFile;
using testing::HasSubstr;

OomRecord sample() {
    OomRecord r;
    r.workload = "db.service";
    r.cgroup = "system.slice/db.service";
    r.written = 1000;
    r.base = -500;
    r.processes[4242] = {.pid = 4242, .startTime = 123456, .original = -500, .written = 1000};
    r.processes[4343] = {.pid = 4343, .startTime = 123999, .original = 0, .written = 1000};
    return r;
}

TEST(OomRecordFormat, WritesTheDocumentedFileAndRoundTrips) {
    EXPECT_EQ(formatOomRecord(sample()),
              "# memqos oom_score_adj record; written by memqosd, do not edit while it runs\n"
              "Workload=db.service\n"
              "Cgroup=system.slice/db.service\n"
              "Written=1000\n"
              "Base=-500\n"
              "Process=4242 123456 -500 1000\n"
              "Process=4343 123999 0 1000\n");
    auto back = parseOomRecord(formatOomRecord(sample()));
    ASSERT_TRUE(back.ok()) << back.error().what;
    EXPECT_EQ(*back, sample());
    OomRecord vm = sample();
    vm.workload = "vm:my guest";
    vm.processes.clear();
    auto again = parseOomRecord(formatOomRecord(vm));
    ASSERT_TRUE(again.ok()) << again.error().what;
    EXPECT_EQ(*again, vm);
}

TEST(OomRecordFormat, AcceptsAnyOrderCommentsAndBlanks) {
    auto r = parseOomRecord("\n# x\nProcess = 7 1 2 3\r\nBase=3\nWritten=3\n"
                            "Cgroup=a.slice/b.scope\nWorkload=b.scope\n");
    ASSERT_TRUE(r.ok()) << r.error().what;
    EXPECT_EQ(r->workload, "b.scope");
    ASSERT_EQ(r->processes.size(), 1U);
    EXPECT_EQ(r->processes.at(7).original, 2);
}

struct BadRecord {
    const char* text;
    const char* error;
};
class OomRecordBad : public testing::TestWithParam<BadRecord> {};
TEST_P(OomRecordBad, IsRefusedWithTheLine) {
    auto r = parseOomRecord(GetParam().text);
    ASSERT_FALSE(r.ok()) << GetParam().text;
    EXPECT_THAT(r.error().what, HasSubstr(GetParam().error)) << GetParam().text;
    EXPECT_EQ(r.error().code, std::errc::invalid_argument);
}
constexpr const char* kHead = "Workload=w.service\nCgroup=a/w.service\nWritten=1\nBase=0\n";
INSTANTIATE_TEST_SUITE_P(
    Cases, OomRecordBad,
    testing::Values(
        BadRecord{"", "Workload= missing"},
        BadRecord{"Workload=w.service\nCgroup=a\nWritten=1\n", "Base= missing"},
        BadRecord{"Workload=w.service\nWorkload=w.service\n", "line 2: Workload=w.service: key given twice"},
        BadRecord{"Workload=\n", "not a workload id"},
        BadRecord{"Cgroup=/abs\n", "not a relative cgroup path"},
        BadRecord{"Cgroup=a/../b\n", "not a relative cgroup path"},
        BadRecord{"Written=1001\n", "out of range"},
        BadRecord{"Base=x\n", "not a number"},
        BadRecord{"Colour=red\n", "unknown key"},
        BadRecord{"just text\n", "expected 'Key=Value'"},
        BadRecord{"Process=1 2 3\n", "expected 'PID STARTTIME ORIGINAL WRITTEN'"},
        BadRecord{"Process=0 2 3 4\n", "pid: not a process"},
        BadRecord{"Process=-5 2 3 4\n", "pid: not a process"},
        BadRecord{"Process=5 -2 3 4\n", "start time: not a number"},
        BadRecord{"Process=5 2 3 -1001\n", "written: out of range"},
        BadRecord{"Process=5 2 3 4\nProcess=5 9 3 4\n", "line 2: Process=5 9 3 4: pid 5 given twice"}));

TEST(OomRecordBadHead, AGoodHeadWithABadProcessIsRefused) {
    auto r = parseOomRecord(std::string(kHead) + "Process=1 2 3 x\n");
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().what, HasSubstr("line 5:"));
}

TEST(OomStoreTest, SavesReplacesRemovesAndSetsBadFilesAside) {
    TempDir tmp;
    OomStore store(tmp.path() / "oom-scores");
    EXPECT_TRUE(store.loadAll().records.empty()) << "no directory: no records";
    ASSERT_TRUE(store.save(sample()).ok());
    OomRecord other = sample();
    other.workload = "web.service";
    other.processes.erase(4343);
    ASSERT_TRUE(store.save(other).ok());
    other.written = 500;
    ASSERT_TRUE(store.save(other).ok()); // replaced
    // Foreign and bad files: reported and set aside, never fatal.
    writeFile(tmp.path() / "oom-scores/bad_2eservice", "Workload=bad.service\nWritten=lots\n");
    writeFile(tmp.path() / "oom-scores/moved_2eservice", formatOomRecord(sample()));
    writeFile(tmp.path() / "oom-scores/notes.txt", "not a record");
    ::chmod((tmp.path() / "oom-scores/bad_2eservice").c_str(), 0644);
    ::chmod((tmp.path() / "oom-scores/moved_2eservice").c_str(), 0644);
    auto loaded = store.loadAll();
    ASSERT_EQ(loaded.records.size(), 2U);
    EXPECT_EQ(loaded.records[0], sample());
    EXPECT_EQ(loaded.records[1], other);
    ASSERT_EQ(loaded.problems.size(), 3U);
    std::string all;
    for (const auto& p : loaded.problems) {
        all += p + "\n";
    }
    EXPECT_THAT(all, HasSubstr("bad_2eservice: line 2: Written=lots"));
    EXPECT_THAT(all, HasSubstr("moved_2eservice: Workload='db.service' does not match the file "
                               "name, set aside as "));
    EXPECT_THAT(all, HasSubstr("notes.txt: not an oom_score_adj record file"));
    EXPECT_EQ(store.loadAll().problems.size(), 1U) << "set aside once: only notes.txt again";

    ASSERT_TRUE(store.remove("web.service").ok());
    ASSERT_TRUE(store.remove("web.service").ok()) << "a missing file is no error";
    EXPECT_EQ(store.loadAll().records.size(), 1U);
}

TEST(OomStoreTest, RefusesWhatWouldNotReadBack) {
    TempDir tmp;
    OomStore store(tmp.path());
    OomRecord r = sample();
    r.cgroup = "../escape";
    auto st = store.save(r);
    ASSERT_FALSE(st.ok());
    EXPECT_THAT(st.error().what, HasSubstr("would not read back"));
}

TEST(ProcessOomRead, StartTimeAndValueOrGone) {
    TempDir tmp;
    KernelKnobs knobs(tmp.path(), tmp.path());
    // A command with spaces and ')' in it: fields count from the last ')'.
    writeFile(tmp.path() / "4242/stat",
              "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
              "987654 1000 100 18446744073709551615\n");
    writeFile(tmp.path() / "4242/oom_score_adj", "-500\n");
    auto r = knobs.readOomScoreAdj(4242);
    ASSERT_TRUE(r.ok()) << r.error().what;
    ASSERT_TRUE(r->has_value());
    EXPECT_EQ((*r)->startTime, 987654U);
    EXPECT_EQ((*r)->oomScoreAdj, -500);

    auto gone = knobs.readOomScoreAdj(4343);
    ASSERT_TRUE(gone.ok()) << gone.error().what;
    EXPECT_FALSE(gone->has_value());

    writeFile(tmp.path() / "4444/stat", "4444 (short) S 1 2 3\n");
    writeFile(tmp.path() / "4444/oom_score_adj", "0\n");
    auto bad = knobs.readOomScoreAdj(4444);
    ASSERT_FALSE(bad.ok());
    EXPECT_THAT(bad.error().what, HasSubstr("4444/stat: field 22 (starttime) missing"));

    auto w = knobs.writeOomScoreAdj(4242, 1000);
    ASSERT_TRUE(w.ok()) << w.error().what;
    EXPECT_EQ(*w, Written::Changed);
    EXPECT_EQ(*readFile(tmp.path() / "4242/oom_score_adj"), "1000\n") << "(no O_TRUNC: one write over \"-500\\n\")";
    auto w2 = knobs.writeOomScoreAdj(4343, 0);
    ASSERT_TRUE(w2.ok()) << w2.error().what;
    EXPECT_EQ(*w2, Written::Vanished);
}

} // namespace
} // namespace memqos::io

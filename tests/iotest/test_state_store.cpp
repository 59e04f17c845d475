// SPDX-License-Identifier: Apache-2.0
// StateStore and its file format, on temp dirs made with mkdtemp.

#include "memqos/io/state_store.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>
#include <vector>

#include "fixture_tree.hpp"

namespace memqos::io {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;
using ::testing::SizeIs;

Assignment assignment(std::string id, core::WorkloadKind kind, std::string cls, Bytes request,
                      Limit limit, std::int32_t priority = 0, bool persistent = false) {
    return Assignment{.workload = core::Workload{.id = std::move(id),
                                                 .kind = kind,
                                                 .className = std::move(cls),
                                                 .request = request,
                                                 .limit = limit,
                                                 .priority = priority},
                      .persistent = persistent};
}

Assignment nginx(bool persistent = false) {
    return assignment("nginx.service", core::WorkloadKind::Service, "shared", 256 * kMiB,
                      Limit{kGiB}, 0, persistent);
}

std::string readText(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<std::string> listDir(const fs::path& dir) {
    std::vector<std::string> names;
    if (!fs::exists(dir)) {
        return names;
    }
    for (const auto& e : fs::directory_iterator(dir)) {
        names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

// ---- file names ---------------------------------------------------------------

TEST(FileName, EncodesEverythingButLettersAndDigits) {
    EXPECT_EQ(encodeFileName("nginx.service"), "nginx_2eservice");
    EXPECT_EQ(encodeFileName("vm:web-1"), "vm_3aweb_2d1");
    EXPECT_EQ(encodeFileName("a_b"), "a_5fb");
    EXPECT_EQ(encodeFileName("\xff/\n"), "_ff_2f_0a");
    EXPECT_EQ(encodeFileName(""), "_");
}

TEST(FileName, DecodesWhatItEncodes) {
    for (const std::string& id :
         std::vector<std::string>{"nginx.service", "vm:web-1", "x@y.scope", "", "_", "__",
                                  "\xc3\xa9t\xc3\xa9", "..", std::string("nul\0byte", 8)}) {
        EXPECT_THAT(decodeFileName(encodeFileName(id)), Optional(id)) << id;
    }
}

TEST(FileName, RejectsNamesItCannotHaveProduced) {
    for (const std::string name :
         {"", ".tmp.123.abc", "nginx.service", "a_2", "a_zz", "a_2E", "a_41", "a-b", "x y", "_5"}) {
        EXPECT_EQ(decodeFileName(name), std::nullopt) << name;
    }
}

// ---- format -------------------------------------------------------------------

TEST(Format, WritesTheDocumentedFile) {
    EXPECT_EQ(formatAssignment(nginx()),
              "# memqos assignment; written by memqosd, do not edit while it runs\n"
              "Id=nginx.service\n"
              "Kind=service\n"
              "Class=shared\n"
              "Request=268435456\n"
              "Limit=1073741824\n"
              "Priority=0\n");
}

TEST(Format, NoLimitIsMax) {
    const auto a = assignment("vm:db", core::WorkloadKind::Vm, "dedicated", 0, Limit{}, -5);
    EXPECT_THAT(formatAssignment(a), HasSubstr("\nLimit=max\n"));
    EXPECT_THAT(formatAssignment(a), HasSubstr("\nPriority=-5\n"));
    auto back = parseAssignment(formatAssignment(a));
    ASSERT_TRUE(back) << back.error().what;
    EXPECT_EQ(back->workload.limit, std::nullopt);
    EXPECT_EQ(*back, a);
}

TEST(Format, RoundTrips) {
    for (const auto& a :
         {nginx(), assignment("x.scope", core::WorkloadKind::Scope, "reclaimed", 0, Limit{0}),
          assignment("vm:\xc3\xa9", core::WorkloadKind::Vm, "system", UINT64_MAX, Limit{UINT64_MAX},
                     INT32_MIN),
          assignment("a.service", core::WorkloadKind::Service, "c_1", 1, Limit{}, INT32_MAX)}) {
        auto back = parseAssignment(formatAssignment(a));
        ASSERT_TRUE(back) << back.error().what;
        EXPECT_EQ(*back, a);
    }
}

TEST(Parse, AcceptsAnyOrderCommentsBlanksAndCrlf) {
    auto a = parseAssignment("\n# hand-made\r\n  Priority = 7 \r\nLimit=max\nRequest=1\n"
                             "\tClass=shared\nKind=scope\nId=run-1.scope");
    ASSERT_TRUE(a) << a.error().what;
    EXPECT_EQ(a->workload.id, "run-1.scope");
    EXPECT_EQ(a->workload.kind, core::WorkloadKind::Scope);
    EXPECT_EQ(a->workload.priority, 7);
    EXPECT_FALSE(a->persistent);
}

struct BadCase {
    const char* name;
    std::string text;
    const char* error;
};

class ParseBad : public ::testing::TestWithParam<BadCase> {};

// The good file with `key` set to `value`, or without `key` when value is
// nullopt.
std::string withLine(std::string_view key, std::optional<std::string_view> value) {
    const std::vector<std::pair<std::string_view, std::string_view>> good = {
        {"Id", "nginx.service"}, {"Kind", "service"}, {"Class", "shared"},
        {"Request", "1"},        {"Limit", "2"},      {"Priority", "0"}};
    std::string out;
    for (const auto& [k, v] : good) {
        if (k != key) {
            out += std::string(k) + "=" + std::string(v) + "\n";
        } else if (value) {
            out += std::string(k) + "=" + std::string(*value) + "\n";
        }
    }
    return out;
}
const std::string kGood = withLine("", ""); // NOLINT(cert-err58-cpp): test data

TEST_P(ParseBad, IsRefusedWithLineAndKey) {
    auto a = parseAssignment(GetParam().text);
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().code, std::errc::invalid_argument);
    EXPECT_THAT(a.error().what, HasSubstr(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseBad,
    ::testing::Values(
        BadCase{"Empty", "", "missing key Id"},
        BadCase{"OnlyComments", "# x\n\n", "missing key Id"},
        BadCase{"MissingPriority", withLine("Priority", std::nullopt), "missing key Priority"},
        BadCase{"MissingClass", withLine("Class", std::nullopt), "missing key Class"},
        BadCase{"UnknownKey", kGood + "Swap=yes\n", "line 7: unknown key 'Swap'"},
        BadCase{"LowercaseKey", "id=nginx.service\n", "line 1: unknown key 'id'"},
        BadCase{"NoEquals", kGood + "garbage\n", "line 7: 'garbage': expected Key=Value"},
        BadCase{"Twice", kGood + "Kind=service\n", "line 7: Kind given twice (first on line 2)"},
        BadCase{"BadRequest", withLine("Request", "12x"), "line 4: Request='12x': not a number"},
        BadCase{"NegativeRequest", withLine("Request", "-1"), "line 4: Request='-1'"},
        BadCase{"PlusRequest", withLine("Request", "+1"), "line 4: Request='+1'"},
        BadCase{"HugeRequest", withLine("Request", "18446744073709551616"), "line 4: Request="},
        BadCase{"EmptyLimit", withLine("Limit", ""), "line 5: Limit='': not a number of bytes or"},
        BadCase{"MaxUppercase", withLine("Limit", "MAX"), "line 5: Limit='MAX'"},
        BadCase{"PriorityOverflow", withLine("Priority", "2147483648"),
                "line 6: Priority='2147483648': not a 32-bit integer"},
        BadCase{"BadKind", withLine("Kind", "vm2"), "line 2: Kind='vm2': not a kind"},
        BadCase{"KindMismatch", withLine("Kind", "scope"),
                "line 2: Kind=scope does not match Id='nginx.service' (line 1)"},
        BadCase{"VmKindMismatch", withLine("Id", "vm:x"), "Kind=service does not match Id='vm:x'"},
        BadCase{"BadId", withLine("Id", "nginx"), "line 1: Id: "},
        BadCase{"IdWithSlash", withLine("Id", "../x.service"), "line 1: Id: "},
        BadCase{"IdControl", withLine("Id", "vm:a\x01"), "line 1: Id: "},
        BadCase{"BadClass", withLine("Class", "Shared"),
                "line 3: Class='Shared': not a class name"},
        BadCase{"EmptyClass", withLine("Class", ""), "line 3: Class='': not a class name"},
        BadCase{"NulInValue", withLine("Request", std::string_view("1\0", 2)),
                "line 4: Request='1\\x00'"}),
    [](const ::testing::TestParamInfo<BadCase>& param) { return std::string(param.param.name); });

// ---- instance records -------------------------------------------------------

TEST(InstanceFormat, WritesTheDocumentedFileAndRoundTrips) {
    const core::Instance i{"inst1.example.test", 256 * kMiB, 512 * kMiB, true};
    EXPECT_EQ(formatInstance(i),
              "# memqos instance record (Ganeti); written by memqosd, do not edit while it runs\n"
              "Name=inst1.example.test\nMinMemory=268435456\nMaxMemory=536870912\nUp=yes\n");
    EXPECT_THAT(parseInstance(formatInstance(i)).value(), i);
    const core::Instance down{"b", 0, 1, false};
    EXPECT_THAT(parseInstance(formatInstance(down)).value(), down);
}

TEST(InstanceFormat, RefusesBadFilesWithTheLine) {
    const std::pair<const char*, const char*> cases[] = {
        {"Name=a\nMinMemory=2\nMaxMemory=1\nUp=yes\n", "line 2: MinMemory='2': above MaxMemory"},
        {"Name=a b\nMinMemory=0\nMaxMemory=1\nUp=yes\n", "line 1: Name: "},
        {"Name=a\nMinMemory=0\nMaxMemory=x\nUp=yes\n", "line 3: MaxMemory='x': not a number"},
        {"Name=a\nMinMemory=0\nMaxMemory=1\nUp=maybe\n", "line 4: Up='maybe': expected yes or no"},
        {"Name=a\nMinMemory=0\nMaxMemory=1\n", "missing key Up"},
        {"Name=a\nName=b\n", "line 2: Name given twice (first on line 1)"},
        {"Name=a\nColour=red\n", "line 2: unknown key 'Colour'"},
    };
    for (const auto& [text, why] : cases) {
        const auto r = parseInstance(text);
        ASSERT_FALSE(r) << text;
        EXPECT_THAT(r.error().what, HasSubstr(why)) << text;
    }
}

TEST(InstanceStoreTest, SavesReplacesRemovesAndSkipsBadFiles) {
    test::TempDir dir;
    const auto d = dir.path() / "lib" / "instances";
    InstanceStore s(d);
    const core::Instance a{"a.example.test", 1, 2, true};
    const core::Instance b{"b", 0, 5, false};
    ASSERT_TRUE(s.save(a));
    ASSERT_TRUE(s.save(b));
    ASSERT_TRUE(s.save(core::Instance{"b", 0, 6, true}));
    EXPECT_THAT(listDir(d), ElementsAre("a_2eexample_2etest", "b"));
    std::ofstream(d / "c") << "Name=zzz\nMinMemory=0\nMaxMemory=1\nUp=no\n";
    std::ofstream(d / ".tmp.123") << "half";
    auto loaded = InstanceStore(d).loadAll();
    EXPECT_THAT(loaded.instances, ElementsAre(a, core::Instance{"b", 0, 6, true}));
    ASSERT_THAT(loaded.problems, SizeIs(1));
    EXPECT_THAT(loaded.problems[0], HasSubstr("Name='zzz' does not match the file name"));
    EXPECT_FALSE(fs::exists(d / ".tmp.123"));
    ASSERT_TRUE(s.remove("a.example.test"));
    ASSERT_TRUE(s.remove("never-there"));
    EXPECT_THAT(InstanceStore(d).loadAll().instances, ElementsAre(core::Instance{"b", 0, 6, true}));
    EXPECT_FALSE(s.save(core::Instance{"bad name", 0, 1, true}));
}

// ---- StateStore ---------------------------------------------------------------

class StoreTest : public ::testing::Test {
protected:
    fs::path state() const { return dir_.path() / "lib" / "assignments"; }
    fs::path runtime() const { return dir_.path() / "run" / "assignments"; }
    StateStore store() const { return StateStore(state(), runtime()); }

    test::TempDir dir_;
};

TEST_F(StoreTest, EmptyWhenNothingWasEverSaved) {
    const auto loaded = store().loadAll();
    EXPECT_THAT(loaded.assignments, IsEmpty());
    EXPECT_THAT(loaded.problems, IsEmpty());
}

TEST_F(StoreTest, SavesAndLoadsBothKinds) {
    auto s = store();
    const auto web = nginx(true);
    const auto vm = assignment("vm:db 1", core::WorkloadKind::Vm, "dedicated", kGiB, Limit{}, 3);
    ASSERT_TRUE(s.save(web));
    ASSERT_TRUE(s.save(vm));
    EXPECT_THAT(listDir(state()), ElementsAre("nginx_2eservice"));
    EXPECT_THAT(listDir(runtime()), ElementsAre("vm_3adb_201"));
    EXPECT_EQ(readText(state() / "nginx_2eservice"), formatAssignment(web));

    const auto loaded = StateStore(state(), runtime()).loadAll();
    EXPECT_THAT(loaded.problems, IsEmpty());
    EXPECT_THAT(loaded.assignments, ElementsAre(web, vm));
}

TEST_F(StoreTest, CreatesDirectoriesAndFilesWithTheirModes) {
    const mode_t saved = ::umask(077);
    const auto status = store().save(nginx(true));
    ::umask(saved);
    ASSERT_TRUE(status) << status.error().what;
    struct stat st {};
    ASSERT_EQ(::stat(state().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0755U);
    ASSERT_EQ(::stat(state().parent_path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0755U);
    ASSERT_EQ(::stat((state() / "nginx_2eservice").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644U);
    EXPECT_FALSE(fs::exists(runtime())) << "the other directory is not created for nothing";
}

TEST_F(StoreTest, ReplacesAtomicallyByRename) {
    auto s = store();
    ASSERT_TRUE(s.save(nginx()));
    struct stat before {};
    ASSERT_EQ(::stat((runtime() / "nginx_2eservice").c_str(), &before), 0);
    auto changed = nginx();
    changed.workload.className = "reclaimed";
    changed.workload.limit = std::nullopt;
    ASSERT_TRUE(s.save(changed));
    struct stat after {};
    ASSERT_EQ(::stat((runtime() / "nginx_2eservice").c_str(), &after), 0);
    // A new inode: the old file was never rewritten in place, so a reader (or
    // a crash) sees either the old or the new content.
    EXPECT_NE(before.st_ino, after.st_ino);
    EXPECT_THAT(listDir(runtime()), ElementsAre("nginx_2eservice")); // no temp left
    EXPECT_THAT(s.loadAll().assignments, ElementsAre(changed));
}

TEST_F(StoreTest, MovingBetweenPersistentAndRuntimeRemovesTheOtherCopy) {
    auto s = store();
    ASSERT_TRUE(s.save(nginx(true)));
    ASSERT_TRUE(s.save(nginx(false)));
    EXPECT_THAT(listDir(state()), IsEmpty());
    EXPECT_THAT(listDir(runtime()), ElementsAre("nginx_2eservice"));
    EXPECT_THAT(s.loadAll().assignments, ElementsAre(nginx(false)));

    ASSERT_TRUE(s.save(nginx(true)));
    EXPECT_THAT(listDir(state()), ElementsAre("nginx_2eservice"));
    EXPECT_THAT(listDir(runtime()), IsEmpty());
    EXPECT_THAT(s.loadAll().assignments, ElementsAre(nginx(true)));
}

TEST_F(StoreTest, OneDirectoryForBothKeepsTheFile) {
    const StateStore s(state(), state() / ".");
    auto copy = s;
    ASSERT_TRUE(copy.save(nginx(false)));
    ASSERT_TRUE(copy.save(nginx(true)));
    EXPECT_THAT(listDir(state()), ElementsAre("nginx_2eservice"));
    EXPECT_THAT(s.loadAll().assignments, ElementsAre(nginx(true)));
}

TEST_F(StoreTest, APersistentCopyWinsOverARuntimeOne) {
    // What a crash between the write and the removal of the other copy leaves.
    auto persistent = nginx(true);
    auto runtimeCopy = nginx(false);
    runtimeCopy.workload.priority = 9;
    test::writeFile(state() / "nginx_2eservice", formatAssignment(persistent));
    test::writeFile(runtime() / "nginx_2eservice", formatAssignment(runtimeCopy));
    const auto loaded = store().loadAll();
    EXPECT_THAT(loaded.assignments, ElementsAre(persistent));
    EXPECT_THAT(loaded.problems, IsEmpty());
}

TEST_F(StoreTest, RemoveDeletesBothCopiesAndToleratesMissingOnes) {
    auto s = store();
    EXPECT_TRUE(s.remove("nginx.service")); // no directories at all yet
    test::writeFile(state() / "nginx_2eservice", formatAssignment(nginx(true)));
    test::writeFile(runtime() / "nginx_2eservice", formatAssignment(nginx()));
    ASSERT_TRUE(s.save(assignment("a.scope", core::WorkloadKind::Scope, "shared", 0, Limit{})));
    EXPECT_TRUE(s.remove("nginx.service"));
    EXPECT_TRUE(s.remove("nginx.service"));
    EXPECT_THAT(listDir(state()), IsEmpty());
    EXPECT_THAT(listDir(runtime()), ElementsAre("a_2escope"));
}

TEST_F(StoreTest, MalformedFilesAreSkippedWithAProblemNamingThem) {
    auto s = store();
    ASSERT_TRUE(s.save(nginx(true)));
    test::writeFile(state() / "bad_2eservice", "Id=bad.service\nKind=service\nClass=shared\n"
                                               "Request=lots\nLimit=max\nPriority=0\n");
    test::writeFile(runtime() / "not-encoded.service", formatAssignment(nginx()));
    test::writeFile(runtime() / "other_2eservice", formatAssignment(nginx()));
    fs::create_directories(runtime() / "sub_2escope");

    const auto loaded = s.loadAll();
    EXPECT_THAT(loaded.assignments, ElementsAre(nginx(true)));
    ASSERT_THAT(loaded.problems, SizeIs(4));
    EXPECT_THAT(loaded.problems[0],
                HasSubstr((state() / "bad_2eservice").string() +
                          ": line 4: Request='lots': not a number of bytes, set aside as " +
                          (state() / "bad_2eservice.bad-").string()));
    EXPECT_THAT(loaded.problems[1], HasSubstr((runtime() / "not-encoded.service").string() +
                                              ": not an assignment file"));
    EXPECT_THAT(loaded.problems[2], HasSubstr((runtime() / "other_2eservice").string() +
                                              ": Id='nginx.service' does not match the file name"));
    EXPECT_THAT(loaded.problems[3], HasSubstr((runtime() / "sub_2escope").string() + ": "));
}

TEST_F(StoreTest, LeftoverTempFilesAreIgnoredAndCleaned) {
    auto s = store();
    ASSERT_TRUE(s.save(nginx(true)));
    // A save() that died between write and rename.
    test::writeFile(state() / ".tmp.1234.00000000deadbeef", "Id=nginx.serv");
    test::writeFile(runtime() / ".tmp.99.0", "");
    test::writeFile(state() / ".keep", "not ours");
    const auto loaded = s.loadAll();
    EXPECT_THAT(loaded.assignments, ElementsAre(nginx(true)));
    EXPECT_THAT(loaded.problems, IsEmpty());
    EXPECT_THAT(listDir(state()), ElementsAre(".keep", "nginx_2eservice"));
    EXPECT_THAT(listDir(runtime()), IsEmpty());
}

TEST_F(StoreTest, RefusesWhatWouldNotReadBack) {
    auto s = store();
    auto badClass = nginx();
    badClass.workload.className = "Shared\nPriority=9";
    EXPECT_FALSE(s.save(badClass));
    auto kindMismatch = nginx();
    kindMismatch.workload.kind = core::WorkloadKind::Vm;
    EXPECT_FALSE(s.save(kindMismatch));
    auto newline = nginx();
    newline.workload.id = "x.service\nId=y.service";
    const auto status = s.save(newline);
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().code, std::errc::invalid_argument);
    EXPECT_THAT(status.error().what, HasSubstr("x.service\\x0aId=y.service"));
    EXPECT_FALSE(fs::exists(runtime()));
}

TEST_F(StoreTest, RefusesIdsTooLongForAFileName) {
    // 250 bytes of name: valid for libvirt, but 3 bytes each once encoded.
    const auto a =
        assignment("vm:" + std::string(250, '-'), core::WorkloadKind::Vm, "shared", 0, Limit{});
    const auto status = store().save(a);
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().code, std::errc::filename_too_long);
    EXPECT_TRUE(store().remove(a.workload.id));
}

TEST_F(StoreTest, ErrorsNameThePath) {
    test::writeFile(dir_.path() / "lib", "a file where a directory should be");
    const auto status = store().save(nginx(true));
    ASSERT_FALSE(status);
    EXPECT_THAT(status.error().what, HasSubstr((dir_.path() / "lib").string()));
    // Loading reports it and still returns the other directory's assignments.
    ASSERT_TRUE(store().save(nginx(false)));
    const auto loaded = store().loadAll();
    EXPECT_THAT(loaded.assignments, ElementsAre(nginx(false)));
    ASSERT_THAT(loaded.problems, SizeIs(1));
    EXPECT_THAT(loaded.problems[0], HasSubstr(state().string()));
}

// ---- bad files at start, failed writes (issue 11) -----------------------------

// The names in `dir` that start with `prefix`.
std::vector<std::string> namesStarting(const fs::path& dir, const std::string& prefix) {
    std::vector<std::string> out;
    for (const auto& n : listDir(dir)) {
        if (n.starts_with(prefix)) {
            out.push_back(n);
        }
    }
    return out;
}

TEST_F(StoreTest, BadFilesAreSetAsideAndGoodOnesKept) {
    auto s = store();
    const auto good = nginx(true);
    ASSERT_TRUE(s.save(good));
    const auto db = assignment("db.service", core::WorkloadKind::Service, "dedicated", kGiB,
                               Limit{kGiB}, 0, true);
    ASSERT_TRUE(s.save(db));
    const std::string full = formatAssignment(
        assignment("corrupt.service", core::WorkloadKind::Service, "shared", 1, Limit{}));
    // corrupt: a value garbled; truncated: cut in the middle; empty: 0 bytes;
    // huge: 10 MiB (sparse: must be refused from its size, not read);
    // planted: a symlink to a good-looking file elsewhere; a FIFO (a reader
    // that opened it blocking would hang the start).
    std::string corrupt = full;
    corrupt.replace(corrupt.find("Request=1"), 9, "Request=\x01\xff");
    test::writeFile(state() / "corrupt_2eservice", corrupt);
    const std::string whole = formatAssignment(
        assignment("truncated.service", core::WorkloadKind::Service, "shared", 1, Limit{}));
    test::writeFile(state() / "truncated_2eservice", whole.substr(0, whole.find("Class=") + 3));
    test::writeFile(state() / "empty_2eservice", "");
    {
        test::writeFile(state() / "huge_2eservice", "");
        ASSERT_EQ(::truncate((state() / "huge_2eservice").c_str(), 10L * 1024 * 1024), 0);
    }
    test::writeFile(dir_.path() / "elsewhere", formatAssignment(assignment(
                                                   "link.service", core::WorkloadKind::Service,
                                                   "shared", 1, Limit{})));
    fs::create_symlink(dir_.path() / "elsewhere", state() / "link_2eservice");
    ASSERT_EQ(::mkfifo((state() / "fifo_2eservice").c_str(), 0644), 0);
    test::writeFile(runtime() / "open_2eservice",
                    formatAssignment(assignment("open.service", core::WorkloadKind::Service,
                                                "shared", 1, Limit{})));
    ASSERT_EQ(::chmod((runtime() / "open_2eservice").c_str(), 0666), 0);

    const auto loaded = s.loadAll();
    EXPECT_THAT(loaded.assignments, ElementsAre(db, good));
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"corrupt_2eservice", "not a number of bytes"},
        {"empty_2eservice", ": empty, set aside as "},
        {"fifo_2eservice", ": not a regular file, set aside as "},
        {"huge_2eservice", ": 10485760 bytes, more than the 65536 a state file may have"},
        {"link_2eservice", ": a symbolic link, set aside as "},
        {"truncated_2eservice", ": line 4: 'Cla': expected Key=Value, set aside as "},
    };
    ASSERT_THAT(loaded.problems, SizeIs(bad.size() + 1)) << ::testing::PrintToString(loaded.problems);
    for (std::size_t i = 0; i < bad.size(); ++i) {
        const auto& [name, why] = bad[i];
        EXPECT_THAT(loaded.problems[i], HasSubstr((state() / name).string() + ": "));
        EXPECT_THAT(loaded.problems[i], HasSubstr(why));
        EXPECT_THAT(loaded.problems[i], HasSubstr("set aside as " + (state() / name).string() +
                                                  ".bad-"));
        EXPECT_FALSE(fs::exists(fs::symlink_status(state() / name))) << name;
        EXPECT_THAT(namesStarting(state(), name + ".bad-"), SizeIs(1)) << name;
    }
    EXPECT_THAT(loaded.problems.back(),
                HasSubstr((runtime() / "open_2eservice").string() +
                          ": writable by other users (mode 0666), set aside as "));
    // What was set aside keeps its content, for the operator to look at.
    EXPECT_EQ(readText(state() / namesStarting(state(), "corrupt_2eservice.bad-").at(0)),
              corrupt);
    EXPECT_EQ(fs::file_size(state() / namesStarting(state(), "huge_2eservice.bad-").at(0)),
              10U * 1024 * 1024);
    // A second start finds only the good files, and says nothing.
    const auto again = s.loadAll();
    EXPECT_THAT(again.assignments, ElementsAre(db, good));
    EXPECT_THAT(again.problems, IsEmpty());
}

TEST_F(StoreTest, AFileOfAnotherUserIsSetAside) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root to give a file to another user";
    }
    auto s = store();
    ASSERT_TRUE(s.save(nginx(true)));
    const auto planted = state() / "planted_2eservice";
    test::writeFile(planted, formatAssignment(assignment("planted.service",
                                                         core::WorkloadKind::Service, "shared",
                                                         1, Limit{})));
    ASSERT_EQ(::chown(planted.c_str(), 65534, 65534), 0);
    const auto loaded = s.loadAll();
    EXPECT_THAT(loaded.assignments, ElementsAre(nginx(true)));
    ASSERT_THAT(loaded.problems, SizeIs(1));
    EXPECT_THAT(loaded.problems[0],
                HasSubstr(planted.string() + ": owned by uid 65534, not by memqosd's uid 0"));
    EXPECT_FALSE(fs::exists(planted));
    EXPECT_THAT(namesStarting(state(), "planted_2eservice.bad-"), SizeIs(1));
}

TEST_F(StoreTest, AFailedWriteLeavesTheOldFileIntact) {
    // RLIMIT_FSIZE makes write() fail (EFBIG) like a full disk (ENOSPC) does:
    // after the temp file was created, before anything was renamed.
    auto s = store();
    ASSERT_TRUE(s.save(nginx(true)));
    const auto path = state() / "nginx_2eservice";
    const std::string before = readText(path);
    auto changed = nginx(true);
    changed.workload.className = "reclaimed";
    changed.workload.request = 123456789;

    struct rlimit saved {};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
    auto* const oldHandler = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit tiny = saved;
    tiny.rlim_cur = 16;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &tiny), 0);
    const auto status = s.save(changed);
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
    std::signal(SIGXFSZ, oldHandler);

    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().code, std::errc::file_too_large);
    EXPECT_EQ(status.error().what, path.string() + ": File too large");
    EXPECT_EQ(readText(path), before);
    EXPECT_THAT(listDir(state()), ElementsAre("nginx_2eservice")) << "temp file left behind";
    EXPECT_THAT(s.loadAll().assignments, ElementsAre(nginx(true)));
}

TEST_F(StoreTest, AReadOnlyDirectoryRefusesWritesAndKeepsTheFiles) {
    auto s = store();
    ASSERT_TRUE(s.save(nginx(true)));
    const auto path = state() / "nginx_2eservice";
    const std::string before = readText(path);
    // Root ignores permission bits: the checks run in a child that becomes
    // nobody (when it is root) in a tree nobody owns but may not write.
    if (::geteuid() == 0) {
        for (const auto& p : {dir_.path(), dir_.path() / "lib", state(), path}) {
            ASSERT_EQ(::chown(p.c_str(), 65534, 65534), 0) << p;
        }
    }
    ASSERT_EQ(::chmod(state().c_str(), 0555), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) {
            ::_exit(10);
        }
        auto changed = nginx(true);
        changed.workload.priority = 7;
        const auto saved = s.save(changed);
        if (saved || saved.error().code != std::errc::permission_denied ||
            saved.error().what != path.string() + ": Permission denied") {
            ::_exit(11);
        }
        const auto removed = s.remove("nginx.service");
        if (removed || removed.error().what != path.string() + ": Permission denied") {
            ::_exit(12);
        }
        if (readText(path) != before || listDir(state()).size() != 1) {
            ::_exit(13);
        }
        ::_exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ::chmod(state().c_str(), 0755);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "10: setuid, 11: save, 12: remove, 13: file changed";
    EXPECT_EQ(readText(path), before);
}

// ---- OriginalStore (issue 11: give units back what they had) -------------

UnitOriginal sliceOriginal() {
    UnitOriginal o;
    o.unit = "system.slice";
    o.values.memoryMin = 64 * kMiB;
    o.values.memoryLow = kGiB;
    o.values.memoryHigh = Limit{};
    o.values.memoryMax = Limit(300 * kMiB);
    o.values.memorySwapMax = Limit{};
    return o;
}

TEST_F(StoreTest, OriginalsRoundTripAndAreRemoved) {
    OriginalStore s(dir_.path() / "lib" / "originals");
    ASSERT_TRUE(s.save(sliceOriginal()));
    EXPECT_EQ(readText(dir_.path() / "lib" / "originals" / "system_2eslice"),
              formatUnitOriginal(sliceOriginal()));
    auto loaded = s.loadAll();
    EXPECT_THAT(loaded.problems, IsEmpty());
    EXPECT_THAT(loaded.originals, ElementsAre(sliceOriginal()));
    ASSERT_TRUE(s.remove("system.slice"));
    ASSERT_TRUE(s.remove("system.slice")); // gone already: not an error
    EXPECT_THAT(s.loadAll().originals, IsEmpty());
}

TEST_F(StoreTest, AnIncompleteOriginalIsNeitherStoredNorRead) {
    OriginalStore s(dir_.path() / "lib" / "originals");
    auto o = sliceOriginal();
    o.values.memoryMax.reset();
    EXPECT_FALSE(s.save(o));
    EXPECT_FALSE(parseUnitOriginal("Unit=a.service\nMemoryMin=0\nMemoryLow=0\n"));
    EXPECT_FALSE(parseUnitOriginal("Unit=../x.service\nMemoryMin=0\nMemoryLow=0\n"
                                   "MemoryHigh=max\nMemoryMax=max\nMemorySwapMax=max\n"));
    EXPECT_FALSE(parseUnitOriginal("Unit=a.service\nMemoryMin=0\nMemoryLow=0\n"
                                   "MemoryHigh=lots\nMemoryMax=max\nMemorySwapMax=max\n"));
    auto ok = parseUnitOriginal("Unit=a.service\nMemoryMin=1\nMemoryLow=2\n"
                                "MemoryHigh=3\nMemoryMax=max\nMemorySwapMax=0\n"
                                "KeepDropIns=50-MemoryMax.conf\n");
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->values.memorySwapMax, std::optional<Limit>(Limit(0)));
    EXPECT_EQ(ok->values.memoryMax, std::optional<Limit>(Limit{}));
    EXPECT_EQ(ok->keepDropIns, std::vector<std::string>{"50-MemoryMax.conf"});
}

} // namespace
} // namespace memqos::io

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
#include <sys/stat.h>
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
                          ": line 4: Request='lots': not a number of bytes, ignoring"));
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

} // namespace
} // namespace memqos::io

// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/file.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "fixture_tree.hpp"

namespace memqos::io {
namespace {

using test::TempDir;

TEST(ReadFile, ReadsWholeFileLargerThanOneBuffer) {
    TempDir tmp;
    std::string content(100000, 'x');
    content += "end";
    test::writeFile(tmp.path() / "big", content);
    auto r = readFile(tmp.path() / "big");
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(*r, content);
}

TEST(ReadFile, EmptyFile) {
    TempDir tmp;
    test::writeFile(tmp.path() / "empty", "");
    auto r = readFile(tmp.path() / "empty");
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(*r, "");
}

TEST(ReadFile, MissingFileIsVanished) {
    TempDir tmp;
    const auto path = tmp.path() / "gone";
    auto r = readFile(path);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, std::errc::no_such_file_or_directory);
    EXPECT_TRUE(isVanished(r.error()));
    EXPECT_NE(r.error().what.find(path.string()), std::string::npos) << r.error().what;
}

TEST(ReadFile, TooLarge) {
    TempDir tmp;
    test::writeFile(tmp.path() / "f", "12345");
    EXPECT_EQ(*readFile(tmp.path() / "f", 5), "12345");
    auto r = readFile(tmp.path() / "f", 4);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, std::errc::file_too_large);
    EXPECT_FALSE(isVanished(r.error()));
    EXPECT_EQ(r.error().what, (tmp.path() / "f").string() + ": larger than 4 bytes");
}

TEST(ReadFile, DirectoryIsAnErrorNotVanished) {
    TempDir tmp;
    auto r = readFile(tmp.path());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, std::errc::is_a_directory);
    EXPECT_FALSE(isVanished(r.error()));
}

TEST(IsVanished, OnlyEnoentAndEnodev) {
    EXPECT_TRUE(isVanished(makeError(std::errc::no_such_file_or_directory, "")));
    EXPECT_TRUE(isVanished(makeError(std::errc::no_such_device, "")));
    EXPECT_FALSE(isVanished(makeError(std::errc::permission_denied, "")));
    EXPECT_FALSE(isVanished(invalid("x")));
}

TEST(ErrnoError, NamesPathAndReason) {
    const auto e = errnoError(ENODEV, "/sys/fs/cgroup/x/memory.stat");
    EXPECT_EQ(e.code, std::errc::no_such_device);
    EXPECT_EQ(e.what, "/sys/fs/cgroup/x/memory.stat: No such device");
}

// --- preadWhole / readSmall / OpenFiles (issue 25) ---

TEST(ReadSmall, FileLongerThanTheStackPartIsReadWhole) {
    TempDir tmp;
    std::string content(ReadBuffer{}.stack.size() * 3 + 17, 'y');
    content += "end";
    test::writeFile(tmp.path() / "big", content);
    ReadBuffer buf;
    auto r = readSmall((tmp.path() / "big").string(), buf);
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(*r, content);
}

TEST(ReadSmall, ExactlyTheStackPartAndEmpty) {
    TempDir tmp;
    const std::string exact(ReadBuffer{}.stack.size(), 'z');
    test::writeFile(tmp.path() / "exact", exact);
    test::writeFile(tmp.path() / "empty", "");
    ReadBuffer buf;
    auto r = readSmall((tmp.path() / "exact").string(), buf);
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(*r, exact);
    auto e = readSmall((tmp.path() / "empty").string(), buf);
    ASSERT_TRUE(e) << e.error().what;
    EXPECT_EQ(*e, "");
}

TEST(ReadSmall, TooLargeAndMissing) {
    TempDir tmp;
    test::writeFile(tmp.path() / "f", std::string(100, 'a'));
    ReadBuffer buf;
    auto big = readSmall((tmp.path() / "f").string(), buf, 99);
    ASSERT_FALSE(big);
    EXPECT_EQ(big.error().code, std::errc::file_too_large);
    auto gone = readSmall((tmp.path() / "gone").string(), buf);
    ASSERT_FALSE(gone);
    EXPECT_TRUE(isVanished(gone.error()));
}

TEST(OpenFiles, KeepsTheFdAndReadsWhatTheFileSaysNow) {
    TempDir tmp;
    const std::string path = (tmp.path() / "memory.current").string();
    test::writeFile(path, "100\n");
    OpenFiles files(true);
    ReadBuffer buf;
    auto a = files.read(path, buf);
    ASSERT_TRUE(a) << a.error().what;
    EXPECT_EQ(*a, "100\n");
    EXPECT_TRUE(files.contains(path));
    test::writeFile(path, "2000\n"); // rewritten in place, as the kernel's value moves
    auto b = files.read(path, buf);
    ASSERT_TRUE(b) << b.error().what;
    EXPECT_EQ(*b, "2000\n");
    EXPECT_EQ(files.size(), 1U);
}

TEST(OpenFiles, VanishedFileDropsItsEntry) {
    TempDir tmp;
    const auto dir = tmp.path() / "memqos-shared.slice";
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "memory.current").string();
    test::writeFile(path, "100\n");
    OpenFiles files(true); // not kernfs: a removed file is seen by its link count
    ReadBuffer buf;
    ASSERT_TRUE(files.read(path, buf));
    ASSERT_EQ(files.size(), 1U);
    std::filesystem::remove_all(dir);
    auto r = files.read(path, buf);
    ASSERT_FALSE(r) << "read a removed cgroup's file through its old fd: " << *r;
    EXPECT_TRUE(isVanished(r.error())) << r.error().what;
    EXPECT_EQ(files.size(), 0U);
}

TEST(OpenFiles, CgroupCreatedAgainIsReadAfresh) {
    TempDir tmp;
    const auto dir = tmp.path() / "nginx.service";
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "memory.current").string();
    test::writeFile(path, "100\n");
    OpenFiles files(true);
    ReadBuffer buf;
    ASSERT_TRUE(files.read(path, buf));
    std::filesystem::remove_all(dir); // the unit stopped and started again
    std::filesystem::create_directories(dir);
    test::writeFile(path, "7\n");
    auto r = files.read(path, buf);
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(*r, "7\n");
    EXPECT_EQ(files.size(), 1U);
}

TEST(OpenFiles, ReplacedByRenameIsReadAfresh) {
    TempDir tmp;
    const std::string path = (tmp.path() / "meminfo").string();
    test::writeFile(path, "old\n");
    OpenFiles files(true);
    ReadBuffer buf;
    ASSERT_TRUE(files.read(path, buf));
    test::writeFile(tmp.path() / "meminfo.new", "new\n");
    std::filesystem::rename(tmp.path() / "meminfo.new", path);
    auto r = files.read(path, buf);
    ASSERT_TRUE(r) << r.error().what;
    EXPECT_EQ(*r, "new\n");
}

TEST(OpenFiles, CapacityBoundsTheKeptFds) {
    TempDir tmp;
    OpenFiles files(true, 2);
    ReadBuffer buf;
    for (const char* name : {"a", "b", "c"}) {
        test::writeFile(tmp.path() / name, name);
        auto r = files.read((tmp.path() / name).string(), buf);
        ASSERT_TRUE(r) << r.error().what;
        EXPECT_EQ(*r, name);
    }
    EXPECT_EQ(files.size(), 2U);
    EXPECT_FALSE(files.contains((tmp.path() / "c").string()));
}

TEST(OpenFiles, ForgetUnderClosesOnlyThatDirectory) {
    TempDir tmp;
    OpenFiles files(true);
    ReadBuffer buf;
    for (const char* rel : {"a/x", "a/y", "ab/x", "b/x"}) {
        test::writeFile(tmp.path() / rel, "1");
        ASSERT_TRUE(files.read((tmp.path() / rel).string(), buf));
    }
    files.forgetUnder((tmp.path() / "a").string());
    EXPECT_EQ(files.size(), 2U);
    EXPECT_TRUE(files.contains((tmp.path() / "ab/x").string()));
    EXPECT_TRUE(files.contains((tmp.path() / "b/x").string()));
}

TEST(OpenFiles, CopyKeepsNoFd) {
    TempDir tmp;
    test::writeFile(tmp.path() / "f", "1");
    OpenFiles files(true);
    ReadBuffer buf;
    ASSERT_TRUE(files.read((tmp.path() / "f").string(), buf));
    const OpenFiles copy(files); // e.g. a CgroupFs copied to the reclaim worker
    EXPECT_EQ(copy.size(), 0U);
    EXPECT_EQ(files.size(), 1U);
}

TEST(IsKernfs, TmpDirIsNot) {
    TempDir tmp;
    EXPECT_FALSE(isKernfs(tmp.path()));
    EXPECT_FALSE(isKernfs(tmp.path() / "missing"));
    EXPECT_TRUE(isKernfs("/proc"));
}

} // namespace
} // namespace memqos::io

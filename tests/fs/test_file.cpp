// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/file.hpp"

#include <gtest/gtest.h>

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

} // namespace
} // namespace memqos::io

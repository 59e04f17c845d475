// SPDX-License-Identifier: Apache-2.0
// KernelKnobs::killCgroup on a temp tree: a regular file stands in for
// cgroup.kill (the write "succeeds" and the file keeps what was written).
#include "memqos/io/file.hpp"
#include "memqos/io/kernel_knobs.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "fixture_tree.hpp"

namespace memqos::io {
namespace {

using test::TempDir;
using test::writeFile;

class KillCgroup : public testing::Test {
protected:
    TempDir tmp_;
    KernelKnobs knobs_{tmp_.path(), tmp_.path()};
};

TEST_F(KillCgroup, WritesOneToCgroupKill) {
    writeFile(tmp_.path() / "a.slice/w.service/cgroup.kill", "");
    auto w = knobs_.killCgroup("a.slice/w.service");
    ASSERT_TRUE(w.ok()) << w.error().what;
    EXPECT_EQ(*w, Written::Changed);
    auto text = readFile(tmp_.path() / "a.slice/w.service/cgroup.kill");
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(*text, "1");
}

TEST_F(KillCgroup, AGoneCgroupIsVanishedNotAnError) {
    auto w = knobs_.killCgroup("a.slice/gone.service");
    ASSERT_TRUE(w.ok()) << w.error().what;
    EXPECT_EQ(*w, Written::Vanished);
}

TEST_F(KillCgroup, ACgroupWithoutTheFileIsAClearError) {
    std::filesystem::create_directories(tmp_.path() / "a.slice/old.service");
    auto w = knobs_.killCgroup("a.slice/old.service");
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.error().code, std::errc::function_not_supported);
    EXPECT_NE(w.error().what.find("old.service/cgroup.kill"), std::string::npos) << w.error().what;
    EXPECT_NE(w.error().what.find("Linux 5.14"), std::string::npos) << w.error().what;
}

TEST_F(KillCgroup, PathsOutsideTheRootAreRefused) {
    for (const char* bad : {"", "..", "../etc", "/a.slice", "a.slice/../../x"}) {
        auto w = knobs_.killCgroup(bad);
        ASSERT_FALSE(w.ok()) << bad;
        EXPECT_EQ(w.error().code, std::errc::invalid_argument) << bad;
    }
}

TEST_F(KillCgroup, AFailedWriteNamesTheFile) {
    // A directory where the file should be: open(O_WRONLY) fails with
    // EISDIR, whoever runs the test (root passes permission checks).
    std::filesystem::create_directories(tmp_.path() / "a.slice/w.service/cgroup.kill");
    auto w = knobs_.killCgroup("a.slice/w.service");
    ASSERT_FALSE(w.ok());
    EXPECT_NE(w.error().what.find("w.service/cgroup.kill"), std::string::npos) << w.error().what;
}

} // namespace
} // namespace memqos::io

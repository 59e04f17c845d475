// SPDX-License-Identifier: Apache-2.0
// memqos's runtime drop-ins (issue 24 items 1 and 2): marked when systemd
// wrote them for memqos, someone else's kept aside before memqos's call
// overwrites them and put back when memqos gives the unit back.
#include "memqos/io/drop_ins.hpp"
#include "memqos/io/file.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace memqos;
using io::MemoryKey;
using io::RuntimeDropIns;

namespace {

class DropIns : public testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/memqos-dropins-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        fs::create_directories(dir_ / "nginx.service.d");
    }
    void TearDown() override { fs::remove_all(dir_); }
    void write(const std::string& name, const std::string& text) {
        std::ofstream(dir_ / "nginx.service.d" / name) << text;
    }
    std::string text(const std::string& name) {
        auto t = io::readFile(dir_ / "nginx.service.d" / name);
        return t ? *t : "<gone>";
    }
    // What systemd writes for SetUnitProperties(MemoryLow=VALUE).
    static std::string systemdFile(const std::string& line) {
        return "# This is a drop-in unit file extension, created via \"systemctl set-property\"\n"
               "# or an equivalent operation. Do not edit.\n[Service]\n" +
               line + "\n";
    }
    fs::path dir_;
};

TEST(DropInValue, ReadsBytesAndInfinityAndNothingElse) {
    EXPECT_EQ(io::dropInValue("[Service]\nMemoryLow=1073741824\n", MemoryKey::Low),
              std::optional<Limit>(Limit(1073741824)));
    EXPECT_EQ(io::dropInValue("[Slice]\nMemoryHigh=infinity\n", MemoryKey::High),
              std::optional<Limit>(Limit{}));
    EXPECT_EQ(io::dropInValue("[Service]\nMemoryMax=500M\n", MemoryKey::Max), std::nullopt);
    EXPECT_EQ(io::dropInValue("[Service]\nMemoryMax=20%\n", MemoryKey::Max), std::nullopt);
    EXPECT_EQ(io::dropInValue("[Service]\nMemoryLow=5\n", MemoryKey::Min), std::nullopt);
    EXPECT_EQ(io::dropInValue("MemoryLow=1\nMemoryLow=2\n", MemoryKey::Low),
              std::optional<Limit>(Limit(2)))
        << "the last assignment wins, as in systemd";
    EXPECT_EQ(io::dropInValue("MemoryLow=99999999999999999999999\n", MemoryKey::Low),
              std::nullopt);
}

TEST_F(DropIns, MemqossOwnFileIsMarkedAndRemovedOnGiveBack) {
    const RuntimeDropIns d(dir_);
    write("50-MemoryLow.conf", systemdFile("MemoryLow=268435456"));
    EXPECT_EQ(d.read("nginx.service", MemoryKey::Low).owner, RuntimeDropIns::Owner::Other);
    ASSERT_TRUE(d.markOwn("nginx.service", MemoryKey::Low, Limit(268435456)).ok());
    const auto st = d.read("nginx.service", MemoryKey::Low);
    EXPECT_EQ(st.owner, RuntimeDropIns::Owner::Memqos);
    EXPECT_EQ(st.value, std::optional<Limit>(Limit(268435456)));
    EXPECT_TRUE(d.anyOwn("nginx.service"));
    auto r = d.giveBack("nginx.service", MemoryKey::Low);
    ASSERT_TRUE(r);
    EXPECT_TRUE(*r);
    EXPECT_FALSE(fs::exists(dir_ / "nginx.service.d/50-MemoryLow.conf"));
    EXPECT_FALSE(d.anyOwn("nginx.service"));
}

TEST_F(DropIns, AFileThatSetsAnotherValueIsNotMarked) {
    const RuntimeDropIns d(dir_);
    write("50-MemoryLow.conf", systemdFile("MemoryLow=1"));
    ASSERT_TRUE(d.markOwn("nginx.service", MemoryKey::Low, Limit(2)).ok());
    EXPECT_EQ(d.read("nginx.service", MemoryKey::Low).owner, RuntimeDropIns::Owner::Other);
    auto r = d.giveBack("nginx.service", MemoryKey::Low);
    ASSERT_TRUE(r);
    EXPECT_FALSE(*r);
    EXPECT_EQ(text("50-MemoryLow.conf"), systemdFile("MemoryLow=1")) << "someone else's stays";
}

TEST_F(DropIns, SomeoneElsesFileIsKeptAsideAndPutBack) {
    const RuntimeDropIns d(dir_);
    const std::string admins = "[Service]\nMemoryMax=500M\n";
    write("50-MemoryMax.conf", admins);
    ASSERT_TRUE(d.saveOthers("nginx.service", MemoryKey::Max).ok());
    // memqos's call: systemd replaces the file, memqos marks it.
    write("50-MemoryMax.conf", systemdFile("MemoryMax=1073741824"));
    ASSERT_TRUE(d.markOwn("nginx.service", MemoryKey::Max, Limit(1073741824)).ok());
    ASSERT_TRUE(d.saveOthers("nginx.service", MemoryKey::Max).ok()); // memqos's: not copied
    auto r = d.giveBack("nginx.service", MemoryKey::Max);
    ASSERT_TRUE(r);
    EXPECT_TRUE(*r);
    EXPECT_EQ(text("50-MemoryMax.conf"), admins);
    EXPECT_FALSE(fs::exists(dir_ / ("nginx.service.d/50-MemoryMax.conf" +
                                    std::string(io::kSavedSuffix))));
}

TEST_F(DropIns, AnUnmarkedFileOfAnOlderMemqosIsAdopted) {
    const RuntimeDropIns d(dir_);
    write("50-MemoryHigh.conf", systemdFile("MemoryHigh=infinity"));
    ASSERT_TRUE(d.adoptUnmarked("nginx.service", MemoryKey::High).ok());
    EXPECT_EQ(d.read("nginx.service", MemoryKey::High).owner, RuntimeDropIns::Owner::Memqos);
    EXPECT_EQ(d.read("nginx.service", MemoryKey::Min).owner, RuntimeDropIns::Owner::None);
}

// A transient unit's runtime drop-ins are in /run/systemd/transient (the VM
// suite's 20-tiers found memqos's left there after unassigning a systemd-run
// unit when only system.control was looked at).
TEST_F(DropIns, ATransientUnitsFilesInTheSecondDirectoryAreMarkedAndGivenBack) {
    const fs::path control = dir_ / "control";
    const fs::path transient = dir_ / "transient";
    fs::create_directories(transient / "web.service.d");
    std::ofstream(transient / "web.service.d/50-MemoryLow.conf")
        << systemdFile("MemoryLow=268435456");
    const RuntimeDropIns d(std::vector<fs::path>{control, transient});
    ASSERT_TRUE(d.markOwn("web.service", MemoryKey::Low, Limit(268435456)).ok());
    EXPECT_EQ(d.read("web.service", MemoryKey::Low).owner, RuntimeDropIns::Owner::Memqos);
    EXPECT_TRUE(d.anyOwn("web.service"));
    auto r = d.giveBack("web.service", MemoryKey::Low);
    ASSERT_TRUE(r);
    EXPECT_TRUE(*r);
    EXPECT_FALSE(fs::exists(transient / "web.service.d/50-MemoryLow.conf"));
}

// The copy of someone else's file whose drop-in is gone (a transient unit
// unloaded, a revert) is stale: dropped, never put back.
TEST_F(DropIns, AKeptCopyWhoseDropInIsGoneIsDroppedNotPutBack) {
    const RuntimeDropIns d(dir_);
    write("50-MemoryMax.conf", "[Service]\nMemoryMax=536870912\n");
    ASSERT_TRUE(d.saveOthers("nginx.service", MemoryKey::Max).ok());
    fs::remove(dir_ / "nginx.service.d/50-MemoryMax.conf"); // systemd unloaded the unit
    d.dropStaleCopies("nginx.service");
    EXPECT_FALSE(fs::exists(dir_ / "nginx.service.d")) << "the empty .d directory stays";
    // The same through giveBack.
    write("50-MemoryMax.conf", "[Service]\nMemoryMax=536870912\n");
    ASSERT_TRUE(d.saveOthers("nginx.service", MemoryKey::Max).ok());
    fs::remove(dir_ / "nginx.service.d/50-MemoryMax.conf");
    auto r = d.giveBack("nginx.service", MemoryKey::Max);
    ASSERT_TRUE(r);
    EXPECT_FALSE(*r);
    EXPECT_FALSE(fs::exists(dir_ / "nginx.service.d/50-MemoryMax.conf"));
    EXPECT_FALSE(fs::exists(dir_ / ("nginx.service.d/50-MemoryMax.conf" +
                                    std::string(io::kSavedSuffix))));
}

} // namespace

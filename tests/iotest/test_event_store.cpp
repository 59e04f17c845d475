// SPDX-License-Identifier: Apache-2.0
// The kill history: file format, bound, tolerance of bad records, atomicity.
#include "memqos/io/event_store.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace memqos;
using io::KillRecord;

namespace {

KillRecord record(std::uint64_t t, const std::string& id) {
    return KillRecord{.timeUsec = t,
                      .id = id,
                      .className = "reclaimed",
                      .unit = id,
                      .reason = "kill " + id + ": tab\there, newline\nthere, back\\slash",
                      .numbers = {{"pressure_level", 3}, {"usage", 104857600}}};
}

class EventStoreTest : public testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/memqos-kills-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
};

TEST_F(EventStoreTest, RoundTripAcrossARestart) {
    io::EventStore store(dir_ / "state/kills");
    EXPECT_TRUE(store.load().records.empty()) << "a missing file is an empty history";
    ASSERT_TRUE(store.append(record(1, "a.service")).ok());
    ASSERT_TRUE(store.append(record(2, "vm:b")).ok());
    io::EventStore again(dir_ / "state/kills");
    const auto loaded = again.load();
    EXPECT_TRUE(loaded.problems.empty());
    ASSERT_EQ(loaded.records.size(), 2U);
    EXPECT_EQ(loaded.records[0], record(1, "a.service"));
    EXPECT_EQ(loaded.records[1], record(2, "vm:b"));
    EXPECT_EQ(again.records().size(), 2U);
    for (const auto& e : fs::directory_iterator(dir_ / "state")) {
        EXPECT_EQ(e.path().filename(), "kills") << "temp file left behind";
    }
}

TEST_F(EventStoreTest, KeepsOnlyTheNewest) {
    io::EventStore store(dir_ / "kills");
    for (std::uint64_t i = 0; i < io::kMaxKillRecords + 5; ++i) {
        ASSERT_TRUE(store.append(record(i, "x.service")).ok());
    }
    io::EventStore again(dir_ / "kills");
    const auto loaded = again.load();
    ASSERT_EQ(loaded.records.size(), io::kMaxKillRecords);
    EXPECT_EQ(loaded.records.front().timeUsec, 5U);
    EXPECT_EQ(loaded.records.back().timeUsec, io::kMaxKillRecords + 4);
}

TEST_F(EventStoreTest, BadRecordsAreSkippedAndNamed) {
    std::ofstream(dir_ / "kills") << "# comment\n"
                                     "1\ta.service\treclaimed\ta.service\tr\tx=1\n"
                                     "zz\tb.service\treclaimed\tb.service\tr\t\n"
                                     "2\tc.service\treclaimed\n"
                                     "3\td.service\treclaimed\td.service\tbad \\q\t\n"
                                     "4\te.service\treclaimed\te.service\tr\tX=1\n"
                                     "5\tf.service\treclaimed\tf.service\tr\t\n";
    io::EventStore store(dir_ / "kills");
    const auto loaded = store.load();
    ASSERT_EQ(loaded.records.size(), 2U);
    EXPECT_EQ(loaded.records[0].id, "a.service");
    EXPECT_EQ(loaded.records[1].id, "f.service");
    ASSERT_EQ(loaded.problems.size(), 4U);
    EXPECT_NE(loaded.problems[0].find("line 3"), std::string::npos) << loaded.problems[0];
}

TEST_F(EventStoreTest, AddIsInMemoryAtOnceAndWriteTextStoresIt) {
    io::EventStore store(dir_ / "kills");
    const auto first = store.add(record(1, "a.service"));
    const auto second = store.add(record(2, "vm:b"));
    ASSERT_EQ(store.records().size(), 2U);
    EXPECT_FALSE(std::filesystem::exists(dir_ / "kills")) << "add() wrote the file";
    ASSERT_TRUE(store.writeText(first).ok());
    ASSERT_TRUE(store.writeText(second).ok());
    io::EventStore again(dir_ / "kills");
    const auto loaded = again.load();
    ASSERT_EQ(loaded.records.size(), 2U);
    EXPECT_EQ(loaded.records[1].id, "vm:b");

    io::EventStore blocked(dir_ / "kills/x"); // "kills" is a file
    const auto text = blocked.add(record(3, "c.service"));
    EXPECT_FALSE(blocked.writeText(text).ok());
    EXPECT_EQ(blocked.records().size(), 1U) << "the history keeps what happened";
}

TEST_F(EventStoreTest, AppendToAPathThatIsAFileFails) {
    std::ofstream(dir_ / "blocker") << "x";
    io::EventStore store(dir_ / "blocker/kills");
    EXPECT_FALSE(store.append(record(1, "a.service")).ok());
    EXPECT_TRUE(store.records().empty()) << "the in-memory history is unchanged";
}

} // namespace

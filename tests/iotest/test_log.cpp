// SPDX-License-Identifier: Apache-2.0
// memqos::log: substitute(), field names, and the stderr path (stderr is
// redirected to a temp file for each test).

#include "memqos/io/log.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "fixture_tree.hpp"

namespace memqos::log {
namespace {

using ::testing::Optional;

TEST(Substitute, ReplacesKnownKeys) {
    EXPECT_EQ(substitute("Killed {UNIT} at {AVG10}%", {{"UNIT", "hog.service"}, {"AVG10", "42.5"}}),
              "Killed hog.service at 42.5%");
}

TEST(Substitute, RepeatedAndAdjacentKeys) {
    EXPECT_EQ(substitute("{A}{B}{A}", {{"A", "1"}, {"B", "2"}}), "121");
}

TEST(Substitute, LeavesUnknownKeysAndStrayBracesAsWritten) {
    const std::vector<Field> f{{"UNIT", "u"}};
    EXPECT_EQ(substitute("{NOPE} {UNIT}", f), "{NOPE} u");
    EXPECT_EQ(substitute("{} {", f), "{} {");
    EXPECT_EQ(substitute("a } b", f), "a } b");
    EXPECT_EQ(substitute("{{UNIT}}", f), "{u}");
    EXPECT_EQ(substitute("{UNIT", f), "{UNIT");
    EXPECT_EQ(substitute("", f), "");
}

TEST(Substitute, IsCaseSensitiveAndFirstFieldWins) {
    EXPECT_EQ(substitute("{unit}/{UNIT}", {{"UNIT", "first"}, {"UNIT", "second"}}), "{unit}/first");
}

TEST(Substitute, ValuesAreNotSubstitutedAgain) {
    EXPECT_EQ(substitute("{A}", {{"A", "{B}"}, {"B", "x"}}), "{B}");
}

TEST(JournalFieldName, UppercasesAndSanitizes) {
    EXPECT_THAT(journalFieldName("UNIT"), Optional(std::string("UNIT")));
    EXPECT_THAT(journalFieldName("unit"), Optional(std::string("UNIT")));
    EXPECT_THAT(journalFieldName("avg-10"), Optional(std::string("AVG_10")));
    EXPECT_THAT(journalFieldName("swap used"), Optional(std::string("SWAP_USED")));
    EXPECT_THAT(journalFieldName("MESSAGE_ID"), Optional(std::string("MESSAGE_ID")));
}

TEST(JournalFieldName, NeverClaimsTrustedFieldsOrStartsWithADigit) {
    EXPECT_THAT(journalFieldName("_PID"), Optional(std::string("PID")));
    EXPECT_THAT(journalFieldName("__x"), Optional(std::string("X")));
    EXPECT_THAT(journalFieldName("10s"), Optional(std::string("S")));
    EXPECT_THAT(journalFieldName("-a"), Optional(std::string("A")));
}

TEST(JournalFieldName, DropsEmptyAndOwnFields) {
    EXPECT_EQ(journalFieldName(""), std::nullopt);
    EXPECT_EQ(journalFieldName("___"), std::nullopt);
    EXPECT_EQ(journalFieldName("123"), std::nullopt);
    EXPECT_EQ(journalFieldName("message"), std::nullopt);
    EXPECT_EQ(journalFieldName("PRIORITY"), std::nullopt);
    EXPECT_EQ(journalFieldName("CODE_LINE"), std::nullopt);
    EXPECT_EQ(journalFieldName("SYSLOG_IDENTIFIER"), std::nullopt);
}

TEST(JournalFieldName, CutsAt64Bytes) {
    const auto name = journalFieldName(std::string(100, 'k'));
    ASSERT_TRUE(name);
    EXPECT_EQ(*name, std::string(64, 'K'));
}

// Redirects stderr to a temp file for the test's lifetime.
class StderrTest : public ::testing::Test {
protected:
    void SetUp() override {
        fflush(stderr);
        path_ = dir_.path() / "stderr";
        const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ASSERT_GE(fd, 0);
        saved_ = ::dup(STDERR_FILENO);
        ASSERT_GE(saved_, 0);
        ASSERT_EQ(::dup2(fd, STDERR_FILENO), STDERR_FILENO);
        ::close(fd);
        if (const char* js = std::getenv("JOURNAL_STREAM")) {
            savedJournalStream_ = js;
        }
        ::unsetenv("JOURNAL_STREAM");
        setMinimumLevel(Level::Info);
        setIdentifier("memqosd");
    }
    void TearDown() override {
        if (saved_ >= 0) {
            ::dup2(saved_, STDERR_FILENO);
            ::close(saved_);
        }
        if (savedJournalStream_) {
            ::setenv("JOURNAL_STREAM", savedJournalStream_->c_str(), 1);
        }
        setMinimumLevel(Level::Info);
        setIdentifier("memqosd");
    }
    std::string output() const {
        std::ifstream in(path_);
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }

    test::TempDir dir_;
    std::filesystem::path path_;
    int saved_ = -1;
    std::optional<std::string> savedJournalStream_;
};

TEST_F(StderrTest, WritesOneLineWithLevelAndSubstitutedMessage) {
    warning("Failed to apply tiers to {UNIT}: {ERROR}", "UNIT", "nginx.service", "ERROR",
            "Access denied");
    info("Pressure {AVG10} on {N} units, swap {SWAP}", "AVG10", 12.5, "N", 3, "SWAP", true);
    EXPECT_EQ(output(), "memqosd[warning]: Failed to apply tiers to nginx.service: Access denied\n"
                        "memqosd[info]: Pressure 12.500000 on 3 units, swap yes\n");
}

TEST_F(StderrTest, EveryLevelHasItsName) {
    setMinimumLevel(Level::Debug);
    debug("d");
    info("i");
    notice("n");
    warning("w");
    error("e");
    EXPECT_EQ(output(), "memqosd[debug]: d\nmemqosd[info]: i\nmemqosd[notice]: n\n"
                        "memqosd[warning]: w\nmemqosd[error]: e\n");
}

TEST_F(StderrTest, DropsMessagesBelowTheMinimumLevel) {
    setMinimumLevel(Level::Warning);
    EXPECT_FALSE(isEnabled(Level::Notice));
    EXPECT_TRUE(isEnabled(Level::Error));
    debug("no");
    info("no");
    notice("no");
    warning("yes {K}", "K", "v");
    error("yes");
    EXPECT_EQ(output(), "memqosd[warning]: yes v\nmemqosd[error]: yes\n");
}

TEST_F(StderrTest, FieldsAreAppendedOnlyAtDebugLevel) {
    info("started {UNIT}", "UNIT", "a.service", "MESSAGE_ID", kMessageKill);
    setMinimumLevel(Level::Debug);
    info("started {UNIT}", "UNIT", "a.service", "BYTES", std::uint64_t{4096});
    EXPECT_EQ(output(), "memqosd[info]: started a.service\n"
                        "memqosd[info]: started a.service UNIT=a.service BYTES=4096\n");
}

TEST_F(StderrTest, NewlinesAndControlBytesStayOnOneLine) {
    error("bad value {V}", "V", "a\nb\x01");
    EXPECT_EQ(output(), "memqosd[error]: bad value a\\nb\\x01\n");
}

TEST_F(StderrTest, UsesTheIdentifier) {
    setIdentifier("memqosctl");
    notice("hello");
    EXPECT_EQ(output(), "memqosctl[notice]: hello\n");
}

TEST_F(StderrTest, KeepsErrno) {
    errno = ENOENT;
    warning("x");
    EXPECT_EQ(errno, ENOENT);
}

TEST_F(StderrTest, AJournalStreamOfAnotherFileIsNotTheJournal) {
    // JOURNAL_STREAM is inherited by children whose stderr is something else.
    ::setenv("JOURNAL_STREAM", "1:2", 1);
    warning("to stderr");
    ::setenv("JOURNAL_STREAM", "garbage", 1);
    warning("still stderr");
    EXPECT_EQ(output(), "memqosd[warning]: to stderr\nmemqosd[warning]: still stderr\n");
}

TEST_F(StderrTest, WhenStderrIsTheJournalMessagesGoToJournald) {
    struct stat st {};
    ASSERT_EQ(::fstat(STDERR_FILENO, &st), 0);
    const std::string stream = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
    ::setenv("JOURNAL_STREAM", stream.c_str(), 1);
    warning("via journal {UNIT}", "UNIT", "x.service");
    // Sent with sd_journal_sendv(), not written to stderr. (Where journald
    // is not running, sd_journal_sendv() drops the message and returns 0, as
    // systemd's own tools do; there is nothing more to observe here.)
    EXPECT_EQ(output(), "");
    ::setenv("JOURNAL_STREAM", (stream + "1").c_str(), 1);
    warning("back on stderr");
    EXPECT_EQ(output(), "memqosd[warning]: back on stderr\n");
}

TEST_F(StderrTest, ConcurrentMessagesDoNotInterleave) {
    constexpr int kThreads = 4;
    constexpr int kLines = 200;
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([t] {
            for (int i = 0; i < kLines; ++i) {
                info("thread {T} line {I} {PAD}", "T", t, "I", i, "PAD", std::string(300, 'x'));
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    std::istringstream in(output());
    std::string line;
    int count = 0;
    while (std::getline(in, line)) {
        ++count;
        EXPECT_THAT(line,
                    ::testing::MatchesRegex("memqosd\\[info\\]: thread [0-3] line [0-9]+ x+"));
        EXPECT_EQ(line.size() - line.rfind(' ') - 1, 300U);
    }
    EXPECT_EQ(count, kThreads * kLines);
}

} // namespace
} // namespace memqos::log

// SPDX-License-Identifier: Apache-2.0
// HmpMonitor against a fake QEMU human monitor: a unix socket in a temp dir
// served by a thread that plays QEMU's side (banner, prompt, readline echo
// with escape sequences, answer, prompt), and parseInfoBalloon on strings.
#include "memqos/io/hmp_monitor.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

#include "fixture_tree.hpp"

namespace fs = std::filesystem;
using namespace memqos;
using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using io::HmpMonitor;

namespace {

constexpr std::string_view kBanner =
    "QEMU 7.2.0 monitor - type 'help' for more information\r\n(qemu) ";
constexpr auto kServerWait = 3000ms; // a session gives up on a silent client

void writeAll(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n <= 0) {
            return;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
}

bool readable(int fd, std::chrono::milliseconds wait) {
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    return ::poll(&p, 1, static_cast<int>(wait.count())) > 0;
}

// One line without "\n", or what came before EOF / kServerWait.
std::string readLine(int fd) {
    std::string line;
    char c = 0;
    while (readable(fd, kServerWait) && ::recv(fd, &c, 1, 0) == 1 && c != '\n') {
        line += c;
    }
    return line;
}

// Waits until the client closes (or kServerWait).
void drain(int fd) {
    char c = 0;
    while (readable(fd, kServerWait) && ::recv(fd, &c, 1, 0) == 1) {
    }
}

// What QEMU's readline prints while `cmd` + "\n" arrives byte by byte
// (readline_update: back to the start, the whole buffer, erase to the end
// of the line), then the "\r\n" of the Enter key.
std::string readlineEcho(std::string_view cmd) {
    std::string out;
    for (std::size_t k = 1; k <= cmd.size(); ++k) {
        for (std::size_t i = 1; i < k; ++i) {
            out += "\x1b[D";
        }
        out += cmd.substr(0, k);
        out += "\x1b[K";
    }
    return out + "\r\n";
}

sockaddr_un addressOf(const fs::path& path) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    return a;
}

// A unix socket bound at `path`, listening unless told otherwise; each
// accepted connection is served by the next session, on a thread.
class FakeMonitor {
public:
    using Session = std::function<void(int fd, std::string& received)>;

    FakeMonitor(fs::path path, std::vector<Session> sessions, bool listening = true,
                int backlog = 8)
        : path_(std::move(path)), sessions_(std::move(sessions)) {
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        const sockaddr_un a = addressOf(path_);
        // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
        if (fd_ < 0 || ::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
            throw std::runtime_error("cannot bind " + path_.string());
        }
        backlog_ = backlog;
        if (listening) {
            listen();
        }
    }
    ~FakeMonitor() {
        join();
        ::close(fd_);
    }
    FakeMonitor(const FakeMonitor&) = delete;
    FakeMonitor& operator=(const FakeMonitor&) = delete;

    // Starts listening (and serving) now.
    void listen(std::chrono::milliseconds firstAcceptAfter = 0ms) {
        ::listen(fd_, backlog_);
        thread_ = std::thread([this, firstAcceptAfter] { serve(firstAcceptAfter); });
    }
    int fd() const { return fd_; }

    // The command lines received, one per session (waits for the sessions).
    std::vector<std::string> received() {
        join();
        const std::lock_guard lock(mutex_);
        return received_;
    }

private:
    void serve(std::chrono::milliseconds firstAcceptAfter) {
        std::this_thread::sleep_for(firstAcceptAfter);
        for (auto& session : sessions_) {
            if (!readable(fd_, kServerWait)) {
                return;
            }
            const int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (client < 0) {
                return;
            }
            std::string got;
            session(client, got);
            ::close(client);
            const std::lock_guard lock(mutex_);
            received_.push_back(std::move(got));
        }
    }
    void join() {
        if (thread_.joinable()) {
            thread_.join();
        }
    }

    fs::path path_;
    std::vector<Session> sessions_;
    int fd_ = -1;
    int backlog_ = 8;
    std::thread thread_;
    std::mutex mutex_;
    std::vector<std::string> received_;
};

// QEMU: banner, the command line, its echo (`echo` of it), `answer`, prompt.
FakeMonitor::Session qemu(std::string answer,
                          std::function<std::string(std::string_view)> echo = readlineEcho) {
    return [answer = std::move(answer), echo = std::move(echo)](int fd, std::string& received) {
        writeAll(fd, kBanner);
        received = readLine(fd);
        writeAll(fd, echo(received) + answer + "(qemu) ");
        drain(fd);
    };
}

class HmpMonitorTest : public ::testing::Test {
protected:
    fs::path socket() const { return dir_.path() / "web1.monitor"; }
    test::TempDir dir_;
    HmpMonitor monitor_{1000ms};
};

TEST_F(HmpMonitorTest, CommandReturnsTheOutputAfterQemusEcho) {
    FakeMonitor server(socket(), {qemu("balloon: actual=512\r\n")});
    auto out = monitor_.command(socket(), "info balloon", 1s);
    ASSERT_TRUE(out) << out.error().what;
    EXPECT_EQ(*out, "balloon: actual=512\n");
    EXPECT_THAT(server.received(), ElementsAre("info balloon"));
}

TEST_F(HmpMonitorTest, PlainEchoAndNoEchoAreBothUnderstood) {
    FakeMonitor server(socket(),
                       {qemu("line 1\r\nline 2\r\n",
                             [](std::string_view cmd) { return std::string(cmd) + "\r\n"; }),
                        qemu("line 1\r\n", [](std::string_view) { return std::string(); })});
    auto plain = monitor_.command(socket(), "info status", 1s);
    ASSERT_TRUE(plain) << plain.error().what;
    EXPECT_EQ(*plain, "line 1\nline 2\n");
    auto none = monitor_.command(socket(), "info status", 1s);
    ASSERT_TRUE(none) << none.error().what;
    EXPECT_EQ(*none, "line 1\n");
}

TEST_F(HmpMonitorTest, ACommandThatPrintsNothingReturnsEmpty) {
    FakeMonitor server(socket(), {qemu("")});
    auto out = monitor_.command(socket(), "balloon 100", 1s);
    ASSERT_TRUE(out) << out.error().what;
    EXPECT_EQ(*out, "");
}

TEST_F(HmpMonitorTest, BannerAndReplyMayArriveInPieces) {
    FakeMonitor server(socket(), {[](int fd, std::string& received) {
                           for (const char c : kBanner) {
                               writeAll(fd, std::string_view(&c, 1));
                               std::this_thread::sleep_for(1ms);
                           }
                           received = readLine(fd);
                           const std::string reply =
                               readlineEcho(received) + "balloon: actual=2048\r\n(qemu) ";
                           for (std::size_t i = 0; i < reply.size(); i += 7) {
                               writeAll(fd, std::string_view(reply).substr(i, 7));
                               std::this_thread::sleep_for(1ms);
                           }
                           drain(fd);
                       }});
    auto actual = monitor_.balloonActual(socket());
    ASSERT_TRUE(actual) << actual.error().what;
    EXPECT_EQ(*actual, 2048 * kMiB);
}

TEST_F(HmpMonitorTest, BalloonSendsWholeMiBAndAtLeastOne) {
    FakeMonitor server(socket(), {qemu(""), qemu(""), qemu("")});
    ASSERT_TRUE(monitor_.balloon(socket(), kGiB + 5));
    ASSERT_TRUE(monitor_.balloon(socket(), 2 * kMiB - 1));
    ASSERT_TRUE(monitor_.balloon(socket(), 100));
    EXPECT_THAT(server.received(), ElementsAre("balloon 1024", "balloon 1", "balloon 1"));
}

TEST_F(HmpMonitorTest, BalloonReportsQemusError) {
    FakeMonitor server(socket(), {qemu("Error: No balloon device has been activated\r\n"),
                                  qemu("Error: something else\r\n")});
    auto status = monitor_.balloon(socket(), kGiB);
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().code, std::errc::no_such_device);
    EXPECT_THAT(status.error().what, HasSubstr(socket().string() + ": balloon 1024: "));
    EXPECT_THAT(status.error().what, HasSubstr("No balloon device"));
    auto other = monitor_.balloonActual(socket());
    ASSERT_FALSE(other);
    EXPECT_EQ(other.error().code, std::errc::io_error);
}

TEST_F(HmpMonitorTest, BalloonActualReportsAReplyThatDoesNotParse) {
    FakeMonitor server(socket(), {qemu("balloon: actual=lots\r\n")});
    auto actual = monitor_.balloonActual(socket());
    ASSERT_FALSE(actual);
    EXPECT_EQ(actual.error().code, std::errc::invalid_argument);
    EXPECT_THAT(actual.error().what, HasSubstr(socket().string() + ": info balloon: bad actual="));
}

TEST_F(HmpMonitorTest, NoPromptIsATimeoutWithinTheDeadline) {
    FakeMonitor server(socket(), {[](int fd, std::string& received) {
                           writeAll(fd, kBanner);
                           received = readLine(fd);
                           writeAll(fd, "thinking");
                           drain(fd);
                       }});
    const auto start = std::chrono::steady_clock::now();
    auto out = monitor_.command(socket(), "info balloon", 300ms);
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code, std::errc::timed_out);
    EXPECT_THAT(out.error().what, HasSubstr("no prompt in time"));
    EXPECT_THAT(out.error().what, HasSubstr("thinking"));
    EXPECT_GE(took, 290ms);
    EXPECT_LT(took, 1000ms);
}

TEST_F(HmpMonitorTest, NoBannerIsATimeoutToo) {
    FakeMonitor server(socket(), {[](int fd, std::string&) { drain(fd); }});
    auto out = monitor_.command(socket(), "info balloon", 200ms);
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code, std::errc::timed_out);
    EXPECT_THAT(out.error().what, HasSubstr(socket().string() + ": banner: no prompt in time"));
}

TEST_F(HmpMonitorTest, ClosedBeforeThePromptIsConnectionReset) {
    FakeMonitor server(socket(), {[](int fd, std::string& received) {
                           writeAll(fd, kBanner);
                           received = readLine(fd);
                       }});
    auto out = monitor_.command(socket(), "info balloon", 1s);
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code, std::errc::connection_reset);
    EXPECT_THAT(out.error().what, HasSubstr("closed before the prompt"));
}

TEST_F(HmpMonitorTest, AMissingSocketFailsAtOnce) {
    const auto start = std::chrono::steady_clock::now();
    auto out = monitor_.command(socket(), "info balloon", 1s);
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code, std::errc::no_such_file_or_directory);
    EXPECT_THAT(out.error().what, HasSubstr(socket().string() + ": connect (attempt 1)"));
    EXPECT_LT(std::chrono::steady_clock::now() - start, HmpMonitor::kRetryPause);
}

TEST_F(HmpMonitorTest, ARefusedConnectIsRetried) {
    // Bound but not listening yet: ECONNREFUSED, as while qemu starts up.
    FakeMonitor server(socket(), {qemu("balloon: actual=64\r\n")}, false);
    std::thread later([&] {
        std::this_thread::sleep_for(150ms);
        server.listen();
    });
    auto actual = monitor_.balloonActual(socket());
    later.join();
    ASSERT_TRUE(actual) << actual.error().what;
    EXPECT_EQ(*actual, 64 * kMiB);
}

TEST_F(HmpMonitorTest, ARefusedConnectIsGivenUpAfterThreeRetries) {
    FakeMonitor server(socket(), {}, false);
    const auto start = std::chrono::steady_clock::now();
    auto out = monitor_.command(socket(), "info balloon", 2s);
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code, std::errc::connection_refused);
    EXPECT_THAT(out.error().what, HasSubstr("connect (attempt 4)"));
    EXPECT_GE(took, HmpMonitor::kConnectRetries * HmpMonitor::kRetryPause);
    EXPECT_LT(took, 1s);
}

TEST_F(HmpMonitorTest, ABusyMonitorIsWaitedFor) {
    // QEMU serves one client; with another one waiting in its listen queue
    // (backlog 0 holds one), a non-blocking connect fails with EAGAIN.
    FakeMonitor server(socket(),
                       {[](int, std::string& received) { received = "other client"; },
                        qemu("balloon: actual=128\r\n")},
                       false, 0);
    const int other = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(other, 0);
    ::listen(server.fd(), 0);
    const sockaddr_un a = addressOf(socket());
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
    ASSERT_EQ(::connect(other, reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
    server.listen(150ms); // serves the other client after 150 ms
    auto actual = monitor_.balloonActual(socket());
    ::close(other);
    ASSERT_TRUE(actual) << actual.error().what;
    EXPECT_EQ(*actual, 128 * kMiB);
    EXPECT_THAT(server.received(), ElementsAre("other client", "info balloon"));
}

TEST_F(HmpMonitorTest, ACommandMustBeOneLine) {
    for (const std::string_view cmd :
         {std::string_view("info balloon\nquit"), std::string_view("x\r"),
          std::string_view("a\0b", 3), std::string_view()}) {
        auto out = monitor_.command(socket(), cmd, 1s);
        ASSERT_FALSE(out);
        EXPECT_EQ(out.error().code, std::errc::invalid_argument);
    }
}

TEST_F(HmpMonitorTest, ASocketPathLongerThanSunPathIsRefused) {
    auto out = monitor_.command(dir_.path() / std::string(120, 'x'), "info balloon", 1s);
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code, std::errc::filename_too_long);
}

// ---- pure parts -----------------------------------------------------------------

TEST(ParseInfoBalloon, ReadsActualInMiB) {
    EXPECT_EQ(io::parseInfoBalloon("balloon: actual=512\n").valueOr(0), 512 * kMiB);
    EXPECT_EQ(io::parseInfoBalloon("balloon: actual=512\r\n").valueOr(0), 512 * kMiB);
    EXPECT_EQ(io::parseInfoBalloon("balloon: actual=0").valueOr(1), 0U);
    // Older QEMU printed more fields after actual=.
    EXPECT_EQ(io::parseInfoBalloon("balloon: actual=1024 max_mem=2048\n").valueOr(0), kGiB);
    EXPECT_EQ(io::parseInfoBalloon("noise\nballoon: actual=7\n").valueOr(0), 7 * kMiB);
    EXPECT_EQ(io::parseInfoBalloon("balloon: actual=17592186044415").valueOr(0),
              17592186044415ULL * kMiB);
}

TEST(ParseInfoBalloon, RefusesEverythingElse) {
    for (const std::string_view text :
         {std::string_view(), std::string_view("\n"),
          std::string_view("Error: No balloon device has been activated\r\n"),
          std::string_view("balloon: actual="), std::string_view("balloon: actual=-1"),
          std::string_view("balloon: actual=12x"), std::string_view("balloon: actual= 12"),
          std::string_view("balloon: actual=17592186044416"),
          std::string_view("balloon: actual=99999999999999999999999"),
          std::string_view(" balloon: actual=1"), std::string_view("balloon:actual=1")}) {
        auto r = io::parseInfoBalloon(text);
        ASSERT_FALSE(r) << "accepted: " << text;
        EXPECT_EQ(r.error().code, std::errc::invalid_argument);
        EXPECT_THAT(r.error().what, HasSubstr("info balloon: "));
        EXPECT_LT(r.error().what.size(), 200U);
    }
}

TEST(ParseInfoBalloon, QuotesABoundedPieceOfALongInput) {
    const std::string junk(10000, 'j');
    auto r = io::parseInfoBalloon(junk);
    ASSERT_FALSE(r);
    EXPECT_LT(r.error().what.size(), 200U);
}

TEST(StripTerminalEscapes, RemovesCsiSequencesAndCarriageReturns) {
    EXPECT_EQ(io::stripTerminalEscapes("i\x1b[K\x1b[Din\x1b[K\r\n"), "iin\n");
    EXPECT_EQ(io::stripTerminalEscapes("a\x1b[1;31mb\x1b" "7c"), "abc");
    EXPECT_EQ(io::stripTerminalEscapes("tail\x1b"), "tail");
    EXPECT_EQ(io::stripTerminalEscapes("tail\x1b[12"), "tail");
    const std::string echo = io::stripTerminalEscapes(readlineEcho("info balloon"));
    EXPECT_TRUE(echo.starts_with("iininfinfo")) << echo;
    EXPECT_TRUE(echo.ends_with("ballooinfo balloon\n")) << echo;
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
// PsiTriggers: refusals are reported (and leave non-PSI files alone), fds are
// closed, a firing re-arms, POLLERR ends a watch without spinning. Real
// triggers need PSI, and without CAP_SYS_RESOURCE a kernel >= 6.5 (2 s
// windows): those tests skip when the kernel says no; the daemon's 1 s
// triggers on memory PSI are tested in the VM suite.
#include "memqos/io/file.hpp"
#include "memqos/io/psi_trigger.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "fixture_tree.hpp"

namespace fs = std::filesystem;
using namespace memqos;
using core::TriggerSpec;

namespace {

// Accepted by every kernel with triggers, privileged or not (>= 6.5 takes
// only multiples of 2 s from callers without CAP_SYS_RESOURCE).
TriggerSpec unprivileged() {
    return {"some", 150'000, 2'000'000};
}

std::string slurp(const fs::path& p) {
    auto text = io::readFile(p);
    return text ? *text : std::string("<unreadable: ") + text.error().what + ">";
}

bool isOpen(int fd) {
    return ::fcntl(fd, F_GETFD) != -1;
}

// Out-of-band data makes a stream socket POLLPRI, like a firing trigger; Linux
// has MSG_OOB on AF_UNIX since 5.15 (CONFIG_AF_UNIX_OOB).
bool unixOobWorks() {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        return false;
    }
    const bool ok = ::send(sv[1], "x", 1, MSG_OOB) == 1;
    ::close(sv[0]);
    ::close(sv[1]);
    return ok;
}

// Runs `io` until `done` or `timeout`; true if `done`.
bool runUntil(boost::asio::io_context& io, const std::function<bool()>& done,
              std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
        io.restart();
        io.run_for(std::chrono::milliseconds(20));
    }
    return done();
}

// Registers `specs` on `file` or says why the kernel here cannot be tested.
std::string realWatch(io::PsiTriggers& t, const fs::path& file,
                      const std::vector<TriggerSpec>& specs) {
    if (::access(file.c_str(), R_OK) != 0) {
        return file.string() + " missing: no PSI";
    }
    auto st = t.watch(file, specs);
    return st ? "" : "kernel refuses: " + st.error().what;
}

class PsiTriggersTest : public testing::Test {
protected:
    boost::asio::io_context io_;
    int fired_ = 0;
    io::PsiTriggers triggers_{io_, [this] { ++fired_; }};
    test::TempDir tmp_;
};

TEST_F(PsiTriggersTest, MissingFileIsVanished) {
    const fs::path f = tmp_.path() / "memqos-shared.slice/memory.pressure";
    auto st = triggers_.watch(f, {unprivileged()});
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code, std::errc::no_such_file_or_directory);
    EXPECT_TRUE(io::isVanished(st.error()));
    EXPECT_EQ(st.error().what.rfind(f.string() + ": ", 0), 0U) << st.error().what;
    EXPECT_EQ(triggers_.size(), 0U);
    EXPECT_FALSE(triggers_.watching(f));
}

TEST_F(PsiTriggersTest, NoSpecsNothingToDo) {
    EXPECT_TRUE(triggers_.watch(tmp_.path() / "missing", {}).ok());
    EXPECT_EQ(triggers_.size(), 0U);
}

TEST_F(PsiTriggersTest, RegularFileIsRefusedAndLeftAlone) {
    // A fixture tree's memory.pressure: writing a trigger there would
    // overwrite it, and it could never fire.
    const fs::path f = tmp_.path() / "memory.pressure";
    const std::string content = "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                                "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
    test::writeFile(f, content);
    auto st = triggers_.watch(f, {unprivileged(), {"full", 50'000, 2'000'000}});
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code, std::errc::operation_not_supported);
    EXPECT_FALSE(io::isVanished(st.error()));
    EXPECT_NE(st.error().what.find(f.string()), std::string::npos) << st.error().what;
    EXPECT_EQ(slurp(f), content);
    EXPECT_EQ(triggers_.size(), 0U);
}

TEST_F(PsiTriggersTest, FifoAndDeviceAreRefused) {
    const fs::path fifo = tmp_.path() / "fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    for (const fs::path& f : {fifo, fs::path("/dev/null")}) {
        auto st = triggers_.watch(f, {unprivileged()});
        ASSERT_FALSE(st.ok()) << f;
        EXPECT_EQ(st.error().code, std::errc::operation_not_supported) << f;
    }
    EXPECT_EQ(triggers_.size(), 0U);
}

TEST_F(PsiTriggersTest, KernelRefusalIsReportedAllOrNothing) {
    // stall > window: EINVAL from any kernel with triggers. The valid first
    // trigger is closed again.
    const fs::path f = "/proc/pressure/memory";
    const std::vector<TriggerSpec> specs{unprivileged(), {"full", 3'000'000, 2'000'000}};
    if (::access(f.c_str(), R_OK) != 0) {
        GTEST_SKIP() << "no PSI";
    }
    auto st = triggers_.watch(f, specs);
    ASSERT_FALSE(st.ok());
    if (st.error().code == std::errc::operation_not_permitted) {
        // Kernels before 6.5 without CAP_SYS_RESOURCE refuse at open().
        EXPECT_NE(st.error().what.find("CAP_SYS_RESOURCE"), std::string::npos);
    } else if (st.error().code == std::errc::invalid_argument) {
        EXPECT_NE(st.error().what.find("writing \"full 3000000 2000000\""), std::string::npos)
            << st.error().what;
    } else {
        ADD_FAILURE() << "unexpected refusal: " << st.error().what;
    }
    EXPECT_EQ(triggers_.size(), 0U);
    EXPECT_FALSE(triggers_.watching(f));
}

TEST_F(PsiTriggersTest, RealTriggerIsRegisteredAndClosed) {
    const fs::path f = "/proc/pressure/memory";
    if (auto why = realWatch(triggers_, f, {unprivileged(), {"full", 50'000, 2'000'000}});
        !why.empty()) {
        GTEST_SKIP() << why;
    }
    EXPECT_EQ(triggers_.size(), 2U);
    EXPECT_TRUE(triggers_.watching(f));
    EXPECT_FALSE(triggers_.watching("/proc/pressure/io"));
    triggers_.clear();
    EXPECT_EQ(triggers_.size(), 0U);
    EXPECT_FALSE(triggers_.watching(f));
    // Registering again after clear() works (the daemon's reload).
    ASSERT_TRUE(triggers_.watch(f, {unprivileged()}).ok());
    EXPECT_EQ(triggers_.size(), 1U);
}

TEST_F(PsiTriggersTest, RealTriggerFires) {
    // CPU pressure is the one a test can cause without harm: more busy
    // threads than CPUs stall each other for far more than 1 ms in 2 s.
    if (auto why = realWatch(triggers_, "/proc/pressure/cpu", {{"some", 1'000, 2'000'000}});
        !why.empty()) {
        GTEST_SKIP() << why;
    }
    std::atomic<bool> stop{false};
    std::vector<std::thread> busy;
    for (unsigned i = 0; i <= std::max(1U, std::thread::hardware_concurrency()); ++i) {
        busy.emplace_back([&stop] {
            while (!stop.load(std::memory_order_relaxed)) {
            }
        });
    }
    // Unprivileged triggers are checked every 2 s.
    const bool fired = runUntil(
        io_, [this] { return fired_ > 0; }, std::chrono::seconds(10));
    stop = true;
    for (auto& t : busy) {
        t.join();
    }
    EXPECT_TRUE(fired);
    EXPECT_EQ(triggers_.size(), 1U) << "a firing re-arms";
    // At most once per window: the re-armed wait does not see the consumed
    // event again.
    io_.restart();
    io_.run_for(std::chrono::milliseconds(500));
    EXPECT_LE(fired_, 2);
}

TEST_F(PsiTriggersTest, SimulatedFiringCallsBackAndRearms) {
    if (!unixOobWorks()) {
        GTEST_SKIP() << "no MSG_OOB on AF_UNIX (Linux >= 5.15)";
    }
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv), 0);
    // Reading the byte ends POLLPRI, as the kernel's poll of a trigger fd
    // consumes its event (else every re-arm would report it again: Asio
    // re-registers the fd with epoll at each wait).
    int calls = 0;
    io::PsiTriggers t(io_, [&] {
        ++calls;
        char c = 0;
        EXPECT_EQ(::recv(sv[0], &c, 1, MSG_OOB), 1);
    });
    ASSERT_TRUE(t.adopt(sv[0], "sim").ok());
    EXPECT_TRUE(t.watching("sim"));
    io_.run_for(std::chrono::milliseconds(50));
    EXPECT_EQ(calls, 0) << "no event, no call";
    ASSERT_EQ(::send(sv[1], "x", 1, MSG_OOB), 1);
    EXPECT_TRUE(runUntil(
        io_, [&] { return calls == 1; }, std::chrono::seconds(5)));
    io_.restart();
    io_.run_for(std::chrono::milliseconds(100));
    EXPECT_EQ(calls, 1) << "one call per event";
    ASSERT_EQ(::send(sv[1], "y", 1, MSG_OOB), 1);
    EXPECT_TRUE(runUntil(
        io_, [&] { return calls == 2; }, std::chrono::seconds(5)));
    io_.restart();
    io_.run_for(std::chrono::milliseconds(100));
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(t.size(), 1U);
    ::close(sv[1]);
}

TEST_F(PsiTriggersTest, PollErrEndsTheWatchWithoutSpinning) {
    // A pipe's write end reports POLLERR once the read end is closed, as a
    // removed cgroup's pressure file does.
    int p[2];
    ASSERT_EQ(::pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
    ASSERT_TRUE(triggers_.adopt(p[1], "gone.slice/memory.pressure").ok());
    ::close(p[0]);
    EXPECT_TRUE(runUntil(
        io_, [this] { return triggers_.size() == 0; }, std::chrono::seconds(5)));
    EXPECT_EQ(fired_, 0);
    EXPECT_FALSE(isOpen(p[1])) << "its fd is closed";
    // Nothing is left to wait for: the loop returns at once instead of spinning.
    io_.restart();
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(io_.run_for(std::chrono::seconds(2)), 0U);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
}

TEST_F(PsiTriggersTest, ClearFromTheCallbackStopsTheOthers) {
    // Two watches fire in the same loop iteration; the first callback clears
    // everything (as a reload does): the second watch, whose event the kernel
    // has already reported, must not call back nor touch freed memory.
    if (!unixOobWorks()) {
        GTEST_SKIP() << "no MSG_OOB on AF_UNIX (Linux >= 5.15)";
    }
    int a[2];
    int b[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, a), 0);
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, b), 0);
    int calls = 0;
    std::function<void()> clearAll;
    io::PsiTriggers t(io_, [&] {
        ++calls;
        clearAll();
    });
    clearAll = [&t] { t.clear(); };
    ASSERT_TRUE(t.adopt(a[0], "a").ok());
    ASSERT_TRUE(t.adopt(b[0], "b").ok());
    ASSERT_EQ(::send(a[1], "x", 1, MSG_OOB), 1);
    ASSERT_EQ(::send(b[1], "x", 1, MSG_OOB), 1);
    EXPECT_TRUE(runUntil(
        io_, [&] { return calls > 0; }, std::chrono::seconds(5)));
    io_.restart();
    io_.run_for(std::chrono::milliseconds(100));
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(t.size(), 0U);
    EXPECT_FALSE(isOpen(a[0]));
    EXPECT_FALSE(isOpen(b[0]));
    ::close(a[1]);
    ::close(b[1]);
}

TEST_F(PsiTriggersTest, DestructionClosesFds) {
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    {
        io::PsiTriggers t(io_, [] {});
        ASSERT_TRUE(t.adopt(sv[0], "a").ok());
        EXPECT_TRUE(isOpen(sv[0]));
    }
    EXPECT_FALSE(isOpen(sv[0]));
    // The io_context still holds the cancelled wait: running it is harmless.
    io_.restart();
    io_.run_for(std::chrono::milliseconds(50));
    ::close(sv[1]);
}

TEST_F(PsiTriggersTest, AnFdThatCannotBeWaitedOnIsDropped) {
    // epoll takes no regular file; Asio accepts the fd and fails the wait.
    const fs::path f = tmp_.path() / "plain";
    test::writeFile(f, "x");
    const int fd = ::open(f.c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(triggers_.adopt(fd, f.string()).ok());
    EXPECT_TRUE(runUntil(
        io_, [this] { return triggers_.size() == 0; }, std::chrono::seconds(5)));
    EXPECT_EQ(fired_, 0);
    EXPECT_FALSE(isOpen(fd));
}

} // namespace

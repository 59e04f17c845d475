// SPDX-License-Identifier: Apache-2.0
// /proc/PID/stat: the start time that tells a process from a later one with
// the same pid.
#include "memqos/parse/proc.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

namespace memqos::parse {
namespace {

constexpr const char* kStat =
    "4242 (postgres) S 1 4242 4242 0 -1 4194560 1000 0 0 0 12 3 0 0 20 0 1 0 5123456 "
    "219000832 5000 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n";

TEST(ProcStat, StartTimeIsField22) {
    auto t = parseProcStatStartTime(kStat);
    ASSERT_TRUE(t.ok()) << t.error().what;
    EXPECT_EQ(*t, 5123456U);
}

TEST(ProcStat, ACommandWithSpacesAndParenthesesCountsFromTheLastOne) {
    auto t = parseProcStatStartTime(
        "77 (x) S 1 2 3 (y)) R 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0\n");
    ASSERT_TRUE(t.ok()) << t.error().what;
    EXPECT_EQ(*t, 42U);
}

TEST(ProcStat, RefusesWhatIsNoStat) {
    for (const char* bad : {"", "4242 postgres S 1", ")( S 1 2 3", "1 (a) S 1 2 3 4 5",
                            "1 (a) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 -5 0",
                            "1 (a) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 x 0"}) {
        auto t = parseProcStatStartTime(bad);
        EXPECT_FALSE(t.ok()) << bad;
        if (!t.ok()) {
            EXPECT_EQ(t.error().code, std::errc::invalid_argument) << bad;
        }
    }
}

TEST(ProcStat, BootTimeIsTheBtimeLine) {
    auto t = parseProcStatBootTime("cpu  1 2 3\nintr 5 6\nctxt 77\nbtime 1764300000\nprocesses 9\n");
    ASSERT_TRUE(t.ok()) << t.error().what;
    EXPECT_EQ(*t, 1764300000);
    for (const char* bad : {"", "cpu 1 2\n", "btime\n", "btime x\n", "btime -5\n",
                            "btime 99999999999999999999\n"}) {
        EXPECT_FALSE(parseProcStatBootTime(bad).ok()) << bad;
    }
}

std::string nul(std::initializer_list<std::string_view> args) {
    std::string out;
    for (auto a : args) {
        out.append(a);
        out.push_back('\0');
    }
    return out;
}

// Ganeti 3.0's KVM hypervisor: "<kvm_path> -name <instance> ... -pidfile
// <dir>/pid/<instance> ... -daemonize"; /usr/bin/kvm execs qemu-system-*.
TEST(QemuCmdline, GanetisNameAndPidfile) {
    auto c = parseQemuCmdline(nul({"qemu-system-x86_64", "-enable-kvm", "-name", "inst1.example",
                                   "-m", "512", "-pidfile",
                                   "/run/ganeti/kvm-hypervisor/pid/inst1.example", "-daemonize"}));
    ASSERT_TRUE(c.ok()) << c.error().what;
    EXPECT_EQ(c->program, "qemu-system-x86_64");
    EXPECT_EQ(c->name, std::optional<std::string>("inst1.example"));
    EXPECT_EQ(c->pidfile,
              std::optional<std::string>("/run/ganeti/kvm-hypervisor/pid/inst1.example"));
    EXPECT_TRUE(isQemuFor(*c, "inst1.example"));
    EXPECT_FALSE(isQemuFor(*c, "inst2.example"));
}

TEST(QemuCmdline, LibvirtsGuestSuboptionAndEscapedCommas) {
    auto c = parseQemuCmdline(
        nul({"/usr/bin/qemu-system-x86_64", "-name", "guest=web,debug-threads=on", "-S"}));
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE(isQemuFor(*c, "web"));
    c = parseQemuCmdline(nul({"/usr/bin/kvm", "--name", "process=q,guest=a,,b"}));
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE(isQemuFor(*c, "a,b"));
    c = parseQemuCmdline(nul({"kvm", "-name", "old,process=qemu-old"}));
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE(isQemuFor(*c, "old"));
}

TEST(QemuCmdline, AnotherProgramOrNoNameIsNoQemuOfTheGuest) {
    auto c = parseQemuCmdline(nul({"/bin/sleep", "-name", "web"}));
    ASSERT_TRUE(c.ok());
    EXPECT_FALSE(isQemuFor(*c, "web")) << "not a qemu";
    c = parseQemuCmdline(nul({"qemu-system-x86_64", "-m", "512"}));
    ASSERT_TRUE(c.ok());
    EXPECT_FALSE(isQemuFor(*c, "web")) << "no -name";
    c = parseQemuCmdline(nul({"qemu-system-x86_64", "-name", "process=x"}));
    ASSERT_TRUE(c.ok());
    EXPECT_FALSE(isQemuFor(*c, "process=x")) << "no guest suboption";
    EXPECT_FALSE(parseQemuCmdline("").ok());
    EXPECT_FALSE(parseQemuCmdline(nul({"qemu", "-name"})).ok());
    EXPECT_FALSE(parseQemuCmdline(nul({"qemu", "-pidfile"})).ok());
}

} // namespace
} // namespace memqos::parse

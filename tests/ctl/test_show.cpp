// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <string>

#include "show.hpp"

namespace memqos::ctl {
namespace {

using ::testing::HasSubstr;

Value u64(std::uint64_t n) {
    return Value{n};
}
Value str(std::string s) {
    return Value{std::move(s)};
}

TEST(ShowValue, AsSystemctlShowPrintsThem) {
    EXPECT_EQ(showValue(Value{true}), "yes");
    EXPECT_EQ(showValue(Value{false}), "no");
    EXPECT_EQ(showValue(u64(1073741824)), "1073741824");
    EXPECT_EQ(showValue(u64(std::numeric_limits<std::uint64_t>::max())), "infinity");
    EXPECT_EQ(showValue(Value{std::int64_t{-3}}), "-3");
    EXPECT_EQ(showValue(Value{1.5}), "1.5");
    EXPECT_EQ(showValue(str("shared")), "shared");
    EXPECT_EQ(showValue(Value{ValueArray{str("/org/memqos1/workload/a"),
                                         str("/org/memqos1/workload/b")}}),
              "/org/memqos1/workload/a /org/memqos1/workload/b");
    EXPECT_EQ(showValue(Value{ValueArray{}}), "");
    EXPECT_EQ(showValue(Value{}), "");
}

TEST(RenderShow, AllByNameOrTheOnesAskedInTheirOrder) {
    const PropertyMap props{{"Version", str("0.1.0")},
                            {"DryRun", Value{false}},
                            {"MemoryTotal", u64(16)}};
    EXPECT_EQ(renderShow(props, {}, false, Format::Text),
              "DryRun=no\nMemoryTotal=16\nVersion=0.1.0\n");
    EXPECT_EQ(renderShow(props, {"Version", "Nope", "DryRun"}, false, Format::Text),
              "Version=0.1.0\nDryRun=no\n");
    EXPECT_EQ(renderShow(props, {"MemoryTotal"}, true, Format::Text), "16\n");
    EXPECT_EQ(renderShow(props, {"Version", "MemoryTotal"}, false, Format::JsonShort),
              "{\"Version\":\"0.1.0\",\"MemoryTotal\":16}\n");
    EXPECT_EQ(renderShow(props, {"Nope"}, false, Format::Text), "");
}

TEST(FormatJournalLine, ShortFormatInLocalTime) {
    const char* old = std::getenv("TZ"); // NOLINT(concurrency-mt-unsafe)
    const std::string saved = old != nullptr ? old : "";
    setenv("TZ", "UTC", 1); // NOLINT(concurrency-mt-unsafe)
    tzset();
    EXPECT_EQ(formatJournalLine({1764306062000000, "memqosd", "412", "Assigned x to shared"}),
              "Nov 28 05:01:02 memqosd[412]: Assigned x to shared");
    EXPECT_EQ(formatJournalLine({1764306062999999, "", "", "m"}), "Nov 28 05:01:02 memqosd: m");
    if (old != nullptr) {
        setenv("TZ", saved.c_str(), 1); // NOLINT(concurrency-mt-unsafe)
    } else {
        unsetenv("TZ"); // NOLINT(concurrency-mt-unsafe)
    }
    tzset();
}

TEST(RenderWorkloadStatus, TextAndJson) {
    const PropertyMap w{{"Id", str("vm:web1")},
                        {"Kind", str("vm")},
                        {"Class", str("dedicated")},
                        {"Unit", str("machine-qemu\\x2d1\\x2dweb1.scope")},
                        {"Request", u64(2ULL << 30)},
                        {"Limit", u64(2ULL << 30)},
                        {"MemoryMin", u64(2ULL << 30)},
                        {"MemoryLow", u64(0)},
                        {"MemoryHigh", u64(std::numeric_limits<std::uint64_t>::max())},
                        {"MemoryMax", u64(2ULL << 30)},
                        {"MemorySwapMax", u64(0)},
                        {"MemoryCurrent", u64(1ULL << 30)},
                        {"SwapCurrent", u64(0)},
                        {"MemoryPressure", Value{0.5}},
                        {"Persistent", Value{false}},
                        {"Source", str("metadata")},
                        {"BalloonActual", u64(0)},
                        {"BalloonTarget", u64(1ULL << 30)},
                        {"ReclaimedBytes", u64(0)},
                        {"ReclaimStall", Value{0.0}},
                        {"ReclaimState", str("off")}};
    const PropertyMap c{{"Rank", u64(1)}, {"Protection", str("min")}, {"Killable", Value{false}}};
    const JournalTail none{{}, "No journal lines about vm:web1."};
    const std::string text =
        renderWorkloadStatus(w, "/org/memqos1/workload/vm_3aweb1", c, none, Format::Text);
    EXPECT_EQ(text, "vm:web1 - vm managed by memqos\n"
                    "Class:    dedicated (rank 1, protection min, not killable)\n"
                    "Source:   metadata, until reboot\n"
                    "Unit:     machine-qemu\\x2d1\\x2dweb1.scope\n"
                    "Request:  2G\n"
                    "Limit:    2G\n"
                    "Tiers:    min 2G, low 0, high max, max 2G, swap max 0\n"
                    "Memory:   1G (swap 0)\n"
                    "PSI:      0.5% (memory.pressure some avg10)\n"
                    "Reclaim:  off, 0 reclaimed, stall 0%\n"
                    "Balloon:  actual unknown, target 1G\n"
                    "\n"
                    "No journal lines about vm:web1.\n");
    const JournalTail some{{{1, "memqosd", "7", "Assigned vm:web1"}}, ""};
    const std::string withLines =
        renderWorkloadStatus(w, "/p", std::nullopt, some, Format::Text);
    EXPECT_THAT(withLines, HasSubstr("Class:    dedicated\n"));
    EXPECT_THAT(withLines, HasSubstr("memqosd[7]: Assigned vm:web1\n"));
    const std::string json = renderWorkloadStatus(w, "/p", std::nullopt, some, Format::JsonShort);
    EXPECT_THAT(json, HasSubstr("\"ObjectPath\":\"/p\"},\"Class\":null,\"Journal\":[{\"time_usec\":1,"
                                "\"identifier\":\"memqosd\",\"pid\":\"7\",\"message\":\"Assigned "
                                "vm:web1\"}]}"));
}

} // namespace
} // namespace memqos::ctl

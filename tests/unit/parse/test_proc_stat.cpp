// SPDX-License-Identifier: Apache-2.0
// /proc/PID/stat: the start time that tells a process from a later one with
// the same pid.
#include "memqos/parse/proc.hpp"

#include <gtest/gtest.h>

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

} // namespace
} // namespace memqos::parse

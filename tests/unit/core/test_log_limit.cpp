// SPDX-License-Identifier: Apache-2.0
#include "memqos/util/log_limit.hpp"

#include <gtest/gtest.h>

namespace memqos::util {
namespace {

using namespace std::chrono_literals;

TEST(LogLimit, AtMostBurstPerIntervalThenSaysHowManyWereDropped) {
    LogLimit limit(3, 60s);
    const LogLimit::Clock::time_point t0{};
    int logged = 0;
    int firstDropped = 0;
    for (int i = 0; i < 1000; ++i) {
        const auto a = limit.admit(t0 + std::chrono::milliseconds(i));
        logged += a.log ? 1 : 0;
        firstDropped += a.firstDropped ? 1 : 0;
        EXPECT_EQ(a.suppressed, 0U);
    }
    EXPECT_EQ(logged, 3);
    EXPECT_EQ(firstDropped, 1);
    // The next interval: logged again, with the count of what was dropped.
    auto a = limit.admit(t0 + 60s);
    EXPECT_TRUE(a.log);
    EXPECT_EQ(a.suppressed, 997U);
    a = limit.admit(t0 + 61s);
    EXPECT_TRUE(a.log);
    EXPECT_EQ(a.suppressed, 0U);
}

TEST(LogLimit, QuietCallersAreNeverLimited) {
    LogLimit limit(2, 60s);
    const LogLimit::Clock::time_point t0{};
    for (int i = 0; i < 10; ++i) {
        const auto a = limit.admit(t0 + std::chrono::seconds(31 * i));
        EXPECT_TRUE(a.log) << i;
        EXPECT_EQ(a.suppressed, 0U);
    }
}

} // namespace
} // namespace memqos::util

// SPDX-License-Identifier: Apache-2.0
// memqosd's STATUS= line: sent when it changed, not every tick (issue 25).
#include "status_notifier.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using memqos::daemon::StatusNotifier;

TEST(StatusNotifier, SendsOnlyWhenTheLineChanges) {
    std::vector<std::string> sent;
    StatusNotifier n([&](const std::string& s) { sent.push_back(s); });
    n.update(1000, 0);
    n.update(1000, 0); // the next ticks: the same line, not sent again
    n.update(1000, 0);
    ASSERT_EQ(sent.size(), 1U);
    EXPECT_EQ(sent[0], "STATUS=Managing 1000 workloads, pressure level 0");
    n.update(1000, 1);
    n.update(999, 1);
    n.update(999, 1);
    ASSERT_EQ(sent.size(), 3U);
    EXPECT_EQ(sent[1], "STATUS=Managing 1000 workloads, pressure level 1");
    EXPECT_EQ(sent[2], "STATUS=Managing 999 workloads, pressure level 1");
}

} // namespace

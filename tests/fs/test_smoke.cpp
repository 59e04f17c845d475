// SPDX-License-Identifier: Apache-2.0
#include "memqos/util/result.hpp"
#include <gtest/gtest.h>
TEST(Result, HoldsValueOrError) {
    memqos::Result<int> a = 3;
    memqos::Result<int> b = memqos::invalid("bad");
    EXPECT_TRUE(a.ok());
    EXPECT_EQ(*a, 3);
    EXPECT_FALSE(b.ok());
    EXPECT_EQ(b.error().what, "bad");
}

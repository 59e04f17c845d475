// SPDX-License-Identifier: Apache-2.0
#include "memqos/util/result.hpp"

#include <gtest/gtest.h>

#include <string>

namespace memqos {
namespace {

TEST(Result, HoldsValueOrError) {
    Result<int> a = 3;
    Result<int> b = invalid("bad");
    EXPECT_TRUE(a.ok());
    EXPECT_TRUE(static_cast<bool>(a));
    EXPECT_EQ(*a, 3);
    EXPECT_FALSE(b.ok());
    EXPECT_EQ(b.error().what, "bad");
    EXPECT_EQ(b.error().code, std::errc::invalid_argument);
    EXPECT_EQ(b.valueOr(7), 7);
    EXPECT_EQ(a.valueOr(7), 3);
}

TEST(Result, StatusAndMove) {
    Status ok = okStatus();
    Status bad = makeError(std::errc::no_such_file_or_directory, "gone");
    EXPECT_TRUE(ok.ok());
    EXPECT_EQ(bad.error().code, std::errc::no_such_file_or_directory);
    Result<std::string> s = std::string("text");
    EXPECT_EQ(s->size(), 4U);
    const std::string moved = std::move(s).value();
    EXPECT_EQ(moved, "text");
}

} // namespace
} // namespace memqos

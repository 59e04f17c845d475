// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "terminal.hpp"

namespace memqos::ctl {
namespace {

using ::testing::ElementsAre;
constexpr std::nullopt_t kUnset = std::nullopt;

TEST(ParseBoolean, SystemdSpellings) {
    for (const char* yes : {"1", "yes", "YES", "y", "true", "t", "on"}) {
        EXPECT_EQ(parseBoolean(yes), true) << yes;
    }
    for (const char* no : {"0", "no", "n", "False", "f", "off"}) {
        EXPECT_EQ(parseBoolean(no), false) << no;
    }
    for (const char* bad : {"", "maybe", "2", " yes"}) {
        EXPECT_EQ(parseBoolean(bad), std::nullopt) << bad;
    }
}

TEST(ColorsWanted, OnATerminalUnlessNoColorOrDumb) {
    EXPECT_TRUE(colorsWanted(kUnset, kUnset, std::string("xterm"), true));
    EXPECT_TRUE(colorsWanted(kUnset, kUnset, kUnset, true));
    EXPECT_FALSE(colorsWanted(kUnset, kUnset, std::string("xterm"), false));
    EXPECT_FALSE(colorsWanted(kUnset, std::string("1"), std::string("xterm"), true));
    EXPECT_TRUE(colorsWanted(kUnset, std::string(""), std::string("xterm"), true))
        << "an empty NO_COLOR does not count (no-color.org)";
    EXPECT_FALSE(colorsWanted(kUnset, kUnset, std::string("dumb"), true));
}

TEST(ColorsWanted, SystemdColorsOverridesBothWays) {
    EXPECT_TRUE(colorsWanted(std::string("1"), std::string("1"), std::string("dumb"), false));
    EXPECT_TRUE(colorsWanted(std::string("256"), kUnset, kUnset, false));
    EXPECT_TRUE(colorsWanted(std::string("16"), kUnset, kUnset, false));
    EXPECT_FALSE(colorsWanted(std::string("no"), kUnset, std::string("xterm"), true));
    EXPECT_TRUE(colorsWanted(std::string("bogus"), kUnset, std::string("xterm"), true))
        << "an unreadable value is ignored";
    EXPECT_FALSE(colorsWanted(std::string("bogus"), std::string("1"), std::string("xterm"), true));
}

TEST(PagerCommand, SystemdPagerThenPagerThenTheDefault) {
    EXPECT_EQ(pagerCommand(kUnset, kUnset), std::vector<std::string>{}) << "default: less, more";
    EXPECT_THAT(*pagerCommand(kUnset, std::string("most")), ElementsAre("most"));
    EXPECT_THAT(*pagerCommand(std::string("less -R  -S"), std::string("most")),
                ElementsAre("less", "-R", "-S"));
    EXPECT_EQ(pagerCommand(std::string("cat"), std::string("less")), std::nullopt);
    EXPECT_EQ(pagerCommand(std::string(""), std::string("less")), std::nullopt);
    EXPECT_EQ(pagerCommand(kUnset, std::string("  ")), std::nullopt);
    EXPECT_EQ(pagerCommand(kUnset, std::string("cat")), std::nullopt);
    EXPECT_THAT(*pagerCommand(kUnset, std::string("cat -v")), ElementsAre("cat", "-v"));
}

TEST(LessOptions, SystemdLessElseFRSXMK) {
    EXPECT_EQ(lessOptions(kUnset), "FRSXMK");
    EXPECT_EQ(lessOptions(std::string("FRX")), "FRX");
    EXPECT_EQ(lessOptions(std::string("")), "");
}

} // namespace
} // namespace memqos::ctl

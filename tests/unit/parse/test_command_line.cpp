// SPDX-License-Identifier: Apache-2.0
#include "memqos/parse/command_line.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace memqos::parse {
namespace {

enum : int { kHelp = 'h', kDryRun = 256, kDrop, kConfig };

constexpr OptionSpec kSpecs[] = {
    {"help", OptionArg::None, kHelp, 'h', true},
    {"dry-run", OptionArg::None, kDryRun},
    {"drop", OptionArg::None, kDrop},
    {"config", OptionArg::Required, kConfig},
};

// "id=value" per option, then "| operand" per operand; or "error: why".
std::string parsed(const std::vector<std::string>& args) {
    auto r = parseCommandLine(args, kSpecs);
    if (!r)
        return "error: " + r.error().what;
    std::string out;
    for (const auto& o : r->options)
        out += (out.empty() ? "" : " ") + o.name + (o.value.empty() ? "" : "=" + o.value);
    for (const auto& op : r->operands)
        out += " | " + op;
    return out;
}

TEST(CommandLine, ValueWithEqualsOrAsTheNextWord) {
    EXPECT_EQ(parsed({"--config=/a.conf"}), "--config=/a.conf");
    EXPECT_EQ(parsed({"--config", "/a.conf"}), "--config=/a.conf");
    EXPECT_EQ(parsed({"--config", "--drop"}),
              "--config=--drop"); // getopt: the next word, whatever it is
    EXPECT_EQ(parsed({"--conf=/a.conf"}), "--config=/a.conf"); // a unique prefix
    EXPECT_EQ(parsed({"--config=a=b"}), "--config=a=b");
}

TEST(CommandLine, OptionsAndOperandsInAnyOrderAndDoubleDashEndsOptions) {
    EXPECT_EQ(parsed({"a", "--dry-run", "b"}), "--dry-run | a | b");
    EXPECT_EQ(parsed({"--dry-run", "--", "--drop", "-h"}), "--dry-run | --drop | -h");
    EXPECT_EQ(parsed({"--"}), "");
    EXPECT_EQ(parsed({"-"}), " | -");
    EXPECT_EQ(parsed({"-h"}), "--help");
}

TEST(CommandLine, HelpStopsParsing) {
    EXPECT_EQ(parsed({"--drop", "--help", "--bogus", "x"}), "--drop --help");
    EXPECT_EQ(parsed({"--bogus", "--help"}), "error: unrecognized option '--bogus'");
}

TEST(CommandLine, ErrorsInGlibcsWords) {
    EXPECT_EQ(parsed({"--bogus"}), "error: unrecognized option '--bogus'");
    EXPECT_EQ(parsed({"--bogus=1"}), "error: unrecognized option '--bogus'");
    EXPECT_EQ(parsed({"-x"}), "error: invalid option -- 'x'");
    EXPECT_EQ(parsed({"-hx"}), "--help"); // -h stops before x
    EXPECT_EQ(parsed({"--config"}), "error: option '--config' requires an argument");
    EXPECT_EQ(parsed({"--drop", "--config"}), "error: option '--config' requires an argument");
    EXPECT_EQ(parsed({"--config="}), "error: option '--config' needs a non-empty value");
    EXPECT_EQ(parsed({"--config", ""}), "error: option '--config' needs a non-empty value");
    EXPECT_EQ(parsed({"--dry-run=yes"}), "error: option '--dry-run' doesn't allow an argument");
    EXPECT_EQ(parsed({"--help=me"}), "error: option '--help' doesn't allow an argument");
    EXPECT_EQ(parsed({"--dr"}), "error: option '--dr' is ambiguous; possibilities: '--dry-run' "
                                "'--drop'");
}

TEST(CommandLine, EveryCallStartsOver) {
    EXPECT_EQ(parsed({"--drop", "x", "--bogus"}), "error: unrecognized option '--bogus'");
    EXPECT_EQ(parsed({"--drop"}), "--drop");
    EXPECT_EQ(parsed({}), "");
}

TEST(CommandLine, HelpHint) {
    EXPECT_EQ(helpHint("memqosd"), "Try 'memqosd --help'.");
}

} // namespace
} // namespace memqos::parse

// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using memqos::daemon::Mode;
using memqos::daemon::parseOptions;

TEST(Options, DefaultsToRunWithSystemPaths) {
    auto o = parseOptions({});
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(o->mode, Mode::Run);
    EXPECT_FALSE(o->configFile.has_value());
    EXPECT_TRUE(o->dropIns);
    EXPECT_FALSE(o->dryRun);
}

TEST(Options, CheckConfigWithFileInBothSpellings) {
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"--check-config", "--config", "/tmp/x.conf"},
             {"--config=/tmp/x.conf", "--check-config"}}) {
        auto o = parseOptions(args);
        ASSERT_TRUE(o.ok()) << o.error().what;
        EXPECT_EQ(o->mode, Mode::CheckConfig);
        ASSERT_TRUE(o->configFile.has_value());
        EXPECT_EQ(*o->configFile, "/tmp/x.conf");
    }
}

TEST(Options, HelpWinsAndVersion) {
    EXPECT_EQ(parseOptions({"--check-config", "--help"})->mode, Mode::Help);
    EXPECT_EQ(parseOptions({"-h"})->mode, Mode::Help);
    EXPECT_EQ(parseOptions({"--version"})->mode, Mode::Version);
}

TEST(Options, RootsAndFlags) {
    auto o = parseOptions({"--dry-run", "--cgroup-root", "/t/cg", "--proc-root=/t/proc",
                           "--state-dir", "/t/state", "--bus-address", "unix:path=/t/bus",
                           "--no-drop-ins"});
    ASSERT_TRUE(o.ok()) << o.error().what;
    EXPECT_TRUE(o->dryRun);
    EXPECT_FALSE(o->dropIns);
    EXPECT_EQ(*o->cgroupRoot, "/t/cg");
    EXPECT_EQ(*o->procRoot, "/t/proc");
    EXPECT_EQ(*o->stateDir, "/t/state");
    EXPECT_EQ(*o->busAddress, "unix:path=/t/bus");
}

struct BadCase {
    std::vector<std::string> args;
    std::string expect;
};

class OptionsBad : public testing::TestWithParam<BadCase> {};

TEST_P(OptionsBad, RejectedWithReason) {
    auto o = parseOptions(GetParam().args);
    ASSERT_FALSE(o.ok());
    EXPECT_NE(o.error().what.find(GetParam().expect), std::string::npos) << o.error().what;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, OptionsBad,
    testing::Values(
        BadCase{{"--frobnicate"}, "unrecognized option '--frobnicate'"},
        BadCase{{"--frobnicate=1"}, "unrecognized option '--frobnicate'"},
        BadCase{{"-x"}, "invalid option -- 'x'"},
        BadCase{{"--config"}, "option '--config' requires an argument"},
        BadCase{{"--check-config", "--config"}, "option '--config' requires an argument"},
        BadCase{{"--config="}, "option '--config' needs a non-empty value"},
        BadCase{{"--dry-run=yes"}, "option '--dry-run' doesn't allow an argument"},
        BadCase{{"--print"}, "--print goes with --check-config"},
        BadCase{{"--check-config", "--print", "--example-request=lots"},
                "--example-request: not a size"},
        BadCase{{"--check-config", "--print", "--example-limit", "-1"}, "--example-limit: "},
        BadCase{{"--check-config", "--example-request=1G"}, "go with --check-config --print"},
        BadCase{{"extra"}, "unexpected argument 'extra'"},
        BadCase{{"--", "--dry-run"}, "unexpected argument '--dry-run'"},
        BadCase{{"--dry-run", "--", "x"}, "unexpected argument 'x'"}));

// getopt_long: both spellings of a value, a unique prefix, options in any
// order, "--" alone.
TEST(Options, ValueFormsAndOrderAreEquivalent) {
    const std::vector<std::vector<std::string>> forms{
        {"--check-config", "--print", "--config", "/c", "--example-request", "1G", "--proc-root",
         "/p"},
        {"--check-config", "--print", "--config=/c", "--example-request=1G", "--proc-root=/p"},
        {"--proc-root=/p", "--example-request", "1G", "--print", "--config=/c", "--check-config",
         "--"},
        {"--check", "--pri", "--conf", "/c", "--example-r=1G", "--proc=/p"},
    };
    for (const auto& args : forms) {
        auto o = parseOptions(args);
        ASSERT_TRUE(o.ok()) << o.error().what;
        EXPECT_EQ(o->mode, Mode::CheckConfig);
        EXPECT_TRUE(o->print);
        EXPECT_EQ(o->configFile.value_or(""), "/c");
        EXPECT_EQ(o->procRoot.value_or(""), "/p");
        EXPECT_EQ(o->exampleRequest, "1G");
    }
}

TEST(Options, HelpAndVersionStopAtOnce) {
    EXPECT_EQ(parseOptions({"--help", "--frobnicate"})->mode, Mode::Help);
    EXPECT_EQ(parseOptions({"--version", "extra"})->mode, Mode::Version);
    EXPECT_FALSE(parseOptions({"--frobnicate", "--help"}).ok());
}

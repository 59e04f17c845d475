// SPDX-License-Identifier: Apache-2.0
// Value parsers of memqosd.conf: good and bad inputs, error texts, and
// parse(format(v)) == v.
#include "memqos/config/values.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <ostream>

namespace memqos::config {
namespace {

using namespace std::chrono_literals;

// One case: input, and either the expected value or a substring of the error.
template <typename T>
struct Case {
    std::string input;
    std::optional<T> want; // nullopt: must fail
    std::string error = {};
};

template <typename T>
std::ostream& operator<<(std::ostream& os, const Case<T>& c) {
    return os << '"' << c.input << '"';
}

template <typename T, typename Parse>
void checkCase(const Case<T>& c, Parse parse) {
    auto r = parse(c.input);
    if (c.want) {
        ASSERT_TRUE(r.ok()) << c.input << ": " << r.error().what;
        EXPECT_EQ(*r, *c.want) << c.input;
    } else {
        ASSERT_FALSE(r.ok()) << c.input << " parsed";
        EXPECT_NE(r.error().what.find(c.error), std::string::npos)
            << c.input << ": got \"" << r.error().what << "\", want \"" << c.error << "\"";
        EXPECT_EQ(r.error().code, std::errc::invalid_argument);
    }
}

// --- sizes -----------------------------------------------------------------

class SizeTest : public ::testing::TestWithParam<Case<Bytes>> {};

TEST_P(SizeTest, Parses) {
    checkCase(GetParam(), parseSize);
    if (GetParam().want) {
        auto again = parseSize(formatSize(*GetParam().want));
        ASSERT_TRUE(again.ok()) << formatSize(*GetParam().want);
        EXPECT_EQ(*again, *GetParam().want);
    }
}

constexpr Bytes kTiB = kGiB * 1024;

INSTANTIATE_TEST_SUITE_P(
    Values, SizeTest,
    ::testing::Values(Case<Bytes>{"0", 0}, Case<Bytes>{"512", 512}, Case<Bytes>{"512B", 512},
                      Case<Bytes>{"512b", 512}, Case<Bytes>{"512K", 512 * kKiB},
                      Case<Bytes>{"512k", 512 * kKiB}, Case<Bytes>{"512M", 512 * kMiB},
                      Case<Bytes>{"512m", 512 * kMiB}, Case<Bytes>{"2G", 2 * kGiB},
                      Case<Bytes>{"1.5G", 1610612736}, Case<Bytes>{"1T", kTiB},
                      Case<Bytes>{"1P", kTiB * 1024}, Case<Bytes>{"1E", kTiB* kMiB},
                      Case<Bytes>{"15E", 15 * kTiB* kMiB}, Case<Bytes>{"2GiB", 2 * kGiB},
                      Case<Bytes>{"2gib", 2 * kGiB}, Case<Bytes>{"4KiB", 4096},
                      Case<Bytes>{" 2G ", 2 * kGiB}, Case<Bytes>{"2 G", 2 * kGiB},
                      Case<Bytes>{"2\tG", 2 * kGiB}, Case<Bytes>{"1.5", 1},
                      Case<Bytes>{"0.5K", 512}, Case<Bytes>{"1.0009765625K", 1025},
                      Case<Bytes>{"0.0001K", 0}, Case<Bytes>{"1.9999999999B", 1},
                      Case<Bytes>{"18446744073709551615", std::numeric_limits<Bytes>::max()},
                      Case<Bytes>{"0.999999999999999999E", 1152921504606846974}, // rounded down
                      Case<Bytes>{"", std::nullopt, "not a size (expected e.g. 512M, 2G, 1.5G)"},
                      Case<Bytes>{"abc", std::nullopt, "not a size (expected e.g. 512M, 2G, 1.5G)"},
                      Case<Bytes>{"-1", std::nullopt, "not a size"},
                      Case<Bytes>{"+1", std::nullopt, "not a size"},
                      Case<Bytes>{".5G", std::nullopt, "not a size"},
                      Case<Bytes>{"G", std::nullopt, "not a size"},
                      Case<Bytes>{"inf", std::nullopt, "not a size"},
                      Case<Bytes>{"nan", std::nullopt, "not a size"},
                      Case<Bytes>{"1e3", std::nullopt, "unknown unit \"e3\""},
                      Case<Bytes>{"0x10", std::nullopt, "unknown unit \"x10\""},
                      Case<Bytes>{"5.G", std::nullopt, "unknown unit \".G\""},
                      Case<Bytes>{"1..5G", std::nullopt, "unknown unit"},
                      Case<Bytes>{"1.5.G", std::nullopt, "unknown unit"},
                      Case<Bytes>{"2X", std::nullopt,
                                  "unknown unit \"X\" (expected K, M, G, T, P or E; e.g. 512M)"},
                      Case<Bytes>{"2G2", std::nullopt, "unknown unit"},
                      Case<Bytes>{"1 2", std::nullopt, "unknown unit"},
                      Case<Bytes>{"10%", std::nullopt, "a percentage is not allowed here"},
                      Case<Bytes>{"16E", std::nullopt, "size too large"},
                      Case<Bytes>{"18446744073709551616", std::nullopt, "size too large"},
                      Case<Bytes>{"99999999999999999999999G", std::nullopt, "size too large"},
                      Case<Bytes>{"1.0000000000000000001G", std::nullopt, "too many decimals"},
                      Case<Bytes>{"2\x01G", std::nullopt, "unknown unit \"\\x01G\""}));

// "KB", "MB", ... are binary too (memqosctl reads its sizes here and always
// took "1GB" for 1 GiB).
INSTANTIATE_TEST_SUITE_P(SiSpelling, SizeTest,
                         ::testing::Values(Case<Bytes>{"2MB", 2 * kMiB},
                                           Case<Bytes>{"2gb", 2 * kGiB},
                                           Case<Bytes>{"1EB", kTiB* kMiB}));
INSTANTIATE_TEST_SUITE_P(MaxIsForLimits, SizeTest,
                         ::testing::Values(Case<Bytes>{
                             "max", std::nullopt,
                             "not a size (\"max\" is only allowed for a limit)"}));

TEST(FormatSize, UsesTheLargestExactUnit) {
    EXPECT_EQ(formatSize(0), "0");
    EXPECT_EQ(formatSize(512), "512");
    EXPECT_EQ(formatSize(1024), "1K");
    EXPECT_EQ(formatSize(1024 * kMiB), "1G");
    EXPECT_EQ(formatSize(1610612736), "1536M");
    EXPECT_EQ(formatSize(kTiB), "1T");
    EXPECT_EQ(formatSize(std::numeric_limits<Bytes>::max()), "18446744073709551615");
}

class SizeSpecTest : public ::testing::TestWithParam<Case<SizeSpec>> {};

TEST_P(SizeSpecTest, Parses) {
    checkCase(GetParam(), parseSizeSpec);
    if (GetParam().want) {
        auto again = parseSizeSpec(formatSizeSpec(*GetParam().want));
        ASSERT_TRUE(again.ok());
        EXPECT_EQ(*again, *GetParam().want);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Values, SizeSpecTest,
    ::testing::Values(
        Case<SizeSpec>{"1G", SizeSpec{kGiB, std::nullopt}},
        Case<SizeSpec>{"0", SizeSpec{0, std::nullopt}}, Case<SizeSpec>{"5%", SizeSpec{0, 500}},
        Case<SizeSpec>{"0.5%", SizeSpec{0, 50}}, Case<SizeSpec>{"100%", SizeSpec{0, 10000}},
        Case<SizeSpec>{"0%", SizeSpec{0, 0}}, Case<SizeSpec>{"101%", std::nullopt, "above 100%"},
        Case<SizeSpec>{"0.001%", std::nullopt, "too many decimals"},
        Case<SizeSpec>{"abc", std::nullopt,
                       "not a size (expected e.g. 512M, 2G, 1.5G, or a percentage of MemTotal "
                       "such as 5%)"},
        Case<SizeSpec>{"2MB", SizeSpec{2 * kMiB, std::nullopt}}));

TEST(SizeSpec, Resolves) {
    EXPECT_EQ((SizeSpec{kGiB, std::nullopt}).resolve(64 * kGiB), kGiB);
    EXPECT_EQ((SizeSpec{0, 500}).resolve(64 * kGiB), 64 * kGiB / 20);
    EXPECT_EQ((SizeSpec{0, 10000}).resolve(std::numeric_limits<Bytes>::max()),
              std::numeric_limits<Bytes>::max());
    EXPECT_EQ((SizeSpec{0, 1}).resolve(9999), 0u);
    EXPECT_EQ((SizeSpec{0, 3333}).resolve(10001), 3333u);
}

class LimitTest : public ::testing::TestWithParam<Case<Limit>> {};

TEST_P(LimitTest, Parses) {
    checkCase(GetParam(), parseLimit);
    if (GetParam().want) {
        EXPECT_EQ(*parseLimit(formatLimit(*GetParam().want)), *GetParam().want);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Values, LimitTest,
    ::testing::Values(Case<Limit>{"max", Limit{}}, Case<Limit>{"MAX", Limit{}},
                      Case<Limit>{"infinity", Limit{}}, Case<Limit>{"2G", Limit{2 * kGiB}},
                      Case<Limit>{"0", Limit{0}},
                      Case<Limit>{"maximum", std::nullopt,
                                  "not a size (expected e.g. 512M, 2G, 1.5G, or max)"},
                      Case<Limit>{"-1", std::nullopt, "not a size"},
                      Case<Limit>{"5%", std::nullopt, "not a size"},
                      Case<Limit>{"16E", std::nullopt, "size too large"}));

// --- durations -------------------------------------------------------------

class DurationTest : public ::testing::TestWithParam<Case<Usec>> {};

TEST_P(DurationTest, Parses) {
    checkCase(GetParam(), parseDuration);
    if (GetParam().want) {
        auto again = parseDuration(formatDuration(*GetParam().want));
        ASSERT_TRUE(again.ok()) << formatDuration(*GetParam().want);
        EXPECT_EQ(*again, *GetParam().want);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Values, DurationTest,
    ::testing::Values(Case<Usec>{"500ms", 500ms}, Case<Usec>{"30s", 30s}, Case<Usec>{"5min", 5min},
                      Case<Usec>{"1h", 1h}, Case<Usec>{"250us", 250us}, Case<Usec>{"2", 2s},
                      Case<Usec>{"0", 0us}, Case<Usec>{"1.5s", 1500ms}, Case<Usec>{"1d", 24h},
                      Case<Usec>{"10 s", 10s}, Case<Usec>{"5m", 5min}, Case<Usec>{"5M", 5min},
                      Case<Usec>{"0.5ms", 500us}, Case<Usec>{"1.0000005s", 1s},
                      Case<Usec>{"2sec", 2s}, Case<Usec>{"3msec", 3ms}, Case<Usec>{"4usec", 4us},
                      Case<Usec>{"2hr", 2h}, Case<Usec>{"30S", 30s}, Case<Usec>{"365d", 365 * 24h},
                      Case<Usec>{"", std::nullopt,
                                 "not a duration (expected e.g. 500ms, 30s, 5min, 1h)"},
                      Case<Usec>{"s", std::nullopt, "not a duration"},
                      Case<Usec>{"-1s", std::nullopt, "not a duration"},
                      Case<Usec>{"5x", std::nullopt,
                                 "unknown unit \"x\" (expected us, ms, s, min, h or d; e.g. 30s)"},
                      Case<Usec>{"5mins", std::nullopt, "unknown unit"},
                      Case<Usec>{"1e3s", std::nullopt, "unknown unit"},
                      Case<Usec>{"5min 3s", std::nullopt, "unknown unit"},
                      Case<Usec>{"366d", std::nullopt, "duration too long (at most 365d)"},
                      Case<Usec>{"99999999999999999999999s", std::nullopt, "duration too long"}));

TEST(Duration, PositiveRefusesZero) {
    EXPECT_TRUE(parsePositiveDuration("1us").ok());
    for (const char* z : {"0", "0s", "0.0000001s"}) {
        auto r = parsePositiveDuration(z);
        ASSERT_FALSE(r.ok()) << z;
        EXPECT_EQ(r.error().what, "must be greater than 0 (expected e.g. 500ms, 30s, 5min, 1h)");
    }
    EXPECT_EQ(parsePositiveDuration("x").error().what.rfind("not a duration", 0), 0u);
}

TEST(FormatDuration, UsesTheLargestExactUnit) {
    EXPECT_EQ(formatDuration(0us), "0");
    EXPECT_EQ(formatDuration(250us), "250us");
    EXPECT_EQ(formatDuration(1500ms), "1500ms");
    EXPECT_EQ(formatDuration(90s), "90s");
    EXPECT_EQ(formatDuration(60s), "1min");
    EXPECT_EQ(formatDuration(2h), "2h");
    EXPECT_EQ(formatDuration(48h), "2d");
}

// --- percentages, ratios, factors -----------------------------------------

class PercentTest : public ::testing::TestWithParam<Case<double>> {};

TEST_P(PercentTest, Parses) {
    checkCase(GetParam(), parsePercent);
    if (GetParam().want) {
        EXPECT_EQ(*parsePercent(formatPercent(*GetParam().want)), *GetParam().want);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Values, PercentTest,
    ::testing::Values(Case<double>{"10%", 10.0}, Case<double>{"0.1%", 0.1},
                      Case<double>{"100%", 100.0}, Case<double>{"0%", 0.0},
                      Case<double>{"99.999999%", 99.999999}, Case<double>{"10 %", 10.0},
                      Case<double>{"12.5%", 12.5},
                      Case<double>{"10", std::nullopt, "missing '%' (expected e.g. 10% or 0.5%)"},
                      Case<double>{"101%", std::nullopt, "above 100% (expected 0% to 100%)"},
                      Case<double>{"100.01%", std::nullopt, "above 100%"},
                      Case<double>{"1e1%", std::nullopt, "not a percentage"},
                      Case<double>{"abc", std::nullopt,
                                   "not a percentage (expected e.g. 10% or 0.5%)"},
                      Case<double>{"%", std::nullopt, "not a percentage"},
                      Case<double>{"-1%", std::nullopt, "not a percentage"},
                      Case<double>{"10%%", std::nullopt, "not a percentage"},
                      Case<double>{"0.1234567%", std::nullopt, "too many decimals"},
                      Case<double>{"off", std::nullopt, "not a percentage"}));

TEST(Percent, OptionalAcceptsOff) {
    EXPECT_EQ(*parseOptionalPercent("off"), std::nullopt);
    EXPECT_EQ(*parseOptionalPercent("OFF"), std::nullopt);
    EXPECT_EQ(*parseOptionalPercent("5%"), std::optional<double>(5.0));
    EXPECT_EQ(parseOptionalPercent("no").error().what,
              "not a percentage (expected e.g. 10% or 0.5%, or off)");
    EXPECT_EQ(formatOptionalPercent(std::nullopt), "off");
    EXPECT_EQ(formatOptionalPercent(0.1), "0.1%");
}

class PermyriadTest : public ::testing::TestWithParam<Case<Permyriad>> {};

TEST_P(PermyriadTest, Parses) {
    checkCase(GetParam(), parsePermyriad);
    if (GetParam().want) {
        EXPECT_EQ(*parsePermyriad(formatPermyriad(*GetParam().want)), *GetParam().want);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Values, PermyriadTest,
    ::testing::Values(Case<Permyriad>{"10%", 1000}, Case<Permyriad>{"0.05%", 5},
                      Case<Permyriad>{"100%", 10000}, Case<Permyriad>{"0.1%", 10},
                      Case<Permyriad>{"0%", 0}, Case<Permyriad>{"12.34%", 1234},
                      Case<Permyriad>{"0.001%", std::nullopt,
                                      "too many decimals (at most 2, e.g. 0.05%)"},
                      Case<Permyriad>{"100.01%", std::nullopt, "above 100%"},
                      Case<Permyriad>{"10", std::nullopt, "missing '%'"},
                      Case<Permyriad>{"off", std::nullopt, "not a percentage"}));

TEST(Permyriad, FormatsAndOff) {
    EXPECT_EQ(formatPermyriad(1000), "10%");
    EXPECT_EQ(formatPermyriad(5), "0.05%");
    EXPECT_EQ(formatPermyriad(50), "0.5%");
    EXPECT_EQ(formatPermyriad(1005), "10.05%");
    EXPECT_EQ(*parseOptionalPermyriad("off"), std::nullopt);
    EXPECT_EQ(formatOptionalPermyriad(std::nullopt), "off");
    EXPECT_EQ(*parseOptionalPermyriad("90%"), std::optional<Permyriad>(9000));
}

class BoolTest : public ::testing::TestWithParam<Case<bool>> {};
TEST_P(BoolTest, Parses) {
    checkCase(GetParam(), parseBool);
}
INSTANTIATE_TEST_SUITE_P(
    Values, BoolTest,
    ::testing::Values(Case<bool>{"yes", true}, Case<bool>{"no", false}, Case<bool>{"true", true},
                      Case<bool>{"false", false}, Case<bool>{"on", true}, Case<bool>{"off", false},
                      Case<bool>{"1", true}, Case<bool>{"0", false}, Case<bool>{"YES", true},
                      Case<bool>{"False", false},
                      Case<bool>{"", std::nullopt, "not a boolean (expected yes or no)"},
                      Case<bool>{"y", std::nullopt, "not a boolean"},
                      Case<bool>{"2", std::nullopt, "not a boolean"},
                      Case<bool>{"no # comment", std::nullopt, "not a boolean"}));

class RatioTest : public ::testing::TestWithParam<Case<double>> {};
TEST_P(RatioTest, Parses) {
    checkCase(GetParam(), parseRatio);
    if (GetParam().want) {
        EXPECT_EQ(*parseRatio(formatRatio(*GetParam().want)), *GetParam().want);
    }
}
INSTANTIATE_TEST_SUITE_P(
    Values, RatioTest,
    ::testing::Values(Case<double>{"1.0", 1.0}, Case<double>{"1", 1.0}, Case<double>{"1.5", 1.5},
                      Case<double>{"100", 100.0}, Case<double>{"2.25", 2.25},
                      Case<double>{"1.000001", 1.000001},
                      Case<double>{"abc", std::nullopt,
                                   "not a number (expected a ratio ≥ 1.0, e.g. 1.5)"},
                      Case<double>{"0.9", std::nullopt, "below 1.0"},
                      Case<double>{"100.5", std::nullopt, "above 100"},
                      Case<double>{"1e2", std::nullopt, "not a number"},
                      Case<double>{"inf", std::nullopt, "not a number"},
                      Case<double>{"nan", std::nullopt, "not a number"},
                      Case<double>{"-1", std::nullopt, "not a number"},
                      Case<double>{"150%", std::nullopt, "not a number"},
                      Case<double>{"1.0000001", std::nullopt, "too many decimals"}));

TEST(Ratio, Formats) {
    EXPECT_EQ(formatRatio(1.0), "1.0");
    EXPECT_EQ(formatRatio(1.5), "1.5");
    EXPECT_EQ(formatRatio(100.0), "100.0");
    EXPECT_EQ(formatRatio(1.1), "1.1");
}

class FactorTest : public ::testing::TestWithParam<Case<std::optional<Permyriad>>> {};
TEST_P(FactorTest, Parses) {
    checkCase(GetParam(), parseFactor);
    if (GetParam().want) {
        EXPECT_EQ(*parseFactor(formatFactor(*GetParam().want)), *GetParam().want);
    }
}
using F = Case<std::optional<Permyriad>>;
INSTANTIATE_TEST_SUITE_P(
    Values, FactorTest,
    ::testing::Values(
        F{"0.9", Permyriad{9000}}, F{"90%", Permyriad{9000}}, F{"off", std::optional<Permyriad>{}},
        F{"1", Permyriad{10000}}, F{"1.0", Permyriad{10000}}, F{"0", Permyriad{0}},
        F{"0.05", Permyriad{500}}, F{"0.1234", Permyriad{1234}}, F{"12.5%", Permyriad{1250}},
        F{"1.1", std::nullopt, "above 1"}, F{"0.12345", std::nullopt, "too many decimals"},
        F{"abc", std::nullopt,
          "not a factor (expected a number from 0 to 1 such as 0.9, a percentage such as 90%, "
          "or off)"},
        F{"101%", std::nullopt, "above 100%"}, F{"no", std::nullopt, "not a factor"}));

TEST(Factor, Formats) {
    EXPECT_EQ(formatFactor(std::nullopt), "off");
    EXPECT_EQ(formatFactor(9000), "0.9");
    EXPECT_EQ(formatFactor(10000), "1.0");
    EXPECT_EQ(formatFactor(0), "0.0");
    EXPECT_EQ(formatFactor(1234), "0.1234");
}

// --- integers, enums, strings ---------------------------------------------

class IntTest : public ::testing::TestWithParam<Case<std::int64_t>> {};
TEST_P(IntTest, Parses) {
    checkCase(GetParam(), [](std::string_view s) { return parseInt(s, -10, 10); });
}
INSTANTIATE_TEST_SUITE_P(
    Values, IntTest,
    ::testing::Values(Case<std::int64_t>{"5", 5}, Case<std::int64_t>{"-10", -10},
                      Case<std::int64_t>{"10", 10}, Case<std::int64_t>{" 0 ", 0},
                      Case<std::int64_t>{"11", std::nullopt,
                                         "out of range (expected a whole number from -10 to 10)"},
                      Case<std::int64_t>{"-11", std::nullopt, "out of range"},
                      Case<std::int64_t>{"99999999999999999999", std::nullopt, "out of range"},
                      Case<std::int64_t>{"5.0", std::nullopt, "not a whole number"},
                      Case<std::int64_t>{"+5", std::nullopt, "not a whole number"},
                      Case<std::int64_t>{"", std::nullopt, "not a whole number"},
                      Case<std::int64_t>{"0x5", std::nullopt, "not a whole number"}));

class OomScoreAdjTest : public ::testing::TestWithParam<Case<core::OomScoreAdjust>> {};
TEST_P(OomScoreAdjTest, Parses) {
    checkCase(GetParam(), parseOomScoreAdjust);
    if (GetParam().want) {
        EXPECT_EQ(*parseOomScoreAdjust(formatOomScoreAdjust(*GetParam().want)), *GetParam().want);
    }
}
using O = Case<core::OomScoreAdjust>;
INSTANTIATE_TEST_SUITE_P(
    Values, OomScoreAdjTest,
    ::testing::Values(O{"-999", -999}, O{"1000", 1000}, O{"-1000", -1000}, O{"0", 0},
                      O{"burstable", core::OomScoreAdjust::burstable()},
                      O{"Burstable", core::OomScoreAdjust::burstable()},
                      O{"keep", core::OomScoreAdjust::keep()},
                      O{" KEEP ", core::OomScoreAdjust::keep()},
                      O{"1001", std::nullopt,
                        "out of range (expected a number from -1000 to 1000, burstable or keep)"},
                      O{"-1001", std::nullopt, "out of range"},
                      O{"keeps", std::nullopt, "not an oom_score_adj"},
                      O{"abc", std::nullopt, "not an oom_score_adj"},
                      O{"99999999999999999999", std::nullopt, "not an oom_score_adj"}));

TEST(OomScoreAdjTest, FormatsEachMode) {
    EXPECT_EQ(formatOomScoreAdjust(-999), "-999");
    EXPECT_EQ(formatOomScoreAdjust(core::OomScoreAdjust::burstable()), "burstable");
    EXPECT_EQ(formatOomScoreAdjust(core::OomScoreAdjust::keep()), "keep");
}

class PathTest : public ::testing::TestWithParam<Case<std::string>> {};
TEST_P(PathTest, Parses) {
    checkCase(GetParam(), parseAbsolutePath);
}
using S = Case<std::string>;
INSTANTIATE_TEST_SUITE_P(
    Values, PathTest,
    ::testing::Values(S{"/proc", "/proc"}, S{"/sys/fs/cgroup", "/sys/fs/cgroup"}, S{"/", "/"},
                      S{"/a//b/", "/a//b/"}, S{"/a/..b", "/a/..b"},
                      S{"proc", std::nullopt,
                        "not an absolute path (expected e.g. /sys/fs/cgroup)"},
                      S{"", std::nullopt, "not an absolute path"},
                      S{"/a/../b", std::nullopt, "\"..\" component"},
                      S{"/a/./b", std::nullopt, "path contains a \".\" or \"..\" component"},
                      S{"/a/..", std::nullopt, "component"},
                      S{std::string("/a\x01"), std::nullopt, "non-printable"},
                      S{"/" + std::string(4095, 'a'), std::nullopt, "path too long"}));

class GlobTest : public ::testing::TestWithParam<Case<std::string>> {};
TEST_P(GlobTest, Parses) {
    checkCase(GetParam(), parseGlob);
}
INSTANTIATE_TEST_SUITE_P(
    Values, GlobTest,
    ::testing::Values(S{"nginx*.service", "nginx*.service"}, S{"vm:web-*", "vm:web-*"},
                      S{"[ab]*.scope", "[ab]*.scope"}, S{"vm:my vm", "vm:my vm"},
                      S{"", std::nullopt, "empty pattern"},
                      S{"a\x7f", std::nullopt, "non-printable"},
                      S{"\xc3\xa9", std::nullopt, "non-printable"},
                      S{std::string(256, 'a'), std::nullopt, "pattern too long"}));

TEST(Enums, SwapCheckAndProtection) {
    EXPECT_EQ(*parseSwapCheck("warn"), SwapCheck::Warn);
    EXPECT_EQ(*parseSwapCheck("Refuse"), SwapCheck::Refuse);
    EXPECT_EQ(*parseSwapCheck("off"), SwapCheck::Off);
    EXPECT_EQ(parseSwapCheck("maybe").error().what, "unknown value (expected warn, refuse or off)");
    EXPECT_EQ(*parseProtection("min"), core::Protection::Min);
    EXPECT_EQ(*parseProtection("low"), core::Protection::Low);
    EXPECT_EQ(*parseProtection("none"), core::Protection::None);
    EXPECT_EQ(parseProtection("high").error().what, "unknown value (expected min, low or none)");
    for (auto v : {SwapCheck::Off, SwapCheck::Warn, SwapCheck::Refuse})
        EXPECT_EQ(*parseSwapCheck(formatSwapCheck(v)), v);
    for (auto v : {core::Protection::Min, core::Protection::Low, core::Protection::None})
        EXPECT_EQ(*parseProtection(formatProtection(v)), v);
}

TEST(Names, ClassNames) {
    for (std::string_view good :
         {"a", "shared", "a_1", "batch2", "abcdefghijklmnopqrstuvwxyz012345"})
        EXPECT_TRUE(isValidClassName(good)) << good;
    for (std::string_view bad :
         {"", "A", "1a", "a-b", "_a", "a.b", "Shared", "a b", "abcdefghijklmnopqrstuvwxyz0123456"})
        EXPECT_FALSE(isValidClassName(bad)) << bad;
}

TEST(Names, RuleNames) {
    for (std::string_view good : {"web", "Web-1", "a_b", "0"})
        EXPECT_TRUE(isValidRuleName(good)) << good;
    for (std::string_view bad : {"", "a.b", "a b", "a/b", "abcdefghijklmnopqrstuvwxyz0123456"})
        EXPECT_FALSE(isValidRuleName(bad)) << bad;
}

} // namespace
} // namespace memqos::config

// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <limits>

#include "size.hpp"

namespace memqos::ctl {
namespace {

struct SizeCase {
    const char* text;
    Bytes bytes;
};

class ParseSizeGood : public ::testing::TestWithParam<SizeCase> {};

TEST_P(ParseSizeGood, Parses) {
    const auto& c = GetParam();
    auto r = parseSize(c.text, AllowMax::Yes);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.error().what;
    EXPECT_EQ(*r, c.bytes) << c.text;
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, ParseSizeGood,
    ::testing::Values(
        SizeCase{"0", 0}, SizeCase{"4096", 4096}, SizeCase{"1K", 1024}, SizeCase{"1k", 1024},
        SizeCase{"512M", 512 * kMiB}, SizeCase{"256m", 256 * kMiB}, SizeCase{"1G", kGiB},
        SizeCase{"2T", 2 * kGiB * 1024}, SizeCase{"1.5G", kGiB + kGiB / 2}, SizeCase{"0.5K", 512},
        SizeCase{"1.25M", kMiB + kMiB / 4}, SizeCase{"0.1K", 102}, // rounded down to whole bytes
        SizeCase{"1GiB", kGiB}, SizeCase{"1GB", kGiB}, SizeCase{"100B", 100},
        SizeCase{"1.999999T", 2199022156040ULL}, SizeCase{"max", kNoLimit},
        SizeCase{"infinity", kNoLimit}, SizeCase{"18446744073709551614", kNoLimit - 1},
        SizeCase{"16777215T", 16777215ULL * 1024 * kGiB},
        // The config's forms, since memqosctl reads sizes with its parser:
        SizeCase{"1gb", kGiB}, SizeCase{"1 G", kGiB}, SizeCase{" 1G ", kGiB}, SizeCase{"1.5", 1},
        SizeCase{"1.1234567G", 1206302446ULL}, SizeCase{"2P", 2 * kGiB* kMiB},
        SizeCase{"1E", kGiB* kGiB}, SizeCase{"MAX", kNoLimit}));

class ParseSizeBad : public ::testing::TestWithParam<const char*> {};

TEST_P(ParseSizeBad, Rejects) {
    auto r = parseSize(GetParam(), AllowMax::Yes);
    ASSERT_FALSE(r.ok()) << GetParam() << " gave " << *r;
    EXPECT_EQ(r.error().code, std::errc::invalid_argument);
    EXPECT_NE(r.error().what.find(GetParam()), std::string::npos) << r.error().what;
}

INSTANTIATE_TEST_SUITE_P(Sizes, ParseSizeBad,
                         ::testing::Values("", "G", "-1", "+1", "1X", "1KK", "1Kx", "1.", ".5G",
                                           "1.2.3G", "abc", "0x10", "1e3", "10%",
                                           "18446744073709551615",       // = "max" on the bus
                                           "18446744073709551616",       // overflow
                                           "16777216T",                  // 2^64 bytes
                                           "16E",                        // 2^64 bytes
                                           "99999999999999999999999G")); // from_chars range

TEST(ParseSize, MaxOnlyWhereAllowed) {
    auto r = parseSize("max");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().what.find("only allowed for a limit"), std::string::npos);
    EXPECT_EQ(*parseSize("max", AllowMax::Yes), kNoLimit);
}

TEST(ParseSize, ErrorSaysWhatIsAccepted) {
    auto r = parseSize("12Q");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().what,
              "bad size '12Q': unknown unit \"Q\" (expected K, M, G, T, P or E; e.g. 512M)");
    EXPECT_EQ(parseSize("lots", AllowMax::Yes).error().what,
              "bad size 'lots': not a size (expected e.g. 512M, 2G, 1.5G, or max)");
    EXPECT_EQ(parseSize("18446744073709551615").error().what,
              "bad size '18446744073709551615': size too large (18446744073709551615 means "
              "\"max\" on the bus)");
}

struct FormatCase {
    Bytes bytes;
    const char* text;
};

class FormatSize : public ::testing::TestWithParam<FormatCase> {};

TEST_P(FormatSize, Formats) {
    EXPECT_EQ(formatSize(GetParam().bytes), GetParam().text);
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, FormatSize,
    ::testing::Values(FormatCase{0, "0"}, FormatCase{1, "1B"}, FormatCase{1023, "1023B"},
                      FormatCase{1024, "1K"}, FormatCase{1536, "1.5K"},
                      FormatCase{256 * kMiB, "256M"}, FormatCase{kGiB, "1G"},
                      FormatCase{kGiB + kGiB / 2, "1.5G"}, FormatCase{kGiB + 1, "1G"},
                      FormatCase{kGiB + kGiB / 20 + 1, "1.1G"},  // 1.05 rounds up
                      FormatCase{1024 * kMiB - 1, "1G"},         // 1023.99M rounds to 1G
                      FormatCase{kMiB - 1, "1M"},                // 1023.99K rounds to 1M
                      FormatCase{10 * kGiB - kGiB / 100, "10G"}, // 9.99G rounds to 10G
                      FormatCase{kGiB * 1024 * 1024, "1P"}, FormatCase{kNoLimit, "max"},
                      FormatCase{kNoLimit - 1, "16E"}));

TEST(FormatSize, RoundTripsExactMultiples) {
    for (const char* text : {"1K", "512M", "1G", "1.5G", "3T", "100M", "2.5K"}) {
        auto r = parseSize(text);
        ASSERT_TRUE(r.ok()) << text;
        EXPECT_EQ(formatSize(*r), text);
    }
}

} // namespace
} // namespace memqos::ctl

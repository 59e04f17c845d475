// SPDX-License-Identifier: Apache-2.0
#include "memqos/core/oom_score.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "literals.hpp"

namespace memqos::core {
namespace {

using namespace test; // NOLINT(google-build-using-namespace): unit literals

constexpr Bytes kMax = std::numeric_limits<Bytes>::max();

ClassPolicy fixedAdj(std::optional<int> adj) {
    return ClassPolicy{.name = "c",
                       .oomScoreAdj = adj ? OomScoreAdjust(*adj) : OomScoreAdjust::burstable()};
}

struct OomCase {
    const char* name;
    std::optional<int> fixed;
    Bytes request;
    Bytes memTotal;
    int expected;
};

class OomScoreAdj : public ::testing::TestWithParam<OomCase> {};

TEST_P(OomScoreAdj, Kubelet) {
    const auto& c = GetParam();
    EXPECT_EQ(oomScoreAdj(fixedAdj(c.fixed), c.request, c.memTotal), c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    CoreOomScore, OomScoreAdj,
    ::testing::Values(OomCase{"system_fixed", -999, 1_GiB, 8_GiB, -999},
                      OomCase{"dedicated_fixed", -997, 1_GiB, 8_GiB, -997},
                      OomCase{"reclaimed_fixed", 1000, 0, 8_GiB, 1000},
                      OomCase{"fixed_clamped_high", 2000, 0, 8_GiB, 1000},
                      OomCase{"fixed_clamped_low", -5000, 0, 8_GiB, -1000},
                      OomCase{"fixed_ignores_memtotal_zero", 0, 0, 0, 0},
                      OomCase{"eighth", std::nullopt, 1_GiB, 8_GiB, 875},
                      OomCase{"half", std::nullopt, 4_GiB, 8_GiB, 500},
                      OomCase{"no_request", std::nullopt, 0, 8_GiB, 999},
                      OomCase{"below_one_permille", std::nullopt, 999, 1000000, 999},
                      OomCase{"one_permille", std::nullopt, 1000, 1000000, 999},
                      OomCase{"two_permille", std::nullopt, 2000, 1000000, 998},
                      OomCase{"leaves_four", std::nullopt, 996000, 1000000, 4},
                      OomCase{"leaves_three", std::nullopt, 997000, 1000000, 3},
                      OomCase{"leaves_one_clamped", std::nullopt, 999000, 1000000, 3},
                      OomCase{"request_is_memtotal", std::nullopt, 8_GiB, 8_GiB, 3},
                      OomCase{"request_above_memtotal", std::nullopt, 9_GiB, 8_GiB, 3},
                      OomCase{"memtotal_zero", std::nullopt, 1_GiB, 0, 999},
                      OomCase{"huge_no_overflow", std::nullopt, kMax / 2, kMax, 501}),
    test::ByName());

TEST(CoreOomScore, DefaultClasses) {
    const auto classes = defaultClasses();
    EXPECT_EQ(oomScoreAdj(*findClass(classes, "system"), 1_GiB, 8_GiB), -999);
    EXPECT_EQ(oomScoreAdj(*findClass(classes, "dedicated"), 1_GiB, 8_GiB), -997);
    EXPECT_EQ(oomScoreAdj(*findClass(classes, "shared"), 1_GiB, 8_GiB), 875);
    EXPECT_EQ(oomScoreAdj(*findClass(classes, "reclaimed"), 1_GiB, 8_GiB), 1000);
}

} // namespace
} // namespace memqos::core

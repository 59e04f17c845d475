// SPDX-License-Identifier: Apache-2.0
#include "memqos/core/psi_triggers.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace memqos::core {
namespace {

using Specs = std::vector<TriggerSpec>;

PressureConfig allOff() {
    PressureConfig c;
    for (auto& l : c.levels) {
        l.someAvg10.reset();
        l.fullAvg10.reset();
    }
    return c;
}

TEST(CorePsiTriggers, DefaultsTakeTheLowestThresholdOfEachKind) {
    // Defaults: some 10/25/off, full off/5/20.
    EXPECT_EQ(psiTriggers(PressureConfig{}),
              (Specs{{"some", 100'000, 1'000'000}, {"full", 50'000, 1'000'000}}));
}

TEST(CorePsiTriggers, LowestEnabledWhateverTheLevel) {
    PressureConfig c = allOff();
    c.levels[2].someAvg10 = 40.0;
    c.levels[1].someAvg10 = 2.5;
    c.levels[0].fullAvg10 = 30.0;
    c.levels[2].fullAvg10 = 12.0;
    EXPECT_EQ(psiTriggers(c), (Specs{{"some", 25'000, 1'000'000}, {"full", 120'000, 1'000'000}}));
}

TEST(CorePsiTriggers, NoTriggerForAKindThatIsAllOff) {
    PressureConfig c = allOff();
    EXPECT_TRUE(psiTriggers(c).empty());
    c.levels[1].fullAvg10 = 5.0;
    EXPECT_EQ(psiTriggers(c), (Specs{{"full", 50'000, 1'000'000}}));
    c = allOff();
    c.levels[0].someAvg10 = 10.0;
    EXPECT_EQ(psiTriggers(c), (Specs{{"some", 100'000, 1'000'000}}));
}

TEST(CorePsiTriggers, StallIsClampedIntoTheKernelsLimits) {
    const auto stallFor = [](double percent) {
        PressureConfig c = allOff();
        c.levels[0].someAvg10 = percent;
        const auto specs = psiTriggers(c);
        EXPECT_EQ(specs.size(), 1U);
        return specs.empty() ? 0 : specs.front().stallUs;
    };
    EXPECT_EQ(stallFor(0.0), kPsiMinStallUs);
    EXPECT_EQ(stallFor(0.01), kPsiMinStallUs); // 100 µs: below the floor
    EXPECT_EQ(stallFor(0.1), 1'000U);
    EXPECT_EQ(stallFor(0.15), 1'500U);
    EXPECT_EQ(stallFor(-5.0), kPsiMinStallUs);
    EXPECT_EQ(stallFor(std::numeric_limits<double>::quiet_NaN()), kPsiMinStallUs);
    EXPECT_EQ(stallFor(99.9999), kPsiWindowUs - 1);
    EXPECT_EQ(stallFor(100.0), kPsiWindowUs - 1);
    EXPECT_EQ(stallFor(250.0), kPsiWindowUs - 1);
    for (const double p : {0.0, 0.01, 1.0, 50.0, 100.0, 1e9}) {
        const auto s = stallFor(p);
        EXPECT_GT(s, 0U) << p;
        EXPECT_LT(s, kPsiWindowUs) << p;
    }
    EXPECT_GE(kPsiWindowUs, kPsiKernelMinWindowUs);
    EXPECT_LE(kPsiWindowUs, kPsiKernelMaxWindowUs);
}

TEST(CorePsiTriggers, TriggerLine) {
    EXPECT_EQ(triggerLine({"some", 150'000, 1'000'000}), "some 150000 1000000");
    EXPECT_EQ(triggerLine({"full", 1'000, 2'000'000}), "full 1000 2000000");
}

} // namespace
} // namespace memqos::core

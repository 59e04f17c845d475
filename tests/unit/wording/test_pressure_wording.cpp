// SPDX-License-Identifier: Apache-2.0
// The wording of the pressure ladder's decisions: what the journal, the
// PressureLevelChanged and WorkloadKilled signals and the kill history say
// (the VM tests grep for parts of it). The numbers are those the core
// decides in tests/unit/core/test_pressure.cpp's scenarios.
#include "memqos/wording/bytes.hpp"
#include "memqos/wording/pressure.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "../core/literals.hpp"

namespace memqos::wording {
namespace {

using namespace memqos::core; // NOLINT(google-build-using-namespace): the core's types
using namespace core::test;   // NOLINT(google-build-using-namespace): unit literals
using std::chrono::seconds;

constexpr Bytes kTotal = 16'000'000'000;
constexpr Bytes kPerMyriad = kTotal / 10000;

const MemAvailableSignal kAvailable150{
    .memAvailable = kPerMyriad * 150, .memTotal = kTotal, .threshold = 200};

TEST(WordingPressure, PsiSignals) {
    EXPECT_EQ(describe(PressureSignal{PsiSignal{.full = true, .avg10 = 32.5, .threshold = 20}}),
              "full avg10 32.5% ≥ 20%");
    EXPECT_EQ(describe(PressureSignal{PsiSignal{.full = false, .avg10 = 30, .threshold = 25}}),
              "some avg10 30% ≥ 25%");
}

TEST(WordingPressure, LevelRoseNamesSignalAndNumbers) {
    const LevelReason rose =
        LevelRose{.signals = {PsiSignal{.full = true, .avg10 = 32.5, .threshold = 20}},
                  .duration = seconds(10)};
    EXPECT_EQ(describe(rose), "full avg10 32.5% ≥ 20% for 10s");
    EXPECT_EQ(describe(Note{LevelChanged{.from = 0, .to = 3, .reason = rose}}),
              "pressure level 0 → 3: full avg10 32.5% ≥ 20% for 10s");
    EXPECT_EQ(describe(LevelReason{
                  LevelRose{.signals = {PsiSignal{.full = false, .avg10 = 30, .threshold = 25},
                                        PsiSignal{.full = true, .avg10 = 6, .threshold = 5}},
                            .duration = seconds(5)}}),
              "some avg10 30% ≥ 25%; full avg10 6% ≥ 5% for 5s");
    EXPECT_EQ(describe(LevelReason{LevelRose{.signals = {kAvailable150}, .duration = seconds(2)}}),
              "MemAvailable 1.5% ≤ 2% (228.9 MiB of 14.9 GiB) for 2s");
    EXPECT_EQ(describe(LevelReason{}), "");
}

TEST(WordingPressure, RecoveryReason) {
    const LevelReason fell = LevelFell{
        .from = 1,
        .hysteresis = 2000,
        .duration = seconds(10),
        .readings = {
            .someAvg10 = 0, .fullAvg10 = 0, .memAvailable = kTotal / 2, .memTotal = kTotal}};
    EXPECT_EQ(describe(fell), "below level 1 thresholds (hysteresis 20%) for 10s: some avg10 0%, "
                              "full avg10 0%, MemAvailable 50%");
    EXPECT_EQ(describe(Readings{}), "no readings");
    EXPECT_EQ(describe(Readings{.someAvg10 = 12.34, .fullAvg10 = std::nullopt}),
              "some avg10 12.3%");
}

TEST(WordingPressure, WatermarkAndSwapSignals) {
    EXPECT_EQ(describe(LevelReason{LevelRose{.signals = {WatermarkSignal{.zone = "Normal",
                                                                         .node = 0,
                                                                         .free = 1000 * 4096,
                                                                         .watermark = 2000 * 4096,
                                                                         .min = true}},
                                             .duration = seconds(10)}}),
              "zone Normal (node 0) free 3.9 MiB < min watermark 7.8 MiB for 10s");
    EXPECT_EQ(describe(PressureSignal{WatermarkSignal{
                  .zone = "DMA32", .node = 1, .free = 0, .watermark = 4096, .min = false}}),
              "zone DMA32 (node 1) free 0 B < low watermark 4.0 KiB");
    const SwapSignal swap{.used = 4_GiB - 4_GiB / 10000 * 500,
                          .swapTotal = 4_GiB,
                          .threshold = 9000,
                          .memAvailable = kAvailable150};
    EXPECT_EQ(
        describe(LevelReason{LevelRose{.signals = {kAvailable150, swap}, .duration = seconds(10)}}),
        "MemAvailable 1.5% ≤ 2% (228.9 MiB of 14.9 GiB); swap used 95% ≥ 90% (3.8 GiB of 4.0 "
        "GiB) with MemAvailable 1.5% ≤ 2% for 10s");
    EXPECT_EQ(describe(LevelReason{LevelRose{
                  .signals = {swap}, .duration = seconds(0), .exhausted = true}}),
              "swap used 95% ≥ 90% (3.8 GiB of 4.0 GiB) with MemAvailable 1.5% ≤ 2% for 0ms "
              "(memory and swap exhausted: at once, not after Level3Duration)");
}

TEST(WordingPressure, Notes) {
    EXPECT_EQ(describe(Note{AdmissionChanged{.open = false, .level = 3}}),
              "admission closed at pressure level 3");
    EXPECT_EQ(describe(Note{AdmissionChanged{.open = true, .level = 0}}),
              "admission reopened at pressure level 0");
    EXPECT_EQ(describe(Note{NoKillCandidate{}}), "level 3 but no killable candidate");
    EXPECT_EQ(describe(Note{KillCooldown{.left = seconds(13)}}),
              "level 3: kill cooldown, next kill possible in 13s");
    EXPECT_EQ(describe(Note{KillCooldown{.left = std::chrono::milliseconds(2500)}}),
              "level 3: kill cooldown, next kill possible in 2.5s");
}

// roomy()'s guard in test_pressure.cpp: 16e9 − 6 GiB − 5 % of 16e9.
const GuardCap kRoomy{.memTotal = kTotal,
                      .others = 6_GiB,
                      .reserved = 0,
                      .headroom = 800'000'000,
                      .left = 8'757'549'056,
                      .floor = 320'000'000,
                      .floored = false,
                      .cap = 8'757'547'008};

TEST(WordingPressure, CapReasons) {
    CapClass c{.className = "reclaimed",
               .memoryHigh = 2040107008,
               .why = CapClass::Why::Throttle,
               .guard = kRoomy,
               .level = 2,
               .usage = 2_GiB,
               .previous = 0};
    EXPECT_EQ(describe(c),
              "throttle at pressure level 2: usage 2.0 GiB, cap 1.9 GiB (guard 8.2 GiB)");
    c.why = CapClass::Why::Guard;
    EXPECT_EQ(describe(c), "guard: MemTotal 14.9 GiB − others 6.0 GiB − host 0 B (NodeReserved; "
                           "in use 0 B) − headroom 762.9 MiB = 8.2 GiB");
    // The host claims the larger of NodeReserved and what it uses.
    c.guard.reserved = 1_GiB;
    c.guard.hostOwn = 512_MiB;
    EXPECT_TRUE(describe(c).find(" − host 1.0 GiB (NodeReserved; in use 512.0 MiB) − ") !=
                std::string::npos)
        << describe(c);
    c.guard.hostOwn = 1536_MiB;
    EXPECT_TRUE(describe(c).find(" − host 1.5 GiB (in use, over NodeReserved 1.0 GiB) − ") !=
                std::string::npos)
        << describe(c);
    c.guard.floored = true;
    EXPECT_TRUE(describe(c).ends_with(", floor 305.2 MiB")) << describe(c);
    c.why = CapClass::Why::Restore;
    c.level = 1;
    c.previous = 2040107008;
    c.memoryHigh = Bytes{2040107008} + 159'997'952;
    EXPECT_EQ(describe(c),
              "restore at pressure level 1: cap 1.9 GiB → 2.0 GiB toward the guard's 8.2 GiB");
}

Candidate batch() {
    return Candidate{.id = "batch.service",
                     .className = "reclaimed",
                     .rank = 0,
                     .aboveRequest = true,
                     .priority = 0,
                     .usage = 1_GiB,
                     .request = 0,
                     .excess = 1_GiB,
                     .swapUsage = 100_MiB};
}

TEST(WordingPressure, KillReasons) {
    KillWorkload k{
        .victim = batch(),
        .reason = LadderKill{.level = 3,
                             .signals = {PsiSignal{.full = true, .avg10 = 50, .threshold = 20}},
                             .readings = {}},
        .numbers = {}};
    EXPECT_EQ(describe(k), "kill batch.service (class reclaimed, priority 0): usage 1.0 GiB, "
                           "request 0 B, excess 1.0 GiB, swap "
                           "100.0 MiB; pressure level 3: full avg10 50% ≥ 20%");
    k.reason = LadderKill{
        .level = 3,
        .signals = {},
        .readings = {
            .someAvg10 = 1.5, .fullAvg10 = 0.3, .memAvailable = kTotal / 4, .memTotal = kTotal}};
    EXPECT_TRUE(describe(k).ends_with(
        "; pressure level 3: held by hysteresis, some avg10 1.5%, full avg10 0.3%, "
        "MemAvailable 25%"))
        << describe(k);
    k.reason = StallKill{.share = 25.4,
                         .threshold = 20,
                         .duration = std::chrono::milliseconds(10300),
                         .classUsage = 1536_MiB,
                         .classCap = 1_GiB,
                         .host = {.memShort = std::nullopt,
                                  .stalling = "class:system",
                                  .stallingShare = 35}};
    EXPECT_EQ(describe(k), "kill batch.service (class reclaimed): class reclaimed stalled at its "
                           "cap (memory.current 1.5 GiB of memory.high 1.0 GiB), full stall "
                           "25.4% of the time ≥ 20% for 10.3s; usage 1.0 GiB, swap 100.0 MiB; "
                           "the host was hurt: protected class system stalled 35% of the time");
    std::get<StallKill>(k.reason).host = {
        .memShort = MemAvailableSignal{.memAvailable = kTotal / 25, .memTotal = kTotal, .threshold = 500},
        .stalling = "cgroup:system.slice/db.service",
        .stallingShare = 21};
    EXPECT_TRUE(describe(k).ends_with("; the host was hurt: MemAvailable 4% ≤ 5% (" +
                                      formatBytes(kTotal / 25) + " of " + formatBytes(kTotal) +
                                      "), protected cgroup system.slice/db.service stalled "
                                      "21% of the time"))
        << describe(k);
}

} // namespace
} // namespace memqos::wording

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Thresholds of the pressure ladder (doc/DESIGN.md §4.2). Levels:
//   0 normal
//   1 close admission + reclaim the reclaimed class's cache
//   2 throttle the reclaimed class (lower its memory.high), shrink balloons
//   3 kill one victim per cooldown
// A level is entered when ANY of its enabled signals has been at or past its
// threshold continuously for `duration`. It is left (one level down) when ALL
// of its signals have been below threshold·(1 − hysteresis) (or, for
// MemAvailable, above threshold/(1 − hysteresis)) for `recoveryDuration`.

#include "memqos/core/types.hpp"

#include <array>
#include <chrono>
#include <optional>

namespace memqos::core {

struct LevelThresholds {
    std::optional<double> someAvg10;           // percent 0..100 of system memory PSI "some avg10"; nullopt = off
    std::optional<double> fullAvg10;           // percent of "full avg10"; nullopt = off
    std::optional<Permyriad> memAvailableBelow; // MemAvailable/MemTotal below this; nullopt = off
    Usec duration{0};
};

struct PressureConfig {
    // levels[0] is level 1, levels[2] is level 3.
    std::array<LevelThresholds, 3> levels{{
        {10.0, std::nullopt, 1000, std::chrono::seconds(2)},
        {25.0, 5.0, 500, std::chrono::seconds(5)},
        {std::nullopt, 20.0, 200, std::chrono::seconds(10)},
    }};
    // Free pages below the min watermark in any zone counts as a level-3
    // signal; below the low watermark as a level-2 signal.
    bool watermarks = true;
    // Swap used / swap total at or past this, while MemAvailable is below the
    // level-3 MemAvailable threshold, is a level-3 signal ("swap trigger";
    // victims are then ranked by swap usage). nullopt = off.
    std::optional<Permyriad> swapUsedKill = 9000;
    Permyriad hysteresis = 2000;              // 20 %
    Usec recoveryDuration = std::chrono::seconds(10);
    Usec killCooldown = std::chrono::seconds(15);
    // Memory guard: a memoryGuard class's cap is MemTotal − the other
    // classes' usage − NodeReserved − this share of MemTotal.
    Permyriad guardHeadroom = 500; // 5 %
    // Class stall: a killable memoryGuard class whose own slice was fully
    // stalled (PSI "full" total, not avg10, which lags by seconds) for at
    // least this percentage of wall time, measured over windows of at least
    // kClassStallWindow, in every window for classStallDuration, while at
    // its cap (atCap in pressure.hpp), is a hog held at its cap; its top
    // workload is killed. A throttled hog's stall counts in the host's PSI
    // too, so this is how long it may stall the host.
    // nullopt = off.
    std::optional<double> classStallFull = 20.0;
    Usec classStallDuration = std::chrono::seconds(1);
};

} // namespace memqos::core

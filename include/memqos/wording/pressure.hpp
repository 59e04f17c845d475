// SPDX-License-Identifier: Apache-2.0
#pragma once
// The pressure ladder's decisions (core/decisions.hpp) in English: the
// journal's "Pressure: …", "Set MemoryHigh … : …" and "Killed … : …" lines,
// the PressureLevelChanged and WorkloadKilled reasons, the kill history and
// the AdmissionClosed error.

#include "memqos/core/decisions.hpp"

#include <string>

namespace memqos::wording {

// "some avg10 30% ≥ 25%", "full avg10 32.5% ≥ 20%",
// "MemAvailable 1.5% ≤ 2% (228.9 MiB of 14.9 GiB)",
// "zone Normal (node 0) free 3.9 MiB < low watermark 11.7 MiB",
// "swap used 95% ≥ 90% (3.8 GiB of 4.0 GiB) with MemAvailable 1.5% ≤ 2%".
std::string describe(const core::PressureSignal& s);

// "some avg10 0%, full avg10 0%, MemAvailable 50%"; "no readings" when there
// are none.
std::string describe(const core::Readings& r);

// "full avg10 32.5% ≥ 20% for 10s" (the signals joined by "; "),
// "below level 1 thresholds (hysteresis 20%) for 10s: <readings>"; empty for
// std::monostate.
std::string describe(const core::LevelReason& r);

// "pressure level 0 → 3: <reason>", "admission closed at pressure level 3",
// "admission reopened at pressure level 0", "level 3 but no killable
// candidate", "level 3: kill cooldown, next kill possible in 5s".
std::string describe(const core::Note& n);

// Why a class's MemoryHigh is set:
//   "guard: MemTotal … − other classes … − reserved … − headroom … = …"
//   (", floor …" when floored), "throttle at pressure level 2: usage …, cap
//   … (guard …)", "restore at pressure level 0: cap … → … toward the guard's …".
std::string describe(const core::CapClass& c);

// "kill batch.service (class reclaimed, priority 0): usage …, request …,
// excess …, swap …; pressure level 3: <signals>" (or "held by hysteresis,
// <readings>"); "kill ID (class C): class C stalled at its cap, full stall
// 25.4% of the time ≥ 20% for 10.3s; usage …, swap …".
std::string describe(const core::KillWorkload& k);

} // namespace memqos::wording

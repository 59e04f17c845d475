// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which PSI triggers start a tick early (kernel Documentation/accounting/
// psi.rst). A trigger "<kind> <stall us> <window us>" written to a pressure
// file wakes its poller when the tasks stalled for at least `stall` µs
// within a `window` µs window. With a 1 s window and stall = threshold % of
// it, a trigger fires when the stall share over the last second reaches the
// pressure ladder's lowest avg10 threshold: the tick that follows sees the
// rising avg10 within a second instead of within [Manager] Interval.

#include "memqos/core/pressure_config.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace memqos::core {

// The kernel's limits (psi.rst): 500 ms <= window <= 10 s, 0 < stall <= window.
inline constexpr std::uint64_t kPsiKernelMinWindowUs = 500'000;
inline constexpr std::uint64_t kPsiKernelMaxWindowUs = 10'000'000;
// Ours: a 1 s window, and at least 1 ms of stall (a lower threshold would
// fire on noise).
inline constexpr std::uint64_t kPsiWindowUs = 1'000'000;
inline constexpr std::uint64_t kPsiMinStallUs = 1'000;
static_assert(kPsiWindowUs >= kPsiKernelMinWindowUs && kPsiWindowUs <= kPsiKernelMaxWindowUs);
static_assert(kPsiMinStallUs > 0 && kPsiMinStallUs < kPsiWindowUs);

struct TriggerSpec {
    std::string kind;           // "some" or "full"
    std::uint64_t stallUs = 0;  // in [kPsiMinStallUs, windowUs)
    std::uint64_t windowUs = 0; // kPsiWindowUs

    bool operator==(const TriggerSpec&) const = default;
};

// The triggers for `config`, at most two and in this order:
//  - "some" at the lowest enabled SomeAvg10 threshold of the levels,
//  - "full" at the lowest enabled FullAvg10 threshold of the levels,
// none for a kind whose thresholds are all off (so an empty vector when the
// ladder uses no PSI threshold: nothing to register, ticks stay periodic).
// Window kPsiWindowUs; stall = threshold % of the window (10 % -> 100000 µs),
// rounded to the nearest µs and clamped to [kPsiMinStallUs, window − 1]
// (0 % or a NaN gives the minimum, 100 % one µs less than the window), which
// is always within the kernel's limits.
std::vector<TriggerSpec> psiTriggers(const PressureConfig& config);

// What is written to the pressure file, without the terminating NUL:
// "some 100000 1000000".
std::string triggerLine(const TriggerSpec& spec);

} // namespace memqos::core

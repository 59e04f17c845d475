// SPDX-License-Identifier: Apache-2.0
#pragma once
// Vocabulary types shared by every layer. Units are in the names: Bytes are
// bytes, Usec microseconds, Permyriad hundredths of a percent (10000 = 100 %).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace memqos {

using Bytes = std::uint64_t;
// A memory limit; std::nullopt means "max" (no limit), as cgroupfs writes it.
using Limit = std::optional<Bytes>;
inline constexpr Bytes kNoLimit = UINT64_MAX; // how D-Bus and systemd spell "max"
inline constexpr Bytes kKiB = 1024;
inline constexpr Bytes kMiB = 1024 * kKiB;
inline constexpr Bytes kGiB = 1024 * kMiB;
inline constexpr Bytes kDefaultPageSize = 4096;

// 1/100 of a percent: 10000 = 100 %. Used for config percentages and factors.
using Permyriad = std::uint32_t;
inline constexpr Permyriad kPermyriadOne = 10000;

// Monotonic time and durations. The core never reads a clock: `now` comes in
// the Snapshot.
using Usec = std::chrono::microseconds;
using TimePoint = std::chrono::microseconds; // since an arbitrary monotonic epoch

inline constexpr Bytes limitToBus(const Limit& l) { return l ? *l : kNoLimit; }
inline constexpr Limit limitFromBus(Bytes b) { return b == kNoLimit ? Limit{} : Limit{b}; }

} // namespace memqos

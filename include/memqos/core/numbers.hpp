// SPDX-License-Identifier: Apache-2.0
#pragma once
// Exact integer helpers and numbers as digits, shared by the core (its error
// messages) and the wording layer: no words here, only arithmetic and digits.

#include "memqos/core/types.hpp"

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>

namespace memqos::core::numbers {

// 128-bit products keep every Bytes × factor comparison exact; g++ and
// clang have it on every 64-bit target memqos runs on.
__extension__ using U128 = unsigned __int128;

inline constexpr std::uint64_t saturate(U128 v) {
    return v > std::numeric_limits<std::uint64_t>::max() ? std::numeric_limits<std::uint64_t>::max()
                                                         : static_cast<std::uint64_t>(v);
}

inline constexpr Bytes subOrZero(Bytes a, Bytes b) {
    return a > b ? a - b : 0;
}

inline std::string toText(std::uint64_t v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

// "12.5%" from parts per ten thousand (1250), exact: "12%", "12.5%", "12.05%".
inline std::string permyriadText(std::uint64_t p) {
    std::string s = toText(p / 100);
    const std::uint64_t frac = p % 100;
    if (frac != 0) {
        s += '.';
        s += static_cast<char>('0' + frac / 10);
        if (frac % 10 != 0) {
            s += static_cast<char>('0' + frac % 10);
        }
    }
    return s + "%";
}

} // namespace memqos::core::numbers

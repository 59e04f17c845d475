// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private helpers of the wording: numbers as text. Not installed.

#include "memqos/core/types.hpp"

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>

namespace memqos::wording::detail {

// 128-bit products keep ratios of bytes exact (as in the core).
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

// `v` with `decimals` digits after the point (fixed), trailing zeros and a
// trailing point removed when `trim` ("20%", "32.5%").
inline std::string fixed(double v, int decimals, bool trim) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
    if (r.ec != std::errc{}) {
        return "?";
    }
    std::string s(buf, r.ptr);
    if (trim && s.find('.') != std::string::npos) {
        while (s.back() == '0') {
            s.pop_back();
        }
        if (s.back() == '.') {
            s.pop_back();
        }
    }
    return s;
}

// "12.5%" from a percentage (0..100).
inline std::string percentText(double percent) {
    return fixed(percent, 1, true) + "%";
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

// "10s", "2.5s", "500ms": durations in reasons.
inline std::string durationText(Usec d) {
    const auto us = d.count() < 0 ? std::uint64_t{0} : static_cast<std::uint64_t>(d.count());
    if (us < 1'000'000) {
        return toText(us / 1000) + "ms";
    }
    const std::uint64_t tenths = us / 100'000;
    return toText(tenths / 10) + (tenths % 10 == 0 ? std::string() : "." + toText(tenths % 10)) +
           "s";
}

} // namespace memqos::wording::detail

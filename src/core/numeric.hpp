// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private helpers of the core: exact integer arithmetic and number text for
// messages. Not installed; other layers format through their own code.

#include "memqos/core/types.hpp"

#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace memqos::core::detail {

// 128-bit products keep every Bytes × factor comparison exact; g++ and
// clang have it on every 64-bit target memqos runs on.
__extension__ using U128 = unsigned __int128;

inline constexpr std::uint64_t kMicro = 1'000'000;

inline constexpr std::uint64_t saturate(U128 v) {
    return v > std::numeric_limits<std::uint64_t>::max() ? std::numeric_limits<std::uint64_t>::max()
                                                         : static_cast<std::uint64_t>(v);
}

inline constexpr Bytes subOrZero(Bytes a, Bytes b) {
    return a > b ? a - b : 0;
}

// `v` rounded down to a whole number of pages.
inline constexpr Bytes pageFloor(U128 v, Bytes page) {
    return saturate(v / page * page);
}

// p/10000 of `total`, rounded down.
inline constexpr Bytes permyriadOf(Bytes total, Permyriad p) {
    return saturate(U128{total} * p / kPermyriadOne);
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

// Bytes as wording::formatBytes shows them, for the pressure reasons that
// are still worded here (until they move to the wording layer too).
inline std::string formatBytes(Bytes b) {
    if (b < kKiB) {
        return toText(b) + " B";
    }
    constexpr std::array<std::pair<Bytes, const char*>, 4> kUnits{{
        {kKiB, " KiB"},
        {kMiB, " MiB"},
        {kGiB, " GiB"},
        {1024 * kGiB, " TiB"},
    }};
    std::size_t u = 0;
    while (u + 1 < kUnits.size() && b >= kUnits[u + 1].first) {
        ++u;
    }
    const auto tenthsOf = [b](Bytes unit) {
        return static_cast<std::uint64_t>((U128{b} * 10 + unit / 2) / unit);
    };
    std::uint64_t tenths = tenthsOf(kUnits[u].first);
    if (tenths >= 10240 && u + 1 < kUnits.size()) {
        ++u;
        tenths = tenthsOf(kUnits[u].first);
    }
    return toText(tenths / 10) + "." + toText(tenths % 10) + kUnits[u].second;
}

} // namespace memqos::core::detail

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private helpers of the wording: numbers as text. Not installed.

#include "memqos/core/numbers.hpp"
#include "memqos/core/types.hpp"

#include <charconv>
#include <cstdint>
#include <string>

namespace memqos::wording::detail {

using namespace core::numbers; // saturate, subOrZero, toText, permyriadText, U128

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

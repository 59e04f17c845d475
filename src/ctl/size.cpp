// SPDX-License-Identifier: Apache-2.0
#include "size.hpp"

#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <system_error>

namespace memqos::ctl {
namespace {

constexpr int kMaxFractionDigits = 6;

char lowerAscii(char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

Error badSize(std::string_view text, std::string_view why) {
    std::string what = "bad size '";
    what.append(text);
    what += "': ";
    what.append(why);
    return invalid(std::move(what));
}

// Multiplier for a suffix ("", "k", "kb", "kib", …), 0 when unknown.
Bytes suffixMultiplier(std::string_view suffix) {
    if (suffix.empty()) {
        return 1;
    }
    Bytes unit = 0;
    switch (lowerAscii(suffix.front())) {
    case 'k':
        unit = kKiB;
        break;
    case 'm':
        unit = kMiB;
        break;
    case 'g':
        unit = kGiB;
        break;
    case 't':
        unit = kGiB * kKiB;
        break;
    case 'b':
        return suffix.size() == 1 ? 1 : 0;
    default:
        return 0;
    }
    suffix.remove_prefix(1);
    if (suffix.empty()) {
        return unit;
    }
    if (suffix.size() == 1 && lowerAscii(suffix[0]) == 'b') {
        return unit;
    }
    if (suffix.size() == 2 && lowerAscii(suffix[0]) == 'i' && lowerAscii(suffix[1]) == 'b') {
        return unit;
    }
    return 0;
}

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

} // namespace

Result<Bytes> parseSize(std::string_view text, AllowMax allowMax) {
    constexpr std::string_view kExpected =
        "expected bytes or a number with a K, M, G or T suffix (e.g. 512M, 1.5G)";
    if (text == "max" || text == "infinity") {
        if (allowMax == AllowMax::Yes) {
            return kNoLimit;
        }
        return badSize(text, "\"max\" is only allowed for a limit");
    }
    if (text.empty() || !isDigit(text.front())) {
        return badSize(text, kExpected);
    }

    const char* const begin = text.data();
    const char* const end = begin + text.size();
    Bytes whole = 0;
    auto [p, ec] = std::from_chars(begin, end, whole);
    if (ec == std::errc::result_out_of_range) {
        return badSize(text, "too large");
    }
    if (ec != std::errc{}) {
        return badSize(text, kExpected);
    }

    // Fraction: the digits after '.', scaled by 10^digits.
    Bytes fraction = 0;
    Bytes fractionScale = 1;
    bool hasFraction = false;
    if (p != end && *p == '.') {
        hasFraction = true;
        ++p;
        int digits = 0;
        while (p != end && isDigit(*p)) {
            if (++digits > kMaxFractionDigits) {
                return badSize(text, "too many decimals (at most 6)");
            }
            fraction = fraction * 10 + static_cast<Bytes>(*p - '0');
            fractionScale *= 10;
            ++p;
        }
        if (digits == 0) {
            return badSize(text, kExpected);
        }
    }

    const std::string_view suffix(p, static_cast<std::size_t>(end - p));
    const Bytes unit = suffixMultiplier(suffix);
    if (unit == 0) {
        return badSize(text, kExpected);
    }
    if (hasFraction && unit == 1) {
        return badSize(text, "a fraction needs a K, M, G or T suffix");
    }

    constexpr Bytes kMax = std::numeric_limits<Bytes>::max();
    if (whole > kMax / unit) {
        return badSize(text, "too large");
    }
    Bytes bytes = whole * unit;
    // fraction < 10^6 and unit <= 2^40, so fraction * unit < 2^60: no overflow.
    const Bytes fractionBytes = fraction * unit / fractionScale;
    if (bytes > kMax - fractionBytes) {
        return badSize(text, "too large");
    }
    bytes += fractionBytes;
    if (bytes == kNoLimit) {
        // UINT64_MAX spells "max" on the bus; never send it by accident.
        return badSize(text, "too large");
    }
    return bytes;
}

std::string formatSize(Bytes bytes) {
    if (bytes == kNoLimit) {
        return "max";
    }
    if (bytes == 0) {
        return "0";
    }
    static constexpr std::array<char, 6> kSuffixes{'K', 'M', 'G', 'T', 'P', 'E'};
    if (bytes < kKiB) {
        return std::to_string(bytes) + "B";
    }
    Bytes unit = kKiB;
    std::size_t index = 0;
    while (index + 1 < kSuffixes.size() && bytes / unit >= kKiB) {
        unit *= kKiB;
        ++index;
    }
    Bytes whole = bytes / unit;
    const Bytes rest = bytes % unit;
    // rest < unit <= 2^60, so rest * 10 cannot overflow.
    Bytes tenths = (rest * 10 + unit / 2) / unit;
    if (tenths == 10) {
        ++whole;
        tenths = 0;
        if (whole == kKiB && index + 1 < kSuffixes.size()) {
            whole = 1;
            ++index;
        }
    }
    std::string out = std::to_string(whole);
    if (tenths != 0) {
        out += '.';
        out += static_cast<char>('0' + tenths);
    }
    out += kSuffixes[index];
    return out;
}

} // namespace memqos::ctl

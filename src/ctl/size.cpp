// SPDX-License-Identifier: Apache-2.0
#include "size.hpp"

#include "memqos/config/values.hpp"

#include <array>
#include <string>

namespace memqos::ctl {

Result<Bytes> parseSize(std::string_view text, AllowMax allowMax) {
    const auto bad = [text](std::string_view why) {
        std::string what = "bad size '";
        what.append(text);
        what += "': ";
        what.append(why);
        return invalid(std::move(what));
    };
    Result<Limit> size = Limit{};
    if (allowMax == AllowMax::Yes) {
        size = config::parseLimit(text);
    } else if (auto bytes = config::parseSize(text)) {
        size = Limit{*bytes};
    } else {
        size = bytes.error();
    }
    if (!size) {
        return bad(size.error().what);
    }
    if (!*size) {
        return kNoLimit;
    }
    if (**size == kNoLimit) {
        return bad("size too large (18446744073709551615 means \"max\" on the bus)");
    }
    return **size;
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

// SPDX-License-Identifier: Apache-2.0
#include "memqos/wording/bytes.hpp"

#include <array>
#include <utility>

#include "text.hpp"

namespace memqos::wording {

using detail::U128;

std::string formatBytes(Bytes b) {
    if (b < kKiB) {
        return detail::toText(b) + " B";
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
    return detail::toText(tenths / 10) + "." + detail::toText(tenths % 10) + kUnits[u].second;
}

} // namespace memqos::wording

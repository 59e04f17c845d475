// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private helpers of the core: exact integer arithmetic and number text for
// error messages (Error::what). Not installed; decisions carry numbers, which
// the wording layer words.

#include "memqos/core/numbers.hpp"
#include "memqos/core/types.hpp"

#include <cstdint>

namespace memqos::core::detail {

using namespace core::numbers; // saturate, subOrZero, toText, permyriadText, U128

inline constexpr std::uint64_t kMicro = 1'000'000;

// `v` rounded down to a whole number of pages.
inline constexpr Bytes pageFloor(U128 v, Bytes page) {
    return saturate(v / page * page);
}

// p/10000 of `total`, rounded down.
inline constexpr Bytes permyriadOf(Bytes total, Permyriad p) {
    return saturate(U128{total} * p / kPermyriadOne);
}

} // namespace memqos::core::detail

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The host the placement tests (core and wording) check against. Include
// after literals.hpp.

#include "memqos/core/placement.hpp"

#include "literals.hpp"

namespace memqos::core::test {

// 8 GiB host, 1 GiB node reserve: 7 GiB available unless services say otherwise.
inline PlacementInput host(Bytes instances, Bytes reserved = 0, double ratio = 1.0,
                           Bytes services = 0) {
    return PlacementInput{.memTotal = 8_GiB,
                          .nodeReserve = 1_GiB,
                          .services = services,
                          .instances = instances,
                          .reserved = reserved,
                          .memoryRatio = ratio,
                          .swapTotal = 0};
}

inline PlacementInput withSwap(PlacementInput in, Bytes swap) {
    in.swapTotal = swap;
    return in;
}

} // namespace memqos::core::test

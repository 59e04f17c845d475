// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers for the core unit tests: unit suffixes, seconds as TimePoints and
// TEST_P instance names. Include after the headers under test.

// Designated initialisers that leave members at their defaults are the
// point of these tests (oomd's CgroupData{.mem_pressure = ...}); g++ 12
// warns about them under -Wextra in C++.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include "memqos/core/types.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace memqos::core::test {

inline constexpr Bytes operator""_KiB(unsigned long long v) {
    return v * kKiB;
}
inline constexpr Bytes operator""_MiB(unsigned long long v) {
    return v * kMiB;
}
inline constexpr Bytes operator""_GiB(unsigned long long v) {
    return v * kGiB;
}
inline constexpr TimePoint at(std::int64_t seconds) {
    return std::chrono::seconds(seconds);
}

// Names TEST_P instances after the case's `name` member.
struct ByName {
    template <typename T>
    std::string operator()(const ::testing::TestParamInfo<T>& p) const {
        return p.param.name;
    }
};

} // namespace memqos::core::test

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Invariant checks shared by the parser fuzz targets: a broken invariant traps,
// so libFuzzer reports it like a crash.

#include "memqos/util/result.hpp"

#include <system_error>

namespace memqos::fuzz {

inline void check(bool ok) {
    if (!ok) {
        __builtin_trap();
    }
}

// Errors are "malformed" with a bounded, non-empty message.
inline void checkError(const Error& e) {
    check(e.code == std::errc::invalid_argument);
    check(!e.what.empty() && e.what.size() < 1024);
}

} // namespace memqos::fuzz

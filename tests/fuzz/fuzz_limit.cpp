// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for parseLimit and parseCounter (single-value cgroup files). Beyond "no crash,
// no UB, no leak" it checks the parser's contract where that is cheap; a broken invariant traps.
#include "fuzz_check.hpp"
#include "memqos/parse/proc.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <system_error>

using memqos::fuzz::check;
using memqos::fuzz::checkError;

// NOLINTNEXTLINE(readability-identifier-naming): the libFuzzer entry point
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto limit = memqos::parse::parseLimit(text);
    auto counter = memqos::parse::parseCounter(text);
    if (!limit) {
        checkError(limit.error());
    }
    if (!counter) {
        checkError(counter.error());
    }
    // A counter is a limit without "max": both agree on every number.
    if (counter) {
        check(limit.ok() && limit->has_value() && **limit == *counter);
    }
    if (limit && !limit->has_value()) {
        check(!counter.ok() && text.find("max") != std::string_view::npos);
    }
    if (limit && limit->has_value()) {
        check(counter.ok());
    }
    return 0;
}

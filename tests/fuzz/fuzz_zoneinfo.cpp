// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for parseZoneinfo (/proc/zoneinfo). Beyond "no crash, no UB, no leak" it
// checks the parser's contract where that is cheap; a broken invariant traps.
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
    auto r = memqos::parse::parseZoneinfo(text);
    if (!r) {
        checkError(r.error());
        return 0;
    }
    check(!r->empty());
    for (const auto& z : *r) {
        check(z.node >= 0 && !z.name.empty());
    }
    return 0;
}

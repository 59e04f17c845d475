// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for parseSwaps (/proc/swaps). Beyond "no crash, no UB, no leak" it
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
    auto r = memqos::parse::parseSwaps(text);
    if (!r) {
        checkError(r.error());
        return 0;
    }
    for (const auto& d : *r) {
        check(!d.filename.empty() && !d.type.empty());
        check(d.size % memqos::kKiB == 0 && d.used % memqos::kKiB == 0);
        // Decoding never produces NUL and never grows the name.
        check(d.filename.find('\0') == std::string::npos);
        check(d.filename.size() <= size);
    }
    return 0;
}

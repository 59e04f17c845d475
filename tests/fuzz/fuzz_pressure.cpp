// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for parsePressure (PSI files). Beyond "no crash, no UB, no leak" it
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
    auto r = memqos::parse::parsePressure(text);
    if (!r) {
        checkError(r.error());
        return 0;
    }
    auto inRange = [](double v) { return std::isfinite(v) && v >= 0.0 && v <= 100.0; };
    check(inRange(r->some.avg10) && inRange(r->some.avg60) && inRange(r->some.avg300));
    if (r->full) {
        check(inRange(r->full->avg10) && inRange(r->full->avg60) && inRange(r->full->avg300));
    }
    return 0;
}

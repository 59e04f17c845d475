// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for parseMeminfo. Beyond "no crash, no UB, no leak" it
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
    auto r = memqos::parse::parseMeminfo(text);
    if (!r) {
        checkError(r.error());
        return 0;
    }
    // Every named field is a kB value converted to bytes.
    for (auto v : {r->memTotal, r->memFree, r->memAvailable, r->buffers, r->cached, r->swapCached,
                   r->swapTotal, r->swapFree, r->shmem, r->sReclaimable}) {
        check(v % memqos::kKiB == 0);
    }
    return 0;
}

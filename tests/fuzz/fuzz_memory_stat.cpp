// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for parseMemoryStat. Beyond "no crash, no UB, no leak" it
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
    auto r = memqos::parse::parseMemoryStat(text);
    if (!r) {
        checkError(r.error());
        return 0;
    }
    check(!r->all.empty());
    // Named members mirror `all` (0 when the key is absent).
    auto get = [&](std::string_view key) -> std::uint64_t {
        const auto it = r->all.find(key);
        return it == r->all.end() ? 0 : it->second;
    };
    check(r->anon == get("anon") && r->file == get("file") && r->pgscan == get("pgscan") &&
          r->workingsetRefaultFile == get("workingset_refault_file"));
    for (const auto& [key, value] : r->all) {
        check(!key.empty());
        (void)value;
    }
    return 0;
}

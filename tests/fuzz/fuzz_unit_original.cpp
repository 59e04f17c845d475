// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for parseUnitOriginal() (what a unit's own configuration
// gave before memqos changed it, under <StateDirectory>/originals): never
// crash or throw; what it accepts has all five values and survives
// formatUnitOriginal() unchanged.

#include "fuzz_check.hpp"
#include "memqos/io/state_store.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using memqos::fuzz::check;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto parsed = memqos::io::parseUnitOriginal(text);
    if (!parsed) {
        memqos::fuzz::checkError(parsed.error());
        return 0;
    }
    const auto& v = parsed->values;
    check(v.memoryMin && v.memoryLow && v.memoryHigh && v.memoryMax && v.memorySwapMax);
    check(!parsed->unit.empty() && parsed->unit.find('/') == std::string::npos);
    const auto again = memqos::io::parseUnitOriginal(memqos::io::formatUnitOriginal(*parsed));
    check(again && *again == *parsed);
    return 0;
}

// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for parseKills() (the kill history file): never crash or
// throw; every record it accepts survives formatKills() unchanged.

#include "fuzz_check.hpp"
#include "memqos/io/event_store.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using memqos::fuzz::check;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto parsed = memqos::io::parseKills(text);
    const std::deque<memqos::io::KillRecord> records(parsed.records.begin(), parsed.records.end());
    const auto again = memqos::io::parseKills(memqos::io::formatKills(records));
    check(again.problems.empty());
    check(again.records == parsed.records);
    return 0;
}

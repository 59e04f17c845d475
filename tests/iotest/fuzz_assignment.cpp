// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for parseAssignment(): must never crash or throw, and
// whatever it accepts must survive formatAssignment() unchanged.

#include "memqos/io/state_store.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto parsed = memqos::io::parseAssignment(text);
    if (!parsed) {
        if (parsed.error().what.empty()) {
            std::abort(); // errors must say what is wrong
        }
        return 0;
    }
    const auto again = memqos::io::parseAssignment(memqos::io::formatAssignment(*parsed));
    if (!again || !(*again == *parsed)) {
        std::abort();
    }
    const auto name = memqos::io::encodeFileName(parsed->workload.id);
    const auto id = memqos::io::decodeFileName(name);
    if (!id || *id != parsed->workload.id) {
        std::abort();
    }
    return 0;
}

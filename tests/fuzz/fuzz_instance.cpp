// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for parseInstance() (instance record files): never crash
// or throw; what it accepts survives formatInstance() unchanged and is a
// valid record (name rules, min ≤ max).

#include "fuzz_check.hpp"
#include "memqos/io/state_store.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using memqos::fuzz::check;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto parsed = memqos::io::parseInstance(text);
    if (!parsed) {
        memqos::fuzz::checkError(parsed.error());
        return 0;
    }
    check(static_cast<bool>(memqos::core::validateInstanceName(parsed->name)));
    check(parsed->minMemory <= parsed->maxMemory);
    const auto again = memqos::io::parseInstance(memqos::io::formatInstance(*parsed));
    check(again && *again == *parsed);
    return 0;
}

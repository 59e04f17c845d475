// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for dropInValue() and hasOwnMarker() (a systemd runtime
// drop-in in /run/systemd/system.control, which an administrator may have
// written): never crash or throw; a value read back from the line memqos
// would compare it with is that value.

#include "fuzz_check.hpp"
#include "memqos/io/drop_ins.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using memqos::fuzz::check;
    namespace io = memqos::io;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    (void)io::hasOwnMarker(text);
    for (const auto key : io::kMemoryKeys) {
        const auto v = io::dropInValue(text, key);
        if (!v) {
            continue;
        }
        // The same value, written as systemd writes it, reads back the same.
        const std::string line = std::string(io::propertyName(key)) + "=" +
                                 (*v ? std::to_string(**v) : std::string("infinity")) + "\n";
        check(io::dropInValue(line, key) == v);
    }
    return 0;
}

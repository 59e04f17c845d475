// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for parseInfoBalloon() (QEMU's "info balloon" output read
// from a Ganeti instance's HMP socket) and stripTerminalEscapes(): never crash
// or throw; an accepted value is whole MiB; stripping leaves no ESC or CR and
// never grows the text.

#include "fuzz_check.hpp"
#include "memqos/io/hmp_monitor.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

// NOLINTNEXTLINE(readability-identifier-naming): the libFuzzer entry point
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using memqos::fuzz::check;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto actual = memqos::io::parseInfoBalloon(text);
    if (actual) {
        check(*actual % memqos::kMiB == 0);
    } else {
        memqos::fuzz::checkError(actual.error());
    }
    const std::string clean = memqos::io::stripTerminalEscapes(text);
    check(clean.size() <= text.size());
    check(clean.find('\x1b') == std::string::npos && clean.find('\r') == std::string::npos);
    return 0;
}

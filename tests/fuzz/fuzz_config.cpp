// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the config reader and validator: bytes -> inih
// (io::parseIniText, with our guards) -> config::validateConfig ->
// renderConfig. Checks: nothing throws or traps, every problem formats to a
// non-empty line, and a config without errors renders to text that reads
// back (through inih again) to an equal config without errors.
#include "memqos/config/config.hpp"
#include "memqos/io/config_loader.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

void check(bool ok) {
    if (!ok)
        __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto entries = memqos::io::parseIniText(text, "fuzz.conf");
    if (!entries) {
        check(entries.error().what.rfind("fuzz.conf", 0) == 0);
        return 0;
    }
    // Our reader's line numbers: in the text, ascending, a key below its
    // section header.
    const auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
    int previous = 0;
    for (const auto& e : *entries) {
        check(e.line > previous && e.line <= lines);
        check(e.sectionLine < e.line && (e.sectionLine > 0) == !e.section.empty());
        previous = e.line;
    }
    for (bool strict : {false, true}) {
        auto v = memqos::config::validateConfig(*entries, memqos::config::ValidateOptions{strict});
        for (const auto& p : v.problems) {
            check(!p.reason.empty());
            check(!p.format().empty());
        }
        if (v.hasErrors())
            continue;
        std::string rendered = memqos::config::renderConfig(v.config);
        auto again = memqos::io::parseIniText(rendered, "rendered.conf");
        check(again.ok());
        auto v2 = memqos::config::validateConfig(*again);
        // Warnings about values (a protected class that is killable) come
        // back; unknown keys do not, as rendering drops them.
        check(!v2.hasErrors());
        check(v2.problems.size() <= v.problems.size());
        check(v2.config == v.config);
        check(memqos::config::renderConfig(v2.config) == rendered);
    }
    return 0;
}

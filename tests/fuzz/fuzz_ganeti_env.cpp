// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the Ganeti hook's input: parseEnvFile() and plan()
// over whatever environment it yields. Never crash or throw; errors are
// bounded and non-empty; a Check or Record step names a valid instance and
// asks for min ≤ max memory.

#include "fuzz_check.hpp"
#include "memqos/core/placement.hpp"
#include "memqos/ganeti/hook.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using memqos::fuzz::check;
    namespace g = memqos::ganeti;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto env = g::parseEnvFile(text);
    if (!env) {
        memqos::fuzz::checkError(env.error());
        return 0;
    }
    for (const auto* node : {"node1.example.test", "node2"}) {
        auto p = g::plan(*env, node);
        if (!p) {
            memqos::fuzz::checkError(p.error());
            continue;
        }
        check(!p->why.empty());
        for (const auto& s : p->steps) {
            if (s.kind != g::StepKind::Forget) {
                check(s.minMemory <= s.maxMemory);
            }
            if (s.kind == g::StepKind::Record) {
                check(static_cast<bool>(memqos::core::validateInstanceName(s.instance)));
            }
            check(!g::describe(s).empty());
        }
    }
    return 0;
}

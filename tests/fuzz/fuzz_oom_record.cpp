// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for parseOomRecord() (what processes had in oom_score_adj
// before memqos changed it, under <RuntimeDirectory>/oom-scores) and
// parseProcStatStartTime() (/proc/PID/stat), parseProcStatBootTime() (/proc/stat)
// and parseQemuCmdline() (/proc/PID/cmdline): never crash or throw; what
// parseOomRecord accepts has values in the kernel's range and survives
// formatOomRecord() unchanged.

#include "fuzz_check.hpp"
#include "memqos/io/oom_store.hpp"
#include "memqos/parse/proc.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using memqos::fuzz::check;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (auto t = memqos::parse::parseProcStatStartTime(text); !t) {
        memqos::fuzz::checkError(t.error());
    }
    if (auto t = memqos::parse::parseProcStatBootTime(text); t) {
        check(*t >= 0);
    } else {
        memqos::fuzz::checkError(t.error());
    }
    if (auto c = memqos::parse::parseQemuCmdline(text); c) {
        check(!c->program.empty());
        (void)memqos::parse::isQemuFor(*c, "web");
    } else {
        memqos::fuzz::checkError(c.error());
    }
    auto parsed = memqos::io::parseOomRecord(text);
    if (!parsed) {
        memqos::fuzz::checkError(parsed.error());
        return 0;
    }
    check(!parsed->workload.empty() && !parsed->cgroup.empty());
    check(parsed->written >= -1000 && parsed->written <= 1000);
    for (const auto& [pid, p] : parsed->processes) {
        check(pid == p.pid && pid > 0);
        check(p.original >= -1000 && p.original <= 1000);
    }
    const auto again = memqos::io::parseOomRecord(memqos::io::formatOomRecord(*parsed));
    check(again && *again == *parsed);
    return 0;
}

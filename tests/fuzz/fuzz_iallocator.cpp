// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the iallocator's rewrite of Ganeti's input
// (transformForHail): never crash or throw; errors are bounded and
// non-empty; a result is JSON again with whole MiB figures for the nodes it
// rewrote, and transforming it once more rewrites the same nodes.

#include "memqos/ganeti/iallocator.hpp"

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using memqos::fuzz::check;
    namespace g = memqos::ganeti;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const auto staticMib : {std::int64_t{4096}, std::int64_t{0}}) {
        auto t = g::transformForHail(text, g::HailOptions{.staticKvmNodeMemoryMib = staticMib});
        if (!t) {
            memqos::fuzz::checkError(t.error());
            continue;
        }
        const auto out = nlohmann::json::parse(t->json, nullptr, false);
        check(!out.is_discarded() && out.is_object());
        for (const auto& c : t->changes) {
            check(c.ratioMicro >= 1'000'000 && c.ratioMicro <= 100'000'000);
            const auto& n = out["nodes"][c.node];
            check(n["total_memory"].is_number_unsigned());
            check(n["free_memory"].is_number_unsigned());
        }
        // The result is an input again, with the same nodes changed (or an
        // error: a rewritten total may exceed the 2^32 MiB accepted as input).
        auto again =
            g::transformForHail(t->json, g::HailOptions{.staticKvmNodeMemoryMib = staticMib});
        if (again) {
            check(again->changes.size() == t->changes.size());
        } else {
            memqos::fuzz::checkError(again.error());
        }
    }
    const auto reply = nlohmann::json::parse(g::failureReply(text), nullptr, false);
    check(!reply.is_discarded() && reply["success"] == false);
    return 0;
}

// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for memqos-cluster's parsers and checks: the input is
// htools' text format, optionally followed by a NUL byte and
// gnt-cluster command's output. Never crash or throw; errors are bounded
// and non-empty; a rewritten text parses again with the same nodes and the
// same nodes rewritten; verify's JSON is JSON and its exit code 0, 1 or 2.

#include "memqos/ganeti/cluster.hpp"

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using memqos::fuzz::check;
    using memqos::fuzz::checkError;
    namespace c = memqos::ganeti::cluster;
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const auto nul = input.find('\0');
    const auto text = input.substr(0, nul);
    const auto nodeText =
        nul == std::string_view::npos ? std::string_view{} : input.substr(nul + 1);

    auto nodes = c::parseNodeData(nodeText);
    if (!nodes) {
        checkError(nodes.error());
    }
    auto model = c::parseHtoolsText(text);
    if (!model) {
        checkError(model.error());
        return 0;
    }
    auto rewritten = c::rewriteHtoolsText(text);
    if (rewritten) {
        auto again = c::parseHtoolsText(rewritten->text);
        check(again.ok() || again.error().what.find("2^32") != std::string::npos);
        if (again) {
            check(again->nodes.size() == model->nodes.size());
            check(again->instances.size() == model->instances.size());
            auto twice = c::rewriteHtoolsText(rewritten->text);
            check(!twice || twice->changes.size() == rewritten->changes.size());
        }
    } else {
        checkError(rewritten.error());
    }
    const std::map<std::string, c::NodeData, std::less<>> none;
    auto report = c::verify(*model, nodes ? *nodes : none);
    if (!report) {
        checkError(report.error());
        return 0;
    }
    const int code = report->exitCode();
    check(code >= 0 && code <= 2);
    const auto json = nlohmann::json::parse(c::renderJson(*report), nullptr, false);
    check(!json.is_discarded() && json.is_object());
    check(!c::renderText(*report).empty());
    return 0;
}

// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for Ganeti's ssconf_instance_list: parseInstanceList().
// Never crash or throw; errors are bounded and non-empty; every name it
// returns is a valid instance name, and the list is sorted and bounded.

#include "fuzz_check.hpp"
#include "memqos/core/placement.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using memqos::fuzz::check;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto list = memqos::core::parseInstanceList(text);
    if (!list) {
        memqos::fuzz::checkError(list.error());
        return 0;
    }
    check(list->size() <= memqos::core::kMaxInstanceList);
    check(std::is_sorted(list->begin(), list->end()));
    for (const auto& name : *list) {
        check(static_cast<bool>(memqos::core::validateInstanceName(name)));
    }
    return 0;
}

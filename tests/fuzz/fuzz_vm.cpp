// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the VM text parsers of config/vm.hpp: memqos's libvirt
// domain metadata (round trip), the <partition> edit of a domain XML, a
// process's /proc/PID/cgroup, the unit of a cgroup path and Ganeti tags.
#include "fuzz_check.hpp"
#include "memqos/config/vm.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

using memqos::fuzz::check;
using memqos::fuzz::checkError;

// NOLINTNEXTLINE(readability-identifier-naming): the libFuzzer entry point
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    namespace c = memqos::config;
    if (auto m = c::parseVmMetadata(text)) {
        // What memqos writes back reads the same.
        auto again = c::parseVmMetadata(c::formatVmMetadata(*m));
        check(again.ok() && *again == *m);
    } else {
        checkError(m.error());
    }
    if (auto x = c::withPartition(text, "/memqos/shared")) {
        check(x->find("<partition>/memqos/shared</partition>") != std::string::npos);
    } else {
        checkError(x.error());
    }
    if (auto p = c::parseProcCgroup(text)) {
        if (auto u = c::unitOfCgroup(*p)) {
            check(p->starts_with(u->path) && u->path.ends_with(u->unit));
        }
    } else {
        checkError(p.error());
    }
    if (auto cls = c::classFromTags(text)) {
        check(!cls->empty() && (text.find("memqos:class:" + *cls) != std::string_view::npos ||
                                text.find("memqos:class=" + *cls) != std::string_view::npos));
    }
    const std::string esc = c::escapeUnitComponent(text);
    check(esc.find('/') == std::string::npos);
    return 0;
}

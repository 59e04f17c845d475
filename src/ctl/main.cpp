// SPDX-License-Identifier: Apache-2.0
// memqosctl: the operator's CLI over memqosd's org.memqos1 D-Bus API.

#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "app.hpp"

int main(int argc, char** argv) {
    const std::span<char*> all(argv, static_cast<std::size_t>(argc));
    std::vector<std::string> args;
    for (const char* arg : all.subspan(all.empty() ? 0 : 1)) {
        args.emplace_back(arg != nullptr ? arg : "");
    }
    std::optional<std::string> env;
    if (const char* address = std::getenv("MEMQOS_BUS_ADDRESS");
        address != nullptr) { // NOLINT(concurrency-mt-unsafe)
        env = address;
    }
    return memqos::ctl::runCtl(args, env);
}

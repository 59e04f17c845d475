// SPDX-License-Identifier: Apache-2.0
// memqosd entry point: parse options, dispatch.

#include "check_config.hpp"
#include "service.hpp"
#include "options.hpp"

#include "memqos/parse/command_line.hpp"

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    using namespace memqos::daemon;
    std::vector<std::string> args(argv + 1, argv + argc);
    auto options = parseOptions(args);
    if (!options) {
        std::cerr << "memqosd: " << options.error().what << "\n"
                  << memqos::parse::helpHint("memqosd") << "\n";
        return kExitUsage;
    }
    switch (options->mode) {
    case Mode::Help:
        std::cout << usageText();
        return kExitOk;
    case Mode::Version:
        std::cout << "memqosd " << MEMQOS_VERSION << "\n";
        return kExitOk;
    case Mode::CheckConfig:
        return runCheckConfig(*options, std::cout, std::cerr);
    case Mode::Run:
        break;
    }
    return runService(*options);
}

// SPDX-License-Identifier: Apache-2.0
// memqosd entry point: parse options, dispatch.

#ifdef MEMQOS_HAVE_CHECK_CONFIG
#include "check_config.hpp"
#endif
#include "options.hpp"

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    using namespace memqos::daemon;
    std::vector<std::string> args(argv + 1, argv + argc);
    auto options = parseOptions(args);
    if (!options) {
        std::cerr << "memqosd: " << options.error().what << "\n";
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
#ifdef MEMQOS_HAVE_CHECK_CONFIG
        return runCheckConfig(*options, std::cout, std::cerr);
#else
        return kExitUnavailable;
#endif
    case Mode::Run:
        break;
    }
    // The event loop, D-Bus service and systemd integration are the control
    // plane (next milestone). Until then, say so plainly instead of pretending.
    std::cerr << "memqosd: the service loop is not implemented in this version; "
                 "use --check-config [--print]\n";
    return kExitUnavailable;
}

// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include "memqos/config/values.hpp"

#include <string_view>

namespace memqos::daemon {

const char* usageText() {
    return "Usage: memqosd [OPTIONS]\n"
           "\n"
           "Memory QoS daemon for hosts that colocate libvirt VMs and systemd services.\n"
           "\n"
           "Options:\n"
           "  --config FILE          read FILE and FILE.d/*.conf instead of\n"
           "                         " MEMQOS_CONFIG_FILE " and " MEMQOS_CONFIG_FILE ".d/*.conf\n"
           "  --no-drop-ins          ignore the .conf.d drop-in directory\n"
           "  --check-config         validate the configuration and exit: 0 if valid, 78 if not\n"
           "                         (unknown keys are errors here, warnings at start-up)\n"
           "  --print                with --check-config: print the effective configuration and\n"
           "                         the tiers each class gives an example workload\n"
           "  --example-request SIZE example workload request for --print (default 256M)\n"
           "  --example-limit SIZE   example workload limit for --print (default 1G)\n"
           "  --dry-run              decide but do not act; log what would be done\n"
           "  --cgroup-root DIR      read cgroups under DIR (tests; default from config)\n"
           "  --proc-root DIR        read procfs under DIR (tests; default from config)\n"
           "  --state-dir DIR        keep persistent state in DIR (default /var/lib/memqos)\n"
           "  --runtime-dir DIR      keep runtime-only assignments in DIR (default $RUNTIME_DIRECTORY\n"
           "                         or /run/memqos; with --state-dir: STATE_DIR/runtime)\n"
           "  --bus-address ADDRESS  connect to this D-Bus instead of the system bus (tests)\n"
           "  -h, --help             show this help and exit\n"
           "  --version              show the version and exit\n"
           "\n"
           "Exit status: 0 success, 1 failure, 64 usage error, 69 service unavailable,\n"
           "78 configuration error.\n";
}

Result<Options> parseOptions(const std::vector<std::string>& args) {
    Options o;
    bool sawCheck = false;
    bool sawExample = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string_view a = args[i];
        std::string_view inlineValue;
        bool hasInline = false;
        if (a.starts_with("--")) {
            if (auto eq = a.find('='); eq != std::string_view::npos) {
                inlineValue = a.substr(eq + 1);
                a = a.substr(0, eq);
                hasInline = true;
            }
        }
        auto value = [&](std::string& out) -> Status {
            if (hasInline) {
                out = std::string(inlineValue);
                return okStatus();
            }
            if (i + 1 >= args.size()) {
                return invalid(std::string(a) + " needs a value");
            }
            out = args[++i];
            return okStatus();
        };
        auto optValue = [&](std::optional<std::string>& out) -> Status {
            std::string v;
            if (auto s = value(v); !s) {
                return s;
            }
            if (v.empty()) {
                return invalid(std::string(a) + " needs a non-empty value");
            }
            out = std::move(v);
            return okStatus();
        };
        auto noValue = [&]() -> Status {
            return hasInline ? Status(invalid(std::string(a) + " takes no value")) : okStatus();
        };

        Status st = okStatus();
        if (a == "-h" || a == "--help") {
            o.mode = Mode::Help;
            return o;
        } else if (a == "--version") {
            o.mode = Mode::Version;
            return o;
        } else if (a == "--check-config") {
            st = noValue();
            sawCheck = true;
        } else if (a == "--print") {
            st = noValue();
            o.print = true;
        } else if (a == "--no-drop-ins") {
            st = noValue();
            o.dropIns = false;
        } else if (a == "--dry-run") {
            st = noValue();
            o.dryRun = true;
        } else if (a == "--config") {
            st = optValue(o.configFile);
        } else if (a == "--cgroup-root") {
            st = optValue(o.cgroupRoot);
        } else if (a == "--proc-root") {
            st = optValue(o.procRoot);
        } else if (a == "--state-dir") {
            st = optValue(o.stateDir);
        } else if (a == "--runtime-dir") {
            st = optValue(o.runtimeDir);
        } else if (a == "--bus-address") {
            st = optValue(o.busAddress);
        } else if (a == "--example-request") {
            sawExample = true;
            st = value(o.exampleRequest);
            if (auto size = config::parseSize(o.exampleRequest); st && !size) {
                st = invalid("--example-request: " + size.error().what);
            }
        } else if (a == "--example-limit") {
            sawExample = true;
            st = value(o.exampleLimit);
            if (auto limit = config::parseLimit(o.exampleLimit); st && !limit) {
                st = invalid("--example-limit: " + limit.error().what);
            }
        } else {
            return invalid("unknown option '" + std::string(args[i]) + "' (see --help)");
        }
        if (!st) {
            return st.error();
        }
    }
    if (sawCheck) {
        o.mode = Mode::CheckConfig;
    }
    if (o.print && o.mode != Mode::CheckConfig) {
        return invalid("--print goes with --check-config");
    }
    if (sawExample && !o.print) {
        return invalid("--example-request and --example-limit go with --check-config --print");
    }
    return o;
}

} // namespace memqos::daemon

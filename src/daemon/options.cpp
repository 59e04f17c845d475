// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include "memqos/config/values.hpp"
#include "memqos/parse/command_line.hpp"

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
           "  --check-config         validate the configuration and exit: 78 if it has an error,\n"
           "                         else 0 (warnings never fail it; unknown keys are errors\n"
           "                         here, warnings at start-up); one FILE:LINE: SEVERITY: line\n"
           "                         per finding\n"
           "  --print                with --check-config: print the effective configuration, a\n"
           "                         plan against this host's meminfo (under --proc-root) and\n"
           "                         the tiers each class gives an example workload\n"
           "  --example-request SIZE example workload request for --print (default 256M)\n"
           "  --example-limit SIZE   example workload limit for --print (default 1G)\n"
           "  --dry-run              decide but do not act; log what would be done\n"
           "  --cgroup-root DIR      read cgroups under DIR (tests; default from config)\n"
           "  --proc-root DIR        read procfs under DIR (tests, --print; default from config)\n"
           "  --state-dir DIR        keep persistent state in DIR (default /var/lib/memqos)\n"
           "  --runtime-dir DIR      keep runtime-only assignments in DIR (default $RUNTIME_DIRECTORY\n"
           "                         or /run/memqos; with --state-dir: STATE_DIR/runtime)\n"
           "  --bus-address ADDRESS  connect to this D-Bus instead of the system bus (tests)\n"
           "  -h, --help             show this help and exit\n"
           "  --version              show the version and exit\n"
           "\n"
           "A value may follow its option as --opt=VALUE or --opt VALUE; -- ends the options.\n"
           "\n"
           "Exit status: 0 success, 1 failure, 64 usage error, 69 service unavailable,\n"
           "78 configuration error.\n";
}

namespace {

enum Id : int {
    kHelp = 'h',
    kVersion = 256,
    kCheckConfig,
    kPrint,
    kNoDropIns,
    kDryRun,
    kConfig,
    kCgroupRoot,
    kProcRoot,
    kStateDir,
    kRuntimeDir,
    kBusAddress,
    kExampleRequest,
    kExampleLimit,
};

constexpr parse::OptionSpec kSpecs[] = {
    {"help", parse::OptionArg::None, kHelp, 'h', true},
    {"version", parse::OptionArg::None, kVersion, 0, true},
    {"check-config", parse::OptionArg::None, kCheckConfig},
    {"print", parse::OptionArg::None, kPrint},
    {"no-drop-ins", parse::OptionArg::None, kNoDropIns},
    {"dry-run", parse::OptionArg::None, kDryRun},
    {"config", parse::OptionArg::Required, kConfig},
    {"cgroup-root", parse::OptionArg::Required, kCgroupRoot},
    {"proc-root", parse::OptionArg::Required, kProcRoot},
    {"state-dir", parse::OptionArg::Required, kStateDir},
    {"runtime-dir", parse::OptionArg::Required, kRuntimeDir},
    {"bus-address", parse::OptionArg::Required, kBusAddress},
    {"example-request", parse::OptionArg::Required, kExampleRequest},
    {"example-limit", parse::OptionArg::Required, kExampleLimit},
};

} // namespace

Result<Options> parseOptions(const std::vector<std::string>& args) {
    // No '+': memqosd takes no operands, so letting getopt_long permute
    // only means a stray word is reported wherever it stands.
    auto line = parse::parseCommandLine(args, kSpecs);
    if (!line) {
        return line.error();
    }
    if (!line->operands.empty()) {
        return invalid("unexpected argument '" + line->operands.front() + "'");
    }
    Options o;
    bool sawCheck = false;
    bool sawExample = false;
    for (const auto& opt : line->options) {
        Status st = okStatus();
        switch (opt.id) {
        case kHelp:
            o.mode = Mode::Help;
            return o;
        case kVersion:
            o.mode = Mode::Version;
            return o;
        case kCheckConfig:
            sawCheck = true;
            break;
        case kPrint:
            o.print = true;
            break;
        case kNoDropIns:
            o.dropIns = false;
            break;
        case kDryRun:
            o.dryRun = true;
            break;
        case kConfig:
            o.configFile = opt.value;
            break;
        case kCgroupRoot:
            o.cgroupRoot = opt.value;
            break;
        case kProcRoot:
            o.procRoot = opt.value;
            break;
        case kStateDir:
            o.stateDir = opt.value;
            break;
        case kRuntimeDir:
            o.runtimeDir = opt.value;
            break;
        case kBusAddress:
            o.busAddress = opt.value;
            break;
        case kExampleRequest:
            sawExample = true;
            o.exampleRequest = opt.value;
            if (auto size = config::parseSize(opt.value); !size) {
                st = invalid("--example-request: " + size.error().what);
            }
            break;
        case kExampleLimit:
            sawExample = true;
            o.exampleLimit = opt.value;
            if (auto limit = config::parseLimit(opt.value); !limit) {
                st = invalid("--example-limit: " + limit.error().what);
            }
            break;
        default:
            break;
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

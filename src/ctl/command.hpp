// SPDX-License-Identifier: Apache-2.0
#pragma once
// memqosctl's command line → Command, a pure function (no environment access:
// MEMQOS_BUS_ADDRESS is passed in), so every case is unit-tested.

#include "memqos/core/types.hpp"
#include "memqos/util/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::ctl {

// Exit codes scripts can rely on (also in --help and memqosctl(1)).
inline constexpr int kExitOk = 0;
inline constexpr int kExitDaemonError = 1;  // memqosd answered with an error
inline constexpr int kExitVerifyFailed = 2; // verify: an "error" finding; hard placement violation
inline constexpr int kExitUnreachable = 3;  // no bus, no answer
inline constexpr int kExitNotRunning = 4;   // memqosd not on the bus (never activated by us)
inline constexpr int kExitAccessDenied = 5; // the bus or memqosd refused the caller (not root)
inline constexpr int kExitNotFound = 6;     // no such workload, unit or instance
inline constexpr int kExitUsage = 64;       // EX_USAGE: bad command line, or an argument
                                            // memqosd refused as invalid

enum class Verb {
    None,
    Status,
    Classes,
    Workloads,
    Assign,
    Unassign,
    Run,
    VerifyPlacement,
    Verify,
    Reload,
    Monitor,
    RecordInstance,
    ForgetInstance,
    Instances,
    Events,
    Reclaim,
    Top,
    Release,
    Show,
};

enum class Action { Execute, Help, Version };

// --json=pretty|short|off (bare --json: pretty), as systemd's tools spell it.
enum class JsonMode { Off, Pretty, Short };

// top --order: what the rows are sorted by (top_view.hpp).
enum class TopOrder { Usage, Pressure, Swap, Name };

struct BusChoice {
    enum class Kind { System, Address };
    Kind kind = Kind::System;
    std::string address; // when kind == Address: a D-Bus address ("unix:path=/run/x")
};

struct Command {
    Action action = Action::Execute;
    Verb verb = Verb::None; // with Action::Help: whose help (None = the overview)
    JsonMode json = JsonMode::Off;
    bool legend = true; // false with --no-legend or --legend=no: tables without their
                        // header and footer
    bool pager = true;  // false with --no-pager (pager.hpp: only on a terminal anyway)
    bool quiet = false; // -q: no output from commands that change something or
                        // answer by exit status
    BusChoice bus;

    // assign / unassign / run
    std::string id;        // assign, unassign, reclaim, status, show: workload id
                           // (mangled: mangleWorkloadId); status, show: "" = none
    std::string className; // assign, run, verify-placement (--class; "" = not given)
    Bytes request = 0;     // 0 = none
    Bytes limit = kNoLimit;
    bool persist = true;           // assign: false with --runtime
    bool all = false;              // release --all
    std::string unitName;          // run --name; empty = defaultRunName()
    std::vector<std::string> argv; // run

    // verify-placement: MEMORY, MIN_MEMORY (or --min); record-instance: --max, --min
    Bytes memory = 0;
    Bytes minMemory = 0;                  // = memory unless given
    std::optional<Bytes> failoverReserve; // verify-placement --failover-reserve
    bool refuseSoft = false;              // verify-placement --refuse-soft

    // record-instance NAME, forget-instance NAME, verify-placement --instance NAME
    std::string instance;
    bool up = true; // record-instance: false with --down

    // show
    std::vector<std::string> properties; // -p NAME[,NAME]...; empty = all
    bool valueOnly = false;              // --value

    // top
    TopOrder order = TopOrder::Usage;
    std::int64_t delayMs = 1000;  // --delay SECONDS (fractions allowed)
    std::uint64_t iterations = 0; // --iterations N; 0 = until SIGINT/SIGTERM
    bool batch = false;           // --batch: no screen control codes
};

// `args` excludes argv[0]. `envBusAddress` is $MEMQOS_BUS_ADDRESS (nullopt or
// empty when unset); --bus-address and --system override it. On error, `what`
// is one line without the "memqosctl: " prefix; the caller exits kExitUsage.
Result<Command> parseCommandLine(const std::vector<std::string>& args,
                                 const std::optional<std::string>& envBusAddress);

std::string_view verbName(Verb verb);

// "usage", "pressure", "swap", "name" → TopOrder; nullopt for anything else.
std::optional<TopOrder> parseTopOrder(std::string_view name);

// The overview (--help) and one command's help (COMMAND --help).
std::string helpText();
std::string commandHelp(Verb verb);

// A workload ID as the operator typed it → the ID memqosd knows, as
// systemctl mangles unit names: "nginx" → "nginx.service". Kept as typed:
// "vm:<domain>" (a libvirt domain, a Ganeti instance's VM), a name that ends
// in any systemd unit type's suffix (".service", ".scope", ".socket", ...:
// memqosd refuses the ones it does not manage, by name), a name with "/"
// (no unit name has one: memqosd refuses it) and the empty string.
std::string mangleWorkloadId(std::string_view id);

// "memqos-run-<pid>-<unixtime>.service", the default unit name of `run`.
std::string defaultRunName(std::int64_t pid, std::int64_t unixSeconds);

} // namespace memqos::ctl

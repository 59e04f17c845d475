// SPDX-License-Identifier: Apache-2.0
#include "command.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <utility>

#include "size.hpp"

namespace memqos::ctl {
namespace {

struct VerbInfo {
    Verb verb;
    std::string_view name;
    std::string_view synopsis; // after "memqosctl [OPTIONS] "
    std::string_view summary;
    std::string_view details; // extra lines for COMMAND --help
};

constexpr std::array<VerbInfo, 16> kVerbs{{
    {Verb::Status, "status", "status", "Show node memory, swap, ratio, pressure and admission", ""},
    {Verb::Classes, "classes", "classes", "List the colocation classes", ""},
    {Verb::Workloads, "workloads", "workloads", "List the managed workloads and their tiers", ""},
    {Verb::Assign, "assign", "assign ID CLASS [--request SIZE] [--limit SIZE] [--runtime]",
     "Put a workload (unit or vm:DOMAIN) in a class",
     "  ID is \"nginx.service\", \"x.scope\" or \"vm:<domain>\".\n"
     "  --request SIZE   memory it must always get (default: none)\n"
     "  --limit SIZE     memory it may never exceed, or \"max\" (default: max)\n"
     "  --runtime        until reboot only (default: persistent)\n"
     "Prints the workload's object path. Needs root.\n"},
    {Verb::Unassign, "unassign", "unassign ID", "Stop managing a workload, clear its tiers",
     "Needs root.\n"},
    {Verb::Reclaim, "reclaim", "reclaim ID SIZE",
     "Reclaim memory from a running workload now (memory.reclaim)",
     "  Writes SIZE to the workload's memory.reclaim and prints what was freed:\n"
     "  SIZE when the kernel found it all, else the drop of its memory usage.\n"
     "  Counted in the workload's RECLAIMED. Under dry run nothing is freed. Needs root.\n"},
    {Verb::Run, "run",
     "run [--name NAME] --class CLASS [--request SIZE] [--limit SIZE] [--] ARGV...",
     "Start a command as a transient service in a class",
     "  --name NAME      unit name (default: memqos-run-<pid>-<time>.service)\n"
     "  --class CLASS    the class (required)\n"
     "  --request SIZE   memory it must always get (default: none)\n"
     "  --limit SIZE     memory it may never exceed, or \"max\" (default: max)\n"
     "Everything after \"--\" (or from the first argument on) is the command.\n"
     "Prints the workload's object path. Needs root.\n"},
    {Verb::VerifyPlacement, "verify-placement",
     "verify-placement MEMORY [MIN_MEMORY | --min SIZE] [--failover-reserve SIZE] "
     "[--refuse-soft] [--instance NAME]",
     "Would a VM of MEMORY fit under the memory ratio?",
     "  MEMORY is the VM's maximum memory, MIN_MEMORY its minimum (default: MEMORY).\n"
     "  --min SIZE                the minimum memory, instead of MIN_MEMORY\n"
     "  --failover-reserve SIZE   memory kept for failovers (default: from the config)\n"
     "  --refuse-soft             report a soft violation as hard (exit status 2)\n"
     "  --instance NAME           the VM's instance name: its own record is left out\n"
     "                            (an instance start or modify)\n"
     "Exit status 0 when it fits or is a soft violation (a warning on stderr),\n"
     "2 on a hard violation.\n"},
    {Verb::Instances, "instances", "instances", "List the instance record (Ganeti instances)",
     "Columns NAME, MIN, MAX (memory) and STATE (up or down); up instances count\n"
     "against the memory ratio.\n"},
    {Verb::Events, "events", "events", "List the kills memqosd made (the kill history)",
     "Columns TIME (local), WORKLOAD, CLASS and REASON, oldest first; the last 100\n"
     "kills are kept across restarts in /var/lib/memqos/kills. --json adds the\n"
     "numbers that caused each kill.\n"},
    {Verb::RecordInstance, "record-instance",
     "record-instance NAME --max SIZE [--min SIZE] [--up | --down]",
     "Record a Ganeti instance's memory and state",
     "  NAME is the instance's name (a host name, as in Ganeti).\n"
     "  --max SIZE   its maximum memory, Ganeti maxmem (required)\n"
     "  --min SIZE   its minimum memory, Ganeti minmem (default: --max)\n"
     "  --up         it runs or is meant to run: counted against the ratio (default)\n"
     "  --down       it is stopped: kept in the record, not counted\n"
     "Creates or replaces the record; it persists across restarts. Needs root.\n"},
    {Verb::ForgetInstance, "forget-instance", "forget-instance NAME",
     "Drop an instance from the instance record", "Needs root.\n"},
    {Verb::Verify, "verify", "verify", "Check the node and the configuration",
     "Exit status 2 when a finding has severity \"error\".\n"},
    {Verb::Reload, "reload", "reload", "Make memqosd re-read its configuration",
     "An invalid configuration is refused and the old one kept. Prints the keys that\n"
     "need a restart to take effect (roots, state directory, LibvirtURI), one per line.\n"
     "Needs root.\n"},
    {Verb::Monitor, "monitor", "monitor", "Follow pressure changes, kills and property changes",
     "One line per event with a timestamp (one JSON object per line with --json);\n"
     "exit status 0 on SIGINT or SIGTERM.\n"},
    {Verb::Top, "top",
     "top [--order=usage|pressure|swap|name] [--delay=SECONDS] [--iterations=N] [--batch]",
     "Show classes and workloads live, like systemd-cgtop",
     "  -o, --order=KEY      sort by usage (memory in use, the default), pressure (PSI),\n"
     "                       swap or name\n"
     "  -d, --delay=SECONDS  time between frames (default: 1; fractions allowed)\n"
     "  -n, --iterations=N   stop after N frames (default: until SIGINT or SIGTERM)\n"
     "  -b, --batch          no screen control codes: frames one after the other, for\n"
     "                       scripts (the default when stdout is not a terminal)\n"
     "Every number is what memqosd reports (Manager, Class and Workload properties).\n"
     "PSI is a workload's memory stall (\"some\", percent) over the reclaim\n"
     "controller's last interval, \"-\" where memqosd does not measure it.\n"
     "With --json, one JSON document per frame (implies --batch).\n"
     "Exit status 0 on SIGINT, SIGTERM or after N frames.\n"},
}};

const VerbInfo* findVerb(std::string_view name) {
    for (const auto& v : kVerbs) {
        if (v.name == name) {
            return &v;
        }
    }
    return nullptr;
}

const VerbInfo* findVerb(Verb verb) {
    for (const auto& v : kVerbs) {
        if (v.verb == verb) {
            return &v;
        }
    }
    return nullptr;
}

constexpr std::string_view kExitCodes =
    "Exit status:\n"
    "  0   success\n"
    "  1   memqosd returned an error (shown as NAME: MESSAGE)\n"
    "  2   verify found an error, or verify-placement a hard violation\n"
    "  3   cannot reach memqosd (no bus, not running, or access denied)\n"
    "  64  usage error (unknown command or option, bad size, missing argument)\n";

constexpr std::string_view kSizes =
    "Sizes are bytes or a number with a K, M, G or T suffix (binary: 1K = 1024),\n"
    "fractions allowed (\"1.5G\"); \"max\" means no limit.\n";

// Command-line state while parsing.
class Parser {
public:
    Parser(const std::vector<std::string>& args, const std::optional<std::string>& env)
        : args_(args) {
        if (env && !env->empty()) {
            cmd_.bus = {BusChoice::Kind::Address, *env};
        }
    }

    Result<Command> parse();

private:
    void fail(std::string what) {
        if (!error_) {
            error_ = std::move(what);
        }
    }
    // The value of option `name`: after '=' or the next argument.
    std::optional<std::string> optionValue(std::string_view name,
                                           const std::optional<std::string>& inlineValue,
                                           std::size_t& i);
    void sizeOption(std::string_view name, const std::optional<std::string>& value,
                    AllowMax allowMax, Bytes& out);
    bool commandOption(std::string_view name, const std::optional<std::string>& inlineValue,
                       std::size_t& i);
    // An option without a value ("--runtime"): "--runtime=x" is an error.
    void flagOption(std::string_view name, const std::optional<std::string>& inlineValue);
    void jsonOption(const std::optional<std::string>& inlineValue);
    void delayOption(std::string_view name, const std::string& value);
    void checkPositionals();

    const std::vector<std::string>& args_;
    Command cmd_;
    std::vector<std::string> positionals_;
    std::optional<std::string> error_;
    bool help_ = false;
    bool version_ = false;
    bool classGiven_ = false;
    bool maxGiven_ = false;          // record-instance --max
    std::optional<Bytes> minOption_; // --min of record-instance and verify-placement
    bool upGiven_ = false;
    bool downGiven_ = false;
};

std::optional<std::string> Parser::optionValue(std::string_view name,
                                               const std::optional<std::string>& inlineValue,
                                               std::size_t& i) {
    if (inlineValue) {
        return inlineValue;
    }
    if (i + 1 >= args_.size()) {
        fail("option '" + std::string(name) + "' needs a value");
        return std::nullopt;
    }
    return args_[++i];
}

void Parser::sizeOption(std::string_view name, const std::optional<std::string>& value,
                        AllowMax allowMax, Bytes& out) {
    if (!value) {
        return;
    }
    auto size = parseSize(*value, allowMax);
    if (!size) {
        fail(std::string(name) + ": " + size.error().what);
        return;
    }
    out = *size;
}

bool Parser::commandOption(std::string_view name, const std::optional<std::string>& inlineValue,
                           std::size_t& i) {
    const Verb verb = cmd_.verb;
    const bool takesSizes = verb == Verb::Assign || verb == Verb::Run;
    if (takesSizes && name == "--request") {
        sizeOption(name, optionValue(name, inlineValue, i), AllowMax::No, cmd_.request);
        return true;
    }
    if (takesSizes && name == "--limit") {
        sizeOption(name, optionValue(name, inlineValue, i), AllowMax::Yes, cmd_.limit);
        return true;
    }
    if (verb == Verb::Assign && name == "--runtime") {
        flagOption(name, inlineValue);
        cmd_.persist = false;
        return true;
    }
    if (verb == Verb::Run && name == "--name") {
        if (auto v = optionValue(name, inlineValue, i)) {
            if (v->empty()) {
                fail("--name: the unit name is empty");
            }
            cmd_.unitName = *v;
        }
        return true;
    }
    if (verb == Verb::Run && name == "--class") {
        if (auto v = optionValue(name, inlineValue, i)) {
            if (v->empty()) {
                fail("--class: the class name is empty");
            }
            cmd_.className = *v;
            classGiven_ = true;
        }
        return true;
    }
    if (verb == Verb::VerifyPlacement && name == "--failover-reserve") {
        Bytes reserve = 0;
        const auto v = optionValue(name, inlineValue, i);
        sizeOption(name, v, AllowMax::No, reserve);
        if (v && !error_) {
            cmd_.failoverReserve = reserve;
        }
        return true;
    }
    if (verb == Verb::VerifyPlacement && name == "--refuse-soft") {
        flagOption(name, inlineValue);
        cmd_.refuseSoft = true;
        return true;
    }
    if (verb == Verb::VerifyPlacement && name == "--instance") {
        if (auto v = optionValue(name, inlineValue, i)) {
            if (v->empty()) {
                fail("--instance: the instance name is empty");
            }
            cmd_.instance = *v;
        }
        return true;
    }
    const bool takesMin = verb == Verb::VerifyPlacement || verb == Verb::RecordInstance;
    if (takesMin && name == "--min") {
        Bytes min = 0;
        const auto v = optionValue(name, inlineValue, i);
        sizeOption(name, v, AllowMax::No, min);
        if (v && !error_) {
            minOption_ = min;
        }
        return true;
    }
    if (verb == Verb::RecordInstance && name == "--max") {
        const auto v = optionValue(name, inlineValue, i);
        sizeOption(name, v, AllowMax::No, cmd_.memory);
        maxGiven_ = maxGiven_ || v.has_value();
        return true;
    }
    if (verb == Verb::RecordInstance && (name == "--up" || name == "--down")) {
        flagOption(name, inlineValue);
        (name == "--up" ? upGiven_ : downGiven_) = true;
        if (upGiven_ && downGiven_) {
            fail("options '--up' and '--down' exclude each other");
        }
        cmd_.up = name == "--up";
        return true;
    }
    if (verb == Verb::Top && (name == "--order" || name == "-o")) {
        if (auto v = optionValue(name, inlineValue, i)) {
            if (auto order = parseTopOrder(*v)) {
                cmd_.order = *order;
            } else {
                fail(std::string(name) + ": '" + *v +
                     "' is not one of usage, pressure, swap, name");
            }
        }
        return true;
    }
    if (verb == Verb::Top && (name == "--delay" || name == "-d")) {
        if (auto v = optionValue(name, inlineValue, i)) {
            delayOption(name, *v);
        }
        return true;
    }
    if (verb == Verb::Top && (name == "--iterations" || name == "-n")) {
        if (auto v = optionValue(name, inlineValue, i)) {
            std::uint64_t n = 0;
            const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
            if (v->empty() || ec != std::errc{} || end != v->data() + v->size() || n == 0) {
                fail(std::string(name) + ": '" + *v + "' is not a number of frames (1 or more)");
            } else {
                cmd_.iterations = n;
            }
        }
        return true;
    }
    if (verb == Verb::Top && (name == "--batch" || name == "-b")) {
        flagOption(name, inlineValue);
        cmd_.batch = true;
        return true;
    }
    return false;
}

void Parser::jsonOption(const std::optional<std::string>& inlineValue) {
    if (!inlineValue || *inlineValue == "pretty") {
        cmd_.json = JsonMode::Pretty;
    } else if (*inlineValue == "short") {
        cmd_.json = JsonMode::Short;
    } else if (*inlineValue == "off") {
        cmd_.json = JsonMode::Off;
    } else {
        fail("--json: '" + *inlineValue + "' is not one of pretty, short, off");
    }
}

void Parser::delayOption(std::string_view name, const std::string& value) {
    double seconds = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    constexpr double kMaxSeconds = 86400;
    if (value.empty() || ec != std::errc{} || end != value.data() + value.size() ||
        !(seconds > 0) || seconds > kMaxSeconds) {
        fail(std::string(name) + ": '" + value +
             "' is not a delay in seconds (above 0, at most 86400)");
        return;
    }
    cmd_.delayMs = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(seconds * 1000)));
}

void Parser::flagOption(std::string_view name, const std::optional<std::string>& inlineValue) {
    if (inlineValue) {
        fail("option '" + std::string(name) + "' takes no value");
    }
}

Result<Command> Parser::parse() {
    bool optionsEnded = false; // after "--" outside `run`
    for (std::size_t i = 0; i < args_.size(); ++i) {
        const std::string& arg = args_[i];

        if (cmd_.verb == Verb::Run && arg == "--") {
            cmd_.argv.assign(args_.begin() + static_cast<std::ptrdiff_t>(i) + 1, args_.end());
            break;
        }
        if (!optionsEnded && arg == "--") {
            optionsEnded = true;
            continue;
        }
        const bool isOption = !optionsEnded && arg.size() > 1 && arg[0] == '-';
        if (!isOption) {
            if (cmd_.verb == Verb::None) {
                const VerbInfo* v = findVerb(arg);
                if (v == nullptr) {
                    fail("unknown command '" + arg + "'");
                    continue;
                }
                cmd_.verb = v->verb;
            } else if (cmd_.verb == Verb::Run) {
                // Like systemd-run: the command starts at the first argument.
                cmd_.argv.assign(args_.begin() + static_cast<std::ptrdiff_t>(i), args_.end());
                break;
            } else {
                positionals_.push_back(arg);
            }
            continue;
        }

        std::string name = arg;
        std::optional<std::string> inlineValue;
        if (const auto eq = arg.find('='); arg.starts_with("--") && eq != std::string::npos) {
            name = arg.substr(0, eq);
            inlineValue = arg.substr(eq + 1);
        }
        const bool flag = !inlineValue;
        if (name == "-h" || name == "--help") {
            help_ = true;
        } else if (name == "--version") {
            version_ = true;
        } else if (name == "--json") {
            jsonOption(inlineValue);
            continue;
        } else if (name == "--no-legend") {
            cmd_.legend = false;
        } else if (name == "--no-pager") {
            // memqosctl never pages; accepted as systemctl's scripts pass it.
        } else if (name == "--system") {
            cmd_.bus = {BusChoice::Kind::System, {}};
        } else if (name == "--bus-address") {
            if (auto v = optionValue(name, inlineValue, i)) {
                if (v->empty()) {
                    fail("--bus-address: the address is empty");
                }
                cmd_.bus = {BusChoice::Kind::Address, *v};
            }
            continue;
        } else if (commandOption(name, inlineValue, i)) {
            continue;
        } else if (cmd_.verb == Verb::None) {
            fail("unknown option '" + name + "'");
            continue;
        } else {
            fail("unknown option '" + name + "' for '" + std::string(verbName(cmd_.verb)) + "'");
            continue;
        }
        if (!flag) {
            fail("option '" + name + "' takes no value");
        }
    }

    if (help_) {
        cmd_.action = Action::Help;
        return cmd_;
    }
    if (version_) {
        cmd_.action = Action::Version;
        return cmd_;
    }
    if (!error_) {
        checkPositionals();
    }
    if (error_) {
        return invalid(*error_);
    }
    return cmd_;
}

void Parser::checkPositionals() {
    const auto count = positionals_.size();
    const std::string verb(verbName(cmd_.verb));
    auto expect = [&](std::size_t min, std::size_t max, std::string_view names) {
        if (count < min) {
            fail("'" + verb + "' needs " + std::string(names));
            return false;
        }
        if (count > max) {
            fail("'" + verb + "': unexpected argument '" + positionals_[max] + "'");
            return false;
        }
        return true;
    };

    switch (cmd_.verb) {
    case Verb::None:
        fail("no command given");
        return;
    case Verb::Status:
    case Verb::Classes:
    case Verb::Workloads:
    case Verb::Verify:
    case Verb::Reload:
    case Verb::Monitor:
    case Verb::Instances:
    case Verb::Events:
    case Verb::Top:
        expect(0, 0, "");
        return;
    case Verb::Assign:
        if (expect(2, 2, "ID and CLASS")) {
            cmd_.id = positionals_[0];
            cmd_.className = positionals_[1];
            if (cmd_.id.empty() || cmd_.className.empty()) {
                fail("'assign': ID and CLASS must not be empty");
            }
        }
        return;
    case Verb::Unassign:
        if (expect(1, 1, "ID")) {
            cmd_.id = positionals_[0];
            if (cmd_.id.empty()) {
                fail("'unassign': ID must not be empty");
            }
        }
        return;
    case Verb::Reclaim:
        if (expect(2, 2, "ID SIZE")) {
            cmd_.id = positionals_[0];
            if (cmd_.id.empty()) {
                fail("'reclaim': ID must not be empty");
            }
            sizeOption("SIZE", positionals_[1], AllowMax::No, cmd_.memory);
            if (cmd_.memory == 0) {
                fail("'reclaim': SIZE must be greater than 0");
            }
        }
        return;
    case Verb::Run:
        if (!classGiven_) {
            fail("'run' needs --class CLASS");
        } else if (cmd_.argv.empty()) {
            fail("'run' needs a command to run (after \"--\")");
        }
        return;
    case Verb::VerifyPlacement:
        if (expect(1, 2, "MEMORY")) {
            Bytes memory = 0;
            sizeOption("MEMORY", positionals_[0], AllowMax::No, memory);
            cmd_.memory = memory;
            cmd_.minMemory = minOption_.value_or(memory);
            if (count == 2 && minOption_) {
                fail("'verify-placement': give MIN_MEMORY or --min, not both");
            } else if (count == 2) {
                sizeOption("MIN_MEMORY", positionals_[1], AllowMax::No, cmd_.minMemory);
            }
        }
        return;
    case Verb::RecordInstance:
        if (expect(1, 1, "NAME")) {
            cmd_.instance = positionals_[0];
            if (cmd_.instance.empty()) {
                fail("'record-instance': NAME must not be empty");
            } else if (!maxGiven_) {
                fail("'record-instance' needs --max SIZE");
            }
            cmd_.minMemory = minOption_.value_or(cmd_.memory);
        }
        return;
    case Verb::ForgetInstance:
        if (expect(1, 1, "NAME")) {
            cmd_.instance = positionals_[0];
            if (cmd_.instance.empty()) {
                fail("'forget-instance': NAME must not be empty");
            }
        }
        return;
    }
}

} // namespace

std::optional<TopOrder> parseTopOrder(std::string_view name) {
    static constexpr std::array<std::pair<std::string_view, TopOrder>, 4> kOrders{{
        {"usage", TopOrder::Usage},
        {"pressure", TopOrder::Pressure},
        {"swap", TopOrder::Swap},
        {"name", TopOrder::Name},
    }};
    for (const auto& [n, order] : kOrders) {
        if (n == name) {
            return order;
        }
    }
    return std::nullopt;
}

std::string_view verbName(Verb verb) {
    const VerbInfo* v = findVerb(verb);
    return v == nullptr ? std::string_view{} : v->name;
}

Result<Command> parseCommandLine(const std::vector<std::string>& args,
                                 const std::optional<std::string>& envBusAddress) {
    return Parser(args, envBusAddress).parse();
}

std::string helpText() {
    std::string out =
        "Usage: memqosctl [OPTIONS] COMMAND [ARGS...]\n"
        "\n"
        "Query and control memqosd, the memory QoS daemon, over D-Bus (org.memqos1).\n"
        "\n"
        "Commands:\n";
    std::size_t width = 0;
    for (const auto& v : kVerbs) {
        width = std::max(width, v.name.size());
    }
    for (const auto& v : kVerbs) {
        out += "  ";
        out += v.name;
        out.append(width - v.name.size() + 2, ' ');
        out += v.summary;
        out += '\n';
    }
    out += "\n"
           "Options:\n"
           "  --json[=MODE]          print JSON (sizes in bytes): pretty (bare --json),\n"
           "                         short (one line) or off\n"
           "  --no-legend            print tables without their header and footer lines\n"
           "  --no-pager             accepted for compatibility; memqosctl never pages\n"
           "  --system               talk to memqosd on the system bus (default)\n"
           "  --bus-address ADDRESS  use this D-Bus address instead (also $MEMQOS_BUS_ADDRESS)\n"
           "  -h, --help             show this help (COMMAND --help: that command's)\n"
           "  --version              show the version\n"
           "\n";
    out += kSizes;
    out += "\n";
    out += kExitCodes;
    out += "\nSee memqosctl(1).\n";
    return out;
}

std::string commandHelp(Verb verb) {
    const VerbInfo* v = findVerb(verb);
    if (v == nullptr) {
        return helpText();
    }
    std::string out = "Usage: memqosctl [OPTIONS] ";
    out += v->synopsis;
    out += "\n\n";
    out += v->summary;
    out += ".\n";
    if (!v->details.empty()) {
        out += "\n";
        out += v->details;
    }
    if (verb == Verb::Assign || verb == Verb::Run || verb == Verb::VerifyPlacement ||
        verb == Verb::RecordInstance) {
        out += "\n";
        out += kSizes;
    }
    out += "\nOptions --json, --no-legend, --no-pager, --system and --bus-address work with\n"
           "every command.\n\n";
    out += kExitCodes;
    return out;
}

std::string defaultRunName(std::int64_t pid, std::int64_t unixSeconds) {
    return "memqos-run-" + std::to_string(pid) + "-" + std::to_string(unixSeconds) + ".service";
}

} // namespace memqos::ctl

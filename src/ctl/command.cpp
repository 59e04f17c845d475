// SPDX-License-Identifier: Apache-2.0
#include "command.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <getopt.h>
#include <utility>

#include "size.hpp"
#include "terminal.hpp"

namespace memqos::ctl {
namespace {

struct VerbInfo {
    Verb verb;
    std::string_view name;
    std::string_view synopsis; // after "memqosctl [OPTIONS] "
    std::string_view summary;
    std::string_view details; // extra lines for COMMAND --help
};

constexpr std::array<VerbInfo, 18> kVerbs{{
    {Verb::Status, "status", "status [ID]",
     "Show node memory, swap, ratio, pressure and admission, or one workload",
     "  Without ID: the node, as memqosd sees it, and the instance record.\n"
     "  With ID: the workload's class, request, limit, tiers, memory in use, PSI,\n"
     "  reclaim and balloon state, and the last 10 lines memqosd logged about it\n"
     "  (from the journal; one line saying why when there are none to read).\n"
     "  ID as with assign (\"nginx\" is \"nginx.service\"); exit status 6 when memqosd\n"
     "  does not manage it.\n"},
    {Verb::Show, "show", "show [ID] [-p NAME[,NAME...]] [--value]",
     "Show the properties of the manager or of one workload",
     "  Prints NAME=VALUE, one property a line, sorted by name: the Manager's\n"
     "  without ID, the workload's with one (exit status 6 when it is not managed).\n"
     "  -p, --property=NAME[,NAME...]  only these (repeatable), in the order given;\n"
     "                                 a name the object does not have prints nothing\n"
     "  --value                        print the values only\n"
     "  Values: yes/no, numbers in bytes or percent, \"infinity\" for no limit.\n"},
    {Verb::Classes, "classes", "classes", "List the colocation classes", ""},
    {Verb::Workloads, "workloads", "workloads", "List the managed workloads and their tiers", ""},
    {Verb::Assign, "assign", "assign ID CLASS [--request SIZE] [--limit SIZE] [--runtime]",
     "Put a workload (unit or vm:DOMAIN) in a class",
     "  ID is \"nginx.service\", \"x.scope\" or \"vm:<domain>\"; a name without a unit\n"
     "  suffix is a service, as with systemctl (\"nginx\" is \"nginx.service\").\n"
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
     "[--refuse-soft] [--instance NAME] [--class CLASS]",
     "Would a VM of MEMORY fit under the memory ratio?",
     "  MEMORY is the VM's maximum memory, MIN_MEMORY its minimum (default: MEMORY).\n"
     "  --min SIZE                the minimum memory, instead of MIN_MEMORY\n"
     "  --failover-reserve SIZE   memory kept for failovers (default: from the config)\n"
     "  --refuse-soft             report a soft violation as hard (exit status 2)\n"
     "  --instance NAME           the VM's instance name: its own record is left out\n"
     "                            (an instance start or modify)\n"
     "  --class CLASS             the class the VM will run in: while admission is\n"
     "                            closed only a killable class is refused (without\n"
     "                            it, every placement is then refused)\n"
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
    {Verb::Release, "release", "release --all",
     "Give back everything memqos changed, then stop memqosd",
     "  --all            required: every workload is unassigned (its stored assignment\n"
     "                   removed, its unit given back what its configuration says now),\n"
     "                   then memqosd gives back the class caps and memory.oom.group and\n"
     "                   stops; it stays stopped until started again, and starts with no\n"
     "                   stored assignment. Prints the ids given back. The package runs\n"
     "                   it on removal. Needs root.\n"},
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
     "On a terminal: q quits; m, p, r, s sort by memory, name, pressure, swap;\n"
     "space redraws. A frame is cut to the terminal's height.\n"
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
    "  1   memqosd returned another error (shown as NAME: MESSAGE)\n"
    "  2   verify found an error, or verify-placement a hard violation\n"
    "  3   cannot reach memqosd (no bus, or no answer)\n"
    "  4   memqosd is not running (memqosctl never starts it)\n"
    "  5   access denied (the command needs root)\n"
    "  6   no such workload, unit or instance\n"
    "  64  usage error (unknown command or option, bad size, missing argument), or an\n"
    "      argument memqosd refused (unknown class, invalid unit name or size)\n";

constexpr std::string_view kSizes =
    "Sizes are bytes or a number with a K, M, G, T, P or E suffix (binary: 1K = 1024),\n"
    "fractions allowed (\"1.5G\"); \"max\" means no limit.\n";

// getopt_long's option codes: above any character, so optopt tells a long
// option's code (its "takes no value" error) from an unknown short option.
enum Opt : int {
    OptHelp = 0x100,
    OptVersion,
    OptJson,
    OptNoLegend,
    OptNoPager,
    OptSystem,
    OptBusAddress,
    OptRequest,
    OptLimit,
    OptRuntime,
    OptName,
    OptClass,
    OptFailoverReserve,
    OptRefuseSoft,
    OptInstance,
    OptMin,
    OptMax,
    OptUp,
    OptDown,
    OptOrder = 'o',
    OptDelay = 'd',
    OptIterations = 'n',
    OptBatch = 'b',
    OptAll = 0x200,
    OptProperty = 'p',
    OptValue = 0x201,
    OptLegend,
    OptQuiet = 'q',
};

struct OptionInfo {
    const char* name;
    int hasArg; // no_argument, required_argument, optional_argument
    int code;
    std::uint32_t verbs; // verbBit()s; 0: every command (and before it)
};

constexpr std::uint32_t verbBit(Verb verb) {
    return std::uint32_t{1} << static_cast<unsigned>(verb);
}

// Every option memqosctl knows; an option is only recognised for its verbs.
constexpr std::array<OptionInfo, 28> kOptions{{
    {"help", no_argument, OptHelp, 0},
    {"version", no_argument, OptVersion, 0},
    {"json", optional_argument, OptJson, 0},
    {"no-legend", no_argument, OptNoLegend, 0},
    {"legend", required_argument, OptLegend, 0},
    {"quiet", no_argument, OptQuiet, 0},
    {"no-pager", no_argument, OptNoPager, 0},
    {"system", no_argument, OptSystem, 0},
    {"bus-address", required_argument, OptBusAddress, 0},
    {"request", required_argument, OptRequest, verbBit(Verb::Assign) | verbBit(Verb::Run)},
    {"limit", required_argument, OptLimit, verbBit(Verb::Assign) | verbBit(Verb::Run)},
    {"runtime", no_argument, OptRuntime, verbBit(Verb::Assign)},
    {"name", required_argument, OptName, verbBit(Verb::Run)},
    {"class", required_argument, OptClass, verbBit(Verb::Run) | verbBit(Verb::VerifyPlacement)},
    {"failover-reserve", required_argument, OptFailoverReserve, verbBit(Verb::VerifyPlacement)},
    {"refuse-soft", no_argument, OptRefuseSoft, verbBit(Verb::VerifyPlacement)},
    {"instance", required_argument, OptInstance, verbBit(Verb::VerifyPlacement)},
    {"min", required_argument, OptMin,
     verbBit(Verb::VerifyPlacement) | verbBit(Verb::RecordInstance)},
    {"max", required_argument, OptMax, verbBit(Verb::RecordInstance)},
    {"up", no_argument, OptUp, verbBit(Verb::RecordInstance)},
    {"down", no_argument, OptDown, verbBit(Verb::RecordInstance)},
    {"order", required_argument, OptOrder, verbBit(Verb::Top)},
    {"delay", required_argument, OptDelay, verbBit(Verb::Top)},
    {"iterations", required_argument, OptIterations, verbBit(Verb::Top)},
    {"batch", no_argument, OptBatch, verbBit(Verb::Top)},
    {"all", no_argument, OptAll, verbBit(Verb::Release)},
    {"property", required_argument, OptProperty, verbBit(Verb::Show)},
    {"value", no_argument, OptValue, verbBit(Verb::Show)},
}};

bool appliesTo(const OptionInfo& o, Verb verb) {
    return o.verbs == 0 || (o.verbs & verbBit(verb)) != 0;
}

const OptionInfo* findOption(int code) {
    for (const auto& o : kOptions) {
        if (o.code == code) {
            return &o;
        }
    }
    return nullptr;
}

// getopt_long's tables for the options of `verb` (Verb::None: before the
// command). "-" first: words that are not options come back in order as
// code 1, so the command word switches the tables and `run` stops at the
// first word of its command; POSIXLY_CORRECT changes nothing. ":" after it:
// a missing value is ':', and getopt prints nothing itself.
struct OptionTables {
    std::vector<option> longOptions;
    std::string shortOptions;

    explicit OptionTables(Verb verb) : shortOptions("-:h") {
        for (const auto& o : kOptions) {
            if (appliesTo(o, verb)) {
                longOptions.push_back({o.name, o.hasArg, nullptr, o.code});
                if (o.code < 0x100) {
                    shortOptions += static_cast<char>(o.code);
                    shortOptions += o.hasArg == required_argument ? ":" : "";
                }
            }
        }
        longOptions.push_back({nullptr, 0, nullptr, 0});
    }
};

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
    void sizeOption(std::string_view name, const std::optional<std::string>& value,
                    AllowMax allowMax, Bytes& out);
    // One option getopt_long recognised; `name` as typed ("--order", "-o").
    void option(int code, const std::string& name, const char* value);
    // One word that is not an option: the command, or an argument of it.
    // False when the rest of the words (from `index` on) are run's command.
    bool word(const std::string& arg, std::size_t index);
    // getopt_long's '?' and ':' as our messages.
    void optionError(int result, const std::string& typed, int code);
    void jsonOption(const char* value);
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

void Parser::option(int code, const std::string& name, const char* rawValue) {
    const std::string v = rawValue != nullptr ? rawValue : "";
    switch (code) {
    case 'h':
    case OptHelp:
        help_ = true;
        return;
    case OptVersion:
        version_ = true;
        return;
    case OptJson:
        jsonOption(rawValue);
        return;
    case OptNoLegend:
        cmd_.legend = false;
        return;
    case OptLegend:
        if (auto b = parseBoolean(v)) {
            cmd_.legend = *b;
        } else {
            fail(name + ": '" + v + "' is not a boolean (yes or no)");
        }
        return;
    case OptNoPager:
        cmd_.pager = false;
        return;
    case OptQuiet:
        cmd_.quiet = true;
        return;
    case OptSystem:
        cmd_.bus = {BusChoice::Kind::System, {}};
        return;
    case OptBusAddress:
        if (v.empty()) {
            fail(name + ": the address is empty");
        }
        cmd_.bus = {BusChoice::Kind::Address, v};
        return;
    case OptRequest:
        sizeOption(name, v, AllowMax::No, cmd_.request);
        return;
    case OptLimit:
        sizeOption(name, v, AllowMax::Yes, cmd_.limit);
        return;
    case OptRuntime:
        cmd_.persist = false;
        return;
    case OptName:
        if (v.empty()) {
            fail(name + ": the unit name is empty");
        }
        cmd_.unitName = v;
        return;
    case OptClass:
        if (v.empty()) {
            fail(name + ": the class name is empty");
        }
        cmd_.className = v;
        classGiven_ = true;
        return;
    case OptFailoverReserve: {
        Bytes reserve = 0;
        sizeOption(name, v, AllowMax::No, reserve);
        if (!error_) {
            cmd_.failoverReserve = reserve;
        }
        return;
    }
    case OptRefuseSoft:
        cmd_.refuseSoft = true;
        return;
    case OptInstance:
        if (v.empty()) {
            fail(name + ": the instance name is empty");
        }
        cmd_.instance = v;
        return;
    case OptMin: {
        Bytes min = 0;
        sizeOption(name, v, AllowMax::No, min);
        if (!error_) {
            minOption_ = min;
        }
        return;
    }
    case OptMax:
        sizeOption(name, v, AllowMax::No, cmd_.memory);
        maxGiven_ = true;
        return;
    case OptUp:
    case OptDown:
        (code == OptUp ? upGiven_ : downGiven_) = true;
        if (upGiven_ && downGiven_) {
            fail("options '--up' and '--down' exclude each other");
        }
        cmd_.up = code == OptUp;
        return;
    case OptOrder:
        if (auto order = parseTopOrder(v)) {
            cmd_.order = *order;
        } else {
            fail(name + ": '" + v + "' is not one of usage, pressure, swap, name");
        }
        return;
    case OptDelay:
        delayOption(name, v);
        return;
    case OptIterations: {
        std::uint64_t n = 0;
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (v.empty() || ec != std::errc{} || end != v.data() + v.size() || n == 0) {
            fail(name + ": '" + v + "' is not a number of frames (1 or more)");
        } else {
            cmd_.iterations = n;
        }
        return;
    }
    case OptBatch:
        cmd_.batch = true;
        return;
    case OptAll:
        cmd_.all = true;
        return;
    case OptProperty: {
        // systemctl's -p: comma-separated, repeatable.
        std::string_view rest = v;
        while (!rest.empty()) {
            const auto comma = rest.find(',');
            const auto one = rest.substr(0, comma);
            if (!one.empty()) {
                cmd_.properties.emplace_back(one);
            }
            rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        }
        if (cmd_.properties.empty()) {
            fail(name + ": no property name given");
        }
        return;
    }
    case OptValue:
        cmd_.valueOnly = true;
        return;
    default:
        fail("option '" + name + "' is not handled"); // a table without its case
        return;
    }
}

bool Parser::word(const std::string& arg, std::size_t index) {
    if (cmd_.verb == Verb::None) {
        const VerbInfo* v = findVerb(arg);
        if (v == nullptr) {
            fail("unknown command '" + arg + "'");
        } else {
            cmd_.verb = v->verb;
        }
        return true;
    }
    if (cmd_.verb == Verb::Run) {
        // Like systemd-run: the command starts at its first word, and its
        // options are its own.
        cmd_.argv.assign(args_.begin() + static_cast<std::ptrdiff_t>(index), args_.end());
        return false;
    }
    positionals_.push_back(arg);
    return true;
}

void Parser::optionError(int result, const std::string& typed, int code) {
    const std::string verb(verbName(cmd_.verb));
    const std::string forVerb = verb.empty() ? "" : " for '" + verb + "'";
    const OptionInfo* known = findOption(code);
    const std::string canonical = known != nullptr ? "--" + std::string(known->name)
                                                   : "-" + std::string(1, static_cast<char>(code));
    const std::string name =
        typed.starts_with("--") ? canonical : "-" + std::string(1, static_cast<char>(code));
    if (result == ':') {
        fail("option '" + name + "' needs a value");
    } else if (known != nullptr && typed.starts_with("--")) {
        fail("option '" + canonical + "' takes no value");
    } else if (code != 0) {
        fail("unknown option '-" + std::string(1, static_cast<char>(code)) + "'" + forVerb);
    } else {
        std::string asTyped = typed.substr(0, typed.find('='));
        std::string matches;
        for (const auto& o : kOptions) {
            if (appliesTo(o, cmd_.verb) && asTyped.size() > 2 &&
                std::string_view(o.name).starts_with(std::string_view(asTyped).substr(2))) {
                matches += (matches.empty() ? "" : ", ") + std::string("--") + o.name;
            }
        }
        if (matches.find(',') != std::string::npos) {
            fail("option '" + asTyped + "' is ambiguous (" + matches + ")");
        } else {
            fail("unknown option '" + asTyped + "'" + forVerb);
        }
    }
}

void Parser::jsonOption(const char* value) {
    const std::string_view v = value != nullptr ? value : "pretty";
    if (v == "pretty") {
        cmd_.json = JsonMode::Pretty;
    } else if (v == "short") {
        cmd_.json = JsonMode::Short;
    } else if (v == "off") {
        cmd_.json = JsonMode::Off;
    } else {
        fail("--json: '" + std::string(v) + "' is not one of pretty, short, off");
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

Result<Command> Parser::parse() {
    // getopt_long wants argv[0] and writable words; it does not reorder them
    // here (RETURN_IN_ORDER), so index i of `argv` is args_[i - 1].
    std::vector<std::string> words;
    words.reserve(args_.size() + 1);
    words.emplace_back("memqosctl");
    words.insert(words.end(), args_.begin(), args_.end());
    std::vector<char*> argv;
    argv.reserve(words.size() + 1);
    for (auto& w : words) {
        argv.push_back(w.data());
    }
    argv.push_back(nullptr);
    const int argc = static_cast<int>(words.size());

    opterr = 0;
    optind = 0; // glibc: start over (this parser may run more than once)
    bool more = true;
    while (more) {
        const OptionTables tables(cmd_.verb);
        int longIndex = -1;
        const int before = optind == 0 ? 1 : optind;
        const int c = getopt_long(argc, argv.data(), tables.shortOptions.c_str(),
                                  tables.longOptions.data(), &longIndex);
        if (c == -1) {
            break; // the end, or "--": the rest are words, not options
        }
        const auto wordIndex = static_cast<std::size_t>(std::max(optind - 1, 1));
        const std::string typed = static_cast<std::size_t>(before) < words.size()
                                      ? words[static_cast<std::size_t>(before)]
                                      : std::string{};
        if (c == 1) {
            more = word(optarg, wordIndex - 1);
        } else if (c == '?' || c == ':') {
            optionError(c, typed, optopt);
        } else {
            const std::string name =
                longIndex >= 0
                    ? "--" +
                          std::string(tables.longOptions[static_cast<std::size_t>(longIndex)].name)
                    : "-" + std::string(1, static_cast<char>(c));
            option(c, name, optarg);
        }
    }
    if (more) {
        for (auto i = static_cast<std::size_t>(std::max(optind, 1)); i < words.size() && more;
             ++i) {
            more = word(words[i], i - 1);
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
    case Verb::Show:
        if (expect(0, 1, "")) {
            cmd_.id = count == 1 ? mangleWorkloadId(positionals_[0]) : std::string{};
            if (count == 1 && cmd_.id.empty()) {
                fail("'" + verb + "': ID must not be empty");
            }
        }
        return;
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
            cmd_.id = mangleWorkloadId(positionals_[0]);
            cmd_.className = positionals_[1];
            if (cmd_.id.empty() || cmd_.className.empty()) {
                fail("'assign': ID and CLASS must not be empty");
            }
        }
        return;
    case Verb::Release:
        if (expect(0, 0, "") && !cmd_.all) {
            fail("'release' gives back everything and stops memqosd: say so with --all (to give "
                 "back one workload, use 'unassign ID')");
        }
        return;
    case Verb::Unassign:
        if (expect(1, 1, "ID")) {
            cmd_.id = mangleWorkloadId(positionals_[0]);
            if (cmd_.id.empty()) {
                fail("'unassign': ID must not be empty");
            }
        }
        return;
    case Verb::Reclaim:
        if (expect(2, 2, "ID SIZE")) {
            cmd_.id = mangleWorkloadId(positionals_[0]);
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
           "  --legend=BOOL          print tables with (yes, the default) or without (no)\n"
           "                         their header and footer lines\n"
           "  --no-legend            the same as --legend=no\n"
           "  --no-pager             do not pipe the output into a pager (on a terminal,\n"
           "                         status, show, classes, workloads, instances, events\n"
           "                         and verify use $SYSTEMD_PAGER, $PAGER, less or more)\n"
           "  -q, --quiet            print nothing on standard output for the commands that\n"
           "                         change something and for verify and verify-placement\n"
           "                         (the exit status tells)\n"
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
    out += "\nOptions --json, --legend, --no-legend, --no-pager, -q, --system and --bus-address\n"
           "work with every command.\n\n";
    out += kExitCodes;
    return out;
}

std::string mangleWorkloadId(std::string_view id) {
    // systemd's unit types (unit_type_to_string), each as its suffix.
    static constexpr std::array<std::string_view, 11> kUnitSuffixes{
        ".service", ".socket", ".target", ".device", ".mount", ".automount",
        ".swap",    ".timer",  ".path",   ".slice",  ".scope",
    };
    const bool keep = id.empty() || id.starts_with("vm:") ||
                      id.find('/') != std::string_view::npos ||
                      std::any_of(kUnitSuffixes.begin(), kUnitSuffixes.end(),
                                  [&](std::string_view suffix) {
                                      return id.size() > suffix.size() && id.ends_with(suffix);
                                  });
    return keep ? std::string(id) : std::string(id) + ".service";
}

std::string defaultRunName(std::int64_t pid, std::int64_t unixSeconds) {
    return "memqos-run-" + std::to_string(pid) + "-" + std::to_string(unixSeconds) + ".service";
}

} // namespace memqos::ctl

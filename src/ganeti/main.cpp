// SPDX-License-Identifier: Apache-2.0
// memqos-ganeti-hook: the Ganeti hook of memqos, installed as
// /etc/ganeti/hooks/<path>-{pre,post}.d/memqos. Pre-hooks ask this node's
// memqosd whether the instance fits (VerifyPlacement) and refuse a hard
// violation; post-hooks keep memqosd's instance record current. The
// decisions are in hook.cpp (pure); this file does the effects: config,
// node name, D-Bus with a deadline, journal, exit status. See --help.

#include "memqos/core/tiers.hpp"
#include "memqos/config/config.hpp"
#include "memqos/core/placement.hpp"
#include "memqos/ganeti/hook.hpp"
#include "memqos/io/bus.hpp"
#include "memqos/io/bus_names.hpp"
#include "memqos/io/config_loader.hpp"
#include "memqos/io/file.hpp"
#include "memqos/io/log.hpp"
#include "memqos/parse/command_line.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <netdb.h>
#include <optional>
#include <string>
#include <systemd/sd-bus.h>
#include <unistd.h>
#include <vector>

extern char** environ; // NOLINT

namespace memqos::ganeti {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitRefused = 1;
constexpr int kExitUsage = 64;

constexpr const char* kUsage = R"(Usage: memqos-ganeti-hook [OPTIONS]

The Ganeti hook of memqos. Ganeti runs it (as
/etc/ganeti/hooks/<path>-pre.d/memqos and -post.d/memqos) with the operation
in GANETI_* environment variables:
  pre-hooks  of instance-add, -start, -modify, -migrate, -failover on the node
             that will host the instance: ask memqosd (VerifyPlacement) and
             exit 1 with one line on stdout on a hard violation; a soft
             violation is allowed with a warning in the journal.
  post-hooks of instance-add, -start, -stop, -modify, -remove, -rename,
             -migrate, -failover: update memqosd's instance record
             (RecordInstance / ForgetInstance).
On other nodes and phases it does nothing and exits 0. Settings come from
[Ganeti] of )" MEMQOS_CONFIG_FILE R"(: HookTimeout (default 10s),
WhenUnreachable (allow|refuse, default allow: when memqosd does not answer,
allow and log a warning to the journal), RefuseSoft, NodeName.

Options:
  --config FILE      configuration file (default )" MEMQOS_CONFIG_FILE R"()
  --no-drop-ins      do not read FILE.d/*.conf
  --node-name NAME   this node's Ganeti name (default: [Ganeti] NodeName,
                     else the host's canonical name)
  --bus-address ADDR D-Bus address of memqosd's bus (default: system bus)
  --env-file FILE    read the GANETI_* variables from FILE (KEY=VALUE lines)
                     instead of the environment
  --dry-run          print what would be done; no D-Bus calls
  -h, --help, --version
A value may follow its option as --opt=VALUE or --opt VALUE; -- ends the
options. The hook takes no other arguments.

Exit status: 0 allowed / nothing to do / record updated; 1 refused (pre) or
the record could not be updated (post: Ganeti shows it as a warning);
64 usage error (an unknown option, a missing value), or no
GANETI_HOOKS_PHASE (not run by Ganeti). A Ganeti environment the hook cannot
read is handled like an unanswered pre-hook (WhenUnreachable) and fails a
post-hook (exit 1).
)";

struct Options {
    std::optional<std::string> config;
    bool dropIns = true;
    std::optional<std::string> nodeName;
    std::optional<std::string> busAddress;
    std::optional<std::string> envFile;
    bool dryRun = false;
};

// Prints a line for Ganeti (stdout: its job log shows a refusing hook's
// output) and logs it to the journal.
void say(log::Level level, const std::string& line, const Plan& p) {
    std::printf("memqos: %s\n", line.c_str());
    std::fflush(stdout);
    log::log(level, "{LINE}", "LINE", line, "INSTANCE", p.instance, "HOOKS_PATH", p.path,
             "HOOKS_PHASE", p.phase);
}

std::string canonicalHostName() {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) {
        return {};
    }
    addrinfo hints{};
    hints.ai_flags = AI_CANONNAME;
    addrinfo* res = nullptr;
    std::string name = host;
    if (::getaddrinfo(host, nullptr, &hints, &res) == 0 && res != nullptr) {
        if (res->ai_canonname != nullptr && std::strchr(res->ai_canonname, '.') != nullptr) {
            name = res->ai_canonname;
        }
        ::freeaddrinfo(res);
    }
    return name;
}

Env processEnv() {
    Env env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        const std::string_view kv(*e);
        const auto eq = kv.find('=');
        if (eq != std::string_view::npos && kv.starts_with("GANETI_")) {
            env[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
        }
    }
    return env;
}

// memqosd over D-Bus, every call bounded by one deadline.
class Daemon {
public:
    Daemon(std::optional<std::string> address, std::chrono::steady_clock::time_point deadline)
        : address_(std::move(address)), deadline_(deadline) {}

    // Error: memqosd did not answer (not running, no bus, timeout). A D-Bus
    // error reply from memqosd is a value, with errorName set.
    struct Reply {
        io::MessagePtr message;
        std::string errorName; // set when memqosd answered with an error
        std::string errorMessage;
    };

    // Calls Manager.`member` with sd_bus_message_append(signature, args...).
    template <typename... Args>
    Result<Reply> call(const char* member, const char* signature, Args... args) {
        if (!bus_) {
            auto bus = io::openBus(address_, "memqos-ganeti-hook");
            if (!bus) {
                return bus.error();
            }
            bus_ = std::move(*bus);
        }
        sd_bus_message* raw = nullptr;
        int r = sd_bus_message_new_method_call(bus_.get(), &raw, io::bus_names::kBusName,
                                               io::bus_names::kManagerPath,
                                               io::bus_names::kManagerInterface, member);
        if (r < 0) {
            return io::busError(r, std::string("cannot build ") + member);
        }
        io::MessagePtr m(raw);
        // A stopped memqosd is the configured fallback, not a bus activation.
        (void)sd_bus_message_set_auto_start(raw, 0);
        if ((r = sd_bus_message_append(raw, signature, args...)) < 0) {
            return io::busError(r, std::string("cannot build ") + member);
        }
        const auto left = std::chrono::duration_cast<std::chrono::microseconds>(
            deadline_ - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            return makeError(std::errc::timed_out, "no time left");
        }
        sd_bus_error err{};
        sd_bus_message* reply = nullptr;
        r = sd_bus_call(bus_.get(), raw, static_cast<std::uint64_t>(left.count()), &err, &reply);
        Reply out;
        out.message.reset(reply);
        if (r < 0) {
            const std::string name = err.name != nullptr ? err.name : "";
            const std::string text = err.message != nullptr ? err.message : std::strerror(-r);
            sd_bus_error_free(&err);
            if (name.starts_with(io::bus_names::kErrorPrefix) ||
                name == "org.freedesktop.DBus.Error.AccessDenied") {
                out.errorName = name;
                out.errorMessage = text;
                return out;
            }
            return makeError(std::errc::host_unreachable,
                             (name.empty() ? "" : name + ": ") + text);
        }
        return out;
    }

private:
    std::optional<std::string> address_;
    std::chrono::steady_clock::time_point deadline_;
    io::BusPtr bus_;
};

int unreachable(const config::GanetiConfig& cfg, const Plan& p, const Step& s,
                const std::string& why) {
    const bool refuse = cfg.whenUnreachable == config::WhenUnreachable::Refuse;
    say(log::Level::Warning,
        std::string(refuse ? "refused" : "allowed") + " " + p.path + " of " + p.instance + " (" +
            describe(s) + ") without a check: memqosd did not answer (" + why +
            "); [Ganeti] WhenUnreachable=" + (refuse ? "refuse" : "allow"),
        p);
    return refuse ? kExitRefused : kExitOk;
}

int check(Daemon& d, const config::GanetiConfig& cfg, const Plan& p, const Step& s,
          std::string_view node) {
    // "class": the tag's, or "" for the class memqosd gives the instance
    // (a rule, [VM] DefaultClass): while admission is closed only a
    // killable class is refused.
    auto reply =
        d.call("VerifyPlacement", "tta{sv}", static_cast<std::uint64_t>(s.maxMemory),
               static_cast<std::uint64_t>(s.minMemory), 3U, "instance", "s", s.instance.c_str(),
               "refuse_soft", "b", cfg.refuseSoft ? 1 : 0, "class", "s", s.className.c_str());
    if (!reply) {
        return unreachable(cfg, p, s, reply.error().what);
    }
    if (!reply->errorName.empty()) {
        return unreachable(cfg, p, s, reply->errorName + ": " + reply->errorMessage);
    }
    const char* verdict = nullptr;
    const char* message = nullptr;
    if (sd_bus_message_read(reply->message.get(), "ss", &verdict, &message) < 0) {
        return unreachable(cfg, p, s, "malformed VerifyPlacement reply");
    }
    const std::string v = verdict;
    const std::string where = p.path + " of " + p.instance + " on " + std::string(node) + ": ";
    if (v == "hard") {
        say(log::Level::Warning, "refused " + where + message, p);
        return kExitRefused;
    }
    if (v == "soft") {
        say(log::Level::Warning, "allowed with a warning " + where + message, p);
        return kExitOk;
    }
    log::info("Allowed {WHAT}{MESSAGE}", "WHAT", where, "MESSAGE", message, "INSTANCE",
              p.instance, "HOOKS_PATH", p.path, "HOOKS_PHASE", p.phase);
    return kExitOk;
}

// A tag memqos:class:<name>: the instance's class, as a persistent
// assignment (request = minmem, limit = maxmem + [VM] LimitOverhead), sent
// before the record so memqosd adopts the qemu straight into that class.
// The instance runs (only up instances are assigned), so memqosd's closed
// admission does not refuse it.
int assignClass(Daemon& d, const Plan& p, const Step& s, Bytes limitOverhead) {
    const std::string id = "vm:" + s.instance;
    auto reply = d.call("AssignWorkload", "ssttb", id.c_str(), s.className.c_str(),
                        static_cast<std::uint64_t>(s.minMemory),
                        static_cast<std::uint64_t>(core::saturatingAdd(s.maxMemory, limitOverhead)),
                        1);
    if (!reply || !reply->errorName.empty()) {
        say(log::Level::Warning,
            "could not put " + s.instance + " in class " + s.className + " (its tag) after " +
                p.path + ": " +
                (reply ? reply->errorName + ": " + reply->errorMessage : reply.error().what),
            p);
        return kExitRefused;
    }
    log::info("{INSTANCE} in class {CLASS} (tag memqos:class) after {HOOKS_PATH}", "INSTANCE",
              s.instance, "CLASS", s.className, "HOOKS_PATH", p.path);
    return kExitOk;
}

int update(Daemon& d, const Plan& p, const Step& s) {
    auto reply = s.kind == StepKind::Record
                     ? d.call("RecordInstance", "sttb", s.instance.c_str(),
                              static_cast<std::uint64_t>(s.minMemory),
                              static_cast<std::uint64_t>(s.maxMemory), s.up ? 1 : 0)
                     : d.call("ForgetInstance", "s", s.instance.c_str());
    const std::string what = (s.kind == StepKind::Record ? "record " : "forget ") + s.instance;
    if (!reply) {
        say(log::Level::Warning,
            "could not " + what + " after " + p.path + ": memqosd did not answer (" +
                reply.error().what + "); " +
                (s.kind == StepKind::Record
                     ? "memqosctl record-instance can mend it"
                     : "memqosctl forget-instance can mend it (after a removal memqosd "
                       "also forgets it by itself once Ganeti no longer lists it)"),
            p);
        return kExitRefused;
    }
    if (reply->errorName == std::string(io::bus_names::kErrorPrefix) + "NoSuchInstance") {
        return kExitOk; // nothing recorded to forget
    }
    if (!reply->errorName.empty()) {
        say(log::Level::Warning,
            "could not " + what + " after " + p.path + ": " + reply->errorName + ": " +
                reply->errorMessage,
            p);
        return kExitRefused;
    }
    log::info("{WHAT} after {HOOKS_PATH}: {STEP}", "WHAT", what, "HOOKS_PATH", p.path, "STEP",
              describe(s), "INSTANCE", s.instance, "HOOKS_PHASE", p.phase);
    return kExitOk;
}

int run(const Options& o) {
    io::LoadOptions lo;
    if (o.config) {
        lo.mainFile = *o.config;
    }
    lo.dropIns = o.dropIns;
    auto loaded = io::loadConfig(lo);
    config::GanetiConfig cfg = loaded.validated.config.ganeti;
    Bytes limitOverhead = loaded.validated.config.vm.limitOverhead;
    if (loaded.validated.hasErrors()) {
        cfg = config::GanetiConfig{};
        limitOverhead = config::VmConfig{}.limitOverhead;
        for (const auto& pr : loaded.validated.problems) {
            if (pr.severity == config::Severity::Error) {
                log::warning("Configuration problem, using the [Ganeti] defaults: {ERROR}",
                             "ERROR", pr.format());
            }
        }
    }
    Env env;
    if (o.envFile) {
        auto text = io::readFile(*o.envFile, std::size_t{1} << 20);
        if (!text) {
            std::fprintf(stderr, "memqos-ganeti-hook: %s\n", text.error().what.c_str());
            return kExitUsage;
        }
        auto parsed = parseEnvFile(*text);
        if (!parsed) {
            std::fprintf(stderr, "memqos-ganeti-hook: %s: %s\n", o.envFile->c_str(),
                         parsed.error().what.c_str());
            return kExitUsage;
        }
        env = std::move(*parsed);
    } else {
        env = processEnv();
    }
    const std::string node =
        o.nodeName ? *o.nodeName : (cfg.nodeName.empty() ? canonicalHostName() : cfg.nodeName);
    auto p = plan(env, node);
    if (!p) {
        // Not run by Ganeti at all: a usage error. Run by Ganeti with an
        // environment we cannot read (a newer Ganeti?): a pre-hook follows
        // WhenUnreachable like any other missing answer, so memqos never
        // blocks Ganeti by default; a post-hook fails (Ganeti warns).
        const auto phase = env.find("GANETI_HOOKS_PHASE");
        const std::string why = "cannot decide: " + p.error().what;
        if (phase == env.end() || o.dryRun) {
            std::printf("memqos: %s\n", why.c_str());
            return kExitUsage;
        }
        const bool refuse = phase->second == "post" ||
                            cfg.whenUnreachable == config::WhenUnreachable::Refuse;
        Plan bad;
        bad.phase = phase->second;
        if (const auto path = env.find("GANETI_HOOKS_PATH"); path != env.end()) {
            bad.path = path->second;
        }
        if (const auto name = env.find("GANETI_INSTANCE_NAME"); name != env.end()) {
            bad.instance = name->second;
        }
        say(log::Level::Warning,
            why + (phase->second == "post" ? ""
                   : refuse            ? "; refused ([Ganeti] WhenUnreachable=refuse)"
                                       : "; allowed ([Ganeti] WhenUnreachable=allow)"),
            bad);
        return refuse ? kExitRefused : kExitOk;
    }
    if (o.dryRun) {
        std::printf("%s %s %s: %s\n", p->path.c_str(), p->phase.c_str(), p->instance.c_str(),
                    p->why.c_str());
        return kExitOk;
    }
    if (p->steps.empty()) {
        log::debug("Nothing to do: {WHY}", "WHY", p->why);
        return kExitOk;
    }
    Daemon d(o.busAddress, std::chrono::steady_clock::now() + cfg.hookTimeout);
    int status = kExitOk;
    for (const auto& s : p->steps) {
        if (s.kind == StepKind::Record && s.up && !s.className.empty()) {
            status = assignClass(d, *p, s, limitOverhead);
        }
        const int r = s.kind == StepKind::Check ? check(d, cfg, *p, s, node) : update(d, *p, s);
        status = status == kExitOk ? r : status;
    }
    return status;
}

enum OptionId : int {
    kOptHelp = 'h',
    kOptVersion = 256,
    kOptConfig,
    kOptNoDropIns,
    kOptNodeName,
    kOptBusAddress,
    kOptEnvFile,
    kOptDryRun,
};

constexpr parse::OptionSpec kOptionSpecs[] = {
    {"help", parse::OptionArg::None, kOptHelp, 'h', true},
    {"version", parse::OptionArg::None, kOptVersion, 0, true},
    {"config", parse::OptionArg::Required, kOptConfig},
    {"no-drop-ins", parse::OptionArg::None, kOptNoDropIns},
    {"node-name", parse::OptionArg::Required, kOptNodeName},
    {"bus-address", parse::OptionArg::Required, kOptBusAddress},
    {"env-file", parse::OptionArg::Required, kOptEnvFile},
    {"dry-run", parse::OptionArg::None, kOptDryRun},
};

// nullopt: run; else the exit status (--help, --version, a usage error).
std::optional<int> parseArgs(int argc, char** argv, Options& o) {
    constexpr const char* kProgram = "memqos-ganeti-hook";
    // Parsed like memqosd's options, without getopt's '+' (stop at the first
    // operand): Ganeti runs hooks with no arguments at all (the operation is
    // in GANETI_* variables) and the hook takes no operands, so there is no
    // command line after ours to leave alone; an operand anywhere is a usage
    // error either way, and permuting lets "--help" or "--dry-run" work
    // wherever an operator typed them, as for memqosd.
    auto line =
        parse::parseCommandLine(std::vector<std::string>(argv + 1, argv + argc), kOptionSpecs);
    if (!line || !line->operands.empty()) {
        const std::string error =
            !line ? line.error().what : "unexpected argument '" + line->operands.front() + "'";
        std::fprintf(stderr, "%s: %s\n%s\n", kProgram, error.c_str(),
                     parse::helpHint(kProgram).c_str());
        return kExitUsage;
    }
    for (const auto& opt : line->options) {
        switch (opt.id) {
        case kOptHelp:
            std::fputs(kUsage, stdout);
            return kExitOk;
        case kOptVersion:
            std::printf("%s %s\n", kProgram, MEMQOS_VERSION);
            return kExitOk;
        case kOptConfig:
            o.config = opt.value;
            break;
        case kOptNoDropIns:
            o.dropIns = false;
            break;
        case kOptNodeName:
            o.nodeName = opt.value;
            break;
        case kOptBusAddress:
            o.busAddress = opt.value;
            break;
        case kOptEnvFile:
            o.envFile = opt.value;
            break;
        case kOptDryRun:
            o.dryRun = true;
            break;
        default:
            break;
        }
    }
    return std::nullopt;
}

} // namespace
} // namespace memqos::ganeti

int main(int argc, char** argv) {
    using namespace memqos;
    log::setIdentifier("memqos-ganeti-hook");
    log::setAlwaysJournal(true);
    ganeti::Options o;
    if (auto done = ganeti::parseArgs(argc, argv, o)) {
        return *done;
    }
    return ganeti::run(o);
}

// SPDX-License-Identifier: Apache-2.0
#include "check_config.hpp"

#include "memqos/config/values.hpp"
#include "memqos/core/model.hpp"
#include "memqos/core/oom_score.hpp"
#include "memqos/core/placement.hpp"
#include "memqos/core/pressure.hpp"
#include "memqos/core/tiers.hpp"
#include "memqos/io/config_loader.hpp"
#include "memqos/io/procfs.hpp"
#include "memqos/wording/bytes.hpp"

#include <algorithm>
#include <array>
#include <fnmatch.h>
#include <cstdio>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace memqos::daemon {
namespace {

// --check-config warns when the memory guard of a class would leave it less
// than this share of MemTotal on this host with nothing in the classes.
constexpr Permyriad kGuardCrampedBelow = 1000; // 10 %

std::string bytesOrMax(const Limit& l) {
    return l ? std::to_string(*l) : std::string("max");
}

// "4.0 GiB (4294967296)"
std::string readable(Bytes b) {
    return wording::formatBytes(b) + " (" + std::to_string(b) + ")";
}

// Where the value of [section] key came from: its file and line, or nothing
// for an embedded default.
std::optional<config::KeySource> sourceOf(const config::Validated& v, const std::string& section,
                                          const std::string& key) {
    auto it = v.sources.find({section, key});
    if (it == v.sources.end()) {
        return std::nullopt;
    }
    return it->second;
}

// "set in FILE:LINE", or "" for an embedded default.
std::string setIn(const config::Validated& v, const std::string& section, const std::string& key) {
    auto src = sourceOf(v, section, key);
    if (!src) {
        return {};
    }
    return "set in " + src->file + (src->line > 0 ? ":" + std::to_string(src->line) : "");
}

// "set in FILE:LINE", or "default".
std::string origin(const config::Validated& v, const std::string& section, const std::string& key) {
    std::string s = setIn(v, section, key);
    return s.empty() ? "default" : s;
}

// A host finding about [section] key (whose value prints as `value`), placed
// where that key was set.
config::ConfigProblem hostWarning(const config::Validated& v, const std::string& section,
                                  const std::string& key, std::string value, std::string reason) {
    config::ConfigProblem p;
    p.severity = config::Severity::Warning;
    if (auto src = sourceOf(v, section, key)) {
        p.file = src->file;
        p.line = src->line;
    }
    p.section = section;
    p.key = key;
    p.value = std::move(value);
    p.reason = std::move(reason);
    return p;
}

// --print's planning rows: what the configuration means on this host, from
// its MemTotal and SwapTotal, with the placement formulas memqosd uses
// (core/placement). Appends host findings (warnings) to `findings`.
void printPlan(const config::Validated& v, const parse::MemInfo& mem,
               const std::string& meminfoPath, std::ostream& out,
               std::vector<config::ConfigProblem>& findings) {
    const auto& oc = v.config.overcommit;
    const auto& pressure = v.config.pressure;
    auto row = [&](std::string label, std::string value, const std::string& note) {
        label.resize(std::max<std::size_t>(label.size(), 26), ' ');
        value.resize(std::max<std::size_t>(value.size(), 26), ' ');
        std::string text = "#   " + label + " " + value + " " + note;
        text.erase(text.find_last_not_of(' ') + 1);
        out << text << "\n";
    };
    const std::string ratio = config::formatRatio(oc.memoryRatio);

    core::PlacementInput in;
    in.memTotal = mem.memTotal;
    in.nodeReserve = oc.nodeReserved.resolve(mem.memTotal);
    in.memoryRatio = oc.memoryRatio;
    in.swapTotal = mem.swapTotal;
    const Bytes available = core::availableMemory(in);
    const Bytes capacity = core::vmCapacity(available, oc.memoryRatio);
    const Bytes failover = oc.failoverReserve.resolve(mem.memTotal);
    const Bytes swapNeeded = core::requiredSwap(available, oc.memoryRatio);

    out << "\n# Planning against this host's memory (" << meminfoPath << ")\n";
    row("MemTotal", readable(mem.memTotal), "");
    row("SwapTotal", readable(mem.swapTotal), "");
    row("NodeReserved=" + config::formatSizeSpec(oc.nodeReserved), readable(in.nodeReserve),
        origin(v, "Overcommit", "NodeReserved"));
    row("available", readable(available),
        "MemTotal − NodeReserved (the running daemon also subtracts the requests of the "
        "services it manages)");
    row("MemoryRatio=" + ratio, "", origin(v, "Overcommit", "MemoryRatio"));
    row("VM capacity", readable(capacity),
        "available × MemoryRatio: the most the VMs' limits (maxmem + VMOverhead) may add up to");
    row("FailoverReserve=" + config::formatSizeSpec(oc.failoverReserve), readable(failover),
        origin(v, "Overcommit", "FailoverReserve"));
    row("for instances", readable(capacity > failover ? capacity - failover : 0),
        "VM capacity − FailoverReserve: placements beyond it are soft violations");
    std::string swapNote = "(MemoryRatio − 1) × available";
    const bool swapShort = mem.swapTotal < swapNeeded;
    if (swapShort) {
        swapNote += "; SwapTotal is " + wording::formatBytes(swapNeeded - mem.swapTotal) + " short";
        switch (oc.swapCheck) {
        case config::SwapCheck::Refuse:
            swapNote += ": SwapCheck=refuse would refuse every VM placement";
            break;
        case config::SwapCheck::Warn:
            swapNote += ": SwapCheck=warn would add a warning to every VM placement";
            break;
        case config::SwapCheck::Off:
            swapNote += " (SwapCheck=off: not checked)";
            break;
        }
    }
    row("swap needed", readable(swapNeeded), swapNote);
    row("SwapCheck=" + std::string(config::formatSwapCheck(oc.swapCheck)), "",
        origin(v, "Overcommit", "SwapCheck"));

    // Percentages of MemTotal (or SwapTotal) in bytes.
    auto share = [&](Permyriad p, Bytes of) { return config::SizeSpec{0, p}.resolve(of); };
    for (std::size_t i = 0; i < pressure.levels.size(); ++i) {
        const std::string key = "Level" + std::to_string(i + 1) + "MemAvailable";
        const auto& t = pressure.levels[i].memAvailableBelow;
        row(key + "=" + config::formatOptionalPermyriad(t),
            t ? readable(share(*t, mem.memTotal)) : "off",
            "MemAvailable below it; " + origin(v, "Pressure", key));
    }
    row("GuardHeadroom=" + config::formatPermyriad(pressure.guardHeadroom),
        readable(share(pressure.guardHeadroom, mem.memTotal)),
        "of MemTotal; " + origin(v, "Pressure", "GuardHeadroom"));
    // The guard as it stands on this host now, with nothing in the classes:
    // the most a guarded class may use beside the host's own memory.
    core::Snapshot idle;
    idle.nodeReserved = in.nodeReserve;
    idle.system.mem = mem;
    for (const auto& cls : v.config.classes) {
        if (!cls.memoryGuard) {
            continue;
        }
        const core::GuardCap g =
            core::guardCap(idle, pressure, v.config.classes, cls.name, kDefaultPageSize);
        row("guard of " + cls.name, readable(g.cap),
            "MemTotal − max(NodeReserved, in use now " + readable(g.hostOwn) +
                ") − GuardHeadroom; other classes' requests and use come off it" +
                (g.floored ? " (at its floor, 2 % of MemTotal)" : ""));
        if (g.cap < share(kGuardCrampedBelow, mem.memTotal)) {
            findings.push_back(hostWarning(
                v, "Overcommit", "NodeReserved", config::formatSizeSpec(oc.nodeReserved),
                "leaves the memory guard of class " + cls.name + " " + readable(g.cap) +
                    " on this host (MemTotal " + readable(mem.memTotal) + ", in use now " +
                    readable(g.hostOwn) + ", GuardHeadroom " + readable(g.headroom) +
                    "): its workloads would be throttled there; set NodeReserved to what the "
                    "host's own services need, or lower GuardHeadroom"));
        }
    }
    row("SwapUsedKill=" + config::formatOptionalPermyriad(pressure.swapUsedKill),
        pressure.swapUsedKill ? readable(share(*pressure.swapUsedKill, mem.swapTotal)) : "off",
        "of SwapTotal; " + origin(v, "Pressure", "SwapUsedKill"));

    if (in.nodeReserve >= mem.memTotal) {
        findings.push_back(
            hostWarning(v, "Overcommit", "NodeReserved", config::formatSizeSpec(oc.nodeReserved),
                        "reserves " + readable(in.nodeReserve) +
                            ", at least this host's MemTotal " + readable(mem.memTotal) +
                            ": nothing is left for VMs, memqosd would refuse every VM placement"));
    }
    if (oc.swapCheck == config::SwapCheck::Refuse && swapShort) {
        findings.push_back(
            hostWarning(v, "Overcommit", "SwapCheck", "refuse",
                        "this host's SwapTotal " + readable(mem.swapTotal) + " is below the " +
                            readable(swapNeeded) + " that MemoryRatio=" + ratio +
                            " needs ((ratio − 1) × available " + readable(available) +
                            "): memqosd would refuse every VM placement"));
    }
}

void printTiers(const config::Config& cfg, const Options& options, Bytes memTotal,
                std::ostream& out, std::ostream& err) {
    auto request = config::parseSize(options.exampleRequest);
    auto limit = config::parseLimit(options.exampleLimit);
    if (!request || !limit) {
        err << "memqosd: --example-request/--example-limit: "
            << (!request ? request.error().what : limit.error().what) << "\n";
        return;
    }
    out << "\n# Tiers for an example workload: request " << *request << ", limit "
        << bytesOrMax(*limit) << ", MemTotal " << memTotal << "\n";
    char line[256];
    std::snprintf(line, sizeof line, "%-12s %-28s %12s %12s %12s %12s %10s %6s\n", "# CLASS",
                  "SLICE", "MEMORY.MIN", "MEMORY.LOW", "MEMORY.HIGH", "MEMORY.MAX", "SWAP.MAX",
                  "OOMADJ");
    out << line;
    for (const auto& cls : cfg.classes) {
        core::Workload w{.id = "example.service",
                         .kind = core::WorkloadKind::Service,
                         .className = cls.name,
                         .request = *request,
                         .limit = *limit,
                         .priority = 0};
        auto tiers = core::computeTiers(cls, w, memTotal, kDefaultPageSize);
        if (!tiers) {
            out << "# " << cls.name << ": " << tiers.error().what << "\n";
            continue;
        }
        // keep: memqos writes no oom_score_adj for the class, the processes
        // keep their own.
        const std::string oomAdj = cls.oomScoreAdj.keeps()
                                       ? std::string("keep")
                                       : std::to_string(core::oomScoreAdj(cls, *request, memTotal));
        std::snprintf(line, sizeof line, "%-12s %-28s %12llu %12llu %12s %12s %10s %6s\n",
                      ("# " + cls.name).c_str(), cls.slice().c_str(),
                      static_cast<unsigned long long>(tiers->memoryMin),
                      static_cast<unsigned long long>(tiers->memoryLow),
                      bytesOrMax(tiers->memoryHigh).c_str(), bytesOrMax(tiers->memoryMax).c_str(),
                      bytesOrMax(tiers->swapMax).c_str(), oomAdj.c_str());
        out << line;
    }
}

// A [Rule.*] glob that matches units no rule may adopt (core::ruleRefusal):
// memqosd skips them, and says so here once per rule, with an example.
void ruleWarnings(const config::Validated& v, std::vector<config::ConfigProblem>& findings) {
    static constexpr std::array<const char*, 12> kExamples{
        "memqosd.service",
        "init.scope",
        "dbus.service",
        "dbus-broker.service",
        "systemd-journald.service",
        "session-1.scope",
        "user@1000.service",
        "machine-qemu\\x2d1\\x2dweb.scope",
        "memqos-vm-web.example.com.scope",
        "system.slice",
        "machine.slice",
        "memqos-reclaimed.slice",
    };
    for (const auto& r : v.config.rules) {
        for (const char* unit : kExamples) {
            if (::fnmatch(r.match.c_str(), unit, 0) != 0) {
                continue;
            }
            const auto why = core::ruleRefusal(unit);
            if (!why) {
                continue;
            }
            config::ConfigProblem p;
            p.severity = config::Severity::Warning;
            p.section = "Rule." + r.name;
            p.key = "Match";
            p.value = r.match;
            if (const auto src = sourceOf(v, p.section, "Match")) {
                p.file = src->file;
                p.line = src->line;
            }
            p.reason = std::string("matches ") + unit + ", which no rule adopts (" +
                       std::string(*why) +
                       "); memqosd skips such units: narrow the glob to say what you mean";
            findings.push_back(std::move(p));
            break;
        }
    }
}

// "1 error, 2 warnings"
std::string counted(std::size_t n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

} // namespace

int runCheckConfig(const Options& options, std::ostream& out, std::ostream& err) {
    io::LoadOptions lo;
    if (options.configFile) {
        lo.mainFile = *options.configFile;
    }
    lo.dropIns = options.dropIns;
    lo.strict = true; // unknown sections and keys are errors here
    auto loaded = io::loadConfig(lo);
    const auto& validated = loaded.validated;
    std::vector<config::ConfigProblem> findings = validated.problems;
    ruleWarnings(validated, findings);

    if (options.print) {
        out << "# memqosd " << MEMQOS_VERSION << " effective configuration\n";
        for (const auto& f : loaded.files) {
            out << "# read " << f << "\n";
        }
        if (loaded.files.empty()) {
            out << "# no configuration file: embedded defaults\n";
        }
        out << "# (a key set by a file says where; the others are at their default)\n";
        out << config::renderConfig(validated.config,
                                    [&](const std::string& section, const std::string& key) {
                                        return setIn(validated, section, key);
                                    });
        const io::ProcFs proc(options.procRoot.value_or(validated.config.manager.procRoot));
        auto mem = proc.meminfo();
        if (mem) {
            printPlan(validated, *mem, (proc.root() / "meminfo").string(), out, findings);
            printTiers(validated.config, options, mem->memTotal, out, err);
        } else {
            err << "memqosd: cannot plan against this host: " << mem.error().what << "\n";
        }
    }

    // Errors fail the check, warnings never do (config::Severity).
    std::size_t errors = 0;
    for (const auto& p : findings) {
        err << p.diagnostic() << "\n";
        errors += p.severity == config::Severity::Error ? 1 : 0;
    }
    if (findings.empty()) {
        return kExitOk;
    }
    err << "memqosd: " << counted(errors, "error") << ", "
        << counted(findings.size() - errors, "warning") << ": the configuration is "
        << (errors > 0 ? "invalid" : "valid") << "\n";
    return errors > 0 ? kExitConfig : kExitOk;
}

} // namespace memqos::daemon

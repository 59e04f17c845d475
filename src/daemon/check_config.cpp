// SPDX-License-Identifier: Apache-2.0
#include "check_config.hpp"

#include "memqos/config/values.hpp"
#include "memqos/core/oom_score.hpp"
#include "memqos/core/tiers.hpp"
#include "memqos/io/config_loader.hpp"
#include "memqos/io/procfs.hpp"

#include <cstdio>
#include <ostream>
#include <string>

namespace memqos::daemon {
namespace {

std::string bytesOrMax(const Limit& l) { return l ? std::to_string(*l) : std::string("max"); }

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
        std::snprintf(line, sizeof line, "%-12s %-28s %12llu %12llu %12s %12s %10s %6d\n",
                      ("# " + cls.name).c_str(), cls.slice().c_str(),
                      static_cast<unsigned long long>(tiers->memoryMin),
                      static_cast<unsigned long long>(tiers->memoryLow),
                      bytesOrMax(tiers->memoryHigh).c_str(), bytesOrMax(tiers->memoryMax).c_str(),
                      bytesOrMax(tiers->swapMax).c_str(),
                      core::oomScoreAdj(cls, *request, memTotal));
        out << line;
    }
}

} // namespace

int runCheckConfig(const Options& options, std::ostream& out, std::ostream& err) {
    io::LoadOptions lo;
    if (options.configFile) {
        lo.mainFile = *options.configFile;
    }
    lo.dropIns = options.dropIns;
    auto loaded = io::loadConfig(lo);

    // Under --check-config every problem counts, warnings included: a typo
    // in a key name is an error an operator wants to hear about now.
    for (const auto& p : loaded.validated.problems) {
        err << p.format() << "\n";
    }
    const bool bad = !loaded.validated.problems.empty();
    if (options.print) {
        out << "# memqosd " << MEMQOS_VERSION << " effective configuration\n";
        for (const auto& f : loaded.files) {
            out << "# read " << f << "\n";
        }
        if (loaded.files.empty()) {
            out << "# no configuration file: embedded defaults\n";
        }
        out << config::renderConfig(loaded.validated.config);
        const std::string procRoot =
            options.procRoot.value_or(loaded.validated.config.manager.procRoot);
        auto mem = io::ProcFs(procRoot).meminfo();
        if (mem) {
            printTiers(loaded.validated.config, options, mem->memTotal, out, err);
        } else {
            err << "memqosd: cannot read MemTotal: " << mem.error().what << "\n";
        }
    }
    if (bad) {
        err << "memqosd: configuration has " << loaded.validated.problems.size()
            << " problem(s)\n";
        return kExitConfig;
    }
    return kExitOk;
}

} // namespace memqos::daemon

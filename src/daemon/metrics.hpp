// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Prometheus textfile ([Manager] MetricsFile=): what one tick knows, in
// the text exposition format node_exporter's textfile collector reads.

#include "memqos/core/snapshot.hpp"
#include "memqos/core/types.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace memqos::daemon {

struct ClassMetrics {
    std::string name;
    Bytes memoryCurrent = 0;
    Bytes memoryMin = 0;
    Bytes memoryLow = 0;
    std::optional<Bytes> memoryHigh; // nullopt: "max"
    std::optional<double> psiSomeAvg10;
    std::optional<double> psiFullAvg10;
};

struct Metrics {
    std::uint32_t pressureLevel = 0;
    bool admissionOpen = true;
    bool dryRun = false;
    Bytes memoryAvailable = 0;
    Bytes swapFree = 0;
    std::size_t workloads = 0;
    std::vector<ClassMetrics> classes;
    std::map<std::string, std::uint64_t> actions; // "reclaim", "cap", "admission"
    std::uint64_t kills = 0;
};

// One "# HELP", "# TYPE" and the samples per metric family; label values
// escaped as the format wants (\\, \", \n).
std::string formatMetrics(const Metrics& m);

} // namespace memqos::daemon

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Prometheus textfile ([Manager] MetricsFile=): what one tick knows, in
// the text exposition format node_exporter's textfile collector reads.

#include "memqos/core/snapshot.hpp"
#include "memqos/core/types.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
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

// How long the last ticks took (seconds of wall time, from the first read to
// the decision executed; writing the metrics file itself not included): a
// window of the last kWindow ticks for the quantiles, and sum and count since
// start, as a Prometheus summary.
class TickDurations {
public:
    static constexpr std::size_t kWindow = 1024;
    void add(double seconds);
    // The q-quantile (0 <= q <= 1, nearest rank) of the window; 0 when empty.
    double quantile(double q) const;
    std::uint64_t count() const { return count_; }
    double sum() const { return sum_; }

private:
    std::array<double, kWindow> ring_{};
    std::size_t next_ = 0;
    std::uint64_t count_ = 0;
    double sum_ = 0;
};

// What the metrics file says that a script may wait on: the Manager writes
// the file at the tick any of it (or an action count, proactive reclaim's
// steps excepted) changes; the rest (usage, reclaim totals, tick durations)
// waits for [Manager] MetricsInterval.
struct MetricsSignals {
    std::uint32_t pressureLevel = 0;
    // The pressure level, or the highest level above it whose entry
    // condition holds now (building up towards its Duration).
    std::uint32_t conditionLevel = 0;
    // 1 while a kill is near: the killable workloads are read every tick.
    bool killNear = false;
    bool admissionOpen = true;
    bool dryRun = false;
    std::size_t workloads = 0;
    std::uint64_t kills = 0;
    std::uint64_t triggeredTicks = 0; // ticks a PSI trigger started early
    bool operator==(const MetricsSignals&) const = default;
};

struct Metrics {
    MetricsSignals signals;
    Bytes memoryAvailable = 0;
    Bytes swapFree = 0;
    std::vector<ClassMetrics> classes;
    std::map<std::string, std::uint64_t> actions; // "reclaim", "cap", "admission"
    Bytes reclaimedAllocatable = 0;
    // Proactive reclaim per workload, in id order: bytes reclaimed since
    // memqosd started managing it, and its stall (percent) over the last
    // interval. The ids are views of the Manager's own (formatMetrics runs
    // before they can change).
    struct WorkloadReclaim {
        std::string_view id;
        Bytes reclaimed = 0;
        double stall = 0;
    };
    std::vector<WorkloadReclaim> reclaim;
    const TickDurations* ticks = nullptr; // none: no tick summary
    std::uint64_t lightTicks = 0; // Manager::lightTickCount()
};

// One "# HELP", "# TYPE" and the samples per metric family; label values
// escaped as the format wants (\\, \", \n).
std::string formatMetrics(const Metrics& m);

} // namespace memqos::daemon

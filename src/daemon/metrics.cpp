// SPDX-License-Identifier: Apache-2.0
#include "metrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <vector>

namespace memqos::daemon {
namespace {

// `v` as a label value, escaped as the format wants, appended to `out`.
void appendLabel(std::string& out, std::string_view v) {
    for (const char c : v) {
        if (c == '\\' || c == '"') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
}

std::string label(std::string_view v) {
    std::string out;
    appendLabel(out, v);
    return out;
}

// One per-workload sample, `name{workload="id"} value`, appended without
// temporaries (a thousand workloads make two thousand of them).
void appendWorkloadLine(std::string& out, std::string_view name, std::string_view id,
                        std::string_view value) {
    out.append(name);
    out.append("{workload=\"");
    appendLabel(out, id);
    out.append("\"} ");
    out.append(value);
    out += '\n';
}

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}

void family(std::string& out, const char* name, const char* type, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

std::string seconds(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6f", v);
    return buf;
}

} // namespace

void TickDurations::add(double seconds) {
    ring_[next_] = seconds;
    next_ = (next_ + 1) % kWindow;
    ++count_;
    sum_ += seconds;
}

double TickDurations::quantile(double q) const {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(count_, kWindow));
    if (n == 0) {
        return 0;
    }
    std::vector<double> v(ring_.begin(), ring_.begin() + static_cast<std::ptrdiff_t>(n));
    std::sort(v.begin(), v.end());
    const double clamped = std::clamp(q, 0.0, 1.0);
    // Nearest rank: the smallest value with at least q of the window at or below it.
    auto rank = static_cast<std::size_t>(std::ceil(clamped * static_cast<double>(n)));
    rank = std::clamp<std::size_t>(rank, 1, n);
    return v[rank - 1];
}

std::string formatMetrics(const Metrics& m) {
    std::string out;
    family(out, "memqos_pressure_level", "gauge", "Pressure level 0..3.");
    out += "memqos_pressure_level " + std::to_string(m.signals.pressureLevel) + "\n";
    family(out, "memqos_pressure_condition_level", "gauge",
           "The pressure level, or a higher level whose entry condition holds now (building up).");
    out += "memqos_pressure_condition_level " + std::to_string(m.signals.conditionLevel) + "\n";
    family(out, "memqos_kill_near", "gauge",
           "1 while a kill is near and the killable workloads are read every tick.");
    out += "memqos_kill_near " + std::string(m.signals.killNear ? "1" : "0") + "\n";
    family(out, "memqos_admission_open", "gauge", "1 while placements into killable classes are accepted.");
    out += "memqos_admission_open " + std::string(m.signals.admissionOpen ? "1" : "0") + "\n";
    family(out, "memqos_dry_run", "gauge", "1 when memqosd only logs what it would do.");
    out += "memqos_dry_run " + std::string(m.signals.dryRun ? "1" : "0") + "\n";
    family(out, "memqos_memory_available_bytes", "gauge", "MemAvailable at the last tick.");
    out += "memqos_memory_available_bytes " + std::to_string(m.memoryAvailable) + "\n";
    family(out, "memqos_swap_free_bytes", "gauge", "SwapFree at the last tick.");
    out += "memqos_swap_free_bytes " + std::to_string(m.swapFree) + "\n";
    family(out, "memqos_workloads", "gauge", "Workloads memqos manages.");
    out += "memqos_workloads " + std::to_string(m.signals.workloads) + "\n";

    const auto perClass = [&](const char* name, const char* help, auto value) {
        family(out, name, "gauge", help);
        for (const auto& c : m.classes) {
            if (auto v = value(c)) {
                out += std::string(name) + "{class=\"" + label(c.name) + "\"} " + *v + "\n";
            }
        }
    };
    using Opt = std::optional<std::string>;
    perClass("memqos_class_memory_current_bytes", "memory.current of the class slice.",
             [](const ClassMetrics& c) -> Opt { return std::to_string(c.memoryCurrent); });
    perClass("memqos_class_memory_min_bytes", "memory.min of the class slice.",
             [](const ClassMetrics& c) -> Opt { return std::to_string(c.memoryMin); });
    perClass("memqos_class_memory_low_bytes", "memory.low of the class slice.",
             [](const ClassMetrics& c) -> Opt { return std::to_string(c.memoryLow); });
    perClass("memqos_class_memory_high_bytes", "memory.high of the class slice (absent: max).",
             [](const ClassMetrics& c) -> Opt {
                 return c.memoryHigh ? Opt(std::to_string(*c.memoryHigh)) : std::nullopt;
             });
    perClass("memqos_class_psi_some_avg10", "PSI some avg10 (percent) of the class slice.",
             [](const ClassMetrics& c) -> Opt {
                 return c.psiSomeAvg10 ? Opt(number(*c.psiSomeAvg10)) : std::nullopt;
             });
    perClass("memqos_class_psi_full_avg10", "PSI full avg10 (percent) of the class slice.",
             [](const ClassMetrics& c) -> Opt {
                 return c.psiFullAvg10 ? Opt(number(*c.psiFullAvg10)) : std::nullopt;
             });
    family(out, "memqos_actions_total", "counter", "Pressure actions taken (not dry-run ones).");
    for (const auto& [action, n] : m.actions) {
        out += "memqos_actions_total{action=\"" + label(action) + "\"} " + std::to_string(n) + "\n";
    }
    family(out, "memqos_reclaimed_allocatable_bytes", "gauge",
           "Memory the lowest-ranked class may use now without touching the others.");
    out += "memqos_reclaimed_allocatable_bytes " + std::to_string(m.reclaimedAllocatable) + "\n";
    family(out, "memqos_workload_reclaimed_bytes_total", "counter",
           "Bytes proactive reclaim (and Reclaim calls) freed from the workload.");
    // The per-workload lines: ~70 bytes each, two a workload.
    out.reserve(out.size() + m.reclaim.size() * 160 + 2048);
    for (const auto& r : m.reclaim) {
        char buf[24];
        const auto end = std::to_chars(buf, buf + sizeof buf, r.reclaimed).ptr;
        appendWorkloadLine(out, "memqos_workload_reclaimed_bytes_total", r.id,
                           std::string_view(buf, static_cast<std::size_t>(end - buf)));
    }
    family(out, "memqos_workload_reclaim_stall_percent", "gauge",
           "The workload's memory stall over the reclaim controller's last interval.");
    for (const auto& r : m.reclaim) {
        // (number()'s few characters fit a string's own buffer: no allocation.)
        appendWorkloadLine(out, "memqos_workload_reclaim_stall_percent", r.id, number(r.stall));
    }
    family(out, "memqos_kills_total", "counter", "Workloads memqosd killed since it started.");
    out += "memqos_kills_total " + std::to_string(m.signals.kills) + "\n";
    family(out, "memqos_psi_triggered_ticks_total", "counter",
           "Ticks a PSI trigger started before their Interval since memqosd started.");
    out += "memqos_psi_triggered_ticks_total " + std::to_string(m.signals.triggeredTicks) + "\n";
    family(out, "memqos_light_ticks_total", "counter",
           "Ticks that took the last snapshot of the workloads (level 0, nothing building up, no "
           "workload changed) and left proactive reclaim's pass to a later tick, since memqosd "
           "started.");
    out += "memqos_light_ticks_total " + std::to_string(m.lightTicks) + "\n";
    if (m.ticks != nullptr) {
        family(out, "memqos_tick_duration_seconds", "summary",
               "Wall time of a tick (sampling, decision, actions, formatting this text), each in the "
               "next text; quantiles over the last 1024 ticks.");
        for (const char* q : {"0.5", "0.99", "1"}) {
            out += std::string("memqos_tick_duration_seconds{quantile=\"") + q + "\"} " +
                   seconds(m.ticks->quantile(std::stod(q))) + "\n";
        }
        out += "memqos_tick_duration_seconds_sum " + seconds(m.ticks->sum()) + "\n";
        out += "memqos_tick_duration_seconds_count " + std::to_string(m.ticks->count()) + "\n";
    }
    return out;
}

} // namespace memqos::daemon

// SPDX-License-Identifier: Apache-2.0
#include "top_view.hpp"

#include "memqos/io/bus_names.hpp"

#include <algorithm>
#include <string_view>
#include <utility>
#include <variant>

#include "bus_error.hpp"
#include "json_writer.hpp"
#include "reply.hpp"
#include "size.hpp"
#include "table.hpp"

namespace memqos::ctl {
namespace {

constexpr std::string_view kBold = "\x1b[1m";
constexpr std::string_view kPlain = "\x1b[0m";

// The header line of a rendered table in bold.
std::string boldHeader(std::string table, const TopStyle& style) {
    if (!style.bold || style.legend == Legend::Hide) {
        return table;
    }
    const auto eol = table.find('\n');
    if (eol == std::string::npos) {
        return table;
    }
    table.insert(eol, kPlain);
    table.insert(0, kBold);
    return table;
}

std::string percent(double value) {
    return formatDouble(value) + "%";
}

std::string summary(const ManagerStatus& s) {
    return "Pressure level: " + formatPressureLevel(s.pressureLevel) +
           "  PSI: some " + percent(s.memoryPressureSome) + " full " +
           percent(s.memoryPressureFull) +
           "  Admission: " + (s.admissionOpen ? "open" : "closed") +
           "  Dry run: " + (s.dryRun ? "yes" : "no") + "\n" +
           "Memory available: " + formatSize(s.memory.memAvailable) + " of " +
           formatSize(s.memory.memTotal) + "  Swap free: " + formatSize(s.memory.swapFree) +
           " of " + formatSize(s.memory.swapTotal) +
           "  Best-effort room: " + formatSize(s.reclaimedAllocatable) + "\n";
}

std::string classTable(const std::vector<ClassInfo>& classes, const TopStyle& style) {
    if (classes.empty()) {
        return style.legend == Legend::Show ? "No classes.\n" : "";
    }
    Table table({{"CLASS"},
                 {"RANK", Align::Right},
                 {"WORKLOADS", Align::Right},
                 {"MEMORY", Align::Right},
                 {"SWAP", Align::Right},
                 {"PSI", Align::Right}});
    for (const auto& c : classes) {
        table.addRow({c.name, std::to_string(c.rank), std::to_string(c.workloads.size()),
                      formatSize(c.memoryCurrent), formatSize(c.swapCurrent),
                      percent(c.memoryPressure)});
    }
    return boldHeader(table.render(style.legend), style);
}

std::string workloadTable(const std::vector<WorkloadInfo>& workloads, const TopStyle& style) {
    if (workloads.empty()) {
        return style.legend == Legend::Show ? "No workloads.\n" : "";
    }
    Table table({{"WORKLOAD"},
                 {"CLASS"},
                 {"MEMORY", Align::Right},
                 {"REQUEST", Align::Right},
                 {"HIGH", Align::Right},
                 {"LIMIT", Align::Right},
                 {"SWAP", Align::Right},
                 {"PSI", Align::Right},
                 {"RECLAIM"}});
    for (const auto& w : workloads) {
        table.addRow({w.id, w.className.empty() ? "(unplaced)" : w.className,
                      formatSize(w.memoryCurrent), formatSize(w.request), formatSize(w.memoryHigh),
                      formatSize(w.limit), formatSize(w.swapCurrent), percent(w.memoryPressure),
                      w.reclaimState.empty() ? "-" : w.reclaimState});
    }
    return boldHeader(table.render(style.legend), style);
}

std::string jsonFrame(const TopFrame& frame, Format format) {
    JsonWriter json(jsonStyle(format));
    json.beginObject();
    json.key("Manager").beginObject();
    writeStatusMembers(json, frame.status);
    json.endObject();
    json.key("Classes").beginArray();
    for (const auto& c : frame.classes) {
        writeClass(json, c);
    }
    json.endArray();
    json.key("Workloads").beginArray();
    for (const auto& w : frame.workloads) {
        writeWorkload(json, w);
    }
    json.endArray();
    json.endObject();
    return json.str() + "\n";
}

} // namespace

Result<TopFrame> topFrameFromReplies(const ValueArray& manager, const ValueArray& managed) {
    auto props = propertiesFromReply(manager);
    if (!props) {
        return props.error();
    }
    auto objects = managedObjectsFromReply(managed);
    if (!objects) {
        return objects.error();
    }
    TopFrame frame{{}, std::move(objects->classes), std::move(objects->workloads)};
    std::stable_sort(frame.classes.begin(), frame.classes.end(),
                     [](const auto& a, const auto& b) { return a.rank < b.rank; });
    std::stable_sort(frame.workloads.begin(), frame.workloads.end(),
                     [](const auto& a, const auto& b) { return a.id < b.id; });
    frame.status =
        managerStatusFromProperties(*props, frame.classes.size(), frame.workloads.size());
    return frame;
}

std::string fitToHeight(const std::string& frame, std::size_t rows) {
    if (rows == 0) {
        return frame;
    }
    const std::size_t keep = rows > 1 ? rows - 1 : 1;
    std::size_t lines = 0;
    std::size_t cut = std::string::npos; // end of line `keep - 1`
    for (std::size_t i = 0; i < frame.size(); ++i) {
        if (frame[i] == '\n') {
            ++lines;
            if (lines == keep - 1) {
                cut = i + 1;
            }
        }
    }
    if (lines <= keep) {
        return frame;
    }
    std::string out = keep > 1 ? frame.substr(0, cut) : std::string{};
    out += "(" + std::to_string(lines - keep + 1) + " more lines: a taller window shows them)\n";
    return out;
}

void sortTop(TopFrame& frame, TopOrder order) {
    auto byName = [](const WorkloadInfo& a, const WorkloadInfo& b) { return a.id < b.id; };
    auto& w = frame.workloads;
    auto& c = frame.classes;
    switch (order) {
    case TopOrder::Usage:
        std::stable_sort(w.begin(), w.end(), [&](const auto& a, const auto& b) {
            return a.memoryCurrent != b.memoryCurrent ? a.memoryCurrent > b.memoryCurrent
                                                      : byName(a, b);
        });
        std::stable_sort(c.begin(), c.end(), [](const auto& a, const auto& b) {
            return a.memoryCurrent > b.memoryCurrent;
        });
        return;
    case TopOrder::Pressure:
        std::stable_sort(w.begin(), w.end(), [&](const auto& a, const auto& b) {
            return a.memoryPressure != b.memoryPressure ? a.memoryPressure > b.memoryPressure
                                                        : byName(a, b);
        });
        std::stable_sort(c.begin(), c.end(), [](const auto& a, const auto& b) {
            return a.memoryPressure > b.memoryPressure;
        });
        return;
    case TopOrder::Swap:
        std::stable_sort(w.begin(), w.end(), [&](const auto& a, const auto& b) {
            return a.swapCurrent != b.swapCurrent ? a.swapCurrent > b.swapCurrent : byName(a, b);
        });
        std::stable_sort(c.begin(), c.end(), [](const auto& a, const auto& b) {
            return a.swapCurrent > b.swapCurrent;
        });
        return;
    case TopOrder::Name:
        std::stable_sort(w.begin(), w.end(), byName);
        std::stable_sort(c.begin(), c.end(),
                         [](const auto& a, const auto& b) { return a.name < b.name; });
        return;
    }
}

std::string renderTopFrame(const TopFrame& frame, const TopStyle& style) {
    if (isJson(style.format)) {
        return jsonFrame(frame, style.format);
    }
    return summary(frame.status) + "\n" + classTable(frame.classes, style) + "\n" +
           workloadTable(frame.workloads, style);
}

} // namespace memqos::ctl

// SPDX-License-Identifier: Apache-2.0
#include "render.hpp"

#include "memqos/io/bus_names.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <ctime>
#include <type_traits>

#include "command.hpp"
#include "json_writer.hpp"
#include "size.hpp"
#include "table.hpp"

namespace memqos::ctl {
namespace {

std::string yesNo(bool b) {
    return b ? "yes" : "no";
}

std::string withNewline(std::string s) {
    s += '\n';
    return s;
}

std::string_view levelName(std::uint64_t level) {
    return pressureLevelName(level > UINT32_MAX ? UINT32_MAX : static_cast<std::uint32_t>(level));
}

// Properties whose numbers are sizes in bytes, on any of the three interfaces.
bool isSizeProperty(std::string_view name) {
    static constexpr std::array<std::string_view, 14> kSizes{
        "MemoryTotal", "MemoryAvailable", "SwapTotal",     "SwapFree",   "NodeReserved",
        "Request",     "Limit",           "MemoryMin",     "MemoryLow",  "MemoryHigh",
        "MemoryMax",   "MemorySwapMax",   "MemoryCurrent", "SwapCurrent"};
    for (const auto s : kSizes) {
        if (s == name) {
            return true;
        }
    }
    return false;
}

// A property value for a monitor line, by the property's meaning.
std::string formatProperty(std::string_view name, const Value& value) {
    if (isSizeProperty(name)) {
        if (const auto* u = std::get_if<std::uint64_t>(&value.v)) {
            return formatSize(*u);
        }
    }
    if (name == "PressureLevel") {
        if (const auto* u = std::get_if<std::uint64_t>(&value.v)) {
            return formatPressureLevel(*u);
        }
    }
    return formatValue(value);
}

std::string formatNumbers(const std::vector<std::pair<std::string, std::uint64_t>>& numbers) {
    std::string out;
    for (const auto& [k, n] : numbers) {
        if (!out.empty()) {
            out += ' ';
        }
        out += k;
        out += '=';
        out += isPlainNumberKey(k) ? std::to_string(n) : formatSize(n);
    }
    return out;
}

std::string formatNumbers(const Value& numbers) {
    std::vector<std::pair<std::string, std::uint64_t>> plain;
    if (const auto* o = std::get_if<ValueObject>(&numbers.v)) {
        for (const auto& [k, v] : *o) {
            plain.emplace_back(k, v.asU64());
        }
    }
    return formatNumbers(plain);
}

void writeInstances(JsonWriter& json, const std::vector<Instance>& instances) {
    json.beginArray();
    for (const auto& i : instances) {
        json.beginObject();
        json.member("name", i.name);
        json.member("min_memory", i.minMemory);
        json.member("max_memory", i.maxMemory);
        json.member("up", i.up);
        json.endObject();
    }
    json.endArray();
}

std::string instanceTable(const std::vector<Instance>& instances, Legend legend) {
    if (instances.empty()) {
        return legend == Legend::Show ? "No instances.\n" : "";
    }
    Table table({{"NAME"}, {"MIN", Align::Right}, {"MAX", Align::Right}, {"STATE"}});
    for (const auto& i : instances) {
        table.addRow(
            {i.name, formatSize(i.minMemory), formatSize(i.maxMemory), i.up ? "up" : "down"});
    }
    return table.render(legend);
}

const Value& arg(const Event& event, std::string_view name) {
    static const Value kMissing{};
    for (const auto& [k, v] : event.args) {
        if (k == name) {
            return v;
        }
    }
    return kMissing;
}

} // namespace

std::string formatPressureLevel(std::uint64_t level) {
    return std::to_string(level) + " (" + std::string(levelName(level)) + ")";
}

bool isJson(Format format) {
    return format != Format::Text;
}

JsonStyle jsonStyle(Format format) {
    return format == Format::JsonShort ? JsonStyle::Compact : JsonStyle::Pretty;
}

bool isPlainNumberKey(std::string_view key) {
    for (const std::string_view marker :
         {"permille", "permyriad", "percent", "ratio", "count", "level", "pid", "score"}) {
        if (key.find(marker) != std::string_view::npos) {
            return true;
        }
    }
    return false;
}

std::string formatDouble(double d) {
    if (!std::isfinite(d)) {
        return std::isnan(d) ? "nan" : (d > 0 ? "inf" : "-inf");
    }
    std::array<char, 64> buf{};
    const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), d);
    if (ec != std::errc{}) {
        return "?";
    }
    return std::string(buf.data(), end);
}

void writeJsonValue(JsonWriter& json, const Value& value) {
    std::visit(
        [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::monostate>) {
                json.null();
            } else if constexpr (std::is_same_v<T, ValueArray>) {
                json.beginArray();
                for (const auto& e : v) {
                    writeJsonValue(json, e);
                }
                json.endArray();
            } else if constexpr (std::is_same_v<T, ValueObject>) {
                json.beginObject();
                for (const auto& [k, e] : v) {
                    json.key(k);
                    writeJsonValue(json, e);
                }
                json.endObject();
            } else {
                json.value(v);
            }
        },
        value.v);
}

std::string formatValue(const Value& value) {
    return std::visit(
        [](const auto& v) -> std::string {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::monostate>) {
                return "-";
            } else if constexpr (std::is_same_v<T, bool>) {
                return yesNo(v);
            } else if constexpr (std::is_same_v<T, double>) {
                return formatDouble(v);
            } else if constexpr (std::is_same_v<T, std::string>) {
                return v;
            } else if constexpr (std::is_same_v<T, ValueArray>) {
                std::string out = "[";
                for (std::size_t i = 0; i < v.size(); ++i) {
                    out += i == 0 ? "" : ", ";
                    out += formatValue(v[i]);
                }
                return out + "]";
            } else if constexpr (std::is_same_v<T, ValueObject>) {
                std::string out = "{";
                for (std::size_t i = 0; i < v.size(); ++i) {
                    out += i == 0 ? "" : ", ";
                    out += v[i].name + "=" + formatValue(v[i].value);
                }
                return out + "}";
            } else {
                return std::to_string(v);
            }
        },
        value.v);
}

void writeStatusMembers(JsonWriter& json, const ManagerStatus& s) {
    json.member("Version", s.version);
    json.member("MemoryTotal", s.memory.memTotal);
    json.member("MemoryAvailable", s.memory.memAvailable);
    json.member("SwapTotal", s.memory.swapTotal);
    json.member("SwapFree", s.memory.swapFree);
    json.member("NodeReserved", s.nodeReserved);
    json.member("MemoryRatio", s.memoryRatio);
    json.member("PressureLevel", s.pressureLevel);
    json.member("PressureLevelName", pressureLevelName(s.pressureLevel));
    json.member("AdmissionOpen", s.admissionOpen);
    json.member("DryRun", s.dryRun);
    json.member("ReclaimedAllocatable", s.reclaimedAllocatable);
    json.member("MemoryPressureSome", s.memoryPressureSome);
    json.member("MemoryPressureFull", s.memoryPressureFull);
    if (s.upInstancesMaxMemory) {
        json.member("UpInstancesMaxMemory", *s.upInstancesMaxMemory);
    }
    json.member("ClassCount", static_cast<std::uint64_t>(s.classCount));
    json.member("WorkloadCount", static_cast<std::uint64_t>(s.workloadCount));
}

std::string renderStatus(const ManagerStatus& s, Format format, Legend legend) {
    if (isJson(format)) {
        JsonWriter json(jsonStyle(format));
        json.beginObject();
        writeStatusMembers(json, s);
        if (s.instances) {
            json.key("instances");
            writeInstances(json, *s.instances);
        }
        json.endObject();
        return withNewline(json.str());
    }
    std::string out = renderKeyValues({
        {"Version", s.version},
        {"Memory total", formatSize(s.memory.memTotal)},
        {"Memory available", formatSize(s.memory.memAvailable)},
        {"Swap total", formatSize(s.memory.swapTotal)},
        {"Swap free", formatSize(s.memory.swapFree)},
        {"Node reserved", formatSize(s.nodeReserved)},
        {"Memory ratio", formatDouble(s.memoryRatio)},
        {"Pressure level", formatPressureLevel(s.pressureLevel)},
        {"Admission", s.admissionOpen ? "open" : "closed"},
        {"Dry run", yesNo(s.dryRun)},
        {"Best-effort room", formatSize(s.reclaimedAllocatable)},
        {"Classes", std::to_string(s.classCount)},
        {"Workloads", std::to_string(s.workloadCount)},
    });
    if (s.instances) {
        out += "\n";
        out += instanceTable(*s.instances, legend);
        if (!s.instances->empty() && s.upInstancesMaxMemory && legend == Legend::Show) {
            std::size_t up = 0;
            for (const auto& i : *s.instances) {
                up += i.up ? 1 : 0;
            }
            out += "Max memory of up instances: " + formatSize(*s.upInstancesMaxMemory) + " (" +
                   std::to_string(up) + " of " + std::to_string(s.instances->size()) + " up)\n";
        }
    }
    return out;
}

std::string renderReclaimed(const std::string& id, Bytes asked, Bytes freed, Format format) {
    if (isJson(format)) {
        JsonWriter json(jsonStyle(format));
        json.beginObject();
        json.member("Id", id);
        json.member("Asked", asked);
        json.member("Reclaimed", freed);
        json.endObject();
        return withNewline(json.str());
    }
    return "Reclaimed " + formatSize(freed) + " of " + formatSize(asked) + " from " + id + "\n";
}

std::string renderInstances(const std::vector<Instance>& instances, Format format, Legend legend) {
    if (isJson(format)) {
        JsonWriter json(jsonStyle(format));
        writeInstances(json, instances);
        return withNewline(json.str());
    }
    return instanceTable(instances, legend);
}

void writeClass(JsonWriter& json, const ClassInfo& c) {
    json.beginObject();
    json.member("Name", c.name);
    json.member("Rank", c.rank);
    json.member("Protection", c.protection);
    json.member("ThrottlingFactor", c.throttlingFactor);
    json.member("Killable", c.killable);
    json.member("Slice", c.slice);
    json.key("Workloads").beginArray();
    for (const auto& w : c.workloads) {
        json.value(w);
    }
    json.endArray();
    json.member("MemoryCurrent", c.memoryCurrent);
    json.member("SwapCurrent", c.swapCurrent);
    json.member("MemoryPressure", c.memoryPressure);
    json.member("ObjectPath", c.objectPath);
    json.endObject();
}

std::string renderClasses(const std::vector<ClassInfo>& classes, Format format, Legend legend) {
    if (isJson(format)) {
        JsonWriter json(jsonStyle(format));
        json.beginArray();
        for (const auto& c : classes) {
            writeClass(json, c);
        }
        json.endArray();
        return withNewline(json.str());
    }
    if (classes.empty()) {
        return legend == Legend::Show ? "No classes.\n" : "";
    }
    Table table({{"NAME"},
                 {"RANK", Align::Right},
                 {"PROTECTION"},
                 {"THROTTLE", Align::Right},
                 {"KILLABLE"},
                 {"SLICE"},
                 {"WORKLOADS", Align::Right},
                 {"MEMORY", Align::Right}});
    for (const auto& c : classes) {
        table.addRow({c.name, std::to_string(c.rank), c.protection.empty() ? "-" : c.protection,
                      c.throttlingFactor == 0.0 ? "off" : formatDouble(c.throttlingFactor),
                      yesNo(c.killable), c.slice.empty() ? "-" : c.slice,
                      std::to_string(c.workloads.size()), formatSize(c.memoryCurrent)});
    }
    return table.render(legend);
}

void writeWorkload(JsonWriter& json, const WorkloadInfo& w) {
    json.beginObject();
    json.member("Id", w.id);
    json.member("Kind", w.kind);
    json.member("Class", w.className);
    json.member("Unit", w.unit);
    json.member("Request", w.request);
    json.member("Limit", w.limit);
    json.member("MemoryMin", w.memoryMin);
    json.member("MemoryLow", w.memoryLow);
    json.member("MemoryHigh", w.memoryHigh);
    json.member("MemoryMax", w.memoryMax);
    json.member("MemorySwapMax", w.memorySwapMax);
    json.member("MemoryCurrent", w.memoryCurrent);
    json.member("SwapCurrent", w.swapCurrent);
    json.member("MemoryPressure", w.memoryPressure);
    json.member("Persistent", w.persistent);
    json.member("ReclaimedBytes", w.reclaimedBytes);
    json.member("ReclaimStall", w.reclaimStall);
    json.member("ReclaimState", w.reclaimState);
    json.member("ObjectPath", w.objectPath);
    json.endObject();
}

std::string renderWorkloads(const std::vector<WorkloadInfo>& workloads, Format format,
                            Legend legend) {
    if (isJson(format)) {
        JsonWriter json(jsonStyle(format));
        json.beginArray();
        for (const auto& w : workloads) {
            writeWorkload(json, w);
        }
        json.endArray();
        return withNewline(json.str());
    }
    if (workloads.empty()) {
        return legend == Legend::Show ? "No workloads.\n" : "";
    }
    Table table({{"ID"},
                 {"KIND"},
                 {"CLASS"},
                 {"REQUEST", Align::Right},
                 {"LIMIT", Align::Right},
                 {"MIN", Align::Right},
                 {"LOW", Align::Right},
                 {"HIGH", Align::Right},
                 {"MAX", Align::Right},
                 {"SWAPMAX", Align::Right},
                 {"CURRENT", Align::Right},
                 {"PERSIST"},
                 {"RECLAIMED", Align::Right},
                 {"RECLAIM"}});
    for (const auto& w : workloads) {
        // A VM nothing placed has no class: memqos only observes it.
        table.addRow({w.id, w.kind, w.className.empty() ? "(unplaced)" : w.className,
                      formatSize(w.request), formatSize(w.limit), formatSize(w.memoryMin),
                      formatSize(w.memoryLow), formatSize(w.memoryHigh), formatSize(w.memoryMax),
                      formatSize(w.memorySwapMax), formatSize(w.memoryCurrent), yesNo(w.persistent),
                      formatSize(w.reclaimedBytes), w.reclaimState.empty() ? "-" : w.reclaimState});
    }
    return table.render(legend);
}

std::string renderPlacement(const PlacementVerdict& p, Format format, Legend legend) {
    if (isJson(format)) {
        JsonWriter json(jsonStyle(format));
        json.beginObject();
        json.member("verdict", p.verdict);
        json.member("message", p.message);
        json.key("numbers").beginObject();
        for (const auto& [k, n] : p.numbers) {
            json.member(k, n);
        }
        json.endObject();
        json.endObject();
        return withNewline(json.str());
    }
    std::string out = renderKeyValues({{"Verdict", p.verdict}, {"Message", p.message}});
    if (!p.numbers.empty()) {
        Table table({{"NUMBER"}, {"VALUE", Align::Right}, {"BYTES", Align::Right}});
        for (const auto& [k, n] : p.numbers) {
            const bool plain = isPlainNumberKey(k);
            table.addRow(
                {k, plain ? std::to_string(n) : formatSize(n), plain ? "" : std::to_string(n)});
        }
        out += "\n";
        out += table.render(legend);
    }
    return out;
}

std::string renderFindings(const std::vector<Finding>& findings, Format format, Legend legend) {
    if (isJson(format)) {
        JsonWriter json(jsonStyle(format));
        json.beginArray();
        for (const auto& f : findings) {
            json.beginObject();
            json.member("severity", f.severity);
            json.member("code", f.code);
            json.member("message", f.message);
            json.endObject();
        }
        json.endArray();
        return withNewline(json.str());
    }
    if (findings.empty()) {
        return legend == Legend::Show ? "No findings.\n" : "";
    }
    Table table({{"SEVERITY"}, {"CODE"}, {"MESSAGE"}});
    for (const auto& f : findings) {
        table.addRow({f.severity, f.code, f.message});
    }
    return table.render(legend);
}

std::string renderWorkloadPath(std::string_view path, Format format) {
    if (isJson(format)) {
        JsonWriter json(jsonStyle(format));
        json.beginObject().member("workload", path).endObject();
        return withNewline(json.str());
    }
    return withNewline(std::string(path));
}

std::string renderNothing(Format format) {
    return isJson(format) ? "{}\n" : "";
}

namespace {

// One string a line, or {"KEY": [...]} with --json.
std::string renderStrings(std::string_view key, const std::vector<std::string>& strings,
                          Format format) {
    if (isJson(format)) {
        JsonWriter json(jsonStyle(format));
        json.beginObject().key(key).beginArray();
        for (const auto& s : strings) {
            json.value(s);
        }
        json.endArray().endObject();
        return withNewline(json.str());
    }
    std::string out;
    for (const auto& s : strings) {
        out += s + "\n";
    }
    return out;
}

} // namespace

std::string renderReload(const std::vector<std::string>& restartNeeded, Format format) {
    return renderStrings("restart_needed", restartNeeded, format);
}

std::string renderReleased(const std::vector<std::string>& ids, Format format) {
    return renderStrings("released", ids, format);
}

std::string renderEvent(const Event& event, Format format) {
    if (isJson(format)) {
        JsonWriter json(JsonStyle::Compact);
        json.beginObject();
        json.member("timestamp", event.timestamp);
        json.member("event", event.kind);
        for (const auto& [k, v] : event.args) {
            json.key(k);
            writeJsonValue(json, v);
            if (event.kind == "PressureLevelChanged" && k == "level") {
                json.member("level_name", levelName(v.asU64()));
            }
        }
        json.endObject();
        return withNewline(json.str());
    }

    std::string line = event.timestamp + " " + event.kind;
    if (event.kind == "PressureLevelChanged") {
        line += " level=" + formatPressureLevel(arg(event, "level").asU64());
        line += ": " + arg(event, "reason").asString();
    } else if (event.kind == "WorkloadKilled") {
        line += " id=" + arg(event, "id").asString() + " class=" + arg(event, "class").asString();
        line += ": " + arg(event, "reason").asString();
        const std::string numbers = formatNumbers(arg(event, "numbers"));
        if (!numbers.empty()) {
            line += " (" + numbers + ")";
        }
    } else if (event.kind == "PropertiesChanged") {
        if (const std::string iface = arg(event, "interface").asString();
            !iface.empty() && iface != io::bus_names::kManagerInterface) {
            line += " " + iface + ":";
        }
        if (const auto* changed = std::get_if<ValueObject>(&arg(event, "changed").v)) {
            for (const auto& [k, v] : *changed) {
                line += " " + k + "=" + formatProperty(k, v);
            }
        }
        if (const auto* gone = std::get_if<ValueArray>(&arg(event, "invalidated").v)) {
            for (const auto& name : *gone) {
                line += " " + name.asString() + "=?";
            }
        }
    } else if (event.kind == "NameOwnerChanged") {
        const std::string owner = arg(event, "new_owner").asString();
        line += owner.empty() ? ": memqosd left the bus" : ": memqosd is on the bus as " + owner;
    } else {
        for (const auto& [k, v] : event.args) {
            line += " " + k + "=" + formatValue(v);
        }
    }
    return withNewline(line);
}

int placementExitCode(const PlacementVerdict& verdict) {
    if (verdict.verdict == "fits" || verdict.verdict == "soft") {
        return kExitOk;
    }
    if (verdict.verdict == "hard") {
        return kExitVerifyFailed;
    }
    return kExitDaemonError;
}

int verifyExitCode(const std::vector<Finding>& findings) {
    for (const auto& f : findings) {
        if (f.severity == "error") {
            return kExitVerifyFailed;
        }
    }
    return kExitOk;
}

namespace {
std::string localTime(std::uint64_t usec) {
    const auto secs = static_cast<std::time_t>(usec / 1000000U);
    std::tm tm{};
    if (::localtime_r(&secs, &tm) == nullptr) {
        return std::to_string(usec);
    }
    std::array<char, 40> buf{};
    const std::size_t n = std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%S%z", &tm);
    return std::string(buf.data(), n);
}
} // namespace

std::string renderKills(const std::vector<KillInfo>& kills, Format format, Legend legend) {
    if (isJson(format)) {
        JsonWriter json(jsonStyle(format));
        json.beginArray();
        for (const auto& k : kills) {
            json.beginObject();
            json.member("time_usec", k.timeUsec);
            json.member("time", localTime(k.timeUsec));
            json.member("id", k.id);
            json.member("class", k.className);
            json.member("reason", k.reason);
            json.key("numbers");
            json.beginObject();
            for (const auto& [key, value] : k.numbers) {
                json.member(key, value);
            }
            json.endObject();
            json.endObject();
        }
        json.endArray();
        return withNewline(json.str());
    }
    if (kills.empty()) {
        return legend == Legend::Show ? "No kills recorded.\n" : "";
    }
    Table table({{"TIME"}, {"WORKLOAD"}, {"CLASS"}, {"REASON"}});
    for (const auto& k : kills) {
        table.addRow({localTime(k.timeUsec), k.id, k.className, k.reason});
    }
    return table.render(legend);
}

} // namespace memqos::ctl

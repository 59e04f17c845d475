// SPDX-License-Identifier: Apache-2.0
#include "show.hpp"

#include <ctime>
#include <limits>
#include <type_traits>
#include <variant>

#include "json_writer.hpp"
#include "size.hpp"
#include "table.hpp"

namespace memqos::ctl {
namespace {

std::string withNewline(std::string s) {
    s += '\n';
    return s;
}

// Opens an object with the properties as members; the caller closes it.
void openProperties(JsonWriter& json, const PropertyMap& props) {
    json.beginObject();
    for (const auto& [name, value] : props) {
        json.key(name);
        writeJsonValue(json, value);
    }
}

std::string size(const PropertyMap& props, std::string_view name, Bytes fallback = 0) {
    return formatSize(property(props, name).asU64(fallback));
}

std::string percent(double d) {
    return formatDouble(d) + "%";
}

} // namespace

std::string showValue(const Value& value) {
    return std::visit(
        [&](const auto& v) -> std::string {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::monostate>) {
                return "";
            } else if constexpr (std::is_same_v<T, bool>) {
                return v ? "yes" : "no";
            } else if constexpr (std::is_same_v<T, std::uint64_t>) {
                return v == std::numeric_limits<std::uint64_t>::max() ? "infinity"
                                                                        : std::to_string(v);
            } else if constexpr (std::is_same_v<T, std::int64_t>) {
                return std::to_string(v);
            } else if constexpr (std::is_same_v<T, double>) {
                return formatDouble(v);
            } else if constexpr (std::is_same_v<T, std::string>) {
                return v;
            } else if constexpr (std::is_same_v<T, ValueArray>) {
                std::string out;
                for (const auto& e : v) {
                    out += out.empty() ? "" : " ";
                    out += std::holds_alternative<std::string>(e.v) ? e.asString()
                                                                     : formatValue(e);
                }
                return out;
            } else {
                return formatValue(value);
            }
        },
        value.v);
}

std::string renderShow(const PropertyMap& props, const std::vector<std::string>& only,
                       bool valueOnly, Format format) {
    std::vector<std::pair<std::string_view, const Value*>> shown;
    if (only.empty()) {
        for (const auto& [name, value] : props) {
            shown.emplace_back(name, &value);
        }
    } else {
        for (const auto& name : only) {
            if (auto it = props.find(name); it != props.end()) {
                shown.emplace_back(it->first, &it->second);
            }
        }
    }
    if (isJson(format)) {
        JsonWriter json(jsonStyle(format));
        json.beginObject();
        for (const auto& [name, value] : shown) {
            json.key(name);
            writeJsonValue(json, *value);
        }
        json.endObject();
        return withNewline(json.str());
    }
    std::string out;
    for (const auto& [name, value] : shown) {
        if (!valueOnly) {
            out += name;
            out += '=';
        }
        out += showValue(*value);
        out += '\n';
    }
    return out;
}

std::string formatJournalLine(const JournalLine& line) {
    const auto seconds = static_cast<std::time_t>(line.realtimeUsec / 1000000);
    std::tm tm{};
    char stamp[32] = "";
    if (localtime_r(&seconds, &tm) != nullptr) {
        std::strftime(stamp, sizeof stamp, "%b %d %H:%M:%S", &tm);
    }
    std::string out = stamp;
    out += ' ';
    out += line.identifier.empty() ? "memqosd" : line.identifier;
    if (!line.pid.empty()) {
        out += "[" + line.pid + "]";
    }
    out += ": ";
    out += line.message;
    return out;
}

std::string renderWorkloadStatus(const PropertyMap& w, std::string_view objectPath,
                                 const std::optional<PropertyMap>& classProps,
                                 const JournalTail& journal, Format format) {
    if (isJson(format)) {
        JsonWriter json(jsonStyle(format));
        json.beginObject();
        json.key("Workload");
        openProperties(json, w);
        json.member("ObjectPath", objectPath);
        json.endObject();
        json.key("Class");
        if (classProps) {
            openProperties(json, *classProps);
            json.endObject();
        } else {
            json.null();
        }
        json.key("Journal");
        json.beginArray();
        for (const auto& l : journal.lines) {
            json.beginObject();
            json.member("time_usec", l.realtimeUsec);
            json.member("identifier", l.identifier);
            json.member("pid", l.pid);
            json.member("message", l.message);
            json.endObject();
        }
        json.endArray();
        if (!journal.note.empty()) {
            json.member("JournalNote", journal.note);
        }
        json.endObject();
        return withNewline(json.str());
    }

    const std::string id = property(w, "Id").asString();
    const std::string kind = property(w, "Kind").asString();
    const std::string className = property(w, "Class").asString();
    std::string out = id + " - " + (kind.empty() ? "workload" : kind) + " managed by memqos\n";

    std::vector<std::pair<std::string, std::string>> kv;
    std::string cls = className.empty() ? "(unplaced)" : className;
    if (classProps) {
        cls += " (rank " + std::to_string(property(*classProps, "Rank").asU64()) +
               ", protection " + property(*classProps, "Protection").asString() + ", " +
               (property(*classProps, "Killable").asBool() ? "killable" : "not killable") + ")";
    }
    kv.emplace_back("Class", cls);
    std::string source = property(w, "Source").asString();
    source += source.empty() ? "" : ", ";
    source += property(w, "Persistent").asBool() ? "persistent" : "until reboot";
    kv.emplace_back("Source", source);
    const std::string unit = property(w, "Unit").asString();
    kv.emplace_back("Unit", unit.empty() ? "-" : unit);
    kv.emplace_back("Request", size(w, "Request"));
    kv.emplace_back("Limit", size(w, "Limit", kNoLimit));
    kv.emplace_back("Tiers", "min " + size(w, "MemoryMin") + ", low " + size(w, "MemoryLow") +
                                 ", high " + size(w, "MemoryHigh", kNoLimit) + ", max " +
                                 size(w, "MemoryMax", kNoLimit) + ", swap max " +
                                 size(w, "MemorySwapMax", kNoLimit));
    kv.emplace_back("Memory", size(w, "MemoryCurrent") + " (swap " + size(w, "SwapCurrent") + ")");
    kv.emplace_back("PSI", percent(property(w, "MemoryPressure").asDouble()) +
                               " (memory.pressure some avg10)");
    const std::string state = property(w, "ReclaimState").asString();
    kv.emplace_back("Reclaim", (state.empty() ? "-" : state) + ", " +
                                   size(w, "ReclaimedBytes") + " reclaimed, stall " +
                                   percent(property(w, "ReclaimStall").asDouble()));
    if (kind == "vm") {
        const Bytes actual = property(w, "BalloonActual").asU64();
        const Bytes target = property(w, "BalloonTarget").asU64();
        kv.emplace_back("Balloon",
                        std::string("actual ") + (actual == 0 ? "unknown" : formatSize(actual)) +
                            ", target " +
                            (target == 0 ? "not moved by memqos" : formatSize(target)));
    }
    out += renderKeyValues(kv);
    out += '\n';
    if (journal.lines.empty()) {
        out += journal.note + "\n";
    } else {
        for (const auto& l : journal.lines) {
            out += formatJournalLine(l);
            out += '\n';
        }
    }
    return out;
}

} // namespace memqos::ctl

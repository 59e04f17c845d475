// SPDX-License-Identifier: Apache-2.0
#include "memqos/core/model.hpp"

#include <algorithm>
#include <array>

#include <array>
#include <cstddef>
#include <string>

namespace memqos::core {

std::string_view toString(WorkloadKind k) {
    switch (k) {
    case WorkloadKind::Service:
        return "service";
    case WorkloadKind::Scope:
        return "scope";
    case WorkloadKind::Vm:
        return "vm";
    }
    return "unknown";
}

std::string_view toString(Protection p) {
    switch (p) {
    case Protection::Min:
        return "min";
    case Protection::Low:
        return "low";
    case Protection::None:
        return "none";
    }
    return "unknown";
}

std::string ClassPolicy::slice() const {
    return "memqos-" + name + ".slice";
}

std::vector<ClassPolicy> defaultClasses() {
    return {
        ClassPolicy{.name = "system",
                    .rank = 3,
                    .protection = Protection::Min,
                    .throttlingFactor = std::nullopt,
                    .killable = false,
                    .swap = false,
                    .oomScoreAdj = -999,
                    .reclaim = false,
                    .memoryGuard = false},
        ClassPolicy{.name = "dedicated",
                    .rank = 2,
                    .protection = Protection::Min,
                    .throttlingFactor = std::nullopt,
                    .killable = false,
                    .swap = false,
                    .oomScoreAdj = -997,
                    .reclaim = false,
                    .memoryGuard = false},
        ClassPolicy{.name = "shared",
                    .rank = 1,
                    .protection = Protection::Low,
                    .throttlingFactor = 9000,
                    .killable = true,
                    .swap = true,
                    .oomScoreAdj = OomScoreAdjust::burstable(),
                    .reclaim = true,
                    .memoryGuard = false},
        ClassPolicy{.name = "reclaimed",
                    .rank = 0,
                    .protection = Protection::None,
                    .throttlingFactor = std::nullopt,
                    .killable = true,
                    .swap = true,
                    .oomScoreAdj = 1000,
                    .reclaim = true,
                    .memoryGuard = true},
    };
}

std::optional<std::string_view> ruleRefusal(std::string_view unit) {
    if (!unit.ends_with(".service") && !unit.ends_with(".scope")) {
        return "only services and scopes are adopted by a rule";
    }
    if (unit.ends_with(".scope") &&
        (unit.starts_with("machine-") || unit.starts_with("memqos-vm-"))) {
        return "a VM's scope is managed as its VM, vm:NAME, never as a unit";
    }
    constexpr std::array<std::string_view, 4> kHost{"memqosd.service", "init.scope",
                                                    "dbus.service", "dbus-broker.service"};
    if (std::find(kHost.begin(), kHost.end(), unit) != kHost.end() ||
        unit.starts_with("systemd-") || unit.starts_with("session-") ||
        unit.starts_with("user@") || unit.starts_with("user-runtime-dir@")) {
        return "the host needs it: memqosd, PID 1, D-Bus, systemd-*, user sessions";
    }
    return std::nullopt;
}

const ClassPolicy* findClass(const std::vector<ClassPolicy>& classes, std::string_view name) {
    for (const auto& c : classes) {
        if (c.name == name) {
            return &c;
        }
    }
    return nullptr;
}

namespace {

constexpr std::string_view kServiceSuffix = ".service";
constexpr std::string_view kScopeSuffix = ".scope";
constexpr std::string_view kVmPrefix = "vm:";
constexpr std::size_t kMaxIdLength =
    255; // systemd UNIT_NAME_MAX - 1; libvirt has no limit, we pick the same

bool hasNonEmptyPrefixBefore(std::string_view id, std::string_view suffix) {
    return id.size() > suffix.size() && id.ends_with(suffix);
}

bool isHex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool isUnitChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ':' ||
           c == '_' || c == '.' || c == '-' || c == '@';
}

bool isControl(unsigned char c) {
    return c < 0x20 || c == 0x7f;
}

// Quoted for an error message: the id may come from a D-Bus caller, so
// control bytes are escaped and very long ids shortened.
std::string quoted(std::string_view id) {
    constexpr std::size_t kShown = 64;
    constexpr std::array<char, 16> kHexDigits{'0', '1', '2', '3', '4', '5', '6', '7',
                                              '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};
    std::string out = "\"";
    for (std::size_t i = 0; i < id.size() && i < kShown; ++i) {
        const auto c = static_cast<unsigned char>(id[i]);
        if (isControl(c) || c == '"') {
            out += "\\x";
            out += kHexDigits[c >> 4U];
            out += kHexDigits[c & 0xfU];
        } else {
            out += id[i];
        }
    }
    if (id.size() > kShown) {
        out += "...";
    }
    out += '"';
    return out;
}

Error idError(std::string_view id, std::string_view why) {
    return invalid("workload id " + quoted(id) + ": " + std::string(why));
}

Status validateVmName(std::string_view id) {
    const std::string_view name = id.substr(kVmPrefix.size());
    if (name.empty()) {
        return idError(id, "empty domain name after \"vm:\"");
    }
    if (name.size() > kMaxIdLength) {
        return idError(id,
                       "domain name longer than 255 bytes (" + std::to_string(name.size()) + ")");
    }
    for (std::size_t i = 0; i < name.size(); ++i) {
        const auto c = static_cast<unsigned char>(name[i]);
        if (c == '/') {
            return idError(id, "'/' at position " + std::to_string(i) + " of the domain name");
        }
        if (isControl(c)) {
            return idError(id, "control character at position " + std::to_string(i) +
                                   " of the domain name");
        }
    }
    return okStatus();
}

Status validateUnitName(std::string_view id) {
    if (id.size() > kMaxIdLength) {
        return idError(id, "unit name longer than 255 bytes (" + std::to_string(id.size()) + ")");
    }
    std::string_view suffix;
    if (id.ends_with(kServiceSuffix)) {
        suffix = kServiceSuffix;
    } else if (id.ends_with(kScopeSuffix)) {
        suffix = kScopeSuffix;
    } else {
        return idError(id,
                       "not a unit name ending in \".service\" or \".scope\" nor \"vm:<domain>\"");
    }
    if (id.size() == suffix.size()) {
        return idError(id, "empty unit name before \"" + std::string(suffix) + "\"");
    }
    if (id.front() == '-' || id.front() == '.') {
        return idError(id, std::string("unit name starts with '") + id.front() + "'");
    }
    if (id.find("..") != std::string_view::npos) {
        return idError(id, "unit name contains \"..\"");
    }
    std::size_t ats = 0;
    for (std::size_t i = 0; i < id.size(); ++i) {
        const char c = id[i];
        if (c == '/') {
            return idError(id,
                           "'/' at position " + std::to_string(i) + " (a unit name is not a path)");
        }
        if (c == '\\') {
            // systemd escapes everything else as "\xNN" (systemd-escape).
            if (i + 3 >= id.size() || id[i + 1] != 'x' || !isHex(id[i + 2]) || !isHex(id[i + 3])) {
                return idError(id, "backslash at position " + std::to_string(i) +
                                       " is not a \"\\xNN\" escape");
            }
            i += 3;
            continue;
        }
        if (!isUnitChar(c)) {
            const auto u = static_cast<unsigned char>(c);
            const std::string shown =
                isControl(u) || u >= 0x80 ? std::string("a byte") : "'" + std::string(1, c) + "'";
            return idError(
                id,
                shown + " at position " + std::to_string(i) +
                    " is not allowed in a unit name (allowed: A-Z a-z 0-9 : _ . - @ and \\xNN)");
        }
        if (c == '@') {
            ++ats;
        }
    }
    if (ats > 0) {
        const std::size_t at = id.find('@');
        if (ats > 1) {
            return idError(id, "more than one '@' in a unit name");
        }
        if (at == 0) {
            return idError(id, "unit name starts with '@'");
        }
        if (at + 1 == id.size() - suffix.size()) {
            return idError(
                id, "a template unit (nothing between '@' and the suffix), not a unit instance");
        }
    }
    return okStatus();
}

} // namespace

std::optional<WorkloadKind> kindFromId(std::string_view id) {
    if (id.starts_with(kVmPrefix)) {
        return id.size() > kVmPrefix.size() ? std::optional(WorkloadKind::Vm) : std::nullopt;
    }
    if (hasNonEmptyPrefixBefore(id, kServiceSuffix)) {
        return WorkloadKind::Service;
    }
    if (hasNonEmptyPrefixBefore(id, kScopeSuffix)) {
        return WorkloadKind::Scope;
    }
    return std::nullopt;
}

Status validateWorkloadId(std::string_view id) {
    if (id.empty()) {
        return invalid("workload id is empty");
    }
    if (id.starts_with(kVmPrefix)) {
        return validateVmName(id);
    }
    return validateUnitName(id);
}

} // namespace memqos::core

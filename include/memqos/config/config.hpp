// SPDX-License-Identifier: Apache-2.0
#pragma once
// The typed configuration and its table-driven validator (pure: no files).
// io/config_loader reads INI files with inih into ConfigEntry lists; this
// header turns them into a Config, reporting every problem with file,
// [Section] Key=value and why.

#include "memqos/core/model.hpp"
#include "memqos/core/placement.hpp"
#include "memqos/core/pressure_config.hpp"
#include "memqos/core/proactive.hpp"
#include "memqos/core/types.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memqos::config {

// A size that may be absolute ("512M") or a share of MemTotal ("10%").
struct SizeSpec {
    Bytes bytes = 0;
    std::optional<Permyriad> percent; // set: bytes is ignored
    // bytes, or percent/10000 of memTotal (rounded down).
    Bytes resolve(Bytes memTotal) const;
    bool operator==(const SizeSpec&) const = default;
};

struct ManagerConfig {
    Usec interval = std::chrono::seconds(1);
    bool dryRun = false;
    std::string cgroupRoot = "/sys/fs/cgroup";
    std::string procRoot = "/proc";
    std::string stateDirectory = "/var/lib/memqos";
    // Prometheus textfile; "" = off. Written at a tick where the level,
    // admission, a counter or the workload count changed, else at least
    // every metricsInterval.
    std::string metricsFile;
    Usec metricsInterval = std::chrono::seconds(10);
    bool operator==(const ManagerConfig&) const = default;
};

using SwapCheck = core::SwapCheck;

struct OvercommitConfig {
    double memoryRatio = 1.0;                         // Ganeti memory-ratio, ≥ 1.0
    SizeSpec nodeReserved{1024 * kMiB, std::nullopt}; // Ganeti mem_node
    SizeSpec failoverReserve{0, std::nullopt};
    SwapCheck swapCheck = SwapCheck::Warn; // swap < (ratio−1)·available
    Bytes vmOverhead = 0;                  // added to a VM's limit
    bool operator==(const OvercommitConfig&) const = default;
};

using ReclaimConfig = core::ReclaimConfig; // [Reclaim]: see core/proactive.hpp

// [Ganeti]: the Ganeti hooks (memqos-ganeti-hook) read these; memqosd
// uses only Balloon.
enum class WhenUnreachable { Allow, Refuse };
struct GanetiConfig {
    Usec hookTimeout = std::chrono::seconds(10); // the hook's own D-Bus call limit
    WhenUnreachable whenUnreachable = WhenUnreachable::Allow;
    bool refuseSoft = false;
    // memqosd: move Ganeti KVM instances' balloons under pressure (HMP).
    bool balloon = true;
    std::string nodeName; // "" = this host's name (gethostname, canonical)
    bool operator==(const GanetiConfig&) const = default;
};

// [VM]: libvirt domains and Ganeti KVM instances as workloads.
struct VmConfig {
    std::string libvirtUri = "qemu:///system"; // "" = no libvirt
    // The class of a VM that no metadata, rule, Ganeti tag or AssignWorkload
    // places; "" (DefaultClass= or DefaultClass=none): no class, such a VM
    // is observed only (listed, counted; never limited, reclaimed,
    // re-prioritised, ballooned or killed).
    std::string defaultClass;
    Bytes limitOverhead = 256 * kMiB;           // added to a VM's memory for its limit
    bool operator==(const VmConfig&) const = default;
};

// [Rule.<name>] Match=glob, Class=, Request=, Limit=, Priority=
struct WorkloadRule {
    std::string name;
    std::string match; // glob over a unit name or "vm:<domain>"
    std::string className;
    Bytes request = 0;
    Limit limit;
    std::int32_t priority = 0;
    bool operator==(const WorkloadRule&) const = default;
};

struct Config {
    ManagerConfig manager;
    OvercommitConfig overcommit;
    core::PressureConfig pressure;
    ReclaimConfig reclaim;
    GanetiConfig ganeti;
    VmConfig vm;
    std::vector<core::ClassPolicy> classes = core::defaultClasses();
    std::vector<WorkloadRule> rules;

    // Field by field, including the core members (which have no operator==
    // of their own yet).
    friend bool operator==(const Config& a, const Config& b);
};

// One "key=value" as read from a file, in file order.
struct ConfigEntry {
    std::string file;
    std::string section;
    std::string key;
    std::string value;
    int line = 0;        // 1-based line of the key in `file`; 0 = unknown
    int sectionLine = 0; // line of its "[section]" header; 0 = none or unknown
    bool operator==(const ConfigEntry&) const = default;
};

// What a finding means, the same at start-up and under --check-config: an
// Error stops memqosd from starting (exit 78; a reload keeps the old
// configuration) and fails --check-config (exit 78); a Warning is logged,
// never stops anything and never fails --check-config. --check-config
// (ValidateOptions::strict) raises what start-up would skip — an unknown
// section or key, a key outside a section — to an Error, so a typo cannot
// pass the check and silently leave a default in force.
enum class Severity { Warning, Error };

// "error" / "warning"
std::string_view toString(Severity severity);

struct ConfigProblem {
    Severity severity = Severity::Error;
    std::string file; // empty for problems of the embedded defaults
    int line = 0;     // 1-based line in file (of the key, else of its section), 0 = none
    std::string section;
    std::string key;
    std::string value;
    std::string reason;
    // "FILE:LINE: [Section] Key=value: reason". Parts that are empty are left
    // out: "FILE:LINE: [Section]: reason", "FILE: reason" (no line),
    // "[Section] Key=value: reason" without a file.
    std::string format() const;
    // As --check-config prints it, with the severity after the place, as
    // compilers do: "FILE:LINE: error: [Section] Key=value: reason",
    // "warning: [VM] DefaultClass=x: reason" without a file.
    std::string diagnostic() const;
};

// Where a key's value came from: the last file (and line) that set it.
struct KeySource {
    std::string file;
    int line = 0;
};

struct Validated {
    Config config;
    std::vector<ConfigProblem> problems;
    // Every key a file set to a good value, by {section, key} ("Overcommit",
    // "MemoryRatio"; "Class.shared", "Rank"); keys not here have their
    // embedded default (or, for a new class, that of the least protected
    // tier).
    std::map<std::pair<std::string, std::string>, KeySource> sources;
    bool hasErrors() const;
};

struct ValidateOptions {
    // --check-config: unknown sections and keys, and keys outside a
    // section, are Errors instead of Warnings, and the reasons say what the
    // daemon would do ("would be ignored") instead of what it does
    // ("ignoring").
    bool strict = false;
};

// Starts from the embedded defaults and applies entries in order (later
// wins). Unknown sections and keys are Warnings (callers that want them to be
// errors — --check-config — say so) with a suggestion when a known name is
// close ("did you mean 'StallTarget'?"); bad values are Errors and leave the
// default in place. Cross-field checks run last.
//
// Sections: [Manager] [Overcommit] [Pressure] [Reclaim] [Ganeti] [VM],
// [Class.<name>] (modifies a class, or adds one: a new class must set Rank=) and
// [Rule.<name>] (Match= and Class= required). Keys are case-sensitive.
Validated validateConfig(const std::vector<ConfigEntry>& entries,
                         const ValidateOptions& options = {});

// The effective configuration as INI text, every key, in conf/memqosd.conf's
// order; validateConfig(<entries of renderConfig(c)>).config == c.
std::string renderConfig(const Config& config);
// The same, with a comment line "# NOTE" before each key for which
// note(section, key) returns a non-empty NOTE (section "Class.shared" for a
// class's keys): still the same configuration when read back.
using KeyNote = std::function<std::string(const std::string& section, const std::string& key)>;
std::string renderConfig(const Config& config, const KeyNote& note);

// Every key the validator knows, in conf/memqosd.conf's order. Per-class and
// per-rule keys are listed once with section "Class.<name>" / "Rule.<name>".
struct KeyInfo {
    std::string section;
    std::string key;
};
std::vector<KeyInfo> knownKeys();

} // namespace memqos::config

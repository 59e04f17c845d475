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
#include <optional>
#include <string>
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
    // Prometheus textfile written every tick; "" = off.
    std::string metricsFile;
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
    std::string defaultClass = "shared";       // VMs no metadata, rule or tag places
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
    bool operator==(const ConfigEntry&) const = default;
};

enum class Severity { Warning, Error };

struct ConfigProblem {
    Severity severity = Severity::Error;
    std::string file; // empty for problems of the embedded defaults
    int line = 0;     // 1-based line in file, 0 = unknown (inih gives none per key)
    std::string section;
    std::string key;
    std::string value;
    std::string reason;
    // "FILE: [Section] Key=value: reason". Parts that are empty are left
    // out: "FILE: [Section]: reason", "FILE: reason", "FILE:LINE: reason"
    // when line is set, "[Section] Key=value: reason" without a file.
    std::string format() const;
};

struct Validated {
    Config config;
    std::vector<ConfigProblem> problems;
    bool hasErrors() const;
};

struct ValidateOptions {
    // Unknown sections and keys are Errors instead of Warnings
    // (memqosd --check-config).
    bool strict = false;
};

// Starts from the embedded defaults and applies entries in order (later
// wins). Unknown sections and keys are Warnings (callers that want them to be
// errors — --check-config — say so); bad values are Errors and leave the
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

// Every key the validator knows, in conf/memqosd.conf's order. Per-class and
// per-rule keys are listed once with section "Class.<name>" / "Rule.<name>".
struct KeyInfo {
    std::string section;
    std::string key;
};
std::vector<KeyInfo> knownKeys();

} // namespace memqos::config

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The typed configuration and its table-driven validator (pure: no files).
// io/config_loader reads INI files with inih into ConfigEntry lists; this
// header turns them into a Config, reporting every problem with file,
// [Section] Key=value and why.

#include "memqos/core/model.hpp"
#include "memqos/core/pressure_config.hpp"
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
    Bytes resolve(Bytes memTotal) const;
};

struct ManagerConfig {
    Usec interval = std::chrono::seconds(1);
    bool dryRun = false;
    std::string cgroupRoot = "/sys/fs/cgroup";
    std::string procRoot = "/proc";
    std::string stateDirectory = "/var/lib/memqos";
};

enum class SwapCheck { Off, Warn, Refuse };

struct OvercommitConfig {
    double memoryRatio = 1.0;                          // Ganeti memory-ratio, ≥ 1.0
    SizeSpec nodeReserved{1024 * kMiB, std::nullopt};  // Ganeti mem_node
    SizeSpec failoverReserve{0, std::nullopt};
    SwapCheck swapCheck = SwapCheck::Warn;             // swap < (ratio−1)·available
    Bytes vmOverhead = 0;                              // added to a VM's limit
};

struct ReclaimConfig {
    bool enabled = true;
    Usec interval = std::chrono::seconds(10);
    double stallTarget = 0.1;  // percent of the interval spent stalled
    Permyriad maxStep = 100;   // at most 1 % of usage per step
};

// [Rule.<name>] Match=glob, Class=, Request=, Limit=, Priority=
struct WorkloadRule {
    std::string name;
    std::string match;   // glob over a unit name or "vm:<domain>"
    std::string className;
    Bytes request = 0;
    Limit limit;
    std::int32_t priority = 0;
};

struct Config {
    ManagerConfig manager;
    OvercommitConfig overcommit;
    core::PressureConfig pressure;
    ReclaimConfig reclaim;
    std::vector<core::ClassPolicy> classes = core::defaultClasses();
    std::vector<WorkloadRule> rules;
};

// One "key=value" as read from a file, in file order.
struct ConfigEntry {
    std::string file;
    std::string section;
    std::string key;
    std::string value;
};

enum class Severity { Warning, Error };

struct ConfigProblem {
    Severity severity = Severity::Error;
    std::string file;    // may be empty for cross-field checks
    std::string section;
    std::string key;
    std::string value;
    std::string reason;
    // "FILE: [Section] Key=value: reason" (or "FILE: [Section]: reason")
    std::string format() const;
};

struct Validated {
    Config config;
    std::vector<ConfigProblem> problems;
    bool hasErrors() const;
};

// Starts from the embedded defaults and applies entries in order (later
// wins). Unknown sections and keys are Warnings (callers that want them to be
// errors — --check-config — say so); bad values are Errors and leave the
// default in place. Cross-field checks run last.
Validated validateConfig(const std::vector<ConfigEntry>& entries);

// The effective configuration as INI text, every key, in conf/memqosd.conf's order.
std::string renderConfig(const Config& config);

} // namespace memqos::config

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Plain data that memqosctl reads from the org.memqos1 API, and the pure
// mapping from D-Bus property dictionaries to it. No sd-bus here: the bus
// client turns every reply into a Value tree first, so everything after that
// is testable with literals.

#include "memqos/core/kernel.hpp"
#include "memqos/core/placement.hpp"
#include "memqos/core/types.hpp"
#include "memqos/wording/placement.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace memqos::ctl {

// Any D-Bus value. Integers keep their signedness (y q u t → unsigned, n i x →
// signed); o and g are strings; a struct is an Array; a{..} is an Object with
// keys in wire order (basic-type keys are converted to strings).
struct Value;
struct ValueMember; // {name, value}, defined below
using ValueArray = std::vector<Value>;
// Not std::pair<std::string, Value>: std::pair cannot be instantiated with
// the still-incomplete Value inside Value's own variant (clang rejects it).
using ValueObject = std::vector<ValueMember>;
struct Value {
    std::variant<std::monostate, bool, std::int64_t, std::uint64_t, double, std::string, ValueArray,
                 ValueObject>
        v;

    // Lenient accessors: a value of another type gives the fallback, so a
    // daemon that is newer or older than us degrades to zeros, not errors.
    std::uint64_t asU64(std::uint64_t fallback = 0) const;
    double asDouble(double fallback = 0.0) const;
    bool asBool(bool fallback = false) const;
    std::string asString() const;
    std::size_t size() const; // elements of an array/object, else 0
};

struct ValueMember {
    std::string name;
    Value value;
};

// Properties of one object (GetAll): name → value.
using PropertyMap = std::map<std::string, Value, std::less<>>;

const Value& property(const PropertyMap& props, std::string_view name);

// Pressure ladder level names, as in the Manager's PressureLevel doc.
std::string_view pressureLevelName(std::uint32_t level);

// What memqosd serves is held in the types it is made from: an entry of the
// instance record (ListInstances: a Ganeti instance's minmem/maxmem in bytes
// and whether it is up) in core's, a finding of Verify (severity, code,
// message) in the wording layer's, as the daemon words it.
using Finding = wording::FindingText;
using core::Instance;

// One entry of the kill history (ListKills).
struct KillInfo {
    std::uint64_t timeUsec = 0; // since the epoch
    std::string id;
    std::string className;
    std::string reason;
    std::vector<std::pair<std::string, std::uint64_t>> numbers;
};

struct ManagerStatus {
    std::string version;
    core::MemInfo memory; // MemoryTotal, MemoryAvailable, SwapTotal, SwapFree; the rest 0
    Bytes nodeReserved = 0;
    double memoryRatio = 0.0;
    std::uint32_t pressureLevel = 0;
    bool admissionOpen = false;
    bool dryRun = false;
    Bytes reclaimedAllocatable = 0;
    double memoryPressureSome = 0.0; // /proc/pressure/memory avg10, percent
    double memoryPressureFull = 0.0;
    std::size_t classCount = 0;
    std::size_t workloadCount = 0;
    // Σ max_memory of the up instances (UpInstancesMaxMemory); nullopt from a
    // memqosd without the property.
    std::optional<Bytes> upInstancesMaxMemory = std::nullopt;
    // The instance record; nullopt when memqosd has no ListInstances (older).
    std::optional<std::vector<Instance>> instances;
};

struct ClassInfo {
    std::string objectPath;
    std::string name;
    std::uint32_t rank = 0;
    std::string protection;
    double throttlingFactor = 0.0;
    bool killable = false;
    std::string slice;
    std::vector<std::string> workloads; // object paths
    Bytes memoryCurrent = 0;
    Bytes swapCurrent = 0;
    double memoryPressure = 0.0; // the slice's PSI "some" avg10, percent
};

struct WorkloadInfo {
    std::string objectPath;
    std::string id;
    std::string kind;
    std::string className;
    std::string unit;
    Bytes request = 0;
    Bytes limit = kNoLimit;
    Bytes memoryMin = 0;
    Bytes memoryLow = 0;
    Bytes memoryHigh = kNoLimit;
    Bytes memoryMax = kNoLimit;
    Bytes memorySwapMax = kNoLimit;
    Bytes memoryCurrent = 0;
    Bytes swapCurrent = 0;
    double memoryPressure = 0.0; // its cgroup's PSI "some" avg10, percent
    bool persistent = false;
    // Proactive reclaim (0 / "" from a memqosd without it).
    Bytes reclaimedBytes = 0;
    double reclaimStall = 0;
    std::string reclaimState;
};

struct PlacementVerdict {
    std::string verdict; // "fits" | "soft" | "hard"
    std::string message;
    std::vector<std::pair<std::string, std::uint64_t>> numbers; // as the daemon sent them
};

// One monitor event. `kind` is the signal's member name; `args` are its
// arguments by their XML names (PropertiesChanged: "interface", "changed",
// "invalidated"; NameOwnerChanged for org.memqos1: "owner", empty when the
// daemon went away).
struct Event {
    std::string timestamp; // ISO 8601 local time, milliseconds
    std::string kind;
    ValueObject args;
};

ManagerStatus managerStatusFromProperties(const PropertyMap& props, std::size_t classCount,
                                          std::size_t workloadCount);
ClassInfo classFromProperties(std::string objectPath, const PropertyMap& props);
WorkloadInfo workloadFromProperties(std::string objectPath, const PropertyMap& props);

} // namespace memqos::ctl

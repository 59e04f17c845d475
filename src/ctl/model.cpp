// SPDX-License-Identifier: Apache-2.0
#include "model.hpp"

#include <limits>

namespace memqos::ctl {

std::uint64_t Value::asU64(std::uint64_t fallback) const {
    if (const auto* u = std::get_if<std::uint64_t>(&v)) {
        return *u;
    }
    if (const auto* i = std::get_if<std::int64_t>(&v)) {
        return *i >= 0 ? static_cast<std::uint64_t>(*i) : fallback;
    }
    return fallback;
}

double Value::asDouble(double fallback) const {
    if (const auto* d = std::get_if<double>(&v)) {
        return *d;
    }
    if (const auto* u = std::get_if<std::uint64_t>(&v)) {
        return static_cast<double>(*u);
    }
    if (const auto* i = std::get_if<std::int64_t>(&v)) {
        return static_cast<double>(*i);
    }
    return fallback;
}

bool Value::asBool(bool fallback) const {
    if (const auto* b = std::get_if<bool>(&v)) {
        return *b;
    }
    return fallback;
}

std::string Value::asString() const {
    if (const auto* s = std::get_if<std::string>(&v)) {
        return *s;
    }
    return {};
}

std::size_t Value::size() const {
    if (const auto* a = std::get_if<ValueArray>(&v)) {
        return a->size();
    }
    if (const auto* o = std::get_if<ValueObject>(&v)) {
        return o->size();
    }
    return 0;
}

const Value& property(const PropertyMap& props, std::string_view name) {
    static const Value kMissing{};
    const auto it = props.find(name);
    return it == props.end() ? kMissing : it->second;
}

std::string_view pressureLevelName(std::uint32_t level) {
    switch (level) {
    case 0:
        return "normal";
    case 1:
        return "admission-closed";
    case 2:
        return "throttle";
    case 3:
        return "kill";
    default:
        return "unknown";
    }
}

namespace {

std::uint32_t asU32(const Value& v) {
    const std::uint64_t u = v.asU64();
    return u > std::numeric_limits<std::uint32_t>::max() ? std::numeric_limits<std::uint32_t>::max()
                                                         : static_cast<std::uint32_t>(u);
}

// nullopt when the property is missing (an older memqosd) or not a number.
std::optional<std::uint64_t> optionalU64(const Value& v) {
    if (std::holds_alternative<std::uint64_t>(v.v) || std::holds_alternative<std::int64_t>(v.v)) {
        return v.asU64();
    }
    return std::nullopt;
}

} // namespace

ManagerStatus managerStatusFromProperties(const PropertyMap& props, std::size_t classCount,
                                          std::size_t workloadCount) {
    return ManagerStatus{
        .version = property(props, "Version").asString(),
        .memory = {.memTotal = property(props, "MemoryTotal").asU64(),
                   .memAvailable = property(props, "MemoryAvailable").asU64(),
                   .swapTotal = property(props, "SwapTotal").asU64(),
                   .swapFree = property(props, "SwapFree").asU64()},
        .nodeReserved = property(props, "NodeReserved").asU64(),
        .memoryRatio = property(props, "MemoryRatio").asDouble(),
        .pressureLevel = asU32(property(props, "PressureLevel")),
        .admissionOpen = property(props, "AdmissionOpen").asBool(),
        .dryRun = property(props, "DryRun").asBool(),
        .reclaimedAllocatable = property(props, "ReclaimedAllocatable").asU64(),
        .memoryPressureSome = property(props, "MemoryPressureSome").asDouble(),
        .memoryPressureFull = property(props, "MemoryPressureFull").asDouble(),
        .classCount = classCount,
        .workloadCount = workloadCount,
        .upInstancesMaxMemory = optionalU64(property(props, "UpInstancesMaxMemory")),
        .instances = std::nullopt,
    };
}

ClassInfo classFromProperties(std::string objectPath, const PropertyMap& props) {
    ClassInfo c{
        .objectPath = std::move(objectPath),
        .name = property(props, "Name").asString(),
        .rank = asU32(property(props, "Rank")),
        .protection = property(props, "Protection").asString(),
        .throttlingFactor = property(props, "ThrottlingFactor").asDouble(),
        .killable = property(props, "Killable").asBool(),
        .slice = property(props, "Slice").asString(),
        .workloads = {},
        .memoryCurrent = property(props, "MemoryCurrent").asU64(),
        .swapCurrent = property(props, "SwapCurrent").asU64(),
        .memoryPressure = property(props, "MemoryPressure").asDouble(),
    };
    if (const auto* paths = std::get_if<ValueArray>(&property(props, "Workloads").v)) {
        for (const auto& p : *paths) {
            c.workloads.push_back(p.asString());
        }
    }
    return c;
}

WorkloadInfo workloadFromProperties(std::string objectPath, const PropertyMap& props) {
    return WorkloadInfo{
        .objectPath = std::move(objectPath),
        .id = property(props, "Id").asString(),
        .kind = property(props, "Kind").asString(),
        .className = property(props, "Class").asString(),
        .unit = property(props, "Unit").asString(),
        .request = property(props, "Request").asU64(),
        .limit = property(props, "Limit").asU64(kNoLimit),
        .memoryMin = property(props, "MemoryMin").asU64(),
        .memoryLow = property(props, "MemoryLow").asU64(),
        .memoryHigh = property(props, "MemoryHigh").asU64(kNoLimit),
        .memoryMax = property(props, "MemoryMax").asU64(kNoLimit),
        .memorySwapMax = property(props, "MemorySwapMax").asU64(kNoLimit),
        .memoryCurrent = property(props, "MemoryCurrent").asU64(),
        .swapCurrent = property(props, "SwapCurrent").asU64(),
        .memoryPressure = property(props, "MemoryPressure").asDouble(),
        .persistent = property(props, "Persistent").asBool(),
        .reclaimedBytes = property(props, "ReclaimedBytes").asU64(),
        .reclaimStall = property(props, "ReclaimStall").asDouble(),
        .reclaimState = property(props, "ReclaimState").asString(),
    };
}

} // namespace memqos::ctl

// SPDX-License-Identifier: Apache-2.0
#include "memqos/core/psi_triggers.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace memqos::core {
namespace {

// threshold % of the window, within [kPsiMinStallUs, window − 1].
std::uint64_t stallUs(double percent) {
    constexpr std::uint64_t kMaxStallUs = kPsiWindowUs - 1;
    if (!(percent > 0.0)) { // also NaN
        return kPsiMinStallUs;
    }
    if (percent >= 100.0) {
        return kMaxStallUs;
    }
    const auto us = static_cast<std::uint64_t>(
        std::llround(percent / 100.0 * static_cast<double>(kPsiWindowUs)));
    return std::clamp(us, kPsiMinStallUs, kMaxStallUs);
}

std::optional<double> lowest(const PressureConfig& config,
                             std::optional<double> LevelThresholds::*field) {
    std::optional<double> out;
    for (const auto& level : config.levels) {
        const auto& t = level.*field;
        if (t && (!out || *t < *out)) {
            out = t;
        }
    }
    return out;
}

} // namespace

std::vector<TriggerSpec> psiTriggers(const PressureConfig& config) {
    std::vector<TriggerSpec> out;
    if (const auto some = lowest(config, &LevelThresholds::someAvg10)) {
        out.push_back(TriggerSpec{"some", stallUs(*some), kPsiWindowUs});
    }
    if (const auto full = lowest(config, &LevelThresholds::fullAvg10)) {
        out.push_back(TriggerSpec{"full", stallUs(*full), kPsiWindowUs});
    }
    return out;
}

std::string triggerLine(const TriggerSpec& spec) {
    return spec.kind + " " + std::to_string(spec.stallUs) + " " + std::to_string(spec.windowUs);
}

} // namespace memqos::core

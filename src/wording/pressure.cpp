// SPDX-License-Identifier: Apache-2.0
#include "memqos/wording/pressure.hpp"

#include "memqos/wording/bytes.hpp"

#include <type_traits>

#include "text.hpp"

namespace memqos::wording {

using detail::U128;

namespace {

// MemAvailable/MemTotal, floored, in permyriad.
std::uint64_t availablePermyriad(Bytes memAvailable, Bytes memTotal) {
    return memTotal == 0
               ? 0
               : static_cast<std::uint64_t>(U128{memAvailable} * kPermyriadOne / memTotal);
}

std::string memAvailableText(const core::MemAvailableSignal& m, bool withBytes) {
    std::string text = "MemAvailable " +
                       detail::permyriadText(availablePermyriad(m.memAvailable, m.memTotal)) +
                       " ≤ " + detail::permyriadText(m.threshold);
    if (withBytes) {
        text += " (" + formatBytes(m.memAvailable) + " of " + formatBytes(m.memTotal) + ")";
    }
    return text;
}

std::string signalsText(const std::vector<core::PressureSignal>& signals) {
    std::string text;
    for (const auto& s : signals) {
        text += (text.empty() ? "" : "; ") + describe(s);
    }
    return text;
}

} // namespace

std::string describe(const core::PressureSignal& signal) {
    return std::visit(
        [](const auto& s) -> std::string {
            using T = std::decay_t<decltype(s)>;
            if constexpr (std::is_same_v<T, core::PsiSignal>) {
                return std::string(s.full ? "full" : "some") + " avg10 " +
                       detail::percentText(s.avg10) + " ≥ " + detail::percentText(s.threshold);
            } else if constexpr (std::is_same_v<T, core::MemAvailableSignal>) {
                return memAvailableText(s, true);
            } else if constexpr (std::is_same_v<T, core::WatermarkSignal>) {
                return "zone " + s.zone + " (node " + std::to_string(s.node) + ") free " +
                       formatBytes(s.free) + " < " + (s.min ? "min" : "low") + " watermark " +
                       formatBytes(s.watermark);
            } else {
                const std::uint64_t used =
                    s.swapTotal == 0
                        ? 0
                        : static_cast<std::uint64_t>(U128{s.used} * kPermyriadOne / s.swapTotal);
                return "swap used " + detail::permyriadText(used) + " ≥ " +
                       detail::permyriadText(s.threshold) + " (" + formatBytes(s.used) + " of " +
                       formatBytes(s.swapTotal) + ") with " +
                       memAvailableText(s.memAvailable, false);
            }
        },
        signal);
}

std::string describe(const core::Readings& r) {
    std::string text;
    if (r.someAvg10) {
        text = "some avg10 " + detail::percentText(*r.someAvg10);
        if (r.fullAvg10) {
            text += ", full avg10 " + detail::percentText(*r.fullAvg10);
        }
    }
    if (r.memTotal > 0) {
        text += (text.empty() ? "" : ", ") + std::string("MemAvailable ") +
                detail::permyriadText(availablePermyriad(r.memAvailable, r.memTotal));
    }
    return text.empty() ? "no readings" : text;
}

std::string describe(const core::LevelReason& reason) {
    return std::visit(
        [](const auto& r) -> std::string {
            using T = std::decay_t<decltype(r)>;
            if constexpr (std::is_same_v<T, core::LevelRose>) {
                return signalsText(r.signals) + " for " + detail::durationText(r.duration) +
                       (r.exhausted ? " (memory and swap exhausted: at once, not after "
                                      "Level3Duration)"
                                    : "");
            } else if constexpr (std::is_same_v<T, core::LevelFell>) {
                return "below level " + std::to_string(r.from) + " thresholds (hysteresis " +
                       detail::permyriadText(r.hysteresis) + ") for " +
                       detail::durationText(r.duration) + ": " + describe(r.readings);
            } else {
                return {};
            }
        },
        reason);
}

std::string describe(const core::Note& note) {
    return std::visit(
        [](const auto& n) -> std::string {
            using T = std::decay_t<decltype(n)>;
            if constexpr (std::is_same_v<T, core::LevelChanged>) {
                return "pressure level " + std::to_string(n.from) + " → " + std::to_string(n.to) +
                       ": " + describe(n.reason);
            } else if constexpr (std::is_same_v<T, core::AdmissionChanged>) {
                return n.open ? std::string("admission reopened at pressure level 0")
                              : "admission closed at pressure level " + std::to_string(n.level);
            } else if constexpr (std::is_same_v<T, core::NoKillCandidate>) {
                return "level 3 but no killable candidate";
            } else {
                return "level 3: kill cooldown, next kill possible in " +
                       detail::durationText(n.left);
            }
        },
        note);
}

std::string describe(const core::CapClass& c) {
    switch (c.why) {
    case core::CapClass::Why::Throttle:
        return "throttle at pressure level " + std::to_string(c.level) + ": usage " +
               formatBytes(c.usage) + ", cap " + formatBytes(c.memoryHigh) + " (guard " +
               formatBytes(c.guard.cap) + ")";
    case core::CapClass::Why::Restore:
        return "restore at pressure level " + std::to_string(c.level) + ": cap " +
               formatBytes(c.previous) + " → " + formatBytes(c.memoryHigh) +
               " toward the guard's " + formatBytes(c.guard.cap);
    case core::CapClass::Why::Guard:
        break;
    }
    const core::GuardCap& g = c.guard;
    // The host claims the larger of NodeReserved and its own use.
    const bool ownUse = g.hostOwn > g.reserved;
    std::string text = "guard: MemTotal " + formatBytes(g.memTotal) + " − others " +
                       formatBytes(g.others) + " − host " +
                       formatBytes(ownUse ? g.hostOwn : g.reserved) +
                       (ownUse ? " (in use, over NodeReserved " + formatBytes(g.reserved) + ")"
                               : " (NodeReserved; in use " + formatBytes(g.hostOwn) + ")") +
                       " − headroom " + formatBytes(g.headroom) + " = " + formatBytes(g.left);
    if (g.floored) {
        text += ", floor " + formatBytes(g.floor);
    }
    return text;
}

namespace {

// "MemAvailable 4.0% ≤ 5% (…)" and/or "protected class system stalled
// 35.0% of the time".
std::string hostHurtText(const core::HostHurt& h) {
    std::string text;
    if (h.memShort) {
        text = memAvailableText(*h.memShort, true);
    }
    if (!h.stalling.empty()) {
        const bool isClass = h.stalling.starts_with("class:");
        const std::string name = h.stalling.substr(h.stalling.find(':') + 1);
        text += (text.empty() ? "" : ", ") + std::string("protected ") +
                (isClass ? "class " : "cgroup ") + name + " stalled " +
                detail::percentText(h.stallingShare) + " of the time";
    }
    return text.empty() ? "no evidence recorded" : text;
}

} // namespace

std::string describe(const core::KillWorkload& k) {
    const core::Candidate& v = k.victim;
    if (const auto* stall = std::get_if<core::StallKill>(&k.reason)) {
        return "kill " + v.id + " (class " + v.className + "): class " + v.className +
               " stalled at its cap (memory.current " + formatBytes(stall->classUsage) +
               " of memory.high " + formatBytes(stall->classCap) + "), full stall " +
               detail::percentText(stall->share) + " of the time ≥ " +
               detail::percentText(stall->threshold) + " for " +
               detail::durationText(stall->duration) + "; usage " + formatBytes(v.usage) +
               ", swap " + formatBytes(v.swapUsage) + "; the host was hurt: " +
               hostHurtText(stall->host);
    }
    const auto* ladder = std::get_if<core::LadderKill>(&k.reason);
    const core::LadderKill none{};
    const core::LadderKill& l = ladder != nullptr ? *ladder : none;
    const std::string why =
        l.signals.empty() ? "held by hysteresis, " + describe(l.readings) : signalsText(l.signals);
    return "kill " + v.id + " (class " + v.className + ", priority " + std::to_string(v.priority) +
           "): usage " + formatBytes(v.usage) + ", request " + formatBytes(v.request) +
           ", excess " + formatBytes(v.excess) + ", swap " + formatBytes(v.swapUsage) +
           "; pressure level " + std::to_string(l.level) + ": " + why;
}

} // namespace memqos::wording

// SPDX-License-Identifier: Apache-2.0
#include "memqos/core/placement.hpp"

#include <array>
#include <cmath>

#include "numeric.hpp"

namespace memqos::core {

using detail::kMicro;
using detail::U128;

namespace {

// The ratio as an integer number of millionths, computed once so every
// comparison below is exact integer arithmetic (1.0 is 1'000'000 exactly,
// no "1.0 · x > x" by rounding).
std::uint64_t ratioMicro(double ratio) {
    constexpr double kMaxRatio = 1e9; // anything larger is "unlimited" already
    if (!(ratio > 0)) {               // also NaN
        return 0;
    }
    if (ratio >= kMaxRatio) {
        return static_cast<std::uint64_t>(kMaxRatio) * kMicro;
    }
    return static_cast<std::uint64_t>(std::llround(ratio * static_cast<double>(kMicro)));
}

// floor(ratio · available), the memory VMs may claim in total.
Bytes capacity(std::uint64_t micro, Bytes available) {
    return detail::saturate(U128{micro} * available / kMicro);
}

std::uint64_t permilleUp(U128 part, Bytes whole) {
    return detail::saturate((part * 1000 + whole - 1) / whole);
}

std::string ratioText(std::uint64_t micro) {
    // two decimals, rounded half up
    const std::uint64_t hundredths = (micro + 5000) / 10000;
    const std::uint64_t frac = hundredths % 100;
    return detail::toText(hundredths / 100) + "." + (frac < 10 ? "0" : "") + detail::toText(frac);
}

} // namespace

Bytes availableMemory(const PlacementInput& in) {
    const U128 taken = U128{in.nodeReserve} + in.services;
    return taken >= in.memTotal ? 0 : static_cast<Bytes>(in.memTotal - taken);
}

Bytes vmCapacity(Bytes available, double memoryRatio) {
    return capacity(ratioMicro(memoryRatio), available);
}

Bytes requiredSwap(Bytes available, double memoryRatio) {
    const std::uint64_t micro = ratioMicro(memoryRatio);
    if (micro <= kMicro) {
        return 0;
    }
    const U128 scaled = U128{micro - kMicro} * available;
    return detail::saturate((scaled + kMicro - 1) / kMicro);
}

std::string_view toString(VerdictKind k) {
    switch (k) {
    case VerdictKind::Fits:
        return "fits";
    case VerdictKind::Soft:
        return "soft";
    case VerdictKind::Hard:
        return "hard";
    }
    return "unknown";
}

std::string formatBytes(Bytes b) {
    if (b < kKiB) {
        return detail::toText(b) + " B";
    }
    constexpr std::array<std::pair<Bytes, const char*>, 4> kUnits{{
        {kKiB, " KiB"},
        {kMiB, " MiB"},
        {kGiB, " GiB"},
        {1024 * kGiB, " TiB"},
    }};
    std::size_t u = 0;
    while (u + 1 < kUnits.size() && b >= kUnits[u + 1].first) {
        ++u;
    }
    const auto tenthsOf = [b](Bytes unit) {
        return static_cast<std::uint64_t>((U128{b} * 10 + unit / 2) / unit);
    };
    std::uint64_t tenths = tenthsOf(kUnits[u].first);
    if (tenths >= 10240 && u + 1 < kUnits.size()) {
        ++u;
        tenths = tenthsOf(kUnits[u].first);
    }
    return detail::toText(tenths / 10) + "." + detail::toText(tenths % 10) + kUnits[u].second;
}

Status validateInstanceName(std::string_view name) {
    constexpr std::size_t kMaxName = 255;
    if (name.empty()) {
        return invalid("instance name is empty");
    }
    if (name.size() > kMaxName) {
        return invalid("instance name is longer than 255 bytes");
    }
    const auto alnum = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    };
    if (!alnum(name.front())) {
        return invalid("instance name must start with a letter or digit");
    }
    for (const char c : name) {
        if (!alnum(c) && c != '-' && c != '_' && c != '.') {
            return invalid("instance name may hold only letters, digits, '-', '_' and '.'");
        }
    }
    return okStatus();
}

Bytes committedMemory(const std::vector<Instance>& instances, std::string_view exclude,
                      Bytes overhead) {
    U128 sum = 0;
    for (const auto& i : instances) {
        if (i.up && i.name != exclude) {
            sum += U128{i.maxMemory} + overhead;
        }
    }
    return detail::saturate(sum);
}

Verdict checkPlacement(const PlacementInput& in, Bytes candidate, const PlacementPolicy& policy) {
    const std::uint64_t micro = ratioMicro(in.memoryRatio);
    const Bytes available = availableMemory(in);
    const U128 after = U128{in.instances} + candidate;
    const U128 afterWithReserve = after + in.reserved;

    Verdict v;
    v.numbers = {
        {"memory_total", in.memTotal}, {"node_reserved", in.nodeReserve},
        {"services", in.services},     {"available", available},
        {"instances", in.instances},   {"reserved", in.reserved},
        {"candidate", candidate},      {"ratio_permille", (micro + 500) / 1000},
    };
    if (available > 0) {
        v.numbers.emplace_back("usage_before_permille", permilleUp(in.instances, available));
        v.numbers.emplace_back("usage_after_permille", permilleUp(after, available));
        v.numbers.emplace_back("usage_after_with_reserve_permille",
                               permilleUp(afterWithReserve, available));
    }
    v.numbers.emplace_back("swap_total", in.swapTotal);
    v.numbers.emplace_back("swap_required", requiredSwap(available, in.memoryRatio));

    const std::string asked = formatBytes(candidate) + " asked";
    if (available == 0) {
        v.kind = VerdictKind::Hard;
        v.message = "hard: " + asked + ", but node reserve " + formatBytes(in.nodeReserve) +
                    " and services " + formatBytes(in.services) + " already take all " +
                    formatBytes(in.memTotal) + " of memory";
        return v;
    }

    const U128 limit = U128{micro} * available; // ratio · available, in millionths
    const Bytes cap = capacity(micro, available);
    const std::string ratio = "memory ratio " + ratioText(micro);
    if (afterWithReserve * kMicro <= limit) {
        v.kind = VerdictKind::Fits;
        v.message = "fits: " + asked + ", " +
                    formatBytes(detail::subOrZero(
                        cap, detail::saturate(U128{in.instances} + in.reserved))) +
                    " left under " + ratio + " after the failover reserve (available " +
                    formatBytes(available) + ", instances " + formatBytes(in.instances) +
                    ", reserved " + formatBytes(in.reserved) + ")";
    } else if (after * kMicro > limit) {
        v.kind = VerdictKind::Hard;
        v.message = "hard: " + asked + ", " + formatBytes(detail::subOrZero(cap, in.instances)) +
                    " left under " + ratio + " (available " + formatBytes(available) +
                    ", instances " + formatBytes(in.instances) + ")";
    } else {
        v.kind = VerdictKind::Soft;
        v.message = "soft: " + asked + " fits under " + ratio + " (" +
                    formatBytes(detail::subOrZero(cap, in.instances)) +
                    " left) only by using the failover reserve of " + formatBytes(in.reserved) +
                    " (available " + formatBytes(available) + ", instances " +
                    formatBytes(in.instances) + ")";
        if (policy.refuseSoft) {
            v.kind = VerdictKind::Hard;
            v.message = "hard:" + v.message.substr(v.message.find(':') + 1) +
                        " (soft violations are refused)";
        }
    }
    const Bytes swapNeeded = requiredSwap(available, in.memoryRatio);
    if (policy.swapCheck != SwapCheck::Off && in.swapTotal < swapNeeded) {
        const std::string swap = "swap " + formatBytes(in.swapTotal) + " is below the " +
                                 formatBytes(swapNeeded) + " that " + ratio + " needs";
        if (policy.swapCheck == SwapCheck::Refuse && v.kind != VerdictKind::Hard) {
            v.kind = VerdictKind::Hard;
            v.message = "hard: " + asked + ", but " + swap + " (SwapCheck=refuse)";
        } else if (policy.swapCheck == SwapCheck::Warn) {
            v.message += "; warning: " + swap;
        }
    }
    return v;
}

std::vector<Finding> verifyPlacement(const PlacementInput& in, Bytes protectedMin,
                                     const std::vector<ClassCoverage>& coverage) {
    const std::uint64_t micro = ratioMicro(in.memoryRatio);
    const Bytes available = availableMemory(in);
    const Bytes cap = capacity(micro, available);
    const Bytes swapNeeded = requiredSwap(available, in.memoryRatio);
    const std::string ratio = ratioText(micro);
    std::vector<Finding> out;

    if (available == 0) {
        out.push_back({"error", "no-memory-available",
                       "node reserve " + formatBytes(in.nodeReserve) + " and services " +
                           formatBytes(in.services) + " take all " + formatBytes(in.memTotal) +
                           " of memory: nothing is left for VMs"});
    }
    if (U128{in.instances} * kMicro > U128{micro} * available) {
        out.push_back({"error", "ratio-exceeded",
                       "instances " + formatBytes(in.instances) + " exceed memory ratio " + ratio +
                           " × available " + formatBytes(available) + " = " + formatBytes(cap)});
    }
    if (protectedMin > available) {
        out.push_back({"error", "protection-exceeds-available",
                       "protected memory (VMs' memory.min and memory.low) " + formatBytes(protectedMin) + " exceeds available " +
                           formatBytes(available) + ": the kernel cannot honour every protection"});
    }
    if (in.swapTotal < swapNeeded) {
        out.push_back({"warning", "swap-insufficient",
                       "swap " + formatBytes(in.swapTotal) + " is below the " +
                           formatBytes(swapNeeded) + " that memory ratio " + ratio +
                           " needs ((ratio − 1) × available " + formatBytes(available) + ")"});
    }
    if (U128{available} + in.swapTotal < U128{in.instances} + in.reserved) {
        out.push_back({"warning", "overcommitted-beyond-swap",
                       "instances " + formatBytes(in.instances) + " + reserved " +
                           formatBytes(in.reserved) + " exceed available " +
                           formatBytes(available) + " + swap " + formatBytes(in.swapTotal)});
    }
    for (const auto& c : coverage) {
        std::string what;
        if (c.sliceMin < c.membersMin) {
            what = "memory.min " + formatBytes(c.sliceMin) + " is below its members' " +
                   formatBytes(c.membersMin);
        }
        if (c.sliceLow < c.membersLow) {
            what += (what.empty() ? "" : ", ") + std::string("memory.low ") +
                    formatBytes(c.sliceLow) + " is below its members' " + formatBytes(c.membersLow);
        }
        if (!what.empty()) {
            out.push_back({"warning", "slice-protection-short",
                           "memqos-" + c.className + ".slice: " + what +
                               "; members are protected only up to the slice's value"});
        }
    }
    out.push_back(
        {"info", "summary",
         "memory " + formatBytes(in.memTotal) + ", node reserve " + formatBytes(in.nodeReserve) +
             ", services " + formatBytes(in.services) + ", available " + formatBytes(available) +
             ", instances " + formatBytes(in.instances) + " of " + formatBytes(cap) +
             " allowed by memory ratio " + ratio + ", reserved " + formatBytes(in.reserved) +
             ", swap " + formatBytes(in.swapTotal) + " (" + formatBytes(swapNeeded) + " needed)"});
    return out;
}

} // namespace memqos::core

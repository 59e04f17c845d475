// SPDX-License-Identifier: Apache-2.0
#include "memqos/core/placement.hpp"

#include <algorithm>
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

// The figures every verdict and finding carries.
PlacementFigures figuresOf(const PlacementInput& in) {
    const std::uint64_t micro = ratioMicro(in.memoryRatio);
    const Bytes available = availableMemory(in);
    return PlacementFigures{.memTotal = in.memTotal,
                            .nodeReserve = in.nodeReserve,
                            .services = in.services,
                            .available = available,
                            .instances = in.instances,
                            .reserved = in.reserved,
                            .ratioMicro = micro,
                            .capacity = capacity(micro, available),
                            .swapTotal = in.swapTotal,
                            .swapRequired = requiredSwap(available, in.memoryRatio)};
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

std::string_view toString(FindingCode c) {
    switch (c) {
    case FindingCode::NoMemoryAvailable:
        return "no-memory-available";
    case FindingCode::RatioExceeded:
        return "ratio-exceeded";
    case FindingCode::ProtectionExceedsAvailable:
        return "protection-exceeds-available";
    case FindingCode::SwapInsufficient:
        return "swap-insufficient";
    case FindingCode::OvercommittedBeyondSwap:
        return "overcommitted-beyond-swap";
    case FindingCode::SliceProtectionShort:
        return "slice-protection-short";
    case FindingCode::Summary:
        return "summary";
    }
    return "summary";
}

std::string_view toString(Severity s) {
    switch (s) {
    case Severity::Error:
        return "error";
    case Severity::Warning:
        return "warning";
    case Severity::Info:
        return "info";
    }
    return "info";
}

Severity defaultSeverity(FindingCode c) {
    switch (c) {
    case FindingCode::NoMemoryAvailable:
    case FindingCode::RatioExceeded:
    case FindingCode::ProtectionExceedsAvailable:
        return Severity::Error;
    case FindingCode::SwapInsufficient:
    case FindingCode::OvercommittedBeyondSwap:
    case FindingCode::SliceProtectionShort:
        return Severity::Warning;
    case FindingCode::Summary:
        return Severity::Info;
    }
    return Severity::Info;
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

Result<std::vector<std::string>> parseInstanceList(std::string_view text) {
    std::vector<std::string> out;
    std::size_t lineNo = 0;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        ++lineNo;
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (line.empty()) {
            continue;
        }
        if (auto ok = validateInstanceName(line); !ok) {
            return invalid("line " + std::to_string(lineNo) + ": " + ok.error().what);
        }
        if (out.size() == kMaxInstanceList) {
            return invalid("more than " + std::to_string(kMaxInstanceList) + " instances");
        }
        out.emplace_back(line);
    }
    std::sort(out.begin(), out.end());
    return out;
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
    const PlacementFigures fig = figuresOf(in);
    const std::uint64_t micro = fig.ratioMicro;
    const Bytes available = fig.available;
    const U128 after = U128{in.instances} + candidate;
    const U128 afterWithReserve = after + in.reserved;

    Verdict v;
    v.candidate = candidate;
    v.figures = fig;
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
    v.numbers.emplace_back("swap_required", fig.swapRequired);

    if (available == 0) {
        v.kind = VerdictKind::Hard;
        v.why = VerdictWhy::NoMemoryAvailable;
        return v;
    }

    const U128 limit = U128{micro} * available; // ratio · available, in millionths
    if (afterWithReserve * kMicro <= limit) {
        v.kind = VerdictKind::Fits;
        v.why = VerdictWhy::Fits;
    } else if (after * kMicro > limit) {
        v.kind = VerdictKind::Hard;
        v.why = VerdictWhy::OverRatio;
    } else {
        v.kind = VerdictKind::Soft;
        v.why = VerdictWhy::NeedsReserve;
        if (policy.refuseSoft) {
            v.kind = VerdictKind::Hard;
            v.softRefused = true;
        }
    }
    if (policy.swapCheck != SwapCheck::Off && in.swapTotal < fig.swapRequired) {
        if (policy.swapCheck == SwapCheck::Refuse && v.kind != VerdictKind::Hard) {
            v.kind = VerdictKind::Hard;
            v.why = VerdictWhy::SwapRefused;
        } else if (policy.swapCheck == SwapCheck::Warn) {
            v.swapShort = true;
        }
    }
    return v;
}

std::vector<Finding> verifyPlacement(const PlacementInput& in, Bytes protectedMin,
                                     const std::vector<ClassCoverage>& coverage,
                                     SwapCheck swapCheck) {
    const PlacementFigures fig = figuresOf(in);
    const Bytes available = fig.available;
    std::vector<Finding> out;
    const auto add = [&](FindingCode code, const ClassCoverage& c = {}) {
        Severity severity = defaultSeverity(code);
        if (code == FindingCode::SwapInsufficient) {
            // As checkPlacement treats it: refused under Refuse, ignored under Off.
            severity = swapCheck == SwapCheck::Refuse ? Severity::Error
                       : swapCheck == SwapCheck::Off  ? Severity::Info
                                                      : Severity::Warning;
        }
        out.push_back(Finding{.code = code,
                              .severity = severity,
                              .figures = fig,
                              .protectedMin = protectedMin,
                              .coverage = c});
    };

    if (available == 0) {
        add(FindingCode::NoMemoryAvailable);
    }
    if (U128{in.instances} * kMicro > U128{fig.ratioMicro} * available) {
        add(FindingCode::RatioExceeded);
    }
    if (protectedMin > available) {
        add(FindingCode::ProtectionExceedsAvailable);
    }
    if (in.swapTotal < fig.swapRequired) {
        add(FindingCode::SwapInsufficient);
    }
    if (U128{available} + in.swapTotal < U128{in.instances} + in.reserved) {
        add(FindingCode::OvercommittedBeyondSwap);
    }
    for (const auto& c : coverage) {
        if (c.sliceMin < c.membersMin || c.sliceLow < c.membersLow) {
            add(FindingCode::SliceProtectionShort, c);
        }
    }
    add(FindingCode::Summary);
    return out;
}

} // namespace memqos::core

// SPDX-License-Identifier: Apache-2.0
#include "memqos/wording/placement.hpp"

#include "memqos/wording/bytes.hpp"

#include "text.hpp"

namespace memqos::wording {

using detail::U128;

namespace {

// The memory ratio with two decimals, rounded half up ("1.50").
std::string ratioText(std::uint64_t micro) {
    const std::uint64_t hundredths = (micro + 5000) / 10000;
    const std::uint64_t frac = hundredths % 100;
    return detail::toText(hundredths / 100) + "." + (frac < 10 ? "0" : "") + detail::toText(frac);
}

} // namespace

std::string describe(const core::Verdict& v) {
    const core::PlacementFigures& f = v.figures;
    const std::string asked = formatBytes(v.candidate) + " asked";
    const std::string ratio = "memory ratio " + ratioText(f.ratioMicro);
    const std::string swap = "swap " + formatBytes(f.swapTotal) + " is below the " +
                             formatBytes(f.swapRequired) + " that " + ratio + " needs";
    std::string message;
    switch (v.why) {
    case core::VerdictWhy::NoMemoryAvailable:
        return "hard: " + asked + ", but node reserve " + formatBytes(f.nodeReserve) +
               " and services " + formatBytes(f.services) + " already take all " +
               formatBytes(f.memTotal) + " of memory";
    case core::VerdictWhy::Fits:
        message = "fits: " + asked + ", " +
                  formatBytes(detail::subOrZero(f.capacity,
                                                detail::saturate(U128{f.instances} + f.reserved))) +
                  " left under " + ratio + " after the failover reserve (available " +
                  formatBytes(f.available) + ", instances " + formatBytes(f.instances) +
                  ", reserved " + formatBytes(f.reserved) + ")";
        break;
    case core::VerdictWhy::OverRatio:
        message = "hard: " + asked + ", " +
                  formatBytes(detail::subOrZero(f.capacity, f.instances)) + " left under " + ratio +
                  " (available " + formatBytes(f.available) + ", instances " +
                  formatBytes(f.instances) + ")";
        break;
    case core::VerdictWhy::NeedsReserve:
        message = std::string(v.softRefused ? "hard" : "soft") + ": " + asked + " fits under " +
                  ratio + " (" + formatBytes(detail::subOrZero(f.capacity, f.instances)) +
                  " left) only by using the failover reserve of " + formatBytes(f.reserved) +
                  " (available " + formatBytes(f.available) + ", instances " +
                  formatBytes(f.instances) + ")" +
                  (v.softRefused ? " (soft violations are refused)" : "");
        break;
    case core::VerdictWhy::SwapRefused:
        return "hard: " + asked + ", but " + swap + " (SwapCheck=refuse)";
    }
    if (v.swapShort) {
        message += "; warning: " + swap;
    }
    return message;
}

FindingText describe(const core::Finding& finding) {
    const core::PlacementFigures& f = finding.figures;
    const std::string ratio = ratioText(f.ratioMicro);
    std::string message;
    switch (finding.code) {
    case core::FindingCode::NoMemoryAvailable:
        message = "node reserve " + formatBytes(f.nodeReserve) + " and services " +
                  formatBytes(f.services) + " take all " + formatBytes(f.memTotal) +
                  " of memory: nothing is left for VMs";
        break;
    case core::FindingCode::RatioExceeded:
        message = "instances " + formatBytes(f.instances) + " exceed memory ratio " + ratio +
                  " × available " + formatBytes(f.available) + " = " + formatBytes(f.capacity);
        break;
    case core::FindingCode::ProtectionExceedsAvailable:
        message = "protected memory (VMs' memory.min and memory.low) " +
                  formatBytes(finding.protectedMin) + " exceeds available " +
                  formatBytes(f.available) + ": the kernel cannot honour every protection";
        break;
    case core::FindingCode::SwapInsufficient:
        message = "swap " + formatBytes(f.swapTotal) + " is below the " +
                  formatBytes(f.swapRequired) + " that memory ratio " + ratio +
                  " needs ((ratio − 1) × available " + formatBytes(f.available) + ")";
        break;
    case core::FindingCode::OvercommittedBeyondSwap:
        message = "instances " + formatBytes(f.instances) + " + reserved " +
                  formatBytes(f.reserved) + " exceed available " + formatBytes(f.available) +
                  " + swap " + formatBytes(f.swapTotal);
        break;
    case core::FindingCode::SliceProtectionShort: {
        const core::ClassCoverage& c = finding.coverage;
        std::string what;
        if (c.sliceMin < c.membersMin) {
            what = "memory.min " + formatBytes(c.sliceMin) + " is below its members' " +
                   formatBytes(c.membersMin);
        }
        if (c.sliceLow < c.membersLow) {
            what += (what.empty() ? "" : ", ") + std::string("memory.low ") +
                    formatBytes(c.sliceLow) + " is below its members' " + formatBytes(c.membersLow);
        }
        message = "memqos-" + c.className + ".slice: " + what +
                  "; members are protected only up to the slice's value";
        break;
    }
    case core::FindingCode::Summary:
        message =
            "memory " + formatBytes(f.memTotal) + ", node reserve " + formatBytes(f.nodeReserve) +
            ", services " + formatBytes(f.services) + ", available " + formatBytes(f.available) +
            ", instances " + formatBytes(f.instances) + " of " + formatBytes(f.capacity) +
            " allowed by memory ratio " + ratio + ", reserved " + formatBytes(f.reserved) +
            ", swap " + formatBytes(f.swapTotal) + " (" + formatBytes(f.swapRequired) + " needed)";
        break;
    }
    return FindingText{.severity = std::string(core::toString(finding.severity)),
                       .code = std::string(core::toString(finding.code)),
                       .message = std::move(message)};
}

std::vector<FindingText> describe(const std::vector<core::Finding>& findings) {
    std::vector<FindingText> out;
    out.reserve(findings.size());
    for (const auto& f : findings) {
        out.push_back(describe(f));
    }
    return out;
}

} // namespace memqos::wording

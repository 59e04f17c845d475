// SPDX-License-Identifier: Apache-2.0
#pragma once
// Placement verdicts and findings (core/placement.hpp) in English: the text
// of D-Bus VerifyPlacement and Verify, the journal's "Placement refused" and
// what memqosctl and the Ganeti hook show.

#include "memqos/core/placement.hpp"

#include <string>
#include <vector>

namespace memqos::wording {

// One line starting with toString(v.kind) and a colon:
//   NoMemoryAvailable  "hard: X asked, but node reserve R and services S
//                      already take all T of memory"
//   Fits               "fits: X asked, L left under memory ratio 1.50 after
//                      the failover reserve (available …, instances …,
//                      reserved …)"
//   OverRatio          "hard: X asked, L left under memory ratio … (available
//                      …, instances …)"
//   NeedsReserve       "soft: X asked fits under memory ratio … (L left) only
//                      by using the failover reserve of … (available …,
//                      instances …)"; when softRefused "hard: …" and
//                      " (soft violations are refused)" at the end
//   SwapRefused        "hard: X asked, but swap … is below the … that memory
//                      ratio … needs (SwapCheck=refuse)"
// swapShort appends "; warning: swap … is below the … that memory ratio …
// needs".
std::string describe(const core::Verdict& v);

// A finding as D-Bus Verify and memqosctl verify show it.
struct FindingText {
    std::string severity; // "error" | "warning" | "info"
    std::string code;     // stable, for scripts
    std::string message;  // one line, with the numbers

    friend bool operator==(const FindingText&, const FindingText&) = default;
};
FindingText describe(const core::Finding& f);
std::vector<FindingText> describe(const std::vector<core::Finding>& findings);

} // namespace memqos::wording

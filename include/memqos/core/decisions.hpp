// SPDX-License-Identifier: Apache-2.0
#pragma once
// What one tick of the core decides. io/ executes the actions in order (or
// logs them under DryRun=yes); the core never acts itself.

#include "memqos/core/model.hpp"
#include "memqos/core/types.hpp"
#include "memqos/core/victims.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace memqos::core {

// The pressure level changed (0..3): update the Manager property, emit
// PressureLevelChanged. `reason` names the signal and its numbers.
struct SetPressureLevel {
    std::uint32_t level = 0;
    std::string reason;
    friend bool operator==(const SetPressureLevel&, const SetPressureLevel&) = default;
};

// Admission of new placements changed: closed at level ≥ 1, open at 0.
// Emitted only on change.
struct SetAdmission {
    bool open = true;
    friend bool operator==(const SetAdmission&, const SetAdmission&) = default;
};

// Write `bytes` (page-aligned, > 0) to memory.reclaim of the class slice.
struct ReclaimClass {
    std::string className;
    Bytes bytes = 0;
    friend bool operator==(const ReclaimClass&, const ReclaimClass&) = default;
};

// Set the class slice's MemoryHigh (runtime, through systemd) to
// `memoryHigh` (page-aligned, > 0). Decided for memoryGuard classes only:
//   Guard    the memory guard's cap moved by at least a step (level 0/1)
//   Throttle level ≥ 2 lowered it under the class's usage
//   Restore  the level fell below 2 and the cap climbs back a step toward
//            the guard's
struct CapClass {
    enum class Why { Guard, Throttle, Restore };
    std::string className;
    Bytes memoryHigh = 0;
    Why why = Why::Guard;
    std::string reason; // the numbers behind it, for the journal
    friend bool operator==(const CapClass&, const CapClass&) = default;
};
std::string_view toString(CapClass::Why why);

// Shrink the balloons of the class's running VMs toward their request.
struct ShrinkBalloons {
    std::string className;
    friend bool operator==(const ShrinkBalloons&, const ShrinkBalloons&) = default;
};

// Kill one workload: a VM with virDomainDestroy, a unit as a whole cgroup.
// `numbers` are what caused it (kill history, WorkloadKilled signal, journal).
struct KillWorkload {
    Candidate victim;
    std::string reason;
    Numbers numbers;
    friend bool operator==(const KillWorkload&, const KillWorkload&) = default;
};

using Action = std::variant<SetPressureLevel, SetAdmission, ReclaimClass, CapClass,
                            ShrinkBalloons, KillWorkload>;

struct Decisions {
    std::vector<Action> actions;
    // One line per notable decision of this tick (level and admission
    // changes, kills, why no kill), for the journal. Not repeated for the
    // per-tick reclaim/throttle steps, which are in `actions`.
    std::vector<std::string> reasons;
    // The best victims considered at level 3 (at most 10), best first, for
    // logging (systemd-oomd's dump_kill_candidates); empty below level 3.
    std::vector<Candidate> consideredVictims;
};

} // namespace memqos::core

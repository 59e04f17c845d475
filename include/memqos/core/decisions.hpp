// SPDX-License-Identifier: Apache-2.0
#pragma once
// What one tick of the core decides. io/ executes the actions in order (or
// logs them under DryRun=yes); the core never acts itself. Decisions carry
// the facts behind them (signals, readings, numbers), never text: the
// wording layer (wording/pressure.hpp) says them in English.

#include "memqos/core/model.hpp"
#include "memqos/core/types.hpp"
#include "memqos/core/victims.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace memqos::core {

// --- The facts behind a decision ---

// A pressure signal at or past its threshold (pressure.hpp), with what it
// compared:
//   PsiSignal           system memory PSI "some" or "full" avg10 (percent)
//   MemAvailableSignal  MemAvailable/MemTotal ≤ threshold (memTotal > 0)
//   WatermarkSignal     the first zone whose free pages are below its low
//                       (level 2) or min (level 3) watermark, in bytes
//   SwapSignal          swap used/total ≥ threshold (swapTotal > 0) while
//                       MemAvailable is at or below level 3's threshold
struct PsiSignal {
    bool full = false; // the "full" line, else "some"
    double avg10 = 0;
    double threshold = 0;
    friend bool operator==(const PsiSignal&, const PsiSignal&) = default;
};
struct MemAvailableSignal {
    Bytes memAvailable = 0;
    Bytes memTotal = 0;
    Permyriad threshold = 0;
    friend bool operator==(const MemAvailableSignal&, const MemAvailableSignal&) = default;
};
struct WatermarkSignal {
    std::string zone;
    std::int32_t node = 0;
    Bytes free = 0;
    Bytes watermark = 0;
    bool min = false; // the min watermark, else the low one
    friend bool operator==(const WatermarkSignal&, const WatermarkSignal&) = default;
};
struct SwapSignal {
    Bytes used = 0;
    Bytes swapTotal = 0;
    Permyriad threshold = 0;
    MemAvailableSignal memAvailable; // the level-3 MemAvailable condition
    friend bool operator==(const SwapSignal&, const SwapSignal&) = default;
};
using PressureSignal = std::variant<PsiSignal, MemAvailableSignal, WatermarkSignal, SwapSignal>;

// The system's readings, for reasons that are not about a signal being on:
// PSI some and full avg10 when the snapshot has them, MemAvailable when
// MemTotal is known (memTotal > 0).
struct Readings {
    std::optional<double> someAvg10;
    std::optional<double> fullAvg10; // only with someAvg10
    Bytes memAvailable = 0;
    Bytes memTotal = 0;
    friend bool operator==(const Readings&, const Readings&) = default;
};

// Why the ladder is at its level (PressureState::reason):
//   LevelRose  the signals that put the level's condition on (at most one per
//              kind, in the order PSI some, full, MemAvailable, watermark,
//              swap) held for `duration`
//   LevelFell  level `from`'s condition with hysteresis was off for
//              `duration`; one level down
// std::monostate: never changed (level 0 since the start).
struct LevelRose {
    std::vector<PressureSignal> signals;
    Usec duration{0};
    // Level 3 at once, before its Duration: memory and swap exhausted.
    bool exhausted = false;
    friend bool operator==(const LevelRose&, const LevelRose&) = default;
};
struct LevelFell {
    std::uint32_t from = 0;
    Permyriad hysteresis = 0;
    Usec duration{0};
    Readings readings;
    friend bool operator==(const LevelFell&, const LevelFell&) = default;
};
using LevelReason = std::variant<std::monostate, LevelRose, LevelFell>;

// --- Actions ---

// The pressure level changed (0..3): update the Manager property, emit
// PressureLevelChanged. `reason` names the signal and its numbers.
struct SetPressureLevel {
    std::uint32_t level = 0;
    LevelReason reason;
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

// The memory guard's cap of a class (pressure.hpp): memTotal − others (the
// other classes' memory.current, and unplaced VMs' outside the class
// slices) − reserved (NodeReserved) − headroom =
// left; cap is left page-aligned, or floor when that is larger (floored).
struct GuardCap {
    Bytes memTotal = 0;
    Bytes others = 0;   // OthersClaim::classes (proactive.hpp)
    Bytes hostOwn = 0;  // OthersClaim::hostOwn
    Bytes reserved = 0; // nodeReserved; the host claims max(hostOwn, reserved)
    Bytes headroom = 0;
    Bytes left = 0;
    Bytes floor = 0;
    bool floored = false;
    Bytes cap = 0;
    friend bool operator==(const GuardCap&, const GuardCap&) = default;
};

// Set the class slice's MemoryHigh (runtime, through systemd) to
// `memoryHigh` (page-aligned, > 0). Decided for memoryGuard classes only:
//   Guard    the memory guard's cap moved by at least a step (level 0/1)
//   Throttle level ≥ 2 lowered it under the class's usage
//   Restore  the level fell below 2 and the cap climbs back a step toward
//            the guard's
// The numbers behind it, for the journal: the guard's cap, the pressure
// level, the class's usage (memory.current) and the cap before (Restore).
struct CapClass {
    enum class Why { Guard, Throttle, Restore };
    std::string className;
    Bytes memoryHigh = 0;
    Why why = Why::Guard;
    GuardCap guard;
    std::uint32_t level = 0;
    Bytes usage = 0;
    Bytes previous = 0;
    friend bool operator==(const CapClass&, const CapClass&) = default;
};
std::string_view toString(CapClass::Why why);

// Shrink the balloons of the class's running VMs toward their request.
struct ShrinkBalloons {
    std::string className;
    friend bool operator==(const ShrinkBalloons&, const ShrinkBalloons&) = default;
};

// Why a workload is killed:
//   LadderKill  pressure level `level` (3, or the level a class stall kill
//               happened at): the signals on at that level or above, or
//               none when hysteresis holds the level (then the readings)
//   StallKill   its guarded class's full stall share was `share` percent of
//               the time, ≥ `threshold`, for `duration`, at its cap: the
//               class slice's memory.current `classUsage` against its
//               memory.high `classCap` when the kill was decided; and the
//               host was hurt (`host`: the evidence the rule demands)
struct LadderKill {
    std::uint32_t level = 0;
    std::vector<PressureSignal> signals;
    Readings readings;
    friend bool operator==(const LadderKill&, const LadderKill&) = default;
};
// What showed that the host was hurt when the class-stall rule killed:
// MemAvailable at or below level 1's threshold (`memShort`, with the
// reading), and/or a protected class or cgroup whose own full stall share
// was ≥ the rule's threshold (`stalling`: "class:NAME" or "cgroup:PATH",
// the one that stalled most, with its share in percent).
struct HostHurt {
    std::optional<MemAvailableSignal> memShort;
    std::string stalling;
    double stallingShare = 0;
    bool hurt() const { return memShort.has_value() || !stalling.empty(); }
    friend bool operator==(const HostHurt&, const HostHurt&) = default;
};
struct StallKill {
    double share = 0;
    double threshold = 0;
    Usec duration{0};
    Bytes classUsage = 0;
    Bytes classCap = 0;
    HostHurt host;
    friend bool operator==(const StallKill&, const StallKill&) = default;
};
using KillReason = std::variant<LadderKill, StallKill>;

// Kill one workload as a whole cgroup: the daemon writes its cgroup.kill (a
// libvirt VM: virDomainDestroy first, cgroup.kill of its scope when libvirt
// fails or is slow).
// `numbers` are what caused it (kill history, WorkloadKilled signal, journal).
struct KillWorkload {
    Candidate victim;
    KillReason reason;
    Numbers numbers;
    friend bool operator==(const KillWorkload&, const KillWorkload&) = default;
};

using Action = std::variant<SetPressureLevel, SetAdmission, ReclaimClass, CapClass,
                            ShrinkBalloons, KillWorkload>;

// A notable decision of a tick that is not itself an action's reason:
//   LevelChanged      the level went from `from` to `to` for `reason`
//   AdmissionChanged  admission opened (at level 0) or closed at `level`
//   NoKillCandidate   level 3 but nothing may be killed
//   KillCooldown      level 3, but the last kill was too recent: `left`
struct LevelChanged {
    std::uint32_t from = 0;
    std::uint32_t to = 0;
    LevelReason reason;
    friend bool operator==(const LevelChanged&, const LevelChanged&) = default;
};
struct AdmissionChanged {
    bool open = true;
    std::uint32_t level = 0;
    friend bool operator==(const AdmissionChanged&, const AdmissionChanged&) = default;
};
struct NoKillCandidate {
    friend bool operator==(const NoKillCandidate&, const NoKillCandidate&) = default;
};
struct KillCooldown {
    Usec left{0};
    friend bool operator==(const KillCooldown&, const KillCooldown&) = default;
};
using Note = std::variant<LevelChanged, AdmissionChanged, NoKillCandidate, KillCooldown>;

struct Decisions {
    std::vector<Action> actions;
    // The notable decisions of this tick (level and admission changes, why
    // no kill), for the journal. Kills are not repeated here (their reason
    // is in their action), nor the per-tick reclaim/throttle steps.
    std::vector<Note> reasons;
    // The best victims considered at level 3 (at most 10), best first, for
    // logging (systemd-oomd's dump_kill_candidates); empty below level 3.
    std::vector<Candidate> consideredVictims;
};

// Whether `actions` hold a kill.
bool hasKill(const std::vector<Action>& actions);

} // namespace memqos::core

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Placement under memory over-commitment (doc/DESIGN.md §4.1; Ganeti
// design-memory-over-commitment, node side). Only VM memory is
// overcommitted; host memory (reserve, services) counts one to one.

#include "memqos/core/model.hpp"
#include "memqos/core/types.hpp"
#include "memqos/util/result.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memqos::core {

// Every number is in bytes except memoryRatio.
struct PlacementInput {
    Bytes memTotal = 0;    // MemTotal
    Bytes nodeReserve = 0; // Ganeti mem_node, memory kept for the host
    Bytes services = 0;    // Σ request of the managed non-VM workloads
    Bytes instances = 0;   // Σ limit of the VMs that run or are meant to run
    Bytes reserved = 0;    // failover reserve
    // Ganeti memory_ratio. Config rejects < 1.0, but these functions take
    // any value: below 1.0 the same formulas simply allow less than
    // `available` (sane, never a crash); NaN or ≤ 0 counts as 0 (nothing
    // fits); it is used with a precision of 1e-6.
    double memoryRatio = 1.0;
    Bytes swapTotal = 0;
};

// available = memTotal − nodeReserve − services, 0 when that is ≤ 0.
Bytes availableMemory(const PlacementInput& in);

// ceil((ratio − 1) · available): the swap a host needs so that overcommitted
// VMs can be paged out; 0 for ratio ≤ 1. Saturates at UINT64_MAX.
Bytes requiredSwap(Bytes available, double memoryRatio);

// floor(ratio · available): the memory the VMs may claim in total, the
// failover reserve included (checkPlacement's "ratio · available").
Bytes vmCapacity(Bytes available, double memoryRatio);

// What to do when swap is below requiredSwap() ([Overcommit] SwapCheck).
enum class SwapCheck { Off, Warn, Refuse };

// A Ganeti instance as this node's record knows it (RecordInstance): its
// memory (Ganeti BE minmem/maxmem, bytes) and whether it runs or is meant to
// run (admin state up). Only up instances count against the ratio.
struct Instance {
    std::string name;
    Bytes minMemory = 0;
    Bytes maxMemory = 0;
    bool up = false;
    friend bool operator==(const Instance&, const Instance&) = default;
};

// A Ganeti instance name: 1..255 bytes of letters, digits, '-', '_' and
// '.', starting with a letter or digit (a host name, as Ganeti requires).
// The error says what is wrong with it.
Status validateInstanceName(std::string_view name);

// Ganeti's list of the cluster's instances, one name per line
// (/var/lib/ganeti/ssconf_instance_list, which Ganeti writes on every node
// at every configuration change). Blank lines and a missing final newline
// are fine; a line that is no instance name makes the whole list an error
// (a half-written or foreign file must not make memqos forget anything).
// At most kMaxInstanceList names.
inline constexpr std::size_t kMaxInstanceList = 100'000;
Result<std::vector<std::string>> parseInstanceList(std::string_view text);

// Σ (maxMemory + overhead) of the up instances, leaving out the one named
// `exclude` (the candidate itself when it is already recorded: a start,
// a modify). Saturates at UINT64_MAX.
Bytes committedMemory(const std::vector<Instance>& instances, std::string_view exclude,
                      Bytes overhead);

enum class VerdictKind { Fits, Soft, Hard };
// "fits", "soft", "hard"
std::string_view toString(VerdictKind k);

// Numbers are for D-Bus (a{st}), in a fixed order. Keys:
//   memory_total node_reserved services available instances reserved
//   candidate (bytes); ratio_permille (memory ratio × 1000, rounded);
//   usage_before_permille usage_after_permille
//   usage_after_with_reserve_permille ((instances [+ candidate]
//   [+ reserved]) / available × 1000, rounded up so that a hard violation
//   never shows a usage equal to the ratio; absent when available is 0);
//   swap_total swap_required (bytes).
// (core::Numbers, model.hpp)

// The node's placement figures behind a verdict or a finding, as the core
// computed them (wording/placement.hpp words them).
struct PlacementFigures {
    Bytes memTotal = 0;
    Bytes nodeReserve = 0;
    Bytes services = 0;
    Bytes available = 0; // availableMemory()
    Bytes instances = 0;
    Bytes reserved = 0;
    std::uint64_t ratioMicro = 0; // the memory ratio in millionths, as compared
    Bytes capacity = 0;           // floor(ratio · available), vmCapacity()
    Bytes swapTotal = 0;
    Bytes swapRequired = 0; // requiredSwap(available, ratio)
    friend bool operator==(const PlacementFigures&, const PlacementFigures&) = default;
};

// Which case of checkPlacement decided a verdict:
//   NoMemoryAvailable  available is 0 (hard)
//   Fits               fits with the failover reserve
//   OverRatio          over ratio · available even without the reserve (hard)
//   NeedsReserve       fits only by using the failover reserve (soft, or hard
//                      when softRefused)
//   SwapRefused        swap below swapRequired under SwapCheck=refuse (hard)
enum class VerdictWhy { NoMemoryAvailable, Fits, OverRatio, NeedsReserve, SwapRefused };

struct Verdict {
    VerdictKind kind = VerdictKind::Hard;
    VerdictWhy why = VerdictWhy::NoMemoryAvailable;
    bool softRefused = false; // NeedsReserve made hard by PlacementPolicy::refuseSoft
    bool swapShort = false;   // SwapCheck=warn and swap is below swapRequired
    Bytes candidate = 0;
    PlacementFigures figures;
    Numbers numbers;
};

// Ganeti's node-side check of a candidate VM of `candidate` bytes (its
// limit): with available as above,
//   fits  if (instances + reserved + candidate) ≤ ratio · available
//   hard  if (instances + candidate)            > ratio · available
//   soft  otherwise (fits only by eating the failover reserve).
// Comparisons are exact (128-bit integers, ratio in millionths), so a usage
// exactly at the ratio fits. available == 0 (reserve and services take all
// memory) is always hard, even for a candidate of 0 bytes.
//
// The policy can make the verdict stricter, never milder:
//   refuseSoft        a soft violation becomes hard (softRefused)
//   swapCheck Warn    swap below requiredSwap(): the verdict is unchanged,
//                     swapShort is set (the wording adds a warning)
//   swapCheck Refuse  swap below requiredSwap(): hard (SwapRefused) unless
//                     already hard
struct PlacementPolicy {
    bool refuseSoft = false;
    SwapCheck swapCheck = SwapCheck::Warn;
};
Verdict checkPlacement(const PlacementInput& in, Bytes candidate,
                       const PlacementPolicy& policy = {});

// Per class: what its slice protects and what its members ask for.
struct ClassCoverage {
    std::string className;
    Bytes sliceMin = 0;
    Bytes sliceLow = 0;
    Bytes membersMin = 0;
    Bytes membersLow = 0;
    friend bool operator==(const ClassCoverage&, const ClassCoverage&) = default;
};

enum class FindingCode {
    NoMemoryAvailable,
    RatioExceeded,
    ProtectionExceedsAvailable,
    SwapInsufficient,
    OvercommittedBeyondSwap,
    SliceProtectionShort,
    Summary,
};
// The stable code for scripts: "no-memory-available", "ratio-exceeded",
// "protection-exceeds-available", "swap-insufficient",
// "overcommitted-beyond-swap", "slice-protection-short", "summary".
std::string_view toString(FindingCode c);
enum class Severity { Error, Warning, Info };
// "error", "warning", "info".
std::string_view toString(Severity s);
// A finding's severity as listed at verifyPlacement, before SwapCheck rates
// "swap-insufficient".
Severity defaultSeverity(FindingCode c);

// One finding with the numbers its wording needs: the node's figures, the
// protected memory (ProtectionExceedsAvailable) and the class
// (SliceProtectionShort).
struct Finding {
    FindingCode code = FindingCode::Summary;
    Severity severity = Severity::Info;
    PlacementFigures figures;
    Bytes protectedMin = 0;
    ClassCoverage coverage;

    friend bool operator==(const Finding&, const Finding&) = default;
};

// Whole-node check (memqosctl verify, D-Bus Verify). Findings, in this order:
//   error   "no-memory-available"        reserve + services ≥ MemTotal
//   error   "ratio-exceeded"             instances > ratio · available
//   error   "protection-exceeds-available" protectedMin > available
//   warning "swap-insufficient"          swapTotal < requiredSwap(available, ratio);
//                                        rated by swapCheck: an error under Refuse
//                                        (placements are refused then), info under Off
//   warning "overcommitted-beyond-swap"  available + swapTotal < instances + reserved
//   warning "slice-protection-short"     per class (in the given order) whose slice
//                                        memory.min or memory.low is below its members' sum
//   info    "summary"                    always, last: the node's numbers
// protectedMin: Σ memory.min of the protected classes' members that compete
// for `available` — the services' requests are already subtracted from it,
// so a caller that passes every member's memory.min counts services twice.
std::vector<Finding> verifyPlacement(const PlacementInput& in, Bytes protectedMin,
                                     const std::vector<ClassCoverage>& coverage,
                                     SwapCheck swapCheck = SwapCheck::Warn);

} // namespace memqos::core

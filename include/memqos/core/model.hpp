// SPDX-License-Identifier: Apache-2.0
#pragma once
// Classes and workloads: what memqos manages (doc/DESIGN.md §1).

#include "memqos/core/types.hpp"
#include "memqos/util/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memqos::core {

// Named numbers that explain a decision (D-Bus a{st}, journal fields), in a
// fixed order. Keys are snake_case with the unit in the name where it is not
// bytes ("ratio_permille").
using Numbers = std::vector<std::pair<std::string, std::uint64_t>>;

enum class WorkloadKind { Service, Scope, Vm };
std::string_view toString(WorkloadKind k);

// How a class protects its members' request from reclaim.
//  Min:  memory.min = request (never reclaimed; system, dedicated)
//  Low:  memory.low = request (best effort; shared)
//  None: no protection (reclaimed)
enum class Protection { Min, Low, None };
std::string_view toString(Protection p);

// A class's OOMScoreAdjust=: what memqos writes to its members'
// /proc/PID/oom_score_adj.
//  Fixed:     `value` (-1000..1000)
//  Burstable: kubelet's formula 1000 - 1000*request/MemTotal, in [3, 999]
//  Keep:      nothing: the processes keep the values their unit and they
//             themselves set (PostgreSQL's postmaster -1000 and backends 0),
//             and what memqos wrote before a reload switched the class to
//             keep is given back
struct OomScoreAdjust {
    enum class Mode { Fixed, Burstable, Keep };
    Mode mode = Mode::Burstable;
    int value = 0; // Fixed only

    constexpr OomScoreAdjust() = default;
    // A fixed value (implicit, so that `.oomScoreAdj = -999` reads as the
    // configuration says it).
    constexpr OomScoreAdjust(int fixed) // NOLINT(google-explicit-constructor)
        : mode(Mode::Fixed), value(fixed) {}
    static constexpr OomScoreAdjust burstable() { return {}; }
    static constexpr OomScoreAdjust keep() {
        OomScoreAdjust k;
        k.mode = Mode::Keep;
        return k;
    }
    constexpr bool keeps() const { return mode == Mode::Keep; }

    friend bool operator==(const OomScoreAdjust&, const OomScoreAdjust&) = default;
};

struct ClassPolicy {
    std::string name;
    // Importance: higher is more important. Victims are taken from the lowest
    // rank first; two classes may not share a rank.
    std::uint32_t rank = 0;
    Protection protection = Protection::None;
    // Kubernetes' memory throttling factor f (9000 = 0.9); nullopt = off,
    // i.e. the class sets no per-workload memory.high.
    std::optional<Permyriad> throttlingFactor;
    bool killable = false;
    // May members use swap? No -> memory.swap.max = 0.
    bool swap = false;
    // Fixed oom_score_adj, the Burstable formula, or keep (OomScoreAdjust).
    OomScoreAdjust oomScoreAdj;
    // Proactive reclaim (memory.reclaim) for members.
    bool reclaim = false;
    // Class-wide cap computed each tick (doc/DESIGN.md §4.5 "Memory guard").
    bool memoryGuard = false;

    // "memqos-<name>.slice"
    std::string slice() const;

    friend bool operator==(const ClassPolicy&, const ClassPolicy&) = default;
};

// The four embedded defaults of doc/DESIGN.md §1.2, in this order:
//   name       rank protection f     killable swap oom_score_adj reclaim guard
//   system     3    Min        off   no       no   -999          no      no
//   dedicated  2    Min        off   no       no   -997          no      no
//   shared     1    Low        0.9   yes      yes  Burstable     yes     no
//   reclaimed  0    None       off   yes      yes  1000          yes     yes
std::vector<ClassPolicy> defaultClasses();
// The class named `name` (exact, case-sensitive), or nullptr. The pointer is
// into `classes` and lives as long as it is not modified.
const ClassPolicy* findClass(const std::vector<ClassPolicy>& classes, std::string_view name);

// A workload: one systemd unit (service or scope) or one libvirt domain.
// id: the unit name ("nginx.service", "x.scope") or "vm:<domain name>".
struct Workload {
    std::string id;
    WorkloadKind kind = WorkloadKind::Service;
    std::string className;
    Bytes request = 0;         // 0 = no request
    Limit limit;               // nullopt = no limit
    std::int32_t priority = 0; // higher = more important within a class

    friend bool operator==(const Workload&, const Workload&) = default;
};

// Kind from an id, by shape only: "<x>.service" Service, "<x>.scope" Scope,
// "vm:<x>" Vm, each with a non-empty <x>; nullopt otherwise. It does not
// check the characters: use validateWorkloadId for input from outside.
std::optional<WorkloadKind> kindFromId(std::string_view id);

// Why a [Rule.*] may never adopt systemd unit `unit`, or nullopt when it may.
// Only services and scopes are workloads; a VM's scope ("machine-*.scope" of
// machined, "memqos-vm-*.scope" of Ganeti adoption) is managed as its VM;
// and the units the host needs to stay up or to reach memqosd (memqosd
// itself, init.scope, dbus and dbus-broker, systemd-*, users' sessions and
// managers) are never limited or killed by a glob. Pure: the daemon asks it
// on every path that adopts a unit by rule, --check-config to warn.
std::optional<std::string_view> ruleRefusal(std::string_view unit);

// Checks an id from outside (config, D-Bus) before it reaches systemd or
// libvirt. Errors (std::errc::invalid_argument) say what is wrong and quote
// the id with non-printable bytes escaped.
//  Unit names (systemd's unit_name_is_valid, restricted to what memqos
//  manages): 1..255 bytes; characters A-Z a-z 0-9 : _ . - @ and "\xNN"
//  escapes (backslash, 'x', two hex digits); suffix ".service" or ".scope"
//  after a non-empty prefix; no "/" and no ".."; not starting with "-" or
//  "."; at most one "@", not first, and not directly before the suffix (a
//  template such as "getty@.service" is not a running unit).
//  "vm:<name>": the libvirt domain name is 1..255 bytes without "/" and
//  without ASCII control characters (0x00-0x1f, 0x7f); bytes >= 0x80 are
//  allowed because libvirt accepts UTF-8 names.
Status validateWorkloadId(std::string_view id);

} // namespace memqos::core

// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one home of memqosd's pressure actions (doc/DESIGN.md §2.7, issue 23).
// The core decides on plain data (core::decide, core::decideProactive); the
// Manager turns a decision into an order and hands it to an Actuator, which
// acts (LiveActuator) or says what it would do (DryRunActuator), and answers
// with an Outcome: what ran, what failed, what it freed. The Manager keeps
// every piece of state (kill cooldown, set-asides, caps in force, balloon
// baselines, counters) and folds the outcome in; an actuator keeps none.
//
// Every call answers exactly once. Calls that return an Outcome answer
// within the call; calls with a callback answer later (after a worker, libvirt
// or systemd answered) or, when there is nothing to wait for (a dry run, no
// reclaim worker), within the call.
//
// Some orders carry a `prepare` hook: the Manager's bookkeeping that only a
// real action needs first (the record of processes' own oom_score_adj, the
// slice's own MemoryHigh learned before a first cap, memory reclaimed before
// a cap is lowered). The live actuator runs it and acts on what it returns;
// the dry run says what the order asks and never runs it, as memqosd did
// before the actuator.
//
// The actuator adds no door to systemd: its caps go through the Manager's
// one (Manager::sendProperties: someone else's drop-ins kept aside, memqos's
// marked), handed in as a PropertyDoor.

#include "memqos/core/types.hpp"
#include "memqos/io/cgroupfs.hpp"
#include "memqos/io/ganeti_kvm.hpp"
#include "memqos/io/hypervisor.hpp"
#include "memqos/io/kernel_knobs.hpp"
#include "memqos/io/reclaim_worker.hpp"
#include "memqos/io/systemd.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memqos::daemon {

struct Outcome {
    enum class Kind {
        Done,      // it happened (a reclaim: `freed` says how much)
        Unchanged, // the knob had the value already: nothing written
        Would,     // dry run: logged with "would", nothing done
        Deferred,  // nothing now: the order's prepare hook said not yet
        Failed,    // it did not happen: `error` says why
        Vanished,  // the cgroup, process, unit or domain is gone (no error)
    };
    Kind kind = Kind::Done;
    // memory.reclaim: what the kernel freed.
    Bytes freed = 0;
    // memory.reclaim: the kernel found less than asked (EAGAIN), or a cancel
    // stopped the write after a chunk.
    bool partial = false;
    std::string error; // Failed, and Vanished when a caller logs why
    // A cap: the MemoryHigh sent (the prepare hook may have chosen it).
    Bytes memoryHigh = 0;

    static Outcome done(Bytes freed = 0, bool partial = false) {
        return Outcome{Kind::Done, freed, partial, {}, 0};
    }
    static Outcome unchanged() { return Outcome{Kind::Unchanged, 0, false, {}, 0}; }
    static Outcome would() { return Outcome{Kind::Would, 0, false, {}, 0}; }
    static Outcome deferred() { return Outcome{Kind::Deferred, 0, false, {}, 0}; }
    static Outcome failed(std::string why) {
        return Outcome{Kind::Failed, 0, false, std::move(why), 0};
    }
    static Outcome vanished(std::string why = {}) {
        return Outcome{Kind::Vanished, 0, false, std::move(why), 0};
    }
    bool ok() const { return kind == Kind::Done || kind == Kind::Unchanged; }
};
std::string_view toString(Outcome::Kind k);

using OutcomeFn = std::function<void(Outcome)>;

// memory.reclaim of one cgroup, on the reclaim worker.
struct ReclaimOrder {
    enum class For {
        Class,     // the pressure ladder's reclaim of a guarded class (or before a cap)
        Proactive, // a step of proactive reclaim (core::decideProactive)
        Request,   // an operator's Reclaim
    };
    For what = For::Class;
    std::string cgroup;  // relative to the cgroup root
    Bytes bytes = 0;
    std::string subject; // the class name (Class) or the workload id
    std::uint32_t level = 0; // the pressure level (Class: a journal field)
};

// A class slice's MemoryHigh (the memory guard's cap or the throttle).
struct CapOrder {
    std::string className;
    std::string slice;
    Bytes memoryHigh = 0;  // what the decision asks
    std::string why;       // "guard", "throttle", "restore"
    std::string reason;    // the decision in words
    // Live only: the Manager's steps before the call (learn the slice's own
    // value first, reclaim first); returns the MemoryHigh to send now, or
    // nullopt when nothing is sent now (Outcome Deferred). Empty: memoryHigh.
    std::function<std::optional<Bytes>()> prepare;
};

// Gives a class slice its own MemoryHigh back.
struct CapGiveBack {
    std::string className;
    std::string slice;
    Limit own; // the slice's own MemoryHigh (none: infinity)
};

// A kill of a workload: cgroup.kill of its cgroup, or virDomainDestroy.
struct KillOrder {
    std::string workload;
    std::string className;
    std::string unit;
    std::string cgroup; // "" when not known (a live kill fails)
    std::string reason; // the decision in words ("kill batch.service: ...")
};

// A balloon move of a running VM.
struct BalloonOrder {
    std::string workload; // vm:<name>
    bool ganeti = false;  // Ganeti's HMP balloon, else libvirt's virDomainSetMemory
    Bytes from = 0;       // where memqos believes it is
    Bytes target = 0;
    std::string why;
};

// memory.oom.group of a workload's cgroup.
struct OomGroupOrder {
    std::string workload;
    std::string cgroup;
    bool on = true;
    // The dry run said it already for this workload (it says it once).
    bool said = false;
};

// oom_score_adj of a workload's processes: memqos's value, or each
// process's own value back.
struct ProcessWrite {
    std::int32_t pid = 0;
    int value = 0;
};
struct OomScoreOrder {
    std::string workload;
    int value = 0;              // memqos's value (setOomScoreAdj)
    std::size_t processes = 0;  // how many the dry run's line names
    std::string why;            // giveBackOomScoreAdj: why memqos lets go
    bool announce = true;       // the dry run says it (not said for this value yet)
    // Live only: the Manager's record of what each process has (kept before
    // any write); returns the writes to do, nullopt when nothing is to be
    // done at all.
    std::function<std::optional<std::vector<ProcessWrite>>()> prepare;
};
struct OomScoreOutcome {
    Outcome::Kind kind = Outcome::Kind::Done; // Would, Deferred (prepare: nothing) or Done
    std::vector<std::pair<ProcessWrite, Outcome>> writes; // each write's outcome (Done)
};

class Actuator {
public:
    virtual ~Actuator() = default;

    virtual void reclaim(const ReclaimOrder& order, OutcomeFn done) = 0;
    // Stops a write under way for `cgroup` after its chunk; its reclaim still
    // answers, with what was freed.
    virtual void cancelReclaim(const std::string& cgroup) = 0;
    virtual void setCap(const CapOrder& order, OutcomeFn done) = 0;
    // Done, Vanished (systemd no longer has the slice) or Failed.
    virtual void giveBackCap(const CapGiveBack& order, OutcomeFn done) = 0;
    // cgroup.kill: Done (the kernel took it), Vanished (the cgroup is gone),
    // Failed.
    virtual Outcome killCgroup(const KillOrder& order) = 0;
    // virDomainDestroy of vm:<name>: Done or Failed, later.
    virtual void destroyDomain(const KillOrder& order, OutcomeFn done) = 0;
    virtual void moveBalloon(const BalloonOrder& order, OutcomeFn done) = 0;
    // Done (written), Unchanged, Vanished, Failed.
    virtual Outcome setOomGroup(const OomGroupOrder& order) = 0;
    virtual OomScoreOutcome setOomScoreAdj(const OomScoreOrder& order) = 0;
    virtual OomScoreOutcome giveBackOomScoreAdj(const OomScoreOrder& order) = 0;
    // Admission closed (open=false) or reopened at pressure level `level`:
    // no io, but an action counted; Done, or Would under dry run.
    virtual Outcome admission(bool open, std::uint32_t level) = 0;
};

// Sends memory properties through the Manager's one door to systemd
// (Manager::sendProperties); `urgent`: ahead of queued calls.
using PropertyDoor = std::function<void(const std::string& unit, const io::MemoryProperties& props,
                                        bool urgent, std::function<void(Status)> done)>;

// Does it, through the io objects the Manager owns.
class LiveActuator final : public Actuator {
public:
    LiveActuator(io::KernelKnobs knobs, const io::CgroupFs& cgroups, PropertyDoor door);
    // nullptr: memory.reclaim is written within the call (tests).
    void setReclaimRunner(io::ReclaimRunner* runner) { runner_ = runner; }
    void setHypervisor(io::Hypervisor* hypervisor) { hypervisor_ = hypervisor; }
    void setGanetiKvm(io::GanetiKvm* kvm) { ganeti_ = kvm; }

    void reclaim(const ReclaimOrder& order, OutcomeFn done) override;
    void cancelReclaim(const std::string& cgroup) override;
    void setCap(const CapOrder& order, OutcomeFn done) override;
    void giveBackCap(const CapGiveBack& order, OutcomeFn done) override;
    Outcome killCgroup(const KillOrder& order) override;
    void destroyDomain(const KillOrder& order, OutcomeFn done) override;
    void moveBalloon(const BalloonOrder& order, OutcomeFn done) override;
    Outcome setOomGroup(const OomGroupOrder& order) override;
    OomScoreOutcome setOomScoreAdj(const OomScoreOrder& order) override;
    OomScoreOutcome giveBackOomScoreAdj(const OomScoreOrder& order) override;
    Outcome admission(bool open, std::uint32_t level) override;

private:
    OomScoreOutcome writeAll(const OomScoreOrder& order) const;
    io::KernelKnobs knobs_;
    const io::CgroupFs& cgroups_; // the Manager's: its kept descriptors, not a copy of them
    PropertyDoor door_;
    io::ReclaimRunner* runner_ = nullptr;
    io::Hypervisor* hypervisor_ = nullptr;
    io::GanetiKvm* ganeti_ = nullptr;
};

// DryRun=yes (or --dry-run): does nothing, logs the "Would …" line of each
// order and answers Would.
class DryRunActuator final : public Actuator {
public:
    void reclaim(const ReclaimOrder& order, OutcomeFn done) override;
    void cancelReclaim(const std::string& cgroup) override;
    void setCap(const CapOrder& order, OutcomeFn done) override;
    void giveBackCap(const CapGiveBack& order, OutcomeFn done) override;
    Outcome killCgroup(const KillOrder& order) override;
    void destroyDomain(const KillOrder& order, OutcomeFn done) override;
    void moveBalloon(const BalloonOrder& order, OutcomeFn done) override;
    Outcome setOomGroup(const OomGroupOrder& order) override;
    OomScoreOutcome setOomScoreAdj(const OomScoreOrder& order) override;
    OomScoreOutcome giveBackOomScoreAdj(const OomScoreOrder& order) override;
    Outcome admission(bool open, std::uint32_t level) override;
};

} // namespace memqos::daemon

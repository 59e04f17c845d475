// SPDX-License-Identifier: Apache-2.0
#pragma once
// The daemon's state and the operations behind the D-Bus API. Effects go
// through small interfaces (SystemdManager, StateStore, CgroupFs/ProcFs
// roots), so the whole class runs against mocks and fixture trees in tests.
// Everything runs on the io thread; replies are callbacks that run later.

#include "actuator.hpp"
#include "api_error.hpp"
#include "metrics.hpp"
#include "reconcile.hpp"

#include "memqos/config/config.hpp"
#include "memqos/core/placement.hpp"
#include "memqos/core/pressure.hpp"
#include "memqos/core/proactive.hpp"
#include "memqos/core/tiers.hpp"
#include "memqos/io/cgroupfs.hpp"
#include "memqos/io/event_store.hpp"
#include "memqos/io/ganeti_kvm.hpp"
#include "memqos/io/hypervisor.hpp"
#include "memqos/io/kernel_knobs.hpp"
#include "memqos/io/metrics_writer.hpp"
#include "memqos/io/oom_store.hpp"
#include "memqos/io/procfs.hpp"
#include "memqos/io/reclaim_worker.hpp"
#include "memqos/io/drop_ins.hpp"
#include "memqos/io/state_store.hpp"
#include "memqos/io/state_writer.hpp"
#include "memqos/io/systemd.hpp"
#include "memqos/wording/placement.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace memqos::daemon {

// Why memqos manages a workload.
enum class Source {
    Api,   // AssignWorkload / RunWorkload (kept in the state store)
    Rule,  // a [Rule.*] of the configuration matched the unit name
    Slice, // the unit runs inside a class slice
    // VMs only:
    Metadata, // the libvirt domain's memqos metadata
    Default,  // [VM] DefaultClass
    // A VM that nothing placed (no metadata, rule, Ganeti tag or
    // AssignWorkload, and [VM] DefaultClass empty): observed only. It is
    // listed (class "", Source "unplaced") and its usage is read and counted
    // (Verify, the memory guard), but memqos sends it no properties, writes
    // none of its knobs (memory.reclaim, oom_score_adj, memory.oom.group),
    // never moves its balloon down and never kills it. A Ganeti instance is
    // not moved into a scope. Memory properties memqos set before (an older
    // default placed it) are given back.
    Unplaced,
};
std::string_view toString(Source s);

// A VM workload's id from its libvirt domain or Ganeti instance name, and back.
inline std::string vmId(const std::string& name) { return "vm:" + name; }
inline std::string vmName(const std::string& id) { return id.substr(3); }

// Who runs a VM workload.
enum class VmBackend { Libvirt, Ganeti };

// A VM workload's own state (ManagedWorkload::vm).
struct VmState {
    VmBackend backend = VmBackend::Libvirt;
    bool running = false;
    Bytes memory = 0; // the guest's memory (libvirt <memory>, Ganeti maxmem)
    // The balloon as last reported, what memqos last asked for, and what it
    // was before memqos first shrank it (given back in steps, then cleared).
    std::optional<Bytes> balloonActual;
    std::optional<Bytes> balloonUsable;
    std::optional<Bytes> balloonTarget;
    std::optional<Bytes> balloonBaseline;
    std::optional<TimePoint> balloonMovedAt;
    bool balloonBusy = false; // a stats read or move is on its way
    std::int32_t pid = 0;      // Ganeti: the qemu adopted (or being adopted)
    bool adopting = false;     // Ganeti: StartTransientUnit on its way
};

struct ManagedWorkload;
// Source::Unplaced: memqos must not act on it.
bool observedOnly(const ManagedWorkload& m);

struct ManagedWorkload {
    core::Workload workload;
    bool persistent = false;
    Source source = Source::Api;
    std::string unit;       // systemd unit ("" until known)
    std::string cgroupPath; // relative, no leading '/' ("" until the unit runs)
    bool loaded = true;     // systemd knows the unit (LoadState "loaded")
    bool transient = false; // started by RunWorkload: gone for good once removed
    core::Tiers tiers;
    // Its usage at the last read that decisions take it from: its OOM
    // priority's repair turn, every tick while a kill is near (killNear())
    // and, for an unplaced workload (counted by the memory guard), its
    // sweep turn. The D-Bus properties read it anew (workloadUsage).
    Bytes memoryCurrent = 0;
    Bytes swapCurrent = 0;
    // memory.pressure "full" total (µs), read every tick while its class
    // stalls at its cap (PressureState::stallSince): the class-stall rule
    // kills only a workload that stalls itself. nullopt otherwise.
    std::optional<std::uint64_t> fullStallUsec;
    bool present = false; // its cgroup existed at the last read
    // OOM priority last set (or, under dry run, announced): the value and
    // the processes it was checked on.
    std::optional<int> oomScoreAdj;
    bool oomGroupNoted = false;
    // memqosd itself turned its memory.oom.group from 0 to 1 (this run):
    // put back to 0 at stop (giveBackOnStop).
    bool oomGroupSet = false;
    // Read its processes and keep its OOM priority at the next tick (new,
    // or its unit started, restarted or reloaded) instead of at its turn.
    bool oomDue = true;
    std::optional<VmState> vm; // set for "vm:" workloads
};

// Nothing placed it (no metadata, rule, tag, AssignWorkload or [VM]
// DefaultClass): observed only, no class and no tiers.
inline void markUnplaced(ManagedWorkload& m) {
    m.source = Source::Unplaced;
    m.workload.className.clear();
    m.workload.request = 0;
    m.workload.limit = Limit{};
    m.workload.priority = 0;
}

// The managed workloads by id, counting the times one was added or
// removed (revision): the bus service compares its objects with the map
// only when that count moved, not after every tick and dispatch (issue 25).
// The map is held privately: ids change only through operator[] and erase,
// which count; everything else is reading (or changing a workload's value).
// Every way to a workload that may change it (operator[], the non-const
// find, at, begin, lower_bound, upper_bound, erase) also counts in
// touches(): a light tick keeps the last snapshot of the workloads while
// nothing touched them since (Manager::snapshotKept).
class WorkloadMap : private std::map<std::string, ManagedWorkload> {
    using Base = std::map<std::string, ManagedWorkload>;

public:
    using Base::const_iterator;
    using Base::iterator;
    using Base::key_type;
    using Base::mapped_type;
    using Base::size_type;
    using Base::value_type;
    using Base::cbegin;
    using Base::cend;
    using Base::contains;
    using Base::count;
    using Base::empty;
    using Base::end;
    using Base::size;

    const_iterator begin() const { return Base::begin(); }
    iterator begin() {
        ++touches_;
        return Base::begin();
    }
    const_iterator find(const std::string& id) const { return Base::find(id); }
    iterator find(const std::string& id) {
        ++touches_;
        return Base::find(id);
    }
    const ManagedWorkload& at(const std::string& id) const { return Base::at(id); }
    ManagedWorkload& at(const std::string& id) {
        ++touches_;
        return Base::at(id);
    }
    const_iterator lower_bound(const std::string& id) const { return Base::lower_bound(id); }
    iterator lower_bound(const std::string& id) {
        ++touches_;
        return Base::lower_bound(id);
    }
    const_iterator upper_bound(const std::string& id) const { return Base::upper_bound(id); }
    iterator upper_bound(const std::string& id) {
        ++touches_;
        return Base::upper_bound(id);
    }
    ManagedWorkload& operator[](const std::string& id) {
        const std::size_t before = size();
        ManagedWorkload& w = Base::operator[](id);
        revision_ += size() - before;
        ++touches_;
        return w;
    }
    iterator erase(iterator it) {
        ++revision_;
        ++touches_;
        return Base::erase(it);
    }
    iterator erase(const_iterator it) {
        ++revision_;
        ++touches_;
        return Base::erase(it);
    }
    size_type erase(const std::string& id) {
        const size_type n = Base::erase(id);
        revision_ += n;
        ++touches_;
        return n;
    }
    // The map to read (Manager::workloads()).
    const Base& all() const { return *this; }
    // The map for the tick's sampling (Manager::sampleWorkloads), which
    // changes only what the workloads' reads found: not counted.
    Base& forSampling() { return *this; }
    std::uint64_t revision() const { return revision_; }
    std::uint64_t touches() const { return touches_; }

private:
    std::uint64_t revision_ = 0;
    std::uint64_t touches_ = 0;
};

// What the D-Bus layer wants to hear.
class Listener {
public:
    virtual ~Listener() = default;
    virtual void managerPropertiesChanged(const std::vector<const char*>& names) = 0;
    virtual void pressureLevelChanged(std::uint32_t level, const std::string& reason) = 0;
    // memqosd killed a workload (its cgroup.kill was written, or libvirt
    // destroyed it); emit WorkloadKilled(id, class, reason, numbers).
    virtual void workloadKilled(const io::KillRecord& record) = 0;
    // A workload's own properties changed (balloon moved).
    virtual void workloadChanged(const std::string& id) { (void)id; }
    // A tick ended (it may have found or lost workloads: VMs, Ganeti scan).
    virtual void ticked() {}
};

// Re-reads the configuration (Reload, SIGHUP): the validated config, or the
// problems that make it invalid.
using ConfigReader = std::function<Result<config::Config>()>;

class Manager {
public:
    // Reading workloads' cgroups is a tick's main cost with many workloads,
    // so a tick reads only what a decision takes (issue 25). Their OOM
    // priority (cgroup.procs, memory.oom.group, each process's
    // oom_score_adj, with memory.current and memory.swap.current) is
    // repaired in turn on a slow clock, one workload a tick (each within as
    // many ticks as there are workloads), and at the next tick for a
    // workload that is due (oomDue: its unit started, restarted or was
    // placed); while a kill is near (killNear(): level 2 or above, level 3's
    // condition building up, or a class stalling), the usage of every
    // workload of a killable class at every tick, for the victim ranking. Only an unplaced
    // workload's usage, which the memory guard counts, is read at its sweep
    // turn (at most kMaxSweepPerTick a tick, each at least every
    // kSweepTicks ticks while there are at most 500). The D-Bus properties
    // read a workload's usage when asked (workloadUsage).
    // The most PID 1 may reclaim when systemd writes a lowered memory.high.
    static constexpr Bytes kPid1ReclaimSlack = Bytes{2} << 20U;
    static constexpr std::size_t kSweepTicks = 10;
    // The OOM priority's repair turn: one workload every this many ticks
    // (each within kRepairTicks × workloads ticks; issue 25: its reads,
    // cgroup.procs and two /proc files a process, were a fifth of a quiet
    // tick at 1000 workloads, one a tick).
    static constexpr std::size_t kRepairTicks = 2;
    static constexpr std::size_t kKeptFilesTicks = 300; // see tick()
    // A Ganeti qemu that started more than this after its pidfile was
    // written did not write it (ganetiQemu); seconds, room for clock steps.
    static constexpr std::int64_t kPidfileSlack = 600;
    // How many ticks an assignment's reply waits at most for systemd to
    // answer the properties of the unit and its slices (whenProtected).
    static constexpr std::uint64_t kSettleTicks = 10;
    static constexpr std::size_t kMaxSweepPerTick = 50;
    // Proactive reclaim looks at no more than this many workloads a tick
    // (reads their memory.current and memory.pressure, decides a step):
    // with more due, the others wait for the next tick, in turn
    // (reclaimCursor_), so a workload's interval stretches to about
    // workloads / kReclaimTurnsPerTick ticks rather than each tick reading
    // hundreds of files (issue 25). The tick that ends a run of light ticks
    // (snapshotKept) has that many turns for each tick of the run.
    static constexpr std::size_t kReclaimTurnsPerTick = 32;
    // At most this many ticks in a row keep the snapshot (snapshotKept).
    static constexpr std::size_t kMaxLightRun = 5;
    static constexpr double kPressureAnnounceStep = 0.1;

    template <typename T>
    using Reply = std::function<void(ApiResult<T>)>;

    Manager(config::Config config, ConfigReader reader, io::SystemdManager& systemd,
            io::StateStore& store, io::InstanceStore& instanceStore, io::EventStore& events,
            io::CgroupFs cgroups, io::ProcFs proc, bool dryRun);

    void setListener(Listener* listener) { listener_ = listener; }
    // libvirt (nullptr: no libvirt; [VM] LibvirtURI=""). Set before start().
    void setHypervisor(io::Hypervisor* hypervisor) {
        hypervisor_ = hypervisor;
        liveBuiltIn_.setHypervisor(hypervisor);
    }
    // Ganeti's KVM hypervisor (nullptr: not a Ganeti node). Set before start().
    void setGanetiKvm(io::GanetiKvm* kvm) {
        ganeti_ = kvm;
        liveBuiltIn_.setGanetiKvm(kvm);
    }
    // Where memqos remembers what units' own configuration gave before its
    // first change (nullptr: in memory only). Set before start().
    void setOriginalStore(io::OriginalStore* store) { originalStore_ = store; }
    // Where systemd writes runtime drop-ins (SetUnitProperties runtime=true);
    // memqos marks its own there, and gives a unit back by removing them.
    // (a transient unit's are in the transient directory, also given here).
    void setRuntimeDropInDir(std::filesystem::path dir,
                             std::optional<std::filesystem::path> transientDir = std::nullopt) {
        std::vector<std::filesystem::path> dirs{std::move(dir)};
        if (transientDir) {
            dirs.push_back(std::move(*transientDir));
        }
        dropIns_ = io::RuntimeDropIns(std::move(dirs));
    }
    // This boot's id (/proc/sys/kernel/random/boot_id): a record of a unit's
    // own values made in another boot is not trusted. Set before start().
    void setBootId(std::string id) { bootId_ = std::move(id); }
    // Where memqos remembers what each process of a workload had in
    // oom_score_adj before its first change (nullptr: in memory only), under
    // the runtime directory: pids do not outlive a boot. Set before start().
    void setOomStore(io::OomStore* store) { oomStore_ = store; }
    // Runs proactive memory.reclaim writes off the loop (nullptr: in the
    // tick itself, for tests). Set before start().
    void setReclaimRunner(io::ReclaimRunner* runner) { liveBuiltIn_.setReclaimRunner(runner); }
    // Runs the stores' writes (assignments, instance records, units' own
    // values), in call order, off the loop (default: inline, for tests).
    // Set before start().
    void setStateWriter(io::StateWriter* writer) { writer_ = writer; }
    // How many fds the workloads' cgroup files keep open (the benchmark).
    std::size_t keptWorkloadFiles() const noexcept { return cgroups_.workloadFiles(); }
    // The actuators of pressure actions (actuator.hpp), for tests: `live`
    // acts, `dryRun` is used while DryRun is on; nullptr: the built-in one
    // (LiveActuator on the io objects above, DryRunActuator). Not owned.
    void setActuators(Actuator* live, Actuator* dryRun);
    // Writes the metrics file off the loop (nullptr: in the tick itself,
    // for tests). Set before start().
    void setMetricsWriter(io::MetricsWriter* writer) { metricsWriter_ = writer; }
    // Runs at the end of every reload that took a new configuration (Reload
    // over D-Bus, memqosctl reload, SIGHUP: all go through reload()): what
    // the daemon's loop holds outside the Manager follows it (the PSI
    // triggers of the new thresholds and classes).
    void setReloadHook(std::function<void()> hook) { reloadHook_ = std::move(hook); }

    // A balloon is moved at most this often per VM, by at most
    // kBalloonStep of the VM's memory (and, when shrinking, of the
    // guest's usable memory) per move.
    static constexpr Usec kBalloonGap = std::chrono::seconds(3);
    static constexpr Permyriad kBalloonStep = 2500; // 25 %

    // Loads persisted assignments, samples the node, subscribes to systemd,
    // discovers rule and slice workloads; `ready` runs once systemd answered.
    void start(std::function<void(Status)> ready);

    // One tick: sample node and cgroups, keep every workload's OOM priority
    // (oom_score_adj, memory.oom.group) right, run the pressure ladder and
    // execute its decisions (doc/DESIGN.md §4.2): reclaim, class caps through
    // systemd, kills by writing the victim's cgroup.kill (a libvirt VM:
    // virDomainDestroy first, cgroup.kill of its scope when libvirt has not
    // answered within kDestroyPatience or failed). Every action goes
    // through the current Actuator (actuator.hpp); under dry run that is the
    // DryRunActuator: each action is logged with "would" and nothing is
    // written. A kill that failed does not start the kill cooldown (a dry
    // run's would-be kill keeps it).
    // The next tick was started early by a PSI trigger (counted in the
    // metrics file: memqos_psi_triggered_ticks_total).
    void triggeredTick() { ++triggeredTicks_; }
    void tick(TimePoint now);

    // libvirt gets this long to answer virDomainDestroy (checked at the
    // ticks after it) before memqosd writes cgroup.kill of the VM's scope.
    static constexpr Usec kDestroyPatience = std::chrono::seconds(1);
    // A workload whose kill failed is no victim for this many KillCooldowns
    // (5 minutes at the default 15 s): such failures last (libvirtd down and
    // the scope's cgroup.kill refused, a threaded cgroup, a kernel without
    // cgroup.kill), and trying it again at every tick would block every
    // kill; 20 cooldowns let up to 20 other kills happen first, then it is
    // tried again in case the cause went away.
    static constexpr int kSetAsideCooldowns = 20;

    // --- D-Bus API (see dbus/org.memqos1.Manager.xml) ---
    void assign(const std::string& id, const std::string& className, Bytes request, Bytes limit,
                bool persist, Reply<std::string> reply);
    void unassign(const std::string& id, Reply<Done> reply);
    // Release (memqosctl release --all; the package's prerm on remove):
    // every workload memqos changed is unassigned (its stored assignment
    // removed, its unit given back), memqosd then changes nothing more
    // (no adoption, reconcile or pressure action), and the release hook
    // stops it (the stop gives back the class caps and memory.oom.group).
    // Answers the ids given back.
    void releaseAll(Reply<std::vector<std::string>> reply);
    bool released() const { return released_; }
    // Run after releaseAll answered: memqosd stops (service.cpp).
    void setReleaseHook(std::function<void()> hook) { releaseHook_ = std::move(hook); }
    void run(const std::string& name, const std::string& className, Bytes request, Bytes limit,
             const std::vector<std::string>& argv, Reply<std::string> reply);
    struct PlacementRequest {
        std::optional<Bytes> failoverReserve; // overrides [Overcommit] FailoverReserve
        bool refuseSoft = false;              // a soft violation is hard
        std::string instance; // the candidate's name: its own record is not counted
        // The class the VM will run in: while admission is closed only a
        // killable class is refused. "" = the class memqosd gives it (its
        // workload's, else a [Rule.*] for vm:<instance>, else [VM]
        // DefaultClass). nullopt (callers before the option existed): every
        // candidate is taken to land in a killable class.
        std::optional<std::string> className;
    };
    // A verdict as VerifyPlacement answers it: the core's kind and numbers
    // with its wording, or the refusal of closed admission.
    struct PlacementAnswer {
        core::VerdictKind kind = core::VerdictKind::Hard;
        std::string message;
        core::Numbers numbers;
    };
    PlacementAnswer verifyPlacement(Bytes memory, Bytes minMemory,
                                    const PlacementRequest& request) const;
    // UnknownClass when `className` names no class (AssignWorkload's
    // check, for VerifyPlacement's "class" option).
    std::optional<ApiError> unknownClass(const std::string& className) const;
    std::vector<wording::FindingText> verify() const;
    // Re-reads the configuration. Every key takes effect at once except the
    // start-only ones (config/reload.hpp), which keep their running values;
    // the answer lists them ("Manager.StateDirectory needs a restart: ..."),
    // as does the journal. DryRun switches both ways, unless --dry-run was
    // given (then it stays on, and the answer says so).
    ApiResult<std::vector<std::string>> reload();
    // The instance record (Ganeti's state of record on this node); stored
    // first, so a refused call changes nothing, and answered once the
    // record is on disk.
    void recordInstance(const std::string& name, Bytes minMemory, Bytes maxMemory, bool up,
                        Reply<Done> reply);
    void forgetInstance(const std::string& name, Reply<Done> reply);
    // An operator's one-off reclaim of `bytes` from a running workload
    // (Reclaim): the bytes freed, or a named error. Under dry run nothing is
    // written and the answer is 0 (the journal says "would").
    void reclaimNow(const std::string& id, Bytes bytes, Reply<Bytes> reply);
    // Unless `force`: never below the workload's request (`bytes` is cut to
    // memory.current − request; nothing above it is AtFloor), and not while
    // proactive reclaim is backed off or paused for it (BackedOff); a write
    // under way stops after its chunk when the controller backs off.
    void reclaimNow(const std::string& id, Bytes bytes, bool force, Reply<Bytes> reply);
    const std::map<std::string, core::Instance>& instances() const { return instances_; }
    // Σ max_memory of the up instances in the record, without [Overcommit]
    // VMOverhead (saturating): Manager UpInstancesMaxMemory, memqosctl
    // status's "Max memory of up instances".
    Bytes upInstancesMaxMemory() const;
    // The kill history, oldest first (ListKills, memqosctl events).
    const std::deque<io::KillRecord>& kills() const { return events_.records(); }

    // --- state for properties ---
    const config::Config& config() const { return config_; }
    const std::map<std::string, ManagedWorkload>& workloads() const { return workloads_.all(); }
    // Moves whenever a workload is added or removed (WorkloadMap).
    std::uint64_t workloadsRevision() const { return workloads_.revision(); }
    std::uint64_t ticks() const { return ticks_; } // ticks so far (tests: the sweep turn)
    std::uint64_t lightTickCount() const { return lightTickCount_; } // light ticks so far
    // Ticks that kept the snapshot but ran proactive reclaim's pass (it was
    // behind) so far.
    std::uint64_t keptTickCount() const { return keptTickCount_; }
    std::vector<std::string> workloadsOfClass(const std::string& className) const;
    Bytes memoryTotal() const { return system_.mem.memTotal; }
    Bytes memoryAvailable() const { return system_.mem.memAvailable; }
    Bytes swapTotal() const { return system_.mem.swapTotal; }
    Bytes swapFree() const { return system_.mem.swapFree; }
    Bytes nodeReserved() const;
    std::uint32_t pressureLevel() const { return pressure_.level; }
    bool admissionOpen() const { return pressure_.admissionOpen; }
    bool dryRun() const { return dryRun_; }
    Bytes classMemoryCurrent(const std::string& className) const;
    // memory.current, memory.swap.current and memory.pressure "some" avg10
    // (percent) of a cgroup, read when asked (the D-Bus properties), not by
    // the ticks (issue 25); 0 without a cgroup, once it is gone or without
    // PSI.
    struct CgroupUsage {
        Bytes memoryCurrent = 0;
        Bytes swapCurrent = 0;
        double memoryPressure = 0;
    };
    // The class slice's memory.swap.current and memory.pressure "some"
    // avg10, read when asked; 0 for no such class or slice.
    Bytes classSwapCurrent(const std::string& className) const;
    double classMemoryPressure(const std::string& className) const;
    // A workload's cgroup, read when asked.
    CgroupUsage workloadUsage(const ManagedWorkload& w, bool withPressure) const;
    // /proc/pressure/memory avg10 (percent) at the last sample: "some" and
    // "full"; 0 without PSI ("full" 0 too when the kernel has no full line).
    double memoryPressureSome() const;
    double memoryPressureFull() const;
    // The proactive reclaim controller's view of a workload (nullopt: none
    // yet), and the memory the lowest-ranked class may use now without
    // touching the others (core::reclaimedAllocatable, at the last tick).
    std::optional<core::WorkloadReclaim> reclaimOf(const std::string& id) const;
    Bytes reclaimedAllocatable() const { return reclaimedAllocatable_; }
    // reclaimOf without a copy (nullptr: none), and all of them by workload
    // id (the bus service's comparison walks them beside workloads()).
    const core::WorkloadReclaim* reclaimState(const std::string& id) const {
        const auto it = reclaim_.find(id);
        return it == reclaim_.end() ? nullptr : &it->second;
    }
    const std::map<std::string, core::WorkloadReclaim>& reclaimStates() const { return reclaim_; }

    // Stop (SIGTERM): gives back what memqosd set outside the units' own
    // configuration and what would otherwise stay until reboot: every class
    // slice's MemoryHigh cap (the guard's or a throttle; the slice's own
    // configured MemoryHigh again, through systemd) and memory.oom.group
    // where this run of memqosd set it. `done` runs once systemd answered
    // each call (or refused it), never inside this call unless there was
    // nothing to wait for; the caller bounds the wait (a stuck PID 1).
    void giveBackOnStop(std::function<void()> done);
    // Classes whose slice carries a MemoryHigh memqos set (tests).
    const std::map<std::string, std::string>& capped() const { return capped_; }

    // Units memqos sent properties to, with what it sent (tests, Verify).
    const std::map<std::string, io::MemoryProperties>& applied() const { return applied_; }

private:
    CgroupUsage readUsage(std::string_view cgroup, bool withPressure) const;
    ApiResult<core::Workload> validate(const std::string& id, const std::string& className,
                                       Bytes request, Bytes limit) const;
    // validate, then the class's admission (closed at pressure level ≥ 1 for
    // a killable class): what RunWorkload checks first. AssignWorkload
    // validates, then checks admission only once it knows the workload does
    // not run (admissionRefusalUnlessRunning).
    ApiResult<core::Workload> admit(const std::string& id, const std::string& className,
                                    Bytes request, Bytes limit) const;
    Result<core::Tiers> tiersFor(const core::Workload& w) const;
    void recomputeTiers();
    void refreshUnit(const std::string& id, std::function<void()> then);
    void refreshAllThenReconcile();
    // Refreshes each of `ids` (state, cgroup path), then reconciles once,
    // after the last answer (at once when `ids` is empty).
    void refreshThenReconcile(const std::vector<std::string>& ids);
    void onUnitStarted(const std::string& unit);
    void onUnitRemoved(const std::string& unit);
    void onSystemdReloaded();
    // Adopts the .service/.scope units inside class slices that are not
    // workloads yet (from cgroupfs, not from systemd), with `onlyPopulated`
    // only those with processes; how many.
    std::size_t adoptFromClassSlices(bool onlyPopulated);
    void adopt(const std::string& unit, const std::string& cgroupPath, Source source);
    // After a reload: units adopted by a [Rule.*] take the class, request,
    // limit and priority of the rule that matches them now; one no rule
    // matches any more is managed by its class slice if it runs in one,
    // else let go (its own values back). Running units that a rule matches
    // now are adopted (a ListUnits answer, later); then reconcile.
    void rederiveRules();
    std::optional<std::string> classOfCgroup(const std::string& cgroupPath) const;
    // ruleFor for a systemd unit: nullptr for what no rule may adopt
    // (core::ruleRefusal).
    const config::WorkloadRule* unitRuleFor(const std::string& unit) const;
    const config::WorkloadRule* ruleFor(const std::string& unit) const;
    void reconcile();
    // The protection claimed by the cgroups memqos does not manage below
    // the workloads' ancestors (their memory.min/low now).
    std::vector<core::CgroupProtection> otherClaims(const std::vector<PlacedTiers>& placed) const;
    // Units memqos created itself (RunWorkload's services, Ganeti
    // instances' scopes): they have no configuration of their own to give
    // back.
    bool createdByMemqos(const std::string& unit) const;
    // What the unit's own configuration (or anyone but memqos) gives now,
    // from what systemd has (`current`): a property whose runtime drop-in is
    // memqos's and sets the value systemd has is memqos's (the record keeps
    // the unit's own); any other value is the unit's own, learned. Stored
    // persistently; `then` gets the result once the record is on disk (at
    // once when nothing changed); an error means memqos must not change
    // the unit.
    void learnOwn(const std::string& unit, const io::MemoryProperties& current,
                  std::function<void(Status)> then);
    // AssignWorkload of a service, once the unit's own values are
    // recorded: stores the assignment, then sets its tiers.
    // UnassignWorkload, once the stored assignment is removed.
    void unassignStored(const std::string& id, Reply<Done> reply);
    // AssignWorkload of a Ganeti instance, once the assignment is stored.
    void assignGanetiStored(const core::Workload& w, bool persist, Reply<std::string> reply);
    void storeThenAssign(const core::Workload& w, const core::Tiers& t, bool persist,
                         std::string cgroup, Reply<std::string> reply);
    // A store's write (a save or remove) on the state writer, after every
    // one asked for before it; `then` runs on the loop with its result.
    void writeState(io::StateWriter::Op op, std::function<void(Status)> then);
    // A write a D-Bus call waits on ("state first", doc/DESIGN.md §2.3):
    // `next` (which answers the call) runs once the record is on disk; a
    // failed write answers `reply` with StateWriteFailed ("cannot <what>:
    // <error>; nothing was changed ...") instead. T: std::string or Done.
    template <typename T>
    void storeThen(io::StateWriter::Op op, std::string what, Reply<T> reply,
                   std::function<void()> next);
    // The same where nothing waits on the result: a failure is logged as
    // "Cannot <what>: <error>" (`what` names the record), as an error or,
    // !asError, a warning.
    void writeStateOrLog(io::StateWriter::Op op, std::string what, bool asError = true);
    // Looks the unit up and learns its own memory properties, then
    // reconciles.
    void learnOriginal(const std::string& unit);
    // Calls `then` once the workload's unit and the slices above it have no
    // SetUnitProperties on its way and no lookup for their own values: an
    // assignment is answered when its protection and its ancestors' sums
    // are in place (or systemd said no to them), not when they were sent.
    // At most kSettleTicks ticks: a PID 1 that answers nothing does not
    // keep the caller waiting for ever.
    void whenProtected(const std::string& id, std::function<void()> then);
    void checkSettled();
    struct SettleWaiter {
        std::vector<std::string> units;
        std::function<void()> then;
        std::uint64_t sinceTick = 0;
    };
    std::vector<SettleWaiter> settleWaiters_;
    // Records loaded at start: one from another boot (or older, with none of
    // its drop-ins left) is dropped; drop-ins an older memqosd wrote before
    // it marked them are marked.
    void takeStoredOriginals(std::vector<io::UnitOriginal> records);
    // A daemon-reload, shared by the give-backs that ask while one is on its
    // way or waiting.
    void reloadSystemd(std::function<void(Status)> then);
    // After systemd reloaded: what memqos believes it applied is what
    // systemd has now, then the tiers (only what differs is sent).
    void syncAppliedThenReconcile();
    // Drops the unit's record (memory and disk) without touching the unit.
    void forgetOriginal(const std::string& unit);
    // Gives the unit back what its own configuration gives (its remembered
    // properties; a slice only MemoryMin/MemoryLow) and forgets the record
    // (keepRecord: keeps it, for a cap slice: see capSlice).
    void restoreOriginal(const std::string& unit, std::function<void()> then,
                         bool keepRecord = false);
    // Before memqos's call overwrites them: someone else's runtime drop-ins
    // of the properties in `props` are kept aside; after it succeeded:
    // memqos's are marked (io::RuntimeDropIns).
    void keepOthersDropIns(const std::string& unit, const io::MemoryProperties& props) const;
    // The one way memqos sends SetUnitProperties: someone else's drop-ins
    // kept aside first, memqos's marked once systemd answered.
    void sendProperties(const std::string& unit, const io::MemoryProperties& props, bool urgent,
                        std::function<void(Status)> done);
    void markOwnDropIns(const std::string& unit, const io::MemoryProperties& props) const;
    // Gives back the drop-ins of `keys`: someone else's kept copy in place,
    // memqos's own removed. Returns whether a file changed.
    bool giveBackDropIns(const std::string& unit, const std::vector<io::MemoryKey>& keys) const;
    void startClassSlices();
    void startClassSlice(const std::string& slice);
    void startUnstartedSlices();
    void sampleSystem();
    // Live numbers; instances leave out the one named `exclude`.
    core::PlacementInput placementInput(std::string_view exclude = {}) const;
    std::vector<core::Instance> recordedInstances() const;
    // Announces UpInstancesMaxMemory when it is no longer `before`.
    void instanceRecordChanged(Bytes before);
    // Refuses a placement into `cls` while admission is closed (killable
    // classes only; nothing is refused under dry run).
    std::optional<ApiError> admissionRefusal(const core::ClassPolicy& cls) const;
    // Admission control is for what would add memory: a new placement. A
    // workload that already runs (a unit with a cgroup, a running domain, a
    // Ganeti instance whose qemu runs) adds none when its class changes, so
    // it is never refused (the Ganeti post-hook's AssignWorkload of the
    // instance it just started or moved here). Else admissionRefusal.
    std::optional<ApiError> admissionRefusalUnlessRunning(const std::string& className,
                                                          bool running) const;
    // The instance's qemu runs (its pidfile names a live process that is
    // the instance's qemu: ganetiQemu).
    bool ganetiRunning(const std::string& name) const;
    // The class a placement request lands in (PlacementRequest::className);
    // nullptr when the request does not say.
    const core::ClassPolicy* placementClass(const PlacementRequest& request) const;
    // --- OOM priority (oom_priority.cpp) ---
    // Sets the class's oom_score_adj on the workload's processes `procs`
    // (and memory.oom.group=1 for a killable class), remembering first what
    // each process had (oomRecords_): a process memqos sees for the first
    // time keeps its own value as its original, unless it has memqos's
    // value already (forked after memqos's change: it inherited it), then
    // the record's base; a process whose value someone else changed since
    // memqos's write gets that value as its new original (and memqos's
    // value again). A class with OOMScoreAdjust=keep gets no writes.
    void keepOomPriority(ManagedWorkload& m, const std::vector<std::int32_t>& procs);
    // Live only (OomScoreOrder::prepare): what each process has now and
    // its record, stored before any write; the writes to do (`had`: each
    // one's value before), nullopt when there is no process and no record.
    std::optional<std::vector<ProcessWrite>> recordOomPriority(
        const ManagedWorkload& m, const std::vector<std::int32_t>& procs, int adj,
        std::map<std::int32_t, int>& had);
    // Gives back the records of workloads memqos no longer sets an OOM
    // priority for: gone (unassigned, class removed, no rule matches; once
    // every workload could be found again after a start), only observed,
    // or of a class that keeps (OOMScoreAdjust=keep).
    void giveBackOomPriorities();
    // What giveBackOomPriorities' look over every record depends on, but a
    // class or placement changed in place: the tick looks again when it
    // moved, and at every sweep turn (kSweepTicks) for those (issue 25: a
    // walk of 1000 records and class lookups a tick at 1000 units).
    struct OomLookKey {
        std::uint64_t workloads = 0; // WorkloadMap::revision
        std::size_t records = 0;
        bool discovered = false;
        bool domainsListed = false;
        bool operator==(const OomLookKey&) const = default;
    };
    OomLookKey oomLookKey() const;
    std::optional<OomLookKey> oomLookedAt_;
    // Writes each recorded process of workload `id` its original back, if
    // it still is that process (start time) and still has memqos's value,
    // and processes forked since that inherited memqos's value the record's
    // base; then forgets the record. One info line for the workload. Under
    // dry run: says once what it would give back and keeps the record.
    void giveBackOom(const std::string& id, std::string_view why);
    void loadOomRecords();
    io::OomStore* oomStore_ = nullptr;
    std::map<std::string, io::OomRecord> oomRecords_; // by workload id
    std::set<std::string> oomGiveBackAnnounced_;      // dry run: "would" said
    // libvirt listed its domains once: a VM's record without a workload is
    // then a VM memqos no longer manages.
    bool domainsListed_ = false;
    void execute(const core::Decisions& decisions, const core::PressureState& before,
                 TimePoint now);
    void reclaimClass(const core::ReclaimClass& r, TimePoint now);
    // Proactive reclaim (core/proactive.hpp): reads usage and memory.pressure
    // of the workloads whose interval is over, decides and starts the steps.
    void proactiveReclaim(core::Snapshot& snap);
    // What a memory.reclaim write of a workload freed (counted, logged).
    void reclaimed(const std::string& id, Bytes bytes, const Outcome& o);
    // Adds `freed` to the workload's ReclaimedBytes (and tells the listener
    // when it moved); false when the workload is not tracked (unassigned).
    bool countReclaimed(const std::string& id, Bytes freed);
    // The lowest-ranked class (the "reclaimed" class of ReclaimedAllocatable).
    const core::ClassPolicy* lowestClass() const;
    void capClass(const core::CapClass& c);
    // A live cap's steps before the call (CapOrder::prepare): the slice's
    // own MemoryHigh learned first, memory reclaimed first; the MemoryHigh
    // to send now, nullopt when none.
    std::optional<Bytes> prepareCap(const core::CapClass& c, const std::string& slice);
    // Gives back the caps of classes that lost their guard or left the
    // configuration (core::capsToGiveBack); at each reload and tick.
    void giveBackCaps();
    // The class slice's MemoryHigh back to what its own configuration gives
    // (its record, learned before memqos's first cap; infinity without
    // one), memqos's runtime drop-in removed; done(true) once given back.
    void giveBackCap(const std::string& className, std::function<void(bool)> done);
    // Learns the own memory properties of guarded classes' slices that have
    // no record yet, so that the first cap has something to give back.
    void learnGuardedSlices();
    // A slice memqos caps, or may cap (a guarded class's): its record stays
    // (it says what to give back when the cap goes).
    bool capSlice(const std::string& unit) const;
    // class -> its slice, for every cap memqos sent and did not give back.
    std::map<std::string, std::string> capped_;
    std::set<std::string> capReturning_; // classes whose give-back is on its way

    // --- kills (manager_kill.cpp) ---
    // A decided kill until it happened or failed.
    struct KillInFlight {
        std::uint64_t seq = 0; // tells a late libvirt answer from a newer kill's
        io::KillRecord record;
        std::string cgroupPath;
        TimePoint startedAt{0}; // the deciding tick's time
        TimePoint decidedAt{0}; // pressure_.lastKill as the decision set it
        // pressure_.lastKill before the decision, given back when no kill
        // happens (unless a later decision moved it meanwhile).
        std::optional<TimePoint> previousKill;
        // libvirt VMs only (the others are done within the tick): destroy
        // answered with an error (cgroup.kill at the next tick), and
        // cgroup.kill found the scope gone (the VM ended: libvirt's late
        // answer says whether memqosd's destroy ended it).
        bool destroyFailed = false;
        bool cgroupGone = false;
    };
    void killWorkload(const core::KillWorkload& k, std::optional<TimePoint> previousKill,
                      TimePoint now);
    // Writes cgroup.kill of the kill's cgroup (through the actuator).
    // Killed: recorded. Failed: logged, the cooldown given back and the
    // workload set aside. Gone: the cgroup no longer exists (nothing
    // recorded; the caller decides). Would: dry run (the cooldown is kept).
    enum class CgroupKill { Killed, Failed, Gone, Would };
    CgroupKill killCgroup(const KillInFlight& kill, TimePoint now);
    static KillOrder killOrder(const KillInFlight& kill);
    // The journal line, the history, the metrics counter and WorkloadKilled;
    // `how` goes to the journal (KILLED_BY=).
    void recordKill(io::KillRecord record, std::string_view how);
    void notKilled(const KillInFlight& kill);
    // At the start of a tick: libvirt destroys that failed or took longer
    // than kDestroyPatience go through cgroup.kill; set-asides that ended
    // are dropped.
    void advanceKills(TimePoint now);
    // Not a victim now: a kill of it is on its way or failed recently.
    bool setAside(const std::string& id, TimePoint now) const;
    std::map<std::string, KillInFlight> killsInFlight_; // by workload id
    std::map<std::string, TimePoint> setAsideUntil_;    // by workload id
    std::uint64_t killSeq_ = 0;

    // --- VMs ---
    void startHypervisor();
    // Lists every domain and derives each one's class again. resendTiers:
    // every VM's properties are sent again too (after a (re)connect).
    void discoverDomains(bool resendTiers = true);
    void refreshDomain(const std::string& name);
    void upsertDomain(const io::DomainInfo& d);
    void forgetDomain(const std::string& name);
    void assignVm(const core::Workload& w, bool persist, Reply<std::string> reply);
    // Where a running VM's qemu process lives: its scope unit and cgroup.
    std::optional<std::pair<std::string, std::string>> scopeOfPid(std::int32_t pid) const;
    // Whether process `pid` is the qemu of guest `name` (a pid read from a
    // pidfile, perhaps on another thread, may since name another process):
    // its /proc/PID/cmdline is a qemu's with "-name <name>" and, when it
    // has one, a "-pidfile" named after the guest; it does not run in
    // another workload's unit. ENOENT when the process is gone; any other
    // error says why it is not the guest's qemu.
    Status qemuIdentity(std::int32_t pid, const std::string& name) const;
    // Logs, once per guest and pid, why memqos does not trust that pid.
    void warnDistrusted(const std::string& what, const std::string& name, std::int32_t pid,
                        const Error& why);
    std::map<std::string, std::int32_t> distrusted_;
    void shrinkBalloons(const std::string& className, TimePoint now);
    void restoreBalloons(TimePoint now);
    // Set when a balloon's baseline is recorded (a shrink at level 2),
    // cleared by the walk of restoreBalloons that finds no baseline left.
    bool balloonsToRestore_ = false;
    void moveBalloon(const std::string& id, Bytes target, const std::string& why, TimePoint now);
    // The balloon of a libvirt domain or (with [Ganeti] Balloon=yes) of a
    // Ganeti instance; false when memqos cannot move it.
    bool balloonMovable(const ManagedWorkload& m) const;
    void readBalloon(const std::string& id, const ManagedWorkload& m,
                     std::function<void(Result<io::BalloonStats>)> then);
    io::Hypervisor* hypervisor_ = nullptr;

    // --- Ganeti KVM instances (adopted into memqos-vm-<instance>.scope) ---
    bool isGanetiInstance(const std::string& name) const;
    // The pid in the instance's pidfile when that process is its qemu
    // (qemuIdentity) and started no later than kPidfileSlack after the
    // pidfile was written (a later one reused the pid of a qemu that is
    // gone, its pidfile left behind). ENOENT: no pidfile or no process.
    Result<std::int32_t> ganetiQemu(const std::string& name) const;
    void scanGanetiInstances();
    // Records of instances Ganeti no longer lists (its remove post-hook never
    // reached memqosd): forgotten on the second scan in a row that finds them
    // unlisted and not running.
    void forgetUnlistedInstances();
    void adoptInstance(const std::string& name);
    // The instance's workload (class, request, limit from its record, a
    // rule or [VM] DefaultClass, unless an API assignment set them) and tiers.
    Result<core::Tiers> deriveInstance(ManagedWorkload& m, const std::string& name,
                                       bool isNew) const;
    void assignGaneti(const core::Workload& w, bool persist, Reply<std::string> reply);
    void ganetiFindings(std::vector<wording::FindingText>& out) const;
    void policyFindings(std::vector<wording::FindingText>& out) const;
    io::GanetiKvm* ganeti_ = nullptr;
    std::set<std::string> unlisted_; // recorded, not running, not in Ganeti's list at the last scan
    std::uint64_t ticks_ = 0;

    config::Config config_;
    ConfigReader reader_;
    std::function<void()> reloadHook_;
    io::SystemdManager& systemd_;
    io::StateStore& store_;
    io::InstanceStore& instanceStore_;
    io::EventStore& events_;
    io::CgroupFs cgroups_;
    io::ProcFs proc_;
    io::KernelKnobs knobs_;
    // Pressure actions go through actuator() (DESIGN §2.7): live_ acts,
    // dry_ logs "Would …"; which one follows dryRun_, so a reload that
    // changes DryRun swaps them. A stop
    // of a reclaim write goes to live_ (only its writes can be under way).
    LiveActuator liveBuiltIn_;
    DryRunActuator dryBuiltIn_;
    Actuator* live_ = &liveBuiltIn_;
    Actuator* dry_ = &dryBuiltIn_;
    Actuator& actuator() const { return dryRun_ ? *dry_ : *live_; }
    std::map<std::string, core::WorkloadReclaim> reclaim_; // by workload id
    std::set<std::string> manualReclaimInFlight_;          // workload ids (Reclaim, not forced)
    std::set<std::string> reclaimInFlight_;                // workload ids
    Bytes reclaimedAllocatable_ = 0;
    // MemoryPressureSome/Full as last announced with PropertiesChanged:
    // announced again once the value is kPressureAnnounceStep points away.
    double announcedPressureSome_ = 0;
    double announcedPressureFull_ = 0;
    bool dryRunForced_; // --dry-run: on whatever the configuration says
    bool dryRun_;
    Listener* listener_ = nullptr;

    WorkloadMap workloads_;
    std::map<std::string, core::Instance> instances_;
    std::map<std::string, io::MemoryProperties> applied_;
    // systemd's values of units memqos has not set since memqosd started or
    // the unit restarted (refreshUnit), for reconcile's alreadySet.
    std::map<std::string, io::MemoryProperties> reported_;
    bool alreadySet(const std::string& unit, const io::MemoryProperties& props);
    std::map<std::string, io::MemoryProperties> inFlight_;
    io::OriginalStore* originalStore_ = nullptr;
    // learnOwn()'s records on their way to disk, per unit, and how many of
    // them (the oldest) forgetOriginal() forgot meanwhile: learnOwn does not
    // put those back in originals_ (their file is removed after them).
    struct RecordingOwn {
        int pending = 0;
        int forgotten = 0;
    };
    std::map<std::string, RecordingOwn> recordingOwn_;
    // Units whose AssignWorkload is between learning their own values (the
    // record in originals_) and being in workloads_ (the assignment's state
    // write): not orphans a reconcile meanwhile gives back, with their
    // record (VM faults case 47-own-later: the record's file was gone, and
    // the unassign would have given systemd's defaults, not the unit's own).
    std::map<std::string, int> assigning_;
    void endAssigning(const std::string& unit);
    io::InlineStateWriter inlineWriter_;
    io::StateWriter* writer_ = &inlineWriter_;
    // unit -> its memory properties before memqos's first change.
    std::map<std::string, io::UnitOriginal> originals_;
    io::RuntimeDropIns dropIns_{std::vector<std::filesystem::path>{
        std::filesystem::path(io::kRuntimeControlDir), std::filesystem::path(io::kTransientDir)}};
    std::string bootId_;
    std::set<std::string> learning_;  // units being looked up for originals_
    bool reconcileDue_ = false;       // a learned unit waits for reconcile() (learnOriginal)
    // Slices whose own values were learned since memqos last sent them
    // something: a slice is learned again before every change memqos sends
    // (an administrator may have raised its protection meanwhile).
    std::set<std::string> fresh_;
    bool released_ = false; // releaseAll: nothing is changed any more
    std::function<void()> releaseHook_;
    bool reloadInFlight_ = false;
    std::vector<std::function<void(Status)>> waitingReload_;
    std::set<std::string> restoring_; // units being given their own values back
    // Class slices whose StartTransientUnit failed (systemd off the bus, a
    // timeout): started again when systemd reloads or comes back.
    std::set<std::string> slicesToStart_;
    bool discovered_ = false;         // start() found every workload it can
    std::map<std::string, Bytes> classCurrent_;
    core::SystemSample system_;
    core::PressureState pressure_;
    // Per class: when memory.reclaim was last written (at most once per
    // Interval, however often PSI triggers start a tick).
    std::map<std::string, TimePoint> lastReclaim_;
    // Classes whose pressure reclaim is on the worker now (one at a time).
    std::set<std::string> classReclaimBusy_;
    // The decisions being executed include a kill (no reclaim then).
    bool killing_ = false;
    // For the metrics file: actions taken ("reclaim", "cap", "admission")
    // and kills, since start; the last tick's class samples.
    std::map<std::string, std::uint64_t> actionCounts_;
    std::uint64_t killCount_ = 0;
    std::uint64_t triggeredTicks_ = 0;
    std::vector<core::ClassSample> lastClasses_;
    TickDurations tickDurations_;
    // The metrics file's signals (metrics.hpp) now; a change of any of them,
    // or of an action count but proactive reclaim's steps, writes the file at
    // that tick.
    MetricsSignals metricsSignals() const;
    // The tick and file of the last write handed over, its signals and its
    // action counts.
    std::optional<TimePoint> metricsAt_;
    std::filesystem::path metricsFor_;
    MetricsSignals metricsSignalsWritten_;
    std::map<std::string, std::uint64_t> metricsActionsWritten_;
    // Whether this tick writes the metrics file.
    bool metricsDue(TimePoint now, const MetricsSignals& signals) const;
    void writeMetrics(TimePoint now, const MetricsSignals& signals);
    // The metrics file memqosd wrote last (nullopt: none): a reload that
    // changes or clears [Manager] MetricsFile removes it, so node_exporter
    // does not keep exporting numbers that no longer move.
    std::optional<std::filesystem::path> metricsWritten_;
    io::MetricsWriter* metricsWriter_ = nullptr;
    // The metrics file that could not be written last time (nullopt: the
    // last write worked). The warning is logged once per failing file, a
    // notice when it works again: not a line per tick.
    std::optional<std::filesystem::path> metricsFailing_;
    void metricsWriteDone(const std::filesystem::path& file, const Status& st);
    // After a reload: the old metrics file removed when the configuration
    // no longer names it; why not, as a note for the answer.
    std::optional<std::string> dropOldMetricsFile();

    std::size_t sweepCursor_ = 0; // see kSweepTicks
    std::size_t repairCursor_ = 0; // the OOM priority's repair turn
    std::size_t reclaimCursor_ = 0; // see kReclaimTurnsPerTick
    std::size_t keptFilesFor_ = 0; // workloads at the last look over kept fds
    // At a sweep turn: closes the kept fds of cgroups no workload has.
    void keepWorkloadFiles();
    std::vector<core::CgroupSample> protectedCgroups();
    // memory.reclaim of a class slice on the reclaim worker (synchronously
    // without one: tests); false when one of the class is under way.
    bool reclaimClassOnWorker(const std::string& className, Bytes bytes);
    // The sweep's turn (kSweepTicks), and every workload of a killable
    // class while a kill is near (killNear()). Returns whether every
    // killable workload was read. killableOnly: only those, now (a kill, or
    // level 3 without a candidate, decided on older samples).
    bool sampleWorkloads(bool killableOnly = false);
    // Whether a kill may come within a few ticks (issue 25 item 2): level 2
    // or above, level 3's condition building up, or a class stalling at its
    // cap. Only then is every killable workload read at every tick; at
    // level 1, or with a lower level's condition building up, the victim
    // ranking would not be used.
    bool killNear() const;
    // The snapshot's workloads from what the sweep last read.
    std::vector<core::WorkloadSample> workloadSamples(TimePoint now);
    // One workload's sample as workloadSamples makes it.
    void fillSample(core::WorkloadSample& ws, const std::string& id, const ManagedWorkload& m,
                    TimePoint now) const;
    // The last tick's snapshot of the workloads, kept for its buffers (and,
    // for a light tick, as its snapshot).
    std::vector<core::WorkloadSample> samples_;
    // A kept snapshot (issue 25): at level 0 with nothing building up (no
    // level's condition, no class stalling), the workloads' snapshot is
    // made anew on its own slower clock: every lightRun() tick intervals
    // (by the clock, so a late tick never keeps it), and at once when a
    // workload came, went or may have changed since the last tick's end
    // (WorkloadMap::touches: any mutable access but the sampling's), after
    // a start or reload, or when the tick's decision is not quiet. In
    // between, the decisions take the last snapshot of the workloads: their
    // classes and requests as they are, their usage as their sweep and
    // repair turns read it up to lightRun() - 1 ticks earlier. Such a tick
    // is light (proactive reclaim's pass over the workloads waits for the
    // tick that makes the snapshot anew, with the turns of every tick since)
    // unless the pass has more workloads due than turns (reclaimBehind_):
    // then it runs every tick, on the kept snapshot, not in bursts.
    bool snapshotKept(TimePoint now) const;
    static bool quiet(const core::PressureState& state);
    // How many ticks a run of light ticks lasts at most: proactive
    // reclaim's interval in ticks (so a workload is looked at no more than
    // that many ticks minus one after its interval is over), at most
    // kMaxLightRun; kMaxLightRun with [Reclaim] Enabled=no; 1 (no light
    // tick) with an interval of one tick or less.
    std::size_t lightRun() const;
    std::size_t lightTicks_ = 0; // light ticks since the workloads' part ran
    std::uint64_t lightTickCount_ = 0;
    std::uint64_t keptTickCount_ = 0; // kept snapshot, reclaim's pass run (behind)
    std::uint64_t partTouches_ = 0; // WorkloadMap::touches() at the last tick's end
    // When the workloads' part last ran; none: the next tick runs it (start,
    // reload).
    std::optional<TimePoint> partAt_;
    bool reclaimBehind_ = false; // the last pass left workloads waiting (reclaimWaits)
};

} // namespace memqos::daemon

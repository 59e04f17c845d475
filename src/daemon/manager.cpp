// SPDX-License-Identifier: Apache-2.0
#include "manager.hpp"

#include "metrics.hpp"
#include "state_error.hpp"

#include "memqos/config/reload.hpp"
#include "memqos/io/file.hpp"
#include "memqos/io/log.hpp"
#include "memqos/util/join.hpp"
#include "memqos/wording/bytes.hpp"
#include "memqos/wording/pressure.hpp"

#include <fnmatch.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include <algorithm>
#include <chrono>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <variant>

namespace memqos::daemon {
namespace {

// A limit above this many times MemTotal is a typo, not a plan.
constexpr Bytes kAbsurdFactor = 64;

// The action count of proactive reclaim's steps (memqos_actions_total's
// action label): routine, so its change alone does not rewrite the metrics.
constexpr std::string_view kProactiveReclaimAction = "proactive-reclaim";

std::string classList(const std::vector<core::ClassPolicy>& classes) {
    std::string out;
    for (const auto& c : classes) {
        out += (out.empty() ? "" : ", ") + c.name;
    }
    return out;
}

// "MemoryLow=256.0 MiB MemoryMax=1.0 GiB": what a dry run would set.
std::string describeProperties(const io::MemoryProperties& p) {
    std::string out;
    core::forEachProperty(p, [&out](const char* key, const Limit& value) {
        out += (out.empty() ? "" : " ") + std::string(key) + "=" +
               (value ? wording::formatBytes(*value) : std::string("infinity"));
    });
    return out;
}

// The scope of a VM: machined's (libvirt) or memqos's own for Ganeti
// instances. They are managed as their VM ("vm:<name>"), never as units.
bool isVmScope(const std::string& unit) {
    return unit.ends_with(".scope") && (unit.starts_with("machine-") ||
                                        unit.starts_with("memqos-vm-"));
}

std::string stripSlash(const std::string& cg) {
    return cg.starts_with('/') ? cg.substr(1) : cg;
}

} // namespace

Manager::Manager(config::Config config, ConfigReader reader, io::SystemdManager& systemd,
                 io::StateStore& store, io::InstanceStore& instanceStore, io::EventStore& events,
                 io::CgroupFs cgroups, io::ProcFs proc, bool dryRun)
    : config_(std::move(config)), reader_(std::move(reader)), systemd_(systemd), store_(store),
      instanceStore_(instanceStore), events_(events),
      cgroups_(std::move(cgroups)), proc_(std::move(proc)), knobs_(cgroups_.root(), proc_.root()),
      liveBuiltIn_(knobs_, cgroups_,
                   [this](const std::string& unit, const io::MemoryProperties& props, bool urgent,
                          std::function<void(Status)> done) {
                       sendProperties(unit, props, urgent, std::move(done));
                   }),
      dryRunForced_(dryRun), dryRun_(dryRun || config_.manager.dryRun) {}

void Manager::setActuators(Actuator* live, Actuator* dryRun) {
    live_ = live != nullptr ? live : &liveBuiltIn_;
    dry_ = dryRun != nullptr ? dryRun : &dryBuiltIn_;
}

Bytes Manager::nodeReserved() const {
    return config_.overcommit.nodeReserved.resolve(system_.mem.memTotal);
}

std::vector<std::string> Manager::workloadsOfClass(const std::string& className) const {
    std::vector<std::string> out;
    for (const auto& [id, m] : workloads_) {
        if (m.workload.className == className) {
            out.push_back(id);
        }
    }
    return out;
}

Bytes Manager::classMemoryCurrent(const std::string& className) const {
    auto it = classCurrent_.find(className);
    return it == classCurrent_.end() ? 0 : it->second;
}

// Read when asked (a D-Bus property), not by every tick (issue 25).
Manager::CgroupUsage Manager::readUsage(std::string_view cgroup, bool withPressure) const {
    CgroupUsage out;
    auto u = cgroups_.usage(cgroup, false, withPressure);
    if (u && u->has_value()) {
        out.memoryCurrent = (*u)->memoryCurrent;
        out.swapCurrent = (*u)->swapCurrent;
        out.memoryPressure = (*u)->pressure ? (*u)->pressure->some.avg10 : 0.0;
    }
    return out;
}

Bytes Manager::classSwapCurrent(const std::string& className) const {
    if (core::findClass(config_.classes, className) == nullptr) {
        return 0;
    }
    return readUsage(io::classSlicePath(className), false).swapCurrent;
}

double Manager::classMemoryPressure(const std::string& className) const {
    if (core::findClass(config_.classes, className) == nullptr) {
        return 0;
    }
    return readUsage(io::classSlicePath(className), true).memoryPressure;
}

Manager::CgroupUsage Manager::workloadUsage(const ManagedWorkload& w, bool withPressure) const {
    return w.cgroupPath.empty() ? CgroupUsage{} : readUsage(w.cgroupPath, withPressure);
}

double Manager::memoryPressureSome() const {
    return system_.pressure ? system_.pressure->some.avg10 : 0.0;
}

double Manager::memoryPressureFull() const {
    return system_.pressure && system_.pressure->full ? system_.pressure->full->avg10 : 0.0;
}

void Manager::sampleSystem() {
    // What a decision reads (issue 25): meminfo and PSI; the zones only for
    // the watermark signals; vmstat and swaps feed none.
    auto sys = proc_.system(io::ProcFs::Reads{.pressure = true,
                                               .zones = config_.pressure.watermarks,
                                               .vmstat = false,
                                               .swaps = false});
    if (!sys) {
        log::warning("Cannot sample the node: {ERROR}", "ERROR", sys.error().what);
        return;
    }
    const auto before = system_.mem;
    system_ = std::move(*sys);
    std::vector<const char*> changed;
    if (before.memTotal != system_.mem.memTotal) {
        changed.push_back("MemoryTotal");
        changed.push_back("NodeReserved");
    }
    if (before.memAvailable != system_.mem.memAvailable) {
        changed.push_back("MemoryAvailable");
    }
    if (before.swapTotal != system_.mem.swapTotal) {
        changed.push_back("SwapTotal");
    }
    if (before.swapFree != system_.mem.swapFree) {
        changed.push_back("SwapFree");
    }
    // PSI moves a little on almost every tick: announced only once it is
    // kPressureAnnounceStep points away from what was last announced (or
    // back at 0), so a watcher's value is never further off than that.
    const auto movedFrom = [](double announced, double now) {
        return now != announced &&
               (std::abs(now - announced) >= kPressureAnnounceStep || now == 0.0);
    };
    if (movedFrom(announcedPressureSome_, memoryPressureSome())) {
        announcedPressureSome_ = memoryPressureSome();
        changed.push_back("MemoryPressureSome");
    }
    if (movedFrom(announcedPressureFull_, memoryPressureFull())) {
        announcedPressureFull_ = memoryPressureFull();
        changed.push_back("MemoryPressureFull");
    }
    if (listener_ != nullptr && !changed.empty()) {
        listener_->managerPropertiesChanged(changed);
    }
}

void Manager::start(std::function<void(Status)> ready) {
    sampleSystem();
    auto records = instanceStore_.loadAll();
    for (const auto& p : records.problems) {
        log::warning("Ignoring a stored instance record: {ERROR}", "ERROR", p);
    }
    for (auto& i : records.instances) {
        instances_[i.name] = std::move(i);
    }
    auto loaded = store_.loadAll();
    for (const auto& p : loaded.problems) {
        log::warning("Ignoring a stored assignment: {ERROR}", "ERROR", p);
    }
    for (auto& a : loaded.assignments) {
        if (core::findClass(config_.classes, a.workload.className) == nullptr) {
            log::warning("Stored assignment of {WORKLOAD} names class {CLASS}, which the "
                         "configuration no longer has; ignoring it",
                         "WORKLOAD", a.workload.id, "CLASS", a.workload.className);
            continue;
        }
        ManagedWorkload m;
        m.workload = a.workload;
        m.persistent = a.persistent;
        m.source = Source::Api;
        m.unit = m.workload.kind == core::WorkloadKind::Vm ? "" : m.workload.id;
        if (m.workload.kind == core::WorkloadKind::Vm) {
            m.vm = VmState{}; // libvirt or Ganeti tells where it runs
        }
        workloads_[m.workload.id] = std::move(m);
    }
    recomputeTiers();
    log::info("Loaded {COUNT} stored assignments", "COUNT", workloads_.size());
    if (originalStore_ != nullptr) {
        auto kept = originalStore_->loadAll();
        for (const auto& p : kept.problems) {
            log::warning("Ignoring a stored record of a unit's own memory properties: {ERROR}",
                         "ERROR", p);
        }
        takeStoredOriginals(std::move(kept.originals));
    }
    loadOomRecords();

    // Workloads already running inside class slices.
    adoptFromClassSlices(false);

    io::SystemdManager::Events events;
    events.reloaded = [this] { onSystemdReloaded(); };
    events.unitStarted = [this](const std::string& u) { onUnitStarted(u); };
    events.unitRemoved = [this](const std::string& u) { onUnitRemoved(u); };
    systemd_.subscribe(std::move(events), [this, ready = std::move(ready)](Status st) mutable {
        if (!st) {
            ready(st);
            return;
        }
        // Rules: match the units systemd has loaded now; later ones arrive
        // through UnitNew/JobRemoved.
        systemd_.listUnits([this, ready = std::move(ready)](
                               Result<std::vector<io::UnitInfo>> units) mutable {
            if (!units) {
                ready(units.error());
                return;
            }
            for (const auto& u : *units) {
                if (!workloads_.contains(u.name) && unitRuleFor(u.name) != nullptr) {
                    adopt(u.name, "", Source::Rule);
                }
            }
            // Every workload memqos can find without a hypervisor is known:
            // units it changed before and no longer manages get their own
            // values back from now on.
            discovered_ = true;
            learnGuardedSlices();
            refreshAllThenReconcile();
            // After the workloads' refresh: with a thousand classes their
            // slices' StartTransientUnit calls queue behind it (and behind
            // ListUnits) instead of in front (160 s in the TCG VM).
            startClassSlices();
            startHypervisor();
            scanGanetiInstances();
            ready(okStatus());
        });
    });
}

const config::WorkloadRule* Manager::unitRuleFor(const std::string& unit) const {
    if (core::ruleRefusal(unit)) {
        return nullptr;
    }
    return ruleFor(unit);
}

const config::WorkloadRule* Manager::ruleFor(const std::string& unit) const {
    for (const auto& r : config_.rules) {
        if (::fnmatch(r.match.c_str(), unit.c_str(), 0) == 0) {
            return &r;
        }
    }
    return nullptr;
}

std::optional<std::string> Manager::classOfCgroup(const std::string& cgroupPath) const {
    for (const auto& cls : config_.classes) {
        const std::string prefix = io::classSlicePath(cls.name) + "/";
        if (cgroupPath.starts_with(prefix)) {
            return cls.name;
        }
    }
    return std::nullopt;
}

std::size_t Manager::adoptFromClassSlices(bool onlyPopulated) {
    std::size_t adopted = 0;
    for (const auto& cls : config_.classes) {
        const std::string slicePath = io::classSlicePath(cls.name);
        auto kids = cgroups_.children(slicePath);
        if (!kids) {
            continue; // slice not started yet: nothing inside
        }
        for (const auto& k : *kids) {
            if (!(k.ends_with(".service") || k.ends_with(".scope")) || workloads_.contains(k) ||
                isVmScope(k)) {
                continue;
            }
            const std::string path = slicePath + "/" + k;
            if (onlyPopulated) {
                // A stopped unit's cgroup lingers until systemd removes it
                // (after its UnitRemoved): adopted then, it would never go.
                auto u = cgroups_.usage(path, true);
                if (!u || !u->has_value() || (*u)->procs.empty()) {
                    continue;
                }
            }
            adopt(k, path, Source::Slice);
            adopted += workloads_.contains(k) ? 1U : 0U;
        }
    }
    return adopted;
}

void Manager::adopt(const std::string& unit, const std::string& cgroupPath, Source source) {
    if (released_) {
        return; // released: memqosd takes nothing on any more
    }
    ManagedWorkload m;
    m.workload.id = unit;
    m.workload.kind = core::kindFromId(unit).value_or(core::WorkloadKind::Service);
    m.unit = unit;
    m.cgroupPath = cgroupPath;
    m.source = source;
    if (source == Source::Rule) {
        const auto* r = unitRuleFor(unit);
        if (r == nullptr) {
            return;
        }
        m.workload.className = r->className;
        m.workload.request = r->request;
        m.workload.limit = r->limit;
        m.workload.priority = r->priority;
    } else {
        auto cls = classOfCgroup(cgroupPath);
        if (!cls) {
            return;
        }
        m.workload.className = *cls;
    }
    auto tiers = tiersFor(m.workload);
    if (!tiers) {
        log::warning("Not managing {UNIT}: {ERROR}", "UNIT", unit, "ERROR", tiers.error().what);
        return;
    }
    m.tiers = *tiers;
    log::info("Managing {UNIT} in class {CLASS} ({SOURCE})", "UNIT", unit, "CLASS",
              m.workload.className, "SOURCE", source == Source::Rule ? "rule" : "slice");
    workloads_[unit] = std::move(m);
}

void Manager::rederiveRules() {
    std::vector<std::string> letGo;
    for (auto it = workloads_.begin(); it != workloads_.end();) {
        ManagedWorkload& m = it->second;
        if (m.source != Source::Rule || m.vm) {
            ++it; // VMs: discoverDomains and scanGanetiInstances derive theirs
            continue;
        }
        if (const auto* r = unitRuleFor(m.unit)) {
            const core::Workload before = m.workload;
            m.workload.className = r->className;
            m.workload.request = r->request;
            m.workload.limit = r->limit;
            m.workload.priority = r->priority;
            if (!(m.workload == before)) {
                log::info("{UNIT} now has class {CLASS} by rule {RULE}", "UNIT", m.unit, "CLASS",
                          r->className, "RULE", r->name);
            }
            ++it;
            continue;
        }
        if (auto cls = classOfCgroup(m.cgroupPath)) {
            m.source = Source::Slice;
            m.workload.className = *cls;
            m.workload.request = 0;
            m.workload.limit = Limit{};
            m.workload.priority = 0;
            log::info("No rule matches {UNIT} any more; managed by its class slice ({CLASS})",
                      "UNIT", m.unit, "CLASS", *cls);
            ++it;
            continue;
        }
        log::info("No rule matches {UNIT} any more; no longer managing it", "UNIT", m.unit);
        letGo.push_back(m.unit);
        it = workloads_.erase(it);
    }
    for (const auto& unit : letGo) {
        if (originals_.contains(unit) || applied_.contains(unit)) {
            restoreOriginal(unit, [this] { reconcile(); });
        }
    }
    if (config_.rules.empty()) {
        return;
    }
    systemd_.listUnits([this](Result<std::vector<io::UnitInfo>> units) {
        if (!units) {
            log::warning("Cannot list units for the rules: {ERROR}", "ERROR", units.error().what);
            return;
        }
        std::vector<std::string> adopted;
        for (const auto& u : *units) {
            if (!workloads_.contains(u.name) && unitRuleFor(u.name) != nullptr) {
                adopt(u.name, "", Source::Rule);
                if (workloads_.contains(u.name)) {
                    adopted.push_back(u.name);
                }
            }
        }
        if (!adopted.empty()) {
            refreshThenReconcile(adopted);
        }
    });
}

Result<core::Tiers> Manager::tiersFor(const core::Workload& w) const {
    const auto* cls = core::findClass(config_.classes, w.className);
    if (cls == nullptr) {
        return invalid("class '" + w.className + "' does not exist");
    }
    return core::computeTiers(*cls, w, system_.mem.memTotal, proc_.pageSize());
}

void Manager::recomputeTiers() {
    for (auto it = workloads_.begin(); it != workloads_.end();) {
        if (observedOnly(it->second)) {
            ++it; // no class, no tiers
            continue;
        }
        auto t = tiersFor(it->second.workload);
        if (!t) {
            log::warning("Dropping {WORKLOAD}: {ERROR}", "WORKLOAD", it->first, "ERROR",
                         t.error().what);
            it = workloads_.erase(it);
            continue;
        }
        it->second.tiers = *t;
        ++it;
    }
}

void Manager::refreshUnit(const std::string& id, std::function<void()> then) {
    auto it = workloads_.find(id);
    if (it == workloads_.end() || it->second.unit.empty()) {
        then();
        return;
    }
    systemd_.getUnit(it->second.unit, [this, id, then = std::move(then)](Result<io::UnitInfo> u) {
        auto w = workloads_.find(id);
        if (w != workloads_.end() && u) {
            w->second.cgroupPath = stripSlash(u->controlGroup);
            // New processes (a start, restart or reload of the unit): its OOM
            // priority is checked at the next tick, not at its sweep turn.
            w->second.oomDue = true;
            // A unit systemd no longer has (a stopped transient unit) gets no
            // properties: SetUnitProperties would only fail with NoSuchUnit.
            w->second.loaded = u->loadState == "loaded";
            // What systemd has, for the next reconcile to compare with what
            // it would send (alreadySet): memqos has not set this unit since
            // memqosd started or the unit restarted.
            if (u->memory && !applied_.contains(w->second.unit)) {
                reported_[w->second.unit] = *u->memory;
            }
        } else if (!u) {
            log::debug("Cannot look up {UNIT}: {ERROR}", "UNIT", id, "ERROR", u.error().what);
        }
        then();
    });
}

void Manager::reconcile() {
    if (released_) {
        return; // released: what is left is being given back
    }
    reconcileDue_ = false;
    std::vector<PlacedTiers> placed;
    std::set<std::string> managedUnits;
    // An unplaced VM's scope gets nothing, and what memqos set on it before
    // (an older [VM] DefaultClass placed it) is given back.
    std::vector<std::string> giveBack;
    for (const auto& [id, m] : workloads_) {
        if (!m.unit.empty()) {
            managedUnits.insert(m.unit);
        }
        if (observedOnly(m)) {
            if (!m.unit.empty() && m.loaded && originals_.contains(m.unit) &&
                !inFlight_.contains(m.unit)) {
                giveBack.push_back(m.unit);
            }
            continue;
        }
        if (!m.unit.empty() && m.loaded) {
            placed.push_back({m.unit, m.cgroupPath, m.tiers});
        }
    }
    for (const auto& unit : giveBack) {
        restoreOriginal(unit, [] {});
    }
    ReconcileInput in;
    in.others = otherClaims(placed);
    in.workloads = std::move(placed);
    for (const auto& [unit, o] : originals_) {
        in.own[unit] = o.values;
    }
    const auto desired = desiredProperties(in);
    // (Named copies, not structured bindings: clang 14 cannot capture those.)
    for (const auto& change : changedProperties(desired, applied_)) {
        const std::string& unit = change.first;
        const io::MemoryProperties& props = change.second;
        if (auto f = inFlight_.find(unit); f != inFlight_.end() && f->second == props) {
            continue; // the same call is already on its way
        }
        if (restoring_.contains(unit)) {
            continue; // being given back; the next reconcile sets it again
        }
        if (!createdByMemqos(unit) &&
            (!originals_.contains(unit) || (unit.ends_with(".slice") && !fresh_.contains(unit)))) {
            learnOriginal(unit); // first what to give back one day, then the change
            continue;
        }
        if (alreadySet(unit, props)) {
            applied_[unit] = props; // nothing to send
            log::debug("Memory properties of {UNIT} already as memqos sets them", "UNIT", unit);
            continue;
        }
        if (dryRun_) {
            log::notice("Dry run: would set memory properties of {UNIT}: {PROPERTIES}", "UNIT",
                        unit, "PROPERTIES", describeProperties(props));
            applied_[unit] = props;
            continue;
        }
        inFlight_[unit] = props;
        sendProperties(unit, props, false, [this, unit, props](Status st) {
            if (auto f = inFlight_.find(unit); f != inFlight_.end() && f->second == props) {
                inFlight_.erase(f);
            }
            fresh_.erase(unit); // learned again before the next change
            if (st) {
                applied_[unit] = props;
                log::info("Set memory properties of {UNIT}", "UNIT", unit, "MESSAGE_ID",
                          log::kMessagePropertiesChanged);
                // systemd writes memory.oom.group from the unit's OOMPolicy=
                // whenever it applies memory properties (cgroup_context_apply):
                // put ours back at the next tick, not at the sweep's turn.
                for (auto& [id, m] : workloads_) {
                    if (m.unit == unit) {
                        m.oomDue = true;
                    }
                }
            } else if (st.error().code == std::errc::no_such_file_or_directory) {
                // NoSuchUnit: the unit went away while the call was on its
                // way (a short-lived unit in a class slice); nothing failed.
                log::info("{UNIT} was gone before its memory properties were set", "UNIT",
                          unit);
            } else {
                log::warning("Cannot set memory properties of {UNIT}: {ERROR}", "UNIT", unit,
                             "ERROR", st.error().what);
            }
            checkSettled();
        });
    }
    reported_.clear(); // for this reconcile only: later ones send what differs
    // Units memqos changed and no longer manages (unassigned while a call
    // was on its way, class removed from the configuration, a slice with no
    // managed workload left): their own values back. A scope's record goes
    // with the scope (onUnitRemoved).
    if (!discovered_) {
        return;
    }
    std::vector<std::string> orphans;
    std::vector<std::string> capOrphans; // protection back, record kept
    for (const auto& [unit, values] : originals_) {
        if (!desired.contains(unit) && !managedUnits.contains(unit) && !unit.ends_with(".scope") &&
            !inFlight_.contains(unit) && !assigning_.contains(unit)) {
            if (!capSlice(unit)) {
                orphans.push_back(unit);
            } else if (applied_.contains(unit)) {
                capOrphans.push_back(unit);
            }
        }
    }
    for (const auto& unit : orphans) {
        restoreOriginal(unit, [] {});
    }
    // A guarded class's slice keeps its record (what its cap gives back)
    // while it has no managed workload left; its protection goes back now.
    for (const auto& unit : capOrphans) {
        restoreOriginal(unit, [] {}, true);
    }
}

std::vector<core::CgroupProtection>
Manager::otherClaims(const std::vector<PlacedTiers>& placed) const {
    std::set<std::string> managed;
    for (const auto& p : placed) {
        managed.insert(p.cgroupPath);
    }
    const auto ancestors = ancestorPaths(placed);
    const std::set<std::string> ancestorSet(ancestors.begin(), ancestors.end());
    std::vector<core::CgroupProtection> out;
    for (const auto& a : ancestors) {
        auto kids = cgroups_.children(a);
        if (!kids) {
            continue;
        }
        for (const auto& k : *kids) {
            const std::string path = a + "/" + k;
            if (managed.contains(path) || ancestorSet.contains(path)) {
                continue;
            }
            if (auto p = cgroups_.protection(path); p && *p) {
                out.push_back({path, (*p)->memoryMin, (*p)->memoryLow});
            }
        }
    }
    return out;
}

namespace {

std::optional<Limit> valueOf(const io::MemoryProperties& p, io::MemoryKey key) {
    switch (key) {
    case io::MemoryKey::Min:
        return p.memoryMin ? std::optional<Limit>(Limit(*p.memoryMin)) : std::nullopt;
    case io::MemoryKey::Low:
        return p.memoryLow ? std::optional<Limit>(Limit(*p.memoryLow)) : std::nullopt;
    case io::MemoryKey::High:
        return p.memoryHigh;
    case io::MemoryKey::Max:
        return p.memoryMax;
    case io::MemoryKey::SwapMax:
        return p.memorySwapMax;
    }
    return std::nullopt;
}

void setValue(io::MemoryProperties& p, io::MemoryKey key, const Limit& v) {
    switch (key) {
    case io::MemoryKey::Min:
        p.memoryMin = v.value_or(kNoLimit);
        break;
    case io::MemoryKey::Low:
        p.memoryLow = v.value_or(kNoLimit);
        break;
    case io::MemoryKey::High:
        p.memoryHigh = v;
        break;
    case io::MemoryKey::Max:
        p.memoryMax = v;
        break;
    case io::MemoryKey::SwapMax:
        p.memorySwapMax = v;
        break;
    }
}

// The properties memqos gives back of a unit: a slice's protection only (its
// MemoryHigh is the cap's, given back by giveBackCap), all five otherwise.
std::vector<io::MemoryKey> keysGivenBack(const std::string& unit) {
    if (unit.ends_with(".slice")) {
        return {io::MemoryKey::Min, io::MemoryKey::Low};
    }
    return {io::kMemoryKeys.begin(), io::kMemoryKeys.end()};
}

} // namespace

bool Manager::alreadySet(const std::string& unit, const io::MemoryProperties& props) {
    // What systemd reported at the unit's refresh: memqos's runtime
    // drop-ins from before a restart of memqosd (or of the unit) are still
    // there, so systemd has its values and a SetUnitProperties would only
    // make PID 1 apply them again (issue 25: at 1000 units a restart of
    // memqosd cost PID 1 ~26 s of emulated CPU). Used once, by the first
    // reconcile after the refresh; without a report the values are sent.
    const auto r = reported_.find(unit);
    if (r == reported_.end()) {
        return false;
    }
    const io::MemoryProperties now = r->second;
    reported_.erase(r);
    return std::all_of(io::kMemoryKeys.begin(), io::kMemoryKeys.end(), [&](io::MemoryKey key) {
        const auto want = valueOf(props, key);
        return !want || valueOf(now, key) == want;
    });
}

void Manager::sendProperties(const std::string& unit, const io::MemoryProperties& props,
                             bool urgent, std::function<void(Status)> done) {
    keepOthersDropIns(unit, props);
    auto answered = [this, unit, props, done = std::move(done)](Status st) {
        if (st) {
            markOwnDropIns(unit, props);
        }
        done(st);
    };
    if (urgent) {
        systemd_.setUnitPropertiesUrgent(unit, props, std::move(answered));
    } else {
        systemd_.setUnitProperties(unit, props, std::move(answered));
    }
}

void Manager::keepOthersDropIns(const std::string& unit, const io::MemoryProperties& props) const {
    for (const auto key : io::kMemoryKeys) {
        if (!valueOf(props, key)) {
            continue;
        }
        if (auto st = dropIns_.saveOthers(unit, key); !st) {
            log::warning("Cannot keep a copy of {UNIT}'s runtime drop-in for {PROPERTY} before "
                         "memqos's call overwrites it: {ERROR}; it is not given back later",
                         "UNIT", unit, "PROPERTY", std::string(io::propertyName(key)), "ERROR",
                         st.error().what);
        }
    }
}

void Manager::markOwnDropIns(const std::string& unit, const io::MemoryProperties& props) const {
    for (const auto key : io::kMemoryKeys) {
        const auto v = valueOf(props, key);
        if (!v) {
            continue;
        }
        if (auto st = dropIns_.markOwn(unit, key, *v); !st) {
            log::warning("Cannot mark {UNIT}'s runtime drop-in for {PROPERTY} as memqos's: "
                         "{ERROR}; it is taken for someone else's and left in place",
                         "UNIT", unit, "PROPERTY", std::string(io::propertyName(key)), "ERROR",
                         st.error().what);
        }
    }
}

bool Manager::giveBackDropIns(const std::string& unit,
                              const std::vector<io::MemoryKey>& keys) const {
    bool changed = false;
    for (const auto key : keys) {
        auto r = dropIns_.giveBack(unit, key);
        if (r) {
            changed = changed || *r;
        } else {
            log::warning("Cannot give back {UNIT}'s runtime drop-in for {PROPERTY}: {ERROR}",
                         "UNIT", unit, "PROPERTY", std::string(io::propertyName(key)), "ERROR",
                         r.error().what);
        }
    }
    return changed;
}

bool Manager::createdByMemqos(const std::string& unit) const {
    for (const auto& [id, m] : workloads_) {
        if (m.unit == unit) {
            return m.transient || (m.vm && m.vm->backend == VmBackend::Ganeti);
        }
    }
    return false;
}

void Manager::learnOwn(const std::string& unit, const io::MemoryProperties& current,
                       std::function<void(Status)> then) {
    const auto it = originals_.find(unit);
    io::UnitOriginal o;
    if (it != originals_.end()) {
        o = it->second;
    } else {
        o.unit = unit;
        o.values = io::unconfiguredMemory();
    }
    std::vector<std::string> learned;
    for (const auto key : io::kMemoryKeys) {
        const auto now = valueOf(current, key);
        if (!now) {
            continue;
        }
        if (it != originals_.end()) {
            const auto d = dropIns_.read(unit, key);
            if (d.owner == io::RuntimeDropIns::Owner::Memqos && d.value == now) {
                continue; // memqos's value: the unit's own is the one recorded
            }
        }
        if (valueOf(o.values, key) != now) {
            setValue(o.values, key, *now);
            learned.emplace_back(io::propertyName(key));
        }
    }
    if (it != originals_.end() && learned.empty() && o.bootId == bootId_) {
        fresh_.insert(unit);
        then(okStatus());
        return;
    }
    const bool known = it != originals_.end();
    o.bootId = bootId_;
    o.keepDropIns.clear(); // someone else's drop-ins are kept aside when overwritten
    ++recordingOwn_[unit].pending;
    auto keep = [this, unit, known, learned = std::move(learned),
                 then = std::move(then)](io::UnitOriginal record, Status st) {
        // A forgetOriginal() while the record was written (the unit given
        // back, its scope gone) came after it on disk too: not brought back.
        bool forgotten = false;
        if (auto r = recordingOwn_.find(unit); r != recordingOwn_.end()) {
            --r->second.pending;
            if (r->second.forgotten > 0) { // the oldest ones: the writes run in order
                --r->second.forgotten;
                forgotten = true;
            }
            if (r->second.pending == 0) {
                recordingOwn_.erase(r);
            }
        }
        if (forgotten) {
            then(okStatus());
            return;
        }
        if (!st) {
            log::error("Not changing {UNIT}: cannot remember its own memory properties: {ERROR}",
                       "UNIT", unit, "ERROR", st.error().what);
            then(st);
            return;
        }
        if (known && !learned.empty()) {
            std::string names;
            for (const auto& n : learned) {
                names += (names.empty() ? "" : ", ") + n;
            }
            log::notice("{UNIT}'s own {PROPERTIES} changed since memqos first changed it (an "
                        "administrator or its configuration): memqos keeps the new value and "
                        "gives it back",
                        "UNIT", unit, "PROPERTIES", names);
        }
        // Fresh only now: until the record with what was learned is in
        // originals_, a reconcile would compute the unit's values from the
        // old one (and lower an administrator's later raise of a slice's
        // MemoryLow: VM case 47-own-later); it asks to learn instead.
        originals_[unit] = std::move(record);
        fresh_.insert(unit);
        then(okStatus());
    };
    if (originalStore_ == nullptr || dryRun_) {
        keep(std::move(o), okStatus());
        return;
    }
    writeState([store = originalStore_, o] { return store->save(o); },
               [keep = std::move(keep), o](Status st) mutable { keep(std::move(o), st); });
}

void Manager::writeState(io::StateWriter::Op op, std::function<void(Status)> then) {
    writer_->write(std::move(op), std::move(then));
}

template <typename T>
void Manager::storeThen(io::StateWriter::Op op, std::string what, Reply<T> reply,
                        std::function<void()> next) {
    writeState(std::move(op), [what = std::move(what), reply = std::move(reply),
                               next = std::move(next)](Status st) {
        if (!st) {
            reply(stateWriteFailed(what, st.error()));
            return;
        }
        next();
    });
}
template void Manager::storeThen<std::string>(io::StateWriter::Op, std::string,
                                              Reply<std::string>, std::function<void()>);
template void Manager::storeThen<Done>(io::StateWriter::Op, std::string, Reply<Done>,
                                       std::function<void()>);

void Manager::writeStateOrLog(io::StateWriter::Op op, std::string what, bool asError) {
    writer_->write(std::move(op), [what = std::move(what), asError](Status st) {
        if (st) {
            return;
        }
        if (asError) {
            log::error("Cannot {WHAT}: {ERROR}", "WHAT", what, "ERROR", st.error().what);
        } else {
            log::warning("Cannot {WHAT}: {ERROR}", "WHAT", what, "ERROR", st.error().what);
        }
    });
}

void Manager::takeStoredOriginals(std::vector<io::UnitOriginal> records) {
    for (auto& o : records) {
        bool anyDropIn = false;
        for (const auto key : io::kMemoryKeys) {
            if (dropIns_.read(o.unit, key).owner != io::RuntimeDropIns::Owner::None) {
                anyDropIn = true;
            }
        }
        const bool otherBoot = !o.bootId.empty() && !bootId_.empty() && o.bootId != bootId_;
        if (otherBoot || (o.bootId.empty() && !anyDropIn)) {
            // Its runtime drop-ins went with that boot: the unit has what its
            // configuration gives, and memqos learns it again before a change.
            log::notice("Forgot the record of {UNIT}'s own memory properties made {WHEN}: the "
                        "runtime drop-ins it guarded went with that boot",
                        "UNIT", o.unit, "WHEN",
                        otherBoot ? std::string("in an earlier boot")
                                  : std::string("by an older memqosd with none of its drop-ins "
                                                "left"));
            if (originalStore_ != nullptr && !dryRun_) {
                writeStateOrLog(
                    [store = originalStore_, unit = o.unit] { return store->remove(unit); },
                    "remove the record of " + o.unit, false);
            }
            continue;
        }
        if (o.bootId.empty()) {
            // Written by a memqosd that did not mark its drop-ins: those the
            // record does not name as someone else's are memqos's.
            for (const auto key : keysGivenBack(o.unit)) {
                const std::string name(io::dropInName(key));
                if (std::find(o.keepDropIns.begin(), o.keepDropIns.end(), name) ==
                    o.keepDropIns.end()) {
                    if (auto st = dropIns_.adoptUnmarked(o.unit, key); !st) {
                        log::warning("Cannot mark {UNIT}'s runtime drop-in {NAME} as memqos's: "
                                     "{ERROR}",
                                     "UNIT", o.unit, "NAME", name, "ERROR", st.error().what);
                    }
                }
            }
            o.bootId = bootId_;
            if (originalStore_ != nullptr && !dryRun_ && !bootId_.empty()) {
                writeStateOrLog([store = originalStore_, o] { return store->save(o); },
                             "update the record of " + o.unit, false);
            }
        }
        originals_[o.unit] = std::move(o);
    }
}

void Manager::reloadSystemd(std::function<void(Status)> then) {
    waitingReload_.push_back(std::move(then));
    if (reloadInFlight_) {
        return; // the next one, after this, takes it along
    }
    reloadInFlight_ = true;
    auto batch = std::make_shared<std::vector<std::function<void(Status)>>>();
    batch->swap(waitingReload_);
    systemd_.reload([this, batch](Status st) {
        reloadInFlight_ = false;
        for (auto& f : *batch) {
            f(st);
        }
        if (!waitingReload_.empty()) {
            auto next = std::make_shared<std::vector<std::function<void(Status)>>>();
            next->swap(waitingReload_);
            reloadSystemd([next](Status s) {
                for (auto& f : *next) {
                    f(s);
                }
            });
        }
    });
}

void Manager::forgetOriginal(const std::string& unit) {
    bool onItsWay = false;
    if (auto r = recordingOwn_.find(unit); r != recordingOwn_.end()) {
        r->second.forgotten = r->second.pending; // the records on their way too
        onItsWay = true;
    }
    if ((originals_.erase(unit) > 0 || onItsWay) && originalStore_ != nullptr && !dryRun_) {
        writeStateOrLog([store = originalStore_, unit] { return store->remove(unit); },
                        "remove the record of " + unit + "'s own memory properties");
    }
}

void Manager::learnOriginal(const std::string& unit) {
    if (!learning_.insert(unit).second) {
        return; // already asked
    }
    systemd_.getUnit(unit, [this, unit](Result<io::UnitInfo> u) {
        if (!u) {
            learning_.erase(unit);
            log::warning("Not changing {UNIT} yet: cannot read its memory properties: {ERROR}",
                         "UNIT", unit, "ERROR", u.error().what);
            checkSettled();
            return;
        }
        // A unit systemd does not report memory properties for has its
        // defaults (a slice not loaded yet, say). Still learning until the
        // record is on disk: a reconcile meanwhile does not ask again.
        // Coalesced: at start (or after a burst of new units) every unit's
        // answer arrives on its own, and a reconcile per answer was
        // O(units²) (8 s of CPU at 1000 units in tick-bench's set-up).
        // The last outstanding answer reconciles; should one never come,
        // the next tick does.
        learnOwn(unit, u->memory.value_or(io::unconfiguredMemory()), [this, unit](Status st) {
            learning_.erase(unit);
            if (st) {
                reconcileDue_ = true;
            }
            if (reconcileDue_ && learning_.empty()) {
                reconcile();
            }
            checkSettled();
        });
    });
}

void Manager::whenProtected(const std::string& id, std::function<void()> then) {
    SettleWaiter w{{}, std::move(then), ticks_};
    if (auto it = workloads_.find(id); it != workloads_.end()) {
        const auto& m = it->second;
        if (!m.unit.empty()) {
            w.units.push_back(m.unit);
        }
        // The slices above it: every ".slice" component of its cgroup path.
        std::string_view path = m.cgroupPath;
        while (!path.empty()) {
            const auto slash = path.find('/');
            const auto part = path.substr(0, slash);
            if (const auto unit = sliceUnitOf(std::string(part)); !unit.empty()) {
                w.units.push_back(unit);
            }
            path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash + 1);
        }
    }
    settleWaiters_.push_back(std::move(w));
    checkSettled();
}

void Manager::checkSettled() {
    const auto busy = [this](const std::string& unit) {
        // (reconcileDue_: a learned unit whose properties are not sent yet.)
        return reconcileDue_ || inFlight_.contains(unit) || learning_.contains(unit);
    };
    // (A waiter's `then` may add waiters or call back in: take them out
    // first.)
    std::vector<std::function<void()>> due;
    for (auto it = settleWaiters_.begin(); it != settleWaiters_.end();) {
        const bool late = ticks_ >= it->sinceTick + kSettleTicks;
        if (late || std::none_of(it->units.begin(), it->units.end(), busy)) {
            due.push_back(std::move(it->then));
            it = settleWaiters_.erase(it);
        } else {
            ++it;
        }
    }
    for (auto& then : due) {
        then();
    }
}

void Manager::restoreOriginal(const std::string& unit, std::function<void()> then,
                              bool keepRecord) {
    const bool recorded = originals_.contains(unit);
    auto forget = [this, unit, keepRecord] {
        applied_.erase(unit);
        fresh_.erase(unit);
        if (!keepRecord) {
            forgetOriginal(unit);
        }
    };
    if (dryRun_) {
        log::notice("Dry run: would give {UNIT} back its own memory properties", "UNIT", unit);
        forget();
        then();
        return;
    }
    if (!restoring_.insert(unit).second) {
        then();
        return;
    }
    const auto keys = keysGivenBack(unit);
    // A unit with a configuration of its own (a record): memqos's runtime
    // drop-ins go (someone else's kept copy back in place), then systemd
    // reloads and applies what the unit's configuration says *now* -- not
    // what memqos remembered: its unit file may have changed meanwhile. The
    // record goes last: a crash before leaves a record whose give-back is
    // done again at the next start.
    auto viaReload = [this, unit, keys, forget, then] {
        const bool changed = giveBackDropIns(unit, keys);
        if (!changed && !applied_.contains(unit)) {
            // Nothing of memqos's on it (its own values were learned, never
            // overridden): nothing to reload for.
            restoring_.erase(unit);
            forget();
            then();
            return;
        }
        reloadSystemd([this, unit, forget, then](Status st) {
            restoring_.erase(unit);
            if (st) {
                log::info("Gave {UNIT} back its own memory properties: memqos's runtime drop-ins "
                          "removed, and systemd re-applied the unit's configuration",
                          "UNIT", unit, "MESSAGE_ID", log::kMessagePropertiesChanged);
            } else {
                log::warning("Removed memqos's runtime drop-ins of {UNIT}, but systemd did not "
                             "reload: {ERROR}; the unit keeps memqos's values until the next "
                             "daemon-reload",
                             "UNIT", unit, "ERROR", st.error().what);
            }
            forget();
            then();
        });
    };
    // A unit memqos created (no record: its properties were memqos's from
    // the start) gets systemd's defaults.
    auto viaDefaults = [this, unit, keys, forget, then] {
        io::MemoryProperties props = io::unconfiguredMemory();
        if (unit.ends_with(".slice")) {
            props.memoryHigh.reset(); // memqos sets only a slice's protection
            props.memoryMax.reset();
            props.memorySwapMax.reset();
        }
        sendProperties(unit, props, false, [this, unit, keys, forget, then](Status st) {
            restoring_.erase(unit);
            if (st || st.error().code == std::errc::no_such_file_or_directory) {
                giveBackDropIns(unit, keys);
                forget();
                log::info("Gave {UNIT} back systemd's defaults", "UNIT", unit, "MESSAGE_ID",
                          log::kMessagePropertiesChanged);
            } else {
                log::warning("Cannot give {UNIT} back its own memory properties: {ERROR}",
                             "UNIT", unit, "ERROR", st.error().what);
            }
            then();
        });
    };
    // A unit systemd no longer has, or a transient one that stopped (it never
    // runs again with these properties), has nothing to be given back; and
    // SetUnitProperties would make systemd create an empty cgroup for a
    // stopped unit, which a later start of memqosd would take for a workload
    // in its class slice.
    systemd_.getUnit(unit, [this, unit, recorded, forget, viaReload, viaDefaults,
                            then](Result<io::UnitInfo> u) {
        const bool running = u && (u->activeState == "active" || u->activeState == "activating" ||
                                   u->activeState == "reloading" ||
                                   u->activeState == "deactivating");
        if (u && (u->loadState != "loaded" || (u->transient && !running))) {
            restoring_.erase(unit);
            forget();
            log::info("{UNIT} is gone; nothing to give back", "UNIT", unit);
            then();
            return;
        }
        // Also when the look-up failed: the calls tell.
        if (recorded) {
            viaReload();
        } else {
            viaDefaults();
        }
    });
}

void Manager::startClassSlices() {
    // The default classes' slices are unit files (units/); a class added in
    // the configuration gets a transient slice so it exists before its first
    // workload and shows in systemctl.
    const auto defaults = core::defaultClasses();
    for (const auto& cls : config_.classes) {
        if (core::findClass(defaults, cls.name) != nullptr) {
            continue;
        }
        startClassSlice(cls.slice());
    }
}

void Manager::startClassSlice(const std::string& slice) {
    slicesToStart_.insert(slice);
    systemd_.startTransientSlice(slice, [this, slice](Status st) {
        if (st) {
            slicesToStart_.erase(slice);
            return;
        }
        log::warning("Cannot start the class slice {SLICE}: {ERROR}; trying again when systemd "
                     "reloads or comes back on the bus",
                     "SLICE", slice, "ERROR", st.error().what);
    });
}

void Manager::startUnstartedSlices() {
    // Only classes still in the configuration: a reload may have removed one.
    std::vector<std::string> again;
    for (const auto& cls : config_.classes) {
        if (slicesToStart_.contains(cls.slice())) {
            again.push_back(cls.slice());
        }
    }
    slicesToStart_.clear();
    if (!again.empty()) {
        log::info("Starting {COUNT} class slice(s) again", "COUNT", again.size());
    }
    for (const auto& slice : again) {
        startClassSlice(slice);
    }
}

void Manager::onSystemdReloaded() {
    // A daemon-reload re-reads unit files and applies them: memqos's runtime
    // drop-ins keep its values, but an administrator's persistent
    // set-property (/etc/systemd/system.control) now wins over them. What
    // systemd has is what memqos compares against; slices learn their own
    // values again before memqos sends them anything.
    log::info("systemd reloaded; checking the tiers");
    startUnstartedSlices();
    fresh_.clear();
    syncAppliedThenReconcile();
}

void Manager::syncAppliedThenReconcile() {
    std::vector<std::string> units;
    for (const auto& [unit, props] : applied_) {
        units.push_back(unit);
    }
    auto oneDone = util::joinAfter(units.size() + 1, [this] { refreshAllThenReconcile(); });
    for (const auto& unit : units) {
        systemd_.getUnit(unit, [this, unit, oneDone](Result<io::UnitInfo> u) {
            const auto a = applied_.find(unit);
            if (a != applied_.end()) {
                if (!u || !u->memory) {
                    applied_.erase(a); // not known: sent again
                } else {
                    for (const auto key : io::kMemoryKeys) {
                        const auto now = valueOf(*u->memory, key);
                        if (valueOf(a->second, key) && now) {
                            setValue(a->second, key, *now);
                        }
                    }
                }
            }
            oneDone();
        });
    }
    oneDone();
}

void Manager::refreshAllThenReconcile() {
    // Every unit's state and cgroup path, then the tiers, once.
    std::vector<std::string> ids;
    for (const auto& [id, m] : workloads_) {
        if (!m.unit.empty()) {
            ids.push_back(id);
        }
    }
    refreshThenReconcile(ids);
}

void Manager::refreshThenReconcile(const std::vector<std::string>& ids) {
    if (ids.empty()) {
        reconcile();
        return;
    }
    auto oneDone = util::joinAfter(ids.size(), [this] { reconcile(); });
    for (const auto& id : ids) {
        refreshUnit(id, oneDone);
    }
}

void Manager::onUnitStarted(const std::string& unit) {
    if (auto it = workloads_.find(unit); it != workloads_.end()) {
        applied_.erase(unit); // a restarted unit gets its tiers again
        refreshUnit(unit, [this] { reconcile(); });
        return;
    }
    if (!(unit.ends_with(".service") || unit.ends_with(".scope"))) {
        return;
    }
    // A VM's scope is its VM's (libvirt partition, Ganeti adoption): never a
    // unit workload, whatever a rule or a class slice says.
    if (isVmScope(unit)) {
        return;
    }
    if (unitRuleFor(unit) != nullptr) {
        adopt(unit, "", Source::Rule);
        refreshUnit(unit, [this] { reconcile(); });
        return;
    }
    // Started inside a class slice (systemd-run --slice=memqos-shared.slice …)?
    for (const auto& cls : config_.classes) {
        const std::string path = io::classSlicePath(cls.name) + "/" + unit;
        if (cgroups_.resolve(path) && std::filesystem::is_directory(*cgroups_.resolve(path))) {
            adopt(unit, path, Source::Slice);
            reconcile();
            return;
        }
    }
}

void Manager::onUnitRemoved(const std::string& unit) {
    // A transient unit's drop-ins went with it (systemd removes them when it
    // unloads the unit): a copy memqos kept beside them must not reach the
    // next unit of that name (VM suite 20-tiers: a systemd-run unit started
    // again under the same name got the old one's set-property back).
    dropIns_.dropStaleCopies(unit);
    if (unit.ends_with(".scope")) {
        forgetOriginal(unit); // a scope does not come back: nothing to give back to it
        // A VM's scope (its qemu ended): the VM stays known, not running.
        for (auto& [id, m] : workloads_) {
            if (m.vm && m.unit == unit) {
                applied_.erase(unit);
                m.unit.clear();
                m.cgroupPath.clear();
                m.present = false;
                m.vm->running = false;
                m.vm->pid = 0;
                reconcile();
                return;
            }
        }
    }
    auto it = workloads_.find(unit);
    if (it == workloads_.end()) {
        return;
    }
    applied_.erase(unit);
    if (it->second.transient) {
        // A RunWorkload unit does not come back once systemd dropped it.
        writeStateOrLog([this, unit] { return store_.remove(unit); },
                     "remove the stored assignment of " + unit +
                         ", which is gone (the next start loads it and finds no such unit)");
        log::info("{UNIT} is gone; no longer managed", "UNIT", unit);
        workloads_.erase(it);
        reconcile();
    } else if (it->second.source != Source::Api) {
        workloads_.erase(it); // found by rule or slice: found again when it returns
        reconcile();
    } else {
        it->second.loaded = false; // until it is loaded again
    }
}

ApiResult<core::Workload> Manager::validate(const std::string& id, const std::string& className,
                                            Bytes request, Bytes limit) const {
    if (auto st = core::validateWorkloadId(id); !st) {
        return apiError("InvalidUnit", "workload id '" + id + "': " + st.error().what);
    }
    if (auto unknown = unknownClass(className)) {
        return *unknown;
    }
    const Bytes total = system_.mem.memTotal;
    if (limit == 0) {
        return apiError("SizeOutOfRange",
                        "limit 0 would leave the workload no memory; give a size, or "
                        "18446744073709551615 for no limit");
    }
    if (request == kNoLimit) {
        return apiError("SizeOutOfRange", "request cannot be 'max'; use 0 for no request");
    }
    if (total > 0 && limit != kNoLimit && limit / kAbsurdFactor > total) {
        return apiError("SizeOutOfRange", "limit " + std::to_string(limit) +
                                              " is more than 64 times MemTotal (" +
                                              std::to_string(total) + ")");
    }
    if (total > 0 && request > total) {
        return apiError("SizeOutOfRange", "request " + std::to_string(request) +
                                              " is more than MemTotal (" + std::to_string(total) +
                                              "): it could never be guaranteed");
    }
    if (limit != kNoLimit && request > limit) {
        return apiError("RequestAboveLimit", "request " + std::to_string(request) +
                                                 " is above limit " + std::to_string(limit));
    }
    core::Workload w;
    w.id = id;
    w.kind = *core::kindFromId(id);
    w.className = className;
    w.request = request;
    w.limit = limitFromBus(limit);
    return w;
}

std::optional<ApiError> Manager::unknownClass(const std::string& className) const {
    if (core::findClass(config_.classes, className) != nullptr) {
        return std::nullopt;
    }
    return apiError("UnknownClass", "class '" + className + "' does not exist (known: " +
                                        classList(config_.classes) + ")");
}

ApiResult<core::Workload> Manager::admit(const std::string& id, const std::string& className,
                                        Bytes request, Bytes limit) const {
    auto v = validate(id, className, request, limit);
    if (!v.ok()) {
        return v;
    }
    if (auto refused = admissionRefusal(*core::findClass(config_.classes, className))) {
        return *refused;
    }
    return v;
}

std::optional<ApiError> Manager::admissionRefusal(const core::ClassPolicy& cls) const {
    if (pressure_.admissionOpen || dryRun_ || !cls.killable) {
        return std::nullopt;
    }
    return apiError("AdmissionClosed",
                    "admission is closed at pressure level " + std::to_string(pressure_.level) +
                        " (" + wording::describe(pressure_.reason) + "): class " + cls.name +
                        " is killable, so nothing new is placed in it until the pressure falls "
                        "to level 0; retry later, or use a class that is not killable");
}

std::optional<ApiError> Manager::admissionRefusalUnlessRunning(const std::string& className,
                                                               bool running) const {
    const auto* cls = core::findClass(config_.classes, className);
    if (running || cls == nullptr) {
        return std::nullopt;
    }
    return admissionRefusal(*cls);
}

void Manager::assign(const std::string& id, const std::string& className, Bytes request,
                     Bytes limit, bool persist, Reply<std::string> reply) {
    if (released_) {
        reply(apiError("Failed", "memqosd is releasing everything and stopping (memqosctl "
                                 "release --all); start it again to assign"));
        return;
    }
    auto v = validate(id, className, request, limit);
    if (!v.ok()) {
        reply(v.error());
        return;
    }
    auto tiers = tiersFor(v.value());
    if (!tiers) {
        reply(apiError("InvalidArgument", tiers.error().what));
        return;
    }
    if (v.value().kind == core::WorkloadKind::Vm) {
        if (isGanetiInstance(vmName(id))) {
            assignGaneti(v.value(), persist, std::move(reply));
        } else {
            assignVm(v.value(), persist, std::move(reply));
        }
        return;
    }
    systemd_.getUnit(id, [this, w = v.value(), t = *tiers, persist,
                          reply = std::move(reply)](Result<io::UnitInfo> u) {
        if (!u) {
            reply(apiError("SystemdFailed", "cannot look up " + w.id + ": " + u.error().what));
            return;
        }
        if (u->loadState == "not-found") {
            reply(apiError("NoSuchUnit", "unit " + w.id + " does not exist (systemd has no "
                                                          "unit file or running unit of that name)"));
            return;
        }
        if (u->loadState != "loaded") {
            reply(apiError("NoSuchUnit", "unit " + w.id + " cannot be managed: its load state "
                                                          "is '" + u->loadState + "'"));
            return;
        }
        // A unit with a cgroup runs: its class change adds no memory.
        if (auto refused = admissionRefusalUnlessRunning(w.className, !u->controlGroup.empty())) {
            reply(*refused);
            return;
        }
        // What the unit's own configuration gives, before memqos changes it.
        ++assigning_[w.id];
        learnOwn(w.id, u->memory.value_or(io::unconfiguredMemory()),
                 [this, w, t, persist, cgroup = stripSlash(u->controlGroup),
                  reply](Status st) mutable {
                     if (!st) {
                         endAssigning(w.id);
                         reply(stateWriteFailed("remember the memory properties of " + w.id +
                                                    " before changing them (so that they can "
                                                    "be given back)",
                                                st.error()));
                         return;
                     }
                     storeThenAssign(w, t, persist, std::move(cgroup), std::move(reply));
                 });
    });
}

void Manager::endAssigning(const std::string& unit) {
    if (auto it = assigning_.find(unit); it != assigning_.end() && --it->second <= 0) {
        assigning_.erase(it);
    }
}

void Manager::storeThenAssign(const core::Workload& w, const core::Tiers& t, bool persist,
                              std::string cgroup, Reply<std::string> reply) {
    // State first: a crash after the write re-applies at start-up.
    storeThen<std::string>(
        [this, a = io::Assignment{w, persist}] { return store_.save(a); },
        "store the assignment of " + w.id,
        [this, id = w.id, reply](ApiResult<std::string> failed) {
            endAssigning(id);
            reply(std::move(failed));
        },
        [this, w, t, persist, cgroup = std::move(cgroup), reply] {
        endAssigning(w.id); // in workloads_ from here on
        const std::optional<ManagedWorkload> previous =
            workloads_.contains(w.id) ? std::optional(workloads_.at(w.id)) : std::nullopt;
        ManagedWorkload m;
        m.workload = w;
        m.persistent = persist;
        m.source = Source::Api;
        m.unit = w.id;
        m.cgroupPath = cgroup;
        m.tiers = t;
        workloads_[w.id] = m;
        const auto props = unitProperties(t);
        auto finish = [this, w, previous, reply](Status st) {
            if (!st) {
                // Change nothing: restore what was there before.
                auto refused = [reply, w, why = st.error().what](std::string rollback) {
                    reply(apiError("SystemdFailed", "systemd refused the memory properties of " +
                                                        w.id + ": " + why + rollback));
                };
                if (previous) {
                    workloads_[w.id] = *previous;
                    writeState(
                        [this, a = io::Assignment{previous->workload, previous->persistent}] {
                            return store_.save(a);
                        },
                        [refused, w](Status r) {
                            refused(r ? std::string() :
                                rollbackFailed(
                                    w.id, r.error(),
                                    "the stored assignment is the refused one (class " +
                                        w.className +
                                        "), which the next start applies; assign it again once "
                                        "the state directory is writable"));
                        });
                } else {
                    workloads_.erase(w.id);
                    writeState([this, id = w.id] { return store_.remove(id); },
                               [refused, w](Status r) {
                                   refused(r ? std::string() :
                                       rollbackFailed(
                                           w.id, r.error(),
                                           "the refused assignment stays stored and the next "
                                           "start applies it; unassign it once the state "
                                           "directory is writable"));
                               });
                }
                return;
            }
            log::notice("Assigned {WORKLOAD} to class {CLASS}", "WORKLOAD", w.id, "CLASS",
                        w.className, "REQUEST", w.request, "LIMIT", limitToBus(w.limit));
            reconcile(); // the ancestors' sums
            whenProtected(w.id, [reply, id = w.id] { reply(id); });
        };
        if (dryRun_) {
            // What it would set, as reconcile() says it for the slices above.
            log::notice("Dry run: would set memory properties of {UNIT}: {PROPERTIES}", "UNIT",
                        w.id, "PROPERTIES", describeProperties(props));
            applied_[w.id] = props;
            finish(okStatus());
            return;
        }
        inFlight_[w.id] = props;
        sendProperties(w.id, props, false, [this, id = w.id, props, finish](Status st) {
            inFlight_.erase(id);
            if (st) {
                applied_[id] = props;
            }
            finish(st);
        });
    });
}

void Manager::releaseAll(Reply<std::vector<std::string>> reply) {
    released_ = true;
    std::vector<std::string> ids;
    for (const auto& [id, m] : workloads_) {
        if (!observedOnly(m)) {
            ids.push_back(id);
        }
    }
    log::notice("Releasing: giving back {COUNT} workloads, then stopping", "COUNT", ids.size());
    auto out = std::make_shared<std::vector<std::string>>();
    auto oneDone = util::joinAfter(ids.size() + 1, [this, out, reply] {
        // Slices whose children are all gone, and anything else memqos
        // still holds a record of (reconcile no longer runs).
        std::vector<std::string> units;
        for (const auto& [unit, o] : originals_) {
            units.push_back(unit);
        }
        auto finish = util::joinAfter(units.size() + 1, [this, out, reply] {
            log::notice("Released {COUNT} workloads", "COUNT", out->size());
            reply(*out);
            if (releaseHook_) {
                releaseHook_();
            }
        });
        std::set<std::string> cappedNow;
        for (const auto& [cls, slice] : capped_) {
            cappedNow.insert(slice);
        }
        for (const auto& unit : units) {
            // A slice capped now keeps its record: the stop gives its cap
            // back from it (and then forgets it, released_).
            restoreOriginal(unit, finish, cappedNow.contains(unit));
        }
        finish();
    });
    for (const auto& id : ids) {
        unassign(id, [id, out, oneDone](ApiResult<Done> r) {
            if (r.ok()) {
                out->push_back(id);
            } else {
                log::warning("Cannot release {WORKLOAD}: {ERROR}", "WORKLOAD", id, "ERROR",
                             r.error().message);
            }
            oneDone();
        });
    }
    oneDone();
}

void Manager::unassign(const std::string& id, Reply<Done> reply) {
    auto it = workloads_.find(id);
    if (it == workloads_.end()) {
        reply(apiError("NoSuchWorkload", "'" + id + "' is not managed by memqos"));
        return;
    }
    if (observedOnly(it->second)) {
        // Nothing to take back, and giving its scope "its own values" would
        // write systemd's defaults over whatever it has.
        reply(apiError("NoSuchWorkload", "'" + id +
                                             "' is unplaced: memqos only observes it, "
                                             "so there is nothing to unassign"));
        return;
    }
    storeThen<Done>([this, id] { return store_.remove(id); },
                    "remove the stored assignment of " + id, reply,
                    [this, id, reply] { unassignStored(id, reply); });
}

void Manager::unassignStored(const std::string& id, Reply<Done> reply) {
    auto it = workloads_.find(id);
    if (it == workloads_.end()) {
        // An UnassignWorkload of it that came first took it while this one's
        // write was on its way.
        reply(apiError("NoSuchWorkload", "'" + id + "' is not managed by memqos"));
        return;
    }
    const std::string unit = it->second.unit;
    const bool libvirtVm = it->second.vm && it->second.vm->backend == VmBackend::Libvirt;
    const bool wasPersistent = it->second.persistent && it->second.source == Source::Api;
    workloads_.erase(it);
    // (applied_ goes when the unit is given back: whether memqos set
    // anything on it decides whether systemd reloads.)
    log::notice("Unassigned {WORKLOAD}", "WORKLOAD", id);
    giveBackOom(id, "unassigned");
    if (libvirtVm && hypervisor_ != nullptr) {
        const std::string name = vmName(id);
        auto rediscover = [this, name] { refreshDomain(name); };
        if (wasPersistent && !dryRun_) {
            // Take back what memqos stored in the domain: its metadata, and
            // the partition (libvirt's default, /machine, again).
            hypervisor_->place(name, "", "/machine", [name, rediscover](Status st) {
                if (!st) {
                    log::warning("Cannot remove memqos metadata from domain {DOMAIN}: {ERROR}",
                                 "DOMAIN", name, "ERROR", st.error().what);
                }
                rediscover();
            });
        } else {
            rediscover();
        }
    }
    if (unit.empty()) {
        reconcile();
        reply(Done{});
        return;
    }
    // Give the unit back exactly what its own configuration gives.
    restoreOriginal(unit, [this, reply] {
        reconcile();
        reply(Done{});
    });
}

void Manager::run(const std::string& name, const std::string& className, Bytes request,
                  Bytes limit, const std::vector<std::string>& argv, Reply<std::string> reply) {
    if (released_) {
        reply(apiError("Failed", "memqosd is releasing everything and stopping (memqosctl "
                                 "release --all); start it again to run a workload"));
        return;
    }
    const std::string unit = name.ends_with(".service") ? name : name + ".service";
    if (argv.empty() || argv.front().empty()) {
        reply(apiError("InvalidArgument", "argv is empty: give the command to run"));
        return;
    }
    if (!argv.front().starts_with('/')) {
        reply(apiError("InvalidArgument", "argv[0] '" + argv.front() +
                                              "' must be an absolute path (systemd does not "
                                              "search PATH for transient units)"));
        return;
    }
    auto v = admit(unit, className, request, limit);
    if (!v.ok()) {
        reply(v.error());
        return;
    }
    if (workloads_.contains(unit)) {
        reply(apiError("InvalidUnit", "unit " + unit + " is already managed"));
        return;
    }
    auto tiers = tiersFor(v.value());
    if (!tiers) {
        reply(apiError("InvalidArgument", tiers.error().what));
        return;
    }
    const auto* cls = core::findClass(config_.classes, className);
    const auto props = unitProperties(*tiers);
    ManagedWorkload m;
    m.workload = v.value();
    m.source = Source::Api;
    m.unit = unit;
    m.cgroupPath = io::unitCgroupPath(className, unit);
    m.transient = true;
    m.tiers = *tiers;
    // State first, as in assign(). Runtime only: a transient unit does not
    // outlive a reboot either.
    storeThen<std::string>(
        [this, a = io::Assignment{m.workload, false}] { return store_.save(a); },
        "store the assignment of " + m.unit, reply,
        [this, m, props, unit, slice = cls->slice(), argv, reply] {
        auto finish = [this, m, props, reply](Status st) {
            if (!st) {
                writeState([this, unit = m.unit] { return store_.remove(unit); },
                           [m, reply, why = st.error().what](Status r) {
                               const std::string rollback =
                                   r ? std::string()
                                     : rollbackFailed(m.unit, r.error(),
                                                      "the next start loads it and finds no "
                                                      "such unit");
                               reply(apiError("SystemdFailed",
                                              "cannot start " + m.unit + ": " + why + rollback));
                           });
                return;
            }
            workloads_[m.unit] = m;
            applied_[m.unit] = props;
            log::notice("Started {UNIT} in class {CLASS}", "UNIT", m.unit, "CLASS",
                        m.workload.className);
            reconcile();
            reply(m.unit);
        };
        if (dryRun_) {
            finish(okStatus());
            return;
        }
        systemd_.startTransientService(unit, slice, props, argv, finish);
    });
}

core::PlacementInput Manager::placementInput(std::string_view exclude) const {
    core::PlacementInput in;
    in.memTotal = system_.mem.memTotal;
    in.nodeReserve = nodeReserved();
    for (const auto& [id, m] : workloads_) {
        if (m.workload.kind != core::WorkloadKind::Vm) {
            in.services = core::saturatingAdd(in.services, m.workload.request);
        }
    }
    in.instances =
        core::committedMemory(recordedInstances(), exclude, config_.overcommit.vmOverhead);
    in.reserved = config_.overcommit.failoverReserve.resolve(system_.mem.memTotal);
    in.memoryRatio = config_.overcommit.memoryRatio;
    in.swapTotal = system_.mem.swapTotal;
    return in;
}

std::vector<core::Instance> Manager::recordedInstances() const {
    std::vector<core::Instance> all;
    for (const auto& [name, i] : instances_) {
        all.push_back(i);
    }
    return all;
}

Bytes Manager::upInstancesMaxMemory() const {
    return core::committedMemory(recordedInstances(), {}, 0);
}

void Manager::instanceRecordChanged(Bytes before) {
    if (listener_ != nullptr && upInstancesMaxMemory() != before) {
        listener_->managerPropertiesChanged({"UpInstancesMaxMemory"});
    }
}

Manager::PlacementAnswer Manager::verifyPlacement(Bytes memory, Bytes /*minMemory*/,
                                                  const PlacementRequest& request) const {
    auto in = placementInput(request.instance);
    if (request.failoverReserve) {
        in.reserved = *request.failoverReserve;
    }
    const core::PlacementPolicy policy{request.refuseSoft, config_.overcommit.swapCheck};
    const core::Verdict verdict = core::checkPlacement(
        in, core::saturatingAdd(memory, config_.overcommit.vmOverhead), policy);
    PlacementAnswer v{
        .kind = verdict.kind, .message = wording::describe(verdict), .numbers = verdict.numbers};
    // Closed admission refuses what would land in a killable class; a
    // caller that names no class gets the answer it always had (every
    // candidate taken to be killable).
    const core::ClassPolicy* cls = placementClass(request);
    if (!pressure_.admissionOpen && !dryRun_ && (cls == nullptr || cls->killable)) {
        v.kind = core::VerdictKind::Hard;
        v.message = "hard: memory pressure: admission is closed at pressure level " +
                    std::to_string(pressure_.level) + " (" + wording::describe(pressure_.reason) +
                    ")" +
                    (cls != nullptr ? "; class " + cls->name + " is killable, so no new VM " +
                                          "may start in it here until it reopens"
                                    : "; no new VM may start here until it reopens");
        v.numbers.emplace_back("pressure_level", pressure_.level);
    }
    return v;
}

const core::ClassPolicy* Manager::placementClass(const PlacementRequest& request) const {
    if (!request.className) {
        return nullptr;
    }
    std::string name = *request.className;
    if (name.empty()) {
        name = config_.vm.defaultClass;
        if (!request.instance.empty()) {
            const std::string id = vmId(request.instance);
            if (const auto w = workloads_.find(id); w != workloads_.end()) {
                name = w->second.workload.className;
            } else if (const auto* rule = ruleFor(id)) {
                name = rule->className;
            }
        }
    }
    return core::findClass(config_.classes, name);
}

std::vector<wording::FindingText> Manager::verify() const {
    const auto in = placementInput();
    Bytes protectedMin = 0;
    std::map<std::string, core::ClassCoverage> coverage;
    for (const auto& [id, m] : workloads_) {
        // Services' requests are already out of `available`: only VMs'
        // protected memory (memory.min and memory.low) is compared with it.
        if (m.workload.kind == core::WorkloadKind::Vm) {
            protectedMin = core::saturatingAdd(
                protectedMin, core::saturatingAdd(m.tiers.memoryMin, m.tiers.memoryLow));
        }
        if (observedOnly(m)) {
            // memqos frees nothing of an unplaced VM: all of its memory is
            // as good as protected while it runs.
            if (m.vm && m.vm->running) {
                protectedMin = core::saturatingAdd(protectedMin, m.vm->memory);
            }
            continue; // no class to cover
        }
        auto& c = coverage[m.workload.className];
        c.className = m.workload.className;
        c.membersMin = core::saturatingAdd(c.membersMin, m.tiers.memoryMin);
        c.membersLow = core::saturatingAdd(c.membersLow, m.tiers.memoryLow);
    }
    std::vector<core::ClassCoverage> cov;
    for (auto& [name, c] : coverage) {
        auto sample = cgroups_.sample(io::classSlicePath(name));
        if (sample && sample->has_value()) {
            c.sliceMin = (*sample)->memoryMin;
            c.sliceLow = (*sample)->memoryLow;
            cov.push_back(c);
        }
    }
    auto findings = wording::describe(
        core::verifyPlacement(in, protectedMin, cov, config_.overcommit.swapCheck));
    ganetiFindings(findings);
    return findings;
}

void Manager::recordInstance(const std::string& name, Bytes minMemory, Bytes maxMemory, bool up,
                             Reply<Done> reply) {
    if (auto ok = core::validateInstanceName(name); !ok) {
        reply(apiError("InvalidArgument",
                       ok.error().what + " (got '" + name.substr(0, 80) + "')"));
        return;
    }
    if (maxMemory == 0 || maxMemory == kNoLimit) {
        reply(apiError("SizeOutOfRange",
                       "max_memory of instance " + name + " must be above 0 and below 'max'"));
        return;
    }
    if (minMemory > maxMemory) {
        reply(apiError("InvalidArgument", "min_memory " + std::to_string(minMemory) +
                                              " of instance " + name + " is above max_memory " +
                                              std::to_string(maxMemory)));
        return;
    }
    const core::Instance record{name, minMemory, maxMemory, up};
    storeThen<Done>([this, record] { return instanceStore_.save(record); },
                    "store the record of instance " + record.name, reply,
                    [this, record, reply] {
        const std::string& instance = record.name;
        const auto before = instances_.find(instance);
        if (before == instances_.end() || before->second != record) {
            log::notice("Instance {INSTANCE} recorded: max {MAX_MEMORY}, min {MIN_MEMORY}, "
                        "{STATE}",
                        "INSTANCE", instance, "MAX_MEMORY", std::to_string(record.maxMemory),
                        "MIN_MEMORY", std::to_string(record.minMemory), "STATE",
                        record.up ? "up" : "down");
        }
        const Bytes upMaxBefore = upInstancesMaxMemory();
        instances_[instance] = record;
        instanceRecordChanged(upMaxBefore);
        adoptInstance(instance); // up: into its scope; down: no longer running
        reply(Done{});
    });
}

void Manager::forgetInstance(const std::string& name, Reply<Done> reply) {
    if (instances_.find(name) == instances_.end()) {
        reply(apiError("NoSuchInstance", "instance '" + name.substr(0, 255) +
                                             "' is not in this node's record (memqosctl status "
                                             "lists the recorded instances)"));
        return;
    }
    storeThen<Done>([this, name] { return instanceStore_.remove(name); },
                    "remove the record of instance " + name, reply,
                    [this, name, reply] {
        if (instances_.find(name) == instances_.end()) {
            reply(apiError("NoSuchInstance", "instance '" + name +
                                                 "' was forgotten by a call before this one"));
            return;
        }
        const Bytes upMaxBefore = upInstancesMaxMemory();
        instances_.erase(name);
        instanceRecordChanged(upMaxBefore);
        log::notice("Instance {INSTANCE} forgotten", "INSTANCE", name);
        // Ganeti removed it (or it left this node): its assignment goes too.
        auto w = workloads_.find(vmId(name));
        if (w == workloads_.end() || !w->second.vm ||
            w->second.vm->backend != VmBackend::Ganeti) {
            reply(Done{});
            return;
        }
        auto let = [this, id = w->first, reply] {
            if (auto it = workloads_.find(id); it != workloads_.end()) {
                applied_.erase(it->second.unit);
                workloads_.erase(it);
                reconcile();
            }
            reply(Done{});
        };
        if (w->second.source != Source::Api) {
            let();
            return;
        }
        writeState([this, id = w->first] { return store_.remove(id); },
                   [name, id = w->first, let, reply](Status removed) {
                       if (!removed) {
                           // Still managed, so that UnassignWorkload can retry.
                           reply(stateWriteFailed(
                               "remove the stored assignment of " + id, removed.error(),
                               "instance " + name + " is forgotten, but memqos manages " + id +
                                   " until UnassignWorkload of it succeeds"));
                           return;
                       }
                       let();
                   });
    });
}

ApiResult<std::vector<std::string>> Manager::reload() {
    auto next = reader_();
    if (!next) {
        log::warning("Configuration rejected, keeping the old one: {ERROR}", "ERROR",
                     next.error().what, "MESSAGE_ID", log::kMessageConfigRejected);
        return apiError("ConfigInvalid",
                        "the new configuration is invalid; the old one stays in force: " +
                            next.error().what);
    }
    auto notes = config::restartNeeded(config_, *next);
    config_ = config::withStartOnlyKeysOf(config_, std::move(*next));
    partAt_.reset(); // classes and reclaim settings may have changed: no light tick
    const bool wasDryRun = dryRun_;
    dryRun_ = dryRunForced_ || config_.manager.dryRun; // and with it actuator()
    if (dryRunForced_ && !config_.manager.dryRun) {
        notes.emplace_back("Manager.DryRun=no has no effect: memqosd was started with --dry-run, "
                           "which stays on until it restarts without it");
    }
    if (wasDryRun && !dryRun_) {
        // What a dry run "applied" never was: every unit gets its tiers now.
        applied_.clear();
        // The units' own values learned during the dry run were kept in
        // memory only: stored now, before the first real change. One that
        // cannot be stored is learned again (and refused) before a change.
        if (originalStore_ != nullptr) {
            for (auto it = originals_.begin(); it != originals_.end();) {
                // On the loop, as Reload answers: each result decides.
                if (auto st = writer_->writeNow([store = originalStore_, &o = it->second] {
                        return store->save(o);
                    });
                    !st) {
                    log::error("Cannot remember the own memory properties of {UNIT}: {ERROR}",
                               "UNIT", it->first, "ERROR", st.error().what);
                    it = originals_.erase(it);
                } else {
                    ++it;
                }
            }
        }
        log::notice("Dry run off: memqosd acts from now on");
    } else if (!wasDryRun && dryRun_) {
        log::notice("Dry run on: memqosd decides and logs, but no longer acts");
    }
    if (auto note = dropOldMetricsFile()) {
        notes.push_back(std::move(*note));
    }
    metricsAt_.reset(); // the file says the new configuration's numbers at the next tick
    startClassSlices();
    rederiveRules();
    recomputeTiers();
    giveBackOomPriorities();
    giveBackCaps();
    learnGuardedSlices();
    reconcile();
    // VMs derive their class from the configuration ([VM] DefaultClass,
    // rules): found again, an unplaced VM may be placed now, or the reverse.
    // Not connected (a host without libvirtd): the connection lists them
    // when it comes, and a reload says nothing about it.
    if (hypervisor_ != nullptr && hypervisor_->connected()) {
        discoverDomains(false);
    }
    scanGanetiInstances();
    for (const auto& n : notes) {
        log::warning("Reload: {NOTE}", "NOTE", n);
    }
    log::notice("Configuration reloaded", "RESTART_NEEDED", notes.size());
    if (reloadHook_) {
        reloadHook_();
    }
    if (listener_ != nullptr) {
        std::vector<const char*> changed = {"MemoryRatio", "NodeReserved"};
        if (wasDryRun != dryRun_) {
            changed.push_back("DryRun");
        }
        listener_->managerPropertiesChanged(changed);
    }
    return notes;
}

void Manager::keepWorkloadFiles() {
    // The kept fds of workloads: only those of cgroups a workload has, looked
    // over at a sweep turn where the number of workloads changed, else every
    // kKeptFilesTicks ticks (a walk of every kept fd; issue 25). A kept fd
    // of a cgroup created again is opened afresh when read (OpenFiles::read):
    // this only closes those of cgroups nothing reads any more.
    if (workloads_.size() == keptFilesFor_ && ticks_ % kKeptFilesTicks != 0) {
        return;
    }
    keptFilesFor_ = workloads_.size();
    std::unordered_set<std::string_view> watched;
    watched.reserve(workloads_.size());
    for (const auto& [id, m] : std::as_const(workloads_)) {
        if (!m.cgroupPath.empty()) {
            watched.insert(m.cgroupPath);
        }
    }
    cgroups_.keepWorkloadFilesOf(
        [&watched](std::string_view relPath) { return watched.contains(relPath); });
}

void Manager::tick(TimePoint now) {
    if (released_) {
        return; // released: no more sampling, decisions or actions
    }
    const auto started = std::chrono::steady_clock::now();
    const bool sweepTurn = ++ticks_ % kSweepTicks == 0;
    if (sweepTurn) {
        scanGanetiInstances(); // instances started while no hook told us
        keepWorkloadFiles();
    }
    if (reconcileDue_) {
        reconcile(); // units learned while another answer is still outstanding
    }
    if (!settleWaiters_.empty()) {
        checkSettled(); // a reply kept waiting kSettleTicks goes out now
    }
    sampleSystem();
    // Under pressure the class slices are also read for units systemd has
    // not announced: its UnitNew reaches memqosd through dbus-daemon, and a
    // stopped or swapped-out dbus-daemon must not hide a hog from the kill
    // (VM case 52-kill-path: "level 3 but no killable candidate" until the
    // kernel OOM-killed it). One readdir per class slice, at level ≥ 1 only.
    if (pressure_.level >= 1 && adoptFromClassSlices(true) > 0) {
        reconcile();
    }
    // Before the sweep: a workload memqos let go of since the last tick (a
    // unit no rule adopts any more, a VM now unplaced) gets its processes'
    // own values back rather than the class value again. Looked at when a
    // workload came or went (or the records, or what start-up found), else
    // at the sweep turn: a class or placement changed in place within
    // kSweepTicks ticks (the sweep does not write to those meanwhile:
    // keepOomPriority skips an unplaced VM and a class that keeps).
    if (sweepTurn || oomLookedAt_ != oomLookKey()) {
        giveBackOomPriorities();
        oomLookedAt_ = oomLookKey();
    }
    const bool killableRead = sampleWorkloads();
    advanceKills(now);
    giveBackCaps(); // again, if a give-back failed
    core::Snapshot snap;
    snap.now = now;
    snap.nodeReserved = nodeReserved();
    snap.system = system_;
    // The class slices: every tick only what the decisions read
    // (memory.current; memory.high of a guarded class; memory.pressure where
    // the class-stall rule looks), the whole sample (the metrics file's
    // memory.min/low/high and PSI of every class) every kSweepTicks ticks and
    // for a class not sampled whole yet. The other fields of a tick's sample
    // are the last whole sample's.
    const bool stallRule =
        config_.pressure.classStallFull &&
        std::any_of(config_.classes.begin(), config_.classes.end(),
                    [](const core::ClassPolicy& c) { return c.memoryGuard && c.killable; });
    const bool wholeTick = ticks_ % kSweepTicks == 1;
    // The last tick's samples, moved from (not copied: each has a
    // memory.stat map of ~40 names); lastClasses_ is this tick's again at
    // its end.
    std::vector<core::ClassSample> lastTick = std::move(lastClasses_);
    lastClasses_.clear();
    for (const auto& cls : config_.classes) {
        const std::string slice = io::classSlicePath(cls.name);
        cgroups_.keepOpen(slice); // read every tick: kept open (a new class's after a reload)
        const auto last = std::find_if(lastTick.begin(), lastTick.end(), [&](const auto& c) {
            return c.cgroup && c.name == cls.name;
        });
        const bool whole = wholeTick || last == lastTick.end();
        const bool withHigh = cls.memoryGuard;
        const bool withPressure = stallRule && (cls.memoryGuard || !cls.killable);
        auto s = whole ? cgroups_.sample(slice) : cgroups_.slice(slice, withHigh, withPressure);
        core::ClassSample cs;
        cs.name = cls.name;
        if (s && s->has_value()) {
            if (whole) {
                cs.cgroup = std::move(**s);
            } else {
                cs.cgroup = std::move(last->cgroup);
                last->cgroup.reset(); // taken
                cs.cgroup->memoryCurrent = (*s)->memoryCurrent;
                if (withHigh) {
                    cs.cgroup->memoryHigh = (*s)->memoryHigh;
                }
                if (withPressure) {
                    cs.cgroup->pressure = (*s)->pressure;
                }
            }
            classCurrent_[cls.name] = cs.cgroup->memoryCurrent;
        } else {
            classCurrent_[cls.name] = 0;
        }
        snap.classes.push_back(std::move(cs));
    }
    // kept: the decisions take the last snapshot of the workloads; light:
    // and proactive reclaim's pass waits for a later tick. While the pass
    // has more workloads due than turns (reclaimBehind_) it runs every
    // tick, on the kept snapshot (issue 25: after a start 1000 workloads
    // kept every tick whole for minutes).
    bool kept = snapshotKept(now);
    bool light = kept && !reclaimBehind_;
    snap.workloads = kept ? std::move(samples_) : workloadSamples(now);
    samples_.clear();
    snap.protectedCgroups = protectedCgroups();
    auto outcome = core::decide(snap, config_.pressure, config_.classes, pressure_);
    if (kept && !quiet(outcome.state)) {
        // No longer quiet: decided again on a fresh snapshot, as in any
        // other tick, and the workloads' part runs in this tick (proactive
        // reclaim pauses at once at a level).
        kept = light = false;
        samples_ = std::move(snap.workloads);
        snap.workloads = workloadSamples(now);
        outcome = core::decide(snap, config_.pressure, config_.classes, pressure_);
    }
    if ((core::hasKill(outcome.decisions.actions) || outcome.state.level >= 3) &&
        !killableRead) {
        // A kill decided on the sweep's older readings (the level rose to 3
        // at once, from calm, or from level 1 without passing level 2 long
        // enough for killNear() to read): what the candidates hold now
        // decides the victim, and whether there is one. VM case 50-pressure
        // killed big.service by a swap-usage ranking in which
        // swapper.service's 64 MiB of swap were not read yet.
        sampleWorkloads(true);
        samples_ = std::move(snap.workloads);
        snap.workloads = workloadSamples(now);
        outcome = core::decide(snap, config_.pressure, config_.classes, pressure_);
        kept = light = false; // (not quiet: both were already)
    }
    const auto before = pressure_;
    pressure_ = outcome.state;
    execute(outcome.decisions, before, now);
    if (light) {
        ++lightTicks_;
        ++lightTickCount_;
    } else {
        proactiveReclaim(snap);
        lightTicks_ = 0;
        if (kept) {
            ++keptTickCount_; // the snapshot stays as old as it was
        } else {
            partAt_ = now;
        }
    }
    const Bytes allocatableBefore = reclaimedAllocatable_;
    if (const auto* low = lowestClass()) {
        reclaimedAllocatable_ = core::reclaimedAllocatable(snap, config_.classes, low->name,
                                                           config_.pressure.guardHeadroom);
    }
    samples_ = std::move(snap.workloads); // their buffers, for the next tick's
    lastClasses_ = std::move(snap.classes); // the metrics file's and the next tick's
    if (pressure_.level < 2) {
        restoreBalloons(now); // balloons shrunk at level 2 come back in steps
    }
    if (before.level != pressure_.level && listener_ != nullptr) {
        listener_->pressureLevelChanged(pressure_.level, wording::describe(pressure_.reason));
    }
    if (listener_ != nullptr) {
        std::vector<const char*> changed;
        if (before.level != pressure_.level) {
            changed.push_back("PressureLevel");
        }
        if (before.admissionOpen != pressure_.admissionOpen) {
            changed.push_back("AdmissionOpen");
        }
        // Announced when it moved by 1 % of MemTotal or more (or to or from 0).
        const Bytes moved = allocatableBefore > reclaimedAllocatable_
                                ? allocatableBefore - reclaimedAllocatable_
                                : reclaimedAllocatable_ - allocatableBefore;
        if (moved > 0 && (moved >= system_.mem.memTotal / 100 || allocatableBefore == 0 ||
                          reclaimedAllocatable_ == 0)) {
            changed.push_back("ReclaimedAllocatable");
        }
        if (!changed.empty()) {
            listener_->managerPropertiesChanged(changed);
        }
        listener_->ticked(); // workloads found or lost by the tick (VMs, Ganeti scan)
    }
    if (!config_.manager.metricsFile.empty()) {
        const auto signals = metricsSignals();
        if (metricsDue(now, signals)) {
            writeMetrics(now, signals);
        }
    }
    // The tick's own changes to the workloads are in its snapshot or are
    // not in any (balloons, OOM priority); what changes them between ticks
    // counts against the next light tick.
    partTouches_ = workloads_.touches();
    // The whole tick, the metrics text's formatting too (it is written by
    // the metrics thread): this tick's duration is in the next text.
    tickDurations_.add(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

MetricsSignals Manager::metricsSignals() const {
    MetricsSignals s;
    s.pressureLevel = pressure_.level;
    s.conditionLevel = pressure_.level;
    for (std::uint32_t i = 0; i < pressure_.aboveSince.size(); ++i) {
        if (pressure_.aboveSince[i]) {
            s.conditionLevel = std::max(s.conditionLevel, i + 1);
        }
    }
    s.killNear = killNear();
    s.admissionOpen = pressure_.admissionOpen;
    s.dryRun = dryRun_;
    s.workloads = workloads_.size();
    s.kills = killCount_;
    s.triggeredTicks = triggeredTicks_;
    return s;
}

namespace {

// Whether two action counts differ but in proactive reclaim's steps, which
// are routine (at 1000 workloads ~200 a second): their count waits for the
// interval like the bytes they freed. Walks both maps in order, no copy.
bool actionsDiffer(const std::map<std::string, std::uint64_t>& a,
                   const std::map<std::string, std::uint64_t>& b) {
    const std::string_view kRoutine = kProactiveReclaimAction;
    auto i = a.begin();
    auto j = b.begin();
    for (;;) {
        while (i != a.end() && i->first == kRoutine) {
            ++i;
        }
        while (j != b.end() && j->first == kRoutine) {
            ++j;
        }
        if (i == a.end() || j == b.end()) {
            return (i == a.end()) != (j == b.end());
        }
        if (*i != *j) {
            return true;
        }
        ++i;
        ++j;
    }
}

} // namespace

bool Manager::metricsDue(TimePoint now, const MetricsSignals& signals) const {
    const std::filesystem::path file = config_.manager.metricsFile;
    return !metricsAt_ || metricsFor_ != file || metricsFailing_ == file ||
           signals != metricsSignalsWritten_ ||
           actionsDiffer(actionCounts_, metricsActionsWritten_) || now < *metricsAt_ ||
           now - *metricsAt_ >= config_.manager.metricsInterval;
}

std::vector<core::CgroupSample> Manager::protectedCgroups() {
    std::vector<core::CgroupSample> out;
    const bool guarded =
        std::any_of(config_.classes.begin(), config_.classes.end(),
                    [](const core::ClassPolicy& c) { return c.memoryGuard && c.killable; });
    if (!config_.pressure.classStallFull || !guarded) {
        return out;
    }
    // Where protected workloads live outside the class slices: assigned
    // services stay in their own slice, libvirt VMs in machine.slice.
    for (const char* path : {"system.slice", "machine.slice"}) {
        cgroups_.keepOpen(path);
        auto u = cgroups_.slice(path, false, true); // memory.current, memory.pressure
        if (u && u->has_value() && (*u)->pressure) {
            core::CgroupSample cg;
            cg.path = path;
            cg.pressure = *(*u)->pressure;
            out.push_back(std::move(cg));
        }
    }
    return out;
}

bool Manager::quiet(const core::PressureState& state) {
    return state.level == 0 && state.stallSince.empty() &&
           std::none_of(state.aboveSince.begin(), state.aboveSince.end(),
                        [](const auto& since) { return since.has_value(); });
}

std::size_t Manager::lightRun() const {
    if (!config_.reclaim.enabled) {
        return kMaxLightRun;
    }
    const auto tick = config_.manager.interval.count();
    if (tick <= 0) {
        return 1;
    }
    const auto run = config_.reclaim.interval.count() / tick;
    return static_cast<std::size_t>(std::clamp<decltype(run)>(run, 1, kMaxLightRun));
}

bool Manager::snapshotKept(TimePoint now) const {
    // Ticks 1 s apart with a run of 5: the part at t, kept at t+1 .. t+4
    // (4 s < 4.5 s), the part again at t+5; and at once after a longer gap.
    const auto interval = config_.manager.interval;
    return partAt_ && quiet(pressure_) &&
           now - *partAt_ < interval * static_cast<Usec::rep>(lightRun()) - interval / 2 &&
           workloads_.touches() == partTouches_ && samples_.size() == workloads_.size();
}

bool Manager::killNear() const {
    return pressure_.level >= 2 || pressure_.aboveSince[2].has_value() ||
           !pressure_.stallSince.empty();
}

bool Manager::sampleWorkloads(bool killableOnly) {
    const bool readKillable = killableOnly || killNear();
    const std::size_t n = workloads_.size();
    const std::size_t perTick =
        killableOnly
            ? 0
            : std::min(kMaxSweepPerTick,
                       std::max<std::size_t>(1, (n + kSweepTicks - 1) / kSweepTicks));
    // The OOM priority's repair (cgroup.procs, memory.oom.group and each
    // process's oom_score_adj) on its own slower clock, one workload every
    // kRepairTicks ticks: a unit that (re)started is due at once (oomDue),
    // so this only finds what was changed behind memqosd's back.
    const std::size_t repairPerTick = killableOnly || ticks_ % kRepairTicks != 0 ? 0 : 1;
    const std::size_t cursor = n == 0 ? 0 : sweepCursor_ % n;
    const std::size_t repairCursor = n == 0 ? 0 : repairCursor_ % n;
    std::size_t pos = 0;
    for (auto& [id, m] : workloads_.forSampling()) {
        const bool turn = (pos + n - cursor) % n < perTick;
        const bool repairTurn = (pos + n - repairCursor) % n < repairPerTick;
        ++pos;
        if (m.cgroupPath.empty()) {
            continue;
        }
        const bool repair = !killableOnly && (repairTurn || m.oomDue);
        const bool full = !killableOnly && ((turn && observedOnly(m)) || repair);
        if (!full && !readKillable && pressure_.stallSince.empty()) {
            m.fullStallUsec.reset(); // no class stalls: the quiet tick's case, no lookup
            continue;
        }
        const auto* cls = core::findClass(config_.classes, m.workload.className);
        // Its class stalls at its cap: whether it stalls itself decides
        // whether it may be the class-stall rule's victim.
        const bool stalls = cls != nullptr && pressure_.stallSince.contains(cls->name);
        if (!stalls) {
            m.fullStallUsec.reset();
        }
        if (!full && !(readKillable && cls != nullptr && cls->killable)) {
            continue;
        }
        auto u = cgroups_.usage(m.cgroupPath, repair, stalls);
        m.present = u && u->has_value();
        if (m.present) {
            m.memoryCurrent = (*u)->memoryCurrent;
            m.swapCurrent = (*u)->swapCurrent;
            m.fullStallUsec.reset();
            if (stalls && (*u)->pressure && (*u)->pressure->full) {
                m.fullStallUsec = (*u)->pressure->full->totalUsec;
            }
            if (repair) {
                keepOomPriority(m, (*u)->procs);
                m.oomDue = false;
            }
        } else {
            if (!u) {
                log::debug("Cannot sample {CGROUP}: {ERROR}", "CGROUP", m.cgroupPath, "ERROR",
                           u.error().what);
            }
            m.memoryCurrent = 0;
            m.swapCurrent = 0;
            m.fullStallUsec.reset();
        }
    }
    sweepCursor_ = n == 0 ? 0 : (cursor + perTick) % n;
    repairCursor_ = n == 0 ? 0 : (repairCursor + repairPerTick) % n;
    return readKillable;
}

std::vector<core::WorkloadSample> Manager::workloadSamples(TimePoint now) {
    // The last tick's samples, rewritten in place: their strings keep their
    // buffers, so a tick copies the workloads without an allocation each
    // (issue 25). Every field is set anew below.
    std::vector<core::WorkloadSample> out = std::move(samples_);
    samples_.clear();
    out.resize(workloads_.size());
    std::size_t i = 0;
    for (const auto& [id, m] : std::as_const(workloads_)) {
        fillSample(out[i++], id, m, now);
    }
    return out;
}

void Manager::fillSample(core::WorkloadSample& ws, const std::string& id,
                         const ManagedWorkload& m, TimePoint now) const {
    ws.workload = m.workload;
    ws.neverKill = m.vm && m.vm->backend == VmBackend::Ganeti;
    ws.unplaced = observedOnly(m);
    ws.setAside = setAside(id, now);
    ws.reclaimWaits = false; // proactiveReclaim's
    if (m.cgroupPath.empty() || !m.present) {
        ws.cgroup.reset();
        return;
    }
    // The last tick's sample, its fields set as a new one's (its path
    // and procs keep their buffers; constructing a new one was ~5 % of
    // a quiet tick at 1000 workloads).
    core::CgroupSample& cg = ws.cgroup ? *ws.cgroup : ws.cgroup.emplace();
    core::clearSample(cg);
    cg.path.assign(m.cgroupPath);
    cg.memoryCurrent = m.memoryCurrent;
    cg.swapCurrent = m.swapCurrent;
    if (m.fullStallUsec) {
        cg.pressure = core::Pressure{
            .some = {}, .full = core::PressureLine{.totalUsec = *m.fullStallUsec}};
    }
}

void Manager::writeMetrics(TimePoint now, const MetricsSignals& signals) {
    Metrics m;
    m.signals = signals;
    m.memoryAvailable = system_.mem.memAvailable;
    m.swapFree = system_.mem.swapFree;
    m.actions = actionCounts_;
    m.reclaimedAllocatable = reclaimedAllocatable_;
    m.reclaim.reserve(reclaim_.size());
    for (const auto& [id, r] : reclaim_) {
        if (r.phase != core::ReclaimPhase::Off) {
            m.reclaim.push_back({.id = id, .reclaimed = r.reclaimed, .stall = r.stall});
        }
    }
    m.ticks = &tickDurations_;
    m.lightTicks = lightTickCount_;
    for (const auto& c : lastClasses_) {
        if (!c.cgroup) {
            continue;
        }
        ClassMetrics cm{.name = c.name,
                        .memoryCurrent = c.cgroup->memoryCurrent,
                        .memoryMin = c.cgroup->memoryMin,
                        .memoryLow = c.cgroup->memoryLow,
                        .memoryHigh = c.cgroup->memoryHigh,
                        .psiSomeAvg10 = std::nullopt,
                        .psiFullAvg10 = std::nullopt};
        if (c.cgroup->pressure) {
            cm.psiSomeAvg10 = c.cgroup->pressure->some.avg10;
            if (c.cgroup->pressure->full) {
                cm.psiFullAvg10 = c.cgroup->pressure->full->avg10;
            }
        }
        m.classes.push_back(std::move(cm));
    }
    const std::filesystem::path file = config_.manager.metricsFile;
    metricsAt_ = now;
    metricsFor_ = file;
    metricsSignalsWritten_ = signals;
    metricsActionsWritten_ = actionCounts_;
    if (metricsWriter_ != nullptr) {
        metricsWriter_->write(file, formatMetrics(m),
                              [this, file](const Status& st) { metricsWriteDone(file, st); });
        return;
    }
    metricsWriteDone(
        file, io::replaceFile(file.parent_path(), file.filename().string(), formatMetrics(m)));
}

void Manager::metricsWriteDone(const std::filesystem::path& file, const Status& st) {
    if (file != std::filesystem::path(config_.manager.metricsFile)) {
        return; // a reload moved or cleared MetricsFile meanwhile (the writer removes it)
    }
    if (!st) {
        if (metricsFailing_ != file) {
            metricsFailing_ = file;
            log::warning("Cannot write the metrics file: {ERROR}; retrying every tick, said once "
                         "(the unit's ProtectSystem=strict allows only its ReadWritePaths=)",
                         "FILE", file.string(), "ERROR", st.error().what);
        } else {
            log::debug("Cannot write the metrics file: {ERROR}", "FILE", file.string(), "ERROR",
                       st.error().what);
        }
        return;
    }
    if (metricsFailing_ == file) {
        log::notice("Writing the metrics file {FILE} again", "FILE", file.string());
    }
    metricsFailing_.reset();
    metricsWritten_ = file;
}

std::optional<std::string> Manager::dropOldMetricsFile() {
    if (!metricsWritten_ ||
        *metricsWritten_ == std::filesystem::path(config_.manager.metricsFile)) {
        return std::nullopt;
    }
    const std::filesystem::path old = *metricsWritten_;
    metricsWritten_.reset();
    if (metricsWriter_ != nullptr) {
        metricsWriter_->forget(old); // a write under way must not bring it back
    }
    if (::unlink(old.c_str()) != 0 && errno != ENOENT) {
        const std::string why = std::strerror(errno);
        log::warning("Cannot remove the old metrics file {FILE}: {ERROR}", "FILE", old.string(),
                     "ERROR", why);
        return "Manager.MetricsFile: the old file " + old.string() +
               " memqosd wrote could not be removed (" + why +
               "); it keeps its last numbers until it is removed";
    }
    log::info("Removed the old metrics file {FILE}", "FILE", old.string());
    return std::nullopt;
}

void Manager::execute(const core::Decisions& decisions, const core::PressureState& before,
                      TimePoint now) {
    // Kill reasons are logged by killWorkload once the kill happened (or,
    // under dry run, as "would"); the notes are the other decisions.
    for (const auto& r : decisions.reasons) {
        log::notice("Pressure: {REASON}", "REASON", wording::describe(r), "PRESSURE_LEVEL",
                    pressure_.level);
    }
    killing_ = core::hasKill(decisions.actions);
    // The ladder's reclaim of a class (1 % a tick) goes after the caps: a
    // cap lowered under the usage reclaims the difference first on the
    // worker (prepareCap), one reclaim per class at a time, and a small
    // ladder step started before it took the worker from it, so PID 1
    // reclaimed the cap's excess itself (VM case 56-pid1-latency). Behind
    // that one the ladder's finds the class busy and does nothing.
    std::vector<const core::ReclaimClass*> ladderReclaims;
    for (const auto& a : decisions.actions) {
        std::visit(
            [&](const auto& x) {
                using T = std::decay_t<decltype(x)>;
                if constexpr (std::is_same_v<T, core::SetAdmission>) {
                    // The state is the core's (admissionOpen); the actuator
                    // says whether it counts as an action taken.
                    if (actuator().admission(x.open, pressure_.level).kind ==
                        Outcome::Kind::Done) {
                        ++actionCounts_["admission"];
                        log::notice(x.open ? "Admission reopened: placements into killable "
                                             "classes are accepted again"
                                           : "Admission closed at pressure level "
                                             "{PRESSURE_LEVEL}: placements into killable "
                                             "classes are refused",
                                    "PRESSURE_LEVEL", pressure_.level, "MESSAGE_ID",
                                    log::kMessagePressureAction);
                    }
                } else if constexpr (std::is_same_v<T, core::ReclaimClass>) {
                    ladderReclaims.push_back(&x);
                } else if constexpr (std::is_same_v<T, core::CapClass>) {
                    capClass(x);
                } else if constexpr (std::is_same_v<T, core::KillWorkload>) {
                    killWorkload(x, before.lastKill, now);
                } else if constexpr (std::is_same_v<T, core::ShrinkBalloons>) {
                    shrinkBalloons(x.className, now);
                }
                // SetPressureLevel: tick() tells the listener.
            },
            a);
    }
    for (const auto* r : ladderReclaims) {
        reclaimClass(*r, now);
    }
    if (!decisions.consideredVictims.empty() && log::isEnabled(log::Level::Info)) {
        std::string text;
        for (const auto& c : decisions.consideredVictims) {
            text += (text.empty() ? "" : ", ") + c.id + " (" + c.className + ", usage " +
                    wording::formatBytes(c.usage) + ", swap " +
                    wording::formatBytes(c.swapUsage) + ")";
        }
        log::info("Kill candidates, best first: {CANDIDATES}", "CANDIDATES", text);
    }
}

void Manager::reclaimClass(const core::ReclaimClass& r, TimePoint now) {
    auto last = lastReclaim_.find(r.className);
    if (last != lastReclaim_.end() && now < last->second + config_.manager.interval) {
        return; // a PSI trigger started this tick early: once per Interval
    }
    lastReclaim_[r.className] = now;
    reclaimClassOnWorker(r.className, r.bytes);
}

bool Manager::reclaimClassOnWorker(const std::string& className, Bytes bytes) {
    auto finish = [this, className, bytes](const Outcome& o) {
        classReclaimBusy_.erase(className);
        if (o.kind == Outcome::Kind::Failed) {
            log::warning("Cannot reclaim from class {CLASS}: {ERROR}", "CLASS", className,
                         "ERROR", o.error);
            return;
        }
        if (o.kind != Outcome::Kind::Done) {
            return; // Vanished; Would (dry run: said so)
        }
        ++actionCounts_["reclaim"];
        log::info(!o.partial ? "Reclaimed {BYTES} bytes from class {CLASS}"
                             : "Reclaimed {FREED} of {BYTES} bytes asked from class {CLASS} (the "
                               "kernel found less, or a kill stopped it)",
                  "BYTES", bytes, "FREED", o.freed, "CLASS", className, "PRESSURE_LEVEL",
                  pressure_.level, "MESSAGE_ID", log::kMessagePressureAction);
    };
    // One at a time per class.
    if (!classReclaimBusy_.insert(className).second) {
        return false;
    }
    actuator().reclaim(ReclaimOrder{.what = ReclaimOrder::For::Class,
                                    .cgroup = io::classSlicePath(className),
                                    .bytes = bytes,
                                    .subject = className,
                                    .level = pressure_.level},
                       finish);
    return true;
}

const core::ClassPolicy* Manager::lowestClass() const {
    const core::ClassPolicy* low = nullptr;
    for (const auto& c : config_.classes) {
        if (low == nullptr || c.rank < low->rank) {
            low = &c;
        }
    }
    return low;
}

std::optional<core::WorkloadReclaim> Manager::reclaimOf(const std::string& id) const {
    const auto* r = reclaimState(id);
    return r != nullptr ? std::optional(*r) : std::nullopt;
}

void Manager::proactiveReclaim(core::Snapshot& snap) {
    // Fresh usage and memory.pressure for the workloads whose interval is
    // over (the sweep's usage may be ticks old); the others' pressure is
    // not looked at. At most kReclaimTurnsPerTick of them a tick (for each
    // tick since the last pass: light ticks have none), starting where the
    // last pass's turns ran out: those left wait (reclaimWaits).
    // With [Reclaim] Enabled=no none is read: updateProactive below only
    // turns each one's state off.
    const std::size_t n = config_.reclaim.enabled ? snap.workloads.size() : 0;
    const std::size_t start = n == 0 ? 0 : reclaimCursor_ % n;
    std::optional<std::size_t> firstWaiting;
    std::size_t turns = 0;
    const std::size_t maxTurns = kReclaimTurnsPerTick * (lightTicks_ + 1);
    std::vector<std::size_t> readHere; // the samples its reads rewrote
    // The snapshot lists the workloads in id order (workloadSamples walks
    // workloads_, a map by id), reclaim_'s order: each one's entry is found
    // by walking both, not by a search (issue 25).
    auto next = n == 0 ? reclaim_.end() : reclaim_.lower_bound(snap.workloads[start].workload.id);
    for (std::size_t k = 0; k < n; ++k) {
        const std::size_t index = (start + k) % n;
        auto& ws = snap.workloads[index];
        ws.reclaimWaits = false; // a kept snapshot's is the last pass's
        if (index == 0) {
            next = reclaim_.begin(); // round the end: from the first again
        }
        int order = 1; // next's id against this one's: one comparison each
        while (next != reclaim_.end() && (order = next->first.compare(ws.workload.id)) < 0) {
            ++next;
        }
        const auto st = next != reclaim_.end() && order == 0 ? next : reclaim_.end();
        // Whether its interval is over first: most are not, and the class's
        // lookup compares names.
        if (!ws.cgroup || (st != reclaim_.end() && !core::proactiveDue(st->second, snap.now,
                                                                     config_.reclaim,
                                                                     pressure_.level))) {
            continue;
        }
        if (!core::reclaimable(core::findClass(config_.classes, ws.workload.className),
                               config_.reclaim)) {
            continue;
        }
        if (turns == maxTurns) {
            ws.reclaimWaits = true;
            if (!firstWaiting) {
                firstWaiting = index;
            }
            continue;
        }
        ++turns;
        readHere.push_back(index);
        // memory.current and memory.pressure: what decideProactive takes;
        // memory.current alone of one at its floor at level 0, unless it
        // has left it (core::staysAtFloor).
        const bool floorOnly = pressure_.level == 0 && st != reclaim_.end() &&
                               st->second.phase == core::ReclaimPhase::AtFloor;
        auto u = cgroups_.slice(ws.cgroup->path, false, !floorOnly);
        if (floorOnly && u && u->has_value() &&
            !core::staysAtFloor(st->second, (*u)->memoryCurrent, ws.workload.request,
                                system_.pageSize)) {
            u = cgroups_.slice(ws.cgroup->path, false, true);
        }
        if (u && u->has_value()) {
            ws.cgroup->memoryCurrent = (*u)->memoryCurrent;
            ws.cgroup->pressure = (*u)->pressure;
        } else {
            ws.cgroup.reset(); // gone since the sweep
        }
    }
    reclaimCursor_ = firstWaiting.value_or(start);
    reclaimBehind_ = firstWaiting.has_value();
    // In place (issue 25): no new 1000-entry map a tick; only the entries
    // that changed are looked at below.
    auto out = core::updateProactive(snap, config_.reclaim, config_.classes, pressure_.level,
                                     reclaim_, system_.pageSize);
    // Its reads are its own: the samples they rewrote are set back to what
    // workloadSamples made them (their pressure, read here, must not reach
    // the decisions of the light ticks that keep this snapshot: the
    // class-stall rule would open a workload's window on it).
    for (const std::size_t index : readHere) {
        auto& ws = snap.workloads[index];
        if (const auto w = std::as_const(workloads_).find(ws.workload.id);
            w != workloads_.cend()) {
            const bool waits = ws.reclaimWaits;
            fillSample(ws, w->first, w->second, snap.now);
            ws.reclaimWaits = waits;
        }
    }
    std::vector<std::string> changed;
    for (const auto& change : out.changed) {
        const std::string& id = change.workload;
        const auto now = reclaim_.find(id);
        if (now == reclaim_.end()) {
            continue; // cannot be: changed entries are kept
        }
        const core::WorkloadReclaim& r = now->second;
        const core::ReclaimPhase before = change.before.phase;
        if (change.fresh || before != r.phase || change.before.stall != r.stall) {
            changed.push_back(id);
        }
        if (before == r.phase) {
            continue;
        }
        // Back off at once: a write under way stops after its chunk.
        // An operator's Reclaim (not forced) stops too.
        // (The live actuator's: only its writes can be under way, also
        // after a reload turned the dry run on.)
        if (r.phase != core::ReclaimPhase::Reclaiming &&
            (reclaimInFlight_.contains(id) || manualReclaimInFlight_.contains(id))) {
            if (const auto w = workloads_.find(id); w != workloads_.end()) {
                live_->cancelReclaim(w->second.cgroupPath);
            }
        }
        // The turns an operator wants to see; the steps themselves are debug.
        if (r.phase == core::ReclaimPhase::BackedOff) {
            log::info("Proactive reclaim of {WORKLOAD} backed off: memory stall {STALL}% at or "
                      "above the target {TARGET}%",
                      "WORKLOAD", id, "STALL", r.stall, "TARGET", config_.reclaim.stallTarget);
        } else if (r.phase == core::ReclaimPhase::Paused) {
            log::info("Proactive reclaim of {WORKLOAD} paused at pressure level {PRESSURE_LEVEL}",
                      "WORKLOAD", id, "PRESSURE_LEVEL", pressure_.level);
        } else if (r.phase == core::ReclaimPhase::Reclaiming) {
            log::info(dryRun_ ? "Proactive reclaim of {WORKLOAD} would start (dry run): memory "
                                "stall {STALL}%"
                              : "Proactive reclaim of {WORKLOAD} started: memory stall {STALL}%",
                      "WORKLOAD", id, "STALL", r.stall);
        }
    }
    for (const auto& step : out.steps) {
        if (reclaimInFlight_.contains(step.workload)) {
            continue; // the last write is still under way
        }
        reclaimInFlight_.insert(step.workload);
        actuator().reclaim(ReclaimOrder{.what = ReclaimOrder::For::Proactive,
                                        .cgroup = step.cgroup,
                                        .bytes = step.bytes,
                                        .subject = step.workload,
                                        .level = pressure_.level},
                           [this, id = step.workload, bytes = step.bytes](const Outcome& o) {
                               reclaimInFlight_.erase(id);
                               reclaimed(id, bytes, o);
                           });
    }
    if (listener_ != nullptr) {
        for (const auto& id : changed) {
            listener_->workloadChanged(id);
        }
    }
}

void Manager::reclaimed(const std::string& id, Bytes bytes, const Outcome& o) {
    if (o.kind == Outcome::Kind::Failed) {
        log::warning("Cannot reclaim from {WORKLOAD}: {ERROR}", "WORKLOAD", id, "ERROR", o.error);
        return;
    }
    if (o.kind != Outcome::Kind::Done) {
        return; // Vanished; Would (dry run: said so)
    }
    ++actionCounts_[std::string(kProactiveReclaimAction)];
    if (!countReclaimed(id, o.freed)) {
        return; // unassigned meanwhile
    }
    log::debug(!o.partial
                   ? "Reclaimed {BYTES} bytes from {WORKLOAD}"
                   : "Reclaimed {FREED} of {BYTES} bytes from {WORKLOAD} (the kernel found less)",
               "BYTES", bytes, "FREED", o.freed, "WORKLOAD", id);
}

bool Manager::countReclaimed(const std::string& id, Bytes freed) {
    const auto it = reclaim_.find(id);
    if (it == reclaim_.end()) {
        return false;
    }
    it->second.reclaimed += freed;
    if (listener_ != nullptr && freed > 0) {
        listener_->workloadChanged(id); // ReclaimedBytes
    }
    return true;
}

void Manager::reclaimNow(const std::string& id, Bytes bytes, Reply<Bytes> reply) {
    reclaimNow(id, bytes, false, std::move(reply));
}

void Manager::reclaimNow(const std::string& id, Bytes bytes, bool force, Reply<Bytes> reply) {
    const auto w = workloads_.find(id);
    if (w == workloads_.end()) {
        reply(apiError("NoSuchWorkload", "no workload '" + id + "' (memqosctl workloads lists them)"));
        return;
    }
    if (w->second.cgroupPath.empty() || !w->second.present) {
        reply(apiError("NotRunning", "workload '" + id + "' is not running: no cgroup to reclaim from"));
        return;
    }
    if (bytes == 0 || bytes == kNoLimit) {
        reply(apiError("InvalidArgument", "bytes must be greater than 0 (and not 'max')"));
        return;
    }
    const Bytes asked = bytes;
    if (!force) {
        // The kernel ignores the target's own memory.low/min for its
        // memory.reclaim (the target is the reclaim's root): memqosd keeps
        // the workload's request itself.
        if (const auto rs = reclaim_.find(id);
            rs != reclaim_.end() && (rs->second.phase == core::ReclaimPhase::BackedOff ||
                                     rs->second.phase == core::ReclaimPhase::Paused)) {
            reply(apiError("BackedOff",
                           "not reclaiming from " + id + ": proactive reclaim is " +
                               std::string(core::toString(rs->second.phase)) +
                               " for it (its memory stall or the pressure level says stop); "
                               "force it to reclaim anyway"));
            return;
        }
        const Bytes floor = w->second.workload.request;
        auto u = cgroups_.usage(w->second.cgroupPath, false, false);
        if (!u || !u->has_value()) {
            reply(apiError("NotRunning", "workload '" + id +
                                             "' is not running: no cgroup to "
                                             "reclaim from"));
            return;
        }
        const Bytes current = (*u)->memoryCurrent;
        if (current <= floor) {
            reply(apiError("AtFloor", "not reclaiming from " + id + ": it uses " +
                                          wording::formatBytes(current) +
                                          ", not above its request " + wording::formatBytes(floor) +
                                          " (the kernel would not keep it); force it to go "
                                          "below"));
            return;
        }
        if (bytes > current - floor) {
            bytes = current - floor;
            log::notice("Reclaim of {BYTES} bytes from {WORKLOAD} limited to {LIMITED} bytes: its "
                        "usage {CURRENT} bytes down to its request {REQUEST} bytes",
                        "BYTES", asked, "WORKLOAD", id, "LIMITED", bytes, "CURRENT", current,
                        "REQUEST", floor);
        }
    }
    manualReclaimInFlight_.insert(id);
    auto finish = [this, id, bytes, reply](const Outcome& o) {
        manualReclaimInFlight_.erase(id);
        switch (o.kind) {
        case Outcome::Kind::Would:
            reply(Bytes{0}); // dry run: nothing written (the journal says "would")
            return;
        case Outcome::Kind::Vanished:
            reply(apiError("NotRunning", "workload '" + id + "' stopped during the reclaim"));
            return;
        case Outcome::Kind::Done:
        case Outcome::Kind::Unchanged:
            break;
        case Outcome::Kind::Failed:
        case Outcome::Kind::Deferred:
            reply(apiError("Failed", "cannot reclaim from " + id + ": " + o.error));
            return;
        }
        countReclaimed(id, o.freed);
        ++actionCounts_["reclaim-request"];
        log::notice("Reclaimed {FREED} bytes of the {BYTES} asked from {WORKLOAD} on request",
                    "FREED", o.freed, "BYTES", bytes, "WORKLOAD", id, "MESSAGE_ID",
                    log::kMessagePressureAction);
        reply(o.freed);
    };
    actuator().reclaim(ReclaimOrder{.what = ReclaimOrder::For::Request,
                                    .cgroup = w->second.cgroupPath,
                                    .bytes = bytes,
                                    .subject = id,
                                    .level = pressure_.level},
                       finish);
}

void Manager::capClass(const core::CapClass& c) {
    const auto* cls = core::findClass(config_.classes, c.className);
    if (cls == nullptr) {
        return;
    }
    const std::string slice = cls->slice();
    const std::string why(core::toString(c.why));
    const std::string reason = wording::describe(c);
    CapOrder order{.className = c.className,
                   .slice = slice,
                   .memoryHigh = c.memoryHigh,
                   .why = why,
                   .reason = reason,
                   .prepare = [this, c, slice] { return prepareCap(c, slice); }};
    actuator().setCap(order, [this, c, slice, why, reason](const Outcome& o) {
        switch (o.kind) {
        case Outcome::Kind::Done:
        case Outcome::Kind::Unchanged:
            ++actionCounts_["cap"];
            log::notice("Set MemoryHigh of {UNIT} to {MEMORY_HIGH} ({WHY}): {REASON}", "UNIT",
                        slice, "MEMORY_HIGH", o.memoryHigh, "WHY", why, "REASON", reason, "CLASS",
                        c.className, "MESSAGE_ID", log::kMessagePressureAction);
            return;
        case Outcome::Kind::Failed:
        case Outcome::Kind::Vanished:
            // Forget it, so the next tick decides (and writes) it again.
            pressure_.classHigh.erase(c.className);
            log::warning("Cannot set MemoryHigh of {UNIT}: {ERROR}", "UNIT", slice, "ERROR",
                         o.error);
            return;
        case Outcome::Kind::Would:     // dry run: said so
        case Outcome::Kind::Deferred: // learning first, or held while memqosd reclaims
            return;
        }
    });
}

std::optional<Bytes> Manager::prepareCap(const core::CapClass& c, const std::string& slice) {
    if (!originals_.contains(slice) && !capped_.contains(c.className)) {
        // First what the slice's own configuration gives (what the cap's
        // give-back sends), then the cap, at the next tick. While a cap of
        // memqos's is on the slice its MemoryHigh is not its own.
        pressure_.classHigh.erase(c.className);
        learnOriginal(slice);
        return std::nullopt;
    }
    // systemd writes memory.high from PID 1, and the kernel reclaims the
    // excess in the writer until usage fits: lowered far under the usage,
    // PID 1 would swap for memqos and answer nothing meanwhile (its KillUnit,
    // every systemctl). So memqosd brings usage down first, on its reclaim
    // worker, and sets the cap at most kPid1ReclaimSlack under the usage; the
    // core lowers it further on the next ticks as the usage follows
    // (classHigh holds what is in force).
    Bytes high = c.memoryHigh;
    const auto current = classCurrent_.find(c.className);
    const Bytes usage = current == classCurrent_.end() ? 0 : current->second;
    if (high < usage && usage - high > kPid1ReclaimSlack) {
        const Bytes page = system_.pageSize == 0 ? kDefaultPageSize : system_.pageSize;
        Bytes step = (usage - kPid1ReclaimSlack + page - 1) / page * page;
        // Lowering never raises: a workload that grows faster than the
        // worker reclaims keeps the cap in force (it reclaims itself against
        // it, in its own context) instead of a cap that follows it up.
        const bool held = c.previous > 0 && step >= c.previous;
        if (c.previous > 0) {
            step = std::min(step, c.previous);
        }
        // Not in a tick that kills: the kill frees what this would swap out.
        const bool started = !killing_ && reclaimClassOnWorker(c.className, usage - high);
        // Info when a reclaim starts; a tick that only finds the one under
        // way (or a kill) holding it says so at debug level, not every tick.
        log::log(started ? log::Level::Info : log::Level::Debug,
                 "Lowering MemoryHigh of {UNIT} toward {TARGET}: {STEP} for now, {RECLAIM} "
                 "bytes reclaimed by memqosd first{BUSY} (PID 1 reclaims at most {SLACK})",
                 "UNIT", slice, "TARGET", c.memoryHigh, "STEP", step, "RECLAIM", usage - high,
                 "BUSY",
                 started    ? ""
                 : killing_ ? " (not now: this tick kills)"
                            : " (a reclaim of the class is under way)",
                 "SLACK", kPid1ReclaimSlack, "CLASS", c.className);
        high = step;
        pressure_.classHigh[c.className] = high;
        if (held) {
            return std::nullopt; // the cap in force stays; the reclaim runs
        }
    }
    capped_[c.className] = slice; // given back, even if the call fails half-way
    return high;
}

bool Manager::capSlice(const std::string& unit) const {
    for (const auto& [cls, slice] : capped_) {
        if (slice == unit) {
            return true;
        }
    }
    for (const auto& cls : config_.classes) {
        if (cls.memoryGuard && cls.slice() == unit) {
            return true;
        }
    }
    return false;
}

void Manager::learnGuardedSlices() {
    for (const auto& cls : config_.classes) {
        const std::string slice = cls.slice();
        if (cls.memoryGuard && !originals_.contains(slice) && !capped_.contains(cls.name)) {
            learnOriginal(slice);
        }
    }
}

void Manager::giveBackCaps() {
    std::vector<std::string> names;
    for (const auto& [cls, slice] : capped_) {
        if (!capReturning_.contains(cls)) {
            names.push_back(cls);
        }
    }
    for (const auto& name : core::capsToGiveBack(names, config_.classes)) {
        giveBackCap(name, [this](bool given) {
            if (given) {
                reconcile(); // the slice's record may go now (an orphan)
            }
        });
    }
}

void Manager::giveBackCap(const std::string& className, std::function<void(bool)> done) {
    const auto it = capped_.find(className);
    if (it == capped_.end() || !capReturning_.insert(className).second) {
        done(it == capped_.end());
        return;
    }
    const std::string slice = it->second;
    // A class that gets its guard again starts from no cap.
    pressure_.classHigh.erase(className);
    pressure_.classHighAt.erase(className);
    io::MemoryProperties props;
    props.memoryHigh = io::unconfiguredMemory().memoryHigh;
    if (const auto o = originals_.find(slice); o != originals_.end()) {
        if (o->second.values.memoryHigh) {
            props.memoryHigh = o->second.values.memoryHigh;
        }
    }
    const Limit own = *props.memoryHigh;
    actuator().giveBackCap(
        CapGiveBack{.className = className, .slice = slice, .own = own},
        [this, className, slice, own, done](const Outcome& o) {
            capReturning_.erase(className);
            if (o.kind == Outcome::Kind::Would) {
                // Dry run: forgotten, as if given back (said so).
                capped_.erase(className);
                done(true);
                return;
            }
            if (o.kind == Outcome::Kind::Failed) {
                log::warning("Cannot give {UNIT} back its own MemoryHigh: {ERROR}", "UNIT", slice,
                             "ERROR", o.error, "CLASS", className);
                done(false);
                return;
            }
            if (auto c = capped_.find(className); c != capped_.end() && c->second == slice) {
                capped_.erase(c);
            }
            if (released_) {
                forgetOriginal(slice); // nothing is kept after a release
            }
            // The slice has its own value at runtime; the file systemd wrote
            // for this call goes (or someone else's kept copy comes back),
            // so that a daemon-reload keeps it.
            giveBackDropIns(slice, {io::MemoryKey::High});
            log::notice("Gave {UNIT} back its own MemoryHigh ({MEMORY_HIGH}): memqos no longer "
                        "caps class {CLASS}",
                        "UNIT", slice, "MEMORY_HIGH",
                        own ? std::to_string(*own) : std::string("infinity"), "CLASS", className,
                        "MESSAGE_ID", log::kMessagePropertiesChanged);
            done(true);
        });
}

void Manager::giveBackOnStop(std::function<void()> done) {
    // memory.oom.group: a cgroup attribute write the kernel does at once
    // (no reclaim behind it, unlike memory.high). Through the live actuator
    // even under dry run: oomGroupSet is what a live period of this run
    // wrote, and goes back whatever DryRun says now.
    for (auto& [id, m] : workloads_) {
        if (!m.oomGroupSet || m.cgroupPath.empty()) {
            continue;
        }
        const Outcome w = live_->setOomGroup(OomGroupOrder{
            .workload = id, .cgroup = m.cgroupPath, .on = false, .said = false});
        if (w.kind == Outcome::Kind::Failed) {
            log::warning("Cannot give {CGROUP} back memory.oom.group=0: {ERROR}", "CGROUP",
                         m.cgroupPath, "ERROR", w.error);
        } else {
            m.oomGroupSet = false;
            log::info("Gave {CGROUP} back memory.oom.group=0", "CGROUP", m.cgroupPath, "WORKLOAD",
                      id);
        }
    }
    std::vector<std::string> names;
    for (const auto& [cls, slice] : capped_) {
        names.push_back(cls);
    }
    if (names.empty()) {
        done();
        return;
    }
    auto oneDone = util::joinAfter(names.size(), done);
    for (const auto& name : names) {
        giveBackCap(name, [oneDone](bool) { oneDone(); });
    }
}

} // namespace memqos::daemon

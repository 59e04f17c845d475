// SPDX-License-Identifier: Apache-2.0
// Ganeti KVM instances as workloads "vm:<instance>" (doc/DESIGN.md §2.6 "VMs"):
// Ganeti's noded starts qemu itself, inside ganeti.service; memqosd moves
// each instance's qemu (from Ganeti's pidfile) into a transient scope of its
// own, memqos-vm-<instance>.scope, in its class slice, so it gets tiers like
// any workload and no longer shares a cgroup with Ganeti's daemons.
//
// Adopted: when a post-hook records the instance as up (RecordInstance),
// when AssignWorkload names it, at start and every kSweepTicks ticks for
// every pidfile (an operation memqosd missed). Never killed: ganeti-watcher
// starts an instance whose admin state is up again within minutes, and
// Ganeti would disagree with what runs; memqos shrinks its balloon instead
// ([Ganeti] Balloon=yes) and keeps placements within the memory ratio.
#include "manager.hpp"
#include "state_error.hpp"

#include "memqos/config/vm.hpp"
#include "memqos/config/ganeti_policy.hpp"
#include "memqos/io/file.hpp"
#include "memqos/io/log.hpp"
#include "memqos/parse/proc.hpp"

#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <set>

namespace memqos::daemon {
namespace {

std::string scopeFor(const std::string& instance) {
    return "memqos-vm-" + config::escapeUnitComponent(instance) + ".scope";
}

} // namespace

bool Manager::isGanetiInstance(const std::string& name) const {
    if (ganeti_ == nullptr) {
        return false;
    }
    if (instances_.contains(name)) {
        return true;
    }
    return ganeti_->pid(name).ok();
}

Result<std::int32_t> Manager::ganetiQemu(const std::string& name) const {
    auto pid = ganeti_->pid(name);
    if (!pid) {
        return pid.error();
    }
    if (auto id = qemuIdentity(*pid, name); !id) {
        return id.error();
    }
    // A qemu started well after its pidfile was written did not write it:
    // the pid was reused (/proc/PID/stat start time, after boot, against
    // the pidfile's mtime; the slack covers clock steps since).
    auto stat = io::readFile(proc_.root() / std::to_string(*pid) / "stat");
    if (!stat) {
        return stat.error();
    }
    auto start = parse::parseProcStatStartTime(*stat);
    auto procStat = io::readFile(proc_.root() / "stat");
    auto boot = procStat ? parse::parseProcStatBootTime(*procStat)
                         : Result<std::int64_t>(procStat.error());
    auto written = ganeti_->pidfileWritten(name);
    const long tick = ::sysconf(_SC_CLK_TCK);
    if (!start || !boot || !written || tick <= 0) {
        return invalid("cannot tell when process " + std::to_string(*pid) +
                       " started or its pidfile was written");
    }
    const std::int64_t started =
        *boot + static_cast<std::int64_t>(*start / static_cast<std::uint64_t>(tick));
    if (started > *written + kPidfileSlack) {
        return invalid("process " + std::to_string(*pid) + " started " +
                       std::to_string(started - *written) +
                       " s after the pidfile was written: a later process with a reused pid");
    }
    return *pid;
}

void Manager::scanGanetiInstances() {
    if (ganeti_ == nullptr) {
        return;
    }
    const auto running = ganeti_->instances();
    for (const auto& name : running) {
        adoptInstance(name);
    }
    // Instances whose pidfile is gone (stopped or removed without a hook
    // memqosd heard): adoptInstance finds them not running.
    std::vector<std::string> gone;
    for (const auto& [id, m] : workloads_) {
        if (m.vm && m.vm->backend == VmBackend::Ganeti &&
            std::find(running.begin(), running.end(), vmName(id)) == running.end()) {
            gone.push_back(vmName(id));
        }
    }
    for (const auto& name : gone) {
        adoptInstance(name);
    }
    forgetUnlistedInstances();
}

// `gnt-instance remove` tells memqosd through its post-hook (ForgetInstance).
// When the hook cannot run or reach memqosd (Ganeti's RPC to the node timed
// out, memqosd was down), the record and the instance's assignment would stay
// forever, and its maximum memory would keep counting against the ratio.
// Ganeti's own list of the cluster's instances settles it. A missing or
// malformed list changes nothing; two scans in a row (kSweepTicks apart) must
// agree, so a list written just before an instance-add does not drop the
// record its post-hook has just made; an instance whose qemu runs here stays.
void Manager::forgetUnlistedInstances() {
    auto listed = ganeti_->clusterInstances();
    if (!listed) {
        unlisted_.clear();
        return;
    }
    std::set<std::string> now;
    for (const auto& [name, rec] : instances_) {
        if (!std::binary_search(listed->begin(), listed->end(), name) && !ganetiRunning(name)) {
            now.insert(name);
        }
    }
    std::vector<std::string> forget;
    std::set_intersection(now.begin(), now.end(), unlisted_.begin(), unlisted_.end(),
                          std::back_inserter(forget));
    unlisted_ = std::move(now);
    for (const auto& name : forget) {
        log::notice("Ganeti no longer lists instance {INSTANCE} (ssconf_instance_list) and it "
                    "does not run here: forgetting its record, as its remove post-hook would "
                    "have",
                    "INSTANCE", name);
        forgetInstance(name, [name](ApiResult<Done> done) {
            if (!done.ok()) {
                log::warning("Cannot forget instance {INSTANCE}: {ERROR}", "INSTANCE", name,
                             "ERROR", done.error().message);
            }
        });
        unlisted_.erase(name);
    }
}

Result<core::Tiers> Manager::deriveInstance(ManagedWorkload& m, const std::string& name,
                                            bool isNew) const {
    const std::string id = vmId(name);
    m.workload.id = id;
    m.workload.kind = core::WorkloadKind::Vm;
    const auto rec = instances_.find(name);
    if (rec != instances_.end()) {
        m.vm->memory = rec->second.maxMemory;
    }
    if (isNew || m.source != Source::Api) {
        // Request = minmem, limit = maxmem + overhead (the record's), unless
        // a rule says otherwise; class from a rule, else [VM] DefaultClass.
        // A tag memqos:class:<name> reaches here as AssignWorkload.
        const Bytes minMem = rec != instances_.end() ? rec->second.minMemory : 0;
        const Limit lim = rec != instances_.end()
                              ? Limit{core::saturatingAdd(rec->second.maxMemory,
                                                          config_.vm.limitOverhead)}
                              : Limit{};
        if (const auto* r = ruleFor(id)) {
            m.source = Source::Rule;
            m.workload.className = r->className;
            m.workload.request = r->request != 0 ? r->request : minMem;
            m.workload.limit = r->limit ? r->limit : lim;
            m.workload.priority = r->priority;
        } else if (!config_.vm.defaultClass.empty()) {
            m.source = Source::Default;
            m.workload.className = config_.vm.defaultClass;
            m.workload.request = minMem;
            m.workload.limit = lim;
        } else {
            markUnplaced(m); // no scope either
        }
    }
    if (observedOnly(m)) {
        return core::Tiers{};
    }
    return tiersFor(m.workload);
}

void Manager::adoptInstance(const std::string& name) {
    if (ganeti_ == nullptr) {
        return;
    }
    const std::string id = vmId(name);
    if (!core::validateWorkloadId(id)) {
        return;
    }
    auto pid = ganetiQemu(name);
    if (!pid && pid.error().code != std::errc::no_such_file_or_directory) {
        if (auto named = ganeti_->pid(name)) {
            warnDistrusted("Ganeti instance", name, *named, pid.error());
        }
    } else if (pid) {
        distrusted_.erase(name);
    }
    const bool alive = pid.ok();
    auto it = workloads_.find(id);
    if (it != workloads_.end() && it->second.vm &&
        it->second.vm->backend == VmBackend::Libvirt && it->second.source != Source::Api) {
        return; // a libvirt domain of that name
    }
    ManagedWorkload m = it == workloads_.end() ? ManagedWorkload{} : it->second;
    const bool isNew = it == workloads_.end();
    // The scan calls this every kSweepTicks for every instance: the tiers
    // are reconciled only when this call changed what they derive from.
    const auto changedFrom = [&, was = m](const ManagedWorkload& now) {
        // Tiers too: an AssignWorkload that arrived while the scope was
        // being started changed the workload but not yet its tiers.
        return isNew || was.workload != now.workload || was.unit != now.unit ||
               was.cgroupPath != now.cgroupPath || was.tiers != now.tiers;
    };
    if (!m.vm) {
        m.vm = VmState{};
    }
    m.vm->backend = VmBackend::Ganeti;
    if (m.vm->adopting) {
        return;
    }
    const bool wasUnplaced = !isNew && observedOnly(m);
    auto tiers = deriveInstance(m, name, isNew);
    if (!tiers) {
        log::warning("Not managing Ganeti instance {INSTANCE}: {ERROR}", "INSTANCE", name,
                     "ERROR", tiers.error().what);
        return;
    }
    m.tiers = *tiers;
    m.loaded = true;
    if (!alive) {
        // Not running: an API assignment stays for its next start.
        if (isNew) {
            return;
        }
        if (!m.unit.empty()) {
            applied_.erase(m.unit);
            log::info("Ganeti instance {INSTANCE} is not running", "INSTANCE", name);
        }
        m.unit.clear();
        m.cgroupPath.clear();
        m.present = false;
        m.vm->running = false;
        m.vm->pid = 0;
        if (m.source != Source::Api) {
            workloads_.erase(id);
            reconcile();
            return;
        }
        const bool reconcileNeeded = changedFrom(m);
        workloads_[id] = std::move(m);
        if (reconcileNeeded) {
            reconcile();
        }
        return;
    }
    const std::string scope = scopeFor(name);
    if (observedOnly(m)) {
        // Unplaced: its qemu stays where Ganeti started it (ganeti.service),
        // which is no cgroup of its own to read; memqos starts no scope for
        // it. Adopted by an older memqos (whose DefaultClass placed it), it
        // keeps its scope, observed there, and the scope gets systemd's
        // defaults back: memqos created it, so it has no values of its own.
        auto at = scopeOfPid(*pid);
        const bool inOwnScope = at && at->first == scope;
        // (A reload that unplaced a placed instance changes it too.)
        const bool changed =
            isNew || !wasUnplaced || m.vm->pid != *pid || m.unit != (inOwnScope ? scope : "");
        m.vm->running = true;
        m.vm->pid = *pid;
        m.unit = inOwnScope ? scope : "";
        m.cgroupPath = inOwnScope ? at->second : "";
        if (!inOwnScope) {
            m.present = false;
        }
        if (changed) {
            log::info(inOwnScope ? "Observing Ganeti instance {INSTANCE} in {UNIT}: unplaced (no "
                                   "tag, rule or [VM] DefaultClass); giving the scope systemd's "
                                   "defaults back"
                                 : "Observing Ganeti instance {INSTANCE}: unplaced (no tag, rule "
                                   "or [VM] DefaultClass), so memqos leaves its qemu alone",
                      "INSTANCE", name, "UNIT", m.unit, "PID", *pid);
        }
        const bool reconcileNeeded = changedFrom(m);
        workloads_[id] = std::move(m);
        if (changed && inOwnScope) {
            restoreOriginal(scope, [] {});
        }
        if (reconcileNeeded) {
            reconcile();
        }
        return;
    }
    const auto* cls = core::findClass(config_.classes, m.workload.className);
    const std::string slicePath = io::classSlicePath(m.workload.className);
    auto where = scopeOfPid(*pid);
    m.vm->running = true;
    if (where && where->first == scope) {
        // Adopted already (by this memqosd, or one before a restart).
        const bool changed = m.unit != scope || m.vm->pid != *pid;
        m.unit = scope;
        m.cgroupPath = where->second;
        m.vm->pid = *pid;
        if (changed) {
            m.oomDue = true;
            log::info("Ganeti instance {INSTANCE} runs in {UNIT} (class {CLASS})", "INSTANCE",
                      name, "UNIT", scope, "CLASS", m.workload.className);
        }
        const bool reconcileNeeded = changedFrom(m);
        workloads_[id] = std::move(m);
        if (reconcileNeeded) {
            reconcile();
        }
        return;
    }
    if (dryRun_) {
        if (m.vm->pid != *pid) {
            log::notice("Would adopt Ganeti instance {INSTANCE} (qemu pid {PID}) into {UNIT} in "
                        "{SLICE} (dry run)",
                        "INSTANCE", name, "PID", *pid, "UNIT", scope, "SLICE", cls->slice());
        }
        m.vm->pid = *pid;
        workloads_[id] = std::move(m);
        return;
    }
    m.vm->adopting = true;
    m.vm->pid = *pid;
    workloads_[id] = m;
    const auto props = unitProperties(m.tiers);
    const auto started = std::chrono::steady_clock::now();
    systemd_.startTransientScope(
        scope, cls->slice(), {static_cast<std::uint32_t>(*pid)}, props,
        "memqos: Ganeti instance " + name,
        [this, id, name, scope, slicePath, props, pid = *pid, started](Status st) {
            auto w = workloads_.find(id);
            if (w == workloads_.end() || !w->second.vm) {
                return;
            }
            w->second.vm->adopting = false;
            if (!st) {
                log::warning("Cannot adopt Ganeti instance {INSTANCE} (qemu pid {PID}) into "
                             "{UNIT}: {ERROR}; trying again later",
                             "INSTANCE", name, "PID", pid, "UNIT", scope, "ERROR",
                             st.error().what);
                w->second.vm->pid = 0;
                return;
            }
            w->second.unit = scope;
            w->second.cgroupPath = slicePath + "/" + scope;
            w->second.oomDue = true;
            applied_[scope] = props;
            const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - started)
                                .count();
            log::notice("Adopted Ganeti instance {INSTANCE} (qemu pid {PID}) into {UNIT} in class "
                        "{CLASS} ({MS} ms)",
                        "INSTANCE", name, "PID", pid, "UNIT", scope, "CLASS",
                        w->second.workload.className, "MS", ms);
            // What arrived while the scope was being started (the hook's
            // AssignWorkload and RecordInstance, when a scan adopted the
            // qemu first) was not looked at: derive the tiers again.
            if (auto now = deriveInstance(w->second, name, false)) {
                w->second.tiers = *now;
            }
            reconcile();
        });
}

bool Manager::ganetiRunning(const std::string& name) const {
    if (ganeti_ == nullptr) {
        return false;
    }
    return ganetiQemu(name).ok();
}

void Manager::assignGaneti(const core::Workload& w, bool persist, Reply<std::string> reply) {
    // The post-hook assigns the class of its tag to the instance it has just
    // started or moved here: it runs, and is never refused for admission.
    if (auto refused = admissionRefusalUnlessRunning(w.className, ganetiRunning(vmName(w.id)))) {
        reply(*refused);
        return;
    }
    storeThen<std::string>([this, a = io::Assignment{w, persist}] { return store_.save(a); },
                           "store the assignment of " + w.id, reply,
                           [this, w, persist, reply] { assignGanetiStored(w, persist, reply); });
}

void Manager::assignGanetiStored(const core::Workload& w, bool persist, Reply<std::string> reply) {
    auto& m = workloads_[w.id];
    const std::string oldClass = m.workload.className;
    m.workload = w;
    m.persistent = persist;
    m.source = Source::Api;
    if (!m.vm) {
        m.vm = VmState{};
    }
    m.vm->backend = VmBackend::Ganeti;
    log::notice("Assigned {WORKLOAD} to class {CLASS}", "WORKLOAD", w.id, "CLASS", w.className,
                "REQUEST", w.request, "LIMIT", limitToBus(w.limit));
    if (!m.unit.empty() && !oldClass.empty() && oldClass != w.className) {
        log::notice("{WORKLOAD} keeps running in {UNIT} under its old class slice; it moves to "
                    "{SLICE} at its next start",
                    "WORKLOAD", w.id, "UNIT", m.unit, "SLICE",
                    core::findClass(config_.classes, w.className)->slice());
    }
    adoptInstance(vmName(w.id));
    reply(w.id);
}

void Manager::ganetiFindings(std::vector<wording::FindingText>& out) const {
    if (ganeti_ == nullptr) {
        return;
    }
    for (const auto& [name, rec] : instances_) {
        const auto w = workloads_.find(vmId(name));
        const bool running = ganetiQemu(name).ok();
        if (rec.up && running && w != workloads_.end() && observedOnly(w->second) &&
            w->second.unit.empty()) {
            out.push_back({"info", "instance-unplaced",
                           "instance " + name +
                               " is unplaced (no memqos:class tag, rule or [VM] "
                               "DefaultClass): memqos observes it and leaves its qemu where Ganeti "
                               "started it"});
        } else if (rec.up && running && (w == workloads_.end() || w->second.unit.empty())) {
            out.push_back({"warning", "instance-not-adopted",
                           "instance " + name + " is recorded as up and runs, but its qemu is "
                           "not in a memqos scope (yet): it gets no tiers"});
        }
        if (!rec.up && w != workloads_.end() && !w->second.unit.empty()) {
            out.push_back({"warning", "instance-record-down",
                           "instance " + name + " runs in " + w->second.unit +
                               " but the record says down: memqosctl record-instance can mend it"});
        }
    }
    for (const auto& [id, m] : workloads_) {
        if (m.vm && m.vm->backend == VmBackend::Ganeti && !m.unit.empty() &&
            !instances_.contains(vmName(id))) {
            out.push_back({"warning", "instance-not-recorded",
                           id + " runs in " + m.unit +
                               " but is not in this node's instance record: placement does not "
                               "count it"});
        }
    }
    policyFindings(out);
}

// The cluster's memqos:* tags (ssconf_cluster_tags, the only tags a node
// sees) against this node's [Overcommit]. A warning, not an error: a node or
// node group tag, which only the master knows, may rightly set this node's
// own policy; memqos-cluster verify on the master resolves all three.
void Manager::policyFindings(std::vector<wording::FindingText>& out) const {
    auto tags = ganeti_->clusterTags();
    if (!tags) {
        if (!io::isVanished(tags.error())) {
            out.push_back({"info", "policy-unchecked",
                           "the cluster's tags cannot be read (" + tags.error().what +
                               "): the node's policy is not compared with them"});
        }
        return; // not a Ganeti node (yet)
    }
    auto cluster = config::parseTagPolicy(*tags, "cluster");
    if (!cluster) {
        out.push_back({"warning", "policy-tags-malformed",
                       "the cluster's memqos tags are malformed (" + cluster.error().what +
                           "): the memqos iallocator fails every request until they are mended "
                           "(gnt-cluster list-tags, remove-tags)"});
        return;
    }
    std::string what;
    if (const auto policy = config::resolvePolicy({}, {}, *cluster)) {
        what = config::policyDrift(*policy, config_.overcommit.memoryRatio, nodeReserved());
    }
    const auto overhead = config::vmOverheadDrift(*cluster, config_.overcommit.vmOverhead);
    what += (what.empty() || overhead.empty() ? "" : "; ") + overhead;
    if (!what.empty()) {
        out.push_back({"warning", "policy-drift",
                       "policy drift from the cluster's tags: " + what +
                           " (set [Overcommit] in memqosd.conf or change the tags; a node or "
                           "node group tag, which a node cannot see, may rightly set this "
                           "node's own: memqos-cluster verify on the master checks those)"});
    }
}

} // namespace memqos::daemon

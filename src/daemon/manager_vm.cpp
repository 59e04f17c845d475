// SPDX-License-Identifier: Apache-2.0
// VM workloads: libvirt domains as "vm:<name>" (doc/DESIGN.md §2.6 "VMs"), their
// balloons at pressure level 2 and their kill at level 3.
#include "manager.hpp"
#include "state_error.hpp"

#include "memqos/config/values.hpp"
#include "memqos/config/vm.hpp"
#include "memqos/io/file.hpp"
#include "memqos/io/log.hpp"
#include "memqos/parse/proc.hpp"
#include "memqos/wording/bytes.hpp"

#include <algorithm>
#include <set>

namespace memqos::daemon {
namespace {

// One balloon move: Manager::kBalloonStep of the VM's memory, at least 1 MiB.
Bytes balloonStep(Bytes memory) {
    return std::max<Bytes>(kMiB, memory / kPermyriadOne * Manager::kBalloonStep +
                                     memory % kPermyriadOne * Manager::kBalloonStep /
                                         kPermyriadOne);
}

} // namespace

bool observedOnly(const ManagedWorkload& m) {
    return m.source == Source::Unplaced;
}

std::string_view toString(Source s) {
    switch (s) {
    case Source::Api:
        return "api";
    case Source::Rule:
        return "rule";
    case Source::Slice:
        return "slice";
    case Source::Metadata:
        return "metadata";
    case Source::Default:
        return "default";
    case Source::Unplaced:
        return "unplaced";
    }
    return "?";
}

void Manager::startHypervisor() {
    if (hypervisor_ == nullptr) {
        return;
    }
    io::Hypervisor::Events ev;
    ev.connected = [this] { discoverDomains(); };
    ev.disconnected = [](const std::string& why) {
        log::warning("Lost the connection to libvirt ({WHY}); VMs keep the tiers they have; "
                     "reconnecting",
                     "WHY", why);
    };
    ev.lifecycle = [this](const std::string& name, io::DomainEvent e) {
        if (e == io::DomainEvent::Undefined) {
            forgetDomain(name);
        } else {
            refreshDomain(name);
        }
    };
    ev.balloonChanged = [this](const std::string& name, Bytes actual) {
        auto it = workloads_.find(vmId(name));
        if (it == workloads_.end() || !it->second.vm) {
            return;
        }
        it->second.vm->balloonActual = actual;
        if (listener_ != nullptr) {
            listener_->workloadChanged(it->first);
        }
    };
    hypervisor_->start(std::move(ev));
}

void Manager::discoverDomains(bool resendTiers) {
    hypervisor_->listDomains([this, resendTiers](Result<std::vector<io::DomainInfo>> domains) {
        if (!domains) {
            log::warning("Cannot list libvirt's domains: {ERROR}", "ERROR",
                         domains.error().what);
            return;
        }
        // After a (re)connect the tiers are sent again: a libvirtd restart
        // may have re-created scopes, or someone changed them meanwhile.
        for (const auto& [id, m] : workloads_) {
            if (resendTiers && m.vm && m.vm->backend == VmBackend::Libvirt && !m.unit.empty()) {
                applied_.erase(m.unit);
            }
        }
        std::set<std::string> seen;
        for (const auto& d : *domains) {
            seen.insert(vmId(d.name));
            upsertDomain(d);
        }
        // Domains undefined while memqosd or libvirtd was down.
        std::vector<std::string> gone;
        for (const auto& [id, m] : workloads_) {
            if (m.vm && m.vm->backend == VmBackend::Libvirt && !seen.contains(id)) {
                gone.push_back(vmName(id));
            }
        }
        for (const auto& name : gone) {
            forgetDomain(name);
        }
        domainsListed_ = true;
        log::info("libvirt: {COUNT} domains", "COUNT", domains->size());
    });
}

void Manager::refreshDomain(const std::string& name) {
    if (hypervisor_ == nullptr) {
        return;
    }
    hypervisor_->domain(name, [this, name](Result<io::DomainInfo> d) {
        if (d) {
            upsertDomain(*d);
        } else if (d.error().code == std::errc::no_such_file_or_directory) {
            forgetDomain(name);
        } else {
            log::warning("Cannot look up domain {DOMAIN}: {ERROR}", "DOMAIN", name, "ERROR",
                         d.error().what);
        }
    });
}

std::optional<std::pair<std::string, std::string>> Manager::scopeOfPid(std::int32_t pid) const {
    auto text = io::readFile(proc_.root() / std::to_string(pid) / "cgroup");
    if (!text) {
        return std::nullopt;
    }
    auto path = config::parseProcCgroup(*text);
    if (!path) {
        return std::nullopt;
    }
    auto u = config::unitOfCgroup(*path);
    if (!u) {
        return std::nullopt;
    }
    return std::make_pair(u->unit, u->path);
}

Status Manager::qemuIdentity(std::int32_t pid, const std::string& name) const {
    const auto dir = proc_.root() / std::to_string(pid);
    auto text = io::readFile(dir / "cmdline");
    if (!text) {
        return text.error();
    }
    if (text->empty()) {
        // A zombie or a kernel thread has no command line.
        return makeError(std::errc::no_such_process, "process " + std::to_string(pid) +
                                                         " has no command line (it is exiting)");
    }
    auto cmd = parse::parseQemuCmdline(*text);
    if (!cmd) {
        return invalid("process " + std::to_string(pid) + ": " + cmd.error().what);
    }
    if (!parse::isQemuFor(*cmd, name)) {
        return invalid("process " + std::to_string(pid) + " (" + cmd->program +
                       (cmd->name ? " -name " + *cmd->name : std::string(", no -name")) +
                       ") is not the qemu of " + name);
    }
    if (cmd->pidfile && std::filesystem::path(*cmd->pidfile).filename() != name) {
        return invalid("process " + std::to_string(pid) + " writes pidfile " + *cmd->pidfile +
                       ", not one of " + name);
    }
    if (auto at = scopeOfPid(pid)) {
        for (const auto& [id, m] : workloads_) {
            if (!m.unit.empty() && m.unit == at->first && vmName(id) != name) {
                return invalid("process " + std::to_string(pid) + " runs in " + at->first +
                               ", the unit of workload " + id);
            }
        }
    }
    return okStatus();
}

void Manager::warnDistrusted(const std::string& what, const std::string& name, std::int32_t pid,
                             const Error& why) {
    auto [it, fresh] = distrusted_.try_emplace(name, pid);
    if (!fresh && it->second == pid) {
        return;
    }
    it->second = pid;
    log::warning("Not trusting pid {PID} of {WHAT} {GUEST}: {ERROR}; memqos moves and limits "
                 "nothing by that pid (a stale pidfile?)",
                 "PID", pid, "WHAT", what, "GUEST", name, "ERROR", why.what);
}

void Manager::upsertDomain(const io::DomainInfo& d) {
    const std::string id = vmId(d.name);
    if (!core::validateWorkloadId(id)) {
        return;
    }
    auto it = workloads_.find(id);
    const bool isNew = it == workloads_.end();
    ManagedWorkload m = isNew ? ManagedWorkload{} : it->second;
    if (m.vm && m.vm->backend == VmBackend::Ganeti) {
        return; // a Ganeti instance of the same name is that workload
    }
    const auto before = m.workload;
    const std::string oldUnit = m.unit;
    m.workload.id = id;
    m.workload.kind = core::WorkloadKind::Vm;
    if (!m.vm) {
        m.vm = VmState{};
    }
    m.vm->backend = VmBackend::Libvirt;
    m.vm->running = d.active;
    m.vm->memory = d.maxMemory;
    const Limit defaultLimit{core::saturatingAdd(d.maxMemory, config_.vm.limitOverhead)};
    if (isNew || m.source != Source::Api) {
        std::optional<config::VmMetadata> md;
        if (!d.metadata.empty()) {
            auto p = config::parseVmMetadata(d.metadata);
            if (!p) {
                log::warning("Ignoring the memqos metadata of domain {DOMAIN}: {ERROR}", "DOMAIN",
                             d.name, "ERROR", p.error().what);
            } else if (core::findClass(config_.classes, p->className) == nullptr) {
                log::warning("Ignoring the memqos metadata of domain {DOMAIN}: class {CLASS} does "
                             "not exist",
                             "DOMAIN", d.name, "CLASS", p->className);
            } else {
                md = *p;
            }
        }
        if (md) {
            m.source = Source::Metadata;
            m.workload.className = md->className;
            m.workload.request = md->request.value_or(0);
            m.workload.limit = md->limit ? *md->limit : defaultLimit;
            m.workload.priority = md->priority.value_or(0);
        } else if (const auto* r = ruleFor(id)) {
            m.source = Source::Rule;
            m.workload.className = r->className;
            m.workload.request = r->request;
            m.workload.limit = r->limit ? r->limit : defaultLimit;
            m.workload.priority = r->priority;
        } else if (!config_.vm.defaultClass.empty()) {
            m.source = Source::Default;
            m.workload.className = config_.vm.defaultClass;
            m.workload.request = 0;
            m.workload.limit = defaultLimit;
            m.workload.priority = 0;
        } else {
            markUnplaced(m);
        }
    }
    // The pid was read on the hypervisor's thread: it is checked here,
    // where it is used.
    const auto identity =
        d.active && d.pid > 0 ? qemuIdentity(d.pid, d.name) : okStatus();
    if (!identity) {
        if (identity.error().code != std::errc::no_such_file_or_directory) {
            warnDistrusted("domain", d.name, d.pid, identity.error());
        }
    } else if (d.active && d.pid > 0) {
        distrusted_.erase(d.name);
        if (auto scope = scopeOfPid(d.pid)) {
            m.unit = scope->first;
            m.cgroupPath = scope->second;
        } else {
            log::debug("No scope found for process {PID} of domain {DOMAIN}", "PID", d.pid,
                       "DOMAIN", d.name);
        }
    } else if (!d.active) {
        m.unit.clear();
        m.cgroupPath.clear();
        m.present = false;
        m.vm->balloonActual.reset();
        m.vm->balloonUsable.reset();
        m.vm->balloonTarget.reset();
        m.vm->balloonBaseline.reset();
    }
    if (!oldUnit.empty() && oldUnit != m.unit) {
        applied_.erase(oldUnit);
    }
    if (m.unit != oldUnit) {
        m.oomDue = true;
    }
    m.loaded = true;
    auto tiers = observedOnly(m) ? Result<core::Tiers>(core::Tiers{}) : tiersFor(m.workload);
    if (!tiers) {
        log::warning("Not managing {WORKLOAD}: {ERROR}", "WORKLOAD", id, "ERROR",
                     tiers.error().what);
        if (!isNew && m.source != Source::Api) {
            workloads_.erase(id);
        }
        return;
    }
    m.tiers = *tiers;
    if (observedOnly(m)) {
        if (isNew || before != m.workload || oldUnit != m.unit) {
            log::info(m.unit.empty() ? "Observing {WORKLOAD}: unplaced (no metadata, rule or "
                                       "[VM] DefaultClass), so memqos leaves it alone; not running"
                                     : "Observing {WORKLOAD}: unplaced (no metadata, rule or "
                                       "[VM] DefaultClass), so memqos leaves scope {UNIT} alone",
                      "WORKLOAD", id, "SOURCE", toString(m.source), "UNIT", m.unit);
        }
    } else if (isNew || before != m.workload || oldUnit != m.unit) {
        log::info(m.unit.empty() ? "Managing {WORKLOAD} in class {CLASS} ({SOURCE}); not running"
                                 : "Managing {WORKLOAD} in class {CLASS} ({SOURCE}), scope {UNIT}",
                  "WORKLOAD", id, "CLASS", m.workload.className, "SOURCE", toString(m.source),
                  "UNIT", m.unit, "REQUEST", m.workload.request, "LIMIT",
                  limitToBus(m.workload.limit));
    }
    workloads_[id] = std::move(m);
    reconcile();
}

void Manager::forgetDomain(const std::string& name) {
    const std::string id = vmId(name);
    auto it = workloads_.find(id);
    if (it == workloads_.end() || !it->second.vm ||
        it->second.vm->backend != VmBackend::Libvirt) {
        return;
    }
    applied_.erase(it->second.unit);
    if (it->second.source == Source::Api) {
        it->second.unit.clear();
        it->second.cgroupPath.clear();
        it->second.present = false;
        it->second.vm->running = false;
    } else {
        log::info("{WORKLOAD} is gone; no longer managed", "WORKLOAD", id);
        workloads_.erase(it);
    }
    reconcile();
}

void Manager::assignVm(const core::Workload& w, bool persist, Reply<std::string> reply) {
    if (hypervisor_ == nullptr) {
        reply(apiError("NotSupported", "cannot manage " + w.id +
                                           ": libvirt is off ([VM] LibvirtURI is empty)"));
        return;
    }
    const std::string name = vmName(w.id);
    hypervisor_->domain(name, [this, w, persist, name,
                               reply = std::move(reply)](Result<io::DomainInfo> d) {
        if (!d) {
            reply(apiError(d.error().code == std::errc::no_such_file_or_directory ? "NoSuchUnit"
                                                                                  : "Failed",
                           "cannot manage " + w.id + ": " + d.error().what));
            return;
        }
        // A running domain adds no memory when its class changes.
        if (auto refused = admissionRefusalUnlessRunning(w.className, d->active)) {
            reply(*refused);
            return;
        }
        auto apply = [this, w, persist, d = *d, reply] {
            storeThen<std::string>(
                [this, a = io::Assignment{w, persist}] { return store_.save(a); },
                "store the assignment of " + w.id, reply,
                [this, w, persist, d, reply] {
                           auto& m = workloads_[w.id];
                           m.workload = w;
                           m.persistent = persist;
                           m.source = Source::Api;
                           log::notice("Assigned {WORKLOAD} to class {CLASS}", "WORKLOAD", w.id,
                                       "CLASS", w.className, "REQUEST", w.request, "LIMIT",
                                       limitToBus(w.limit));
                           upsertDomain(d);
                           whenProtected(w.id, [reply, id = w.id] { reply(id); });
                       });
        };
        if (!persist || dryRun_) {
            if (persist) {
                log::notice("Dry run: would store memqos metadata and partition /memqos/{CLASS} "
                            "in domain {DOMAIN}",
                            "CLASS", w.className, "DOMAIN", name);
            }
            apply();
            return;
        }
        // Persistent: the domain's own configuration says it too, so the next
        // start lands in the class slice (<resource><partition>).
        const config::VmMetadata md{w.className, w.request, w.limit, w.priority};
        hypervisor_->place(name, config::formatVmMetadata(md), "/memqos/" + w.className,
                           [w, name, apply, reply](Status st) {
                               if (!st) {
                                   reply(apiError("Failed", "libvirt refused the metadata of " +
                                                                name + ": " + st.error().what));
                                   return;
                               }
                               log::info("Stored memqos metadata and partition /memqos/{CLASS} "
                                         "in domain {DOMAIN}",
                                         "CLASS", w.className, "DOMAIN", name);
                               apply();
                           });
    });
}

void Manager::shrinkBalloons(const std::string& className, TimePoint now) {
    for (auto& [id, m] : workloads_) {
        if (!m.vm || !m.vm->running || observedOnly(m) || m.workload.className != className ||
            m.vm->balloonBusy || !balloonMovable(m)) {
            continue;
        }
        if (m.vm->balloonMovedAt && now < *m.vm->balloonMovedAt + kBalloonGap) {
            continue;
        }
        m.vm->balloonBusy = true;
        readBalloon(id, m, [this, id = id, now](Result<io::BalloonStats> s) {
            auto it = workloads_.find(id);
            if (it == workloads_.end() || !it->second.vm) {
                return;
            }
            auto& vm = *it->second.vm;
            vm.balloonBusy = false;
            if (!s || !s->actual) {
                log::debug("No balloon statistics for {WORKLOAD}: {ERROR}", "WORKLOAD", id,
                           "ERROR", s ? "the guest reports no balloon" : s.error().what);
                return;
            }
            vm.balloonActual = s->actual;
            vm.balloonUsable = s->usable;
            const Bytes request = it->second.workload.request;
            const Bytes actual = *s->actual;
            // Never below the request; per move at most a step of the VM's
            // memory, and no more than the guest has usable (more would make
            // it swap). Without a usable figure, a step.
            const Bytes step = balloonStep(vm.memory);
            Bytes give = step;
            if (s->usable) {
                give = std::min(give, *s->usable / 2);
            }
            const Bytes floor = std::max(request, std::min<Bytes>(actual, 64 * kMiB));
            if (actual <= floor || give < kMiB) {
                return;
            }
            // Whole MiB, as Ganeti's and virsh's balloon commands take it.
            const Bytes target = std::max(floor, (actual - give) / kMiB * kMiB);
            // Nothing new to ask: the guest has not followed the last move
            // yet, or cannot give more (its usable memory is what is left).
            if (target >= actual || (vm.balloonTarget && target >= *vm.balloonTarget)) {
                return;
            }
            if (!vm.balloonBaseline) {
                vm.balloonBaseline = actual;
                balloonsToRestore_ = true;
            }
            moveBalloon(id, target,
                        "pressure level " + std::to_string(pressure_.level) + ", usable " +
                            (s->usable ? wording::formatBytes(*s->usable) : std::string("unknown")),
                        now);
        });
    }
}

void Manager::restoreBalloons(TimePoint now) {
    if (!balloonsToRestore_) {
        return; // no balloon shrunk since the last walk found none (issue 25: no walk a tick)
    }
    bool left = false; // a baseline still to come back to after this walk
    for (auto& [id, m] : workloads_) {
        if (!m.vm || !m.vm->balloonBaseline) {
            continue;
        }
        left = true;
        if (!m.vm->running || m.vm->balloonBusy || !balloonMovable(m)) {
            continue;
        }
        if (m.vm->balloonMovedAt && now < *m.vm->balloonMovedAt + kBalloonGap) {
            continue;
        }
        const Bytes current = m.vm->balloonTarget.value_or(m.vm->balloonActual.value_or(0));
        const Bytes baseline = *m.vm->balloonBaseline;
        if (current >= baseline) {
            m.vm->balloonBaseline.reset();
            continue; // (`left` may stay true for it: one more walk finds none)
        }
        const Bytes step = balloonStep(m.vm->memory);
        const Bytes target = std::min(baseline, core::saturatingAdd(current, step));
        moveBalloon(id, target, "pressure is back at level 0", now);
    }
    balloonsToRestore_ = left;
}

void Manager::moveBalloon(const std::string& id, Bytes target, const std::string& why,
                          TimePoint now) {
    auto it = workloads_.find(id);
    if (it == workloads_.end() || !it->second.vm || !balloonMovable(it->second)) {
        return;
    }
    auto& vm = *it->second.vm;
    const Bytes from = vm.balloonTarget.value_or(vm.balloonActual.value_or(0));
    vm.balloonMovedAt = now;
    vm.balloonBusy = true;
    const BalloonOrder order{.workload = id,
                             .ganeti = vm.backend == VmBackend::Ganeti,
                             .from = from,
                             .target = target,
                             .why = why};
    actuator().moveBalloon(order, [this, id, from, target, why](const Outcome& o) {
        auto w = workloads_.find(id);
        if (w == workloads_.end() || !w->second.vm) {
            return;
        }
        auto& v = *w->second.vm;
        v.balloonBusy = false;
        if (o.kind == Outcome::Kind::Would) {
            // Dry run (said so): the balloon stays where it is, and a
            // restore that reached the baseline has nothing left to do.
            if (target >= v.balloonBaseline.value_or(0)) {
                v.balloonBaseline.reset();
            }
            return;
        }
        if (o.kind != Outcome::Kind::Done) {
            log::warning("Cannot move the balloon of {WORKLOAD}: {ERROR}", "WORKLOAD", id,
                         "ERROR", o.error);
            return;
        }
        v.balloonTarget = target;
        if (v.balloonBaseline && target >= *v.balloonBaseline) {
            v.balloonBaseline.reset();
            v.balloonTarget.reset(); // back where it was: nothing of memqos's is left
        }
        ++actionCounts_["balloon"];
        log::notice("Moved the balloon of {WORKLOAD} from {FROM} to {TARGET}: {WHY}", "WORKLOAD",
                    id, "FROM", wording::formatBytes(from), "TARGET", wording::formatBytes(target),
                    "WHY", why, "BALLOON_TARGET", target, "MESSAGE_ID",
                    log::kMessagePressureAction);
        if (listener_ != nullptr) {
            listener_->workloadChanged(id);
        }
    });
}

bool Manager::balloonMovable(const ManagedWorkload& m) const {
    if (!m.vm) {
        return false;
    }
    if (m.vm->backend == VmBackend::Libvirt) {
        return hypervisor_ != nullptr;
    }
    return ganeti_ != nullptr && config_.ganeti.balloon && !m.unit.empty();
}

void Manager::readBalloon(const std::string& id, const ManagedWorkload& m,
                          std::function<void(Result<io::BalloonStats>)> then) {
    if (m.vm->backend == VmBackend::Libvirt) {
        hypervisor_->balloonStats(vmName(id), std::move(then));
        return;
    }
    // HMP's "info balloon" has no usable figure: steps only, down to the request.
    ganeti_->balloonActual(vmName(id), [then = std::move(then)](Result<Bytes> a) {
        if (!a) {
            then(a.error());
            return;
        }
        io::BalloonStats s;
        s.actual = *a;
        then(s);
    });
}


} // namespace memqos::daemon

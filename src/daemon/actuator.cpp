// SPDX-License-Identifier: Apache-2.0
#include "actuator.hpp"

#include "memqos/io/log.hpp"
#include "memqos/wording/bytes.hpp"

#include <utility>

namespace memqos::daemon {

std::string_view toString(Outcome::Kind k) {
    switch (k) {
    case Outcome::Kind::Done: return "done";
    case Outcome::Kind::Unchanged: return "unchanged";
    case Outcome::Kind::Would: return "would";
    case Outcome::Kind::Deferred: return "deferred";
    case Outcome::Kind::Failed: return "failed";
    case Outcome::Kind::Vanished: return "vanished";
    }
    return "?";
}

namespace {

Outcome fromReclaim(const Result<io::ReclaimResult>& r) {
    if (!r) {
        return Outcome::failed(r.error().what);
    }
    if (r->outcome == io::Reclaimed::Vanished) {
        return Outcome::vanished();
    }
    return Outcome::done(r->freed, r->outcome != io::Reclaimed::Full);
}

Outcome fromWritten(const Result<io::Written>& w) {
    if (!w) {
        return Outcome::failed(w.error().what);
    }
    switch (*w) {
    case io::Written::Changed: return Outcome::done();
    case io::Written::Unchanged: return Outcome::unchanged();
    case io::Written::Vanished: return Outcome::vanished();
    }
    return Outcome::unchanged();
}

// systemd's answer to a cap or its give-back: NoSuchUnit is a slice gone.
Outcome fromSystemd(const Status& st) {
    if (st) {
        return Outcome::done();
    }
    if (st.error().code == std::errc::no_such_file_or_directory) {
        return Outcome::vanished(st.error().what);
    }
    return Outcome::failed(st.error().what);
}

std::string vmNameOf(const std::string& workload) {
    return workload.starts_with("vm:") ? workload.substr(3) : workload;
}

} // namespace

// --- LiveActuator ---

LiveActuator::LiveActuator(io::KernelKnobs knobs, const io::CgroupFs& cgroups, PropertyDoor door)
    : knobs_(std::move(knobs)), cgroups_(cgroups), door_(std::move(door)) {}

void LiveActuator::reclaim(const ReclaimOrder& order, OutcomeFn done) {
    if (order.what == ReclaimOrder::For::Proactive) {
        log::debug("Reclaiming {BYTES} bytes from {WORKLOAD}", "BYTES", order.bytes, "WORKLOAD",
                   order.subject);
    }
    if (runner_ == nullptr) {
        done(fromReclaim(io::reclaimMeasured(knobs_, cgroups_, order.cgroup, order.bytes)));
        return;
    }
    // On the reclaim worker, in chunks (a long write blocks its writer):
    // never on the loop.
    runner_->reclaim(order.cgroup, order.bytes,
                     [done = std::move(done)](Result<io::ReclaimResult> r) { done(fromReclaim(r)); });
}

void LiveActuator::cancelReclaim(const std::string& cgroup) {
    if (runner_ != nullptr) {
        runner_->cancel(cgroup);
    }
}

void LiveActuator::setCap(const CapOrder& order, OutcomeFn done) {
    const std::optional<Bytes> high = order.prepare ? order.prepare() : order.memoryHigh;
    if (!high) {
        done(Outcome::deferred());
        return;
    }
    io::MemoryProperties props;
    props.memoryHigh = Limit{*high};
    // Urgent: not queued behind a reconcile storm's writes (a cap that
    // waits for 1000 of them comes too late).
    door_(order.slice, props, true, [done = std::move(done), sent = *high](Status st) {
        Outcome o = fromSystemd(st);
        o.memoryHigh = sent;
        done(std::move(o));
    });
}

void LiveActuator::giveBackCap(const CapGiveBack& order, OutcomeFn done) {
    io::MemoryProperties props;
    props.memoryHigh = order.own;
    door_(order.slice, props, true,
          [done = std::move(done)](Status st) { done(fromSystemd(st)); });
}

Outcome LiveActuator::killCgroup(const KillOrder& order) {
    if (order.cgroup.empty()) {
        return Outcome::failed("its cgroup is not known");
    }
    return fromWritten(knobs_.killCgroup(order.cgroup));
}

void LiveActuator::destroyDomain(const KillOrder& order, OutcomeFn done) {
    if (hypervisor_ == nullptr) {
        done(Outcome::failed("no libvirt connection"));
        return;
    }
    hypervisor_->destroy(vmNameOf(order.workload), [done = std::move(done)](Status st) {
        done(st ? Outcome::done() : Outcome::failed(st.error().what));
    });
}

void LiveActuator::moveBalloon(const BalloonOrder& order, OutcomeFn done) {
    auto answered = [done = std::move(done)](Status st) {
        done(st ? Outcome::done() : Outcome::failed(st.error().what));
    };
    const std::string name = vmNameOf(order.workload);
    if (order.ganeti) {
        if (ganeti_ == nullptr) {
            answered(Status(Error{std::errc::not_supported, "not a Ganeti node"}));
            return;
        }
        ganeti_->setBalloon(name, order.target, std::move(answered));
        return;
    }
    if (hypervisor_ == nullptr) {
        answered(Status(Error{std::errc::not_supported, "no libvirt connection"}));
        return;
    }
    hypervisor_->setBalloon(name, order.target, std::move(answered));
}

Outcome LiveActuator::setOomGroup(const OomGroupOrder& order) {
    return fromWritten(knobs_.setOomGroup(order.cgroup, order.on));
}

OomScoreOutcome LiveActuator::writeAll(const OomScoreOrder& order) const {
    OomScoreOutcome out;
    const auto writes = order.prepare ? order.prepare() : std::nullopt;
    if (!writes) {
        out.kind = Outcome::Kind::Deferred;
        return out;
    }
    out.kind = Outcome::Kind::Done;
    for (const auto& w : *writes) {
        out.writes.emplace_back(w, fromWritten(knobs_.writeOomScoreAdj(w.pid, w.value)));
    }
    return out;
}

OomScoreOutcome LiveActuator::setOomScoreAdj(const OomScoreOrder& order) {
    return writeAll(order);
}

OomScoreOutcome LiveActuator::giveBackOomScoreAdj(const OomScoreOrder& order) {
    return writeAll(order);
}

Outcome LiveActuator::admission(bool /*open*/, std::uint32_t /*level*/) {
    return Outcome::done(); // the state is the core's (PressureState::admissionOpen)
}

// --- DryRunActuator: the "Would …" lines (VM cases grep some of them) ---

void DryRunActuator::reclaim(const ReclaimOrder& order, OutcomeFn done) {
    switch (order.what) {
    case ReclaimOrder::For::Class:
        log::info("Would reclaim {BYTES} bytes from class {CLASS} (dry run)", "BYTES", order.bytes,
                  "CLASS", order.subject, "PRESSURE_LEVEL", order.level, "MESSAGE_ID",
                  log::kMessagePressureAction);
        break;
    case ReclaimOrder::For::Proactive:
        log::debug("Would reclaim {BYTES} bytes from {WORKLOAD} (dry run)", "BYTES", order.bytes,
                   "WORKLOAD", order.subject);
        break;
    case ReclaimOrder::For::Request:
        log::notice("Would reclaim {BYTES} bytes from {WORKLOAD} on request (dry run)", "BYTES",
                    order.bytes, "WORKLOAD", order.subject);
        break;
    }
    done(Outcome::would());
}

void DryRunActuator::cancelReclaim(const std::string& /*cgroup*/) {
    // Nothing of the dry run's is under way (it answers at once).
}

void DryRunActuator::setCap(const CapOrder& order, OutcomeFn done) {
    log::notice("Would set MemoryHigh of {UNIT} to {MEMORY_HIGH} ({WHY}; dry run): {REASON}",
                "UNIT", order.slice, "MEMORY_HIGH", order.memoryHigh, "WHY", order.why, "REASON",
                order.reason, "CLASS", order.className, "MESSAGE_ID",
                log::kMessagePressureAction);
    done(Outcome::would());
}

void DryRunActuator::giveBackCap(const CapGiveBack& order, OutcomeFn done) {
    log::notice("Dry run: would give {UNIT} back its own MemoryHigh", "UNIT", order.slice,
                "CLASS", order.className);
    done(Outcome::would());
}

Outcome DryRunActuator::killCgroup(const KillOrder& order) {
    // The Manager keeps the cooldown: a would-be kill is logged once per
    // KillCooldown, as the real one would happen.
    log::notice("Would {REASON} (dry run)", "REASON", order.reason, "WORKLOAD", order.workload,
                "CLASS", order.className, "UNIT", order.unit);
    return Outcome::would();
}

void DryRunActuator::destroyDomain(const KillOrder& order, OutcomeFn done) {
    done(killCgroup(order)); // the same line: a VM's kill is a kill
}

void DryRunActuator::moveBalloon(const BalloonOrder& order, OutcomeFn done) {
    log::notice("Would move the balloon of {WORKLOAD} from {FROM} to {TARGET} (dry run): "
                "{WHY}",
                "WORKLOAD", order.workload, "FROM", wording::formatBytes(order.from), "TARGET",
                wording::formatBytes(order.target), "WHY", order.why, "MESSAGE_ID",
                log::kMessagePressureAction);
    done(Outcome::would());
}

Outcome DryRunActuator::setOomGroup(const OomGroupOrder& order) {
    if (!order.said) {
        log::info(order.on ? "Would set memory.oom.group=1 on {CGROUP} (dry run)"
                           : "Would set memory.oom.group=0 on {CGROUP} (dry run)",
                  "CGROUP", order.cgroup, "WORKLOAD", order.workload);
    }
    return Outcome::would();
}

OomScoreOutcome DryRunActuator::setOomScoreAdj(const OomScoreOrder& order) {
    if (order.announce) {
        log::info("Would set oom_score_adj={ADJ} on the {COUNT} processes of {WORKLOAD} (dry "
                  "run)",
                  "ADJ", order.value, "COUNT", order.processes, "WORKLOAD", order.workload);
    }
    return OomScoreOutcome{Outcome::Kind::Would, {}};
}

OomScoreOutcome DryRunActuator::giveBackOomScoreAdj(const OomScoreOrder& order) {
    if (order.announce) {
        log::info("Would give the {COUNT} recorded processes of {WORKLOAD} their own "
                  "oom_score_adj back ({WHY}; dry run)",
                  "COUNT", order.processes, "WORKLOAD", order.workload, "WHY", order.why);
    }
    return OomScoreOutcome{Outcome::Kind::Would, {}};
}

Outcome DryRunActuator::admission(bool open, std::uint32_t level) {
    if (open) {
        log::notice("Admission reopened: placements into killable classes are accepted again",
                    "PRESSURE_LEVEL", level, "MESSAGE_ID", log::kMessagePressureAction);
    } else {
        log::notice("Admission would close at pressure level {PRESSURE_LEVEL} (dry run: nothing "
                    "is refused)",
                    "PRESSURE_LEVEL", level, "MESSAGE_ID", log::kMessagePressureAction);
    }
    return Outcome::would();
}

} // namespace memqos::daemon

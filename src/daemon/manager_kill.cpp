// SPDX-License-Identifier: Apache-2.0
// Kills (doc/DESIGN.md §4.2-§4.4: pressure level 3 and the class stall rule; issue 23).
// memqosd writes the victim's cgroup.kill itself, so a kill needs neither
// dbus-daemon nor PID 1 nor libvirtd: those are what a memory surge stalls
// first, and a KillUnit waits up to 25 s for them. systemd then sees the
// unit's processes die and the unit fail, as it does for systemd-oomd's
// kills. A libvirt VM gets virDomainDestroy first (libvirt then knows why
// qemu ended; a kill behind its back looks like a crash to it), and
// cgroup.kill of its machine scope (qemu runs in the scope's libvirt/
// sub-cgroup; cgroup.kill takes the whole subtree) when libvirt failed or
// has not answered within kDestroyPatience. Manager has no timer: the ticks
// after the decision check the patience.
#include "manager.hpp"

#include "memqos/io/log.hpp"
#include "memqos/wording/pressure.hpp"

#include <chrono>
#include <iterator>
#include <utility>

namespace memqos::daemon {

void Manager::killWorkload(const core::KillWorkload& k, std::optional<TimePoint> previousKill,
                           TimePoint now) {
    KillInFlight kill;
    kill.seq = ++killSeq_;
    kill.startedAt = now;
    kill.decidedAt = pressure_.lastKill.value_or(TimePoint{0});
    kill.previousKill = previousKill;
    kill.record.id = k.victim.id;
    kill.record.className = k.victim.className;
    kill.record.reason = wording::describe(k);
    kill.record.numbers = k.numbers;
    const auto it = workloads_.find(k.victim.id);
    if (it != workloads_.end()) {
        kill.record.unit = it->second.unit;
        kill.cgroupPath = it->second.cgroupPath;
    }
    // A kill stops the pressure reclaim of the guarded classes (it would
    // swap out what is about to be freed).
    for (const auto& cls : classReclaimBusy_) {
        actuator().cancelReclaim(io::classSlicePath(cls));
    }
    if (killsInFlight_.contains(k.victim.id)) {
        // tick() sets such a workload aside, so the core does not pick it.
        log::warning("Not killing {WORKLOAD} again: a kill of it is on its way", "WORKLOAD",
                     k.victim.id);
        notKilled(kill);
        return;
    }
    const bool libvirtVm =
        it != workloads_.end() && it->second.vm && it->second.vm->backend == VmBackend::Libvirt;
    if (libvirtVm && hypervisor_ != nullptr) {
        const std::string id = k.victim.id;
        const std::uint64_t seq = kill.seq;
        const KillOrder order = killOrder(kill);
        killsInFlight_[id] = std::move(kill);
        actuator().destroyDomain(order, [this, id, seq](const Outcome& o) {
            auto f = killsInFlight_.find(id);
            if (o.kind == Outcome::Kind::Would) {
                // Dry run (said so): nothing on its way; the cooldown is
                // kept, as for a kill that happened.
                if (f != killsInFlight_.end() && f->second.seq == seq) {
                    killsInFlight_.erase(f);
                }
                return;
            }
            if (f == killsInFlight_.end() || f->second.seq != seq) {
                // cgroup.kill ended the VM (and recorded it) or failed
                // (and set it aside) meanwhile: nothing to record.
                log::debug("libvirt answered the destroy of {WORKLOAD} after memqosd wrote its "
                           "cgroup.kill",
                           "WORKLOAD", id);
                return;
            }
            if (o.kind != Outcome::Kind::Done) {
                // The next tick writes cgroup.kill (advanceKills).
                log::warning("Cannot destroy {WORKLOAD}: libvirt refused: {ERROR}", "WORKLOAD", id,
                             "ERROR", o.error);
                f->second.destroyFailed = true;
                return;
            }
            auto record = std::move(f->second.record);
            killsInFlight_.erase(f);
            recordKill(std::move(record), "virDomainDestroy");
        });
        return;
    }
    if (killCgroup(kill, now) == CgroupKill::Gone) {
        notKilled(kill); // it ended by itself: memqosd freed nothing
    }
    // Would (dry run, said so): the cooldown is kept, so a would-be kill is
    // logged once per KillCooldown, as the real one would happen.
}

Manager::CgroupKill Manager::killCgroup(const KillInFlight& kill, TimePoint now) {
    const std::string& id = kill.record.id;
    const Outcome o = actuator().killCgroup(killOrder(kill));
    switch (o.kind) {
    case Outcome::Kind::Would:
        return CgroupKill::Would;
    case Outcome::Kind::Vanished:
        log::info("Not killing {WORKLOAD}: its cgroup {CGROUP} is gone", "WORKLOAD", id, "CGROUP",
                  kill.cgroupPath);
        return CgroupKill::Gone;
    case Outcome::Kind::Done:
    case Outcome::Kind::Unchanged:
        recordKill(kill.record, "cgroup.kill");
        return CgroupKill::Killed;
    case Outcome::Kind::Failed:
    case Outcome::Kind::Deferred:
        break;
    }
    log::warning("Cannot kill {WORKLOAD}: {ERROR}", "WORKLOAD", id, "ERROR", o.error, "CGROUP",
                 kill.cgroupPath, "UNIT", kill.record.unit);
    notKilled(kill);
    setAsideUntil_[id] = now + kSetAsideCooldowns * config_.pressure.killCooldown;
    return CgroupKill::Failed;
}

KillOrder Manager::killOrder(const KillInFlight& kill) {
    return KillOrder{.workload = kill.record.id,
                     .className = kill.record.className,
                     .unit = kill.record.unit,
                     .cgroup = kill.cgroupPath,
                     .reason = kill.record.reason};
}

void Manager::recordKill(io::KillRecord record, std::string_view how) {
    record.timeUsec =
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
    std::vector<log::Field> fields{
        {"WORKLOAD", record.id},         {"CLASS", record.className},
        {"UNIT", record.unit},           {"REASON", record.reason},
        {"KILLED_BY", std::string(how)}, {"MESSAGE_ID", std::string(log::kMessageKill)}};
    for (const auto& [key, value] : record.numbers) {
        fields.push_back({key, std::to_string(value)});
    }
    log::emit(log::Level::Warning, "Killed {WORKLOAD} (unit {UNIT}, class {CLASS}): {REASON}",
              std::move(fields), log::SourceLocation::current());
    ++killCount_;
    // In the history at once (ListKills); on disk by the state writer, so
    // that the loop does not wait on a disk the host's pressure may slow.
    writeStateOrLog([this, text = events_.add(record)] { return events_.writeText(text); },
                    "store the kill of " + record.id + " in the history", false);
    if (listener_ != nullptr) {
        listener_->workloadKilled(record);
    }
}

void Manager::notKilled(const KillInFlight& kill) {
    // Give the cooldown back, unless a later decision moved it meanwhile.
    if (pressure_.lastKill == kill.decidedAt) {
        pressure_.lastKill = kill.previousKill;
    }
}

void Manager::advanceKills(TimePoint now) {
    for (auto it = setAsideUntil_.begin(); it != setAsideUntil_.end();) {
        it = it->second <= now ? setAsideUntil_.erase(it) : std::next(it);
    }
    for (auto it = killsInFlight_.begin(); it != killsInFlight_.end();) {
        KillInFlight& kill = it->second;
        if (kill.cgroupGone) {
            // The VM ended, maybe by the destroy that failed: no kill to
            // record, and no cooldown to give back (its memory is free).
            it = kill.destroyFailed ? killsInFlight_.erase(it) : std::next(it);
            continue;
        }
        if (!kill.destroyFailed && now - kill.startedAt < kDestroyPatience) {
            ++it;
            continue;
        }
        if (!kill.destroyFailed) {
            log::warning(
                "libvirt has not destroyed {WORKLOAD} within {PATIENCE_MS} ms: killing "
                "its cgroup",
                "WORKLOAD", kill.record.id, "PATIENCE_MS",
                std::chrono::duration_cast<std::chrono::milliseconds>(kDestroyPatience).count());
        }
        if (killCgroup(kill, now) == CgroupKill::Gone && !kill.destroyFailed) {
            kill.cgroupGone = true; // libvirt's answer decides
            ++it;
            continue;
        }
        it = killsInFlight_.erase(it);
    }
}

bool Manager::setAside(const std::string& id, TimePoint now) const {
    if (killsInFlight_.contains(id)) {
        return true;
    }
    const auto it = setAsideUntil_.find(id);
    return it != setAsideUntil_.end() && it->second > now;
}

} // namespace memqos::daemon

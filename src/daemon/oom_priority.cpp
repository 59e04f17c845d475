// SPDX-License-Identifier: Apache-2.0
// The OOM priority of managed workloads' processes (/proc/PID/oom_score_adj,
// memory.oom.group), what each process had before memqos changed it, and
// giving that back when memqos lets go.
#include "manager.hpp"

#include "memqos/core/oom_score.hpp"
#include "memqos/io/log.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace memqos::daemon {
namespace {

// "2 × -1000, 1 × 0" for the give-back line.
std::string describeGiven(const std::map<int, std::size_t>& given) {
    std::string out;
    for (const auto& [value, count] : given) {
        if (!out.empty()) {
            out += ", ";
        }
        out += std::to_string(count) + " × " + std::to_string(value);
    }
    return out.empty() ? "none" : out;
}

} // namespace

void Manager::loadOomRecords() {
    if (oomStore_ == nullptr) {
        return;
    }
    auto loaded = oomStore_->loadAll();
    for (const auto& p : loaded.problems) {
        log::warning("Ignoring a stored record of processes' own oom_score_adj: {ERROR}", "ERROR",
                     p);
    }
    for (auto& r : loaded.records) {
        oomRecords_[r.workload] = std::move(r);
    }
    if (!oomRecords_.empty()) {
        log::info("Loaded the own oom_score_adj of the processes of {COUNT} workloads", "COUNT",
                  oomRecords_.size());
    }
}

void Manager::keepOomPriority(ManagedWorkload& m, const std::vector<std::int32_t>& procs) {
    if (observedOnly(m)) {
        return; // an unplaced VM's processes keep the priority they have
    }
    const auto* cls = core::findClass(config_.classes, m.workload.className);
    if (cls == nullptr) {
        return;
    }
    // The kernel, if it ever fires, takes a whole low-class workload rather
    // than one of its processes. Protected classes are left as they are.
    if (cls->killable) {
        const Outcome w = actuator().setOomGroup(OomGroupOrder{.workload = m.workload.id,
                                                               .cgroup = m.cgroupPath,
                                                               .on = true,
                                                               .said = m.oomGroupNoted});
        if (w.kind == Outcome::Kind::Would) {
            m.oomGroupNoted = true; // the dry run said it once
        } else if (w.kind == Outcome::Kind::Failed) {
            log::warning("Cannot set memory.oom.group of {CGROUP}: {ERROR}", "CGROUP",
                         m.cgroupPath, "ERROR", w.error);
        } else if (w.kind == Outcome::Kind::Done) {
            m.oomGroupSet = true;
            log::info("Set memory.oom.group=1 on {CGROUP}", "CGROUP", m.cgroupPath, "WORKLOAD",
                      m.workload.id);
        }
    }
    if (cls->oomScoreAdj.keeps()) {
        // OOMScoreAdjust=keep: nothing written; what memqos wrote before a
        // reload made the class keep is given back (giveBackOomPriorities).
        m.oomScoreAdj.reset();
        return;
    }
    const int adj = core::oomScoreAdj(*cls, m.workload.request, system_.mem.memTotal);
    std::map<std::int32_t, int> had; // pid -> its value before memqos's write
    OomScoreOrder order{.workload = m.workload.id,
                        .value = adj,
                        .processes = procs.size(),
                        .why = {},
                        .announce = m.oomScoreAdj != adj && !procs.empty(),
                        .prepare = [&] { return recordOomPriority(m, procs, adj, had); }};
    const auto out = actuator().setOomScoreAdj(order);
    if (out.kind == Outcome::Kind::Would) {
        if (order.announce) {
            m.oomScoreAdj = adj; // said for this value
        }
        return;
    }
    if (out.kind != Outcome::Kind::Done) {
        return; // no process: nothing to remember, nothing to write
    }
    auto& stored = oomRecords_[m.workload.id];
    std::size_t changed = 0;
    for (const auto& [w, o] : out.writes) {
        if (o.kind == Outcome::Kind::Failed) {
            log::warning("Cannot set oom_score_adj of process {PID} of {WORKLOAD}: {ERROR}", "PID",
                         w.pid, "WORKLOAD", m.workload.id, "ERROR", o.error);
        }
        if (o.kind != Outcome::Kind::Done) {
            // It keeps what it has: not memqos's value, so never "given back".
            if (auto p = stored.processes.find(w.pid); p != stored.processes.end()) {
                p->second.written = had[w.pid];
            }
            continue;
        }
        ++changed;
    }
    if (changed > 0) {
        log::info("Set oom_score_adj={ADJ} on {COUNT} processes of {WORKLOAD}", "ADJ", adj,
                  "COUNT", changed, "WORKLOAD", m.workload.id, "CLASS", m.workload.className);
    }
    m.oomScoreAdj = adj;
}

std::optional<std::vector<ProcessWrite>>
Manager::recordOomPriority(const ManagedWorkload& m, const std::vector<std::int32_t>& procs,
                           int adj, std::map<std::int32_t, int>& had) {
    // First what each process has now, and the record updated as if every
    // write succeeds; stored before any write, so a crash between the two
    // loses nothing.
    const auto old = oomRecords_.find(m.workload.id);
    const bool known = old != oomRecords_.end();
    io::OomRecord rec = known ? old->second : io::OomRecord{};
    rec.workload = m.workload.id;
    rec.cgroup = m.cgroupPath;
    std::vector<std::pair<std::int32_t, int>> toWrite; // pid, its value now
    std::set<std::int32_t> seen;
    for (const std::int32_t pid : procs) {
        auto cur = knobs_.readOomScoreAdj(pid);
        if (!cur) {
            log::warning("Cannot read oom_score_adj of process {PID} of {WORKLOAD}: {ERROR}",
                         "PID", pid, "WORKLOAD", m.workload.id, "ERROR", cur.error().what);
            continue;
        }
        if (!*cur) {
            continue; // exited meanwhile
        }
        const int now = (*cur)->oomScoreAdj;
        seen.insert(pid);
        auto p = rec.processes.find(pid);
        if (p != rec.processes.end() && p->second.startTime != (*cur)->startTime) {
            // The pid was reused: another process than the one recorded.
            rec.processes.erase(p);
            p = rec.processes.end();
        }
        if (p == rec.processes.end()) {
            // New to memqos. Forked after memqos's change, it inherited
            // memqos's value: without memqos it would have the workload's
            // base. Else what it has is its own.
            const bool inherited = known && now == rec.written;
            p = rec.processes
                    .emplace(pid, io::OomProcess{.pid = pid,
                                                 .startTime = (*cur)->startTime,
                                                 .original = inherited ? rec.base : now,
                                                 .written = now})
                    .first;
        } else if (now != p->second.written) {
            // Someone else wrote it since memqos did (the process itself, an
            // operator): that is its own value now, the one to give back.
            p->second.original = now;
        }
        if (now != adj) {
            toWrite.emplace_back(pid, now);
        }
        p->second.written = adj;
    }
    // Processes that exited or left the cgroup.
    std::erase_if(rec.processes, [&](const auto& kv) { return !seen.contains(kv.first); });
    if (!rec.processes.empty()) {
        // The oldest process, usually the unit's main one: what it had came
        // from the unit (OOMScoreAdjust=) or itself, and its children would
        // have inherited it.
        const auto oldest = std::min_element(
            rec.processes.begin(), rec.processes.end(), [](const auto& a, const auto& b) {
                return a.second.startTime < b.second.startTime;
            });
        rec.base = oldest->second.original;
    } else if (!known) {
        return std::nullopt; // no process: nothing to remember, nothing to write
    }
    rec.written = adj;
    if (!known || !(old->second == rec)) {
        if (oomStore_ != nullptr) {
            if (auto st = oomStore_->save(rec); !st) {
                log::warning("Cannot store the own oom_score_adj of the processes of {WORKLOAD} "
                             "({ERROR}); memqos gives them back while it runs, but not after a "
                             "restart",
                             "WORKLOAD", m.workload.id, "ERROR", st.error().what);
            }
        }
        oomRecords_[m.workload.id] = rec;
    }
    std::vector<ProcessWrite> writes;
    for (const auto& [pid, now] : toWrite) {
        had[pid] = now;
        writes.push_back(ProcessWrite{.pid = pid, .value = adj});
    }
    return writes;
}

Manager::OomLookKey Manager::oomLookKey() const {
    return OomLookKey{.workloads = workloads_.revision(),
                      .records = oomRecords_.size(),
                      .discovered = discovered_,
                      .domainsListed = domainsListed_};
}

void Manager::giveBackOomPriorities() {
    std::vector<std::pair<std::string, std::string>> letGo; // id, why
    // Both maps are ordered by id: one merge walk, not a lookup per record
    // (every tick, at 1000 workloads; issue 25).
    // (Read only: a light tick's snapshot stays valid, WorkloadMap::touches.)
    auto w = std::as_const(workloads_).begin();
    for (const auto& [id, rec] : oomRecords_) {
        while (w != workloads_.cend() && w->first < id) {
            ++w;
        }
        if (w == workloads_.cend() || w->first != id) {
            // Not found (yet) after a start: wait until every workload memqos
            // can find was looked for, or a managed one would flip.
            const bool vm = id.starts_with("vm:");
            if (discovered_ && (!vm || hypervisor_ == nullptr || domainsListed_)) {
                letGo.emplace_back(id, "no longer managed");
            }
            continue;
        }
        if (observedOnly(w->second)) {
            letGo.emplace_back(id, "only observed now");
            continue;
        }
        const auto* cls = core::findClass(config_.classes, w->second.workload.className);
        if (cls == nullptr) {
            letGo.emplace_back(id, "its class is gone");
        } else if (cls->oomScoreAdj.keeps()) {
            letGo.emplace_back(id, "class " + cls->name + " keeps oom_score_adj");
        }
    }
    for (const auto& [id, why] : letGo) {
        giveBackOom(id, why);
    }
}

void Manager::giveBackOom(const std::string& id, std::string_view why) {
    const auto it = oomRecords_.find(id);
    if (it == oomRecords_.end()) {
        return;
    }
    const io::OomRecord& rec = it->second;
    std::size_t leftAlone = 0;
    // What to write back: read first (live only), then written by the actuator.
    auto toGiveBack = [&]() -> std::optional<std::vector<ProcessWrite>> {
        std::vector<ProcessWrite> writes;
        for (const auto& [pid, p] : rec.processes) {
            auto cur = knobs_.readOomScoreAdj(pid);
            if (!cur || !*cur || (*cur)->startTime != p.startTime) {
                continue; // gone, unreadable, or the pid is another process now
            }
            if ((*cur)->oomScoreAdj != p.written) {
                ++leftAlone; // it (or someone) set its own value since: left alone
            } else if (p.original != p.written) {
                writes.push_back(ProcessWrite{.pid = pid, .value = p.original});
            }
        }
        // Forked after memqos's last sweep: memqos's value, inherited.
        if (rec.base != rec.written) {
            auto u = cgroups_.usage(rec.cgroup, true);
            if (u && u->has_value()) {
                for (const std::int32_t pid : (*u)->procs) {
                    if (rec.processes.contains(pid)) {
                        continue;
                    }
                    auto cur = knobs_.readOomScoreAdj(pid);
                    if (cur && *cur && (*cur)->oomScoreAdj == rec.written) {
                        writes.push_back(ProcessWrite{.pid = pid, .value = rec.base});
                    }
                }
            }
        }
        return writes;
    };
    const auto out = actuator().giveBackOomScoreAdj(
        OomScoreOrder{.workload = id,
                      .value = rec.written,
                      .processes = rec.processes.size(),
                      .why = std::string(why),
                      .announce = !oomGiveBackAnnounced_.contains(id),
                      .prepare = toGiveBack});
    if (out.kind == Outcome::Kind::Would) {
        oomGiveBackAnnounced_.insert(id); // said once; the record is kept
        return;
    }
    oomGiveBackAnnounced_.erase(id);
    std::map<int, std::size_t> given; // value -> processes
    std::size_t count = 0;
    for (const auto& [w, o] : out.writes) {
        if (o.kind == Outcome::Kind::Failed) {
            log::warning("Cannot give process {PID} of {WORKLOAD} its own oom_score_adj={ADJ} "
                         "back: {ERROR}",
                         "PID", w.pid, "WORKLOAD", id, "ADJ", w.value, "ERROR", o.error);
        } else if (o.kind == Outcome::Kind::Done) {
            ++given[w.value];
            ++count;
        }
    }
    if (count > 0 || leftAlone > 0) {
        log::info("Gave {COUNT} processes of {WORKLOAD} their own oom_score_adj back ({GIVEN}); "
                  "{LEFT} that set their own value since left alone ({WHY})",
                  "COUNT", count, "WORKLOAD", id, "GIVEN", describeGiven(given), "LEFT", leftAlone,
                  "WHY", why);
    } else {
        log::debug("No process of {WORKLOAD} has memqos's oom_score_adj any more ({WHY})",
                   "WORKLOAD", id, "WHY", why);
    }
    if (oomStore_ != nullptr) {
        if (auto st = oomStore_->remove(id); !st) {
            log::warning("Cannot remove the oom_score_adj record of {WORKLOAD}: {ERROR}",
                         "WORKLOAD", id, "ERROR", st.error().what);
        }
    }
    oomRecords_.erase(it);
}

} // namespace memqos::daemon

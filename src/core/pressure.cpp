// SPDX-License-Identifier: Apache-2.0
#include "memqos/core/pressure.hpp"

#include "memqos/core/proactive.hpp"
#include "memqos/core/victims.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "numeric.hpp"

namespace memqos::core {

namespace {

using detail::U128;
using detail::pageFloor;
using detail::permyriadOf;

enum class Kind { Some, Full, MemAvailable, Watermark, Swap };
constexpr std::size_t kKinds = 5;

struct Signal {
    Kind kind = Kind::Some;
    bool on = false;     // at or past the threshold
    bool held = false;   // at or past the threshold relaxed by hysteresis
    PressureSignal fact; // what it compared
};

// Signals of levels 1..3 (index 0..2).
struct Evaluation {
    std::array<std::vector<Signal>, 3> levels;
    bool swapTrigger = false; // the level-3 swap signal is on
    // Memory and swap both nearly gone (the swap signal on): level 3 without
    // waiting for Level3Duration.
    bool exhausted = false;

    // Level `level`'s condition: any signal of that level or a higher one.
    bool on(std::uint32_t level) const { return any(level, &Signal::on); }
    bool held(std::uint32_t level) const { return any(level, &Signal::held); }

private:
    bool any(std::uint32_t level, bool Signal::*flag) const {
        for (std::uint32_t l = level; l <= kMaxPressureLevel; ++l) {
            for (const auto& s : levels[l - 1]) {
                if (s.*flag) {
                    return true;
                }
            }
        }
        return false;
    }
};

Usec elapsed(TimePoint now, TimePoint since) {
    return now > since ? now - since : Usec{0};
}

// memAvailable/memTotal ≤ threshold, and the same relaxed to
// threshold/(1 − h): avail·(10000 − h) ≤ threshold·total.
std::pair<bool, bool> memAvailableBelow(const MemInfo& m, Permyriad threshold,
                                        std::uint64_t keep) {
    const U128 limit = U128{threshold} * m.memTotal;
    return {U128{m.memAvailable} * kPermyriadOne <= limit, U128{m.memAvailable} * keep <= limit};
}

Evaluation evaluate(const Snapshot& snap, const PressureConfig& cfg) {
    Evaluation ev;
    const SystemSample& sys = snap.system;
    const MemInfo& mem = sys.mem;
    const Bytes page = sys.pageSize == 0 ? kDefaultPageSize : sys.pageSize;
    // 1 − h in permyriad; a hysteresis of 100 % or more would never let a
    // level go, config rejects it, treat it as "always held".
    const std::uint64_t keep = cfg.hysteresis >= kPermyriadOne ? 0 : kPermyriadOne - cfg.hysteresis;
    const double keepFraction = static_cast<double>(keep) / static_cast<double>(kPermyriadOne);

    for (std::uint32_t level = 1; level <= kMaxPressureLevel; ++level) {
        const LevelThresholds& t = cfg.levels[level - 1];
        auto& out = ev.levels[level - 1];
        const auto psi = [&](Kind kind, double value, double threshold) {
            out.push_back(Signal{.kind = kind,
                                 .on = value >= threshold,
                                 .held = value >= threshold * keepFraction,
                                 .fact = PsiSignal{.full = kind == Kind::Full,
                                                   .avg10 = value,
                                                   .threshold = threshold}});
        };
        if (sys.pressure && t.someAvg10) {
            psi(Kind::Some, sys.pressure->some.avg10, *t.someAvg10);
        }
        if (sys.pressure && sys.pressure->full && t.fullAvg10) {
            psi(Kind::Full, sys.pressure->full->avg10, *t.fullAvg10);
        }
        if (t.memAvailableBelow && mem.memTotal > 0) {
            const auto [on, held] = memAvailableBelow(mem, *t.memAvailableBelow, keep);
            out.push_back(Signal{.kind = Kind::MemAvailable,
                                 .on = on,
                                 .held = held,
                                 .fact = MemAvailableSignal{.memAvailable = mem.memAvailable,
                                                            .memTotal = mem.memTotal,
                                                            .threshold = *t.memAvailableBelow}});
        }
        if (cfg.watermarks && level >= 2) {
            // Level 2 looks at the low watermark (kswapd wakes), level 3 at
            // min (allocations stall in direct reclaim).
            const bool useMin = level == 3;
            Signal s{.kind = Kind::Watermark, .on = false, .held = false, .fact = {}};
            for (const auto& z : sys.zones) {
                if (z.managedPages == 0) {
                    continue; // empty zones report zero watermarks
                }
                const std::uint64_t mark = useMin ? z.minPages : z.lowPages;
                const bool on = z.freePages < mark;
                // free ≤ mark/(1 − h) as free·(1 − h) < mark (on is free <
                // mark); keep = 0 holds always.
                const bool held =
                    keep == 0 || U128{z.freePages} * keep < U128{mark} * kPermyriadOne;
                if (on && !s.on) {
                    s.fact = WatermarkSignal{.zone = z.name,
                                             .node = z.node,
                                             .free = detail::saturate(U128{z.freePages} * page),
                                             .watermark = detail::saturate(U128{mark} * page),
                                             .min = useMin};
                }
                s.on = s.on || on;
                s.held = s.held || held;
            }
            if (!sys.zones.empty()) {
                out.push_back(std::move(s));
            }
        }
        const auto& t3 = cfg.levels[2];
        if (level == 3 && cfg.swapUsedKill && t3.memAvailableBelow && mem.swapTotal > 0 &&
            mem.memTotal > 0) {
            const Bytes used = detail::subOrZero(mem.swapTotal, mem.swapFree);
            const U128 usedScaled = U128{used} * kPermyriadOne;
            const U128 limit = U128{*cfg.swapUsedKill} * mem.swapTotal;
            const auto [availOn, availHeld] = memAvailableBelow(mem, *t3.memAvailableBelow, keep);
            Signal s{.kind = Kind::Swap,
                     .on = usedScaled >= limit && availOn,
                     .held = usedScaled * kPermyriadOne >= limit * keep && availHeld,
                     .fact = SwapSignal{.used = used,
                                        .swapTotal = mem.swapTotal,
                                        .threshold = *cfg.swapUsedKill,
                                        .memAvailable = {.memAvailable = mem.memAvailable,
                                                         .memTotal = mem.memTotal,
                                                         .threshold = *t3.memAvailableBelow}}};
            ev.swapTrigger = s.on;
            out.push_back(std::move(s));
        }
    }
    // The kernel's OOM killer is seconds away once memory and swap are both
    // gone, and Level3Duration would let it fire first: with nothing
    // throttling a hog (VM case 52-kill-path, dbus-daemon stopped, so no cap
    // reached systemd) the kernel killed it 8 s after level 2, before level
    // 3's 10 s had passed. A host without swap keeps Level3Duration (it may
    // live on page cache at 2 % for a while); SwapUsedKill=off turns this off
    // with the signal.
    ev.exhausted = ev.swapTrigger;
    return ev;
}

// The signals that put `level`'s condition on: for each kind, the one of
// the highest level ≥ `level` at which it is on.
std::vector<PressureSignal> onSignals(const Evaluation& ev, std::uint32_t level) {
    std::array<const Signal*, kKinds> pick{};
    for (std::uint32_t l = kMaxPressureLevel; l >= level && l >= 1; --l) {
        for (const auto& s : ev.levels[l - 1]) {
            auto& slot = pick[static_cast<std::size_t>(s.kind)];
            if (s.on && slot == nullptr) {
                slot = &s;
            }
        }
    }
    std::vector<PressureSignal> out;
    for (const Signal* s : pick) {
        if (s != nullptr) {
            out.push_back(s->fact);
        }
    }
    return out;
}

// Current readings, for reasons that are not about a signal being on.
Readings readingsOf(const Snapshot& snap) {
    const SystemSample& sys = snap.system;
    Readings r{.someAvg10 = std::nullopt,
               .fullAvg10 = std::nullopt,
               .memAvailable = sys.mem.memAvailable,
               .memTotal = sys.mem.memTotal};
    if (sys.pressure) {
        r.someAvg10 = sys.pressure->some.avg10;
        if (sys.pressure->full) {
            r.fullAvg10 = sys.pressure->full->avg10;
        }
    }
    return r;
}

std::uint64_t psiPermyriad(double percent) {
    return percent > 0 ? static_cast<std::uint64_t>(std::llround(percent * 100)) : 0;
}


KillWorkload killAction(const Snapshot& snap, const Candidate& victim, const Evaluation& ev,
                        std::uint32_t level) {
    const MemInfo& mem = snap.system.mem;
    KillWorkload k{.victim = victim,
                   .reason = LadderKill{.level = level,
                                        .signals = onSignals(ev, level),
                                        .readings = readingsOf(snap)},
                   .numbers = {}};
    k.numbers = {
        {"pressure_level", level},
        {"class_rank", victim.rank},
        {"usage", victim.usage},
        {"request", victim.request},
        {"excess", victim.excess},
        {"swap_usage", victim.swapUsage},
        {"memory_total", mem.memTotal},
        {"memory_available", mem.memAvailable},
        {"swap_total", mem.swapTotal},
        {"swap_used", detail::subOrZero(mem.swapTotal, mem.swapFree)},
        {"swap_trigger", ev.swapTrigger ? 1U : 0U},
    };
    if (snap.system.pressure) {
        k.numbers.emplace_back("psi_some_avg10_permyriad",
                               psiPermyriad(snap.system.pressure->some.avg10));
        if (snap.system.pressure->full) {
            k.numbers.emplace_back("psi_full_avg10_permyriad",
                                   psiPermyriad(snap.system.pressure->full->avg10));
        }
    }
    return k;
}

} // namespace

// The memory guard's cap for `cls` (see pressure.hpp), with its numbers.
GuardCap guardCap(const Snapshot& snap, const PressureConfig& cfg,
                  const std::vector<ClassPolicy>& classes, const std::string& cls, Bytes page) {
    const Bytes total = snap.system.mem.memTotal;
    // Not only the other class slices: assigned units stay in their own
    // slices and libvirt VMs in machine.slice (reclaimedAllocatable's claim).
    const OthersClaim others = claimOfOthers(snap, classes, cls);
    const Bytes headroom = permyriadOf(total, cfg.guardHeadroom);
    const Bytes floor = pageFloor(permyriadOf(total, kGuardFloor), page);
    const Bytes left = detail::subOrZero(detail::subOrZero(total, others.total()), headroom);
    const Bytes aligned = pageFloor(left, page);
    const Bytes cap = std::max(floor, aligned);
    return GuardCap{.memTotal = total,
                    .others = others.classes,
                    .hostOwn = others.hostOwn,
                    .reserved = others.reserved,
                    .headroom = headroom,
                    .left = left,
                    .floor = floor,
                    .floored = cap != aligned,
                    .cap = cap};
}

std::string_view toString(CapClass::Why why) {
    switch (why) {
    case CapClass::Why::Guard:
        return "guard";
    case CapClass::Why::Throttle:
        return "throttle";
    case CapClass::Why::Restore:
        return "restore";
    }
    return "guard";
}

std::vector<std::string> capsToGiveBack(const std::vector<std::string>& capped,
                                        const std::vector<ClassPolicy>& classes) {
    std::vector<std::string> out;
    for (const auto& name : capped) {
        const auto* cls = findClass(classes, name);
        if (cls == nullptr || !cls->memoryGuard) {
            out.push_back(name);
        }
    }
    return out;
}

bool atCap(const CgroupSample& slice) {
    constexpr Bytes kMinSlack = Bytes{16} << 20U;
    if (!slice.memoryHigh || *slice.memoryHigh == kNoLimit) {
        return false;
    }
    const Bytes high = *slice.memoryHigh;
    const Bytes slack = std::min(high, std::max(high / 32, kMinSlack));
    return slice.memoryCurrent >= high - slack;
}

namespace {

// Moves the stall window `key` of `windows` on: a window of at least
// kClassStallWindow ends with its full stall share; a counter that went back
// (the cgroup was created anew) starts a new window with share 0.
double stallShare(std::map<std::string, PressureState::StallWindow>& windows,
                  const std::string& key, std::uint64_t fullUsec, TimePoint now) {
    auto [it, fresh] = windows.try_emplace(key, PressureState::StallWindow{now, fullUsec, 0});
    auto& w = it->second;
    if (fresh) {
        return 0;
    }
    if (fullUsec < w.fullUsec) {
        w = PressureState::StallWindow{now, fullUsec, 0};
        return 0;
    }
    const Usec span = elapsed(now, w.at);
    if (span >= kClassStallWindow) {
        w.share = std::min(100.0, 100.0 * static_cast<double>(fullUsec - w.fullUsec) /
                                      static_cast<double>(span.count()));
        w.at = now;
        w.fullUsec = fullUsec;
    }
    return w.share;
}

// The full stall total of a sample, when it has one.
std::optional<std::uint64_t> fullTotal(const std::optional<CgroupSample>& cg) {
    if (!cg || !cg->pressure || !cg->pressure->full) {
        return std::nullopt;
    }
    return cg->pressure->full->totalUsec;
}

// Moves the windows of the workloads and protected cgroups on (the class
// windows move in classStallKills); windows of what the snapshot has no
// pressure for are dropped. Fills in the protected class or cgroup that
// stalls most at or above the threshold (hostHurt's second half).
void protectedStalls(const Snapshot& snapshot, const PressureConfig& config,
                     const std::vector<ClassPolicy>& classes, PressureState& st,
                     HostHurt& host) {
    if (!config.classStallFull) {
        st.workloadStall.clear();
        st.protectedStall.clear();
        return;
    }
    const TimePoint now = snapshot.now;
    const double threshold = *config.classStallFull;
    using Windows = std::map<std::string, PressureState::StallWindow>;
    // The window of `key` carried from `old` into `fresh` and moved on: what
    // this snapshot has no pressure for is not carried.
    const auto move = [now](const Windows& old, Windows& fresh, const std::string& key,
                            std::uint64_t total) {
        if (const auto w = old.find(key); w != old.end()) {
            fresh.insert(*w);
        }
        return stallShare(fresh, key, total, now);
    };
    Windows workloads;
    for (const auto& ws : snapshot.workloads) {
        if (const auto total = fullTotal(ws.cgroup)) {
            move(st.workloadStall, workloads, ws.workload.id, *total);
        }
    }
    st.workloadStall = std::move(workloads);
    Windows prot;
    const auto note = [&](const std::string& key, std::uint64_t total) {
        const double share = move(st.protectedStall, prot, key, total);
        if (share >= threshold && share > host.stallingShare) {
            host.stalling = key;
            host.stallingShare = share;
        }
    };
    for (const auto& c : snapshot.classes) {
        const ClassPolicy* cls = findClass(classes, c.name);
        if (cls != nullptr && !cls->killable) {
            if (const auto total = fullTotal(c.cgroup)) {
                note("class:" + c.name, *total);
            }
        }
    }
    for (const auto& cg : snapshot.protectedCgroups) {
        if (cg.pressure && cg.pressure->full) {
            note("cgroup:" + cg.path, cg.pressure->full->totalUsec);
        }
    }
    st.protectedStall = std::move(prot);
}

// The "class stall" rule of pressure.hpp. `guards`: each memoryGuard
// class's guard cap this tick; `step`: the cap step.
void classStallKills(const Snapshot& snapshot, const PressureConfig& config,
                     const std::vector<ClassPolicy>& classes,
                     const std::vector<const ClassPolicy*>& ordered, const Evaluation& ev,
                     const std::map<std::string, Bytes>& guards, Bytes step,
                     const HostHurt& host, PressureState& st, Decisions& d) {
    const TimePoint now = snapshot.now;
    // Every window moves on first, whatever is killed below.
    struct AtCap {
        double share;
        Bytes usage;
        Bytes cap;
    };
    std::map<std::string, AtCap> shares;
    for (const ClassPolicy* c : ordered) {
        const CgroupSample* sample = classSample(snapshot, c->name);
        if (!config.classStallFull || !c->memoryGuard || !c->killable || sample == nullptr ||
            !sample->pressure || !sample->pressure->full) {
            st.stallWindow.erase(c->name);
            st.stallSince.erase(c->name);
            continue;
        }
        const double share =
            stallShare(st.stallWindow, c->name, sample->pressure->full->totalUsec, now);
        // The cap in force must be the guard's own: a throttle (level 2) or
        // a restore still under way manufactures the stall it would see.
        const auto guard = guards.find(c->name);
        const auto high = st.classHigh.find(c->name);
        const bool guardsOwn = st.level < 2 && guard != guards.end() &&
                               high != st.classHigh.end() &&
                               U128{high->second} + step >= guard->second;
        if (share < *config.classStallFull || !atCap(*sample) || !guardsOwn) {
            st.stallSince.erase(c->name);
            continue;
        }
        st.stallSince.try_emplace(c->name, now);
        shares[c->name] = AtCap{share, sample->memoryCurrent, sample->memoryHigh.value_or(0)};
    }
    if (!host.hurt()) {
        return; // a hog held at its cap harms nobody but itself
    }
    for (const ClassPolicy* c : ordered) {
        const auto share = shares.find(c->name);
        if (share == shares.end()) {
            continue;
        }
        const TimePoint since = st.stallSince.at(c->name);
        if (st.level >= kMaxPressureLevel || elapsed(now, since) < config.classStallDuration) {
            continue; // level 3 ranks every killable class itself
        }
        if (st.lastKill && now < *st.lastKill + config.killCooldown) {
            continue;
        }
        std::vector<Candidate> ranked = rankVictims(snapshot, classes, false);
        // Only a workload of this class that stalls itself: the class's top
        // victim may be idle while another (a neverKill VM) stalls.
        std::erase_if(ranked, [&](const Candidate& k) {
            const auto w = st.workloadStall.find(k.id);
            return k.className != c->name || w == st.workloadStall.end() ||
                   w->second.share < *config.classStallFull;
        });
        if (ranked.empty()) {
            continue;
        }
        KillWorkload k = killAction(snapshot, ranked.front(), ev, st.level);
        const AtCap& at = share->second;
        k.reason = StallKill{.share = at.share,
                             .threshold = *config.classStallFull,
                             .duration = elapsed(now, since),
                             .classUsage = at.usage,
                             .classCap = at.cap,
                             .host = host};
        k.numbers.emplace_back("class_full_stall_permyriad", psiPermyriad(at.share));
        k.numbers.emplace_back("class_stall_usec",
                               static_cast<std::uint64_t>(elapsed(now, since).count()));
        k.numbers.emplace_back("class_memory_current", at.usage);
        k.numbers.emplace_back("class_memory_high", at.cap);
        if (host.memShort) {
            k.numbers.emplace_back("host_mem_available", host.memShort->memAvailable);
        }
        if (!host.stalling.empty()) {
            k.numbers.emplace_back("protected_full_stall_permyriad",
                                   psiPermyriad(host.stallingShare));
        }
        k.numbers.emplace_back("workload_full_stall_permyriad",
                               psiPermyriad(st.workloadStall.at(ranked.front().id).share));
        d.consideredVictims = ranked.size() > kConsideredVictims
                                  ? std::vector<Candidate>(ranked.begin(),
                                                           ranked.begin() + kConsideredVictims)
                                  : ranked;
        d.actions.emplace_back(std::move(k));
        st.lastKill = now;
        return; // one kill per tick
    }
}

} // namespace

PressureOutcome decide(const Snapshot& snapshot, const PressureConfig& config,
                       const std::vector<ClassPolicy>& classes, const PressureState& state) {
    PressureOutcome out{.decisions = {}, .state = state};
    PressureState& st = out.state;
    Decisions& d = out.decisions;
    const TimePoint now = snapshot.now;
    st.level = std::min(st.level, kMaxPressureLevel);
    const Evaluation ev = evaluate(snapshot, config);

    for (std::uint32_t level = 1; level <= kMaxPressureLevel; ++level) {
        auto& since = st.aboveSince[level - 1];
        if (!ev.on(level)) {
            since.reset();
        } else if (!since) {
            since = now;
        }
    }
    std::uint32_t target = 0;
    for (std::uint32_t level = kMaxPressureLevel; level >= 1; --level) {
        const auto& since = st.aboveSince[level - 1];
        if (since && elapsed(now, *since) >= config.levels[level - 1].duration) {
            target = level;
            break;
        }
    }
    const bool atOnce = ev.exhausted && target < kMaxPressureLevel;
    if (atOnce) {
        target = kMaxPressureLevel;
    }

    const std::uint32_t before = st.level;
    if (target > st.level) {
        st.level = target;
        st.belowSince.reset();
        st.reason = LevelRose{.signals = onSignals(ev, target),
                              .duration = elapsed(now, *st.aboveSince[target - 1]),
                              .exhausted = atOnce};
    } else if (st.level > 0) {
        if (ev.held(st.level)) {
            st.belowSince.reset();
        } else {
            if (!st.belowSince) {
                st.belowSince = now;
            }
            const Usec calm = elapsed(now, *st.belowSince);
            if (calm >= config.recoveryDuration) {
                st.reason = LevelFell{.from = st.level,
                                      .hysteresis = config.hysteresis,
                                      .duration = calm,
                                      .readings = readingsOf(snapshot)};
                --st.level;
                // Each step down needs its own calm period.
                st.belowSince =
                    st.level > 0 && !ev.held(st.level) ? std::optional(now) : std::nullopt;
            }
        }
    }
    if (st.level != before) {
        d.actions.emplace_back(SetPressureLevel{.level = st.level, .reason = st.reason});
        d.reasons.emplace_back(LevelChanged{.from = before, .to = st.level, .reason = st.reason});
    }
    const bool open = st.level == 0;
    if (open != st.admissionOpen) {
        st.admissionOpen = open;
        d.actions.emplace_back(SetAdmission{.open = open});
        d.reasons.emplace_back(AdmissionChanged{.open = open, .level = st.level});
    }

    std::vector<const ClassPolicy*> ordered;
    ordered.reserve(classes.size());
    for (const auto& c : classes) {
        ordered.push_back(&c);
    }
    std::sort(ordered.begin(), ordered.end(), [](const ClassPolicy* a, const ClassPolicy* b) {
        return a->rank != b->rank ? a->rank < b->rank : a->name < b->name;
    });
    const Bytes page = snapshot.system.pageSize == 0 ? kDefaultPageSize : snapshot.system.pageSize;

    if (st.level >= 1) {
        for (const ClassPolicy* c : ordered) {
            const CgroupSample* sample = classSample(snapshot, c->name);
            // Only the guarded best-effort class: a protected or merely
            // reclaimable class keeps its pages to the kernel's own reclaim.
            if (!c->memoryGuard || !c->killable || sample == nullptr) {
                continue;
            }
            // A small step per tick: memory.reclaim of a large amount blocks
            // the writer and can overshoot into the working set.
            const Bytes bytes =
                pageFloor(U128{sample->memoryCurrent} * kReclaimStep / kPermyriadOne, page);
            if (bytes > 0) {
                d.actions.emplace_back(ReclaimClass{.className = c->name, .bytes = bytes});
            }
        }
    }
    const Bytes total = snapshot.system.mem.memTotal;
    const Bytes step = std::max(page, pageFloor(permyriadOf(total, kGuardStep), page));
    std::map<std::string, Bytes> guards;
    for (const ClassPolicy* c : ordered) {
        if (!c->memoryGuard) {
            continue;
        }
        const CgroupSample* sample = classSample(snapshot, c->name);
        if (sample != nullptr && total > 0) {
            const GuardCap g = guardCap(snapshot, config, classes, c->name, page);
            const Bytes guard = g.cap;
            guards[c->name] = guard;
            const auto prev = st.classHigh.find(c->name);
            CapClass cap{.className = c->name,
                         .memoryHigh = guard,
                         .why = CapClass::Why::Guard,
                         .guard = g,
                         .level = st.level,
                         .usage = sample->memoryCurrent,
                         .previous = prev != st.classHigh.end() ? prev->second : 0};
            if (st.level >= 2) {
                const Bytes floor = pageFloor(permyriadOf(total, kGuardFloor), page);
                const Bytes under = pageFloor(U128{sample->memoryCurrent} *
                                                  (kPermyriadOne - kThrottleCut) / kPermyriadOne,
                                              page);
                Bytes lowered = std::min(guard, std::max(floor, under));
                if (prev != st.classHigh.end()) {
                    lowered = std::min(lowered, prev->second);
                    // Within KillCooldown of a kill the cap holds: the kill's
                    // relief shows in PSI only as avg10 decays, and a cut to
                    // 95 % of what the survivors use would squeeze them for
                    // what the victim did.
                    if (st.lastKill && now < *st.lastKill + config.killCooldown) {
                        lowered = std::min(guard, prev->second);
                    }
                }
                if (lowered < guard) {
                    cap.memoryHigh = lowered;
                    cap.why = CapClass::Why::Throttle;
                }
            } else if (prev != st.classHigh.end() && prev->second + step < guard) {
                // Give the cap back by time, not per tick (ticks come 0.1 to
                // 1 s apart): at level 0 all at once, at level 1 kRestoreRate
                // of MemTotal per second since it was last set, at least a
                // step. Within a step of the guard's cap it stays where it is
                // (no write for less than a step).
                cap.why = CapClass::Why::Restore;
                if (st.level == 0) {
                    cap.memoryHigh = guard;
                } else {
                    const auto setAt = st.classHighAt.find(c->name);
                    const Usec since = setAt == st.classHighAt.end()
                                           ? kClassStallWindow
                                           : elapsed(now, setAt->second);
                    const Bytes perSecond = permyriadOf(total, kRestoreRate);
                    const Bytes climb = std::max(
                        step, pageFloor(detail::saturate(U128{perSecond} *
                                                         static_cast<std::uint64_t>(since.count()) /
                                                         1'000'000U),
                                        page));
                    cap.memoryHigh =
                        std::min(guard, detail::saturate(U128{prev->second} + climb));
                }
            }
            const bool moved =
                prev == st.classHigh.end() ||
                (cap.memoryHigh > prev->second ? cap.memoryHigh - prev->second
                                               : prev->second - cap.memoryHigh) >= step;
            if (moved) {
                st.classHigh[c->name] = cap.memoryHigh;
                d.actions.emplace_back(std::move(cap));
            }
            // The restore's clock: when the cap was last moved, or held by
            // a throttle (level 2 holds it however long it lasts).
            if (moved || st.level >= 2) {
                st.classHighAt[c->name] = now;
            }
        }
        if (st.level >= 2) {
            d.actions.emplace_back(ShrinkBalloons{.className = c->name});
        }
    }
    // A kill needs level 3's condition on now, not only held by hysteresis:
    // after a kill PSI's avg10 lags the relief by seconds, and the level
    // stays 3 until RecoveryDuration has passed; killing every cooldown
    // meanwhile took the survivors (VM case 55-precision, 2026-11-27).
    if (st.level >= kMaxPressureLevel && ev.on(kMaxPressureLevel)) {
        std::vector<Candidate> ranked = rankVictims(snapshot, classes, ev.swapTrigger);
        if (ranked.size() > kConsideredVictims) {
            ranked.resize(kConsideredVictims);
        }
        d.consideredVictims = ranked;
        const bool cooling = st.lastKill && now < *st.lastKill + config.killCooldown;
        if (ranked.empty()) {
            d.reasons.emplace_back(NoKillCandidate{});
        } else if (cooling) {
            d.reasons.emplace_back(KillCooldown{.left = *st.lastKill + config.killCooldown - now});
        } else {
            d.actions.emplace_back(killAction(snapshot, ranked.front(), ev, st.level));
            st.lastKill = now;
        }
    }
    // hostHurt (pressure.hpp): memory short by level 1's own measure, or a
    // protected cgroup stalls.
    const auto& t1 = config.levels[0];
    const MemInfo& mem = snapshot.system.mem;
    HostHurt host;
    if (t1.memAvailableBelow && mem.memTotal > 0 &&
        memAvailableBelow(mem, *t1.memAvailableBelow, kPermyriadOne).first) {
        host.memShort = MemAvailableSignal{.memAvailable = mem.memAvailable,
                                           .memTotal = mem.memTotal,
                                           .threshold = *t1.memAvailableBelow};
    }
    protectedStalls(snapshot, config, classes, st, host);
    classStallKills(snapshot, config, classes, ordered, ev, guards, step, host, st, d);
    // Never reclaim in a tick that kills: the reclaim would swap out pages of
    // the workload about to die, and delay the kill.
    if (hasKill(d.actions)) {
        std::erase_if(d.actions,
                      [](const Action& a) { return std::holds_alternative<ReclaimClass>(a); });
    }
    return out;
}

bool hasKill(const std::vector<Action>& actions) {
    return std::any_of(actions.begin(), actions.end(),
                       [](const Action& a) { return std::holds_alternative<KillWorkload>(a); });
}

} // namespace memqos::core

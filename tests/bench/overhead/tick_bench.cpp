// SPDX-License-Identifier: Apache-2.0
// Native tick benchmark (issue 25): memqosd's own Manager::tick — sampling,
// core::decide, core::decideProactive and the planning of what to do —
// against a generated cgroup and proc tree in tmpfs (/dev/shm), on this
// machine, no VM. systemd is the component tests' FakeSystemd (its answers
// run between ticks, outside the timing), the reclaim worker a fake that
// records the writes (they run between ticks too), no metrics file.
//
//   tick-bench [--workloads N] [--ticks T] [--dir DIR]
//
// Two phases of T ticks each, `now` advancing 1 s a tick ([Manager]
// Interval=1s):
//   steady    level 0, nothing building up (MemAvailable 60 % of MemTotal,
//             PSI 0);
//   watchful  a level building up: MemAvailable at 9 % of MemTotal (under
//             level 1's 10 %), every level's Duration set to an hour so the
//             ladder stays at 0 for the whole phase; no kill near, so the
//             killable workloads are not read every tick.
//   kill near level 3's condition building up (MemAvailable at 1 %, under
//             its 2 %), level still 0: every killable workload read every
//             tick (Manager::killNear).
//   steady, metrics every tick / every 10 s
//             the steady tick with [Manager] MetricsFile= set,
//             MetricsInterval=1s (the text formatted at every tick) and the
//             default 10s (formatted when something a script waits on
//             changed, or once in 10 ticks); the file itself is written by
//             memqosd's metrics thread, here a writer that keeps the size;
//   steady, [Reclaim] Enabled=no
//             the steady tick again without proactive reclaim (a reload),
//             to show what the rest of the tick costs;
//   steady, with the bus service
//             the steady tick with memqosd's BusService listening as in the
//             daemon (after each tick it compares its objects with the
//             workloads and, every BusService::kAnnounceTicks ticks, every
//             PropertiesChanged value): on a bus that is never connected, so
//             what it would send fails at once (nothing changes in this
//             phase, so nothing is sent in the daemon either).
// Light ticks (Manager::lightTick: at level 0 with nothing building up,
// the workloads' part of a tick runs once per reclaim interval's worth of
// ticks) are counted in each phase of the kept-fds run and printed after
// the table: a phase's mean mixes light and whole ticks.
// Prints µs per tick: mean, p50, p99, max, for each phase, twice: the
// workloads' cgroup files opened and closed at each read (the peer), and
// read through kept fds as memqosd does (service.cpp). Half the
// workloads are in class shared, half in reclaimed (both killable,
// Reclaim=yes), each a service with one process.
#include "bus_service.hpp"
#include "fake_systemd.hpp"
#include "manager.hpp"

#include "memqos/io/bus.hpp"
#include "memqos/io/log.hpp"
#include "memqos/io/metrics_writer.hpp"
#include "memqos/io/reclaim_worker.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace fs = std::filesystem;
using namespace memqos;

namespace {

// Raises the soft open file limit to at least `want` (up to the hard one).
void raiseFdLimit(std::size_t want) {
    rlimit rl{};
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
        rl.rlim_cur = std::min<rlim_t>(rl.rlim_max, want);
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

// 256 GiB: the workloads (1000 × 100 MiB, 97.7 GiB) fit under the memory guard,
// which at 64 GiB (before 2026-12-05 22:30) reclaimed a class at every tick.
constexpr Bytes kMemTotalKiB = 256ULL * 1024 * 1024;

void writeFile(const fs::path& p, std::string_view text) {
    std::ofstream out(p);
    out << text;
}

std::string meminfo(Bytes availableKiB) {
    const Bytes total = kMemTotalKiB;
    return "MemTotal:       " + std::to_string(total) + " kB\n" +
           "MemFree:        " + std::to_string(availableKiB / 2) + " kB\n" +
           "MemAvailable:   " + std::to_string(availableKiB) + " kB\n" +
           "Buffers:          102400 kB\n"
           "Cached:          8388608 kB\n"
           "SwapCached:            0 kB\n"
           "Active:         20971520 kB\n"
           "Inactive:        8388608 kB\n"
           "SwapTotal:       8388608 kB\n"
           "SwapFree:        8388608 kB\n"
           "Dirty:               128 kB\n"
           "Writeback:             0 kB\n"
           "AnonPages:      20971520 kB\n"
           "Mapped:           524288 kB\n"
           "Shmem:             65536 kB\n"
           "Slab:             524288 kB\n"
           "PageTables:        65536 kB\n"
           "CommitLimit:    41943040 kB\n"
           "Committed_AS:   41943040 kB\n"
           "HugePages_Total:       0\n"
           "Hugepagesize:       2048 kB\n";
}

constexpr std::string_view kPressure = "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                                       "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";

std::string memoryStat() {
    static const char* keys[] = {
        "anon", "file", "kernel", "kernel_stack", "pagetables", "sec_pagetables", "percpu", "sock",
        "vmalloc", "shmem", "zswap", "zswapped", "file_mapped", "file_dirty", "file_writeback",
        "swapcached", "anon_thp", "file_thp", "shmem_thp", "inactive_anon", "active_anon",
        "inactive_file", "active_file", "unevictable", "slab_reclaimable", "slab_unreclaimable",
        "slab", "workingset_refault_anon", "workingset_refault_file", "workingset_activate_anon",
        "workingset_activate_file", "workingset_restore_anon", "workingset_restore_file",
        "workingset_nodereclaim", "pgscan", "pgsteal", "pgscan_kswapd", "pgscan_direct",
        "pgsteal_kswapd", "pgsteal_direct", "pgfault", "pgmajfault", "pgrefill", "pgactivate",
        "pgdeactivate", "pglazyfree", "pglazyfreed", "thp_fault_alloc", "thp_collapse_alloc"};
    std::string out;
    std::uint64_t i = 0;
    for (const char* k : keys) {
        out += k;
        out += ' ';
        out += std::to_string(4096 * i++);
        out += '\n';
    }
    return out;
}

// The files memqosd may read or write of a cgroup (what the kernel has).
void makeCgroup(const fs::path& dir, Bytes current, const std::string& procs) {
    fs::create_directories(dir);
    static const std::string stat = memoryStat();
    writeFile(dir / "memory.current", std::to_string(current) + "\n");
    writeFile(dir / "memory.min", "0\n");
    writeFile(dir / "memory.low", "0\n");
    writeFile(dir / "memory.high", "max\n");
    writeFile(dir / "memory.max", "max\n");
    writeFile(dir / "memory.swap.current", "0\n");
    writeFile(dir / "memory.swap.max", "max\n");
    writeFile(dir / "memory.pressure", kPressure);
    writeFile(dir / "memory.stat", stat);
    writeFile(dir / "memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n");
    writeFile(dir / "memory.oom.group", "1\n");
    writeFile(dir / "memory.reclaim", "");
    writeFile(dir / "cgroup.procs", procs);
}

std::string zoneinfo() {
    std::string out;
    for (const char* zone : {"DMA", "DMA32", "Normal"}) {
        out += "Node 0, zone ";
        out += zone;
        out += "\n  pages free     4000000\n        boost    0\n        min      11000\n"
               "        low      13750\n        high     16500\n        spanned  16777216\n"
               "        present  16777216\n        managed  16000000\n";
        for (int cpu = 0; cpu < 2; ++cpu) {
            out += "  pagesets\n    cpu: " + std::to_string(cpu) +
                   "\n              count: 10\n              high:  378\n"
                   "              batch: 63\n  vm stats threshold: 48\n";
        }
        out += "  node_unreclaimable:  0\n  start_pfn:           1\n";
    }
    return out;
}

std::string vmstat() {
    std::string out;
    for (int i = 0; i < 170; ++i) {
        out += "counter_" + std::to_string(i) + " " + std::to_string(i * 1000) + "\n";
    }
    out += "pgscan_kswapd 0\npgscan_direct 0\npgsteal_kswapd 0\npgsteal_direct 0\n";
    return out;
}

struct Tree {
    fs::path root;
    fs::path cgroup;
    fs::path proc;
};

// Workload i (from 0): its unit and its cgroup path under the root, in the
// shared class for even i and the reclaimed class for odd i.
struct BenchUnit {
    std::string unit;
    std::string cgroup;
};
BenchUnit benchUnit(std::size_t i) {
    std::string unit = "ovh@" + std::to_string(i + 1) + ".service";
    std::string cgroup = io::unitCgroupPath(i % 2 == 0 ? "shared" : "reclaimed", unit);
    return {std::move(unit), std::move(cgroup)};
}

// Each workload's memory.current: above the reclaim floor, so proactive
// reclaim steps every workload once an interval.
constexpr Bytes kWorkloadUsage = 100 * kMiB;

Tree makeTree(const fs::path& base, std::size_t workloads) {
    std::string tmpl = (base / "memqos-tick-bench.XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
        std::perror("mkdtemp");
        std::exit(2);
    }
    Tree t{tmpl, fs::path(tmpl) / "cgroup", fs::path(tmpl) / "proc"};
    fs::create_directories(t.cgroup);
    writeFile(t.cgroup / "cgroup.controllers", "cpuset cpu io memory pids\n");
    makeCgroup(t.cgroup / "system.slice", 2 * kGiB, "");
    makeCgroup(t.cgroup / "machine.slice", 0, "");
    makeCgroup(t.cgroup / "memqos.slice", 100 * kGiB / 10, "");
    for (const char* cls : {"system", "dedicated", "shared", "reclaimed"}) {
        makeCgroup(t.cgroup / io::classSlicePath(cls), std::string_view(cls) == "shared" ||
                                                               std::string_view(cls) == "reclaimed"
                                                           ? workloads / 2 * 100 * kMiB
                                                           : 0,
                   "");
    }
    fs::create_directories(t.proc / "pressure");
    writeFile(t.proc / "meminfo", meminfo(kMemTotalKiB * 6 / 10));
    writeFile(t.proc / "pressure/memory", kPressure);
    writeFile(t.proc / "vmstat", vmstat());
    writeFile(t.proc / "zoneinfo", zoneinfo());
    writeFile(t.proc / "swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
                                "/swapfile                               file\t\t8388604\t\t0\t\t-2\n");
    for (std::size_t i = 0; i < workloads; ++i) {
        const int pid = 10000 + static_cast<int>(i);
        makeCgroup(t.cgroup / benchUnit(i).cgroup, kWorkloadUsage,
                   std::to_string(pid) + "\n");
        const auto pdir = t.proc / std::to_string(pid);
        fs::create_directories(pdir);
        writeFile(pdir / "stat", std::to_string(pid) +
                                     " (sleep) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0\n");
        writeFile(pdir / "oom_score_adj", "0\n");
    }
    return t;
}

// The reclaim worker's place: records each write and answers between
// ticks, as the real worker posts its outcome back to the loop.
class FakeRunner : public io::ReclaimRunner {
public:
    void reclaim(const std::string& /*cgroup*/, Bytes bytes, Done done) override {
        ++writes;
        pending_.push_back([bytes, done = std::move(done)] {
            done(io::ReclaimResult{io::Reclaimed::Full, bytes});
        });
    }
    void cancel(const std::string& /*cgroup*/) override {}
    void flush() {
        while (!pending_.empty()) {
            auto f = std::move(pending_.front());
            pending_.pop_front();
            f();
        }
    }
    std::size_t writes = 0;

private:
    std::deque<std::function<void()>> pending_;
};

// The metrics thread's place: the text handed over, not written.
class CountingMetricsWriter : public io::MetricsWriter {
public:
    void write(std::filesystem::path /*file*/, std::string text, Done /*done*/) override {
        ++writes;
        bytes = text.size();
    }
    void forget(const std::filesystem::path& /*file*/) override {}
    std::size_t writes = 0;
    std::size_t bytes = 0;
};

struct Stats {
    double mean = 0, p50 = 0, p99 = 0, max = 0;
};

Stats stats(std::vector<double> us) {
    Stats s;
    if (us.empty()) {
        return s;
    }
    std::sort(us.begin(), us.end());
    double sum = 0;
    for (double v : us) {
        sum += v;
    }
    s.mean = sum / static_cast<double>(us.size());
    const auto at = [&](double q) {
        auto i = static_cast<std::size_t>(q * static_cast<double>(us.size() - 1) + 0.5);
        return us[std::min(i, us.size() - 1)];
    };
    s.p50 = at(0.50);
    s.p99 = at(0.99);
    s.max = us.back();
    return s;
}

bool parseCount(const char* text, std::size_t& out) {
    const std::string_view v(text);
    const auto r = std::from_chars(v.data(), v.data() + v.size(), out);
    return r.ec == std::errc{} && r.ptr == v.data() + v.size();
}

} // namespace

int main(int argc, char** argv) {
    std::size_t workloads = 1000;
    std::size_t ticks = 300;
    fs::path base = "/dev/shm";
    for (int i = 1; i < argc; ++i) {
        const std::string_view a(argv[i]);
        const bool hasValue = i + 1 < argc;
        if (a == "--workloads" && hasValue && parseCount(argv[i + 1], workloads)) {
            ++i;
        } else if (a == "--ticks" && hasValue && parseCount(argv[i + 1], ticks) && ticks > 0) {
            ++i;
        } else if (a == "--dir" && hasValue) {
            base = argv[++i];
        } else {
            std::fprintf(stderr, "usage: tick-bench [--workloads N] [--ticks T] [--dir DIR]\n");
            return 2;
        }
    }
    log::setMinimumLevel(log::Level::Warning);
    const Tree tree = makeTree(base, workloads);

    // The fds kept for the workloads' files (service.cpp): 3 files each.
    raiseFdLimit(workloads * 3 + 1024);
    int rc = 0;
    struct Phases {
        Stats steady, watchful, near, small, quiet, metricsEvery, metricsInterval, bus;
        std::size_t metricsEveryWrites = 0, metricsIntervalWrites = 0, metricsBytes = 0;
        std::size_t steadyWrites = 0;
        std::size_t smallWrites = 0;
        std::uint32_t steadyLevel = 0, watchfulLevel = 0, nearLevel = 0;
        std::size_t keptFds = 0;
        // Light ticks (Manager::lightTick: the workloads' part skipped) in
        // the steady, watchful, kill near, small services, Enabled=no and
        // bus phases.
        std::array<std::uint64_t, 6> light{};
        // Ticks that kept the snapshot but ran proactive reclaim's pass (it
        // was behind), in the same phases.
        std::array<std::uint64_t, 6> keptSnapshot{};
        bool ok = true;
    };
    // One Manager over the tree, its workloads' files read through at most
    // `fdCapacity` kept fds (0: open, read, close each time).
    const auto measure = [&](std::size_t fdCapacity) {
        Phases out;
        writeFile(tree.proc / "meminfo", meminfo(kMemTotalKiB * 6 / 10));
        config::Config config;
        for (auto& l : config.pressure.levels) {
            l.duration = std::chrono::hours(1); // conditions build up, no level is reached
        }
        test::FakeSystemd systemd;
        for (std::size_t i = 0; i < workloads; ++i) {
            const BenchUnit u = benchUnit(i);
            systemd.addUnit(u.unit, "/" + u.cgroup);
        }
        io::StateStore store{fs::path("/nonexistent"), fs::path("/nonexistent")};
        io::InstanceStore instances{fs::path("/nonexistent")};
        io::EventStore kills{fs::path("/nonexistent/kills")};
        FakeRunner runner;
        io::CgroupFs cgroups(tree.cgroup);
        cgroups.keepWorkloadFiles(fdCapacity);
        daemon::Manager m(
            config, [&] { return Result<config::Config>(config); }, systemd, store, instances,
            kills, std::move(cgroups), io::ProcFs(tree.proc), false);
        m.setReclaimRunner(&runner);
        CountingMetricsWriter metrics;
        m.setMetricsWriter(&metrics);
        bool ready = false;
        m.start([&](Status st) { ready = st.ok(); });
        systemd.flush();
        if (!ready || m.workloads().size() != workloads) {
            std::fprintf(stderr, "tick-bench: start failed or %zu of %zu workloads managed\n",
                         m.workloads().size(), workloads);
            out.ok = false;
        }
        TimePoint now(std::chrono::seconds(1000));
        // A phase's ticks, counting its light ones into out.light[which].
        const auto phase = [&](std::size_t which, const auto& run, std::size_t n) {
            const auto before = m.lightTickCount();
            const auto keptBefore = m.keptTickCount();
            Stats st = stats(run(n));
            out.light[which] = m.lightTickCount() - before;
            out.keptSnapshot[which] = m.keptTickCount() - keptBefore;
            return st;
        };
        const auto run = [&](std::size_t n) {
            std::vector<double> us;
            us.reserve(n);
            for (std::size_t i = 0; i < n; ++i) {
                now += std::chrono::seconds(1);
                const auto t0 = std::chrono::steady_clock::now();
                m.tick(now);
                const auto t1 = std::chrono::steady_clock::now();
                us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
                systemd.flush();
                runner.flush();
            }
            return us;
        };
        run(20); // warm-up: first sweep, oom_score_adj, proactive baselines
        const std::size_t writesBefore = runner.writes;
        out.steady = phase(0, run, ticks);
        out.steadyWrites = runner.writes - writesBefore;
        out.steadyLevel = m.pressureLevel();
        out.keptFds = m.keptWorkloadFiles();
        // The same with the metrics file: formatted every tick, then at the
        // default MetricsInterval.
        for (const auto seconds : {1, 10}) {
            config.manager.metricsFile = (tree.root / "memqos.prom").string();
            config.manager.metricsInterval = std::chrono::seconds(seconds);
            if (!m.reload().ok()) {
                std::fprintf(stderr, "tick-bench: reload failed\n");
                out.ok = false;
            }
            systemd.flush();
            run(20);
            const std::size_t before = metrics.writes;
            (seconds == 1 ? out.metricsEvery : out.metricsInterval) = stats(run(ticks));
            (seconds == 1 ? out.metricsEveryWrites : out.metricsIntervalWrites) =
                metrics.writes - before;
        }
        out.metricsBytes = metrics.bytes;
        config.manager.metricsFile.clear();
        if (!m.reload().ok()) {
            out.ok = false;
        }
        systemd.flush();
        writeFile(tree.proc / "meminfo", meminfo(kMemTotalKiB * 9 / 100));
        run(2); // the condition starts building up
        out.watchful = phase(1, run, ticks);
        out.watchfulLevel = m.pressureLevel();
        // A kill near: level 3's condition (MemAvailable under 2 %) building
        // up, so every killable workload is read at every tick.
        writeFile(tree.proc / "meminfo", meminfo(kMemTotalKiB * 1 / 100));
        run(2);
        out.near = phase(2, run, ticks);
        out.nearLevel = m.pressureLevel();
        // Small services (the VM benchmark's sleep units): every workload at
        // its reclaim floor, looked at by its usage alone.
        writeFile(tree.proc / "meminfo", meminfo(kMemTotalKiB * 6 / 10));
        const auto setUsage = [&](Bytes current) {
            for (std::size_t i = 0; i < workloads; ++i) {
                writeFile(tree.cgroup / benchUnit(i).cgroup / "memory.current",
                          std::to_string(current) + "\n");
            }
        };
        setUsage(Bytes{1} << 20U);
        run(20); // every workload's interval over at least once: at its floor
        const std::size_t smallBefore = runner.writes;
        out.small = phase(3, run, ticks);
        out.smallWrites = runner.writes - smallBefore;
        setUsage(kWorkloadUsage); // as makeTree left it, for the next measure()
        // The rest of the tick: steady again, proactive reclaim off.
        config.reclaim.enabled = false;
        if (!m.reload().ok()) {
            std::fprintf(stderr, "tick-bench: reload failed\n");
            out.ok = false;
        }
        systemd.flush();
        run(20);
        out.quiet = phase(4, run, ticks);
        // The bus service's part of a tick (Listener::ticked): the steady
        // tick, proactive reclaim on again, with and then without it.
        config.reclaim.enabled = true;
        if (!m.reload().ok()) {
            out.ok = false;
        }
        systemd.flush();
        {
            sd_bus* raw = nullptr;
            if (sd_bus_new(&raw) < 0) {
                out.ok = false;
            } else {
                io::BusPtr bus(raw);
                boost::asio::io_context io;
                io::BusPump pump(io, bus.get());
                daemon::BusService service(bus.get(), pump, m);
                m.setListener(&service);
                run(20);
                out.bus = phase(5, run, ticks);
                m.setListener(nullptr);
            }
        }
        if (out.steadyLevel != 0 || out.watchfulLevel != 0 || out.nearLevel != 0) {
            std::fprintf(stderr, "tick-bench: the ladder left level 0\n");
            out.ok = false;
        }
        return out;
    };
    // The peer in the same run: the same code with the workloads' files
    // opened and closed at each read (before issue 25 item 3 for them).
    const Phases opened = measure(0);
    const Phases kept = measure(workloads * 3);
    std::printf("memqosd tick, native, %zu workloads (%zu shared + %zu reclaimed), %zu ticks a "
                "phase, tree in %s (tmpfs, not cgroupfs)\n",
                workloads, (workloads + 1) / 2, workloads / 2, ticks, base.c_str());
    std::printf("| tick | workload files | mean µs | p50 µs | p99 µs | max µs |\n");
    std::printf("| --- | --- | ---: | ---: | ---: | ---: |\n");
    for (const auto* p : {&opened, &kept}) {
        const char* how = p == &opened ? "opened each read" : "kept fds";
        std::printf("| steady (level %u) | %s | %.0f | %.0f | %.0f | %.0f |\n", p->steadyLevel,
                    how, p->steady.mean, p->steady.p50, p->steady.p99, p->steady.max);
        std::printf("| steady, MetricsFile written every tick | %s | %.0f | %.0f | %.0f | %.0f |\n",
                    how, p->metricsEvery.mean, p->metricsEvery.p50, p->metricsEvery.p99,
                    p->metricsEvery.max);
        std::printf("| steady, MetricsFile, MetricsInterval=10s | %s | %.0f | %.0f | %.0f | "
                    "%.0f |\n",
                    how, p->metricsInterval.mean, p->metricsInterval.p50, p->metricsInterval.p99,
                    p->metricsInterval.max);
        std::printf("| watchful (level %u, level 1 building up) | %s | %.0f | %.0f | %.0f | %.0f |\n",
                    p->watchfulLevel, how, p->watchful.mean, p->watchful.p50, p->watchful.p99,
                    p->watchful.max);
        std::printf("| kill near (level %u, level 3 building up) | %s | %.0f | %.0f | %.0f | %.0f |\n",
                    p->nearLevel, how, p->near.mean, p->near.p50, p->near.p99, p->near.max);
        std::printf("| steady, small services (all at their reclaim floor) | %s | %.0f | %.0f | "
                    "%.0f | %.0f |\n",
                    how, p->small.mean, p->small.p50, p->small.p99, p->small.max);
        std::printf("| steady, [Reclaim] Enabled=no | %s | %.0f | %.0f | %.0f | %.0f |\n", how,
                    p->quiet.mean, p->quiet.p50, p->quiet.p99, p->quiet.max);
        std::printf("| steady, with the bus service | %s | %.0f | %.0f | %.0f | %.0f |\n", how,
                    p->bus.mean, p->bus.p50, p->bus.p99, p->bus.max);
    }
    std::printf("memory.reclaim writes planned in the steady phase: %zu (%.1f a tick); "
                "workload fds kept after it: %zu\n",
                kept.steadyWrites, static_cast<double>(kept.steadyWrites) /
                                       static_cast<double>(ticks), kept.keptFds);
    std::printf("memory.reclaim writes planned with the small services: %zu\n", kept.smallWrites);
    // A count for each phase of the kept-fds run.
    const auto perPhase = [&](const char* what, const std::array<std::uint64_t, 6>& n) {
        std::printf("%s of %zu a phase: steady %llu, watchful %llu, kill near %llu, small services "
                    "%llu, Enabled=no %llu, bus %llu\n",
                    what, ticks, static_cast<unsigned long long>(n[0]),
                    static_cast<unsigned long long>(n[1]), static_cast<unsigned long long>(n[2]),
                    static_cast<unsigned long long>(n[3]), static_cast<unsigned long long>(n[4]),
                    static_cast<unsigned long long>(n[5]));
    };
    perPhase("light ticks (the workloads' part skipped; kept fds)", kept.light);
    perPhase("ticks that kept the snapshot but ran proactive reclaim's pass (it was behind)",
             kept.keptSnapshot);
    std::printf("metrics texts handed to the writer in %zu ticks: %zu every tick, %zu at "
                "MetricsInterval=10s; %zu bytes each\n",
                ticks, kept.metricsEveryWrites, kept.metricsIntervalWrites, kept.metricsBytes);
    if (!opened.ok || !kept.ok) {
        rc = 1;
    }
    std::error_code ec;
    fs::remove_all(tree.root, ec);
    return rc;
}

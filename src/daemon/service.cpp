// SPDX-License-Identifier: Apache-2.0
#include "service.hpp"

#include "bus_service.hpp"
#include "manager.hpp"
#include "status_notifier.hpp"

#include "memqos/config/values.hpp"
#include "memqos/core/psi_triggers.hpp"
#include "memqos/io/bus.hpp"
#include "memqos/io/config_loader.hpp"
#include "memqos/io/event_store.hpp"
#include "memqos/io/hmp_ganeti_kvm.hpp"
#include "memqos/io/libvirt_hypervisor.hpp"
#include "memqos/io/file.hpp"
#include "memqos/io/log.hpp"
#include "memqos/io/psi_trigger.hpp"
#include "memqos/io/state_store.hpp"
#include "memqos/io/systemd_dbus.hpp"
#include "memqos/parse/text.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <sys/resource.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace memqos::daemon {
namespace {

// The configuration as the daemon reads it: warnings logged, errors fatal,
// command-line roots applied over the file's.
Result<config::Config> readConfig(const Options& o, bool logWarnings) {
    io::LoadOptions lo;
    if (o.configFile) {
        lo.mainFile = *o.configFile;
    }
    lo.dropIns = o.dropIns;
    auto loaded = io::loadConfig(lo);
    std::string errors;
    for (const auto& p : loaded.validated.problems) {
        if (p.severity == config::Severity::Error) {
            errors += (errors.empty() ? "" : "; ") + p.format();
        } else if (logWarnings) {
            log::warning("{PROBLEM}", "PROBLEM", p.format());
        }
    }
    if (!errors.empty()) {
        return invalid(errors);
    }
    auto cfg = loaded.validated.config;
    if (o.cgroupRoot) {
        cfg.manager.cgroupRoot = *o.cgroupRoot;
    }
    if (o.procRoot) {
        cfg.manager.procRoot = *o.procRoot;
    }
    if (o.stateDir) {
        cfg.manager.stateDirectory = *o.stateDir;
    }
    return cfg;
}

// systemd-oomd's rule: say plainly what the host lacks, then stop.
Status checkHost(const config::Config& cfg) {
    const std::filesystem::path controllers =
        std::filesystem::path(cfg.manager.cgroupRoot) / "cgroup.controllers";
    auto text = io::readFile(controllers);
    if (!text) {
        return invalid("no cgroup v2 hierarchy at " + cfg.manager.cgroupRoot + " (" +
                       text.error().what + "); boot with systemd.unified_cgroup_hierarchy=1");
    }
    if (text->find("memory") == std::string::npos) {
        return invalid("the cgroup v2 memory controller is not enabled at " +
                       cfg.manager.cgroupRoot);
    }
    const std::filesystem::path psi = std::filesystem::path(cfg.manager.procRoot) / "pressure/memory";
    if (auto p = io::readFile(psi); !p) {
        return invalid("no PSI (" + p.error().what + "); boot with psi=1");
    }
    return okStatus();
}

TimePoint monotonicNow() {
    return std::chrono::duration_cast<TimePoint>(
        std::chrono::steady_clock::now().time_since_epoch());
}

std::filesystem::path runtimeDirectory(const Options& o, const config::Config& cfg) {
    if (o.runtimeDir) {
        return *o.runtimeDir;
    }
    if (o.stateDir) {
        // Tests give one directory: keep the runtime copies beside it.
        return std::filesystem::path(cfg.manager.stateDirectory) / "runtime";
    }
    if (const char* rd = std::getenv("RUNTIME_DIRECTORY"); rd != nullptr && *rd == '/') {
        return rd;
    }
    return "/run/memqos";
}

// Every class slice's memory.pressure takes one descriptor per PSI trigger:
// with a thousand classes that is past the soft limit of 1024 systemd gives
// services ("Too many open files", and then every other open fails too).
// memqosd uses poll/epoll only, never select(), so the hard limit is safe.
void raiseDescriptorLimit() {
    rlimit rl{};
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        const rlim_t before = rl.rlim_cur;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) == 0) {
            log::debug("Raised the open file limit from {BEFORE} to {AFTER}", "BEFORE", before,
                       "AFTER", rl.rlim_cur);
        }
    }
}

// How many fds the workloads' kept cgroup files may take (issue 25 item 3:
// a tick's pread on a kept fd instead of open, read, close): half of the
// open file limit, at most 3 files of 8192 workloads; none under a limit of
// 4096 or less (the fds are then left to the class slices' PSI triggers).
std::size_t workloadFdBudget() {
    rlimit rl{};
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur <= 4096) {
        return 0;
    }
    constexpr std::size_t kMax = std::size_t{3} * 8192;
    const rlim_t half = rl.rlim_cur == RLIM_INFINITY ? kMax : rl.rlim_cur / 2;
    return std::min<std::size_t>(kMax, static_cast<std::size_t>(half));
}

} // namespace

int runService(const Options& options) {
    raiseDescriptorLimit();
    auto cfg = readConfig(options, true);
    if (!cfg) {
        log::error("Invalid configuration: {ERROR}", "ERROR", cfg.error().what);
        return kExitConfig;
    }
    if (auto st = checkHost(*cfg); !st) {
        log::error("Cannot run: {ERROR}", "ERROR", st.error().what);
        return kExitUnavailable;
    }
    auto bus = io::openBus(options.busAddress, "memqosd");
    if (!bus) {
        log::error("{ERROR}", "ERROR", bus.error().what);
        return kExitUnavailable;
    }

    boost::asio::io_context io;
    io::BusPump pump(io, bus->get());
    io::SystemdDbus systemd(bus->get(), pump);
    const std::filesystem::path stateDir = cfg->manager.stateDirectory;
    io::StateStore store(stateDir / "assignments", runtimeDirectory(options, *cfg) / "assignments");
    io::InstanceStore instanceStore(stateDir / "instances");
    io::OriginalStore originalStore(stateDir / "originals");
    // Pids do not outlive a boot: what processes had in oom_score_adj is
    // kept under the runtime directory, which a reboot clears.
    io::OomStore oomStore(runtimeDirectory(options, *cfg) / "oom-scores");
    io::EventStore events(stateDir / "kills");
    for (const auto& p : events.load().problems) {
        log::warning("Ignoring a record of the kill history: {ERROR}", "ERROR", p);
    }
    io::CgroupFs cgroups(cfg->manager.cgroupRoot);
    cgroups.keepWorkloadFiles(workloadFdBudget());
    Manager manager(
        *cfg, [&options] { return readConfig(options, true); }, systemd, store, instanceStore,
        events, std::move(cgroups), io::ProcFs(cfg->manager.procRoot), options.dryRun);
    // libvirt: its own event thread and worker (LibvirtHypervisor). A
    // change of [VM] LibvirtURI takes effect at the next start.
    std::unique_ptr<io::LibvirtHypervisor> libvirt;
    if (!cfg->vm.libvirtUri.empty()) {
        libvirt = std::make_unique<io::LibvirtHypervisor>(io, cfg->vm.libvirtUri);
        manager.setHypervisor(libvirt.get());
    }
    // Ganeti's KVM instances (nothing to find where Ganeti is not installed).
    io::HmpGanetiKvm ganetiKvm(io);
    manager.setGanetiKvm(&ganetiKvm);
    manager.setOriginalStore(&originalStore);
    // systemd's runtime drop-ins; a test that gives its own directories
    // (--state-dir, --runtime-dir) gets a directory of its own beside them,
    // never the host's.
    if (options.runtimeDir || options.stateDir) {
        manager.setRuntimeDropInDir(runtimeDirectory(options, *cfg) / "system.control",
                                    runtimeDirectory(options, *cfg) / "transient");
    }
    // A record of a unit's own values from another boot is not trusted (the
    // runtime drop-ins it guarded went with that boot).
    if (auto boot = io::readFile("/proc/sys/kernel/random/boot_id", 128)) {
        std::string id(parse::text::trimText(*boot));
        manager.setBootId(id);
    } else {
        log::warning("Cannot read this boot's id: {ERROR}; records of units' own memory "
                     "properties are trusted without it",
                     "ERROR", boot.error().what);
    }
    manager.setOomStore(&oomStore);
    // Proactive reclaim's memory.reclaim writes block while the kernel
    // reclaims: on a thread of their own.
    io::ReclaimWorker reclaimWorker(io, cfg->manager.cgroupRoot);
    manager.setReclaimRunner(&reclaimWorker);
    // The state records' durable writes (two fsyncs each): on a thread of
    // their own, in call order; a call that stores something is answered
    // once it is on disk.
    io::StateWorker stateWorker(io);
    manager.setStateWriter(&stateWorker);
    // The metrics file too: a slow or stuck disk must not hold up the tick.
    io::MetricsWorker metricsWorker(io);
    manager.setMetricsWriter(&metricsWorker);
    BusService service(bus->get(), pump, manager);
    if (auto st = service.start(); !st) {
        log::error("{ERROR}", "ERROR", st.error().what);
        return kExitUnavailable;
    }
    pump.start();

    int exitCode = kExitOk;
    StatusNotifier notifier([](const std::string& s) { sd_notify(0, s.c_str()); });
    auto status = [&manager, &notifier] {
        notifier.update(manager.workloads().size(), manager.pressureLevel());
    };

    // Ticks: every Interval (the floor), and at once when a PSI trigger
    // fires, but never closer than kMinTickGap to the previous one.
    constexpr auto kMinTickGap = std::chrono::milliseconds(100);
    bool stopping = false; // SIGTERM: giving back, then stopping; no more ticks
    boost::asio::steady_timer tickTimer(io);
    std::chrono::steady_clock::time_point lastTick{};
    std::function<void()> retryTriggers; // set below; needs `triggers`
    std::function<void(std::chrono::steady_clock::time_point)> armTick =
        [&](std::chrono::steady_clock::time_point when) {
            tickTimer.expires_at(when); // cancels a pending wait
            tickTimer.async_wait([&](const boost::system::error_code& ec) {
                if (ec || stopping) {
                    return;
                }
                lastTick = std::chrono::steady_clock::now();
                manager.tick(monotonicNow());
                status();
                retryTriggers();
                armTick(lastTick + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                       manager.config().manager.interval));
            });
        };
    auto scheduleTick = [&] {
        armTick(std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    manager.config().manager.interval));
    };
    io::PsiTriggers triggers(io, [&] {
        const auto when = std::max(std::chrono::steady_clock::now(), lastTick + kMinTickGap);
        if (tickTimer.expiry() > when) {
            manager.triggeredTick();
            armTick(when);
        }
    });
    // Triggers on the system PSI file and every class slice's memory.pressure.
    // A file the kernel refuses is said once (per daemon lifetime) and then
    // only polled, until the next registration (start, SIGHUP) tries again. A
    // class slice that does not exist yet (not started, or removed: its
    // triggers end with POLLERR) is normal: it is tried again after each tick.
    std::vector<core::TriggerSpec> triggerSpecs;
    std::vector<std::filesystem::path> triggerFiles; // [0] is the system file
    std::set<std::filesystem::path> refusedFiles;    // until the next registration
    std::set<std::filesystem::path> missingFiles;    // said once at debug level
    std::set<std::filesystem::path> warnedFiles;     // for the daemon's lifetime
    auto watchTriggers = [&](const std::filesystem::path& f, bool classSlice) {
        auto st = triggers.watch(f, triggerSpecs);
        if (st) {
            missingFiles.erase(f);
            return true;
        }
        if (classSlice && io::isVanished(st.error())) {
            if (missingFiles.insert(f).second) {
                log::debug("No PSI trigger on {FILE} yet: {ERROR}", "FILE", f.string(), "ERROR",
                           st.error().what);
            }
            return false;
        }
        refusedFiles.insert(f);
        // `what` is "<file>: <reason>"; the message names the file already.
        std::string reason = st.error().what;
        if (const std::string prefix = f.string() + ": "; reason.starts_with(prefix)) {
            reason.erase(0, prefix.size());
        }
        if (warnedFiles.insert(f).second) {
            log::warning("PSI trigger on {FILE} refused: {ERROR}; falling back to polling every "
                         "{INTERVAL}",
                         "FILE", f.string(), "ERROR", reason, "INTERVAL",
                         config::formatDuration(manager.config().manager.interval));
        } else {
            log::debug("PSI trigger on {FILE} refused again: {ERROR}", "FILE", f.string(), "ERROR",
                       reason);
        }
        return false;
    };
    retryTriggers = [&] {
        for (std::size_t i = 1; i < triggerFiles.size(); ++i) {
            const auto& f = triggerFiles[i];
            if (!triggers.watching(f) && refusedFiles.count(f) == 0) {
                watchTriggers(f, true);
            }
        }
    };
    auto registerTriggers = [&] {
        triggers.clear();
        refusedFiles.clear();
        const auto& c = manager.config();
        triggerSpecs = core::psiTriggers(c.pressure);
        triggerFiles.clear();
        if (triggerSpecs.empty()) {
            log::info("No PSI triggers: no SomeAvg10/FullAvg10 threshold is set");
            return;
        }
        triggerFiles.push_back(std::filesystem::path(c.manager.procRoot) / "pressure/memory");
        for (const auto& cls : c.classes) {
            triggerFiles.push_back(std::filesystem::path(c.manager.cgroupRoot) /
                                   io::classSlicePath(cls.name) / "memory.pressure");
        }
        std::size_t watched = 0;
        for (std::size_t i = 0; i < triggerFiles.size(); ++i) {
            if (watchTriggers(triggerFiles[i], i > 0)) {
                ++watched;
            }
        }
        std::string lines;
        for (const auto& spec : triggerSpecs) {
            lines += (lines.empty() ? "" : ", ") + core::triggerLine(spec);
        }
        log::info("PSI triggers ({TRIGGERS}) on {COUNT} of {FILES} pressure files", "TRIGGERS",
                  lines, "COUNT", watched, "FILES", triggerFiles.size());
    };

    // Every reload (SIGHUP, D-Bus Reload, memqosctl reload) ends here: the
    // thresholds and the classes may have changed.
    manager.setReloadHook([&] { registerTriggers(); });

    manager.start([&](Status st) {
        if (!st) {
            log::error("Cannot talk to systemd: {ERROR}", "ERROR", st.error().what);
            exitCode = kExitUnavailable;
            io.stop();
            return;
        }
        if (stopping) {
            return; // SIGTERM came first
        }
        manager.tick(monotonicNow());
        lastTick = std::chrono::steady_clock::now();
        registerTriggers();
        sd_notify(0, "READY=1");
        status();
        log::info("memqosd {VERSION} ready", "VERSION", MEMQOS_VERSION, "DRY_RUN",
                  manager.dryRun());
        scheduleTick();
    });

    boost::asio::steady_timer watchdog(io);
    std::uint64_t watchdogUsec = 0;
    std::function<void()> feedWatchdog = [&] {
        sd_notify(0, "WATCHDOG=1");
        watchdog.expires_after(std::chrono::microseconds(watchdogUsec / 2));
        watchdog.async_wait([&](const boost::system::error_code& ec) {
            if (!ec) {
                feedWatchdog();
            }
        });
    };
    if (sd_watchdog_enabled(0, &watchdogUsec) > 0 && watchdogUsec > 0) {
        feedWatchdog();
    }

    // Stop: the class caps are given back first (Manager::giveBackOnStop),
    // for at most kGiveBackPatience.
    constexpr std::chrono::seconds kGiveBackPatience{10};
    bool stopped = false;
    boost::asio::steady_timer stopDeadline(io);
    auto finishStop = [&] {
        if (stopped) {
            return;
        }
        stopped = true;
        stopDeadline.cancel();
        pump.stop();
        io.stop();
    };
    boost::asio::signal_set signals(io, SIGHUP, SIGTERM, SIGINT);
    std::function<void()> waitSignal = [&] {
        signals.async_wait([&](const boost::system::error_code& ec, int sig) {
            if (ec) {
                return;
            }
            if (sig == SIGHUP && stopping) {
                waitSignal(); // no reload while stopping
                return;
            }
            if (sig == SIGHUP) {
                sd_notify(0, "RELOADING=1");
                // The same reload as D-Bus Reload (the hook re-registers
                // the PSI triggers).
                auto r = manager.reload();
                if (!r.ok()) {
                    log::warning("Reload refused: {ERROR}", "ERROR", r.error().message);
                }
                sd_notify(0, "READY=1");
                waitSignal();
                return;
            }
            if (stopping) {
                log::warning("Stopping at once on a second signal {SIGNAL}; what was not given "
                             "back yet stays",
                             "SIGNAL", sig);
                finishStop();
                return;
            }
            stopping = true;
            log::info("Stopping on signal {SIGNAL}: giving back the class caps first", "SIGNAL",
                      sig);
            sd_notify(0, "STOPPING=1");
            // No tick decides a new cap meanwhile.
            tickTimer.cancel();
            triggers.clear();
            // Asynchronous calls through the pump, as everything else: the
            // loop keeps answering, and a PID 1 that does not answer holds
            // the stop for kGiveBackPatience, then memqosd stops anyway
            // (well inside the unit's TimeoutStopSec=15s).
            stopDeadline.expires_after(kGiveBackPatience);
            stopDeadline.async_wait([&](const boost::system::error_code& e) {
                if (e) {
                    return;
                }
                log::warning("systemd did not answer the give-back within {SECONDS} s; stopping "
                             "without it (the class caps not given back stay on their slices)",
                             "SECONDS", kGiveBackPatience.count());
                finishStop();
            });
            manager.giveBackOnStop([&] { finishStop(); });
            waitSignal();
        });
    };
    waitSignal();
    // memqosctl release --all: once everything is given back and the caller
    // answered, the same stop as SIGTERM (caps and memory.oom.group back).
    manager.setReleaseHook([] { ::kill(::getpid(), SIGTERM); });

    io.run();
    return exitCode;
}

} // namespace memqos::daemon

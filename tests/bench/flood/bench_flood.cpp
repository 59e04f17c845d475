// SPDX-License-Identifier: Apache-2.0
// bench-flood: the native D-Bus flood of memqosd (issue 25) and its probe.
// tests/bench/run-flood-bench starts the bus, memqosd and these processes;
// see tests/bench/flood/README.md.
//
//   bench-flood client --address ADDR --calls N --seed S
//       N synchronous calls, one at a time, of random org.memqos1 members on
//       one sd-bus connection: reads (GetAll, Get, ListWorkloads, ListClasses,
//       ListInstances, GetManagedObjects, VerifyPlacement with random sizes
//       and options), writes (AssignWorkload/UnassignWorkload of the fixture
//       units, RecordInstance/ForgetInstance of flood-inst-K) and invalid
//       calls (bad names and sizes, unknown classes and options, a wrong
//       signature, a member that does not exist) that must get an error.
//       --reads-only: no write calls. Prints one line of counts ("calls=..")
//       and one "error NAME COUNT" line per error name.
//   bench-flood probe --address ADDR [--period-us P] [--samples N]
//       Every P µs (default 5000) one synchronous call, alternating memqosd's
//       VerifyPlacement and the bus driver's GetAll(org.freedesktop.DBus), on
//       a connection of its own, until N samples of each (default: until
//       SIGTERM/SIGINT). Prints "probe TARGET n= p50= p99= max= errors=" (µs)
//       per target.
// Exit status: 0, or 1 when a call was not answered, an error was unnamed or
// an invalid call was accepted (client), or a probe call failed (probe).
#include <systemd/sd-bus.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

constexpr const char* kDest = "org.memqos1";
constexpr const char* kPath = "/org/memqos1";
constexpr const char* kManager = "org.memqos1.Manager";
constexpr const char* kProps = "org.freedesktop.DBus.Properties";
constexpr std::uint64_t kMiB = 1ULL << 20;
constexpr std::uint64_t kGiB = 1ULL << 30;
constexpr std::uint64_t kCallTimeoutUs = 30'000'000;

using Clock = std::chrono::steady_clock;

struct Bus {
    sd_bus* bus = nullptr;
    ~Bus() { sd_bus_flush_close_unref(bus); }
};

int connect(const std::string& address, Bus& out) {
    int r = sd_bus_new(&out.bus);
    if (r >= 0) r = sd_bus_set_address(out.bus, address.c_str());
    if (r >= 0) r = sd_bus_set_bus_client(out.bus, 1);
    if (r >= 0) r = sd_bus_start(out.bus);
    return r;
}

struct Message {
    sd_bus_message* m = nullptr;
    Message() = default;
    Message(const Message&) = delete;
    Message& operator=(const Message&) = delete;
    ~Message() { sd_bus_message_unref(m); }
};

// ------------------------------------------------------------------ client

struct Counts {
    long calls = 0;
    long ok = 0;
    long errors = 0;
    long unnamed = 0;       // an error outside org.memqos1.Error.* / org.freedesktop.DBus.Error.*
    long timeouts = 0;      // no answer within 30 s
    long acceptedInvalid = 0; // an invalid call that got a method return
    long writes = 0;
    long writesOk = 0;
    std::map<std::string, long> errorNames;
};

const std::vector<std::string> kUnits = {"nginx.service", "postgres.service", "ghost.service"};
const std::vector<std::string> kClasses = {"shared", "reclaimed", "dedicated", "system"};

class Client {
public:
    Client(sd_bus* bus, std::uint64_t seed, bool readsOnly)
        : bus_(bus), rng_(seed), readsOnly_(readsOnly) {}

    void one(Counts& c) {
        // Weights: reads ~55 %, writes ~30 %, invalid ~15 % (of 100).
        int pick = pickIn(0, 99);
        if (readsOnly_ && pick >= 55 && pick < 85) {
            pick = pickIn(0, 54);
        }
        Message m;
        bool invalid = false;
        bool write = false;
        int r = 0;
        if (pick < 8) {
            r = newCall(m, kProps, "GetAll") < 0 ? -1 : sd_bus_message_append(m.m, "s", kManager);
        } else if (pick < 14) {
            r = newCall(m, kProps, "Get");
            if (r >= 0) r = sd_bus_message_append(m.m, "ss", kManager, pickProperty());
        } else if (pick < 22) {
            r = newCall(m, kManager, "ListWorkloads");
        } else if (pick < 26) {
            r = newCall(m, kManager, "ListClasses");
        } else if (pick < 30) {
            r = newCall(m, kManager, "ListInstances");
        } else if (pick < 34) {
            r = newCall(m, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects");
        } else if (pick < 55) {
            r = verifyPlacement(m, invalid);
        } else if (pick < 65) {
            write = true;
            r = assign(m, invalid);
        } else if (pick < 70) {
            write = true;
            r = newCall(m, kManager, "UnassignWorkload");
            if (r >= 0) r = sd_bus_message_append(m.m, "s", pickUnit().c_str());
        } else if (pick < 80) {
            write = true;
            r = record(m, invalid);
        } else if (pick < 85) {
            write = true;
            r = newCall(m, kManager, "ForgetInstance");
            if (r >= 0) r = sd_bus_message_append(m.m, "s", instanceName().c_str());
        } else if (pick < 90) {
            invalid = true; // a wrong signature
            r = newCall(m, kManager, "VerifyPlacement");
            if (r >= 0) r = sd_bus_message_append(m.m, "s", "1G");
        } else if (pick < 95) {
            invalid = true;
            r = newCall(m, kManager, "NoSuchMember");
        } else {
            invalid = true; // a property that does not exist
            r = newCall(m, kProps, "Get");
            if (r >= 0) r = sd_bus_message_append(m.m, "ss", kManager, "NoSuchProperty");
        }
        if (r < 0) {
            std::fprintf(stderr, "bench-flood: cannot build a call: %s\n", std::strerror(-r));
            std::exit(2);
        }
        ++c.calls;
        c.writes += write ? 1 : 0;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message* reply = nullptr;
        r = sd_bus_call(bus_, m.m, kCallTimeoutUs, &e, &reply);
        sd_bus_message_unref(reply);
        if (r >= 0) {
            ++c.ok;
            c.writesOk += write ? 1 : 0;
            if (invalid) {
                ++c.acceptedInvalid;
                std::fprintf(stderr, "bench-flood: an invalid %s was accepted\n",
                             sd_bus_message_get_member(m.m));
            }
        } else {
            ++c.errors;
            const std::string name = e.name != nullptr ? e.name : "";
            if (r == -ETIMEDOUT) {
                ++c.timeouts;
            } else if (!name.starts_with("org.memqos1.Error.") &&
                       !name.starts_with("org.freedesktop.DBus.Error.")) {
                ++c.unnamed;
                std::fprintf(stderr, "bench-flood: %s: unnamed error '%s': %s\n",
                             sd_bus_message_get_member(m.m), name.c_str(),
                             e.message != nullptr ? e.message : std::strerror(-r));
            }
            ++c.errorNames[name.empty() ? std::string("(none)") : name];
        }
        sd_bus_error_free(&e);
    }

private:
    int pickIn(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
    bool chance(int percent) { return pickIn(0, 99) < percent; }

    int newCall(Message& m, const char* iface, const char* member) {
        return sd_bus_message_new_method_call(bus_, &m.m, kDest, kPath, iface, member);
    }

    const char* pickProperty() {
        static const char* const names[] = {"Version",       "MemoryTotal",       "MemoryAvailable",
                                            "PressureLevel", "AdmissionOpen",     "DryRun",
                                            "NodeReserved",  "UpInstancesMaxMemory"};
        return names[pickIn(0, static_cast<int>(std::size(names)) - 1)];
    }

    std::uint64_t size() {
        // 1 MiB .. 64 GiB, log-uniform in MiB.
        return kMiB << pickIn(0, 16);
    }

    const std::string& pickUnit() { return kUnits[static_cast<std::size_t>(pickIn(0, 2))]; }

    std::string instanceName() { return "flood-inst-" + std::to_string(pickIn(0, 15)); }

    int verifyPlacement(Message& m, bool& invalid) {
        int r = newCall(m, kManager, "VerifyPlacement");
        if (r < 0) return r;
        const std::uint64_t mem = size();
        const std::uint64_t min = chance(50) ? mem : mem / 2;
        if ((r = sd_bus_message_append(m.m, "tt", mem, min)) < 0) return r;
        if ((r = sd_bus_message_open_container(m.m, 'a', "{sv}")) < 0) return r;
        const int opt = pickIn(0, 9);
        if (opt == 0) {
            r = sd_bus_message_append(m.m, "{sv}", "refuse_soft", "b", 1);
        } else if (opt == 1) {
            r = sd_bus_message_append(m.m, "{sv}", "failover_reserve", "t", size());
        } else if (opt == 2) {
            invalid = true; // an option memqosd does not know
            r = sd_bus_message_append(m.m, "{sv}", "bogus", "t", std::uint64_t{1});
        } else if (opt == 3) {
            invalid = true; // an option of the wrong type
            r = sd_bus_message_append(m.m, "{sv}", "refuse_soft", "s", "yes");
        }
        if (r < 0) return r;
        return sd_bus_message_close_container(m.m);
    }

    int assign(Message& m, bool& invalid) {
        int r = newCall(m, kManager, "AssignWorkload");
        if (r < 0) return r;
        std::string unit = pickUnit();
        std::string cls = kClasses[static_cast<std::size_t>(pickIn(0, 2))];
        std::uint64_t request = kMiB << pickIn(4, 10); // 16 MiB .. 1 GiB
        std::uint64_t limit = chance(30) ? UINT64_MAX : request * 2;
        const int bad = pickIn(0, 9);
        if (bad == 0) {
            invalid = true;
            cls = "nosuch";
        } else if (bad == 1) {
            invalid = true;
            unit = chance(50) ? "" : "../x.service";
        } else if (bad == 2) {
            invalid = true;
            limit = request / 2; // limit below request
        }
        return sd_bus_message_append(m.m, "ssttb", unit.c_str(), cls.c_str(), request, limit,
                                     static_cast<int>(chance(50)));
    }

    int record(Message& m, bool& invalid) {
        int r = newCall(m, kManager, "RecordInstance");
        if (r < 0) return r;
        std::string name = instanceName();
        std::uint64_t max = kMiB << pickIn(7, 13); // 128 MiB .. 8 GiB
        std::uint64_t min = chance(50) ? max : max / 2;
        const int bad = pickIn(0, 9);
        if (bad == 0) {
            invalid = true;
            name = chance(50) ? "" : "a b";
        } else if (bad == 1) {
            invalid = true;
            min = max + 1;
        } else if (bad == 2) {
            invalid = true;
            max = 0;
            min = 0;
        }
        return sd_bus_message_append(m.m, "sttb", name.c_str(), min, max,
                                     static_cast<int>(chance(70)));
    }

    sd_bus* bus_;
    std::mt19937_64 rng_;
    bool readsOnly_;
};

int runClient(const std::string& address, long calls, std::uint64_t seed, bool readsOnly) {
    Bus bus;
    if (int r = connect(address, bus); r < 0) {
        std::fprintf(stderr, "bench-flood: cannot connect to %s: %s\n", address.c_str(),
                     std::strerror(-r));
        return 1;
    }
    Client client(bus.bus, seed, readsOnly);
    Counts c;
    const auto t0 = Clock::now();
    for (long i = 0; i < calls; ++i) {
        client.one(c);
    }
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    std::printf("calls=%ld ok=%ld errors=%ld unnamed=%ld timeouts=%ld accepted_invalid=%ld "
                "writes=%ld writes_ok=%ld wall_s=%.3f\n",
                c.calls, c.ok, c.errors, c.unnamed, c.timeouts, c.acceptedInvalid, c.writes,
                c.writesOk, wall);
    for (const auto& [name, n] : c.errorNames) {
        std::printf("error %s %ld\n", name.c_str(), n);
    }
    return c.unnamed == 0 && c.timeouts == 0 && c.acceptedInvalid == 0 ? 0 : 1;
}

// ------------------------------------------------------------------- probe

volatile std::sig_atomic_t gStop = 0;
extern "C" void onStop(int) { gStop = 1; }

struct Series {
    const char* name;
    std::vector<double> us;
    long errors = 0;
};

void printSeries(Series& s) {
    std::sort(s.us.begin(), s.us.end());
    const auto at = [&s](double q) {
        if (s.us.empty()) return 0.0;
        const auto i = static_cast<std::size_t>(q * static_cast<double>(s.us.size()));
        return s.us[std::min(s.us.size() - 1, i)];
    };
    std::printf("probe %s n=%zu p50=%.1f p99=%.1f max=%.1f errors=%ld\n", s.name, s.us.size(),
                at(0.50), at(0.99), s.us.empty() ? 0.0 : s.us.back(), s.errors);
}

int runProbe(const std::string& address, long periodUs, long samples) {
    struct sigaction sa {};
    sa.sa_handler = onStop;
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
    Bus bus;
    if (int r = connect(address, bus); r < 0) {
        std::fprintf(stderr, "bench-flood: cannot connect to %s: %s\n", address.c_str(),
                     std::strerror(-r));
        return 1;
    }
    // From here a SIGTERM ends the series cleanly: say so, so that the
    // runner does not stop the probe before (under load an ASan build can
    // take longer to get here than a short flood lasts).
    std::printf("ready\n");
    std::fflush(stdout);
    Series memqosd{"memqosd", {}, 0};
    Series peer{"peer", {}, 0};
    const auto period = std::chrono::microseconds(periodUs);
    auto next = Clock::now();
    for (long i = 0; gStop == 0; ++i) {
        const bool ours = i % 2 == 0;
        Series& s = ours ? memqosd : peer;
        if (samples > 0 && !ours && static_cast<long>(peer.us.size()) >= samples) {
            break;
        }
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message* reply = nullptr;
        const auto t0 = Clock::now();
        int r = 0;
        if (ours) {
            r = sd_bus_call_method(bus.bus, kDest, kPath, kManager, "VerifyPlacement", &e, &reply,
                                   "tta{sv}", kGiB, kGiB, 0);
        } else {
            r = sd_bus_call_method(bus.bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", kProps,
                                   "GetAll", &e, &reply, "s", "org.freedesktop.DBus");
        }
        const auto t1 = Clock::now();
        sd_bus_message_unref(reply);
        if (r < 0) {
            if (r == -EINTR && gStop != 0) {
                // The SIGTERM that ends the probe interrupted this call:
                // sd-bus filled `e` (a strdup'd message), which LeakSanitizer
                // reported at exit, failing the run (CI of 2026-12-05).
                sd_bus_error_free(&e);
                break;
            }
            ++s.errors;
            std::fprintf(stderr, "bench-flood probe: %s: %s\n", s.name,
                         e.message != nullptr ? e.message : std::strerror(-r));
        } else {
            s.us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        }
        sd_bus_error_free(&e);
        // A steady rate: the next slot after now (a slow reply skips slots
        // rather than sending a burst).
        next += period;
        const auto now = Clock::now();
        if (next < now) {
            next = now;
        }
        std::this_thread::sleep_until(next);
    }
    printSeries(memqosd);
    printSeries(peer);
    return memqosd.errors == 0 && peer.errors == 0 ? 0 : 1;
}

int usage(const char* argv0) {
    std::fprintf(stderr,
                 "usage: %s client --address ADDR --calls N --seed S [--reads-only]\n"
                 "       %s probe --address ADDR [--period-us P] [--samples N]\n",
                 argv0, argv0);
    return 64;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        return usage(argv[0]);
    }
    const std::string_view mode = argv[1];
    std::string address;
    long calls = 1000;
    long periodUs = 5000;
    long samples = 0;
    std::uint64_t seed = 1;
    bool readsOnly = false;
    for (int i = 2; i < argc; ++i) {
        const std::string_view a = argv[i];
        const bool more = i + 1 < argc;
        if (a == "--address" && more) {
            address = argv[++i];
        } else if (a == "--calls" && more) {
            calls = std::strtol(argv[++i], nullptr, 10);
        } else if (a == "--seed" && more) {
            seed = std::strtoull(argv[++i], nullptr, 10);
        } else if (a == "--period-us" && more) {
            periodUs = std::strtol(argv[++i], nullptr, 10);
        } else if (a == "--samples" && more) {
            samples = std::strtol(argv[++i], nullptr, 10);
        } else if (a == "--reads-only") {
            readsOnly = true;
        } else {
            return usage(argv[0]);
        }
    }
    if (address.empty() || calls <= 0 || periodUs <= 0 || samples < 0) {
        return usage(argv[0]);
    }
    if (mode == "client") {
        return runClient(address, calls, seed, readsOnly);
    }
    if (mode == "probe") {
        return runProbe(address, periodUs, samples);
    }
    return usage(argv[0]);
}

// SPDX-License-Identifier: Apache-2.0
// bench-bus: latency of synchronous D-Bus calls from one sd-bus connection.
//
//   bench-bus --address ADDRESS [-n CALLS]
//
// For each target, CALLS (default 2000) synchronous calls after 50 warm-up
// calls: memqosd's Manager.VerifyPlacement and Properties.GetAll(Manager),
// and, as peers on the same bus, the bus driver's GetAll(org.freedesktop.DBus)
// and the python-dbusmock systemd Manager's GetAll. Prints p50, p99 (µs) and
// calls/s per target. Exit 1 when a call fails.
#include <systemd/sd-bus.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

struct Target {
    const char* name;
    std::function<int(sd_bus*, sd_bus_error*, sd_bus_message**)> call;
};

int getAll(sd_bus* bus, const char* dest, const char* path, const char* iface, sd_bus_error* e,
           sd_bus_message** reply) {
    return sd_bus_call_method(bus, dest, path, "org.freedesktop.DBus.Properties", "GetAll", e,
                              reply, "s", iface);
}

} // namespace

int main(int argc, char** argv) {
    std::string address;
    long n = 2000;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--address") == 0 && i + 1 < argc) {
            address = argv[++i];
        } else if (std::strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
            n = std::strtol(argv[++i], nullptr, 10);
        } else {
            std::fprintf(stderr, "usage: %s --address ADDRESS [-n CALLS]\n", argv[0]);
            return 64;
        }
    }
    if (address.empty() || n <= 0) {
        std::fprintf(stderr, "usage: %s --address ADDRESS [-n CALLS]\n", argv[0]);
        return 64;
    }
    sd_bus* bus = nullptr;
    int r = sd_bus_new(&bus);
    if (r >= 0) r = sd_bus_set_address(bus, address.c_str());
    if (r >= 0) r = sd_bus_set_bus_client(bus, 1);
    if (r >= 0) r = sd_bus_start(bus);
    if (r < 0) {
        std::fprintf(stderr, "cannot connect to %s: %s\n", address.c_str(), std::strerror(-r));
        return 1;
    }

    const std::vector<Target> targets = {
        {"memqosd VerifyPlacement",
         [](sd_bus* b, sd_bus_error* e, sd_bus_message** m) {
             return sd_bus_call_method(b, "org.memqos1", "/org/memqos1", "org.memqos1.Manager",
                                       "VerifyPlacement", e, m, "tta{sv}",
                                       std::uint64_t{1} << 30, std::uint64_t{1} << 30, 0);
         }},
        {"memqosd GetAll(Manager)",
         [](sd_bus* b, sd_bus_error* e, sd_bus_message** m) {
             return getAll(b, "org.memqos1", "/org/memqos1", "org.memqos1.Manager", e, m);
         }},
        {"dbus-daemon GetAll(DBus)",
         [](sd_bus* b, sd_bus_error* e, sd_bus_message** m) {
             return getAll(b, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                           "org.freedesktop.DBus", e, m);
         }},
        {"dbusmock GetAll(systemd1)",
         [](sd_bus* b, sd_bus_error* e, sd_bus_message** m) {
             return getAll(b, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                           "org.freedesktop.systemd1.Manager", e, m);
         }},
    };

    std::printf("%-28s %8s %10s %10s %10s\n", "target", "calls", "p50 us", "p99 us", "calls/s");
    int status = 0;
    for (const auto& t : targets) {
        std::vector<double> us;
        us.reserve(static_cast<std::size_t>(n));
        bool failed = false;
        const auto start = std::chrono::steady_clock::now();
        for (long i = -50; i < n; ++i) { // 50 warm-up calls
            if (i == 0) {
                us.clear();
            }
            sd_bus_error e = SD_BUS_ERROR_NULL;
            sd_bus_message* reply = nullptr;
            const auto t0 = std::chrono::steady_clock::now();
            r = t.call(bus, &e, &reply);
            const auto t1 = std::chrono::steady_clock::now();
            if (r < 0) {
                std::fprintf(stderr, "%s: %s: %s\n", t.name, e.name ? e.name : "",
                             e.message ? e.message : std::strerror(-r));
                sd_bus_error_free(&e);
                failed = true;
                break;
            }
            sd_bus_message_unref(reply);
            if (i >= 0) {
                us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
            }
        }
        if (failed) {
            status = 1;
            continue;
        }
        double total = 0;
        for (double v : us) {
            total += v;
        }
        (void)start;
        std::sort(us.begin(), us.end());
        const auto at = [&us](double q) {
            return us[std::min(us.size() - 1, static_cast<std::size_t>(q * static_cast<double>(us.size())))];
        };
        std::printf("%-28s %8ld %10.1f %10.1f %10.0f\n", t.name, n, at(0.50), at(0.99),
                    total > 0 ? static_cast<double>(n) / (total / 1e6) : 0.0);
    }
    sd_bus_unref(bus);
    return status;
}

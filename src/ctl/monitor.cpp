// SPDX-License-Identifier: Apache-2.0
#include "monitor.hpp"

#include "memqos/io/bus_message.hpp"
#include "memqos/io/bus_names.hpp"

#include <systemd/sd-bus.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <poll.h>

#include "bus_error.hpp"
#include "output.hpp"
#include "stop_signals.hpp"

namespace memqos::ctl {
namespace {

struct MonitorContext {
    Format format;
};

std::int64_t realtimeNowUsec() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

std::int64_t monotonicNowUsec() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

// Argument names of the signals, as in the introspection XML.
const std::vector<std::string_view>* argNames(std::string_view member) {
    static const std::vector<std::string_view> kPressure{"level", "reason"};
    static const std::vector<std::string_view> kKilled{"id", "class", "reason", "numbers"};
    static const std::vector<std::string_view> kProps{"interface", "changed", "invalidated"};
    static const std::vector<std::string_view> kOwner{"name", "old_owner", "new_owner"};
    if (member == "PressureLevelChanged") {
        return &kPressure;
    }
    if (member == "WorkloadKilled") {
        return &kKilled;
    }
    if (member == "PropertiesChanged") {
        return &kProps;
    }
    if (member == "NameOwnerChanged") {
        return &kOwner;
    }
    return nullptr;
}

int onSignal(sd_bus_message* m, void* userdata, sd_bus_error* /*error*/) {
    const auto* ctx = static_cast<const MonitorContext*>(userdata);
    const char* member = sd_bus_message_get_member(m);
    Event event{localTimestamp(realtimeNowUsec()), member != nullptr ? member : "", {}};

    ValueArray values;
    if (readValues(m, values) < 0) {
        writeErr("memqosctl: warning: ignoring a malformed " + event.kind + " signal\n");
        return 0;
    }
    const auto* names = argNames(event.kind);
    for (std::size_t i = 0; i < values.size(); ++i) {
        std::string name = names != nullptr && i < names->size() ? std::string((*names)[i])
                                                                 : "arg" + std::to_string(i);
        event.args.push_back({std::move(name), std::move(values[i])});
    }
    writeOut(renderEvent(event, ctx->format));
    flushOut();
    return 0;
}

} // namespace

std::string localTimestamp(std::int64_t realtimeUsec) {
    const auto seconds = static_cast<time_t>(realtimeUsec / 1000000);
    const auto millis = static_cast<int>((realtimeUsec % 1000000) / 1000);
    std::tm tm{};
    if (localtime_r(&seconds, &tm) == nullptr) {
        return "?";
    }
    std::array<char, 64> date{};
    std::array<char, 16> zone{};
    if (std::strftime(date.data(), date.size(), "%Y-%m-%dT%H:%M:%S", &tm) == 0 ||
        std::strftime(zone.data(), zone.size(), "%z", &tm) == 0) {
        return "?";
    }
    std::string out = date.data();
    std::array<char, 8> ms{};
    std::snprintf(ms.data(), ms.size(), ".%03d", millis);
    out += ms.data();
    std::string z = zone.data(); // "+0200" → "+02:00"
    if (z.size() == 5) {
        z.insert(3, ":");
    }
    return out + z;
}

int runMonitor(BusClient& client, Format format) {
    sd_bus* bus = client.raw();
    MonitorContext ctx{format};

    // Block the signals first so none is lost between the checks below.
    auto stop = StopSignals::block();
    if (!stop) {
        writeErr("memqosctl: " + stop.error().what + "\n");
        return kExitDaemonError;
    }

    // Matches on the well-known name: dbus-daemon resolves it to the current
    // owner, so a restarted memqosd keeps being followed.
    struct Match {
        const char* sender;
        const char* path;
        const char* interface;
        const char* member;
    };
    static constexpr std::array<Match, 3> kMatches{{
        {io::bus_names::kBusName, io::bus_names::kManagerPath, io::bus_names::kManagerInterface,
         "PressureLevelChanged"},
        {io::bus_names::kBusName, io::bus_names::kManagerPath, io::bus_names::kManagerInterface,
         "WorkloadKilled"},
        {io::bus_names::kBusName, io::bus_names::kManagerPath, "org.freedesktop.DBus.Properties",
         "PropertiesChanged"},
    }};
    std::vector<io::SlotPtr> slots;
    for (const auto& match : kMatches) {
        sd_bus_slot* slot = nullptr;
        const int r = sd_bus_match_signal(bus, &slot, match.sender, match.path, match.interface,
                                          match.member, onSignal, &ctx);
        if (r < 0) {
            const Error e = classifyCallError({}, {}, -r, "AddMatch");
            writeErr("memqosctl: " + e.what + "\n");
            return exitCodeFor(e);
        }
        slots.emplace_back(slot);
    }
    {
        sd_bus_slot* slot = nullptr;
        const std::string rule = std::string("type='signal',sender='org.freedesktop.DBus',"
                                             "path='/org/freedesktop/DBus',"
                                             "interface='org.freedesktop.DBus',"
                                             "member='NameOwnerChanged',arg0='") +
                                 io::bus_names::kBusName + "'";
        const int r = sd_bus_add_match(bus, &slot, rule.c_str(), onSignal, &ctx);
        if (r < 0) {
            const Error e = classifyCallError({}, {}, -r, "AddMatch");
            writeErr("memqosctl: " + e.what + "\n");
            return exitCodeFor(e);
        }
        slots.emplace_back(slot);
    }

    auto onBus = client.daemonOnBus();
    if (!onBus) {
        writeErr("memqosctl: " + onBus.error().what + "\n");
        return exitCodeFor(onBus.error());
    }
    if (!*onBus) {
        writeErr("memqosctl: warning: memqosd is not on the bus (is it running? try: "
                 "systemctl status memqosd); waiting for it\n");
    }
    writeErr("Monitoring memqosd; press Ctrl-C to stop.\n");

    for (;;) {
        int r = sd_bus_process(bus, nullptr);
        if (r < 0) {
            const Error e = classifyCallError({}, {}, -r, "monitor");
            writeErr("memqosctl: " + e.what + "\n");
            return exitCodeFor(e);
        }
        if (r > 0) {
            continue; // more may be queued
        }

        std::array<pollfd, 2> fds{{
            {sd_bus_get_fd(bus), static_cast<short>(sd_bus_get_events(bus)), 0},
            {stop->fd(), POLLIN, 0},
        }};
        std::uint64_t until = 0;
        int timeoutMs = -1;
        if (sd_bus_get_timeout(bus, &until) >= 0 && until != UINT64_MAX) {
            const std::int64_t left = static_cast<std::int64_t>(until) - monotonicNowUsec();
            timeoutMs = left <= 0 ? 0 : static_cast<int>((left + 999) / 1000);
        }
        r = poll(fds.data(), fds.size(), timeoutMs);
        if (r < 0 && errno != EINTR) {
            writeErr(std::string("memqosctl: poll: ") + std::strerror(errno) + "\n");
            return kExitDaemonError;
        }
        if ((fds[1].revents & POLLIN) != 0 && stop->wait(0)) {
            flushOut();
            return kExitOk;
        }
    }
}

} // namespace memqos::ctl

// SPDX-License-Identifier: Apache-2.0
#include "bus_error.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <string>

namespace memqos::ctl {
namespace {

constexpr std::string_view kIsItRunning = "is memqosd running? try: systemctl status memqosd";

std::string errnoText(int e) {
    // strerror() is not thread-safe; memqosctl is single-threaded.
    return std::strerror(e); // NOLINT(concurrency-mt-unsafe)
}

bool isConnectionErrno(int e) {
    switch (e) {
    case ENOENT:
    case ECONNREFUSED:
    case ECONNRESET:
    case ENOTCONN:
    case EPIPE:
    case ESHUTDOWN:
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case ENXIO:
        return true;
    default:
        return false;
    }
}

bool isOneOf(std::string_view name, std::initializer_list<std::string_view> names) {
    for (const auto n : names) {
        if (name == n) {
            return true;
        }
    }
    return false;
}

std::string nameAndMessage(std::string_view name, std::string_view message) {
    std::string out(name);
    if (!message.empty()) {
        out += out.empty() ? "" : ": ";
        out.append(message);
    }
    return out;
}

} // namespace

Error classifyCallError(std::string_view name, std::string_view message, int errnoValue,
                        std::string_view member) {
    const std::string shown = nameAndMessage(name, message);

    if (isOneOf(name, {"org.freedesktop.DBus.Error.ServiceUnknown",
                       "org.freedesktop.DBus.Error.NameHasNoOwner"}) ||
        name.starts_with("org.freedesktop.DBus.Error.Spawn.") ||
        name.starts_with("org.freedesktop.systemd1.")) {
        // Not on the bus. memqosctl sends every call without auto-start, so
        // the bus answers NameHasNoOwner; the others are what an activation
        // attempt answers (systemd's come as org.freedesktop.systemd1.*).
        return makeError(std::errc::no_such_process,
                         "memqosd is not running (" + shown +
                             "); memqosctl does not start it: systemctl start memqosd; "
                             "see: systemctl status memqosd");
    }
    if (isOneOf(name, {"org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout",
                       "org.freedesktop.DBus.Error.TimedOut"}) ||
        (name.starts_with("System.Error.") && errnoValue == ETIMEDOUT)) {
        return makeError(std::errc::not_connected,
                         "memqosd did not answer " + std::string(member) + " (" + shown +
                             "); is it hung? try: systemctl status memqosd; journalctl -u memqosd");
    }
    if (name == "org.freedesktop.DBus.Error.Disconnected" ||
        ((name.empty() || name.starts_with("System.Error.")) && isConnectionErrno(errnoValue))) {
        return makeError(std::errc::not_connected,
                         "lost the connection to the bus (" +
                             (shown.empty() ? errnoText(errnoValue) : shown) + "); " +
                             std::string(kIsItRunning));
    }
    if (isOneOf(name, {"org.freedesktop.DBus.Error.AccessDenied",
                       "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"}) ||
        ((name.empty() || name.starts_with("System.Error.")) &&
         (errnoValue == EACCES || errnoValue == EPERM))) {
        return makeError(std::errc::permission_denied, "access denied (" + shown + "); " +
                                                           std::string(member) +
                                                           " needs root: try sudo memqosctl ...");
    }
    if (shown.empty()) {
        return makeError(std::errc::io_error,
                         std::string(member) + " failed: " + errnoText(errnoValue));
    }
    // memqosd's own errors (org.memqos1.Error.*) and everything else, as
    // sent; the exit status tells "not found" and "bad argument" apart.
    if (isOneOf(name, {"org.memqos1.Error.NoSuchWorkload", "org.memqos1.Error.NoSuchUnit",
                       "org.memqos1.Error.NoSuchInstance"})) {
        return makeError(std::errc::no_such_file_or_directory, shown);
    }
    if (isOneOf(name, {"org.memqos1.Error.InvalidArgument", "org.memqos1.Error.InvalidUnit",
                       "org.memqos1.Error.UnknownClass", "org.memqos1.Error.SizeOutOfRange",
                       "org.memqos1.Error.RequestAboveLimit"})) {
        return makeError(std::errc::invalid_argument, shown);
    }
    return makeError(std::errc::io_error, shown);
}

Error classifyConnectError(const BusChoice& bus, int errnoValue) {
    const std::string why = errnoText(errnoValue);
    if (bus.kind == BusChoice::Kind::System) {
        if (errnoValue == EACCES || errnoValue == EPERM) {
            return makeError(std::errc::permission_denied,
                             "access denied to the system bus: " + why);
        }
        return makeError(std::errc::not_connected,
                         "cannot connect to the system bus: " + why +
                             "; is D-Bus running? try: systemctl status dbus");
    }
    if (errnoValue == EACCES || errnoValue == EPERM) {
        return makeError(std::errc::permission_denied,
                         "access denied to the bus at '" + bus.address + "': " + why);
    }
    return makeError(std::errc::not_connected, "cannot connect to the bus at '" + bus.address +
                                                   "': " + why +
                                                   "; check --bus-address or $MEMQOS_BUS_ADDRESS");
}

Error malformedReply(std::string_view member, std::string_view why) {
    return makeError(std::errc::bad_message, "unexpected reply to " + std::string(member) +
                                                 " from memqosd: " + std::string(why) +
                                                 " (memqosctl and memqosd versions differ?)");
}

int exitCodeFor(const Error& error) {
    switch (error.code) {
    case std::errc::no_such_process:
        return kExitNotRunning;
    case std::errc::not_connected:
        return kExitUnreachable;
    case std::errc::permission_denied:
        return kExitAccessDenied;
    case std::errc::no_such_file_or_directory:
        return kExitNotFound;
    case std::errc::invalid_argument:
        return kExitUsage;
    default:
        return kExitDaemonError;
    }
}

} // namespace memqos::ctl

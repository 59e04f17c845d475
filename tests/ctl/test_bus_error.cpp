// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "bus_error.hpp"

namespace memqos::ctl {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(BusError, DaemonErrorsAreShownAsTheyAre) {
    const Error e = classifyCallError("org.memqos1.Error.UnknownClass",
                                      "class 'gold' does not exist (known: system, dedicated, "
                                      "shared, reclaimed)",
                                      ENXIO, "AssignWorkload");
    EXPECT_EQ(e.what, "org.memqos1.Error.UnknownClass: class 'gold' does not exist (known: "
                      "system, dedicated, shared, reclaimed)");
    EXPECT_EQ(exitCodeFor(e), kExitUsage);
    const Error other = classifyCallError("org.memqos1.Error.StateWriteFailed",
                                          "/var/lib/memqos/assignments: No space left", ENXIO,
                                          "AssignWorkload");
    EXPECT_EQ(other.what, "org.memqos1.Error.StateWriteFailed: /var/lib/memqos/assignments: No "
                          "space left");
    EXPECT_EQ(exitCodeFor(other), kExitDaemonError);
}

TEST(BusError, NotFoundIsExit6) {
    for (const char* name : {"org.memqos1.Error.NoSuchWorkload", "org.memqos1.Error.NoSuchUnit",
                             "org.memqos1.Error.NoSuchInstance"}) {
        const Error e = classifyCallError(name, "no 'x'", ENXIO, "UnassignWorkload");
        EXPECT_EQ(exitCodeFor(e), kExitNotFound) << name;
        EXPECT_EQ(e.what, std::string(name) + ": no 'x'");
    }
    EXPECT_EQ(kExitNotFound, 6);
}

TEST(BusError, RefusedArgumentsAreUsageErrors) {
    for (const char* name :
         {"org.memqos1.Error.InvalidArgument", "org.memqos1.Error.InvalidUnit",
          "org.memqos1.Error.UnknownClass", "org.memqos1.Error.SizeOutOfRange",
          "org.memqos1.Error.RequestAboveLimit"}) {
        EXPECT_EQ(exitCodeFor(classifyCallError(name, "bad", ENXIO, "AssignWorkload")), kExitUsage)
            << name;
    }
    // Not ours: a bad call signature is memqosctl's fault, not the user's.
    EXPECT_EQ(exitCodeFor(classifyCallError("org.freedesktop.DBus.Error.InvalidArgs", "bad",
                                            EINVAL, "AssignWorkload")),
              kExitDaemonError);
}

TEST(BusError, UnknownMethodIsADaemonError) {
    const Error e =
        classifyCallError("org.freedesktop.DBus.Error.UnknownMethod", "no Verify", EBADR, "Verify");
    EXPECT_EQ(exitCodeFor(e), kExitDaemonError);
    EXPECT_THAT(e.what, StartsWith("org.freedesktop.DBus.Error.UnknownMethod: no Verify"));
}

TEST(BusError, NotRunning) {
    for (const char* name :
         {"org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
          "org.freedesktop.DBus.Error.Spawn.ChildExited", "org.freedesktop.systemd1.NoSuchUnit"}) {
        const Error e = classifyCallError(name, "The name is not activatable", EHOSTDOWN, "Verify");
        EXPECT_EQ(exitCodeFor(e), kExitNotRunning) << name;
        EXPECT_THAT(e.what, StartsWith("memqosd is not running (")) << name;
        EXPECT_THAT(e.what, HasSubstr("memqosctl does not start it")) << name;
        EXPECT_THAT(e.what, HasSubstr("systemctl status memqosd")) << name;
    }
}

TEST(BusError, NoAnswer) {
    const Error e =
        classifyCallError("org.freedesktop.DBus.Error.NoReply", "timed out", ETIMEDOUT, "Verify");
    EXPECT_EQ(exitCodeFor(e), kExitUnreachable);
    EXPECT_THAT(e.what, HasSubstr("memqosd did not answer Verify"));
    EXPECT_EQ(exitCodeFor(classifyCallError("System.Error.ETIMEDOUT", "Connection timed out",
                                            ETIMEDOUT, "Verify")),
              kExitUnreachable);
}

TEST(BusError, LostConnection) {
    const Error e = classifyCallError({}, {}, ECONNRESET, "ListClasses");
    EXPECT_EQ(exitCodeFor(e), kExitUnreachable);
    EXPECT_THAT(e.what, HasSubstr("lost the connection to the bus"));
    EXPECT_EQ(exitCodeFor(classifyCallError("System.Error.ENOTCONN", "x", ENOTCONN, "m")),
              kExitUnreachable);
    EXPECT_EQ(exitCodeFor(classifyCallError("org.freedesktop.DBus.Error.Disconnected", "x",
                                            ECONNRESET, "m")),
              kExitUnreachable);
}

TEST(BusError, AccessDenied) {
    const Error e = classifyCallError("org.freedesktop.DBus.Error.AccessDenied",
                                      "AssignWorkload is root only", EACCES, "AssignWorkload");
    EXPECT_EQ(exitCodeFor(e), kExitAccessDenied);
    EXPECT_EQ(kExitAccessDenied, 5);
    EXPECT_EQ(e.code, std::errc::permission_denied);
    EXPECT_THAT(e.what, HasSubstr("access denied (org.freedesktop.DBus.Error.AccessDenied: "
                                  "AssignWorkload is root only)"));
    EXPECT_THAT(e.what, HasSubstr("AssignWorkload needs root: try sudo"));
}

TEST(BusError, LocalFailureWithoutName) {
    const Error e = classifyCallError({}, {}, ENOMEM, "Verify");
    EXPECT_EQ(exitCodeFor(e), kExitDaemonError);
    EXPECT_THAT(e.what, StartsWith("Verify failed: "));
}

TEST(BusError, ConnectSystemBus) {
    const BusChoice system{};
    Error e = classifyConnectError(system, ENOENT);
    EXPECT_EQ(exitCodeFor(e), kExitUnreachable);
    EXPECT_THAT(e.what, StartsWith("cannot connect to the system bus: "));
    EXPECT_THAT(e.what, HasSubstr("systemctl status dbus"));
    e = classifyConnectError(system, EACCES);
    EXPECT_EQ(exitCodeFor(e), kExitAccessDenied);
    EXPECT_THAT(e.what, StartsWith("access denied to the system bus"));
}

TEST(BusError, ConnectAddress) {
    const BusChoice address{BusChoice::Kind::Address, "unix:path=/nowhere"};
    const Error e = classifyConnectError(address, ENOENT);
    EXPECT_EQ(exitCodeFor(e), kExitUnreachable);
    EXPECT_THAT(e.what, StartsWith("cannot connect to the bus at 'unix:path=/nowhere': "));
    EXPECT_THAT(e.what, HasSubstr("--bus-address"));
}

} // namespace
} // namespace memqos::ctl

// SPDX-License-Identifier: Apache-2.0
#pragma once
// memqosd's names on D-Bus, for the daemon that owns them and the programs
// that call it (memqosctl, the Ganeti hook). dbus/org.memqos1.*.xml is the
// contract; these must match it.

namespace memqos::io::bus_names {

inline constexpr const char* kBusName = "org.memqos1";
inline constexpr const char* kManagerPath = "/org/memqos1";
inline constexpr const char* kManagerInterface = "org.memqos1.Manager";
// A class's object is kClassPrefix + "/" + its name; a workload's is
// sd_bus_path_encode(kWorkloadPrefix, id).
inline constexpr const char* kClassPrefix = "/org/memqos1/class";
inline constexpr const char* kClassInterface = "org.memqos1.Class";
inline constexpr const char* kWorkloadPrefix = "/org/memqos1/workload";
inline constexpr const char* kWorkloadInterface = "org.memqos1.Workload";
// The daemon's error names are kErrorPrefix + a short name ("UnknownClass").
inline constexpr const char* kErrorPrefix = "org.memqos1.Error.";

} // namespace memqos::io::bus_names

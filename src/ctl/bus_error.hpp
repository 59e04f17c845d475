// SPDX-License-Identifier: Apache-2.0
#pragma once
// How a failed bus operation is told to the operator, pure so it is tested
// without a bus. Errors travel as memqos::Error with `code` chosen so the exit
// status follows from it (exitCodeFor):
//   std::errc::no_such_process    memqosd not on the bus (not started by us) → 4
//   std::errc::not_connected      no bus, lost connection, no answer         → 3
//   std::errc::permission_denied  the bus or memqosd refused the caller      → 5
//   std::errc::no_such_file_or_directory  memqosd: no such workload, unit or
//                                 instance (NoSuchWorkload, NoSuchUnit,
//                                 NoSuchInstance), or none by that id        → 6
//   std::errc::invalid_argument   memqosd refused an argument (InvalidArgument,
//                                 InvalidUnit, UnknownClass, SizeOutOfRange,
//                                 RequestAboveLimit)                         → 64
//   anything else                 memqosd answered with another error       → 1
// `what` is one line for stderr after "memqosctl: ", saying which and what to do.

#include "memqos/util/result.hpp"

#include <string_view>

#include "command.hpp"

namespace memqos::ctl {

// A method call failed: `name`/`message` from the sd_bus_error (name may be
// empty or "System.Error.E…" for local failures), `errnoValue` positive.
// `member` is the method called ("AssignWorkload"), for the hints.
Error classifyCallError(std::string_view name, std::string_view message, int errnoValue,
                        std::string_view member);

// Connecting to the bus failed with `errnoValue` (positive).
Error classifyConnectError(const BusChoice& bus, int errnoValue);

// A reply that does not match the API (wrong signature or shape).
Error malformedReply(std::string_view member, std::string_view why);

int exitCodeFor(const Error& error);

} // namespace memqos::ctl

// SPDX-License-Identifier: Apache-2.0
#pragma once
// A state file (assignment, instance record) that could not be written or
// removed: said in the journal at error level and answered to the caller as
// org.memqos1.Error.StateWriteFailed. The stores write atomically (temp
// file, fsync, rename), so the file as it was is still there.

#include "api_error.hpp"

#include "memqos/io/log.hpp"
#include "memqos/util/result.hpp"

#include <string>

namespace memqos::daemon {

// `what`: the change refused, "store the assignment of nginx.service";
// `error.what`: "<path>: <strerror>" from the store; `outcome`: what that
// leaves, when not simply nothing.
inline ApiError stateWriteFailed(
    const std::string& what, const Error& error,
    const std::string& outcome = "nothing was changed and the state file as it was is kept") {
    log::error("Cannot {WHAT}: {ERROR}; {OUTCOME}", "WHAT", what, "ERROR", error.what, "OUTCOME",
               outcome);
    return apiError("StateWriteFailed", "cannot " + what + ": " + error.what + "; " + outcome +
                                            "; free space in the state directory or make it "
                                            "writable, then retry");
}

// The undoing of a change (after systemd or libvirt refused it) could not
// be stored: said at error level; the returned text is for the reply.
inline std::string rollbackFailed(const std::string& id, const Error& error,
                                  const std::string& consequence) {
    log::error("Cannot roll back the stored state of {WORKLOAD}: {ERROR}; {CONSEQUENCE}",
               "WORKLOAD", id, "ERROR", error.what, "CONSEQUENCE", consequence);
    return "; rolling back its stored state failed too: " + error.what + "; " + consequence;
}

} // namespace memqos::daemon

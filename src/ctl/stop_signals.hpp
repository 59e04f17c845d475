// SPDX-License-Identifier: Apache-2.0
#pragma once
// SIGINT and SIGTERM for memqosctl's loops (monitor, top): blocked and read
// from a signalfd, so a loop sees them between its steps, never inside a bus
// call, and exits 0.

#include "memqos/io/fd.hpp"
#include "memqos/util/result.hpp"

namespace memqos::ctl {

class StopSignals {
public:
    // Blocks both signals for the process and opens the signalfd. Error:
    // "cannot block signals: ..." or "signalfd: ...".
    static Result<StopSignals> block();

    int fd() const { return fd_.get(); } // readable when a signal is pending
    // Waits up to timeoutMs (-1: forever) for a signal; true when one came
    // (it is consumed). EINTR counts as no signal.
    bool wait(int timeoutMs) const;

private:
    explicit StopSignals(int fd) : fd_(fd) {}
    io::Fd fd_; // move-only, closed with this
};

} // namespace memqos::ctl

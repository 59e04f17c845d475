// SPDX-License-Identifier: Apache-2.0
#pragma once
// SIGINT and SIGTERM for memqosctl's loops (monitor, top): blocked and read
// from a signalfd, so a loop sees them between its steps, never inside a bus
// call, and exits 0.

#include "memqos/util/result.hpp"

namespace memqos::ctl {

class StopSignals {
public:
    // Blocks both signals for the process and opens the signalfd. Error:
    // "cannot block signals: ..." or "signalfd: ...".
    static Result<StopSignals> block();

    StopSignals(StopSignals&& other) noexcept;
    StopSignals& operator=(StopSignals&&) = delete;
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;
    ~StopSignals();

    int fd() const { return fd_; } // readable when a signal is pending
    // Waits up to timeoutMs (-1: forever) for a signal; true when one came
    // (it is consumed). EINTR counts as no signal.
    bool wait(int timeoutMs) const;

private:
    explicit StopSignals(int fd) : fd_(fd) {}
    int fd_;
};

} // namespace memqos::ctl

// SPDX-License-Identifier: Apache-2.0
#include "stop_signals.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <poll.h>
#include <string>
#include <sys/signalfd.h>
#include <unistd.h>

namespace memqos::ctl {

Result<StopSignals> StopSignals::block() {
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &mask, nullptr) < 0) {
        return Error{std::errc::io_error,
                     std::string("cannot block signals: ") + std::strerror(errno)}; // NOLINT
    }
    const int fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd < 0) {
        return Error{std::errc::io_error,
                     std::string("signalfd: ") + std::strerror(errno)}; // NOLINT
    }
    return StopSignals(fd);
}

bool StopSignals::wait(int timeoutMs) const {
    pollfd pfd{fd_.get(), POLLIN, 0};
    if (poll(&pfd, 1, timeoutMs) <= 0 || (pfd.revents & POLLIN) == 0) {
        return false;
    }
    signalfd_siginfo info{};
    [[maybe_unused]] const auto n = read(fd_.get(), &info, sizeof info);
    return true;
}

} // namespace memqos::ctl

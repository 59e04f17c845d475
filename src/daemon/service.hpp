// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "options.hpp"

namespace memqos::daemon {

// Runs memqosd until SIGTERM/SIGINT: config, bus, systemd, Manager, ticks,
// sd_notify READY/STATUS/WATCHDOG, SIGHUP reload. Returns the exit code.
int runService(const Options& options);

} // namespace memqos::daemon

// SPDX-License-Identifier: Apache-2.0
#pragma once
// memqosctl monitor: subscribes to memqosd's signals and prints one line per
// event until SIGINT/SIGTERM (→ kExitOk) or until the bus goes away
// (→ kExitUnreachable).

#include "bus_client.hpp"
#include "render.hpp"

namespace memqos::ctl {

int runMonitor(BusClient& client, Format format);

// "2024-05-01T10:00:00.123+02:00" for a CLOCK_REALTIME time in µs, local time.
std::string localTimestamp(std::int64_t realtimeUsec);

} // namespace memqos::ctl

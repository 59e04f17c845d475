// SPDX-License-Identifier: Apache-2.0
#pragma once
// memqosctl top: a frame (top_view.hpp) every --delay until SIGINT/SIGTERM
// or --iterations frames (→ kExitOk). On a terminal each frame replaces the
// last (cursor home, clear screen); in batch mode (--batch, --json, or
// stdout not a terminal) frames follow one another, separated by a blank
// line, without control codes. A failed read ends it with that error's exit
// status (kExitUnreachable when memqosd is gone).

#include "bus_client.hpp"
#include "command.hpp"
#include "render.hpp"

namespace memqos::ctl {

int runTop(BusClient& client, const Command& cmd, Format format);

} // namespace memqos::ctl

// SPDX-License-Identifier: Apache-2.0
#pragma once
// memqosctl from argv to exit status: parse, connect, call, render.

#include <optional>
#include <string>
#include <vector>

namespace memqos::ctl {

// `args` excludes argv[0]; `envBusAddress` is $MEMQOS_BUS_ADDRESS. Returns
// the exit status (command.hpp: kExit*).
int runCtl(const std::vector<std::string>& args, const std::optional<std::string>& envBusAddress);

} // namespace memqos::ctl

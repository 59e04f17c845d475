// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "options.hpp"

#include <iosfwd>

namespace memqos::daemon {

// --check-config [--print]: loads the configuration as the daemon would,
// prints one line per problem to `err`, and returns kExitOk or kExitConfig.
// With --print, writes the effective configuration and the tiers every class
// would give an example workload to `out`.
int runCheckConfig(const Options& options, std::ostream& out, std::ostream& err);

} // namespace memqos::daemon

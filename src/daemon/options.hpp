// SPDX-License-Identifier: Apache-2.0
#pragma once
// memqosd's command line. Parsing is pure so it can be unit-tested; exit
// codes follow sysexits.h so scripts can tell a usage error from a bad config.

#include "memqos/util/result.hpp"

#include <optional>
#include <string>
#include <vector>

namespace memqos::daemon {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 64;       // EX_USAGE
inline constexpr int kExitUnavailable = 69; // EX_UNAVAILABLE
inline constexpr int kExitConfig = 78;      // EX_CONFIG

enum class Mode { Run, CheckConfig, Help, Version };

struct Options {
    Mode mode = Mode::Run;
    std::optional<std::string> configFile; // default /etc/memqos/memqosd.conf
    bool dropIns = true;
    bool print = false;                     // --print: effective config and tiers
    bool dryRun = false;
    std::optional<std::string> cgroupRoot;
    std::optional<std::string> procRoot;
    std::optional<std::string> stateDir;
    std::optional<std::string> runtimeDir;
    std::optional<std::string> busAddress;
    std::string exampleRequest = "256M";
    std::string exampleLimit = "1G";
};

Result<Options> parseOptions(const std::vector<std::string>& args);
const char* usageText();

} // namespace memqos::daemon

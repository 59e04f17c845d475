// SPDX-License-Identifier: Apache-2.0
#pragma once
// Value parsers and formatters for memqosd.conf. Pure functions on
// std::string_view: they never throw, use std::from_chars only, and return an
// Error whose `what` says why and what was expected, e.g.
// "not a size (expected e.g. 512M, 2G, 1.5G)". The key and file are added by
// the validator. Leading and trailing blanks (space, tab) are ignored.
//
// Every formatX is the inverse of its parseX: parseX(formatX(v)) == v for
// every v that parseX can return.
//
// Syntax, shared by all numbers: decimal digits with an optional fraction
// ("1.5"); no sign, exponent, hex, "inf" or "nan".
//
//  size       N[unit], unit K M G T P E (binary: K = 1024), case-insensitive,
//             also spelled KiB MiB ... EiB or KB MB ... EB (binary too:
//             1GB = 1G); "B" or no unit = bytes. Fractions are allowed
//             ("1.5G" = 1610612736) and rounded down to a byte. A blank may
//             separate number and unit. At most 2^64-1 bytes. memqosctl reads
//             its SIZE arguments with parseSize and parseLimit too.
//  percent    N% with 0 <= N <= 100: "10%", "0.1%" (the '%' is required).
//  permyriad  a percent with at most 2 decimals, as 1/100 %: "10%" -> 1000.
//  duration   N[unit], unit us usec ms msec s sec m min h hr d (case-
//             insensitive); no unit = seconds. Rounded down to 1 us; at
//             most 365d.
//  bool       yes no true false on off 1 0 (case-insensitive).
//  ratio      a number from 1.0 to 100 ("1.5").
//  factor     0..1 as a number ("0.9", up to 4 decimals) or a percent
//             ("90%"), as permyriad: 9000.
//  "off"      where a key allows it, disables the setting (std::nullopt).

#include "memqos/config/config.hpp"
#include "memqos/core/model.hpp"
#include "memqos/core/types.hpp"
#include "memqos/util/result.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace memqos::config {

inline constexpr Usec kMaxDuration = std::chrono::hours(24 * 365);

// --- numbers and units -----------------------------------------------------

// A size; "max" is refused with a hint that it is for limits only.
Result<Bytes> parseSize(std::string_view text);
// A size, or a percent of MemTotal ("10%": percent = 1000, bytes = 0).
Result<SizeSpec> parseSizeSpec(std::string_view text);
// A size, or "max" / "infinity" for no limit (std::nullopt).
Result<Limit> parseLimit(std::string_view text);
Result<Usec> parseDuration(std::string_view text);
// A duration greater than zero (intervals).
Result<Usec> parsePositiveDuration(std::string_view text);
// "10%" -> 10.0; at most 6 decimals.
Result<double> parsePercent(std::string_view text);
Result<std::optional<double>> parseOptionalPercent(std::string_view text);
// "10%" -> 1000; at most 2 decimals.
Result<Permyriad> parsePermyriad(std::string_view text);
Result<std::optional<Permyriad>> parseOptionalPermyriad(std::string_view text);
Result<bool> parseBool(std::string_view text);
// Ganeti's memory ratio: 1.0 <= r <= 100, at most 6 decimals.
Result<double> parseRatio(std::string_view text);
// Kubernetes' throttling factor: "0.9" or "90%" -> 9000, or "off".
Result<std::optional<Permyriad>> parseFactor(std::string_view text);
// A whole number in [min, max].
Result<std::int64_t> parseInt(std::string_view text, std::int64_t min, std::int64_t max);
// -1000..1000, "burstable" (1000 - 1000*request/MemTotal) or "keep"
// (memqos never writes its members' oom_score_adj): core::OomScoreAdjust.
Result<core::OomScoreAdjust> parseOomScoreAdjust(std::string_view text);
// An absolute path ("/..."), printable ASCII, no "." or ".." components.
Result<std::string> parseAbsolutePath(std::string_view text);
// "" (off) or an absolute path to a file (not ending in '/').
Result<std::string> parseOptionalFile(std::string_view text);
// A glob over unit names or "vm:<domain>" (fnmatch(3) syntax): non-empty,
// printable ASCII only.
Result<std::string> parseGlob(std::string_view text);

// --- enums -----------------------------------------------------------------

template <typename E>
struct EnumName {
    std::string_view name;
    E value;
};

inline constexpr std::array<EnumName<SwapCheck>, 3> kSwapCheckNames{{
    {"warn", SwapCheck::Warn},
    {"refuse", SwapCheck::Refuse},
    {"off", SwapCheck::Off},
}};
inline constexpr std::array<EnumName<WhenUnreachable>, 2> kWhenUnreachableNames{{
    {"allow", WhenUnreachable::Allow},
    {"refuse", WhenUnreachable::Refuse},
}};
inline constexpr std::array<EnumName<core::Protection>, 3> kProtectionNames{{
    {"min", core::Protection::Min},
    {"low", core::Protection::Low},
    {"none", core::Protection::None},
}};

Result<SwapCheck> parseSwapCheck(std::string_view text);         // warn|refuse|off
Result<core::Protection> parseProtection(std::string_view text); // min|low|none
Result<WhenUnreachable> parseWhenUnreachable(std::string_view text); // allow|refuse
// "" or a host name (core::validateInstanceName's rules).
Result<std::string> parseHostName(std::string_view text);

// --- names -----------------------------------------------------------------

// ^[a-z][a-z0-9_]{0,31}$. Class names become slice names
// "memqos-<name>.slice", and systemd reads '-' in a slice name as hierarchy.
bool isValidClassName(std::string_view name);
// ^[A-Za-z0-9_-]{1,32}$ (the <name> of [Rule.<name>]).
bool isValidRuleName(std::string_view name);

// --- formatters ------------------------------------------------------------

std::string formatSize(Bytes bytes);              // largest exact unit: "1G", "1536M", "0"
std::string formatSizeSpec(const SizeSpec& spec); // "10%" or a size
std::string formatLimit(const Limit& limit);      // "max" or a size
std::string formatDuration(Usec duration);        // largest exact unit: "2s", "500ms", "1min"
std::string formatPercent(double percent);        // "10%", "0.1%"
std::string formatOptionalPercent(const std::optional<double>& percent); // or "off"
std::string formatPermyriad(Permyriad value); // 1000 -> "10%", 5 -> "0.05%"
std::string formatOptionalPermyriad(const std::optional<Permyriad>& value);
std::string formatBool(bool value);                               // "yes" / "no"
std::string formatRatio(double ratio);                            // "1.0", "1.5"
std::string formatFactor(const std::optional<Permyriad>& factor); // "0.9", "off"
std::string formatOomScoreAdjust(const core::OomScoreAdjust& adj); // "-999", "burstable", "keep"
std::string_view formatSwapCheck(SwapCheck value);
std::string_view formatProtection(core::Protection value);
std::string_view formatWhenUnreachable(WhenUnreachable value);

} // namespace memqos::config

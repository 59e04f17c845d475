// SPDX-License-Identifier: Apache-2.0
#pragma once
// Sizes on memqosctl's command line and in its tables.
//
// The command line's sizes are read by the config's parser
// (include/memqos/config/values.hpp: parseSize, parseLimit), so memqosctl and
// memqosd.conf accept the same forms (README, "Configuration").

#include "memqos/core/types.hpp"
#include "memqos/util/result.hpp"

#include <string>
#include <string_view>

namespace memqos::ctl {

enum class AllowMax : bool { No = false, Yes = true };

// config::parseSize, or config::parseLimit when allowMax is Yes ("max" and
// "infinity" give kNoLimit). On the bus UINT64_MAX spells "max", so a number
// that comes to it is refused as too large rather than sent by accident.
// Never throws; an error's `what` is "bad size 'TEXT': " and the parser's
// reason.
Result<Bytes> parseSize(std::string_view text, AllowMax allowMax = AllowMax::No);

// Human-readable size for tables: "0", "512B", "256M", "1.5G", "max" for
// kNoLimit. Exact multiples print without decimals; others are rounded to one
// decimal (a trailing ".0" is dropped).
std::string formatSize(Bytes bytes);

} // namespace memqos::ctl

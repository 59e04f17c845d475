// SPDX-License-Identifier: Apache-2.0
#pragma once
// Sizes on memqosctl's command line and in its tables.
//
// NOTE: a deliberately small duplicate of the config's size parser
// (include/memqos/config/values.hpp): the CLI accepts the same spellings
// (bytes, K/M/G/T binary suffixes, "1.5G", "max" for limits) but must not pull
// in the config layer. Merge the two once the config parser's API settles.

#include "memqos/core/types.hpp"
#include "memqos/util/result.hpp"

#include <string>
#include <string_view>

namespace memqos::ctl {

enum class AllowMax : bool { No = false, Yes = true };

// Parses "4096", "512K", "256M", "1.5G", "2T" (binary: K = 1024; suffix
// case-insensitive, an optional trailing "B"/"iB" is accepted: "1GiB").
// A fraction needs a suffix and at most 6 decimals; the result is rounded
// down to whole bytes. "max" gives kNoLimit when allowMax is Yes. Never
// throws; an error's `what` quotes the input and says what is accepted.
Result<Bytes> parseSize(std::string_view text, AllowMax allowMax = AllowMax::No);

// Human-readable size for tables: "0", "512B", "256M", "1.5G", "max" for
// kNoLimit. Exact multiples print without decimals; others are rounded to one
// decimal (a trailing ".0" is dropped).
std::string formatSize(Bytes bytes);

} // namespace memqos::ctl

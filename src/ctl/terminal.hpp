// SPDX-License-Identifier: Apache-2.0
#pragma once
// The decisions systemd's tools make about the terminal, pure (the caller
// reads the environment and isatty): whether to use colour, which pager to
// run and with what $LESS. Modelled on systemd's terminal-util.c and pager.c.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::ctl {

// Whether to print colour (top's bold headers): $SYSTEMD_COLORS when set
// (a boolean, or "16"/"256", which mean yes), overriding everything else,
// also on a pipe; else no with $NO_COLOR non-empty or TERM=dumb; else yes
// on a terminal. nullopt = the variable is unset.
bool colorsWanted(const std::optional<std::string>& systemdColors,
                  const std::optional<std::string>& noColor,
                  const std::optional<std::string>& term, bool terminal);

// The pager command from $SYSTEMD_PAGER, else $PAGER: nullopt for no pager
// (the one that is set is empty or "cat"); an empty vector for the default
// (less, else more); else its words (split at blanks, no quoting).
std::optional<std::vector<std::string>> pagerCommand(const std::optional<std::string>& systemdPager,
                                                     const std::optional<std::string>& pager);

// $LESS for the pager: $SYSTEMD_LESS when set, else "FRSXMK", as systemd
// sets it (quit if one screen, raw colour codes, chop long lines, no
// termcap init, verbose prompt, quit on ^C).
std::string lessOptions(const std::optional<std::string>& systemdLess);

// A --legend=, $SYSTEMD_COLORS-style boolean: yes/no, true/false, on/off,
// 1/0, y/n, t/f (any case); nullopt for anything else.
std::optional<bool> parseBoolean(std::string_view s);

} // namespace memqos::ctl

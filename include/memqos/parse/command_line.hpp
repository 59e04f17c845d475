// SPDX-License-Identifier: Apache-2.0
#pragma once
// Command lines through getopt_long(3), as systemd's tools read theirs, for
// every memqos program: "--opt=value" and "--opt value" are the same, a
// unique prefix of a long option is accepted ("--conf" for "--config"), "--"
// ends the options, and options and operands may come in any order (GNU
// permutation; POSIXLY_CORRECT in the environment turns it off, as for every
// GNU tool). The errors use glibc's own wording, so the programs read like
// the rest of the system; the caller prints them as
//   PROGRAM: unrecognized option '--foo'
//   Try 'PROGRAM --help'.
// and exits 64 (EX_USAGE).
//
// getopt_long keeps its state in globals (optind, optarg): call this from one
// thread at a time (programs parse their options once, in main()).

#include "memqos/util/result.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::parse {

// Required: a non-empty value ("--config=" is a usage error: no option of
// ours means anything by an empty one).
enum class OptionArg { None, Required };

struct OptionSpec {
    const char* name; // long name without "--"
    OptionArg arg = OptionArg::None;
    // What parseCommandLine reports for the option: a letter for an option
    // that also has a short form (set `shortName` to the same letter), else
    // any value from 256 on.
    int id = 0;
    char shortName = 0; // e.g. 'h' for -h; 0 = long only
    // --help, --version: nothing after it is looked at (systemd's tools act
    // on them at once), so "--help --bad" shows the help.
    bool stops = false;
};

struct ParsedOption {
    int id = 0;
    std::string name;  // "--config" as the option table spells it, for messages
    std::string value; // the argument of an OptionArg::Required option
};

struct CommandLine {
    std::vector<ParsedOption> options; // in command-line order
    std::vector<std::string> operands; // non-options, and everything after "--"
};

// `args` without argv[0]. Errors (std::errc::invalid_argument), in glibc's
// words:
//   "unrecognized option '--foo'"          (also for "--foo=1")
//   "invalid option -- 'x'"
//   "option '--config' requires an argument"
//   "option '--config' needs a non-empty value"
//   "option '--print' doesn't allow an argument"
//   "option '--d' is ambiguous; possibilities: '--dry-run' '--drop'"
Result<CommandLine> parseCommandLine(const std::vector<std::string>& args,
                                     std::span<const OptionSpec> specs);

// "Try 'PROGRAM --help'.": the line after a usage error.
std::string helpHint(std::string_view program);

} // namespace memqos::parse

// SPDX-License-Identifier: Apache-2.0
#include "memqos/parse/command_line.hpp"

#include <algorithm>
#include <getopt.h>

namespace memqos::parse {
namespace {

const OptionSpec* byId(std::span<const OptionSpec> specs, int id) {
    for (const auto& s : specs)
        if (s.id == id)
            return &s;
    return nullptr;
}

// "--name=value" -> "name".
std::string_view longName(std::string_view word) {
    word.remove_prefix(2);
    return word.substr(0, word.find('='));
}

// getopt_long returned '?' for `word` (the argument it was looking at) with
// optopt `opt`: say why, as glibc would have printed it (opterr is 0 so
// that nothing is printed from here).
std::string whyRejected(std::span<const OptionSpec> specs, std::string_view word, int opt) {
    const bool isLong = word.starts_with("--");
    if (isLong && opt != 0) {
        // A known option without an argument, given one ("--print=x").
        if (const OptionSpec* s = byId(specs, opt))
            return "option '--" + std::string(s->name) + "' doesn't allow an argument";
    }
    if (!isLong) {
        return "invalid option -- '" + std::string(1, static_cast<char>(opt)) + "'";
    }
    const std::string_view name = longName(word);
    std::string matches;
    int count = 0;
    for (const auto& s : specs) {
        if (std::string_view(s.name).starts_with(name)) {
            matches += (count++ == 0 ? "" : " ") + std::string("'--") + s.name + "'";
        }
    }
    if (count > 1 && !name.empty())
        return "option '--" + std::string(name) + "' is ambiguous; possibilities: " + matches;
    return "unrecognized option '--" + std::string(name) + "'";
}

} // namespace

Result<CommandLine> parseCommandLine(const std::vector<std::string>& args,
                                     std::span<const OptionSpec> specs) {
    // getopt_long permutes argv: hand it copies.
    std::vector<std::string> words;
    words.reserve(args.size() + 1);
    words.emplace_back("memqos");
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    argv.reserve(words.size() + 1);
    for (auto& w : words)
        argv.push_back(w.data());
    argv.push_back(nullptr);

    // ':' first: a missing argument returns ':' (not '?') and nothing is
    // printed.
    std::string shortOptions = ":";
    std::vector<option> longOptions;
    for (const auto& s : specs) {
        const int hasArg = s.arg == OptionArg::Required ? required_argument : no_argument;
        longOptions.push_back(option{s.name, hasArg, nullptr, s.id});
        if (s.shortName != 0) {
            shortOptions += s.shortName;
            if (s.arg == OptionArg::Required)
                shortOptions += ':';
        }
    }
    longOptions.push_back(option{nullptr, 0, nullptr, 0});

    const int argc = static_cast<int>(words.size());
    optind = 0; // glibc: 0 starts over, also after an earlier parse
    opterr = 0;
    CommandLine out;
    for (;;) {
        const int c =
            getopt_long(argc, argv.data(), shortOptions.c_str(), longOptions.data(), nullptr);
        if (c == -1)
            break;
        // The argument getopt_long just used: optind is past it.
        const std::string_view word =
            optind > 0 && optind <= argc ? argv[static_cast<std::size_t>(optind - 1)] : "";
        if (c == '?')
            return invalid(whyRejected(specs, word, optopt));
        const OptionSpec* s = byId(specs, c == ':' ? optopt : c);
        if (s == nullptr) // a short option we did not ask for: impossible
            return invalid("invalid option -- '" + std::string(1, static_cast<char>(c)) + "'");
        if (c == ':') {
            if (word.starts_with("--"))
                return invalid("option '--" + std::string(s->name) + "' requires an argument");
            return invalid("option requires an argument -- '" + std::string(1, s->shortName) + "'");
        }
        std::string name = "--" + std::string(s->name);
        std::string value = optarg != nullptr ? optarg : "";
        if (s->arg == OptionArg::Required && value.empty())
            return invalid("option '" + name + "' needs a non-empty value");
        out.options.push_back(ParsedOption{s->id, std::move(name), std::move(value)});
        if (s->stops)
            return out;
    }
    for (int i = optind; i < argc; ++i)
        out.operands.emplace_back(argv[static_cast<std::size_t>(i)]);
    return out;
}

std::string helpHint(std::string_view program) {
    return "Try '" + std::string(program) + " --help'.";
}

} // namespace memqos::parse

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reads memqosd.conf and its drop-ins with inih's C API into ConfigEntry
// lists and validates them (config::validateConfig).
//
// What packaged inih (Debian 12: libinih1 r55) does, and what we do about it:
//  - the handler gets no line numbers (INI_HANDLER_LINENO=0): we feed inih
//    through our own line reader and count, so every entry carries the line
//    of its key and of its section header (ConfigEntry::line, sectionLine);
//  - an indented line after Key=value continues that value (the handler is
//    called again with the same key, so the last line would silently win):
//    refused here as a syntax error;
//  - "; comment" after a value is stripped only when a blank precedes the
//    ';' ("a;b" stays); '#' starts a comment only at the beginning of a line;
//  - lines longer than INI_MAX_LINE - 3 = 197 bytes are split by inih into
//    two lines (the value is silently truncated and the rest parsed as a new
//    line): refused here before inih sees them;
//  - section names longer than 49 bytes are silently truncated: refused;
//  - NUL bytes end inih's line early: refused;
//  - "Key: value" is accepted like "Key=value"; a UTF-8 BOM and CRLF line
//    ends are accepted; "[ Name ]" is the section " Name " (not trimmed).

#include "memqos/config/config.hpp"
#include "memqos/util/result.hpp"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::io {

// The one place the default configuration path is defined: meson passes
// MEMQOS_CONFIG_FILE as <sysconfdir>/memqos/memqosd.conf, so an install and
// its programs agree (/etc/memqos/memqosd.conf for prefix /usr).
#ifndef MEMQOS_CONFIG_FILE
#error "MEMQOS_CONFIG_FILE is not defined (meson.build passes it)"
#endif
inline constexpr std::string_view kDefaultConfigFile = MEMQOS_CONFIG_FILE;
// Longest line inih r55 reads whole, without its "\r\n" / "\n".
inline constexpr std::size_t kMaxConfigLineBytes = 197;
inline constexpr std::size_t kMaxConfigFileBytes = std::size_t{1} << 20;

// Parses INI text; `fileName` is copied into every entry. Errors
// (invalid_argument) read "FILE:LINE: syntax error (...)",
// "FILE:LINE: line too long (...)", "FILE:LINE: indented continuation lines
// are not supported (...)". Never throws.
Result<std::vector<config::ConfigEntry>> parseIniText(std::string_view text,
                                                      const std::string& fileName);

// Reads and parses one file. A missing file is an Error with
// std::errc::no_such_file_or_directory; other I/O errors carry their errno;
// syntax errors are as for parseIniText. No permission checks (loadConfig
// does them).
Result<std::vector<config::ConfigEntry>> readIniFile(const std::filesystem::path& path);

struct LoadOptions {
    // Default kDefaultConfigFile, which may be missing (the embedded defaults
    // apply). A file given here must exist.
    std::optional<std::filesystem::path> mainFile;
    // Default: mainFile + ".d". Missing is fine. Its "*.conf" files (not
    // starting with '.') are read after the main file in lexical (byte)
    // order; later files override earlier ones key by key.
    std::optional<std::filesystem::path> dropinDir;
    bool dropIns = true; // false: --no-drop-ins
    // Refuse files (and the drop-in directory) not owned by root or by the
    // user running memqosd. Files writable by group or others (mode & 022)
    // are refused regardless.
    bool requireRootOwned = true;
    // Unknown sections/keys are errors (--check-config).
    bool strict = false;
};

struct LoadedConfig {
    // Every problem: files that could not be read or were refused (Error,
    // with file and line where known, and then none of that file's entries
    // apply) followed by the validator's.
    config::Validated validated;
    // The files whose entries were applied, in order.
    std::vector<std::string> files;
};

// Never throws; all failures are problems in `validated`.
LoadedConfig loadConfig(const LoadOptions& options = {});

} // namespace memqos::io

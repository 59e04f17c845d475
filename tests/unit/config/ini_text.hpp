// SPDX-License-Identifier: Apache-2.0
#pragma once
// A minimal INI splitter for unit tests, which may not link inih: enough for
// renderConfig's output and hand-written snippets ("[S]", "K=V", "#"/";"
// comment lines, blank lines). The real reader is io::parseIniText, tested
// in tests/cli/test_config_loader.cpp.

#include "memqos/config/config.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace memqos::config::testing {

inline std::string_view trimmed(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

inline std::vector<ConfigEntry> splitIni(std::string_view text,
                                         const std::string& file = "test.conf") {
    std::vector<ConfigEntry> out;
    std::string section;
    while (!text.empty()) {
        std::size_t nl = text.find('\n');
        std::string_view line = trimmed(text.substr(0, nl));
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        if (line.empty() || line.front() == '#' || line.front() == ';')
            continue;
        if (line.front() == '[' && line.back() == ']') {
            section = std::string(line.substr(1, line.size() - 2));
            continue;
        }
        std::size_t eq = line.find('=');
        if (eq == std::string_view::npos)
            continue;
        out.push_back(ConfigEntry{file, section, std::string(trimmed(line.substr(0, eq))),
                                  std::string(trimmed(line.substr(eq + 1)))});
    }
    return out;
}

// The value renderConfig prints for [section] key, or "<absent>".
inline std::string renderedValue(const Config& c, std::string_view section, std::string_view key) {
    for (const auto& e : splitIni(renderConfig(c)))
        if (e.section == section && e.key == key)
            return e.value;
    return "<absent>";
}

} // namespace memqos::config::testing

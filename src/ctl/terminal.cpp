// SPDX-License-Identifier: Apache-2.0
#include "terminal.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace memqos::ctl {

std::optional<bool> parseBoolean(std::string_view s) {
    std::string lower(s);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    static constexpr std::array<std::string_view, 6> kYes{"1", "yes", "y", "true", "t", "on"};
    static constexpr std::array<std::string_view, 6> kNo{"0", "no", "n", "false", "f", "off"};
    if (std::find(kYes.begin(), kYes.end(), lower) != kYes.end()) {
        return true;
    }
    if (std::find(kNo.begin(), kNo.end(), lower) != kNo.end()) {
        return false;
    }
    return std::nullopt;
}

bool colorsWanted(const std::optional<std::string>& systemdColors,
                  const std::optional<std::string>& noColor,
                  const std::optional<std::string>& term, bool terminal) {
    if (systemdColors) {
        if (*systemdColors == "16" || *systemdColors == "256") {
            return true;
        }
        if (auto b = parseBoolean(*systemdColors)) {
            return *b;
        }
        // Anything else: systemd ignores it, and so do we.
    }
    if (noColor && !noColor->empty()) {
        return false;
    }
    return terminal && !(term && *term == "dumb");
}

std::optional<std::vector<std::string>> pagerCommand(const std::optional<std::string>& systemdPager,
                                                     const std::optional<std::string>& pager) {
    const std::optional<std::string>& chosen = systemdPager ? systemdPager : pager;
    if (!chosen) {
        return std::vector<std::string>{};
    }
    std::vector<std::string> words;
    std::string word;
    for (const char c : *chosen) {
        if (c == ' ' || c == '\t' || c == '\n') {
            if (!word.empty()) {
                words.push_back(std::move(word));
                word.clear();
            }
        } else {
            word += c;
        }
    }
    if (!word.empty()) {
        words.push_back(std::move(word));
    }
    if (words.empty() || (words.size() == 1 && words[0] == "cat")) {
        return std::nullopt;
    }
    return words;
}

std::string lessOptions(const std::optional<std::string>& systemdLess) {
    return systemdLess ? *systemdLess : std::string("FRSXMK");
}

} // namespace memqos::ctl

// SPDX-License-Identifier: Apache-2.0
#include "table.hpp"

#include <algorithm>
#include <cassert>

namespace memqos::ctl {

std::size_t displayWidth(const std::string& s) {
    return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U;
    }));
}

void Table::addRow(std::vector<std::string> cells) {
    assert(cells.size() == columns_.size());
    rows_.push_back(std::move(cells));
}

std::string Table::render(Legend legend) const {
    std::vector<std::size_t> widths;
    widths.reserve(columns_.size());
    // A hidden header (--no-legend) does not widen its column.
    for (const auto& c : columns_) {
        widths.push_back(legend == Legend::Show ? displayWidth(c.header) : 0);
    }
    for (const auto& row : rows_) {
        for (std::size_t i = 0; i < row.size(); ++i) {
            widths[i] = std::max(widths[i], displayWidth(row[i]));
        }
    }

    std::string out;
    auto emit = [&](const std::vector<std::string>& cells) {
        std::string line;
        for (std::size_t i = 0; i < cells.size(); ++i) {
            const bool last = i + 1 == cells.size();
            const std::size_t pad = widths[i] - displayWidth(cells[i]);
            if (i != 0) {
                line += "  ";
            }
            if (columns_[i].align == Align::Right) {
                line.append(pad, ' ');
                line += cells[i];
            } else {
                line += cells[i];
                if (!last) {
                    line.append(pad, ' ');
                }
            }
        }
        // A left-aligned empty last cell would leave blanks behind.
        while (!line.empty() && line.back() == ' ') {
            line.pop_back();
        }
        out += line;
        out += '\n';
    };

    if (legend == Legend::Show) {
        std::vector<std::string> header;
        header.reserve(columns_.size());
        for (const auto& c : columns_) {
            header.push_back(c.header);
        }
        emit(header);
    }
    for (const auto& row : rows_) {
        emit(row);
    }
    return out;
}

std::string renderKeyValues(const std::vector<std::pair<std::string, std::string>>& lines) {
    std::size_t width = 0;
    for (const auto& [k, v] : lines) {
        width = std::max(width, displayWidth(k) + 1);
    }
    std::string out;
    for (const auto& [k, v] : lines) {
        out += k;
        out += ':';
        out.append(width - displayWidth(k) - 1 + 2, ' ');
        out += v;
        out += '\n';
    }
    return out;
}

} // namespace memqos::ctl

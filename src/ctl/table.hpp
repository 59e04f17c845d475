// SPDX-License-Identifier: Apache-2.0
#pragma once
// Aligned text tables for memqosctl's human output: a header row in capitals,
// columns separated by two spaces, the last column not padded (no trailing
// blanks). Width is counted in UTF-8 code points, so non-ASCII names align.

#include <string>
#include <vector>

namespace memqos::ctl {

enum class Align { Left, Right };

// Legend::Hide (--no-legend): a table without its header row, and the
// callers leave out their footers and "No ..." lines, as systemctl does.
enum class Legend : bool { Hide = false, Show = true };

class Table {
public:
    struct Column {
        std::string header;
        Align align = Align::Left;
    };

    explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

    // A row must have one cell per column (asserted).
    void addRow(std::vector<std::string> cells);
    std::size_t rows() const { return rows_.size(); }
    std::string render(Legend legend = Legend::Show) const;

private:
    std::vector<Column> columns_;
    std::vector<std::vector<std::string>> rows_;
};

// Number of UTF-8 code points in `s` (continuation bytes are not counted).
std::size_t displayWidth(const std::string& s);

// Key/value lines ("Memory total:  16G"), keys padded to the longest one.
std::string renderKeyValues(const std::vector<std::pair<std::string, std::string>>& lines);

} // namespace memqos::ctl

// SPDX-License-Identifier: Apache-2.0
#include "memqos/parse/text.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

namespace memqos::parse::text {

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && isSpace(s.front())) {
        s.remove_prefix(1);
    }
    while (!s.empty() && isSpace(s.back())) {
        s.remove_suffix(1);
    }
    return s;
}

namespace {

char asciiLower(char c) noexcept {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

} // namespace

bool equalsIgnoreCase(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (asciiLower(a[i]) != asciiLower(b[i])) {
            return false;
        }
    }
    return true;
}

std::size_t editDistance(std::string_view a, std::string_view b) {
    return editDistanceAtMost(a, b, std::numeric_limits<std::size_t>::max());
}

std::size_t editDistanceAtMost(std::string_view a, std::string_view b, std::size_t limit) {
    // Each edit changes the length by at most one, and no distance exceeds
    // the longer length.
    const std::size_t gap = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
    if (gap > limit) {
        return limit + 1;
    }
    const std::size_t band = std::min(limit, std::max(a.size(), b.size()));
    // Three rows of the Wagner–Fischer table: the previous two (for a
    // transposition) and the current one, on the stack for a word as short
    // as a key name. Only the cells with |i - j| <= band are computed: the
    // others are more than `band` (at least |i - j|) and read as band + 1,
    // so the cells at most `band` come out exact.
    const std::size_t width = b.size() + 1;
    const std::size_t above = band + 1;
    constexpr std::size_t kShortWidth = 64;
    std::array<std::size_t, 3 * kShortWidth> shortRows;
    std::vector<std::size_t> longRows;
    std::size_t* before = shortRows.data();
    if (width > kShortWidth) {
        longRows.resize(3 * width);
        before = longRows.data();
    }
    std::size_t* prev = before + width;
    std::size_t* cur = prev + width;
    // Row 0, as far as row 1 reads it. Every later row writes the cells
    // the next one reads (cur[lo - 1] to cur[hi + 1]) before they are read.
    for (std::size_t j = 0; j <= std::min(b.size(), band); ++j) {
        prev[j] = j;
    }
    if (band < b.size()) {
        prev[band + 1] = above;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        const std::size_t lo = i > band ? i - band : 1;
        const std::size_t hi = std::min(b.size(), i + band);
        cur[lo - 1] = lo == 1 ? i : above;
        std::size_t rowMin = cur[lo - 1];
        const char ai = asciiLower(a[i - 1]);
        for (std::size_t j = lo; j <= hi; ++j) {
            const char bj = asciiLower(b[j - 1]);
            std::size_t d = prev[j - 1] + (ai == bj ? 0 : 1);
            if (prev[j] + 1 < d) {
                d = prev[j] + 1;
            }
            if (cur[j - 1] + 1 < d) {
                d = cur[j - 1] + 1;
            }
            if (i > 1 && j > 1 && ai == asciiLower(b[j - 2]) && asciiLower(a[i - 2]) == bj &&
                before[j - 2] + 1 < d) {
                d = before[j - 2] + 1;
            }
            cur[j] = d;
            if (d < rowMin) {
                rowMin = d;
            }
        }
        if (hi < b.size()) {
            cur[hi + 1] = above; // the next row reads it as prev[j]
        }
        // No cell of a later row is below this row's minimum (a
        // transposition's cell before[j-2] + 1 is at least prev[j-1]).
        if (rowMin > band) {
            return limit + 1;
        }
        std::size_t* const oldBefore = before;
        before = prev;
        prev = cur;
        cur = oldBefore;
    }
    return prev[b.size()] > band ? limit + 1 : prev[b.size()];
}

bool isBlank(std::string_view s) noexcept {
    return trim(s).empty();
}

std::string_view trimText(std::string_view s) noexcept {
    auto blank = [](char c) { return c == '\n' || isSpace(c); };
    while (!s.empty() && blank(s.front())) {
        s.remove_prefix(1);
    }
    while (!s.empty() && blank(s.back())) {
        s.remove_suffix(1);
    }
    return s;
}

bool isBlankText(std::string_view s) noexcept {
    return trimText(s).empty();
}

bool Lines::next(std::string_view& line) noexcept {
    if (done_) {
        return false;
    }
    const auto nl = rest_.find('\n');
    if (nl == std::string_view::npos) {
        // Last line. An empty remainder means the text ended with '\n' (or
        // was empty): that is not one more line.
        done_ = true;
        if (rest_.empty()) {
            return false;
        }
        line = rest_;
        rest_ = {};
    } else {
        line = rest_.substr(0, nl);
        rest_.remove_prefix(nl + 1);
    }
    ++number_;
    return true;
}

std::optional<std::string_view> Tokenizer::next() noexcept {
    while (!rest_.empty() && isSpace(rest_.front())) {
        rest_.remove_prefix(1);
    }
    if (rest_.empty()) {
        return std::nullopt;
    }
    std::size_t n = 0;
    while (n < rest_.size() && !isSpace(rest_[n])) {
        ++n;
    }
    const auto token = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return token;
}

bool Tokenizer::atEnd() const noexcept {
    return isBlank(rest_);
}

std::string_view Tokenizer::rest() const noexcept {
    auto r = rest_;
    while (!r.empty() && isSpace(r.front())) {
        r.remove_prefix(1);
    }
    return r;
}

std::vector<std::string_view> split(std::string_view line) {
    std::vector<std::string_view> out;
    Tokenizer tok(line);
    while (auto t = tok.next()) {
        out.push_back(*t);
    }
    return out;
}

std::optional<KeyValue> splitKeyValue(std::string_view line) noexcept {
    auto two = splitExact<2>(line);
    if (!two) {
        return std::nullopt;
    }
    return KeyValue{(*two)[0], (*two)[1]};
}

std::optional<KeyValue> splitAssignment(std::string_view token) noexcept {
    const auto eq = token.find('=');
    if (eq == std::string_view::npos || eq == 0) {
        return std::nullopt;
    }
    return KeyValue{token.substr(0, eq), token.substr(eq + 1)};
}

std::string printable(std::string_view s, std::size_t maxBytes) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    std::size_t shown = 0;
    for (const char c : s) {
        if (shown == maxBytes) {
            out += "...";
            break;
        }
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7f && c != '\\' && c != '\'') {
            out += c;
        } else {
            out += "\\x";
            out += kHex[u >> 4U];
            out += kHex[u & 0xfU];
        }
        ++shown;
    }
    return out;
}

std::string bounded(std::string_view s) {
    return printable(s, kMaxShownInput);
}

std::string quote(std::string_view token) {
    return "'" + printable(token, kMaxQuotedToken) + "'";
}

Error fieldError(std::string_view field, std::string_view message) {
    std::string what(field);
    if (!what.empty()) {
        what += ": ";
    }
    what += message;
    return invalid(std::move(what));
}

Error lineError(std::size_t line, std::string_view message) {
    std::string what = "line " + std::to_string(line) + ": ";
    what += message;
    return invalid(std::move(what));
}

namespace {

Error numberError(std::string_view field, std::string_view problem, std::string_view token) {
    if (token.empty()) {
        return fieldError(field, "missing value");
    }
    std::string msg(problem);
    msg += ": ";
    msg += quote(token);
    return fieldError(field, msg);
}

template <typename T>
Result<T> toInteger(std::string_view token, std::string_view field) {
    T value{};
    const char* first = token.data();
    const char* last = token.data() + token.size();
    const auto [ptr, ec] = std::from_chars(first, last, value, 10);
    if (ec == std::errc::result_out_of_range) {
        return numberError(field, "out of range", token);
    }
    // from_chars stops at the first byte that is not a digit: "12abc" parses
    // 12 and must still be rejected.
    if (ec != std::errc{} || ptr != last || token.empty()) {
        return numberError(field, "not a number", token);
    }
    return value;
}

} // namespace

Result<std::uint64_t> toU64(std::string_view token, std::string_view field) {
    return toInteger<std::uint64_t>(token, field);
}

Result<std::int32_t> toI32(std::string_view token, std::string_view field) {
    return toInteger<std::int32_t>(token, field);
}

Result<double> toDouble(std::string_view token, std::string_view field) {
    double value = 0;
    const char* first = token.data();
    const char* last = token.data() + token.size();
    // from_chars accepts a leading '-' but, unlike strtod, no '+', no
    // leading whitespace and no "0x" prefix, and it ignores the C locale.
    const auto [ptr, ec] = std::from_chars(first, last, value, std::chars_format::general);
    if (ec == std::errc::result_out_of_range) {
        return numberError(field, "out of range", token);
    }
    if (ec != std::errc{} || ptr != last || token.empty()) {
        return numberError(field, "not a number", token);
    }
    return value;
}

Result<Bytes> kibToBytes(std::uint64_t kib, std::string_view field) {
    if (kib > std::numeric_limits<Bytes>::max() / kKiB) {
        return fieldError(field, "out of range: " + std::to_string(kib) +
                                     " kB overflows 64 bits in bytes");
    }
    return kib * kKiB;
}

Result<KeyNumbers> parseKeyNumberLines(std::string_view text) {
    KeyNumbers out;
    Lines lines(text);
    std::string_view line;
    while (lines.next(line)) {
        if (isBlank(line)) {
            continue;
        }
        const auto kv = splitKeyValue(line);
        if (!kv) {
            return lineError(lines.number(), "expected 'key value'");
        }
        auto value = toU64(kv->value, printable(kv->key));
        if (!value) {
            return value.error();
        }
        if (!out.emplace(std::string(kv->key), *value).second) {
            return lineError(lines.number(), "duplicate key " + quote(kv->key));
        }
    }
    return out;
}

Result<KeyNumbers> parseKeyNumberFile(std::string_view text) {
    if (isBlankText(text)) {
        return invalid("empty input");
    }
    return parseKeyNumberLines(text);
}

} // namespace memqos::parse::text

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Checked building blocks for the kernel-text parsers: line iteration,
// whitespace tokenising without indexing, and std::from_chars number parsing
// that must consume the whole token and reports overflow. Nothing here throws
// or reads outside the given string_view.
//
// Error messages have the shape "<field>: <problem>: '<token>'", e.g.
// "MemTotal: not a number: 'abc'"; the token is quoted with non-printable bytes
// escaped (\xNN) and cut after kMaxQuotedToken characters, so garbage input
// cannot produce a garbage log line.

#include "memqos/core/types.hpp"
#include "memqos/util/result.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::parse::text {

// Whitespace inside a line: space, \t, \v, \f and \r (so CRLF files parse
// like LF files). '\n' only ever separates lines.
constexpr bool isSpace(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// ASCII case-insensitive equality (names, keys, units; no locale).
bool equalsIgnoreCase(std::string_view a, std::string_view b) noexcept;
// The number of single-character insertions, deletions, substitutions and
// transpositions of two neighbours that turn `a` into `b`, ASCII case
// ignored (optimal string alignment distance): "StalTarget" -> "StallTarget"
// is 1, "Intervla" -> "Interval" is 1, "dryrun" -> "DryRun" is 0. For
// "did you mean" suggestions.
std::size_t editDistance(std::string_view a, std::string_view b);
// editDistance(a, b) if it is at most `limit`, else limit + 1; stops as soon
// as the distance must exceed `limit`, so a long word costs little.
std::size_t editDistanceAtMost(std::string_view a, std::string_view b, std::size_t limit);

// `s` without leading and trailing whitespace (as isSpace).
std::string_view trim(std::string_view s) noexcept;
// True when `s` is empty or only whitespace (as isSpace): for one line.
bool isBlank(std::string_view s) noexcept;
// Like trim, and also strips '\n': for a whole text (single-value files).
std::string_view trimText(std::string_view s) noexcept;
// True when a whole text is empty or only whitespace and newlines.
bool isBlankText(std::string_view s) noexcept;

// Lines of a text, split on '\n'. A final newline does not produce an extra
// empty line, and a missing final newline loses nothing. The '\r' of a CRLF
// ending is left in the line; isSpace() treats it as whitespace.
class Lines {
public:
    explicit Lines(std::string_view text) noexcept : rest_(text) {}
    // Stores the next line in `line` and returns true, or returns false at
    // the end of the text.
    bool next(std::string_view& line) noexcept;
    // 1-based number of the line returned last (0 before the first).
    std::size_t number() const noexcept { return number_; }

private:
    std::string_view rest_;
    std::size_t number_ = 0;
    bool done_ = false;
};

// Whitespace-separated tokens of one line, one at a time.
class Tokenizer {
public:
    explicit Tokenizer(std::string_view line) noexcept : rest_(line) {}
    // The next non-empty token, or nullopt when only whitespace is left.
    std::optional<std::string_view> next() noexcept;
    // True when only whitespace is left.
    bool atEnd() const noexcept;
    // What is left, leading whitespace removed.
    std::string_view rest() const noexcept;

private:
    std::string_view rest_;
};

// All tokens of a line.
std::vector<std::string_view> split(std::string_view line);

// Exactly N tokens, or nullopt when the line has fewer or more. The caller
// indexes a std::array whose size the compiler knows.
template <std::size_t N>
std::optional<std::array<std::string_view, N>> splitExact(std::string_view line) noexcept {
    Tokenizer tok(line);
    std::array<std::string_view, N> out{};
    for (auto& slot : out) {
        auto t = tok.next();
        if (!t) {
            return std::nullopt;
        }
        slot = *t;
    }
    if (!tok.atEnd()) {
        return std::nullopt;
    }
    return out;
}

struct KeyValue {
    std::string_view key;
    std::string_view value;
};
// "key value": exactly two whitespace-separated tokens, else nullopt.
std::optional<KeyValue> splitKeyValue(std::string_view line) noexcept;
// "key=value" in one token: split at the first '='. nullopt without '=' or
// with an empty key; the value may be empty (number parsing then fails).
std::optional<KeyValue> splitAssignment(std::string_view token) noexcept;

// Numbers. `token` must be exactly the number: no sign for unsigned types
// (so "-1" is "not a number"), no leading '+', no whitespace, no trailing
// bytes. Overflow is an error ("out of range"). Errors name `field`.
Result<std::uint64_t> toU64(std::string_view token, std::string_view field);
Result<std::int32_t> toI32(std::string_view token, std::string_view field);
// Decimal or scientific notation; "nan"/"inf" parse (from_chars accepts
// them), so callers that need finite values must check.
Result<double> toDouble(std::string_view token, std::string_view field);

// A whole file of "key value" lines with unsigned decimal values
// (memory.stat, /proc/vmstat). Blank lines are skipped. Errors: a line that is
// not two tokens ("line 3: expected 'key value'"), a bad value
// ("anon: not a number: 'x'"), a key seen twice ("line 9: duplicate key
// 'anon'": the kernel prints each key once, so a repeat means the text is not
// what we think it is, and neither value is trusted).
using KeyNumbers = std::map<std::string, std::uint64_t, std::less<>>;
Result<KeyNumbers> parseKeyNumberLines(std::string_view text);
// The same for a whole file that must not be empty ("empty input").
Result<KeyNumbers> parseKeyNumberFile(std::string_view text);
// The value of `key`, or 0 when the kernel does not print it.
inline std::uint64_t valueOrZero(const KeyNumbers& all, std::string_view key) {
    const auto it = all.find(key);
    return it == all.end() ? 0 : it->second;
}

// kib * 1024, or an error naming `field` when that overflows 64 bits.
Result<Bytes> kibToBytes(std::uint64_t kib, std::string_view field);

inline constexpr std::size_t kMaxQuotedToken = 40;
inline constexpr std::size_t kMaxFieldName = 64;
// `s` made safe for a message: bytes outside printable ASCII, '\\' and '\''
// as \xNN, at most `maxBytes` input bytes followed by "..." if cut.
std::string printable(std::string_view s, std::size_t maxBytes = kMaxFieldName);
// 'token' as printable(token, kMaxQuotedToken), in single quotes.
std::string quote(std::string_view token);
// A longer piece of input (a name, a line, a tag) shown in an error:
// printable(s, kMaxShownInput).
inline constexpr std::size_t kMaxShownInput = 80;
std::string bounded(std::string_view s);

// Error{invalid_argument, "<field>: <message>"}, or just "<message>" when
// `field` is empty.
Error fieldError(std::string_view field, std::string_view message);
// Error{invalid_argument, "line <n>: <message>"}.
Error lineError(std::size_t line, std::string_view message);

} // namespace memqos::parse::text

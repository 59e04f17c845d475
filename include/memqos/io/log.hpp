// SPDX-License-Identifier: Apache-2.0
#pragma once
// Structured logging to journald (phosphor-logging lg2 style):
//   log::warning("Failed to apply tiers to {UNIT}: {ERROR}", "UNIT", unit, "ERROR", err.what);
// {KEY} is substituted into MESSAGE and every KEY=value is also a journal
// field; CODE_FILE/CODE_LINE/CODE_FUNC come from std::source_location (SourceLocation).
// When stderr is not connected to the journal (a terminal, a test), lines go
// to stderr as "memqosd[level]: message" instead. stderr is the journal when
// $JOURNAL_STREAM names its device and inode (what systemd sets for
// StandardError=journal), checked on every message. Thread-safe; never
// changes errno.

#include <cstdint>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace memqos::log {

enum class Level { Debug = 7, Info = 6, Notice = 5, Warning = 4, Error = 3 };

// Fixed MESSAGE_IDs (sd-id128) for events an operator may search for.
inline constexpr std::string_view kMessageKill = "4d8a0f6b9c5e4b7f8a2e1c3d5b7a9e01";
inline constexpr std::string_view kMessagePropertiesChanged = "4d8a0f6b9c5e4b7f8a2e1c3d5b7a9e02";
inline constexpr std::string_view kMessagePlacementRefused = "4d8a0f6b9c5e4b7f8a2e1c3d5b7a9e03";
inline constexpr std::string_view kMessageConfigRejected = "4d8a0f6b9c5e4b7f8a2e1c3d5b7a9e04";
// Pressure actions other than kills: reclaim, class caps (guard, throttle,
// restore), admission closed/reopened.
inline constexpr std::string_view kMessagePressureAction = "4d8a0f6b9c5e4b7f8a2e1c3d5b7a9e05";

// Where a message was logged: std::source_location where the standard
// library provides it (g++ 12). clang 14 with libstdc++ 12 has no
// __builtin_source_location, hence no std::source_location; there the same
// data come from the __builtin_FILE/LINE/FUNCTION builtins (fuzz and clang CI
// builds compile this header too).
#if defined(__cpp_lib_source_location)
using SourceLocation = std::source_location;
#else
class SourceLocation {
public:
    static constexpr SourceLocation current(const char* file = __builtin_FILE(),
                                            unsigned line = __builtin_LINE(),
                                            const char* function = __builtin_FUNCTION()) noexcept {
        SourceLocation l;
        l.file_ = file;
        l.line_ = line;
        l.function_ = function;
        return l;
    }
    // Named as std::source_location's members. NOLINTNEXTLINE(readability-identifier-naming)
    constexpr const char* file_name() const noexcept { return file_; }
    constexpr std::uint_least32_t line() const noexcept { return line_; }
    constexpr std::uint_least32_t column() const noexcept { return 0; }
    // NOLINTNEXTLINE(readability-identifier-naming)
    constexpr const char* function_name() const noexcept { return function_; }

private:
    const char* file_ = "";
    std::uint_least32_t line_ = 0;
    const char* function_ = "";
};
#endif

struct Field {
    std::string key;
    std::string value;
};

// Global settings (set once at start-up). Messages less important than the
// minimum level (default Info) are dropped. At Debug, stderr lines also carry
// every field as " KEY=value".
void setMinimumLevel(Level level);
void setIdentifier(std::string identifier); // SYSLOG_IDENTIFIER, default "memqosd"
// Send to journald even when stderr is not the journal (a program whose
// stderr belongs to its caller, e.g. a Ganeti hook); stderr only when
// journald cannot be reached.
void setAlwaysJournal(bool always);
// Whether a message at `level` would be emitted (to skip expensive arguments).
bool isEnabled(Level level);

// Journal field names: keys are uppercased, bytes outside [A-Z0-9_] become
// '_', leading '_' and digits are dropped (a leading '_' would claim a
// trusted journal field), and the result is cut to 64 bytes. Keys that end up
// empty, or name a field emit() sets itself (MESSAGE, PRIORITY,
// SYSLOG_IDENTIFIER, CODE_FILE, CODE_LINE, CODE_FUNC), are not sent: nullopt.
// Exposed for tests.
std::optional<std::string> journalFieldName(std::string_view key);

void emit(Level level, std::string_view format, std::vector<Field> fields,
          const SourceLocation& where);

namespace detail {
inline std::string toText(std::string_view s) { return std::string(s); }
inline std::string toText(const std::string& s) { return s; }
inline std::string toText(const char* s) { return s ? std::string(s) : std::string(); }
inline std::string toText(bool b) { return b ? "yes" : "no"; }
template <typename T>
    requires std::is_arithmetic_v<T>
std::string toText(T v) {
    return std::to_string(v);
}
inline void collect(std::vector<Field>&) {}
template <typename V, typename... Rest>
void collect(std::vector<Field>& out, std::string_view key, V&& value, Rest&&... rest) {
    out.push_back(Field{std::string(key), toText(std::forward<V>(value))});
    collect(out, std::forward<Rest>(rest)...);
}
} // namespace detail

// A format string with the caller's location, captured implicitly.
struct Format {
    std::string_view text;
    SourceLocation where;
    template <typename S>
    Format(const S& s, SourceLocation w = SourceLocation::current()) // NOLINT
        : text(s), where(w) {}
};

template <typename... Args>
void log(Level level, Format f, Args&&... args) {
    std::vector<Field> fields;
    detail::collect(fields, std::forward<Args>(args)...);
    emit(level, f.text, std::move(fields), f.where);
}
template <typename... Args>
void debug(Format f, Args&&... args) { log(Level::Debug, f, std::forward<Args>(args)...); }
template <typename... Args>
void info(Format f, Args&&... args) { log(Level::Info, f, std::forward<Args>(args)...); }
template <typename... Args>
void notice(Format f, Args&&... args) { log(Level::Notice, f, std::forward<Args>(args)...); }
template <typename... Args>
void warning(Format f, Args&&... args) { log(Level::Warning, f, std::forward<Args>(args)...); }
template <typename... Args>
void error(Format f, Args&&... args) { log(Level::Error, f, std::forward<Args>(args)...); }

// Pure: substitutes {KEY} in `format` with the value of the first field whose
// key is exactly KEY (unknown keys are left as written, braces included).
// Exposed for tests.
std::string substitute(std::string_view format, const std::vector<Field>& fields);

} // namespace memqos::log

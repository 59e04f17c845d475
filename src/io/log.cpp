// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/log.hpp"

#include <systemd/sd-journal.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <mutex>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

namespace memqos::log {
namespace {

constexpr std::size_t kMaxFieldNameBytes = 64; // journald's limit

constexpr std::array<std::string_view, 6> kOwnFields = {
    "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC"};

std::atomic<int> gMinimum{static_cast<int>(Level::Info)};
std::atomic<bool> gAlwaysJournal{false};

struct Shared {
    std::mutex mutex;
    std::string identifier = "memqosd";
};

Shared& shared() {
    static Shared s;
    return s;
}

std::string_view levelName(Level level) {
    switch (level) {
    case Level::Debug:
        return "debug";
    case Level::Info:
        return "info";
    case Level::Notice:
        return "notice";
    case Level::Warning:
        return "warning";
    case Level::Error:
        return "error";
    }
    return "unknown";
}

// systemd sets JOURNAL_STREAM="<st_dev>:<st_ino>" of the stream it connected
// to stdout/stderr; if stderr is still that stream, the journal reads it
// (sd_journal_stream_fd, log_get_journal_stream in systemd's log.c).
bool stderrIsJournal() {
    const char* env = std::getenv("JOURNAL_STREAM");
    if (env == nullptr) {
        return false;
    }
    const std::string_view v(env);
    const auto colon = v.find(':');
    if (colon == std::string_view::npos) {
        return false;
    }
    std::uintmax_t dev = 0;
    std::uintmax_t ino = 0;
    const auto d = std::from_chars(v.data(), v.data() + colon, dev);
    const auto i = std::from_chars(v.data() + colon + 1, v.data() + v.size(), ino);
    if (d.ec != std::errc{} || d.ptr != v.data() + colon || i.ec != std::errc{} ||
        i.ptr != v.data() + v.size()) {
        return false;
    }
    struct stat st {};
    if (::fstat(STDERR_FILENO, &st) != 0) {
        return false;
    }
    return static_cast<std::uintmax_t>(st.st_dev) == dev &&
           static_cast<std::uintmax_t>(st.st_ino) == ino;
}

// One stderr line per message: control bytes are escaped.
void appendEscaped(std::string& out, std::string_view s) {
    constexpr std::string_view kHex = "0123456789abcdef";
    for (const char c : s) {
        const auto b = static_cast<unsigned char>(c);
        if (c == '\n') {
            out += "\\n";
        } else if (b < 0x20 && c != '\t') {
            out += "\\x";
            out += kHex[b >> 4U];
            out += kHex[b & 0xfU];
        } else {
            out += c;
        }
    }
}

void writeAll(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return; // nowhere left to report it
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
}

int sendJournal(Level level, const std::string& message, const std::vector<Field>& fields,
                const SourceLocation& where, const std::string& identifier) {
    std::vector<std::string> entries;
    entries.reserve(fields.size() + kOwnFields.size());
    entries.push_back("MESSAGE=" + message);
    entries.push_back("PRIORITY=" + std::to_string(static_cast<int>(level)));
    entries.push_back("SYSLOG_IDENTIFIER=" + identifier);
    entries.push_back(std::string("CODE_FILE=") + where.file_name());
    entries.push_back("CODE_LINE=" + std::to_string(where.line()));
    entries.push_back(std::string("CODE_FUNC=") + where.function_name());
    for (const auto& f : fields) {
        if (auto name = journalFieldName(f.key)) {
            entries.push_back(*name + "=" + f.value);
        }
    }
    std::vector<iovec> iov;
    iov.reserve(entries.size());
    for (auto& e : entries) {
        // sd_journal_sendv() encodes values with newlines itself.
        iov.push_back(iovec{e.data(), e.size()});
    }
    return sd_journal_sendv(iov.data(), static_cast<int>(iov.size()));
}

void writeStderr(Level level, const std::string& message, const std::vector<Field>& fields,
                 const std::string& identifier) {
    std::string line = identifier;
    line += '[';
    line += levelName(level);
    line += "]: ";
    appendEscaped(line, message);
    if (gMinimum.load(std::memory_order_relaxed) >= static_cast<int>(Level::Debug)) {
        for (const auto& f : fields) {
            line += ' ';
            appendEscaped(line, f.key);
            line += '=';
            appendEscaped(line, f.value);
        }
    }
    line += '\n';
    writeAll(STDERR_FILENO, line);
}

} // namespace

void setMinimumLevel(Level level) {
    gMinimum.store(static_cast<int>(level), std::memory_order_relaxed);
}

void setAlwaysJournal(bool always) {
    gAlwaysJournal.store(always, std::memory_order_relaxed);
}

void setIdentifier(std::string identifier) {
    const std::lock_guard lock(shared().mutex);
    shared().identifier = std::move(identifier);
}

bool isEnabled(Level level) {
    // Lower numbers are more important (syslog priorities).
    return static_cast<int>(level) <= gMinimum.load(std::memory_order_relaxed);
}

std::optional<std::string> journalFieldName(std::string_view key) {
    std::string name;
    for (const char c : key) {
        if (c >= 'a' && c <= 'z') {
            name += static_cast<char>(c - 'a' + 'A');
        } else if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
            name += c;
        } else if (name.empty()) {
            // No leading '_' (trusted fields) and nothing that becomes one.
            continue;
        } else {
            name += '_';
        }
    }
    const auto first = name.find_first_not_of("0123456789_");
    name.erase(0, first == std::string::npos ? name.size() : first);
    if (name.size() > kMaxFieldNameBytes) {
        name.resize(kMaxFieldNameBytes);
    }
    if (name.empty()) {
        return std::nullopt;
    }
    for (const auto own : kOwnFields) {
        if (name == own) {
            return std::nullopt;
        }
    }
    return name;
}

std::string substitute(std::string_view format, const std::vector<Field>& fields) {
    std::string out;
    out.reserve(format.size());
    std::size_t i = 0;
    while (i < format.size()) {
        const auto open = format.find('{', i);
        if (open == std::string_view::npos) {
            out.append(format.substr(i));
            break;
        }
        out.append(format.substr(i, open - i));
        const auto close = format.find('}', open + 1);
        if (close == std::string_view::npos) {
            out.append(format.substr(open));
            break;
        }
        const auto key = format.substr(open + 1, close - open - 1);
        const Field* match = nullptr;
        for (const auto& f : fields) {
            if (f.key == key) {
                match = &f;
                break;
            }
        }
        if (match != nullptr) {
            out += match->value;
            i = close + 1;
        } else {
            // Not a known key: keep the '{' and look for the next one inside,
            // so "{{UNIT}" still substitutes UNIT.
            out += '{';
            i = open + 1;
        }
    }
    return out;
}

// `fields` by value as declared in log.hpp (callers build it as a temporary).
void emit(Level level, std::string_view format,
          std::vector<Field> fields, // NOLINT(performance-unnecessary-value-param)
          const SourceLocation& where) {
    if (!isEnabled(level)) {
        return;
    }
    const int savedErrno = errno;
    const std::string message = substitute(format, fields);
    {
        const std::lock_guard lock(shared().mutex);
        const auto& identifier = shared().identifier;
        // If journald refuses the datagram (e.g. too large), say it on stderr.
        const bool journal = gAlwaysJournal.load(std::memory_order_relaxed) || stderrIsJournal();
        if (!journal || sendJournal(level, message, fields, where, identifier) < 0) {
            writeStderr(level, message, fields, identifier);
        }
    }
    errno = savedErrno;
}

} // namespace memqos::log

// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/config_loader.hpp"

#include "memqos/io/fd.hpp"
#include "memqos/parse/text.hpp"

#include <ini.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>
#include <variant>

namespace memqos::io {
namespace {

static_assert(INI_HANDLER_LINENO == 0,
              "Debian's inih passes no line numbers (we count lines in our reader); this code "
              "relies on that handler signature");
static_assert(kMaxConfigLineBytes == INI_MAX_LINE - 3,
              "inih needs room for \"\\r\\n\\0\" after a line");
// inih's MAX_SECTION (ini.c, not exported): longer section names are cut.
constexpr std::size_t kMaxSectionBytes = 49;

struct ParseFailure {
    int line = 0;
    std::string reason;
};

// inih's reader and handler state. inih asks the reader for one line, calls
// the handler for the Key=value on it (if any), and only then asks for the
// next line, so `line` is the number of the line the handler is called for:
// the line numbers Debian's inih does not pass (INI_HANDLER_LINENO=0).
// precheck() makes sure every line fits inih's buffer whole, so one read is
// one line.
struct Reading {
    const std::string* file;
    std::string_view rest;           // text not yet given to inih
    int line = 0;                    // lines given to inih so far
    const std::vector<int>* headers; // lines of the "[section]" headers, ascending
    std::size_t nextHeader = 0;
    int sectionLine = 0;
    std::vector<config::ConfigEntry> entries;
};

// ini_reader: like fgets(3) over `rest`.
char* readLine(char* str, int num, void* stream) noexcept {
    auto* r = static_cast<Reading*>(stream);
    if (r->rest.empty() || num < 2)
        return nullptr;
    std::size_t n = r->rest.find('\n');
    n = n == std::string_view::npos ? r->rest.size() : n + 1;
    n = std::min(n, static_cast<std::size_t>(num - 1));
    r->rest.copy(str, n);
    str[n] = '\0';
    r->rest.remove_prefix(n);
    ++r->line;
    return str;
}

// Called by inih for every name=value; the strings live only during the call.
int onEntry(void* user, const char* section, const char* name, const char* value) noexcept {
    auto* r = static_cast<Reading*>(user);
    while (r->nextHeader < r->headers->size() && (*r->headers)[r->nextHeader] <= r->line)
        r->sectionLine = (*r->headers)[r->nextHeader++];
    r->entries.push_back(config::ConfigEntry{*r->file, section, name, value, r->line,
                                             *section != '\0' ? r->sectionLine : 0});
    return 1;
}

bool isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

// Position of the first of `chars`, or of a ';' comment after a blank, as
// inih's find_chars_or_comment().
std::size_t findCharsOrComment(std::string_view s, std::string_view chars) {
    bool wasSpace = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        // `chars` is one or two bytes: a loop, not a find() per byte.
        for (const char c : chars)
            if (s[i] == c)
                return i;
        if (wasSpace && s[i] == ';')
            return std::string_view::npos;
        wasSpace = isSpace(s[i]);
    }
    return std::string_view::npos;
}

// Refuses what inih would silently get wrong (see config_loader.hpp). It
// follows inih's line model: comments and blank lines do not end a value, a
// section header does. Appends the line numbers of the section headers to
// `headers`.
std::optional<ParseFailure> precheck(std::string_view text, std::vector<int>& headers) {
    bool afterKey = false; // inih's non-empty prev_name
    int lineno = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        ++lineno;
        std::size_t nl = text.find('\n', pos);
        std::string_view line =
            text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);

        if (line.find('\0') != std::string_view::npos)
            return ParseFailure{lineno, "contains a NUL byte"};
        if (line.size() > kMaxConfigLineBytes)
            return ParseFailure{lineno, "line too long (" + std::to_string(line.size()) +
                                            " bytes, at most " +
                                            std::to_string(kMaxConfigLineBytes) + ")"};
        if (lineno == 1 && line.substr(0, 3) == "\xEF\xBB\xBF")
            line.remove_prefix(3);

        std::string_view start = parse::text::trimText(line);
        if (start.empty() || start.front() == ';' || start.front() == '#')
            continue;
        if (afterKey && isSpace(line.front()))
            return ParseFailure{
                lineno, "indented continuation lines are not supported (write the value on one "
                        "line, or remove the indentation)"};
        if (start.front() == '[') {
            std::size_t end = findCharsOrComment(start.substr(1), "]");
            if (end != std::string_view::npos) {
                if (end > kMaxSectionBytes)
                    return ParseFailure{lineno, "section name too long (at most " +
                                                    std::to_string(kMaxSectionBytes) + " bytes)"};
                afterKey = false;
                headers.push_back(lineno);
            }
            continue; // a header without ']' is inih's syntax error
        }
        std::size_t sep = findCharsOrComment(start, "=:");
        if (sep != std::string_view::npos)
            afterKey = !parse::text::trimText(start.substr(0, sep)).empty();
    }
    return std::nullopt;
}

std::variant<std::vector<config::ConfigEntry>, ParseFailure>
parseText(std::string_view text, const std::string& fileName) {
    std::vector<int> headers;
    if (auto failure = precheck(text, headers))
        return *failure;
    // Our reader over the text already in memory (read once through the fd
    // whose owner and mode were checked): precheck saw the same bytes.
    Reading reading{&fileName, text, 0, &headers, 0, 0, {}};
    int rc = ini_parse_stream(readLine, &reading, onEntry, &reading);
    if (rc > 0)
        return ParseFailure{rc, "syntax error (expected [Section], Key=value or a # comment)"};
    if (rc < 0)
        return ParseFailure{0, "inih failed (" + std::to_string(rc) + ")"};
    return std::move(reading.entries);
}

std::string where(const std::string& file, int line) {
    return line > 0 ? file + ":" + std::to_string(line) : file;
}

struct OpenedFile {
    struct stat st {};
    std::string text;
};

struct FileFailure {
    std::errc code = std::errc::invalid_argument;
    int line = 0;
    std::string reason;
};

std::string errnoText(int err) {
    return std::generic_category().message(err);
}

// Opens, fstat()s and reads one file; the checks see the same inode we read.
std::variant<OpenedFile, FileFailure> openAndRead(const std::filesystem::path& path) {
    int raw = -1;
    do {
        raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    } while (raw < 0 && errno == EINTR);
    if (raw < 0) {
        int err = errno;
        return FileFailure{static_cast<std::errc>(err), 0, "cannot open: " + errnoText(err)};
    }
    const Fd fd(raw);
    OpenedFile out;
    if (::fstat(fd.get(), &out.st) != 0) {
        int err = errno;
        return FileFailure{static_cast<std::errc>(err), 0, "cannot stat: " + errnoText(err)};
    }
    if (!S_ISREG(out.st.st_mode))
        return FileFailure{std::errc::invalid_argument, 0, "not a regular file"};
    std::array<char, 16384> buf{};
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int err = errno;
            return FileFailure{static_cast<std::errc>(err), 0, "cannot read: " + errnoText(err)};
        }
        if (n == 0)
            break;
        const auto got = static_cast<std::size_t>(n);
        if (got > kMaxConfigFileBytes - out.text.size())
            return FileFailure{std::errc::file_too_large, 0,
                               "larger than " + std::to_string(kMaxConfigFileBytes) + " bytes"};
        out.text.append(buf.data(), got);
    }
    return out;
}

std::string octalMode(mode_t mode) {
    std::array<char, 8> buf{};
    std::snprintf(buf.data(), buf.size(), "%04o", static_cast<unsigned>(mode & 07777));
    return buf.data();
}

// USBGuard's checkFilePermissions: a config anyone but root can write could
// make the daemon kill or unprotect arbitrary workloads.
std::optional<std::string> checkPermissions(const struct stat& st, const std::string& path,
                                            bool requireRootOwned) {
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        return "writable by group or others (mode " + octalMode(st.st_mode) +
               "), refusing it; run chmod go-w " + path;
    if (requireRootOwned && st.st_uid != 0 && st.st_uid != ::geteuid())
        return "owned by uid " + std::to_string(st.st_uid) +
               ", not root, refusing it; run chown root: " + path;
    return std::nullopt;
}

config::ConfigProblem loadProblem(const std::string& file, int line, std::string reason) {
    config::ConfigProblem p;
    p.severity = config::Severity::Error;
    p.file = file;
    p.line = line;
    p.reason = std::move(reason);
    return p;
}

} // namespace

Result<std::vector<config::ConfigEntry>> parseIniText(std::string_view text,
                                                      const std::string& fileName) {
    auto r = parseText(text, fileName);
    if (auto* f = std::get_if<ParseFailure>(&r))
        return invalid(where(fileName, f->line) + ": " + f->reason);
    return std::get<0>(std::move(r));
}

Result<std::vector<config::ConfigEntry>> readIniFile(const std::filesystem::path& path) {
    const std::string name = path.string();
    auto opened = openAndRead(path);
    if (auto* f = std::get_if<FileFailure>(&opened))
        return makeError(f->code, name + ": " + f->reason);
    return parseIniText(std::get<OpenedFile>(opened).text, name);
}

LoadedConfig loadConfig(const LoadOptions& options) {
    LoadedConfig out;
    std::vector<config::ConfigProblem> loadProblems;
    std::vector<config::ConfigEntry> entries;

    const std::filesystem::path mainFile =
        options.mainFile.value_or(std::filesystem::path(kDefaultConfigFile));
    const bool mainExplicit = options.mainFile.has_value();

    auto loadOne = [&](const std::filesystem::path& path, bool mayBeMissing) {
        const std::string name = path.string();
        auto opened = openAndRead(path);
        if (auto* f = std::get_if<FileFailure>(&opened)) {
            if (!(mayBeMissing && f->code == std::errc::no_such_file_or_directory))
                loadProblems.push_back(loadProblem(name, f->line, f->reason));
            return;
        }
        auto& file = std::get<OpenedFile>(opened);
        if (auto refused = checkPermissions(file.st, name, options.requireRootOwned)) {
            loadProblems.push_back(loadProblem(name, 0, *refused));
            return;
        }
        auto parsed = parseText(file.text, name);
        if (auto* f = std::get_if<ParseFailure>(&parsed)) {
            loadProblems.push_back(loadProblem(name, f->line, f->reason));
            return;
        }
        auto& got = std::get<0>(parsed);
        entries.insert(entries.end(), std::make_move_iterator(got.begin()),
                       std::make_move_iterator(got.end()));
        out.files.push_back(name);
    };

    loadOne(mainFile, !mainExplicit);

    if (options.dropIns) {
        std::filesystem::path dir =
            options.dropinDir.value_or(std::filesystem::path(mainFile.string() + ".d"));
        const std::string dirName = dir.string();
        struct stat st {};
        if (::stat(dir.c_str(), &st) != 0) {
            int err = errno;
            if (err != ENOENT)
                loadProblems.push_back(loadProblem(dirName, 0, "cannot stat: " + errnoText(err)));
        } else if (!S_ISDIR(st.st_mode)) {
            loadProblems.push_back(loadProblem(dirName, 0, "not a directory"));
        } else if (auto refused = checkPermissions(st, dirName, options.requireRootOwned)) {
            loadProblems.push_back(loadProblem(dirName, 0, *refused));
        } else {
            std::vector<std::string> names;
            std::error_code ec;
            std::filesystem::directory_iterator it(dir, ec);
            for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
                std::string fn = it->path().filename().string();
                if (fn.size() > 5 && fn.front() != '.' &&
                    fn.compare(fn.size() - 5, 5, ".conf") == 0)
                    names.push_back(std::move(fn));
            }
            if (ec) {
                loadProblems.push_back(loadProblem(dirName, 0, "cannot list: " + ec.message()));
            } else {
                std::sort(names.begin(), names.end());
                for (const auto& fn : names)
                    loadOne(dir / fn, false);
            }
        }
    }

    out.validated = config::validateConfig(entries, config::ValidateOptions{options.strict});
    out.validated.problems.insert(out.validated.problems.begin(),
                                  std::make_move_iterator(loadProblems.begin()),
                                  std::make_move_iterator(loadProblems.end()));
    return out;
}

} // namespace memqos::io

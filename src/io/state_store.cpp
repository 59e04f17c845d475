// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/state_store.hpp"

#include "memqos/config/values.hpp"
#include "memqos/io/fd.hpp"
#include "memqos/io/file.hpp"
#include "memqos/parse/text.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <ctime>
#include <functional>
#include <fcntl.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace memqos::io {
namespace {

constexpr std::string_view kHeader =
    "# memqos assignment; written by memqosd, do not edit while it runs\n";
constexpr std::string_view kInstanceHeader =
    "# memqos instance record (Ganeti); written by memqosd, do not edit while it runs\n";
// Temp files start with '.', which encodeFileName never produces.
constexpr std::string_view kTempPrefix = ".tmp.";
// A bad file set aside at load: "<name>.bad-<UTC time>" ('.' and '-' are
// never in an encoded name, so it is never read as a record again).
constexpr std::string_view kSetAsideMarker = ".bad-";
constexpr std::size_t kMaxNameBytes = 255;                    // NAME_MAX
constexpr std::size_t kMaxFileBytes = std::size_t{64} * 1024; // an assignment is ~200 bytes
constexpr mode_t kDirMode = 0755;
constexpr mode_t kFileMode = 0644;

constexpr std::string_view kHex = "0123456789abcdef";

bool isAlnum(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

int hexValue(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return -1; // uppercase is not what encodeFileName writes
}


// Quotes a value for an error message with control bytes escaped, so a
// corrupt file cannot inject lines into the journal.
std::string quote(std::string_view s) {
    return "'" + parse::text::printable(s, 80) + "'";
}

template <typename T>
bool parseInteger(std::string_view s, T& out) {
    if (s.empty() || s.front() == '+') {
        return false;
    }
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc{} && end == s.data() + s.size();
}

std::optional<core::WorkloadKind> parseKind(std::string_view s) {
    for (const auto k :
         {core::WorkloadKind::Service, core::WorkloadKind::Scope, core::WorkloadKind::Vm}) {
        if (core::toString(k) == s) {
            return k;
        }
    }
    return std::nullopt;
}

// ---- files ----------------------------------------------------------------

// mkdir -p with mode 0755 for the components we create.
Status makeDirs(const std::filesystem::path& dir) {
    std::filesystem::path partial;
    for (const auto& part : dir) {
        partial /= part;
        if (partial == partial.root_path()) {
            continue;
        }
        if (::mkdir(partial.c_str(), kDirMode) == 0) {
            // Exactly 0755 whatever the umask: tools read these as non-root.
            if (::chmod(partial.c_str(), kDirMode) != 0) {
                return errnoError(errno, partial);
            }
            continue;
        }
        if (errno == EEXIST) {
            continue;
        }
        return errnoError(errno, partial);
    }
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) {
        return errnoError(errno, dir);
    }
    if (!S_ISDIR(st.st_mode)) {
        return errnoError(ENOTDIR, dir);
    }
    return okStatus();
}

Result<int> openDir(const std::filesystem::path& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return errnoError(errno, dir);
    }
    return fd;
}

std::string tempName() {
    // Unique enough within the directory; O_EXCL catches the rest.
    static std::atomic<std::uint64_t> counter{0};
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const std::uint64_t mix = (static_cast<std::uint64_t>(ts.tv_nsec) << 20U) ^
                              static_cast<std::uint64_t>(ts.tv_sec) ^ (counter.fetch_add(1) << 44U);
    std::string name(kTempPrefix);
    name += std::to_string(::getpid());
    name += '.';
    for (int shift = 60; shift >= 0; shift -= 4) {
        name += kHex[(mix >> static_cast<unsigned>(shift)) & 0xfU];
    }
    return name;
}

Status writeAll(int fd, std::string_view data, const std::filesystem::path& path) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errnoError(errno, path);
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return okStatus();
}

enum class Durable { Yes, No };

// temp file (O_EXCL, 0644) -> write -> fsync -> rename -> fsync(dir); the
// two fsyncs only when `durable` says so.
Status writeAtomically(const std::filesystem::path& dir, const std::string& name,
                       std::string_view content, Durable durable = Durable::Yes) {
    if (auto made = makeDirs(dir); !made) {
        return made.error();
    }
    auto dirFd = openDir(dir);
    if (!dirFd) {
        return dirFd.error();
    }
    const Fd dfd(*dirFd);

    std::string tmp;
    Fd fd;
    for (int attempt = 0;; ++attempt) {
        tmp = tempName();
        const int raw = ::openat(dfd.get(), tmp.c_str(),
                                 O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, kFileMode);
        if (raw >= 0) {
            fd.reset(raw);
            break;
        }
        if (errno != EEXIST || attempt >= 16) {
            return errnoError(errno, dir / name);
        }
    }
    // Errors name the file being replaced (and left as it was), not the
    // temp file, which is gone by then.
    const auto tmpPath = dir / name;
    auto fail = [&](int err, const std::filesystem::path& what) -> Status {
        ::unlinkat(dfd.get(), tmp.c_str(), 0);
        return errnoError(err, what);
    };
    // The umask must not make the file unreadable for tools run as non-root.
    if (::fchmod(fd.get(), kFileMode) != 0) {
        return fail(errno, tmpPath);
    }
    if (auto w = writeAll(fd.get(), content, tmpPath); !w) {
        ::unlinkat(dfd.get(), tmp.c_str(), 0);
        return w.error();
    }
    if (durable == Durable::Yes && ::fsync(fd.get()) != 0) {
        return fail(errno, tmpPath);
    }
    if (fd.close() != 0) {
        return fail(errno, tmpPath);
    }
    if (::renameat(dfd.get(), tmp.c_str(), dfd.get(), name.c_str()) != 0) {
        return fail(errno, dir / name);
    }
    // Make the rename itself durable.
    if (durable == Durable::Yes && ::fsync(dfd.get()) != 0) {
        return errnoError(errno, dir);
    }
    return okStatus();
}

// Removes dir/name; a missing file or directory is fine.
Status removeFile(const std::filesystem::path& dir, const std::string& name) {
    const auto path = dir / name;
    if (::unlink(path.c_str()) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            return okStatus();
        }
        return errnoError(errno, path);
    }
    auto dirFd = openDir(dir);
    if (!dirFd) {
        return dirFd.error();
    }
    const Fd dfd(*dirFd);
    if (::fsync(dfd.get()) != 0) {
        return errnoError(errno, dir);
    }
    return okStatus();
}

// A state file as read at start: its text, or why it cannot be one. `bad`
// says the file itself is wrong (set it aside); otherwise reading failed
// (EIO, EACCES ...) and the file is left where it is.
struct StateFileText {
    std::optional<std::string> text;
    std::string why;
    bool bad = false;
};

// Reads a state file without trusting it: never through a symlink, never a
// FIFO or device (O_NONBLOCK so a planted FIFO cannot block the open), only a
// file owned by memqosd's own user (root) that no other user may write, and
// never more than maxBytes into memory whatever its size.
StateFileText readStateFile(const std::filesystem::path& path,
                            std::size_t maxBytes = kMaxFileBytes) {
    StateFileText out;
    int raw = -1;
    do {
        raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
    } while (raw < 0 && errno == EINTR);
    if (raw < 0) {
        const int err = errno;
        out.bad = err == ELOOP;
        out.why = err == ELOOP ? "a symbolic link" : std::generic_category().message(err);
        return out;
    }
    const Fd fd(raw);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
        out.why = std::generic_category().message(errno);
        return out;
    }
    out.bad = true;
    if (!S_ISREG(st.st_mode)) {
        out.why = "not a regular file";
        return out;
    }
    if (st.st_uid != ::geteuid()) {
        out.why = "owned by uid " + std::to_string(st.st_uid) + ", not by memqosd's uid " +
                  std::to_string(::geteuid()) + " (another user may have planted it)";
        return out;
    }
    // Group write is fine for memqosd's own group (a umask of 002).
    if ((st.st_mode & S_IWOTH) != 0 || ((st.st_mode & S_IWGRP) != 0 && st.st_gid != ::getegid())) {
        std::string mode = "0000";
        for (int i = 0; i < 3; ++i) {
            mode[static_cast<std::size_t>(3 - i)] =
                static_cast<char>('0' + ((st.st_mode >> (3U * static_cast<unsigned>(i))) & 7U));
        }
        out.why = "writable by other users (mode " + mode + ")";
        return out;
    }
    if (st.st_size < 0 || static_cast<std::uintmax_t>(st.st_size) > maxBytes) {
        out.why = std::to_string(st.st_size) + " bytes, more than the " +
                  std::to_string(maxBytes) + " a state file may have";
        return out;
    }
    std::string text;
    std::array<char, 4096> buf{};
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            out.bad = false;
            out.why = std::generic_category().message(errno);
            return out;
        }
        if (n == 0) {
            break;
        }
        if (static_cast<std::size_t>(n) > maxBytes - text.size()) {
            out.why = "more than the " + std::to_string(maxBytes) +
                      " bytes a state file may have"; // it grew after fstat
            return out;
        }
        text.append(buf.data(), static_cast<std::size_t>(n));
    }
    out.bad = false;
    out.text = std::move(text);
    return out;
}

// "20261124T221724Z": UTC, sorts by time, no characters a shell would quote.
std::string utcStamp() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&now, &tm);
    std::array<char, 32> buf{};
    const auto n = std::strftime(buf.data(), buf.size(), "%Y%m%dT%H%M%SZ", &tm);
    return std::string(buf.data(), n);
}

// Renames a bad state file to "<name>.bad-<UTC time>" in its directory and
// returns the phrase for the problem: "set aside as <path>", or why it stays.
std::string setAside(const std::filesystem::path& dir, const std::string& name) {
    const std::string base = name + std::string(kSetAsideMarker) + utcStamp();
    std::string target = base;
    for (int n = 1; n < 100; ++n) {
        struct stat st {};
        if (::lstat((dir / target).c_str(), &st) != 0 && errno == ENOENT) {
            break;
        }
        target = base + "-" + std::to_string(n);
    }
    if (::rename((dir / name).c_str(), (dir / target).c_str()) != 0) {
        return "could not set it aside (" + std::generic_category().message(errno) +
               "), ignoring";
    }
    return "set aside as " + (dir / target).string();
}

// Reads every record file of one directory: `parse` turns a file's text into
// a record (or an error), `keyOf` gives the id its file name must encode,
// and `add` takes each good one. Problems name the file and never stop the
// load. A file with a record's name that is not a good record (corrupt,
// truncated, empty, too big, not a regular file, not memqosd's own) is
// renamed "<name>.bad-<UTC time>" beside it, which no load reads again.
template <typename Parse, typename KeyOf, typename Add>
void loadDir(const std::filesystem::path& dir, std::string_view what, std::string_view keyName,
             Parse parse, KeyOf keyOf, Add add, std::vector<std::string>& problems,
             std::size_t maxBytes = kMaxFileBytes) {
    std::error_code ec;
    std::filesystem::directory_iterator it(dir, ec);
    if (ec) {
        if (ec != std::errc::no_such_file_or_directory) {
            problems.push_back(dir.string() + ": " + ec.message());
        }
        return;
    }
    std::vector<std::string> names;
    for (const std::filesystem::directory_iterator end; it != end; it.increment(ec)) {
        if (ec) {
            problems.push_back(dir.string() + ": " + ec.message());
            break;
        }
        names.push_back(it->path().filename().string());
    }
    std::sort(names.begin(), names.end());

    for (const auto& name : names) {
        const auto path = dir / name;
        if (name.find(kSetAsideMarker) != std::string::npos) {
            continue; // set aside by an earlier load: the operator's to inspect
        }
        if (name.starts_with('.')) {
            if (name.starts_with(kTempPrefix)) {
                // Left by a save() that crashed before its rename: the old
                // file (if any) is still complete, so the temp is garbage.
                ::unlink(path.c_str());
            }
            continue;
        }
        const auto id = decodeFileName(name);
        if (!id) {
            problems.push_back(path.string() + ": not " + std::string(what) +
                               " file (name is not an encoded name), ignoring");
            continue;
        }
        auto file = readStateFile(path, maxBytes);
        if (!file.text) {
            problems.push_back(path.string() + ": " + file.why + ", " +
                               (file.bad ? setAside(dir, name) : std::string("ignoring")));
            continue;
        }
        auto parsed = parse(*file.text);
        if (!parsed) {
            const std::string why = file.text->empty() ? "empty" : parsed.error().what;
            problems.push_back(path.string() + ": " + why + ", " + setAside(dir, name));
            continue;
        }
        if (keyOf(*parsed) != *id) {
            problems.push_back(path.string() + ": " + std::string(keyName) + "=" +
                               quote(keyOf(*parsed)) + " does not match the file name, " +
                               setAside(dir, name));
            continue;
        }
        add(std::move(*parsed));
    }
}

// An assignment directory; ids already loaded (the persistent directory is
// read first) are skipped.
void loadAssignments(const std::filesystem::path& dir, bool persistent, StateStore::Loaded& out) {
    loadDir(
        dir, "an assignment", "Id", [](std::string_view t) { return parseAssignment(t); },
        [](const Assignment& a) -> const std::string& { return a.workload.id; },
        [&](Assignment a) {
            const bool seen =
                std::any_of(out.assignments.begin(), out.assignments.end(),
                            [&](const Assignment& b) { return b.workload.id == a.workload.id; });
            if (!seen) {
                a.persistent = persistent;
                out.assignments.push_back(std::move(a));
            }
        },
        out.problems);
}

} // namespace

// ---- file names -------------------------------------------------------------

std::string encodeFileName(std::string_view id) {
    if (id.empty()) {
        return "_";
    }
    std::string out;
    out.reserve(id.size());
    for (const char c : id) {
        if (isAlnum(c)) {
            out += c;
        } else {
            const auto b = static_cast<unsigned char>(c);
            out += '_';
            out += kHex[b >> 4U];
            out += kHex[b & 0xfU];
        }
    }
    return out;
}

std::optional<std::string> decodeFileName(std::string_view name) {
    if (name == "_") {
        return std::string();
    }
    if (name.empty()) {
        return std::nullopt;
    }
    std::string out;
    out.reserve(name.size());
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        if (isAlnum(c)) {
            out += c;
            continue;
        }
        if (c != '_' || name.size() - i < 3) {
            return std::nullopt;
        }
        const int hi = hexValue(name[i + 1]);
        const int lo = hexValue(name[i + 2]);
        if (hi < 0 || lo < 0) {
            return std::nullopt;
        }
        const auto decoded = static_cast<char>(static_cast<unsigned char>((hi << 4) | lo));
        if (isAlnum(decoded)) {
            return std::nullopt; // not canonical: encodeFileName keeps it literal
        }
        out += decoded;
        i += 2;
    }
    return out;
}

// ---- format -----------------------------------------------------------------

std::string formatAssignment(const Assignment& a) {
    const auto& w = a.workload;
    std::string out(kHeader);
    out += "Id=" + w.id + "\n";
    out += "Kind=" + std::string(core::toString(w.kind)) + "\n";
    out += "Class=" + w.className + "\n";
    out += "Request=" + std::to_string(w.request) + "\n";
    out += "Limit=" + (w.limit ? std::to_string(*w.limit) : std::string("max")) + "\n";
    out += "Priority=" + std::to_string(w.priority) + "\n";
    return out;
}

namespace {

// One "Key=Value" of a state file, checked against a fixed key list: every
// key exactly once, blank and '#' lines skipped.
struct KeyValue {
    std::size_t key;
    std::string_view value;
    std::size_t line;
};

template <std::size_t N>
Result<std::array<KeyValue, N>> parseKeyFile(std::string_view text,
                                             const std::array<std::string_view, N>& keys,
                                             std::size_t firstOptional = N) {
    std::array<KeyValue, N> out{};
    std::array<bool, N> seen{};
    std::size_t lineNo = 0;
    while (!text.empty()) {
        ++lineNo;
        const auto nl = text.find('\n');
        const std::string_view raw = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);

        const std::string_view line = parse::text::trim(raw);
        if (line.empty() || line.front() == '#') {
            continue;
        }
        const std::string where = "line " + std::to_string(lineNo) + ": ";
        const auto eq = line.find('=');
        if (eq == std::string_view::npos) {
            return invalid(where + quote(line) + ": expected Key=Value");
        }
        const std::string_view key = parse::text::trim(line.substr(0, eq));
        const auto found = std::find(keys.begin(), keys.end(), key);
        if (found == keys.end()) {
            return invalid(where + "unknown key " + quote(key));
        }
        const auto k = static_cast<std::size_t>(found - keys.begin());
        if (seen[k]) {
            return invalid(where + std::string(key) + " given twice (first on line " +
                           std::to_string(out[k].line) + ")");
        }
        seen[k] = true;
        out[k] = KeyValue{k, parse::text::trim(line.substr(eq + 1)), lineNo};
    }
    for (std::size_t k = 0; k < firstOptional; ++k) {
        if (!seen[k]) {
            return invalid("missing key " + std::string(keys[k]));
        }
    }
    return out;
}

// "line 5: Request='12x': " for a value's error message.
std::string at(const KeyValue& kv, std::string_view key) {
    return "line " + std::to_string(kv.line) + ": " + std::string(key) + "=" + quote(kv.value) +
           ": ";
}

} // namespace

Result<Assignment> parseAssignment(std::string_view text) {
    enum Key : std::size_t { KeyId, KeyKind, KeyClass, KeyRequest, KeyLimit, KeyPriority, KeyCount };
    constexpr std::array<std::string_view, KeyCount> kKeys = {"Id",      "Kind",  "Class",
                                                              "Request", "Limit", "Priority"};
    auto parsed = parseKeyFile(text, kKeys);
    if (!parsed) {
        return parsed.error();
    }
    const auto& kv = *parsed;
    Assignment a;
    auto& w = a.workload;
    if (auto ok = core::validateWorkloadId(kv[KeyId].value); !ok) {
        return invalid("line " + std::to_string(kv[KeyId].line) + ": Id: " + ok.error().what);
    }
    w.id = std::string(kv[KeyId].value);
    const auto kind = parseKind(kv[KeyKind].value);
    if (!kind) {
        return invalid(at(kv[KeyKind], "Kind") + "not a kind (expected service, scope or vm)");
    }
    w.kind = *kind;
    if (!config::isValidClassName(kv[KeyClass].value)) {
        return invalid(at(kv[KeyClass], "Class") + "not a class name");
    }
    w.className = std::string(kv[KeyClass].value);
    if (!parseInteger(kv[KeyRequest].value, w.request)) {
        return invalid(at(kv[KeyRequest], "Request") + "not a number of bytes");
    }
    if (kv[KeyLimit].value == "max") {
        w.limit = std::nullopt;
    } else {
        Bytes limit = 0;
        if (!parseInteger(kv[KeyLimit].value, limit)) {
            return invalid(at(kv[KeyLimit], "Limit") + "not a number of bytes or \"max\"");
        }
        w.limit = limit;
    }
    if (!parseInteger(kv[KeyPriority].value, w.priority)) {
        return invalid(at(kv[KeyPriority], "Priority") + "not a 32-bit integer");
    }
    const auto shape = core::kindFromId(w.id);
    if (!shape || *shape != *kind) {
        return invalid("line " + std::to_string(kv[KeyKind].line) +
                       ": Kind=" + std::string(core::toString(*kind)) + " does not match Id=" +
                       quote(w.id) + " (line " + std::to_string(kv[KeyId].line) + ")");
    }
    return a;
}

std::string formatInstance(const core::Instance& i) {
    std::string out(kInstanceHeader);
    out += "Name=" + i.name + "\n";
    out += "MinMemory=" + std::to_string(i.minMemory) + "\n";
    out += "MaxMemory=" + std::to_string(i.maxMemory) + "\n";
    out += std::string("Up=") + (i.up ? "yes" : "no") + "\n";
    return out;
}

Result<core::Instance> parseInstance(std::string_view text) {
    enum Key : std::size_t { KeyName, KeyMin, KeyMax, KeyUp, KeyCount };
    constexpr std::array<std::string_view, KeyCount> kKeys = {"Name", "MinMemory", "MaxMemory",
                                                              "Up"};
    auto parsed = parseKeyFile(text, kKeys);
    if (!parsed) {
        return parsed.error();
    }
    const auto& kv = *parsed;
    core::Instance i;
    if (auto ok = core::validateInstanceName(kv[KeyName].value); !ok) {
        return invalid("line " + std::to_string(kv[KeyName].line) + ": Name: " + ok.error().what);
    }
    i.name = std::string(kv[KeyName].value);
    if (!parseInteger(kv[KeyMin].value, i.minMemory)) {
        return invalid(at(kv[KeyMin], "MinMemory") + "not a number of bytes");
    }
    if (!parseInteger(kv[KeyMax].value, i.maxMemory)) {
        return invalid(at(kv[KeyMax], "MaxMemory") + "not a number of bytes");
    }
    if (i.minMemory > i.maxMemory) {
        return invalid(at(kv[KeyMin], "MinMemory") + "above MaxMemory");
    }
    if (kv[KeyUp].value == "yes") {
        i.up = true;
    } else if (kv[KeyUp].value != "no") {
        return invalid(at(kv[KeyUp], "Up") + "expected yes or no");
    }
    return i;
}

// ---- StateStore ---------------------------------------------------------------

StateStore::StateStore(std::filesystem::path stateDir, std::filesystem::path runtimeDir)
    : stateDir_(std::move(stateDir)), runtimeDir_(std::move(runtimeDir)) {}

Status StateStore::save(const Assignment& a) {
    const auto text = formatAssignment(a);
    // Only write what loadAll() will read back as the same workload.
    auto back = parseAssignment(text);
    if (!back) {
        return invalid("cannot store assignment of " + quote(a.workload.id) + ": " +
                       back.error().what);
    }
    if (back->workload != a.workload) {
        return invalid("cannot store assignment of " + quote(a.workload.id) +
                       ": it would not read back unchanged");
    }
    const auto name = encodeFileName(a.workload.id);
    if (name.size() > kMaxNameBytes) {
        return makeError(std::errc::filename_too_long,
                         "cannot store assignment of " + quote(a.workload.id) +
                             ": encoded file name longer than 255 bytes");
    }
    const auto& dir = a.persistent ? stateDir_ : runtimeDir_;
    const auto& other = a.persistent ? runtimeDir_ : stateDir_;
    if (auto w = writeAtomically(dir, name, text); !w) {
        return w;
    }
    std::error_code ec;
    if (std::filesystem::equivalent(dir, other, ec)) {
        return okStatus(); // one directory for both: nothing to move
    }
    // After the write: a crash in between leaves both copies, and loadAll()
    // then prefers the persistent one.
    return removeFile(other, name);
}

Status StateStore::remove(std::string_view workloadId) {
    const auto name = encodeFileName(workloadId);
    if (name.size() > kMaxNameBytes) {
        return okStatus(); // save() never wrote such a file
    }
    if (auto r = removeFile(stateDir_, name); !r) {
        return r;
    }
    return removeFile(runtimeDir_, name);
}

StateStore::Loaded StateStore::loadAll() const {
    Loaded out;
    loadAssignments(stateDir_, true, out);
    loadAssignments(runtimeDir_, false, out);
    std::sort(
        out.assignments.begin(), out.assignments.end(),
        [](const Assignment& x, const Assignment& y) { return x.workload.id < y.workload.id; });
    return out;
}

} // namespace memqos::io

namespace memqos::io {

InstanceStore::InstanceStore(std::filesystem::path dir) : dir_(std::move(dir)) {}

Status InstanceStore::save(const core::Instance& i) {
    const auto text = formatInstance(i);
    auto back = parseInstance(text);
    if (!back) {
        return invalid("cannot store instance " + quote(i.name) + ": " + back.error().what);
    }
    if (*back != i) {
        return invalid("cannot store instance " + quote(i.name) +
                       ": it would not read back unchanged");
    }
    const auto name = encodeFileName(i.name);
    if (name.size() > kMaxNameBytes) {
        return makeError(std::errc::filename_too_long,
                         "cannot store instance " + quote(i.name) +
                             ": encoded file name longer than 255 bytes");
    }
    return writeAtomically(dir_, name, text);
}

Status InstanceStore::remove(std::string_view name) {
    const auto file = encodeFileName(name);
    if (file.size() > kMaxNameBytes) {
        return okStatus();
    }
    return removeFile(dir_, file);
}

InstanceStore::Loaded InstanceStore::loadAll() const {
    Loaded out;
    loadDir(
        dir_, "an instance record", "Name", [](std::string_view t) { return parseInstance(t); },
        [](const core::Instance& i) -> const std::string& { return i.name; },
        [&](core::Instance i) { out.instances.push_back(std::move(i)); }, out.problems);
    return out;
}

Status writeFileAtomically(const std::filesystem::path& dir, const std::string& name,
                           std::string_view content) {
    return writeAtomically(dir, name, content);
}

Status replaceFile(const std::filesystem::path& dir, const std::string& name,
                   std::string_view content) {
    return writeAtomically(dir, name, content, Durable::No);
}

// ---- OriginalStore ------------------------------------------------------------

namespace {

constexpr std::string_view kOriginalHeader =
    "# memqos: what this unit's own configuration gave before memqos first changed\n"
    "# it; given back when memqos lets go of the unit. Written by memqosd.\n";

// A systemd unit name memqos may change: printable, no '/', at most 255
// bytes, ending in .service, .scope or .slice.
bool isUnitName(std::string_view u) {
    if (u.empty() || u.size() > 255 || u.front() == '.') {
        return false;
    }
    for (const char c : u) {
        if (c == '/' || static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
            return false;
        }
    }
    for (std::string_view suffix : {".service", ".scope", ".slice"}) {
        if (u.size() > suffix.size() && u.ends_with(suffix)) {
            return true;
        }
    }
    return false;
}

bool isMemoryDropIn(std::string_view name) {
    for (std::string_view d : kMemoryDropIns) {
        if (name == d) {
            return true;
        }
    }
    return false;
}

std::string limitText(const std::optional<Limit>& l) {
    return l && *l ? std::to_string(**l) : std::string("max");
}

bool parseLimitText(std::string_view s, Limit& out) {
    if (s == "max") {
        out = Limit{};
        return true;
    }
    Bytes b = 0;
    if (!parseInteger(s, b) || b == kNoLimit) {
        return false;
    }
    out = b;
    return true;
}

} // namespace

std::string formatUnitOriginal(const UnitOriginal& o) {
    std::string out(kOriginalHeader);
    out += "Unit=" + o.unit + "\n";
    out += "MemoryMin=" + std::to_string(o.values.memoryMin.value_or(0)) + "\n";
    out += "MemoryLow=" + std::to_string(o.values.memoryLow.value_or(0)) + "\n";
    out += "MemoryHigh=" + limitText(o.values.memoryHigh) + "\n";
    out += "MemoryMax=" + limitText(o.values.memoryMax) + "\n";
    out += "MemorySwapMax=" + limitText(o.values.memorySwapMax) + "\n";
    out += "KeepDropIns=";
    for (std::size_t i = 0; i < o.keepDropIns.size(); ++i) {
        out += (i > 0 ? " " : "") + o.keepDropIns[i];
    }
    out += "\n";
    if (!o.bootId.empty()) {
        out += "BootId=" + o.bootId + "\n";
    }
    return out;
}

Result<UnitOriginal> parseUnitOriginal(std::string_view text) {
    enum Key : std::size_t {
        KeyUnit, KeyMin, KeyLow, KeyHigh, KeyMax, KeySwap, KeyKeep, KeyBoot, KeyCount
    };
    constexpr std::array<std::string_view, KeyCount> kKeys = {
        "Unit",      "MemoryMin",     "MemoryLow",   "MemoryHigh",
        "MemoryMax", "MemorySwapMax", "KeepDropIns", "BootId"};
    auto parsed = parseKeyFile(text, kKeys, KeyBoot); // BootId is optional
    if (!parsed) {
        return parsed.error();
    }
    const auto& kv = *parsed;
    UnitOriginal o;
    if (!isUnitName(kv[KeyUnit].value)) {
        return invalid("line " + std::to_string(kv[KeyUnit].line) +
                       ": Unit: not a .service, .scope or .slice unit name");
    }
    o.unit = std::string(kv[KeyUnit].value);
    Bytes min = 0;
    Bytes low = 0;
    if (!parseInteger(kv[KeyMin].value, min)) {
        return invalid(at(kv[KeyMin], "MemoryMin") + "not a number of bytes");
    }
    if (!parseInteger(kv[KeyLow].value, low)) {
        return invalid(at(kv[KeyLow], "MemoryLow") + "not a number of bytes");
    }
    o.values.memoryMin = min;
    o.values.memoryLow = low;
    Limit high;
    Limit max;
    Limit swap;
    if (!parseLimitText(kv[KeyHigh].value, high)) {
        return invalid(at(kv[KeyHigh], "MemoryHigh") + "expected bytes or max");
    }
    if (!parseLimitText(kv[KeyMax].value, max)) {
        return invalid(at(kv[KeyMax], "MemoryMax") + "expected bytes or max");
    }
    if (!parseLimitText(kv[KeySwap].value, swap)) {
        return invalid(at(kv[KeySwap], "MemorySwapMax") + "expected bytes or max");
    }
    o.values.memoryHigh = high;
    o.values.memoryMax = max;
    o.values.memorySwapMax = swap;
    std::string_view keep = kv[KeyKeep].value;
    while (!keep.empty()) {
        const auto sp = keep.find(' ');
        const auto name = keep.substr(0, sp);
        keep.remove_prefix(sp == std::string_view::npos ? keep.size() : sp + 1);
        if (name.empty()) {
            continue;
        }
        if (!isMemoryDropIn(name)) {
            return invalid(at(kv[KeyKeep], "KeepDropIns") + quote(name) +
                           " is not one of memqos's five memory drop-ins");
        }
        if (std::find(o.keepDropIns.begin(), o.keepDropIns.end(), name) == o.keepDropIns.end()) {
            o.keepDropIns.emplace_back(name);
        }
    }
    std::sort(o.keepDropIns.begin(), o.keepDropIns.end());
    const std::string_view boot = kv[KeyBoot].value;
    if (boot.size() > 64 || !std::all_of(boot.begin(), boot.end(), [](char c) {
            return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-';
        })) {
        return invalid(at(kv[KeyBoot], "BootId") + "not a boot id (lowercase hex and '-')");
    }
    o.bootId = std::string(boot);
    return o;
}

OriginalStore::OriginalStore(std::filesystem::path dir) : dir_(std::move(dir)) {}

Status OriginalStore::save(const UnitOriginal& o) {
    const auto& v = o.values;
    if (!v.memoryMin || !v.memoryLow || !v.memoryHigh || !v.memoryMax || !v.memorySwapMax) {
        return invalid("cannot store the original memory properties of " + quote(o.unit) +
                       ": not all five are known");
    }
    const auto text = formatUnitOriginal(o);
    auto back = parseUnitOriginal(text);
    if (!back || *back != o) {
        return invalid("cannot store the original memory properties of " + quote(o.unit) +
                       ": they would not read back unchanged");
    }
    const auto name = encodeFileName(o.unit);
    if (name.size() > kMaxNameBytes) {
        return makeError(std::errc::filename_too_long,
                         "cannot store the original memory properties of " + quote(o.unit) +
                             ": encoded file name longer than 255 bytes");
    }
    return writeAtomically(dir_, name, text);
}

Status OriginalStore::remove(std::string_view unit) {
    const auto file = encodeFileName(unit);
    if (file.size() > kMaxNameBytes) {
        return okStatus();
    }
    return removeFile(dir_, file);
}

OriginalStore::Loaded OriginalStore::loadAll() const {
    Loaded out;
    loadDir(
        dir_, "an original-properties record", "Unit",
        [](std::string_view t) { return parseUnitOriginal(t); },
        [](const UnitOriginal& o) -> const std::string& { return o.unit; },
        [&](UnitOriginal o) { out.originals.push_back(std::move(o)); }, out.problems);
    return out;
}

// ---- record directories of other modules ----------------------------------

std::vector<std::string> loadRecordFiles(
    const std::filesystem::path& dir, std::string_view what, std::string_view keyName,
    std::size_t maxBytes, const std::function<Result<std::string>(std::string_view text)>& parse,
    const std::function<void()>& keep) {
    std::vector<std::string> problems;
    loadDir(
        dir, what, keyName, parse, [](const std::string& key) { return key; },
        [&keep](const std::string&) { keep(); }, problems, maxBytes);
    return problems;
}

} // namespace memqos::io

// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/drop_ins.hpp"

#include "memqos/io/file.hpp"
#include "memqos/parse/text.hpp"

#include <cerrno>
#include <charconv>
#include <functional>
#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace memqos::io {
namespace {

constexpr std::size_t kMaxDropInBytes = 64 * 1024;

// tmp file -> write -> rename, without fsync: /run is tmpfs and goes with
// the boot anyway.
Status replaceFile(const std::filesystem::path& path, std::string_view content) {
    const auto tmp = path.string() + ".memqos-tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
    if (fd < 0) {
        return errnoError(errno, path);
    }
    while (!content.empty()) {
        const ssize_t n = ::write(fd, content.data(), content.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            const int err = errno;
            ::close(fd);
            ::unlink(tmp.c_str());
            return errnoError(err, path);
        }
        content.remove_prefix(static_cast<std::size_t>(n));
    }
    // 0644 whatever the umask: systemd and tools read it as non-root.
    if (::fchmod(fd, 0644) != 0 || ::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        return errnoError(err, path);
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        return errnoError(err, path);
    }
    return okStatus();
}

} // namespace

std::string_view propertyName(MemoryKey key) {
    switch (key) {
    case MemoryKey::Min:
        return "MemoryMin";
    case MemoryKey::Low:
        return "MemoryLow";
    case MemoryKey::High:
        return "MemoryHigh";
    case MemoryKey::Max:
        return "MemoryMax";
    case MemoryKey::SwapMax:
        return "MemorySwapMax";
    }
    return "MemoryMin";
}

std::string_view dropInName(MemoryKey key) {
    switch (key) {
    case MemoryKey::Min:
        return "50-MemoryMin.conf";
    case MemoryKey::Low:
        return "50-MemoryLow.conf";
    case MemoryKey::High:
        return "50-MemoryHigh.conf";
    case MemoryKey::Max:
        return "50-MemoryMax.conf";
    case MemoryKey::SwapMax:
        return "50-MemorySwapMax.conf";
    }
    return "50-MemoryMin.conf";
}

std::optional<Limit> dropInValue(std::string_view text, MemoryKey key) {
    const std::string_view name = propertyName(key);
    std::optional<Limit> out;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view line = parse::text::trim(text.substr(0, nl));
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        const auto eq = line.find('=');
        if (eq == std::string_view::npos || parse::text::trim(line.substr(0, eq)) != name) {
            continue;
        }
        const std::string_view v = parse::text::trim(line.substr(eq + 1));
        if (v == "infinity") {
            out = Limit{};
            continue; // the last assignment in a file wins, as in systemd
        }
        Bytes b = 0;
        const auto* end = v.data() + v.size();
        auto [p, ec] = std::from_chars(v.data(), end, b);
        if (v.empty() || ec != std::errc{} || p != end) {
            out = std::nullopt; // not a plain number of bytes: not read
            continue;
        }
        out = limitFromBus(b);
    }
    return out;
}

bool hasOwnMarker(std::string_view text) {
    return text.starts_with(kOwnDropInMarker) &&
           (text.size() == kOwnDropInMarker.size() || text[kOwnDropInMarker.size()] == '\n');
}

std::filesystem::path RuntimeDropIns::file(const std::filesystem::path& dir,
                                           const std::string& unit, MemoryKey key) {
    return dir / (unit + ".d") / std::string(dropInName(key));
}

RuntimeDropIns::State RuntimeDropIns::read(const std::string& unit, MemoryKey key) const {
    for (const auto& dir : dirs_) {
        auto text = readFile(file(dir, unit, key), kMaxDropInBytes);
        if (text) {
            return {hasOwnMarker(*text) ? Owner::Memqos : Owner::Other, dropInValue(*text, key)};
        }
    }
    return {}; // gone, or unreadable: nobody's as far as memqos can tell
}

Status RuntimeDropIns::forEachUnmarked(
    const std::string& unit, MemoryKey key,
    const std::function<Status(const std::filesystem::path&, const std::string&)>& fn) const {
    for (const auto& dir : dirs_) {
        const auto path = file(dir, unit, key);
        auto text = readFile(path, kMaxDropInBytes);
        if (!text) {
            if (!isVanished(text.error())) {
                return text.error();
            }
            continue;
        }
        if (hasOwnMarker(*text)) {
            continue;
        }
        if (auto st = fn(path, *text); !st) {
            return st;
        }
    }
    return okStatus();
}

Status RuntimeDropIns::saveOthers(const std::string& unit, MemoryKey key) const {
    return forEachUnmarked(unit, key, [](const auto& path, const std::string& text) {
        return replaceFile(path.string() + std::string(kSavedSuffix), text);
    });
}

Status RuntimeDropIns::markOwn(const std::string& unit, MemoryKey key, const Limit& value) const {
    return forEachUnmarked(unit, key, [&](const auto& path, const std::string& text) {
        if (dropInValue(text, key) != std::optional<Limit>(value)) {
            return okStatus(); // someone wrote it meanwhile
        }
        return replaceFile(path, std::string(kOwnDropInMarker) + "\n" + text);
    });
}

Status RuntimeDropIns::adoptUnmarked(const std::string& unit, MemoryKey key) const {
    return forEachUnmarked(unit, key, [](const auto& path, const std::string& text) {
        return replaceFile(path, std::string(kOwnDropInMarker) + "\n" + text);
    });
}

void RuntimeDropIns::dropStaleCopies(const std::string& unit) const {
    for (const auto& dir : dirs_) {
        for (const auto key : kMemoryKeys) {
            const auto path = file(dir, unit, key);
            const auto saved = path.string() + std::string(kSavedSuffix);
            std::error_code ec;
            if (std::filesystem::exists(saved, ec) && !std::filesystem::exists(path, ec)) {
                ::unlink(saved.c_str());
            }
        }
        ::rmdir((dir / (unit + ".d")).c_str()); // only when empty
    }
}

Result<bool> RuntimeDropIns::giveBack(const std::string& unit, MemoryKey key) const {
    bool changed = false;
    for (const auto& dir : dirs_) {
        const auto path = file(dir, unit, key);
        const auto saved = path.string() + std::string(kSavedSuffix);
        std::error_code ec;
        if (std::filesystem::exists(saved, ec) && !std::filesystem::exists(path, ec)) {
            ::unlink(saved.c_str()); // its drop-in is gone: a stale copy
            continue;
        }
        if (::rename(saved.c_str(), path.c_str()) == 0) {
            changed = true;
            continue;
        }
        if (errno != ENOENT && errno != ENOTDIR) {
            return errnoError(errno, saved);
        }
        auto text = readFile(path, kMaxDropInBytes);
        if (!text || !hasOwnMarker(*text)) {
            continue; // none, or someone else's
        }
        if (::unlink(path.c_str()) != 0) {
            if (errno == ENOENT) {
                continue;
            }
            return errnoError(errno, path);
        }
        changed = true;
    }
    return changed;
}

bool RuntimeDropIns::anyOwn(const std::string& unit) const {
    for (const auto& dir : dirs_) {
        for (const auto key : kMemoryKeys) {
            std::error_code ec;
            const auto path = file(dir, unit, key);
            auto text = readFile(path, kMaxDropInBytes);
            if ((text && hasOwnMarker(*text)) ||
                std::filesystem::exists(path.string() + std::string(kSavedSuffix), ec)) {
                return true;
            }
        }
    }
    return false;
}

} // namespace memqos::io

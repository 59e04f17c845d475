// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/file.hpp"

#include "memqos/io/fd.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace memqos::io {

Error errnoError(int err, const std::filesystem::path& path) {
    // std::errc's values are the errno values on POSIX.
    return makeError(static_cast<std::errc>(err),
                     path.string() + ": " + std::generic_category().message(err));
}

Result<std::string> readFile(const std::filesystem::path& path, std::size_t maxBytes) {
    int raw = -1;
    do {
        raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    } while (raw < 0 && errno == EINTR);
    if (raw < 0) {
        return errnoError(errno, path);
    }
    const Fd fd(raw);
    std::string out;
    std::array<char, 16384> buf; // not zero-filled: only what read() wrote is used
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            // ENODEV here: the cgroup was removed after open().
            return errnoError(errno, path);
        }
        if (n == 0) {
            break;
        }
        const auto got = static_cast<std::size_t>(n);
        if (got > maxBytes - out.size()) {
            return makeError(std::errc::file_too_large, path.string() + ": larger than " +
                                                            std::to_string(maxBytes) + " bytes");
        }
        out.append(buf.data(), got);
    }
    return out;
}

namespace {

int openRead(const char* path) {
    int raw = -1;
    do {
        raw = ::open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    } while (raw < 0 && errno == EINTR);
    return raw;
}

Error tooLarge(const std::string& path, std::size_t maxBytes) {
    return makeError(std::errc::file_too_large,
                     path + ": larger than " + std::to_string(maxBytes) + " bytes");
}

// pread() retrying EINTR.
ssize_t preadRetry(int fd, char* to, std::size_t size, std::size_t offset) {
    ssize_t n = -1;
    do {
        n = ::pread(fd, to, size, static_cast<off_t>(offset));
    } while (n < 0 && errno == EINTR);
    return n;
}

// The errors with which a read on a kept fd says its file is gone.
bool goneOnFd(int err) noexcept { return err == ENODEV || err == ESTALE || err == ENOENT; }

} // namespace

Result<std::string_view> preadWhole(int fd, ReadBuffer& buf, const std::string& path,
                                    std::size_t maxBytes) {
    const ssize_t n = preadRetry(fd, buf.stack.data(), buf.stack.size(), 0);
    if (n < 0) {
        return errnoError(errno, path);
    }
    auto got = static_cast<std::size_t>(n);
    if (got > maxBytes) {
        return tooLarge(path, maxBytes);
    }
    if (got < buf.stack.size()) {
        return std::string_view(buf.stack.data(), got);
    }
    // Longer than the stack part (cgroup.procs of a large cgroup, zoneinfo
    // of a large NUMA host): go on in the heap part.
    buf.heap.assign(buf.stack.data(), got);
    for (;;) {
        const std::size_t chunk = std::max<std::size_t>(buf.heap.size(), buf.stack.size());
        buf.heap.resize(got + chunk);
        const ssize_t m = preadRetry(fd, buf.heap.data() + got, chunk, got);
        if (m < 0) {
            return errnoError(errno, path);
        }
        got += static_cast<std::size_t>(m);
        if (got > maxBytes) {
            return tooLarge(path, maxBytes);
        }
        if (static_cast<std::size_t>(m) < chunk) {
            buf.heap.resize(got);
            return std::string_view(buf.heap);
        }
    }
}

Result<std::string_view> readSmall(const std::string& path, ReadBuffer& buf,
                                   std::size_t maxBytes) {
    const int raw = openRead(path.c_str());
    if (raw < 0) {
        return errnoError(errno, path);
    }
    const Fd fd(raw);
    return preadWhole(fd.get(), buf, path, maxBytes);
}

Result<std::string_view> OpenFiles::read(const std::string& path, ReadBuffer& buf,
                                         std::size_t maxBytes) {
    if (auto it = fds_.find(path); it != fds_.end()) {
        auto content = preadWhole(it->second.get(), buf, path, maxBytes);
        bool gone = !content && goneOnFd(static_cast<int>(content.error().code));
        if (content && checkUnlinked_) {
            struct stat st {};
            gone = ::fstat(it->second.get(), &st) == 0 && st.st_nlink == 0;
        }
        if (!gone) {
            return content;
        }
        fds_.erase(it); // gone: open it afresh (a cgroup created again)
    }
    const int raw = openRead(path.c_str());
    if (raw < 0) {
        return errnoError(errno, path);
    }
    Fd fd(raw);
    auto content = preadWhole(fd.get(), buf, path, maxBytes);
    if (content && fds_.size() < capacity_) {
        fds_.emplace(path, std::move(fd));
    }
    return content;
}

void OpenFiles::forgetUnder(std::string_view dir) {
    std::erase_if(fds_, [dir](const auto& entry) {
        const std::string& p = entry.first;
        return p.size() > dir.size() && p.starts_with(dir) && p[dir.size()] == '/';
    });
}

void OpenFiles::keepOnly(const std::function<bool(std::string_view dir)>& keep) {
    std::erase_if(fds_, [&keep](const auto& entry) {
        const std::string_view p = entry.first;
        const auto slash = p.rfind('/');
        return !keep(slash == std::string_view::npos ? std::string_view{} : p.substr(0, slash));
    });
}

bool isKernfs(const std::filesystem::path& dir) noexcept {
    struct statfs st {};
    if (::statfs(dir.c_str(), &st) != 0) {
        return false;
    }
    const auto magic = static_cast<unsigned long>(st.f_type);
    return magic == CGROUP2_SUPER_MAGIC || magic == PROC_SUPER_MAGIC ||
           magic == SYSFS_MAGIC;
}

bool isVanished(const Error& error) noexcept {
    return error.code == std::errc::no_such_file_or_directory ||
           error.code == std::errc::no_such_device;
}

} // namespace memqos::io

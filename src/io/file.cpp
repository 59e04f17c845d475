// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/file.hpp"

#include "memqos/io/fd.hpp"

#include <array>
#include <cerrno>
#include <fcntl.h>
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
    std::array<char, 16384> buf{};
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

bool isVanished(const Error& error) noexcept {
    return error.code == std::errc::no_such_file_or_directory ||
           error.code == std::errc::no_such_device;
}

} // namespace memqos::io

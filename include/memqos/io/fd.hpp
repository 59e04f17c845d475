// SPDX-License-Identifier: Apache-2.0
#pragma once
// An owned file descriptor: closed when its owner goes, moved, never copied.
// -1 is "none". Every fd this project opens and keeps past one statement is
// held by one of these, so no path out of a function leaks it.

#include <unistd.h>

#include <utility>

namespace memqos::io {

class Fd {
public:
    Fd() noexcept = default;
    // Takes ownership of `fd` (-1 or a negative result of open(): none).
    explicit Fd(int fd) noexcept : fd_(fd) {}
    Fd(Fd&& other) noexcept : fd_(other.release()) {}
    Fd& operator=(Fd&& other) noexcept {
        reset(other.release());
        return *this;
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() { reset(); }

    int get() const noexcept { return fd_; }
    explicit operator bool() const noexcept { return fd_ >= 0; }

    // Gives the fd up to the caller, who closes it; this one holds none.
    int release() noexcept { return std::exchange(fd_, -1); }

    // Closes the fd held (ignoring close()'s result) and holds `fd` instead.
    void reset(int fd = -1) noexcept {
        if (fd_ >= 0) {
            ::close(fd_);
        }
        fd_ = fd;
    }

    // Closes now and returns close()'s result (0, or -1 with errno set: it
    // can report a failed write). Holds none afterwards.
    int close() noexcept {
        const int r = fd_ >= 0 ? ::close(fd_) : 0;
        fd_ = -1;
        return r;
    }

private:
    int fd_ = -1;
};

} // namespace memqos::io

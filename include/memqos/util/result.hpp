// SPDX-License-Identifier: Apache-2.0
#pragma once
// Result<T>: a value or an Error, for everything that parses or reads outside
// input. No exceptions cross a Result boundary. Replace with std::expected once
// the toolchain has C++23.

#include <cassert>
#include <string>
#include <system_error>
#include <utility>
#include <variant>

namespace memqos {

// What went wrong. `code` is for programs (ENOENT means "vanished", EINVAL
// "malformed"); `what` is for people and names the object:
// "/sys/fs/cgroup/x/memory.pressure: field avg10 missing".
struct Error {
    std::errc code = std::errc::invalid_argument;
    std::string what;
};

inline Error makeError(std::errc code, std::string what) { return Error{code, std::move(what)}; }
inline Error invalid(std::string what) { return Error{std::errc::invalid_argument, std::move(what)}; }

template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::move(value)) {}          // NOLINT(google-explicit-constructor)
    Result(Error error) : v_(std::move(error)) {}      // NOLINT(google-explicit-constructor)

    bool ok() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return ok(); }

    const T& value() const& { assert(ok()); return std::get<0>(v_); }
    T& value() & { assert(ok()); return std::get<0>(v_); }
    T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
    const T& operator*() const& { return value(); }
    T& operator*() & { return value(); }
    const T* operator->() const { return &value(); }
    T* operator->() { return &value(); }

    const Error& error() const { assert(!ok()); return std::get<1>(v_); }

    template <typename U>
    T valueOr(U&& fallback) const& { return ok() ? value() : static_cast<T>(std::forward<U>(fallback)); }

private:
    std::variant<T, Error> v_;
};

// Result<void>
struct Ok {};
using Status = Result<Ok>;
inline Status okStatus() { return Ok{}; }

} // namespace memqos

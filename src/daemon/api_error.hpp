// SPDX-License-Identifier: Apache-2.0
#pragma once
// Errors the D-Bus API returns: a name under org.memqos1.Error and a message
// that says what was wrong (and, where it helps, what to do).

#include "memqos/io/bus_names.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace memqos::daemon {

struct ApiError {
    std::string name;    // "org.memqos1.Error.UnknownClass"
    std::string message; // "class 'gold' does not exist (known: …)"
};

inline ApiError apiError(std::string_view shortName, std::string message) {
    return ApiError{io::bus_names::kErrorPrefix + std::string(shortName), std::move(message)};
}

template <typename T>
class [[nodiscard]] ApiResult {
public:
    ApiResult(T v) : v_(std::move(v)) {}        // NOLINT(google-explicit-constructor)
    ApiResult(ApiError e) : v_(std::move(e)) {} // NOLINT(google-explicit-constructor)
    bool ok() const { return v_.index() == 0; }
    const T& value() const { return std::get<0>(v_); }
    const ApiError& error() const { return std::get<1>(v_); }

private:
    std::variant<T, ApiError> v_;
};

struct Done {};

} // namespace memqos::daemon

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Waiting for several asynchronous answers: joinAfter(n, then) returns a
// callable that runs `then` at its n-th call, once. To start parts in a loop
// whose answers may come at once (inside the call), count one more than the
// parts and call it once after the loop: `then` cannot run while parts are
// still being started, and runs even when there are none.

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>

namespace memqos::util {

inline std::function<void()> joinAfter(std::size_t n, std::function<void()> then) {
    auto left = std::make_shared<std::size_t>(n);
    return [left, then = std::move(then)] {
        if (*left > 0 && --*left == 0) {
            then();
        }
    };
}

} // namespace memqos::util

// SPDX-License-Identifier: Apache-2.0
#pragma once
// memqosd's sd_notify STATUS= line ("Managing N workloads, pressure level
// L"), sent only when its text changed (issue 25): PID 1 receives and parses
// every notification, and the tick used to send the same line every second.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

namespace memqos::daemon {

class StatusNotifier {
public:
    // `send` gets the whole "STATUS=..." assignment (sd_notify in memqosd).
    explicit StatusNotifier(std::function<void(const std::string&)> send)
        : send_(std::move(send)) {}

    // After each tick: sends the line when it differs from the last one sent.
    void update(std::size_t workloads, std::uint32_t pressureLevel) {
        std::string s = "STATUS=Managing " + std::to_string(workloads) +
                        " workloads, pressure level " + std::to_string(pressureLevel);
        if (s == last_) {
            return;
        }
        send_(s);
        last_ = std::move(s);
    }

private:
    std::function<void(const std::string&)> send_;
    std::string last_;
};

} // namespace memqos::daemon

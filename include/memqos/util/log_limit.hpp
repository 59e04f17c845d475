// SPDX-License-Identifier: Apache-2.0
#pragma once
// A rate limit for one log line that callers can trigger at will (an
// unprivileged D-Bus method): at most `burst` lines per `interval`, the rest
// counted. journald drops a service's messages past its own rate limit
// (10000 per 30 s by default), kill records included, so a line anyone can
// cause must stay far below that. Pure: the caller passes the time.

#include <chrono>
#include <cstdint>

namespace memqos::util {

class LogLimit {
public:
    using Clock = std::chrono::steady_clock;

    LogLimit(std::uint32_t burst, Clock::duration interval) : burst_(burst), interval_(interval) {}

    struct Admit {
        bool log = false;          // log this line
        bool firstDropped = false; // not logged, and the first dropped in this interval
        // With log: the lines dropped since the last one logged (say so).
        std::uint64_t suppressed = 0;
    };

    Admit admit(Clock::time_point now) {
        if (!started_ || now - windowStart_ >= interval_) {
            started_ = true;
            windowStart_ = now;
            inWindow_ = 0;
        }
        if (inWindow_ < burst_) {
            ++inWindow_;
            Admit a{.log = true, .firstDropped = false, .suppressed = suppressed_};
            suppressed_ = 0;
            return a;
        }
        ++suppressed_;
        ++inWindow_;
        return Admit{.log = false, .firstDropped = inWindow_ == burst_ + 1, .suppressed = 0};
    }

    std::uint32_t burst() const { return burst_; }

private:
    std::uint32_t burst_;
    Clock::duration interval_;
    bool started_ = false;
    Clock::time_point windowStart_{};
    std::uint32_t inWindow_ = 0;
    std::uint64_t suppressed_ = 0;
};

} // namespace memqos::util

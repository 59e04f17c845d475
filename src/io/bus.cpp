// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/bus.hpp"

#include <boost/asio/post.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <poll.h>

namespace memqos::io {

Error busError(int negErrno, const std::string& context) {
    const int e = negErrno < 0 ? -negErrno : negErrno;
    return makeError(static_cast<std::errc>(e), context + ": " + std::strerror(e));
}

Result<BusPtr> openBus(const std::optional<std::string>& address, const char* description) {
    sd_bus* raw = nullptr;
    int r = 0;
    if (!address) {
        r = sd_bus_open_system_with_description(&raw, description);
        if (r < 0) {
            return busError(r, "cannot connect to the system bus");
        }
        return BusPtr(raw);
    }
    r = sd_bus_new(&raw);
    if (r < 0) {
        return busError(r, "sd_bus_new");
    }
    BusPtr bus(raw);
    if ((r = sd_bus_set_address(raw, address->c_str())) < 0) {
        return busError(r, "bad bus address '" + *address + "'");
    }
    sd_bus_set_bus_client(raw, 1);
    sd_bus_set_description(raw, description);
    // Tests run a private bus that plays the system bus: negotiate creds so
    // that sd_bus_query_sender_creds() works as on the real one.
    sd_bus_negotiate_creds(raw, 1, SD_BUS_CREDS_UID | SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID);
    if ((r = sd_bus_start(raw)) < 0) {
        return busError(r, "cannot connect to bus '" + *address + "'");
    }
    return bus;
}

BusPump::BusPump(boost::asio::io_context& io, sd_bus* bus)
    : io_(io), bus_(bus), fd_(io), timer_(io) {}

BusPump::~BusPump() {
    stop();
}

void BusPump::start() {
    const int fd = sd_bus_get_fd(bus_);
    if (fd >= 0) {
        fd_.assign(fd);
    }
    kick();
}

void BusPump::stop() {
    if (stopped_) {
        return;
    }
    stopped_ = true;
    boost::system::error_code ec;
    timer_.cancel();
    if (fd_.is_open()) {
        fd_.cancel(ec);
        // sd-bus owns the fd: give it back instead of closing it.
        (void)fd_.release();
    }
}

void BusPump::kick() {
    if (kickPosted_ || stopped_) {
        return;
    }
    kickPosted_ = true;
    boost::asio::post(io_, [this] {
        kickPosted_ = false;
        process();
    });
}

void BusPump::process() {
    if (stopped_) {
        return;
    }
    // Bounded: a flood of messages must not starve timers and signals.
    bool dispatched = false;
    for (int i = 0; i < 64; ++i) {
        const int r = sd_bus_process(bus_, nullptr);
        if (r <= 0) {
            // r < 0: connection broken; sd-bus reports it to callers of
            // pending calls. Keep the loop alive; the daemon decides.
            if (dispatched && afterDispatch_) {
                afterDispatch_();
            }
            arm();
            return;
        }
        dispatched = true;
    }
    if (afterDispatch_) {
        afterDispatch_();
    }
    kick(); // more work queued: continue after other handlers had a turn
}

void BusPump::arm() {
    if (stopped_ || !fd_.is_open()) {
        return;
    }
    const int events = sd_bus_get_events(bus_);
    if (events < 0) {
        return;
    }
    if ((events & POLLIN) != 0 && !readArmed_) {
        readArmed_ = true;
        fd_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                       [this](const boost::system::error_code& ec) {
                           readArmed_ = false;
                           if (!ec) {
                               process();
                           }
                       });
    }
    if ((events & POLLOUT) != 0 && !writeArmed_) {
        writeArmed_ = true;
        fd_.async_wait(boost::asio::posix::stream_descriptor::wait_write,
                       [this](const boost::system::error_code& ec) {
                           writeArmed_ = false;
                           if (!ec) {
                               process();
                           }
                       });
    }
    std::uint64_t usec = 0;
    if (sd_bus_get_timeout(bus_, &usec) >= 0 && usec != UINT64_MAX) {
        // sd-bus gives an absolute CLOCK_MONOTONIC time; steady_clock is
        // CLOCK_MONOTONIC on Linux.
        timespec ts{};
        clock_gettime(CLOCK_MONOTONIC, &ts);
        const std::uint64_t nowUsec = static_cast<std::uint64_t>(ts.tv_sec) * 1000000U +
                                      static_cast<std::uint64_t>(ts.tv_nsec) / 1000U;
        const auto wait = std::chrono::microseconds(usec > nowUsec ? usec - nowUsec : 0);
        timer_.expires_after(wait);
        timer_.async_wait([this](const boost::system::error_code& ec) {
            if (!ec) {
                process();
            }
        });
    }
}

} // namespace memqos::io

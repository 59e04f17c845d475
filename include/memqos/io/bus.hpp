// SPDX-License-Identifier: Apache-2.0
#pragma once
// One sd-bus connection driven by a Boost.Asio io_context (sdbusplus's
// read_wait()/process() pattern). We use raw sd-bus rather than sdbus-c++ 1.2:
// the daemon's dynamic Class/Workload objects map directly onto sd-bus
// fallback vtables, asynchronous calls need no extra event-loop glue, and
// libsystemd is a dependency we have anyway.
//
// Threading: everything here runs on the io_context's single thread.

#include "memqos/io/bus_message.hpp" // BusPtr, MessagePtr, SlotPtr
#include "memqos/util/result.hpp"

// g++ 12 -O2 reports a "potential null pointer dereference" inside Boost
// 1.74's scheduler (-Wnull-dereference); it is not ours to fix.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#pragma GCC diagnostic pop
#include <systemd/sd-bus.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace memqos::io {

// Opens the system bus, or `address` ("unix:path=…") when given (tests).
// `description` names the connection in logs.
Result<BusPtr> openBus(const std::optional<std::string>& address, const char* description);

// "sd-bus error text" for a negative errno from sd-bus, with context.
Error busError(int negErrno, const std::string& context);

// Pumps `bus` from `io`: waits for its fd and its timeout, calls
// sd_bus_process() until idle, re-arms. Call kick() after queueing outgoing
// messages so they are flushed without waiting for input.
class BusPump {
public:
    BusPump(boost::asio::io_context& io, sd_bus* bus);
    ~BusPump();
    BusPump(const BusPump&) = delete;
    BusPump& operator=(const BusPump&) = delete;

    void start();
    void kick();
    void stop();
    boost::asio::io_context& context() noexcept { return io_; }
    // Called after a run of process() that dispatched at least one message
    // (method calls, replies, signals: what changes the daemon's state).
    void setAfterDispatch(std::function<void()> fn) { afterDispatch_ = std::move(fn); }

private:
    void process();
    void arm();

    boost::asio::io_context& io_;
    sd_bus* bus_;
    boost::asio::posix::stream_descriptor fd_;
    boost::asio::steady_timer timer_;
    bool readArmed_ = false;
    bool writeArmed_ = false;
    bool kickPosted_ = false;
    bool stopped_ = false;
    std::function<void()> afterDispatch_;
};

} // namespace memqos::io

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Durable state writes (assignments, instance records, units' own values)
// off the daemon's loop. Each write fsyncs twice (the file, then its
// directory): milliseconds on a quiet disk, tens to hundreds of them when
// the disk is busy, and the bus must keep answering meanwhile. One worker
// thread runs the writes in the order they were given, so the disk sees them
// in call order (a save and a later remove of the same file never swap); a
// write's result comes back on the daemon's io_context, and a D-Bus call
// that stores something replies only then: what a reply says was recorded
// is on disk (doc/DESIGN.md §6).
#include "memqos/util/result.hpp"

#include <functional>
#include <memory>

namespace boost::asio {
class io_context;
} // namespace boost::asio

namespace memqos::io {

class StateWriter {
public:
    using Op = std::function<Status()>;
    using Done = std::function<void(Status)>;
    virtual ~StateWriter() = default;
    // Runs `op` (a store's save or remove) after every op given before it;
    // `done` gets its result on the caller's loop.
    virtual void write(Op op, Done done) = 0;
    // Runs `op` once every op given before it has run, and returns its
    // result: the caller waits (for the rare writes whose result decides
    // what the caller does next and that are on no call's path).
    virtual Status writeNow(const Op& op) = 0;
};

// Runs every op at once on the caller's thread, `done` included (tests,
// and memqosd before its loop runs).
class InlineStateWriter final : public StateWriter {
public:
    void write(Op op, Done done) override;
    Status writeNow(const Op& op) override;
};

class StateWorker final : public StateWriter {
public:
    explicit StateWorker(boost::asio::io_context& io);
    // Runs the writes already given (each was asked for, and a reply may
    // wait on it), then joins; their `done` are posted to the loop, which
    // may no longer run them.
    ~StateWorker() override;
    StateWorker(const StateWorker&) = delete;
    StateWorker& operator=(const StateWorker&) = delete;
    void write(Op op, Done done) override;
    Status writeNow(const Op& op) override;
    struct Thread;

private:
    boost::asio::io_context& io_;
    std::unique_ptr<Thread> thread_;
};

} // namespace memqos::io

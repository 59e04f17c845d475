// SPDX-License-Identifier: Apache-2.0
#pragma once
// The metrics file ([Manager] MetricsFile=) written off the daemon's loop:
// a write to a slow or stuck filesystem must not hold up the tick or the
// bus. One worker thread replaces the file (temp file and rename, no fsync:
// replaceFile); only the newest text waits, so a slow disk makes the file
// skip ticks instead of queueing them. Results come back on the daemon's
// io_context.

#include "memqos/util/result.hpp"

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

namespace boost::asio {
class io_context;
} // namespace boost::asio

namespace memqos::io {

class MetricsWriter {
public:
    using Done = std::function<void(Status)>;
    virtual ~MetricsWriter() = default;
    // Replaces `file` with `text`; `done` runs later on the caller's loop
    // (never from inside this call). A write still waiting when the next
    // one comes is dropped, and its `done` never runs.
    virtual void write(std::filesystem::path file, std::string text, Done done) = 0;
    // `file` is no longer wanted (a reload moved or cleared MetricsFile): a
    // write of it still waiting is dropped, and one under way is removed
    // again once it is done, so a late write cannot bring the file back.
    virtual void forget(const std::filesystem::path& file) = 0;
};

class MetricsWorker final : public MetricsWriter {
public:
    explicit MetricsWorker(boost::asio::io_context& io);
    ~MetricsWorker() override;
    MetricsWorker(const MetricsWorker&) = delete;
    MetricsWorker& operator=(const MetricsWorker&) = delete;

    void write(std::filesystem::path file, std::string text, Done done) override;
    void forget(const std::filesystem::path& file) override;

    struct Thread;

private:
    void runOne();
    boost::asio::io_context& io_;
    std::unique_ptr<Thread> thread_;
};

} // namespace memqos::io

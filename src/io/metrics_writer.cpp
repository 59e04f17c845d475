// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/metrics_writer.hpp"

#include "memqos/io/state_store.hpp"
#include "memqos/io/worker_thread.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <mutex>
#include <optional>
#include <thread>
#include <unistd.h>
#include <utility>

namespace memqos::io {

struct MetricsWorker::Thread : WorkerThread {
    struct Job {
        std::filesystem::path file;
        std::string text;
        Done done;
    };
    std::mutex mutex;
    std::optional<Job> waiting;     // the newest write not started yet
    std::filesystem::path underWay; // the file being written (empty: none)
    bool removeUnderWay = false;    // forget() came while it was written
};

MetricsWorker::MetricsWorker(boost::asio::io_context& io)
    : io_(io), thread_(std::make_unique<Thread>()) {
    thread_->name("memqos-metrics");
}

MetricsWorker::~MetricsWorker() {
    // A write not started is dropped; one under way ends.
    thread_->finish(WorkerThread::Queued::Drop);
}

void MetricsWorker::write(std::filesystem::path file, std::string text, Done done) {
    bool start = false;
    {
        const std::lock_guard<std::mutex> lock(thread_->mutex);
        start = !thread_->waiting;
        thread_->waiting = Thread::Job{std::move(file), std::move(text), std::move(done)};
    }
    if (start) {
        boost::asio::post(thread_->work, [this] { runOne(); });
    }
}

void MetricsWorker::forget(const std::filesystem::path& file) {
    const std::lock_guard<std::mutex> lock(thread_->mutex);
    if (thread_->waiting && thread_->waiting->file == file) {
        thread_->waiting.reset();
    }
    if (!thread_->underWay.empty() && thread_->underWay == file) {
        thread_->removeUnderWay = true;
    }
}

void MetricsWorker::runOne() {
    Thread::Job job;
    {
        const std::lock_guard<std::mutex> lock(thread_->mutex);
        if (!thread_->waiting) {
            return; // forgotten, or taken by an earlier run
        }
        job = std::move(*thread_->waiting);
        thread_->waiting.reset();
        thread_->underWay = job.file;
        thread_->removeUnderWay = false;
    }
    Status st = replaceFile(job.file.parent_path(), job.file.filename().string(), job.text);
    bool remove = false;
    {
        const std::lock_guard<std::mutex> lock(thread_->mutex);
        remove = thread_->removeUnderWay;
        thread_->underWay.clear();
        thread_->removeUnderWay = false;
    }
    if (remove && st) {
        ::unlink(job.file.c_str());
    }
    boost::asio::post(io_, [done = std::move(job.done), st = std::move(st)] { done(st); });
}

} // namespace memqos::io

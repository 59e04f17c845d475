// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/reclaim_worker.hpp"

#include "memqos/io/worker_thread.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <mutex>
#include <set>
#include <thread>

namespace memqos::io {

Result<ReclaimResult> reclaimMeasured(const KernelKnobs& knobs, const CgroupFs& cgroups,
                                      const std::string& cgroup, Bytes bytes,
                                      const std::function<bool()>& stop) {
    ReclaimResult out{Reclaimed::Full, 0};
    while (out.freed < bytes) {
        if (out.freed > 0 && stop && stop()) {
            out.outcome = Reclaimed::Partial;
            break;
        }
        const Bytes chunk = std::min(kReclaimChunk, bytes - out.freed);
        const auto before = cgroups.usage(cgroup, false);
        auto r = knobs.reclaim(cgroup, chunk);
        if (!r) {
            if (out.freed > 0) {
                out.outcome = Reclaimed::Partial; // what went through counts
                break;
            }
            return r.error();
        }
        if (*r == Reclaimed::Vanished) {
            out.outcome = Reclaimed::Vanished;
            break;
        }
        if (*r == Reclaimed::Full) {
            out.freed += chunk;
            continue;
        }
        // EAGAIN: the kernel found less; count the drop of memory.current.
        const auto after = cgroups.usage(cgroup, false);
        if (before && before->has_value() && after && after->has_value() &&
            (*before)->memoryCurrent > (*after)->memoryCurrent) {
            out.freed += std::min(chunk, (*before)->memoryCurrent - (*after)->memoryCurrent);
        }
        out.outcome = Reclaimed::Partial;
        break;
    }
    return out;
}

struct ReclaimWorker::Thread : WorkerThread {
    std::mutex mutex;
    std::set<std::string> cancelled; // cgroups whose write is to stop
};

ReclaimWorker::ReclaimWorker(boost::asio::io_context& io, std::filesystem::path cgroupRoot)
    : io_(io), cgroups_(cgroupRoot), knobs_(cgroupRoot, "/proc"),
      thread_(std::make_unique<Thread>()) {
    thread_->name("memqos-reclaim");
}

ReclaimWorker::~ReclaimWorker() {
    // Writes not started are dropped; one under way ends with the kernel's
    // reclaim.
    thread_->finish(WorkerThread::Queued::Drop);
}

void ReclaimWorker::reclaim(const std::string& cgroup, Bytes bytes, Done done) {
    boost::asio::post(thread_->work, [this, cgroup, bytes, done = std::move(done)] {
        auto r = reclaimMeasured(knobs_, cgroups_, cgroup, bytes,
                                 [this, &cgroup] { return cancelled(cgroup); });
        {
            const std::lock_guard<std::mutex> lock(thread_->mutex);
            thread_->cancelled.erase(cgroup); // a cancel applies to this write only
        }
        boost::asio::post(io_, [done, r = std::move(r)] { done(r); });
    });
}

void ReclaimWorker::cancel(const std::string& cgroup) {
    const std::lock_guard<std::mutex> lock(thread_->mutex);
    thread_->cancelled.insert(cgroup);
}

bool ReclaimWorker::cancelled(const std::string& cgroup) {
    const std::lock_guard<std::mutex> lock(thread_->mutex);
    return thread_->cancelled.contains(cgroup);
}

} // namespace memqos::io

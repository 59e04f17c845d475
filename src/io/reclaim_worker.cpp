// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/reclaim_worker.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <thread>

namespace memqos::io {

Result<ReclaimResult> reclaimMeasured(const KernelKnobs& knobs, const CgroupFs& cgroups,
                                      const std::string& cgroup, Bytes bytes) {
    const auto before = cgroups.usage(cgroup, false);
    auto r = knobs.reclaim(cgroup, bytes);
    if (!r) {
        return r.error();
    }
    ReclaimResult out{*r, 0};
    if (*r == Reclaimed::Full) {
        out.freed = bytes;
    } else if (*r == Reclaimed::Partial) {
        const auto after = cgroups.usage(cgroup, false);
        if (before && before->has_value() && after && after->has_value() &&
            (*before)->memoryCurrent > (*after)->memoryCurrent) {
            out.freed = std::min(bytes, (*before)->memoryCurrent - (*after)->memoryCurrent);
        }
    }
    return out;
}

struct ReclaimWorker::Thread {
    boost::asio::io_context work;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{
        work.get_executor()};
    std::thread thread{[this] { work.run(); }};
};

ReclaimWorker::ReclaimWorker(boost::asio::io_context& io, std::filesystem::path cgroupRoot)
    : io_(io), cgroups_(cgroupRoot), knobs_(cgroupRoot, "/proc"),
      thread_(std::make_unique<Thread>()) {}

ReclaimWorker::~ReclaimWorker() {
    thread_->guard.reset();
    thread_->work.stop(); // drop writes not started; one under way ends with the kernel's reclaim
    thread_->thread.join();
}

void ReclaimWorker::reclaim(const std::string& cgroup, Bytes bytes, Done done) {
    boost::asio::post(thread_->work, [this, cgroup, bytes, done = std::move(done)] {
        auto r = reclaimMeasured(knobs_, cgroups_, cgroup, bytes);
        boost::asio::post(io_, [done, r = std::move(r)] { done(r); });
    });
}

} // namespace memqos::io

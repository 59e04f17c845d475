// SPDX-License-Identifier: Apache-2.0
#pragma once
// A worker's queue: an io_context run by a thread of its own (the reclaim,
// metrics and state workers). Jobs are posted to `work`; each worker posts
// its results back to the daemon's loop itself.
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <pthread.h>

#include <thread>

namespace memqos::io {

struct WorkerThread {
    boost::asio::io_context work;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{
        work.get_executor()};
    std::thread thread{[this] { work.run(); }};

    // The name ps, top and /proc/PID/task/TID/comm show (at most 15
    // characters): the overhead benchmark tells the threads' CPU apart by it.
    void name(const char* text) { pthread_setname_np(thread.native_handle(), text); }

    enum class Queued { Drop, Run };
    // Ends the thread: the jobs not started yet are dropped or run first;
    // the one under way always ends.
    void finish(Queued queued) {
        guard.reset();
        if (queued == Queued::Drop) {
            work.stop();
        }
        thread.join();
    }
};

} // namespace memqos::io

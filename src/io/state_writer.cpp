// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/state_writer.hpp"

#include "memqos/io/worker_thread.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <future>

namespace memqos::io {

void InlineStateWriter::write(Op op, Done done) {
    done(op());
}

Status InlineStateWriter::writeNow(const Op& op) {
    return op();
}

struct StateWorker::Thread : WorkerThread {};

StateWorker::StateWorker(boost::asio::io_context& io)
    : io_(io), thread_(std::make_unique<Thread>()) {
    thread_->name("memqos-state");
}

StateWorker::~StateWorker() {
    thread_->finish(WorkerThread::Queued::Run); // each was asked for, and may be answered
}

void StateWorker::write(Op op, Done done) {
    boost::asio::post(thread_->work, [this, op = std::move(op), done = std::move(done)]() mutable {
        auto st = op();
        boost::asio::post(io_, [done = std::move(done), st = std::move(st)] { done(st); });
    });
}

Status StateWorker::writeNow(const Op& op) {
    std::promise<Status> result;
    auto future = result.get_future();
    boost::asio::post(thread_->work, [&op, &result] { result.set_value(op()); });
    return future.get();
}

} // namespace memqos::io

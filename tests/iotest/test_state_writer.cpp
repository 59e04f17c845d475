// SPDX-License-Identifier: Apache-2.0
// StateWorker: the stores' writes run off the caller's thread, in the order
// they were given, and each result comes back on the caller's loop; a
// writeNow runs after every write given before it; the destructor runs the
// writes already given.
#include "memqos/io/state_writer.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace memqos::io {
namespace {

TEST(StateWorker, RunsWritesInOrderOffTheLoopAndAnswersOnIt) {
    boost::asio::io_context loop;
    auto guard = boost::asio::make_work_guard(loop);
    std::mutex mutex;
    std::vector<int> ran;      // the ops, on the worker
    std::vector<int> answered; // the dones, on the loop
    const auto loopThread = std::this_thread::get_id();
    std::atomic<bool> offTheLoop{true};
    {
        StateWorker worker(loop);
        for (int i = 0; i < 50; ++i) {
            worker.write(
                [&, i] {
                    if (std::this_thread::get_id() == loopThread) {
                        offTheLoop = false;
                    }
                    const std::lock_guard<std::mutex> lock(mutex);
                    ran.push_back(i);
                    if (i == 7) {
                        return Status(makeError(std::errc::no_space_on_device, "full"));
                    }
                    return okStatus();
                },
                [&, i](Status st) {
                    EXPECT_EQ(std::this_thread::get_id(), loopThread);
                    EXPECT_EQ(st.ok(), i != 7) << i;
                    answered.push_back(i);
                    if (answered.size() == 50) {
                        guard.reset();
                    }
                });
        }
        // A writeNow waits for the 50 before it, and returns its own result.
        const auto st = worker.writeNow([&] {
            const std::lock_guard<std::mutex> lock(mutex);
            ran.push_back(50);
            return okStatus();
        });
        EXPECT_TRUE(st.ok());
        {
            const std::lock_guard<std::mutex> lock(mutex);
            ASSERT_EQ(ran.size(), 51U);
        }
        EXPECT_TRUE(answered.empty()) << "a done ran outside the loop";
    }
    loop.run_for(std::chrono::seconds(10));
    EXPECT_TRUE(offTheLoop);
    std::vector<int> expected(51);
    for (int i = 0; i < 51; ++i) {
        expected[static_cast<std::size_t>(i)] = i;
    }
    EXPECT_EQ(ran, expected);
    expected.pop_back();
    EXPECT_EQ(answered, expected);
}

TEST(StateWorker, TheDestructorRunsTheWritesAlreadyGiven) {
    boost::asio::io_context loop;
    std::atomic<int> ran{0};
    {
        StateWorker worker(loop);
        worker.write(
            [&] {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
                ++ran;
                return okStatus();
            },
            [](Status) {});
        worker.write(
            [&] {
                ++ran;
                return okStatus();
            },
            [](Status) {});
    }
    EXPECT_EQ(ran.load(), 2);
}

} // namespace
} // namespace memqos::io

// SPDX-License-Identifier: Apache-2.0
// MetricsWorker: the metrics file replaced on a thread of its own (temp file
// and rename), the result answered on the caller's loop.
#include "memqos/io/metrics_writer.hpp"

#include "memqos/io/file.hpp"

#include "fixture_tree.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>

namespace memqos::io {
namespace {

using test::TempDir;
using test::writeFile;

std::optional<Status> writeAndWait(boost::asio::io_context& io, MetricsWorker& worker,
                                   const std::filesystem::path& file, const std::string& text) {
    std::optional<Status> got;
    worker.write(file, text, [&](Status st) { got = std::move(st); });
    EXPECT_FALSE(got) << "answered inside the call";
    io.restart(); // the last wait ran it out of work
    auto guard = boost::asio::make_work_guard(io);
    while (!got) {
        io.run_one();
    }
    return got;
}

TEST(MetricsWorker, ReplacesTheFileAndAnswersOnTheCallersLoop) {
    TempDir tmp;
    const auto file = tmp.path() / "prom/memqos.prom";
    boost::asio::io_context io;
    MetricsWorker worker(io);
    auto st = writeAndWait(io, worker, file, "memqos_pressure_level 0\n");
    ASSERT_TRUE(*st) << st->error().what;
    st = writeAndWait(io, worker, file, "memqos_pressure_level 2\n");
    ASSERT_TRUE(*st) << st->error().what;
    auto text = readFile(file);
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(*text, "memqos_pressure_level 2\n");
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(file.parent_path())) {
        ++entries;
    }
    EXPECT_EQ(entries, 1U) << "a temp file was left behind";
}

TEST(MetricsWorker, AFailedWriteIsAnsweredWithItsError) {
    TempDir tmp;
    writeFile(tmp.path() / "prom", "a file where the directory should be\n");
    boost::asio::io_context io;
    MetricsWorker worker(io);
    auto st = writeAndWait(io, worker, tmp.path() / "prom/memqos.prom", "x 1\n");
    ASSERT_FALSE(*st);
    EXPECT_NE(st->error().what.find("prom"), std::string::npos) << st->error().what;
}

} // namespace
} // namespace memqos::io

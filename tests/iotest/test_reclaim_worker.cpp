// SPDX-License-Identifier: Apache-2.0
// reclaimMeasured: memory.reclaim in chunks, stopped between chunks, EAGAIN
// counted as the drop of memory.current; ReclaimWorker answers on the
// caller's loop. A regular file stands in for memory.reclaim (a write
// always "succeeds"; the last chunk's text is what it holds).
#include "memqos/io/reclaim_worker.hpp"

#include "memqos/io/file.hpp"

#include "fixture_tree.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace memqos::io {
namespace {

using test::TempDir;
using test::writeFile;

class ReclaimMeasured : public testing::Test {
protected:
    void SetUp() override {
        writeFile(tmp_.path() / "w.service/memory.current", "104857600\n");
        writeFile(tmp_.path() / "w.service/memory.reclaim", "");
    }
    std::string reclaimFile() const {
        auto text = readFile(tmp_.path() / "w.service/memory.reclaim");
        return text ? *text : "<" + text.error().what + ">";
    }
    TempDir tmp_;
    CgroupFs cgroups_{tmp_.path()};
    KernelKnobs knobs_{tmp_.path(), tmp_.path()};
};

TEST_F(ReclaimMeasured, WritesInChunksUntilAllIsFreed) {
    int asked = 0;
    auto r = reclaimMeasured(knobs_, cgroups_, "w.service", 20 * kMiB, [&] {
        ++asked;
        return false;
    });
    ASSERT_TRUE(r.ok()) << r.error().what;
    EXPECT_EQ(r->outcome, Reclaimed::Full);
    EXPECT_EQ(r->freed, 20 * kMiB);
    EXPECT_EQ(asked, 2); // between 8 + 8 + 4 MiB
    EXPECT_EQ(reclaimFile(), std::to_string(4 * kMiB)); // the last chunk
}

TEST_F(ReclaimMeasured, StopsBetweenChunksWithWhatWentThrough) {
    auto r = reclaimMeasured(knobs_, cgroups_, "w.service", 20 * kMiB, [] { return true; });
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->outcome, Reclaimed::Partial);
    EXPECT_EQ(r->freed, kReclaimChunk); // the first chunk always goes
}

TEST_F(ReclaimMeasured, AGoneCgroupIsVanishedNotAnError) {
    auto r = reclaimMeasured(knobs_, cgroups_, "gone.service", kMiB);
    ASSERT_TRUE(r.ok()) << r.error().what;
    EXPECT_EQ(r->outcome, Reclaimed::Vanished);
    EXPECT_EQ(r->freed, 0U);
}

TEST(ReclaimWorker, AnswersOnTheCallersLoop) {
    TempDir tmp;
    writeFile(tmp.path() / "w.service/memory.current", "104857600\n");
    writeFile(tmp.path() / "w.service/memory.reclaim", "");
    boost::asio::io_context io;
    std::optional<Result<ReclaimResult>> got;
    {
        ReclaimWorker worker(io, tmp.path());
        worker.reclaim("w.service", 3 * kMiB, [&](Result<ReclaimResult> r) { got = r; });
        EXPECT_FALSE(got) << "answered inside the call";
        // Keep the loop alive until the worker posts its answer.
        auto guard = boost::asio::make_work_guard(io);
        while (!got) {
            io.run_one();
        }
    }
    ASSERT_TRUE(got->ok());
    EXPECT_EQ((*got)->freed, 3 * kMiB);
}

} // namespace
} // namespace memqos::io

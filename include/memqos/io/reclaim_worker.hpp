// SPDX-License-Identifier: Apache-2.0
#pragma once
// memory.reclaim writes off the daemon's loop: a write blocks for as long as
// the kernel reclaims (seconds, when it swaps), and the bus must keep
// answering meanwhile. One worker thread runs the writes in order; each
// result comes back on the daemon's io_context.

#include "memqos/core/types.hpp"
#include "memqos/io/kernel_knobs.hpp"
#include "memqos/util/result.hpp"

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

namespace boost::asio {
class io_context;
} // namespace boost::asio

namespace memqos::io {

struct ReclaimResult {
    Reclaimed outcome = Reclaimed::Full;
    // What the write freed: `bytes` when the kernel reclaimed the whole
    // amount, else the drop of memory.current across the write, at most
    // `bytes` (the kernel does not say how much a partial write freed).
    Bytes freed = 0;
};

class ReclaimRunner {
public:
    using Done = std::function<void(Result<ReclaimResult>)>;
    virtual ~ReclaimRunner() = default;
    // Writes `bytes` to <cgroup>/memory.reclaim; `done` runs later on the
    // caller's loop (never from inside this call).
    virtual void reclaim(const std::string& cgroup, Bytes bytes, Done done) = 0;
    // Stops the write under way for `cgroup` after its current chunk (the
    // controller backed off); `done` still runs, with what was freed.
    virtual void cancel(const std::string& cgroup) = 0;
};

// memory.reclaim is written in chunks of at most this, so a back-off stops
// a long write within one chunk (a chunk that swaps takes seconds under
// emulation, milliseconds on a real host).
inline constexpr Bytes kReclaimChunk = 8 * kMiB;

// The measured write itself (what the worker runs; synchronous): chunks of
// kReclaimChunk until `bytes` are freed, the kernel finds less (EAGAIN) or
// `stop()` says so between chunks.
Result<ReclaimResult> reclaimMeasured(const KernelKnobs& knobs, const CgroupFs& cgroups,
                                      const std::string& cgroup, Bytes bytes,
                                      const std::function<bool()>& stop = {});

class ReclaimWorker final : public ReclaimRunner {
public:
    ReclaimWorker(boost::asio::io_context& io, std::filesystem::path cgroupRoot);
    ~ReclaimWorker() override;
    ReclaimWorker(const ReclaimWorker&) = delete;
    ReclaimWorker& operator=(const ReclaimWorker&) = delete;

    void reclaim(const std::string& cgroup, Bytes bytes, Done done) override;
    void cancel(const std::string& cgroup) override;

    struct Thread;

private:
    bool cancelled(const std::string& cgroup);
    boost::asio::io_context& io_;
    CgroupFs cgroups_;
    KernelKnobs knobs_;
    std::unique_ptr<Thread> thread_;
};

} // namespace memqos::io

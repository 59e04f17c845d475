// SPDX-License-Identifier: Apache-2.0
#pragma once
// PSI triggers (kernel Documentation/accounting/psi.rst): a pressure file
// opened O_RDWR with "some|full <stall us> <window us>" written to it (one
// write, NUL included) wakes its poller with POLLPRI when the stall within a
// window passes the threshold, at most once per window. Each trigger needs
// its own fd; closing the fd removes the trigger.
//
// The kernel refuses a trigger, and watch() reports it so that the caller
// keeps polling instead:
//   ENOENT        no PSI (no /proc/pressure), or the cgroup does not exist
//                 (not started yet, or removed)
//   EOPNOTSUPP    PSI disabled (psi=0, cgroup.pressure=0); also returned,
//                 before anything is written, for a file that is on neither
//                 procfs nor cgroup2 (a test's fixture tree)
//   EPERM         opening /proc/pressure/* for writing without
//                 CAP_SYS_RESOURCE, on kernels before 6.5 (Debian 12's 6.1)
//   EINVAL        a value out of range; kernels since 6.5 take only windows
//                 that are a multiple of 2 s from callers without
//                 CAP_SYS_RESOURCE
// On a cgroup file, POLLERR means the cgroup went away: that file's watches
// end (debug log) instead of waking the loop again and again.

#include "memqos/core/psi_triggers.hpp"
#include "memqos/util/result.hpp"

// Boost.Asio 1.74's scheduler trips -Wnull-dereference (see bus.hpp).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#pragma GCC diagnostic pop

#include <cstddef>
#include <filesystem>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <vector>

namespace memqos::io {

class PsiTriggers {
public:
    // `fired` runs on the io thread (from io.run()) each time any watched
    // trigger fires; several triggers firing together call it several times.
    // The watches are re-armed before it runs, and it may call clear() or
    // watch().
    PsiTriggers(boost::asio::io_context& io, std::function<void()> fired);
    // Closes every trigger fd. Handlers still queued in the io_context then do
    // nothing.
    ~PsiTriggers();
    PsiTriggers(const PsiTriggers&) = delete;
    PsiTriggers& operator=(const PsiTriggers&) = delete;

    // Registers one trigger per spec on `file` (each on its own fd) and
    // watches them. All or nothing: on the first failure the triggers already
    // written for this call are closed and the error returned, its code the
    // errno (see above) and `what` "<file>: <reason>". Empty `specs`: nothing
    // to do, ok. A file may be watched again (after clear(), or by a second
    // call: its triggers then add up).
    Status watch(const std::filesystem::path& file, const std::vector<core::TriggerSpec>& specs);

    // Watches an fd that is already set up, taking ownership of it (closed on
    // failure too); `name` stands for the file in logs and watching(). For
    // tests, which cannot always create PSI triggers: out-of-band data sent to
    // a stream socket is POLLPRI, a pipe's write end with the read end closed
    // POLLERR. An fd that cannot be waited on (a regular file) is dropped,
    // closed, at the first wait.
    Status adopt(int fd, std::string name);

    // Closes every trigger.
    void clear();
    // Trigger fds open (a file's POLLERR closes its fds).
    std::size_t size() const { return watches_.size(); }
    // Whether a trigger on `file` is open.
    bool watching(const std::filesystem::path& file) const;

private:
    struct Watch {
        boost::asio::posix::stream_descriptor fd;
        std::string file;
    };
    Status add(int fd, std::string file);
    void arm(const std::shared_ptr<Watch>& w);
    void remove(const std::shared_ptr<Watch>& w);

    boost::asio::io_context& io_;
    std::function<void()> fired_;
    // shared_ptr: a completion already queued when clear() runs holds only a
    // weak_ptr and finds its watch gone.
    std::list<std::shared_ptr<Watch>> watches_;
};

} // namespace memqos::io

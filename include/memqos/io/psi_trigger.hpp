// SPDX-License-Identifier: Apache-2.0
#pragma once
// PSI triggers (kernel Documentation/accounting/psi.rst): a pressure file
// opened O_RDWR with "some|full <stall us> <window us>" written to it wakes
// its poller with POLLPRI when the stall within a window passes the
// threshold (at most once per window). Each trigger needs its own fd. The
// kernel refuses them without PSI (ENOENT/EOPNOTSUPP), for bad values
// (EINVAL) and, on /proc/pressure/* of kernel 6.1, without
// CAP_SYS_RESOURCE (EPERM): callers then keep polling.
// On cgroup files, POLLERR means the cgroup is gone: that watch ends.

#include "memqos/util/result.hpp"

// Boost.Asio 1.74's scheduler trips -Wnull-dereference (see bus.hpp).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#pragma GCC diagnostic pop

#include <filesystem>
#include <functional>
#include <list>
#include <string>
#include <vector>

namespace memqos::io {

class PsiTriggers {
public:
    // `fired` runs on the io thread whenever any registered trigger fires.
    PsiTriggers(boost::asio::io_context& io, std::function<void()> fired);
    ~PsiTriggers();
    PsiTriggers(const PsiTriggers&) = delete;
    PsiTriggers& operator=(const PsiTriggers&) = delete;

    // One trigger per line ("some 100000 1000000") on `file`, which must be
    // on procfs or cgroup2 (else operation_not_supported, and nothing is
    // written to it). All or
    // nothing: on the first refusal the file's other triggers are closed
    // and the error (errno as code, "<file>: <reason>") returned.
    Status watch(const std::filesystem::path& file, const std::vector<std::string>& lines);
    // Closes every trigger.
    void clear();
    std::size_t size() const { return watches_.size(); }

private:
    struct Watch {
        boost::asio::posix::stream_descriptor fd;
        std::string file;
    };
    void arm(std::list<Watch>::iterator w);

    boost::asio::io_context& io_;
    std::function<void()> fired_;
    std::list<Watch> watches_;
};

} // namespace memqos::io

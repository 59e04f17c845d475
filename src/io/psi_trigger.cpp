// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/psi_trigger.hpp"

#include "memqos/io/file.hpp"
#include "memqos/io/log.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace memqos::io {

PsiTriggers::PsiTriggers(boost::asio::io_context& io, std::function<void()> fired)
    : io_(io), fired_(std::move(fired)) {}

PsiTriggers::~PsiTriggers() { clear(); }

void PsiTriggers::clear() {
    for (auto& w : watches_) {
        boost::system::error_code ec;
        w.fd.cancel(ec);
        w.fd.close(ec);
    }
    watches_.clear();
}

Status PsiTriggers::watch(const std::filesystem::path& file, const std::vector<std::string>& lines) {
    std::vector<std::list<Watch>::iterator> added;
    auto undo = [&](int err) -> Status {
        for (auto it : added) {
            boost::system::error_code ec;
            it->fd.close(ec);
            watches_.erase(it);
        }
        return errnoError(err, file);
    };
    for (const auto& line : lines) {
        const int fd = ::open(file.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
            return undo(errno);
        }
        // Only procfs and cgroup2 files take triggers; a write to any other
        // file (a test's fixture tree) would overwrite it.
        struct statfs sfs {};
        if (::fstatfs(fd, &sfs) != 0 || (sfs.f_type != PROC_SUPER_MAGIC &&
                                          sfs.f_type != CGROUP2_SUPER_MAGIC)) {
            ::close(fd);
            return undo(EOPNOTSUPP);
        }
        // The kernel wants the whole trigger in one write, NUL included.
        if (::write(fd, line.c_str(), line.size() + 1) < 0) {
            const int err = errno;
            ::close(fd);
            return undo(err);
        }
        watches_.push_back(Watch{boost::asio::posix::stream_descriptor(io_, fd), file.string()});
        added.push_back(std::prev(watches_.end()));
    }
    for (auto it : added) {
        arm(it);
    }
    return okStatus();
}

void PsiTriggers::arm(std::list<Watch>::iterator w) {
    w->fd.async_wait(boost::asio::posix::stream_descriptor::wait_error,
                     [this, w](const boost::system::error_code& ec) {
                         if (ec) {
                             return; // cancelled (clear) or closed
                         }
                         pollfd p{w->fd.native_handle(), POLLPRI, 0};
                         if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLERR | POLLNVAL)) != 0) {
                             // The cgroup went away: stop watching it.
                             log::debug("PSI trigger on {FILE} ended (cgroup removed)", "FILE",
                                        w->file);
                             boost::system::error_code ignored;
                             w->fd.close(ignored);
                             watches_.erase(w);
                             return;
                         }
                         arm(w);
                         fired_();
                     });
}

} // namespace memqos::io

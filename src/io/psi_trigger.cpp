// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/psi_trigger.hpp"

#include "memqos/io/fd.hpp"
#include "memqos/io/file.hpp"
#include "memqos/io/log.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <sys/statfs.h>
#include <system_error>
#include <unistd.h>

namespace memqos::io {
namespace {

// What the kernel's refusal most likely means, for the operator.
std::string hint(int err) {
    switch (err) {
    case EPERM:
        return " (needs CAP_SYS_RESOURCE)";
    case EINVAL:
        return " (a value out of range; kernels since 6.5 take only windows that are a "
               "multiple of 2 s without CAP_SYS_RESOURCE)";
    case EOPNOTSUPP:
        return " (PSI is disabled)";
    default:
        return "";
    }
}

} // namespace

PsiTriggers::PsiTriggers(boost::asio::io_context& io, std::function<void()> fired)
    : io_(io), fired_(std::move(fired)) {}

PsiTriggers::~PsiTriggers() {
    clear();
}

void PsiTriggers::clear() {
    for (auto& w : watches_) {
        boost::system::error_code ignored;
        w->fd.close(ignored); // cancels its wait: the handler gets operation_aborted
    }
    watches_.clear();
}

bool PsiTriggers::watching(const std::filesystem::path& file) const {
    return std::any_of(watches_.begin(), watches_.end(),
                       [name = file.string()](const auto& w) { return w->file == name; });
}

Status PsiTriggers::watch(const std::filesystem::path& file,
                          const std::vector<core::TriggerSpec>& specs) {
    std::vector<std::shared_ptr<Watch>> added;
    auto undo = [&](Error error) -> Status {
        for (const auto& w : added) {
            remove(w);
        }
        return error;
    };
    for (const auto& spec : specs) {
        Fd fd(::open(file.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
        if (!fd) {
            const int err = errno;
            Error error = errnoError(err, file);
            error.what += hint(err);
            return undo(std::move(error));
        }
        // Only procfs and cgroup2 pressure files take triggers; a write to any
        // other file (a test's fixture tree) would overwrite it.
        struct statfs sfs {};
        if (::fstatfs(fd.get(), &sfs) != 0 ||
            (sfs.f_type != PROC_SUPER_MAGIC && sfs.f_type != CGROUP2_SUPER_MAGIC)) {
            return undo(makeError(std::errc::operation_not_supported,
                                  file.string() + ": not on procfs or cgroup2, no PSI trigger"));
        }
        // The kernel wants the whole trigger in one write, NUL included.
        const std::string line = core::triggerLine(spec);
        if (::write(fd.get(), line.c_str(), line.size() + 1) < 0) {
            const int err = errno;
            return undo(makeError(static_cast<std::errc>(err),
                                  file.string() + ": writing \"" + line +
                                      "\": " + std::generic_category().message(err) + hint(err)));
        }
        if (auto st = add(fd.release(), file.string()); !st) {
            return undo(st.error());
        }
        added.push_back(watches_.back());
    }
    for (const auto& w : added) {
        arm(w);
    }
    return okStatus();
}

Status PsiTriggers::adopt(int fd, std::string name) {
    auto st = add(fd, std::move(name));
    if (st) {
        arm(watches_.back());
    }
    return st;
}

Status PsiTriggers::add(int fd, std::string file) {
    boost::asio::posix::stream_descriptor descriptor(io_);
    boost::system::error_code ec;
    descriptor.assign(fd, ec); // registers with epoll
    if (ec) {
        ::close(fd);
        return makeError(static_cast<std::errc>(ec.value()), file + ": " + ec.message());
    }
    watches_.push_back(std::make_shared<Watch>(Watch{std::move(descriptor), std::move(file)}));
    return okStatus();
}

void PsiTriggers::remove(const std::shared_ptr<Watch>& w) {
    boost::system::error_code ignored;
    w->fd.close(ignored);
    watches_.remove(w);
}

void PsiTriggers::arm(const std::shared_ptr<Watch>& w) {
    // wait_error is Asio's name for POLLPRI (and POLLERR/POLLHUP).
    w->fd.async_wait(boost::asio::posix::stream_descriptor::wait_error,
                     [this, weak = std::weak_ptr<Watch>(w)](const boost::system::error_code& ec) {
                         const auto watch = weak.lock();
                         if (!watch) {
                             return; // closed by clear(), remove() or the destructor
                         }
                         if (ec) {
                             // Not for pressure files, which epoll takes: Asio
                             // accepts a regular file and fails its waits.
                             log::debug("PSI trigger on {FILE} cannot be waited on: {ERROR}",
                                        "FILE", watch->file, "ERROR", ec.message());
                             remove(watch);
                             return;
                         }
                         // epoll's poll of the fd has consumed the trigger's
                         // event; a fresh poll tells a removed cgroup from a
                         // firing. POLLERR stays set, and Asio re-registers the
                         // fd with epoll at every wait (EPOLL_CTL_MOD reports
                         // what is pending), so re-arming it would spin.
                         pollfd p{watch->fd.native_handle(), POLLPRI, 0};
                         if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLERR | POLLNVAL)) != 0) {
                             log::debug("PSI trigger on {FILE} ended: the cgroup is gone", "FILE",
                                        watch->file);
                             remove(watch);
                             return;
                         }
                         arm(watch);
                         if (fired_) {
                             fired_();
                         }
                     });
}

} // namespace memqos::io

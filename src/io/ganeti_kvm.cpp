// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/hmp_ganeti_kvm.hpp"

#include "memqos/core/placement.hpp"
#include "memqos/io/file.hpp"
#include "memqos/parse/text.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

#include <pthread.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <thread>

namespace memqos::io {

struct HmpGanetiKvm::Worker {
    boost::asio::io_context work;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{
        work.get_executor()};
    std::thread thread{[this] { work.run(); }};
};

HmpGanetiKvm::HmpGanetiKvm(boost::asio::io_context& io, std::filesystem::path dir,
                           std::filesystem::path ssconfDir)
    : io_(io), dir_(std::move(dir)), ssconfDir_(std::move(ssconfDir)),
      worker_(std::make_unique<Worker>()) {
    pthread_setname_np(worker_->thread.native_handle(), "memqos-hmp");
}

HmpGanetiKvm::~HmpGanetiKvm() {
    worker_->guard.reset();
    worker_->work.stop(); // drop moves not started; one under way ends by its timeout
    worker_->thread.join();
}

std::filesystem::path HmpGanetiKvm::socketOf(const std::string& instance) const {
    return dir_ / "ctrl" / (instance + ".monitor");
}

std::vector<std::string> HmpGanetiKvm::instances() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir_ / "pid", ec), end; !ec && it != end;
         it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!name.empty() && name.front() != '.') {
            out.push_back(name);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

Result<std::int32_t> HmpGanetiKvm::pid(const std::string& instance) const {
    if (instance.empty() || instance.find('/') != std::string::npos || instance.front() == '.') {
        return invalid("not an instance name: '" + instance + "'");
    }
    auto text = readFile(dir_ / "pid" / instance);
    if (!text) {
        return text.error();
    }
    std::string_view t = *text;
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) {
        t.remove_suffix(1);
    }
    auto p = parse::text::toI32(t, "pid");
    if (!p || *p <= 0) {
        return invalid((dir_ / "pid" / instance).string() + ": not a pid");
    }
    return *p;
}

Result<std::int64_t> HmpGanetiKvm::pidfileWritten(const std::string& instance) const {
    if (instance.empty() || instance.find('/') != std::string::npos || instance.front() == '.') {
        return invalid("not an instance name: '" + instance + "'");
    }
    const auto path = dir_ / "pid" / instance;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        return makeError(std::errc(errno), path.string());
    }
    return static_cast<std::int64_t>(st.st_mtim.tv_sec);
}

Result<std::vector<std::string>> HmpGanetiKvm::clusterInstances() const {
    const auto path = ssconfDir_ / "ssconf_instance_list";
    auto text = readFile(path);
    if (!text) {
        return text.error();
    }
    auto list = core::parseInstanceList(*text);
    if (!list) {
        return invalid(path.string() + ": " + list.error().what);
    }
    return std::move(*list);
}

Result<std::vector<std::string>> HmpGanetiKvm::clusterTags() const {
    const auto path = ssconfDir_ / "ssconf_cluster_tags";
    // Ganeti allows 4096 tags of at most 128 bytes: 1 MiB is plenty.
    auto text = readFile(path, std::size_t{1} << 20U);
    if (!text) {
        return text.error();
    }
    std::vector<std::string> tags;
    std::string_view rest(*text);
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        auto line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
            line.remove_suffix(1);
        }
        if (!line.empty()) {
            tags.emplace_back(line);
        }
    }
    return tags;
}

void HmpGanetiKvm::balloonActual(const std::string& instance, Then<Bytes> then) {
    boost::asio::post(worker_->work, [this, socket = socketOf(instance), then = std::move(then)] {
        auto r = monitor_.balloonActual(socket);
        boost::asio::post(io_, [then, r = std::move(r)] { then(r); });
    });
}

void HmpGanetiKvm::setBalloon(const std::string& instance, Bytes target, Done done) {
    boost::asio::post(worker_->work,
                      [this, socket = socketOf(instance), target, done = std::move(done)] {
                          auto r = monitor_.balloon(socket, target);
                          boost::asio::post(io_, [done, r = std::move(r)] { done(r); });
                      });
}

} // namespace memqos::io

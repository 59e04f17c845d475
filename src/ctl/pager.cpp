// SPDX-License-Identifier: Apache-2.0
#include "pager.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <optional>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "terminal.hpp"

namespace memqos::ctl {
namespace {

std::optional<std::string> env(const char* name) {
    const char* v = std::getenv(name); // NOLINT(concurrency-mt-unsafe)
    return v != nullptr ? std::optional<std::string>(v) : std::nullopt;
}

// The child's last resort: the output through unchanged.
[[noreturn]] void copyThrough() {
    char buf[4096];
    for (;;) {
        const ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            _exit(0);
        }
        for (ssize_t done = 0; done < n;) {
            const ssize_t w = write(STDOUT_FILENO, buf + done, static_cast<std::size_t>(n - done));
            if (w < 0 && errno == EINTR) {
                continue;
            }
            if (w <= 0) {
                _exit(1);
            }
            done += w;
        }
    }
}

} // namespace

void Pager::open() {
    if (pid_ >= 0 || isatty(STDOUT_FILENO) != 1) {
        return;
    }
    const auto command = pagerCommand(env("SYSTEMD_PAGER"), env("PAGER"));
    if (!command) {
        return;
    }
    // Everything the child needs, before fork (memqosctl is single-threaded).
    const std::string less = lessOptions(env("SYSTEMD_LESS"));
    std::vector<std::string> words = *command;
    std::vector<char*> argv;
    for (auto& w : words) {
        argv.push_back(w.data());
    }
    argv.push_back(nullptr);

    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) {
        return;
    }
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return;
    }
    if (pid == 0) {
        if (dup2(fds[0], STDIN_FILENO) < 0) {
            _exit(1);
        }
        // Not left to O_CLOEXEC: when no exec succeeds, copyThrough() must
        // see the end of its input once memqosctl closes the write end.
        ::close(fds[0]);
        ::close(fds[1]);
        setenv("LESS", less.c_str(), 1); // NOLINT(concurrency-mt-unsafe)
        if (words.empty()) {
            execlp("less", "less", nullptr);
            execlp("more", "more", nullptr);
        } else {
            execvp(argv[0], argv.data());
        }
        copyThrough();
    }
    if (dup2(fds[1], STDOUT_FILENO) < 0) {
        // Keep the terminal; the pager reads an empty pipe and quits.
    }
    ::close(fds[0]);
    ::close(fds[1]);
    // A pager quit before the end (q in less) must not kill us with SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    pid_ = pid;
}

void Pager::close() {
    if (pid_ < 0) {
        return;
    }
    std::fflush(stdout);
    ::close(STDOUT_FILENO); // the pager sees the end of its input
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
}

} // namespace memqos::ctl

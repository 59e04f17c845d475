// SPDX-License-Identifier: Apache-2.0
// memqos (the iallocator): Ganeti runs it as
//   /usr/lib/ganeti/iallocators/memqos INPUT-FILE [--key=value...]
// for `gnt-instance add -I memqos` and the other -I operations. It rewrites
// the input's node memory figures to the memory-ratio model
// (iallocator.cpp, pure), writes the result to a private temporary file and
// runs Ganeti's own allocator hail on it with the same options; hail's
// answer (stdout) and exit status are Ganeti's answer. Errors of its own
// are answered as Ganeti expects a failed request: one JSON object
// {"success": false, "info": "memqos: ...", "result": []} on stdout, exit 0.

#include "memqos/ganeti/iallocator.hpp"
#include "memqos/io/file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#ifndef MEMQOS_HAIL
#define MEMQOS_HAIL "/usr/lib/ganeti/iallocators/hail"
#endif

namespace memqos::ganeti {
namespace {

constexpr int kExitUsage = 64;
// Ganeti's input names every node and instance of the cluster.
constexpr std::size_t kMaxInputBytes = std::size_t{256} << 20;

int fail(std::string_view message) {
    const auto reply = failureReply(message) + "\n";
    std::fwrite(reply.data(), 1, reply.size(), stdout);
    std::fflush(stdout);
    return 0;
}

bool writeAll(int fd, std::string_view data) {
    while (!data.empty()) {
        const auto n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return false;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

int run(int argc, char** argv) {
    if (argc < 2 || std::strcmp(argv[1], "--help") == 0) {
        std::fputs("Usage: memqos INPUT-FILE [HAIL-OPTION...]\n"
                   "Ganeti iallocator: hail on the memory-ratio model of the tags\n"
                   "memqos:memory-ratio:R and memqos:mem-node:SIZE. See memqos-iallocator(8).\n",
                   argc < 2 ? stderr : stdout);
        return argc < 2 ? kExitUsage : 0;
    }
    const std::vector<std::string> hailArgs(argv + 2, argv + argc);
    auto options = hailOptionsFromArgs(hailArgs);
    if (!options) {
        return fail(options.error().what);
    }
    auto input = io::readFile(argv[1], kMaxInputBytes);
    if (!input) {
        return fail("cannot read the input: " + input.error().what);
    }
    auto transformed = transformForHail(*input, *options);
    if (!transformed) {
        return fail(transformed.error().what);
    }
    for (const auto& c : transformed->changes) {
        std::fprintf(stderr, "%s\n", describe(c).c_str());
    }

    const char* env = std::getenv("MEMQOS_HAIL"); // tests: a stand-in for hail
    const std::string hail = env != nullptr && *env != '\0' ? env : MEMQOS_HAIL;
    if (::access(hail.c_str(), X_OK) != 0) {
        return fail("Ganeti's allocator hail (" + hail +
                    ") cannot be run: " + std::strerror(errno) +
                    "; memqos needs it (Debian: packages ganeti and ganeti-htools-3.0)");
    }

    const char* tmpdir = std::getenv("TMPDIR");
    std::string path = std::string(tmpdir != nullptr && *tmpdir == '/' ? tmpdir : "/tmp") +
                       "/memqos-iallocator.XXXXXX";
    const int fd = ::mkstemp(path.data()); // mode 0600
    if (fd < 0) {
        return fail("cannot create a temporary file " + path + ": " + std::strerror(errno));
    }
    const bool written = writeAll(fd, transformed->json);
    const int writeErr = errno;
    if (::close(fd) != 0 || !written) {
        ::unlink(path.c_str());
        return fail("cannot write " + path + ": " + std::strerror(written ? errno : writeErr));
    }

    std::vector<char*> args;
    args.push_back(const_cast<char*>(hail.c_str())); // NOLINT: execv's signature
    args.push_back(path.data());
    for (const auto& a : hailArgs) {
        args.push_back(const_cast<char*>(a.c_str())); // NOLINT
    }
    args.push_back(nullptr);
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::unlink(path.c_str());
        return fail(std::string("cannot fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
        ::execv(hail.c_str(), args.data());
        // Nothing on stdout: Ganeti sees a failed iallocator with this output.
        std::fprintf(stderr, "memqos: cannot run %s: %s\n", hail.c_str(), std::strerror(errno));
        ::_exit(127);
    }
    int status = 0;
    pid_t r = 0;
    do {
        r = ::waitpid(pid, &status, 0);
    } while (r < 0 && errno == EINTR);
    ::unlink(path.c_str());
    if (r < 0) {
        std::fprintf(stderr, "memqos: waiting for %s: %s\n", hail.c_str(), std::strerror(errno));
        return 1;
    }
    if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
    }
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

} // namespace
} // namespace memqos::ganeti

int main(int argc, char** argv) {
    return memqos::ganeti::run(argc, argv);
}

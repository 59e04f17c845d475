// SPDX-License-Identifier: Apache-2.0
// memqos-cluster: the Ganeti master's view of the cluster under the
// memory-ratio model (cluster.cpp, pure). This file is the thin I/O layer:
// it runs Ganeti's tools (hscan for the cluster, gnt-cluster command for each
// node's memqosd figures, hbal/hcheck on the rewritten cluster) or reads
// their output from files, and prints. See memqos-cluster(8).

#include "memqos/ganeti/cluster.hpp"
#include "memqos/io/file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <optional>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace memqos::ganeti::cluster {
namespace {

constexpr int kExitUnchecked = 2;
constexpr int kExitUsage = 64;
constexpr std::size_t kMaxOutput = kMaxTextBytes;

// What each node runs (through gnt-cluster command).
constexpr const char* kNodeCommand =
    "memqosctl --no-pager show -p MemoryRatio,NodeReserved,SwapTotal,MemoryTotal";

constexpr const char* kUsage =
    "Usage: memqos-cluster verify [--json] [--cluster-data FILE] [--node-data FILE]\n"
    "       memqos-cluster hcheck [--cluster-data FILE] [--] [HCHECK-OPTION...]\n"
    "       memqos-cluster hbal [--cluster-data FILE] [--] [HBAL-OPTION...]\n"
    "\n"
    "Ganeti's cluster under the memory-ratio model of the tags memqos:memory-ratio:R\n"
    "and memqos:mem-node:SIZE (node, else node group, else cluster tag).\n"
    "\n"
    "verify   per node and node group: N+1 redundancy under the ratio, capacity,\n"
    "         swap >= (ratio - 1) * available, available + swap >= up instances,\n"
    "         memqosd's MemoryRatio/NodeReserved against the tags.\n"
    "         Exit 0 all fine, 1 a finding, 2 could not check (a node or the data).\n"
    "hcheck   hcheck -t FILE on the cluster with every node's memory rewritten to\n"
    "hbal     the ratio (as memqos-iallocator does for hail), or hbal -t FILE.\n"
    "         hbal cannot execute moves from a file: it prints its plan (add -C for\n"
    "         the gnt-instance commands), which you run yourself. -L, -X, -t, -m,\n"
    "         -I and --luxi are refused. Their output and exit status are relayed.\n"
    "\n"
    "  --cluster-data FILE  the cluster in htools' text format (as `hscan -d DIR`\n"
    "                       writes DIR/LOCAL.data) instead of running hscan\n"
    "  --node-data FILE     memqosd's figures of every node, as printed by\n"
    "                       gnt-cluster command '"
    "memqosctl --no-pager show -p\n"
    "                       MemoryRatio,NodeReserved,SwapTotal,MemoryTotal'\n"
    "                       instead of running that\n"
    "  --json               verify: one JSON document\n"
    "MEMQOS_GANETI_BINDIR=DIR runs hscan, gnt-cluster, hbal and hcheck from DIR first.\n"
    "See memqos-cluster(8).\n";

int usageError(const std::string& message) {
    std::fprintf(stderr, "memqos-cluster: %s\n%s", message.c_str(), kUsage);
    return kExitUsage;
}

// What could not be checked or run: said on stderr, exit status 2.
int unchecked(const std::string& what) {
    std::fprintf(stderr, "memqos-cluster: %s\n", what.c_str());
    return kExitUnchecked;
}

// PATH with MEMQOS_GANETI_BINDIR first, for execvp in the child.
void preparePath() {
    const char* dir = std::getenv("MEMQOS_GANETI_BINDIR");
    if (dir == nullptr || *dir == '\0') {
        return;
    }
    const char* path = std::getenv("PATH");
    const std::string value =
        std::string(dir) + ":" + (path != nullptr ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
    ::setenv("PATH", value.c_str(), 1);
}

int waitFor(pid_t pid, const std::string& what) {
    int status = 0;
    pid_t r = 0;
    do {
        r = ::waitpid(pid, &status, 0);
    } while (r < 0 && errno == EINTR);
    if (r < 0) {
        std::fprintf(stderr, "memqos-cluster: waiting for %s: %s\n", what.c_str(),
                     std::strerror(errno));
        return 1;
    }
    if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
    }
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

// Runs argv (searched in PATH); its stdout into `out` when given, else
// inherited. Returns its exit status (127 when it could not be run).
int run(const std::vector<std::string>& argv, std::string* out) {
    std::vector<char*> args;
    for (const auto& a : argv) {
        args.push_back(const_cast<char*>(a.c_str())); // NOLINT: execvp's signature
    }
    args.push_back(nullptr);
    int fds[2] = {-1, -1};
    if (out != nullptr && ::pipe2(fds, O_CLOEXEC) != 0) {
        std::fprintf(stderr, "memqos-cluster: pipe: %s\n", std::strerror(errno));
        return 127;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        std::fprintf(stderr, "memqos-cluster: fork: %s\n", std::strerror(errno));
        return 127;
    }
    if (pid == 0) {
        if (out != nullptr) {
            ::dup2(fds[1], STDOUT_FILENO);
        }
        ::execvp(args[0], args.data());
        std::fprintf(stderr, "memqos-cluster: cannot run %s: %s\n", args[0], std::strerror(errno));
        ::_exit(127);
    }
    if (out != nullptr) {
        ::close(fds[1]);
        char buf[65536];
        for (;;) {
            const auto n = ::read(fds[0], buf, sizeof buf);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                break;
            }
            if (out->size() < kMaxOutput) {
                out->append(buf, static_cast<std::size_t>(n));
            }
        }
        ::close(fds[0]);
    }
    return waitFor(pid, argv[0]);
}

struct TempDir {
    std::string path;
    TempDir() {
        const char* tmp = std::getenv("TMPDIR");
        std::string t =
            std::string(tmp != nullptr && *tmp == '/' ? tmp : "/tmp") + "/memqos-cluster.XXXXXX";
        if (::mkdtemp(t.data()) != nullptr) {
            path = t;
        }
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        if (path.empty()) {
            return;
        }
        if (DIR* d = ::opendir(path.c_str())) {
            while (const dirent* e = ::readdir(d)) {
                const std::string name = e->d_name;
                if (name != "." && name != "..") {
                    ::unlink((path + "/" + name).c_str());
                }
            }
            ::closedir(d);
        }
        ::rmdir(path.c_str());
    }
};

// The cluster in htools' text format: the file, or hscan's LOCAL.data.
Result<std::string> clusterText(const std::string& file, const TempDir& tmp) {
    if (!file.empty()) {
        return io::readFile(file, kMaxTextBytes);
    }
    if (tmp.path.empty()) {
        return invalid(std::string("cannot create a temporary directory: ") + std::strerror(errno));
    }
    std::string said;
    const int rc = run({"hscan", "--no-headers", "-d", tmp.path}, &said);
    if (rc != 0) {
        while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) {
            said.pop_back();
        }
        return invalid("hscan (Ganeti's htools, reading the cluster over luxi) exited with " +
                       std::to_string(rc) + (said.empty() ? "" : ": " + said) +
                       "; run memqos-cluster on the master node, with ganeti-htools installed");
    }
    return io::readFile(tmp.path + "/LOCAL.data", kMaxTextBytes);
}

struct Options {
    bool json = false;
    std::string clusterData;
    std::string nodeData;
    std::vector<std::string> rest; // hbal/hcheck's options
};

int verifyCommand(const Options& o, const TempDir& tmp) {
    auto text = clusterText(o.clusterData, tmp);
    if (!text) {
        return unchecked("cannot read the cluster: " + text.error().what);
    }
    auto model = parseHtoolsText(*text);
    if (!model) {
        return unchecked((o.clusterData.empty() ? std::string("hscan's output") : o.clusterData) +
                         ": " + model.error().what);
    }
    std::string nodeText;
    if (!o.nodeData.empty()) {
        auto t = io::readFile(o.nodeData, kMaxTextBytes);
        if (!t) {
            return unchecked(t.error().what);
        }
        nodeText = std::move(*t);
    } else {
        const int rc = run({"gnt-cluster", "command", kNodeCommand}, &nodeText);
        if (rc != 0) {
            std::fprintf(stderr,
                         "memqos-cluster: gnt-cluster command exited with %d; run "
                         "memqos-cluster on the master node\n",
                         rc);
            return kExitUnchecked;
        }
    }
    auto nodes = parseNodeData(nodeText);
    if (!nodes) {
        return unchecked(nodes.error().what);
    }
    auto report = verify(*model, *nodes);
    if (!report) {
        return unchecked(report.error().what);
    }
    const auto out = o.json ? renderJson(*report) : renderText(*report);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    return report->exitCode();
}

int htoolsCommand(const std::string& tool, const Options& o, const TempDir& tmp) {
    for (const auto& a : o.rest) {
        for (const char* bad :
             {"-L", "-X", "-t", "-m", "-I", "--luxi", "--text-data", "--exec", "--ialloc-src"}) {
            const std::string_view b(bad);
            if (a == b || (b.starts_with("--") && a.starts_with(std::string(b) + "=")) ||
                (!b.starts_with("--") && a.size() > 2 && a.starts_with(b))) {
                return usageError(
                    "option " + a + " is not for memqos-cluster " + tool + ": it runs " + tool +
                    " -t on a rewritten file" +
                    (tool == "hbal" ? "; run the plan's commands (-C) yourself" : ""));
            }
        }
    }
    auto text = clusterText(o.clusterData, tmp);
    if (!text) {
        return unchecked("cannot read the cluster: " + text.error().what);
    }
    auto rewritten = rewriteHtoolsText(*text);
    if (!rewritten) {
        return unchecked(rewritten.error().what);
    }
    for (const auto& c : rewritten->changes) {
        std::fprintf(stderr, "%s\n", describe(c).c_str());
    }
    if (tool == "hbal") {
        if (auto model = parseHtoolsText(*text)) {
            if (const auto note = hbalUnmovableNote(*model); !note.empty()) {
                std::fprintf(stderr, "%s\n", note.c_str());
            }
        }
    }
    if (tmp.path.empty()) {
        std::fprintf(stderr, "memqos-cluster: cannot create a temporary directory: %s\n",
                     std::strerror(errno));
        return kExitUnchecked;
    }
    const std::string file = tmp.path + "/memqos.data";
    // The directory is mkdtemp's (mode 0700): nobody else can put a file there.
    std::FILE* f = std::fopen(file.c_str(), "we");
    const bool written =
        f != nullptr &&
        std::fwrite(rewritten->text.data(), 1, rewritten->text.size(), f) == rewritten->text.size();
    if (f == nullptr || std::fclose(f) != 0 || !written) {
        std::fprintf(stderr, "memqos-cluster: cannot write %s: %s\n", file.c_str(),
                     std::strerror(errno));
        return kExitUnchecked;
    }
    std::vector<std::string> argv{tool, "-t", file};
    argv.insert(argv.end(), o.rest.begin(), o.rest.end());
    return run(argv, nullptr);
}

int main(int argc, char** argv) {
    if (argc < 2) {
        return usageError("no command");
    }
    const std::string command = argv[1];
    if (command == "--help" || command == "-h" || command == "help") {
        std::fputs(kUsage, stdout);
        return 0;
    }
    if (command != "verify" && command != "hbal" && command != "hcheck") {
        return usageError("unknown command '" + command + "'");
    }
    Options o;
    int i = 2;
    for (; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&](const std::string& name) -> std::optional<std::string> {
            if (a == name) {
                if (i + 1 >= argc) {
                    return std::nullopt;
                }
                return std::string(argv[++i]);
            }
            return a.substr(name.size() + 1);
        };
        if (a == "--") {
            ++i;
            break;
        }
        if (a == "--help") {
            std::fputs(kUsage, stdout);
            return 0;
        }
        if (a == "--json" && command == "verify") {
            o.json = true;
        } else if (a == "--cluster-data" || a.starts_with("--cluster-data=")) {
            auto v = value("--cluster-data");
            if (!v || v->empty()) {
                return usageError("--cluster-data needs a FILE");
            }
            o.clusterData = *v;
        } else if (command == "verify" && (a == "--node-data" || a.starts_with("--node-data="))) {
            auto v = value("--node-data");
            if (!v || v->empty()) {
                return usageError("--node-data needs a FILE");
            }
            o.nodeData = *v;
        } else if (command == "verify") {
            return usageError("verify: unknown argument '" + a + "'");
        } else {
            break; // the rest is hbal's or hcheck's
        }
    }
    for (; i < argc; ++i) {
        o.rest.emplace_back(argv[i]);
    }
    preparePath();
    const TempDir tmp;
    return command == "verify" ? verifyCommand(o, tmp) : htoolsCommand(command, o, tmp);
}

} // namespace
} // namespace memqos::ganeti::cluster

int main(int argc, char** argv) {
    return memqos::ganeti::cluster::main(argc, argv);
}

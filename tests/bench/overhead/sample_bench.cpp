// SPDX-License-Identifier: Apache-2.0
// Native micro-benchmark (tests/bench/overhead/native-sample-bench builds and
// runs it): memqos's CgroupFs::sample per workload vs a bare
// open/read/close of the same 10 files, on a fake tree in tmpfs. It measures
// the user-space cost of the sampling code, not the kernel's cgroupfs.
#include "memqos/io/cgroupfs.hpp"
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <unistd.h>
#include <string>
#include <vector>
#include <fstream>
#include <filesystem>
using namespace std::chrono;
int main(int argc, char** argv) {
    const std::string root = argv[1];
    const int n = std::stoi(argv[2]);
    const char* files[] = {"memory.current","memory.min","memory.low","memory.high","memory.max",
        "memory.swap.current","memory.swap.max","memory.pressure","memory.stat","cgroup.procs"};
    memqos::io::CgroupFs fs(root);
    std::vector<std::string> rel;
    for (int i = 1; i <= n; ++i) rel.push_back("memqos.slice/memqos-shared.slice/ovh@" + std::to_string(i) + ".service");
    double best_s = 1e9, best_raw = 1e9, best_raw_zero = 1e9;
    for (int rep = 0; rep < 7; ++rep) {
        auto t0 = steady_clock::now();
        for (auto& r : rel) { auto s = fs.sample(r); if (!s || !s->has_value()) { std::puts("sample failed"); return 1; } }
        auto t1 = steady_clock::now();
        for (auto& r : rel) for (auto f : files) {
            std::string p = root + "/" + r + "/" + f; char buf[16384];
            int fd = ::open(p.c_str(), O_RDONLY|O_CLOEXEC); while (::read(fd, buf, sizeof buf) > 0) {} ::close(fd);
        }
        auto t2 = steady_clock::now();
        for (auto& r : rel) for (auto f : files) {
            std::string p = root + "/" + r + "/" + f; char buf[16384]; __builtin_memset(buf, 0, sizeof buf); asm volatile("" ::"r"(buf) : "memory");
            int fd = ::open(p.c_str(), O_RDONLY|O_CLOEXEC); while (::read(fd, buf, sizeof buf) > 0) {} ::close(fd);
        }
        auto t3 = steady_clock::now();
        best_s = std::min(best_s, duration<double>(t1-t0).count());
        best_raw = std::min(best_raw, duration<double>(t2-t1).count());
        best_raw_zero = std::min(best_raw_zero, duration<double>(t3-t2).count());
    }
    std::printf("%d workloads x 10 files, fastest of 7, native on the host (tmpfs, not cgroupfs):\n", n);
    std::printf("  CgroupFs::sample:              %8.2f ms  (%6.2f us/workload)\n", best_s*1e3, best_s*1e6/n);
    std::printf("  bare open/read/close:          %8.2f ms  (%6.2f us/workload)\n", best_raw*1e3, best_raw*1e6/n);
    std::printf("  bare + 16 KiB memset per file: %8.2f ms  (%6.2f us/workload)\n", best_raw_zero*1e3, best_raw_zero*1e6/n);
}

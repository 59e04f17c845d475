// SPDX-License-Identifier: Apache-2.0
//
// reclaim-touch: the workload and the sampler of the proactive reclaim
// benchmark (tests/bench/reclaim/README.md). One static binary, copied into
// the test VM (the guest has no compiler). Build: gcc -O2 -static -Wall -Werror.
//
//   reclaim-touch hotcold --total-mib T --hot-mib H --out FILE --ready FILE
//       mmap T MiB of private anonymous memory and fill it, the cold part
//       first and the hot part (the last H MiB) last, so that the hot pages
//       are the youngest; create --ready; then, for ever and as fast as it
//       can, write one byte of every page of the hot part (volatile
//       read-modify-write), one pass after the other.
//       Records: "# start T ...", "# filled T FILL_S", then once a second
//       "T PASSES PAGES CPU_S MAXPASS_S MAJFLT": cumulative passes and pages
//       touched, the process's CPU time (CLOCK_PROCESS_CPUTIME_ID), the
//       longest pass since the previous record (a refault stall shows there)
//       and the process's major faults so far (hot pages read back from swap).
//   reclaim-touch sample --interval SEC --out FILE NAME=PATH...
//       every SEC, one line "T NAME=<content> ..." with each file's content,
//       newlines as '|', spaces as '_' ("-" when unreadable or empty).
//   reclaim-touch now
//       prints CLOCK_MONOTONIC in seconds.
//
// Every record is one write(2) to a file on the guest's disk, with a
// CLOCK_MONOTONIC time.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../common/bench-touch.h"


__attribute__((noreturn)) static void mode_hotcold(int argc, char** argv) {
    double total_mib = 0, hot_mib = 0;
    const char *out = NULL, *ready = NULL;
    for (int i = 0; i < argc; i++) {
        if (i + 1 >= argc) die("option %s needs a value", argv[i]);
        if (!strcmp(argv[i], "--total-mib")) total_mib = argd(argv[++i], "--total-mib");
        else if (!strcmp(argv[i], "--hot-mib")) hot_mib = argd(argv[++i], "--hot-mib");
        else if (!strcmp(argv[i], "--out")) out = argv[++i];
        else if (!strcmp(argv[i], "--ready")) ready = argv[++i];
        else die("hotcold: unknown option %s", argv[i]);
    }
    if (total_mib <= 0 || hot_mib <= 0 || hot_mib > total_mib || !out || !ready) {
        die("hotcold needs --total-mib, --hot-mib (at most the total), --out and --ready");
    }
    size_t total = (size_t)(total_mib * MIB) & ~(PAGE - 1);
    size_t hot = (size_t)(hot_mib * MIB) & ~(PAGE - 1);
    out_open(out);
    double t0 = now();
    out_line("# start %.6f hotcold total_mib=%g hot_mib=%g\n", t0, total_mib, hot_mib);
    unsigned char* mem = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) die("mmap %zu bytes: %s", total, strerror(errno));
    // Cold part first, hot part last: memset, so that every byte is written
    // (no zero page, no page that compresses to nothing in swap).
    for (size_t off = 0; off < total; off += 4 * MIB) {
        size_t n = total - off < 4 * MIB ? total - off : 4 * MIB;
        memset(mem + off, (int)(0x5a ^ (off >> 22)), n);
    }
    double t1 = now();
    out_line("# filled %.6f %.3f\n", t1, t1 - t0);
    int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) die("cannot create %s: %s", ready, strerror(errno));
    close(fd);
    unsigned char* h = mem + (total - hot);
    unsigned long long passes = 0, pages = 0;
    double next = now() + 1.0, maxpass = 0;
    for (;;) {
        double a = now();
        touch(h, hot);
        double b = now();
        passes++;
        pages += hot / PAGE;
        if (b - a > maxpass) maxpass = b - a;
        if (b >= next) {
            struct rusage ru;
            getrusage(RUSAGE_SELF, &ru);
            out_line("%.6f %llu %llu %.6f %.6f %ld\n", b, passes, pages, clock_s(CLOCK_PROCESS_CPUTIME_ID), maxpass,
                     ru.ru_majflt);
            maxpass = 0;
            next += 1.0;
            if (next < b) next = b + 1.0;
        }
    }
}

int main(int argc, char** argv) {
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) die("usage: reclaim-touch hotcold|sample|now ARGS (see the source header)");
    if (!strcmp(argv[1], "hotcold")) mode_hotcold(argc - 2, argv + 2);
    if (!strcmp(argv[1], "sample")) mode_sample(argc - 2, argv + 2);
    if (!strcmp(argv[1], "now")) {
        printf("%.6f\n", now());
        return 0;
    }
    die("unknown mode %s", argv[1]);
}

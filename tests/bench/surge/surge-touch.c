// SPDX-License-Identifier: Apache-2.0
//
// surge-touch: the workloads and the sampler of the surge benchmark
// (tests/bench/surge/README.md). One static binary, copied into the test VM;
// the guest has no compiler. Build: gcc -O2 -static -Wall -Werror.
//
//   surge-touch touch  --mib W --chunk-mib C --period SEC --out FILE [--ready FILE]
//       online / probe: mmap W MiB, fill it once (then create --ready), then
//       re-touch it forever, one byte per 4 KiB page (volatile read-modify-
//       write), C MiB per chunk, paced so that one pass over W takes SEC.
//       A chunk that finishes late does not make later chunks hurry (no
//       catch-up bursts): lost time stays lost.
//   surge-touch batch  --step-mib S --interval SEC [--retouch] [--max-mib M --hot-mib H] --out FILE
//       every SEC, mmap S more MiB and touch it; never frees. With --retouch
//       it spends the time between steps re-touching everything it holds,
//       4 MiB at a time, round-robin. With --max-mib it stops growing once it
//       holds M MiB and then works for ever: one pass re-touches the last H
//       MiB it holds (4 MiB at a time), one pass every --pass-period SEC
//       (default 0.25; a late pass does not make the next one hurry), and
//       each finished pass is a record.
//   surge-touch sample --interval SEC --out FILE NAME=PATH...
//       every SEC, one line: "t NAME=<content> ..." with each file's content,
//       newlines as '|', spaces as '_' ("-" when unreadable or empty).
//   surge-touch now
//       prints CLOCK_MONOTONIC in seconds.
//
// Records ("touch" and "batch"): one text line per completed chunk/step,
// "T_END DURATION [HELD_MIB]" (a bounded batch's passes: "T_END DURATION
// HELD_MIB PASS", four fields) in seconds of CLOCK_MONOTONIC, written with a
// single write(2) each (no user-space buffering: a kill loses at most the
// chunk in progress). The first line is "# start T MODE ARGS".
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../common/bench-touch.h"


static unsigned char* alloc(size_t bytes) {
    void* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        die("mmap %zu bytes: %s", bytes, strerror(errno));
    }
    return p;
}

__attribute__((noreturn)) static void mode_touch(int argc, char** argv) {
    double mib = 0, chunk_mib = 4, period = 0;
    const char *out = NULL, *ready = NULL;
    for (int i = 0; i < argc; i++) {
        if (i + 1 >= argc) {
            die("option %s needs a value", argv[i]);
        }
        if (!strcmp(argv[i], "--mib")) mib = argd(argv[++i], "--mib");
        else if (!strcmp(argv[i], "--chunk-mib")) chunk_mib = argd(argv[++i], "--chunk-mib");
        else if (!strcmp(argv[i], "--period")) period = argd(argv[++i], "--period");
        else if (!strcmp(argv[i], "--out")) out = argv[++i];
        else if (!strcmp(argv[i], "--ready")) ready = argv[++i];
        else die("touch: unknown option %s", argv[i]);
    }
    if (mib <= 0 || period <= 0 || !out) {
        die("touch needs --mib, --period and --out");
    }
    size_t chunk = ((size_t)(chunk_mib * MIB) + PAGE - 1) & ~(PAGE - 1);
    size_t total = ((size_t)(mib * MIB) + chunk - 1) / chunk * chunk;
    size_t nchunks = total / chunk;
    double per_chunk = period / (double)nchunks;
    out_open(out);
    out_line("# start %.6f touch mib=%g chunk_mib=%g period=%g chunks=%zu\n", now(), mib, chunk_mib, period,
             nchunks);
    unsigned char* mem = alloc(total);
    touch(mem, total); // first fill: allocates every page
    out_line("# filled %.6f\n", now());
    if (ready) {
        int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) die("cannot create %s: %s", ready, strerror(errno));
        close(fd);
    }
    double deadline = now();
    for (size_t c = 0;; c = (c + 1) % nchunks) {
        double t0 = now();
        touch(mem + c * chunk, chunk);
        double t1 = now();
        out_line("%.6f %.6f\n", t1, t1 - t0);
        deadline += per_chunk;
        if (t1 > deadline + per_chunk) {
            deadline = t1; // late: no catch-up burst
        }
        sleep_until(deadline);
    }
}

__attribute__((noreturn)) static void mode_batch(int argc, char** argv) {
    double step_mib = 0, interval = 0, max_mib = 0, hot_mib = 0, pass_period = 0.25;
    int retouch = 0;
    const char* out = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--retouch")) {
            retouch = 1;
            continue;
        }
        if (i + 1 >= argc) die("option %s needs a value", argv[i]);
        if (!strcmp(argv[i], "--step-mib")) step_mib = argd(argv[++i], "--step-mib");
        else if (!strcmp(argv[i], "--interval")) interval = argd(argv[++i], "--interval");
        else if (!strcmp(argv[i], "--max-mib")) max_mib = argd(argv[++i], "--max-mib");
        else if (!strcmp(argv[i], "--hot-mib")) hot_mib = argd(argv[++i], "--hot-mib");
        else if (!strcmp(argv[i], "--pass-period")) pass_period = argd(argv[++i], "--pass-period");
        else if (!strcmp(argv[i], "--out")) out = argv[++i];
        else die("batch: unknown option %s", argv[i]);
    }
    if (step_mib <= 0 || interval <= 0 || !out) die("batch needs --step-mib, --interval and --out");
    if ((max_mib > 0) != (hot_mib > 0) || hot_mib > max_mib || (max_mib > 0 && retouch)) {
        die("batch: --max-mib and --hot-mib go together (H <= M), without --retouch");
    }
    size_t step = (size_t)(step_mib * MIB) & ~(PAGE - 1);
    enum { MAXSTEPS = 1 << 16 };
    static unsigned char* held[MAXSTEPS];
    size_t nheld = 0, cursor = 0; // cursor: byte offset over all held steps
    const size_t rchunk = 4 * MIB;
    out_open(out);
    out_line("# start %.6f batch step_mib=%g interval=%g retouch=%d max_mib=%g hot_mib=%g\n", now(), step_mib,
             interval, retouch, max_mib, hot_mib);
    double next = now();
    for (;;) {
        if (max_mib > 0 && (double)(nheld * step) >= max_mib * MIB) {
            break;
        }
        double t = now();
        if (t >= next) {
            if (nheld == MAXSTEPS) die("too many steps");
            double t0 = now();
            held[nheld] = alloc(step);
            touch(held[nheld], step);
            nheld++;
            double t1 = now();
            out_line("%.6f %.6f %zu\n", t1, t1 - t0, nheld * step / MIB);
            next += interval;
            if (t1 > next) next = t1; // late: no catch-up burst
        } else if (retouch && nheld > 0) {
            size_t total = nheld * step;
            if (cursor >= total) cursor = 0;
            size_t s = cursor / step, off = cursor % step;
            size_t n = step - off < rchunk ? step - off : rchunk;
            touch(held[s] + off, n);
            cursor += n;
        } else {
            sleep_until(next);
        }
    }
    // Bounded: work on the last hot_mib MiB for ever, one record per pass.
    size_t hot = (size_t)(hot_mib * MIB) & ~(PAGE - 1), total = nheld * step;
    if (hot > total) hot = total;
    double deadline = now();
    for (unsigned long pass = 1;; pass++) {
        double t0 = now();
        for (size_t at = total - hot; at < total;) {
            size_t s = at / step, off = at % step;
            size_t n = step - off < rchunk ? step - off : rchunk;
            touch(held[s] + off, n);
            at += n;
        }
        double t1 = now();
        out_line("%.6f %.6f %zu %lu\n", t1, t1 - t0, total / MIB, pass);
        deadline += pass_period;
        if (t1 > deadline) {
            deadline = t1; // late: no catch-up burst
        }
        sleep_until(deadline);
    }
}

int main(int argc, char** argv) {
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) die("usage: surge-touch touch|batch|sample|now ARGS (see the source header)");
    if (!strcmp(argv[1], "touch")) mode_touch(argc - 2, argv + 2);
    if (!strcmp(argv[1], "batch")) mode_batch(argc - 2, argv + 2);
    if (!strcmp(argv[1], "sample")) mode_sample(argc - 2, argv + 2);
    if (!strcmp(argv[1], "now")) {
        printf("%.6f\n", now());
        return 0;
    }
    die("unknown mode %s", argv[1]);
}

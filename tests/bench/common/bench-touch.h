// SPDX-License-Identifier: Apache-2.0
// What the benchmarks' static workload binaries share (surge-touch,
// reclaim-touch): clocks, errors, paced sleeps, one write(2) per record line,
// argument and page helpers, and the sampler (mode "sample"). Header-only (each binary is one gcc call);
// include after <errno.h> <fcntl.h> <stdarg.h> <stdio.h> <stdlib.h>
// <string.h> <sys/mman.h> <time.h> <unistd.h> with _GNU_SOURCE defined.
#pragma once

#define PAGE 4096UL
#define MIB (1UL << 20)

static inline double clock_s(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
static inline double now(void) { return clock_s(CLOCK_MONOTONIC); }

// "<program>: <message>" on stderr, exit status 2.
__attribute__((noreturn, format(printf, 1, 2))) static inline void die(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", program_invocation_short_name);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

static inline void sleep_until(double t) {
    for (;;) {
        double d = t - now();
        if (d <= 0) {
            return;
        }
        struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
        if (nanosleep(&ts, NULL) == 0) {
            return;
        }
    }
}

// The record file: every line one write(2), so a kill loses at most the
// line being written.
static int out_fd = -1;

static inline void out_open(const char* path) {
    out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (out_fd < 0) {
        die("cannot open %s: %s", path, strerror(errno));
    }
}

__attribute__((format(printf, 1, 2))) static inline void out_line(const char* fmt, ...) {
    char buf[16384];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if ((size_t)n >= sizeof buf) {
        n = sizeof buf - 1;
        buf[n - 1] = '\n';
    }
    if (write(out_fd, buf, (size_t)n) != n) {
        die("write: %s", strerror(errno));
    }
}

// A positive number from the command line.
static inline double argd(const char* s, const char* what) {
    char* end;
    double d = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || d <= 0) {
        die("bad %s: '%s'", what, s);
    }
    return d;
}

// One byte per page, volatile read-modify-write: the page is really touched.
static inline void touch(unsigned char* p, size_t bytes) {
    volatile unsigned char* v = p;
    for (size_t i = 0; i < bytes; i += PAGE) {
        v[i] = (unsigned char)(v[i] + 1);
    }
}

// "sample --interval SEC --out FILE NAME=PATH...": every SEC, one record line
// "<monotonic> NAME=<content of PATH>..." (newlines as '|', spaces as '_', an
// unreadable file as '-').
__attribute__((noreturn)) static inline void mode_sample(int argc, char** argv) {
    double interval = 0;
    const char* out = NULL;
    int first = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--interval") && i + 1 < argc) interval = argd(argv[++i], "--interval");
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else {
            first = i;
            break;
        }
    }
    if (interval <= 0 || !out || first == 0) die("sample needs --interval, --out and NAME=PATH...");
    out_open(out);
    out_line("# start %.6f sample interval=%g\n", now(), interval);
    double next = now();
    for (;;) {
        static char line[16384];
        size_t len = (size_t)snprintf(line, sizeof line, "%.6f", now());
        for (int i = first; i < argc; i++) {
            const char* eq = strchr(argv[i], '=');
            if (!eq) die("sample: '%s' is not NAME=PATH", argv[i]);
            char buf[4096];
            ssize_t n = -1;
            int fd = open(eq + 1, O_RDONLY | O_CLOEXEC);
            if (fd >= 0) {
                n = read(fd, buf, sizeof buf - 1);
                close(fd);
            }
            if (n < 0) n = 0;
            while (n > 0 && buf[n - 1] == '\n') n--;
            buf[n] = '\0';
            for (ssize_t k = 0; k < n; k++) {
                if (buf[k] == '\n') buf[k] = '|';
                else if (buf[k] == ' ') buf[k] = '_';
            }
            len += (size_t)snprintf(line + len, sizeof line - len, " %.*s=%s", (int)(eq - argv[i]), argv[i],
                                    n ? buf : "-");
            if (len >= sizeof line - 2) die("sample line too long");
        }
        line[len++] = '\n';
        line[len] = '\0';
        out_line("%s", line);
        next += interval;
        if (now() > next) next = now();
        sleep_until(next);
    }
}

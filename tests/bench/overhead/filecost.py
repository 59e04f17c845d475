#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Guest side of the overhead benchmark: what each file memqosd reads per tick costs.

    filecost.py --out FILE.json [--repeat N] [--glob PATTERN]

Reads, the way memqosd's readFile does (open, read(16 KiB) until EOF, close),
each of the files memqosd's tick reads for every managed workload
(src/io/cgroupfs.cpp CgroupFs::sample, src/daemon/manager.cpp
keepOomPriority) across all cgroups matching --glob, one file name at a time,
--repeat times; keeps the fastest pass of each (wall and CPU time of this
process, which includes the kernel's side of the reads). Also the node's
/proc files. Python adds its own per-call cost, so the absolute numbers are
an upper bound; the split between files is the point. Stdlib only.
"""
import argparse
import glob
import json
import os
import time

CGROUP_FILES = ('memory.current', 'memory.min', 'memory.low', 'memory.high', 'memory.max',
                'memory.swap.current', 'memory.swap.max', 'memory.pressure', 'memory.stat',
                'cgroup.procs', 'memory.oom.group')
# What the decision (core::decide, victims, the class-stall rule) and the OOM
# priority's repair use of a workload: memory.current, memory.swap.current and
# memory.pressure (memqosd keeps these three open and preads them), cgroup.procs
# (for oom_score_adj) and memory.oom.group (read before the write).
USED = ('memory.current', 'memory.swap.current', 'memory.pressure', 'cgroup.procs',
        'memory.oom.group', 'oom_score_adj')
NODE_FILES = ('/proc/meminfo', '/proc/pressure/memory', '/proc/vmstat', '/proc/zoneinfo',
              '/proc/swaps')


def read_all(paths):
    total = 0
    for p in paths:
        try:
            fd = os.open(p, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            while True:
                b = os.read(fd, 16384)
                if not b:
                    break
                total += len(b)
        finally:
            os.close(fd)
    return total


def timed(paths, repeat):
    best_wall = best_cpu = None
    size = 0
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        size = read_all(paths)
        w, c = time.perf_counter() - w0, time.process_time() - c0
        best_wall = w if best_wall is None else min(best_wall, w)
        best_cpu = c if best_cpu is None else min(best_cpu, c)
    return {'files': len(paths), 'bytes': size, 'wall_ms': round(best_wall * 1000, 3),
            'cpu_ms': round(best_cpu * 1000, 3),
            'us_per_file': round(best_wall * 1e6 / len(paths), 2) if paths else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--out', required=True)
    ap.add_argument('--repeat', type=int, default=3)
    ap.add_argument('--glob', default='/sys/fs/cgroup/memqos.slice/memqos-shared.slice/ovh@*.service')
    args = ap.parse_args()
    dirs = sorted(glob.glob(args.glob))
    res = {'cgroups': len(dirs), 'repeat': args.repeat, 'per_file': {}}
    for name in CGROUP_FILES:
        res['per_file'][name] = timed([os.path.join(d, name) for d in dirs], args.repeat)
    pids = []
    for d in dirs:
        try:
            with open(os.path.join(d, 'cgroup.procs'), encoding='ascii') as f:
                pids += [int(x) for x in f.read().split()]
        except OSError:
            pass
    res['per_file']['oom_score_adj'] = timed([f'/proc/{p}/oom_score_adj' for p in pids], args.repeat)
    res['node'] = timed(list(NODE_FILES), args.repeat)
    allw = sum(v['wall_ms'] for v in res['per_file'].values())
    usedw = sum(v['wall_ms'] for k, v in res['per_file'].items() if k in USED)
    res['all_workload_files_wall_ms'] = round(allw, 3)
    res['used_workload_files_wall_ms'] = round(usedw, 3)
    res['used'] = list(USED)
    with open(args.out, 'w', encoding='utf-8') as f:
        json.dump(res, f, indent=1)
        f.write('\n')
    for k, v in sorted(res['per_file'].items(), key=lambda kv: -kv[1]['wall_ms']):
        print(f"  {k:22s} {v['files']:5d} files {v['wall_ms']:9.1f} ms wall {v['cpu_ms']:9.1f} ms cpu"
              f" {v['us_per_file']:8.1f} us/file {'(used)' if k in USED else '(not used by the decision)'}")
    print(f"  all per-workload files: {allw:.1f} ms; the used ones: {usedw:.1f} ms; node /proc files: {res['node']['wall_ms']} ms")


if __name__ == '__main__':
    main()

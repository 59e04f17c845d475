#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Guest side of the overhead benchmark: sample processes over a window.

    sample.py --seconds S --out FILE.json [--every SEC] [--metrics PROM]
              NAME=PID [NAME=PID...]

For each NAME=PID: CPU time (utime+stime of /proc/PID/stat, in CLK_TCK) at
the start and the end of the window as a percentage of one core over the
wall time (also per thread name, /proc/PID/task/TID/comm), VmRSS every --every seconds (peak and mean), VmHWM at the end,
and whether the process was the same one throughout (start time). With
--metrics, memqosd's Prometheus textfile is read at the start, every
--every seconds and at the end: the tick duration quantiles, the
_sum/_count deltas (mean tick over the window), memqos_workloads and
memqos_light_ticks_total. Each point of the series also has each process's
CPU ticks so far (NAME_cpu), so that a part of the window (its last
minutes, say) can be told from the whole.
Also the whole guest's CPU use from /proc/stat. Python stdlib only.
"""
import argparse
import json
import os
import re
import sys
import time

CLK_TCK = os.sysconf('SC_CLK_TCK')
PAGE = os.sysconf('SC_PAGE_SIZE')


def proc_stat(pid):
    """(utime+stime ticks, starttime) of pid, or None if it is gone."""
    try:
        with open(f'/proc/{pid}/stat', encoding='ascii', errors='replace') as f:
            text = f.read()
    except OSError:
        return None
    rest = text[text.rindex(')') + 2:].split()
    # rest[0] is field 3 (state): utime is field 14, stime 15, starttime 22.
    return int(rest[11]) + int(rest[12]), int(rest[19])


def task_ids(pid):
    """The process's thread ids, or None if it is gone."""
    try:
        return os.listdir(f'/proc/{pid}/task')
    except OSError:
        return None


def sched_ns(pid):
    """Sum of the scheduler's run time (ns) over the process's threads."""
    total = 0
    tids = task_ids(pid)
    if tids is None:
        return None
    for tid in tids:
        try:
            with open(f'/proc/{pid}/task/{tid}/schedstat', encoding='ascii') as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def thread_cpu(pid):
    """{thread name: utime+stime ticks} over the process's threads (same-named
    threads summed; threads that ended before the call are not counted)."""
    out = {}
    tids = task_ids(pid)
    if tids is None:
        return None
    for tid in tids:
        try:
            with open(f'/proc/{pid}/task/{tid}/comm', encoding='utf-8', errors='replace') as f:
                name = f.read().strip()
            got = proc_stat(f'{pid}/task/{tid}')
        except OSError:
            continue
        if got is not None:
            out[name] = out.get(name, 0) + got[0]
    return out


def status_kib(pid, key):
    try:
        with open(f'/proc/{pid}/status', encoding='ascii', errors='replace') as f:
            for line in f:
                if line.startswith(key + ':'):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def system_cpu():
    """(busy ticks, total ticks) of all CPUs together."""
    with open('/proc/stat', encoding='ascii') as f:
        vals = [int(v) for v in f.readline().split()[1:]]
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)
    # guest/guest_nice (fields 9, 10) are already in user/nice.
    total = sum(vals[:8])
    return total - idle, total


METRIC_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)$')


def read_metrics(path):
    """The textfile as {name or name{labels}: float}, or None if unreadable."""
    if not path:
        return None
    try:
        with open(path, encoding='utf-8') as f:
            text = f.read()
    except OSError:
        return None
    out = {}
    for line in text.splitlines():
        m = METRIC_RE.match(line.strip())
        if m:
            try:
                out[m.group(1) + (m.group(2) or '')] = float(m.group(3))
            except ValueError:
                pass
    return out


def tick_view(metrics):
    if metrics is None:
        return None
    q = {}
    for label, key in (('0.5', 'p50'), ('0.99', 'p99'), ('1', 'max')):
        v = metrics.get(f'memqos_tick_duration_seconds{{quantile="{label}"}}')
        if v is not None:
            q[key + '_s'] = v
    view = {
        'workloads': metrics.get('memqos_workloads'),
        'pressure_level': metrics.get('memqos_pressure_level'),
        'kills_total': metrics.get('memqos_kills_total'),
        'tick_sum_s': metrics.get('memqos_tick_duration_seconds_sum'),
        'tick_count': metrics.get('memqos_tick_duration_seconds_count'),
        'light_ticks': metrics.get('memqos_light_ticks_total'),
    }
    view.update(q)
    return view


def mib(kib):
    return None if kib is None else round(kib / 1024, 2)


def rollup_kib(pid, key):
    """A field of /proc/PID/smaps_rollup in KiB (None if unreadable)."""
    try:
        with open(f'/proc/{pid}/smaps_rollup', encoding='utf-8') as f:
            for line in f:
                if line.startswith(key + ':'):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def largest_file_rss(pid, top=8):
    """The mapped files with the most resident pages: {path: KiB}."""
    per = {}
    name = None
    try:
        with open(f'/proc/{pid}/smaps', encoding='utf-8') as f:
            for line in f:
                first = line.split(None, 1)[0]
                if '-' in first and not first.endswith(':'):
                    parts = line.split()
                    name = parts[5] if len(parts) > 5 and parts[5].startswith('/') else None
                elif first == 'Rss:' and name is not None:
                    per[name] = per.get(name, 0) + int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return dict(sorted(per.items(), key=lambda kv: -kv[1])[:top])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--seconds', type=float, required=True)
    ap.add_argument('--every', type=float, default=5.0)
    ap.add_argument('--metrics', default='')
    ap.add_argument('--out', required=True)
    ap.add_argument('procs', nargs='+', metavar='NAME=PID')
    args = ap.parse_args()

    procs = {}
    for spec in args.procs:
        name, _, pid = spec.partition('=')
        if not name or not pid.isdigit():
            sys.exit(f'sample.py: bad NAME=PID "{spec}"')
        first = proc_stat(int(pid))
        if first is None:
            sys.exit(f'sample.py: process {name} (pid {pid}) does not exist')
        procs[name] = {'pid': int(pid), 'cpu0': first[0], 'start': first[1],
                       'rss_kib': []}

    t0 = time.monotonic()
    sys0 = system_cpu()
    m0 = tick_view(read_metrics(args.metrics))
    for p in procs.values():
        p['cpu0'] = proc_stat(p['pid'])[0]
        p['sched0'] = sched_ns(p['pid'])
        p['threads0'] = thread_cpu(p['pid'])
    series = []
    deadline = t0 + args.seconds
    while True:
        now = time.monotonic()
        point = {'t': round(now - t0, 2)}
        for name, p in procs.items():
            rss = status_kib(p['pid'], 'VmRSS')
            if rss is not None:
                p['rss_kib'].append(rss)
            point[name + '_rss_kib'] = rss
            got = proc_stat(p['pid'])
            point[name + '_cpu'] = None if got is None or got[1] != p['start'] else got[0]
        tv = tick_view(read_metrics(args.metrics))
        if tv is not None:
            point.update({k: tv.get(k) for k in ('workloads', 'p50_s', 'p99_s', 'max_s', 'tick_count',
                                                 'tick_sum_s', 'light_ticks')})
        series.append(point)
        if now >= deadline:
            break
        time.sleep(min(args.every, max(0.0, deadline - now)))

    t1 = time.monotonic()
    sys1 = system_cpu()
    m1 = tick_view(read_metrics(args.metrics))
    wall = t1 - t0
    result = {'wall_s': round(wall, 3), 'clk_tck': CLK_TCK, 'procs': {}, 'series': series}
    for name, p in procs.items():
        end = proc_stat(p['pid'])
        same = end is not None and end[1] == p['start']
        cpu_s = (end[0] - p['cpu0']) / CLK_TCK if same else None
        sched1 = sched_ns(p['pid']) if same else None
        sched_s = (sched1 - p['sched0']) / 1e9 if sched1 is not None and p['sched0'] is not None else None
        rss = p['rss_kib']
        threads1 = thread_cpu(p['pid']) if same else None
        by_thread = None
        if threads1 is not None and p['threads0'] is not None:
            # A thread's share of one core over the window, by name.
            by_thread = {t: round(100.0 * (v - p['threads0'].get(t, 0)) / CLK_TCK / wall, 4)
                         for t, v in sorted(threads1.items())}
        result['procs'][name] = {
            'pid': p['pid'],
            'same_process_throughout': same,
            'cpu_s': cpu_s,
            'cpu_pct_of_one_core': None if cpu_s is None else round(100.0 * cpu_s / wall, 4),
            'threads': len(os.listdir(f"/proc/{p['pid']}/task")) if same else None,
            'cpu_pct_by_thread': by_thread,
            'schedstat_run_s': None if sched_s is None else round(sched_s, 3),
            'schedstat_pct_of_one_core': None if sched_s is None else round(100.0 * sched_s / wall, 4),
            'rss_peak_sampled_mib': round(max(rss) / 1024, 2) if rss else None,
            'rss_mean_mib': round(sum(rss) / len(rss) / 1024, 2) if rss else None,
            'vm_hwm_mib': (lambda v: None if v is None else round(v / 1024, 2))(
                status_kib(p['pid'], 'VmHWM')),
            # At the end: VmRSS split into the process's own memory and the
            # file pages it maps (shared libraries, mostly shared with other
            # processes), and its proportional share (PSS).
            'rss_anon_mib': mib(status_kib(p['pid'], 'RssAnon')),
            'rss_file_mib': mib(status_kib(p['pid'], 'RssFile')),
            'pss_mib': mib(rollup_kib(p['pid'], 'Pss')),
            'largest_file_rss_kib': largest_file_rss(p['pid']),
        }
    busy = sys1[0] - sys0[0]
    total = sys1[1] - sys0[1]
    result['guest_cpu'] = {
        'busy_pct_of_all_cpus': round(100.0 * busy / total, 2) if total else None,
        'busy_cores': round(busy / CLK_TCK / wall, 3),
    }
    if m0 is not None or m1 is not None:
        tick = {'start': m0, 'end': m1}
        if m0 and m1 and m0.get('tick_count') is not None and m1.get('tick_count') is not None:
            n = m1['tick_count'] - m0['tick_count']
            s = m1['tick_sum_s'] - m0['tick_sum_s']
            tick['window_ticks'] = int(n)
            tick['window_mean_s'] = s / n if n > 0 else None
            tick['window_busy_pct'] = round(100.0 * s / wall, 4)
        result['tick'] = tick
    with open(args.out, 'w', encoding='utf-8') as f:
        json.dump(result, f, indent=1)
        f.write('\n')


if __name__ == '__main__':
    main()

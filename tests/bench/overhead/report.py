#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Host side of the overhead benchmark: assemble the result file, print the table.

    report.py assemble --guest overhead.json --times times.txt --out RESULT.json [KEY=VALUE...]
    report.py table RESULT.json

`assemble` adds the host's facts (KEY=VALUE: commit, .deb, load, ...) and the
VM's phase times to what the guest measured; `table` prints contender, CPU %
of one core, RSS (peak), tick p50/p99/max with the targets beside them.
Python stdlib only.
"""
import json
import sys

TARGET_CPU_PCT = 0.5
TARGET_RSS_MIB = 16.0
CONTENDERS = (('memqosd', 'memqosd'), ('systemd-oomd', 'systemd-oomd'), ('pid1', 'systemd (PID 1)'))


def assemble(argv):
    args = {'guest': None, 'times': None, 'out': None}
    extra = {}
    it = iter(argv)
    for a in it:
        if a in ('--guest', '--times', '--out'):
            args[a[2:]] = next(it)
        elif '=' in a:
            k, v = a.split('=', 1)
            extra[k] = v
        else:
            sys.exit(f'report.py: unexpected argument {a!r}')
    if not args['guest'] or not args['out']:
        sys.exit('report.py assemble: --guest and --out are required')
    with open(args['guest'], encoding='utf-8') as f:
        res = json.load(f)
    times = {}
    if args['times']:
        try:
            with open(args['times'], encoding='utf-8') as f:
                for line in f:
                    k, _, v = line.strip().partition('=')
                    if k:
                        times[k] = int(v) if v.isdigit() else v
        except OSError:
            pass
    res['host'] = extra
    res['vm_times'] = times
    res['targets'] = {'memqosd_cpu_pct_of_one_core_max': TARGET_CPU_PCT,
                      'memqosd_rss_mib_max': TARGET_RSS_MIB}
    res['verdict'] = verdict(res)
    with open(args['out'], 'w', encoding='utf-8') as f:
        json.dump(res, f, indent=1)
        f.write('\n')


def rss_peak(p):
    vals = [v for v in (p.get('vm_hwm_mib'), p.get('rss_peak_sampled_mib')) if v is not None]
    return max(vals) if vals else None


PHASES = (('window', 'level 0'), ('watchful', 'watchful'), ('kill_near', 'kill near'))


def versus_oomd(res):
    """Issue 25's target: memqosd's CPU <= systemd-oomd's in the same run, per phase."""
    out = {}
    for key, _ in PHASES:
        procs = (res.get(key) or {}).get('procs') or {}
        mq, od = procs.get('memqosd') or {}, procs.get('systemd-oomd') or {}
        a, b = mq.get('cpu_pct_of_one_core'), od.get('cpu_pct_of_one_core')
        if a is not None and b is not None:
            out[key] = {'memqosd_cpu_pct': a, 'oomd_cpu_pct': b, 'ok': a <= b,
                        'factor': round(a / b, 2) if b else None}
    return out


def verdict(res):
    w = (res.get('window') or {}).get('procs', {}).get('memqosd')
    if not w:
        return {'cpu_ok': None, 'rss_ok': None}
    cpu = w.get('cpu_pct_of_one_core')
    rss = rss_peak(w)
    return {
        'cpu_pct': cpu, 'cpu_ok': None if cpu is None else cpu <= TARGET_CPU_PCT,
        'cpu_factor_of_target': None if cpu is None else round(cpu / TARGET_CPU_PCT, 2),
        'rss_mib': rss, 'rss_ok': None if rss is None else rss <= TARGET_RSS_MIB,
        'rss_factor_of_target': None if rss is None else round(rss / TARGET_RSS_MIB, 2),
        'versus_oomd': versus_oomd(res),
    }


def ms(v):
    return '-' if v is None else f'{v * 1000:.1f}'


def fmt(v, nd=2):
    return '-' if v is None else f'{v:.{nd}f}'


def mark(ok):
    return '' if ok is None else (' ok' if ok else ' MISS')


def phase_rows(phase, label_suffix, with_targets):
    rows = []
    if not phase:
        return rows
    tick = phase.get('tick') or {}
    end = tick.get('end') or {}
    for key, label in CONTENDERS:
        p = phase['procs'].get(key)
        if p is None:
            continue
        cpu = p.get('cpu_pct_of_one_core')
        rss = rss_peak(p)
        cpu_s = fmt(cpu, 3) + (mark(None if cpu is None else cpu <= TARGET_CPU_PCT)
                               if key == 'memqosd' and with_targets else '')
        rss_s = fmt(rss, 1) + (mark(None if rss is None else rss <= TARGET_RSS_MIB)
                               if key == 'memqosd' and with_targets else '')
        if not p.get('same_process_throughout'):
            cpu_s = 'restarted!'
        tick_s = ''
        if key == 'memqosd' and end.get('p50_s') is not None:
            tick_s = f"{ms(end.get('p50_s'))} / {ms(end.get('p99_s'))} / {ms(end.get('max_s'))}"
            if tick.get('window_mean_s') is not None:
                tick_s += f"  (mean {ms(tick['window_mean_s'])} over {tick['window_ticks']} ticks)"
        elif key == 'memqosd':
            tick_s = 'no tick metrics'
        rows.append((label + label_suffix, cpu_s, rss_s, tick_s))
    return rows


def by_minute(phase):
    """The window's series cut into minutes: memqosd's and systemd-oomd's CPU,
    memqosd's light ticks and mean tick in each (series of sample.py since
    2026-12-07 only; None before)."""
    series = (phase or {}).get('series') or []
    tck = (phase or {}).get('clk_tck') or 100
    if len(series) < 2 or series[0].get('memqosd_cpu') is None:
        return None
    rows = []
    # The points nearest each whole minute from the first (sample.py takes
    # one every --every seconds); a last part under half a minute is left
    # to the minute before it.
    last_t = series[-1]['t']
    marks = [0]
    minute = 1
    while last_t - series[0]['t'] >= 60 * minute - 30:
        want = series[0]['t'] + 60 * minute
        best = min(range(len(series)), key=lambda i: abs(series[i]['t'] - want))
        if best > marks[-1]:
            marks.append(best)
        minute += 1
    if len(marks) == 1:
        marks.append(len(series) - 1)
    marks[-1] = len(series) - 1
    for start, end in zip(marks, marks[1:]):
        a, b = series[start], series[end]
        wall = b['t'] - a['t']
        cols = [f"{a['t'] / 60:4.1f}-{b['t'] / 60:4.1f} min"]
        for name in ('memqosd', 'systemd-oomd'):
            x, y = a.get(name + '_cpu'), b.get(name + '_cpu')
            cols.append(f"{name} " + ('?' if x is None or y is None or wall <= 0
                                      else f"{100.0 * (y - x) / tck / wall:.2f} %"))
        n = (b.get('tick_count') or 0) - (a.get('tick_count') or 0)
        if b.get('light_ticks') is not None and a.get('light_ticks') is not None:
            cols.append(f"light {int(b['light_ticks'] - a['light_ticks'])} of {int(n)} ticks")
        if n > 0 and b.get('tick_sum_s') is not None and a.get('tick_sum_s') is not None:
            cols.append(f"mean tick {ms((b['tick_sum_s'] - a['tick_sum_s']) / n)} ms")
        rows.append('; '.join(cols))
    return rows


def table(path):
    with open(path, encoding='utf-8') as f:
        res = json.load(f)
    prm = res.get('params', {})
    g = res.get('guest', {})
    h = res.get('host', {})
    t = res.get('vm_times', {})
    accel = t.get('accel', h.get('accel', '?'))
    emulated = accel != 'kvm'
    print(f"overhead benchmark: {prm.get('units')} units ovh@N.service (sleep) in memqos-shared.slice, "
          f"memqosd Interval={prm.get('interval')}, proactive reclaim {'on' if prm.get('reclaim', 'yes') == 'yes' else 'OFF'}, "
          f"libvirtd {prm.get('libvirt', 'running')}"
          + ('' if res.get('memqosd_maps_libvirt') is None else
             f" (memqosd {'has' if res['memqosd_maps_libvirt'] else 'has not'} loaded libvirt)") + ", "
          f"window {prm.get('minutes')} min; "
          f"systemd-oomd with ManagedOOMMemoryPressure=kill on the slice in the same run")
    print(f"VM: {accel}{' = QEMU software emulation, ~5-10x slower than native: CPU % and tick ms are inflated accordingly' if emulated else ''}; "
          f"{g.get('cpus')} vCPUs, {int(g.get('mem_total_kib', 0)) // 1024} MiB, kernel {g.get('kernel')}, "
          f"systemd {g.get('systemd')}, memqos {g.get('memqos')}; host load {h.get('loadavg_start', '?')} -> {h.get('loadavg_end', '?')}")
    head = ('contender', 'CPU % of 1 core', 'RSS MiB (peak)', 'tick p50 / p99 / max ms')
    rows = [head, ('target (memqosd)', f'<= {TARGET_CPU_PCT}', f'<= {TARGET_RSS_MIB:.0f}', 'reported')]
    rows += phase_rows(res.get('window'), '', True)
    for key, label in PHASES[1:]:
        rows += phase_rows(res.get(key), f" [{label}, {prm.get('watch_s')} s]", False)
    base = res.get('baseline')
    if base:
        rows += [r for r in phase_rows(base, f" [baseline 0 units, {prm.get('baseline_s')} s]", False)]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for n, r in enumerate(rows):
        print('  '.join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip())
        if n == 0:
            print('  '.join('-' * w for w in widths))
    w = res.get('window') or {}
    tick = w.get('tick') or {}
    notes = []
    if tick.get('start', {}) and tick['start'].get('p99_s') is not None:
        s = tick['start']
        notes.append(f"tick quantiles are over memqosd's last <=1024 ticks since its restart with the units "
                     f"(window + {prm.get('settle_s')} s settle); at the window's start they were "
                     f"{ms(s.get('p50_s'))} / {ms(s.get('p99_s'))} / {ms(s.get('max_s'))} ms")
    if tick.get('window_busy_pct') is not None:
        rate = tick['window_ticks'] / w['wall_s'] if w.get('wall_s') else 0
        notes.append(f"memqosd ran {tick['window_ticks']} ticks in {w.get('wall_s')} s ({rate:.2f}/s) and spent "
                     f"{tick['window_busy_pct']:.2f} % of the wall time inside ticks (wall clock, excludes the metrics-file write)")
    mq = (w.get('procs') or {}).get('memqosd') or {}
    if mq.get('schedstat_pct_of_one_core') is not None:
        notes.append(f"memqosd scheduler run time (schedstat, all {mq.get('threads')} threads): "
                     f"{mq['schedstat_pct_of_one_core']:.3f} % of one core")
    if mq.get('rss_anon_mib') is not None:
        top = ', '.join(f"{k.rsplit('/', 1)[-1]} {v / 1024:.1f}" for k, v in
                        list((mq.get('largest_file_rss_kib') or {}).items())[:5])
        notes.append(f"memqosd's RSS at the window's end: {mq['rss_anon_mib']} MiB its own (RssAnon), "
                     f"{mq['rss_file_mib']} MiB mapped files (RssFile: shared libraries, shared with other "
                     f"processes that map them); PSS {mq.get('pss_mib')} MiB; most resident files (MiB): {top}")
    gc = w.get('guest_cpu') or {}
    if gc:
        notes.append(f"whole guest: {gc.get('busy_cores')} cores busy on average during the window")
    notes.append(f"units active before/after the window: {res.get('units_active_before_window')}/"
                 f"{res.get('units_active_after_window')}; oomd monitors the slice: {res.get('oomd_monitors_slice')}; "
                 f"memqosd warnings in the journal: {res.get('memqosd_warning_lines')}")
    tm = res.get('timing') or {}
    notes.append(f"starting the units took {tm.get('units_start_s')} s, all managed after {tm.get('units_managed_s')} s; "
                 f"memqosd restarted with them managed them after {tm.get('restart_managed_s')} s; "
                 f"memqosd VmHWM after adopting them one by one: {res.get('memqosd_vm_hwm_after_ramp_mib')} MiB")
    if res.get('watchful') or res.get('kill_near'):
        notes.append("watchful: level 1's MemAvailable condition holds (99 %) and builds up towards Level1Duration=1h; "
                     "kill near: the same for levels 1-3, so memqosd reads every killable workload every tick; "
                     "memqosd stays at level 0 in both (checked in the metrics file), nothing is killed; "
                     "tick quantiles there are over the last <=1024 ticks (mostly the level-0 window): "
                     "the phase's own figure is its mean")
    for key, label in PHASES:
        mq = ((res.get(key) or {}).get('procs') or {}).get('memqosd') or {}
        threads = mq.get('cpu_pct_by_thread')
        if threads:
            notes.append(f"memqosd's CPU by thread, {label} (% of a core): " + ', '.join(
                f"{t} {v:.3f}" for t, v in sorted(threads.items(), key=lambda kv: -kv[1])))
    v = res.get('verdict') or {}
    vo = v.get('versus_oomd') or versus_oomd(res)
    if vo:
        notes.append('memqosd CPU <= systemd-oomd CPU (issue 25): ' + '; '.join(
            f"{label} {'met' if vo[k]['ok'] else 'MISSED'} ({vo[k]['memqosd_cpu_pct']:.3f} vs {vo[k]['oomd_cpu_pct']:.3f} %"
            + (f", {vo[k]['factor']}x" if vo[k]['factor'] is not None else '') + ')'
            for k, label in PHASES if k in vo))
    if v.get('cpu_ok') is not None:
        notes.append(f"verdict: CPU {'met' if v['cpu_ok'] else 'MISSED'} ({v['cpu_factor_of_target']}x the target), "
                     f"RSS {'met' if v['rss_ok'] else 'MISSED'} ({v['rss_factor_of_target']}x the target)"
                     + (' -- measured under emulation' if emulated else ''))
    for n in notes:
        print('  * ' + n)
    minutes = by_minute(w)
    if minutes:
        print("level-0 window minute by minute (CPU % of 1 core from the series; light ticks: "
              "the workloads' part skipped; mean tick from the metrics' _sum/_count):")
        for row in minutes:
            print('    ' + row)
    fc = res.get('filecost')
    if fc and fc.get('per_file'):
        print(f"reading memqosd's per-workload files over all {fc['cgroups']} cgroups once "
              f"(python open/read/close, fastest of {fc['repeat']}, after the window; emulated):")
        used = set(fc.get('used', ()))
        for name, v in sorted(fc['per_file'].items(), key=lambda kv: -kv[1]['wall_ms']):
            print(f"    {name:20s} {v['files']:5d} files {v['wall_ms']:8.1f} ms "
                  f"({v['us_per_file'] or 0:6.1f} us/file){'' if name in used else '  not used by the decision'}")
        print(f"    all: {fc['all_workload_files_wall_ms']:.1f} ms per tick; only the used ones: "
              f"{fc['used_workload_files_wall_ms']:.1f} ms; node /proc files: {fc['node']['wall_ms']:.1f} ms")


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ('assemble', 'table'):
        sys.exit(__doc__)
    if sys.argv[1] == 'assemble':
        assemble(sys.argv[2:])
    else:
        if len(sys.argv) != 3:
            sys.exit(__doc__)
        table(sys.argv[2])


if __name__ == '__main__':
    main()

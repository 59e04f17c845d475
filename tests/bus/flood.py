#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A D-Bus flood of memqosd: a small bus fuzzer in pure Python 3 (dbuswire.py,
no python3-dbus), for the bus suite and the VM fault matrix.

    flood.py [--address ADDR] --pid PID [--clients N] [--calls M] [--seed S]
             [--rss-growth-kib K]
    flood.py --spawn BUILD/src/daemon/memqosd [--clients N] [--calls M] ...
             (memqosd from a build tree on a private bus, as the bus suite runs it)

N client processes (even-numbered ones as root, odd-numbered ones as uid and
gid 65534) each make M calls to org.memqos1, one at a time: a random member of
org.memqos1.Manager, Class and Workload, org.freedesktop.DBus.Properties
(Get, GetAll, Set), Introspectable, Peer and ObjectManager, or a member that
does not exist, on a random object (real, missing or malformed paths), with
random arguments: of the right signature with values from pools of good and
bad ones (unknown classes and units, malformed ids, zero and absurd sizes,
unknown options, long strings), of a random wrong signature, or with huge
strings (64 KiB, rarely 1 MiB). A few calls carry invalid UTF-8, which the bus
itself rejects by closing the connection; the client counts that and connects
again.

The fuzzer changes nothing it does not undo: as root, AssignWorkload and
UnassignWorkload only name units that do not exist (memqos-fuzz-N.service)
or malformed ids, RunWorkload always names a class that does not exist (it
starts no unit), RecordInstance and ForgetInstance use instance names
fuzz-inst-N that are forgotten at the end; Reload is called (rarely).

Meanwhile one more client calls VerifyPlacement in a loop and measures each
reply. Passes when: memqosd (PID) is the same process before and after; every
error reply is named org.memqos1.Error.* or org.freedesktop.DBus.Error.*; no
call timed out; memqosd's VmRSS grew by at most --rss-growth-kib; and it still
answers GetManagedObjects afterwards. Prints the counts, error names,
VerifyPlacement p50/p99 idle and under the flood, RSS before and after;
exit 0 on pass, 1 on failure.
"""

import argparse
import collections
import json
import os
import random
import select
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dbuswire  # noqa: E402  pylint: disable=wrong-import-position

MEMQOS = 'org.memqos1'
ROOT = '/org/memqos1'
MGR = 'org.memqos1.Manager'
PROPS = 'org.freedesktop.DBus.Properties'
NOBODY = 65534
GIB = 1 << 30
UINT64_MAX = (1 << 64) - 1
# memqosd's VmRSS may grow by this much over a flood (KiB): sd-bus buffers,
# the allocator's arenas; a leak of even 100 bytes a call exceeds it at the
# full size (100 000 calls).
DEFAULT_RSS_GROWTH_KIB = 8192
NAMED = ('org.memqos1.Error.', 'org.freedesktop.DBus.Error.')
PROBE_GAP_S = 0.005  # between two VerifyPlacement calls of the latency probe

CLASSES = ['system', 'dedicated', 'shared', 'reclaimed', 'nosuch', '', 'Shared', 'a' * 40]
FUZZ_IDS = [f'memqos-fuzz-{i}.service' for i in range(4)] + [
    'memqos-fuzz.scope', 'vm:memqos-fuzz', 'vm:', '', '../x.service', 'nginx',
    '-.service', 'a b.service', '/etc/passwd', 'x' * 300 + '.service', 'ü.service',
    'memqos-fuzz@.service', '\x01.service']
INSTANCES = [f'fuzz-inst-{i}' for i in range(4)] + ['', '../x', '-web', 'a' * 300, 'x y']
SIZES = [0, 1, 4096, 256 << 20, GIB, 4 * GIB, 1 << 40, UINT64_MAX - 1, UINT64_MAX]
OPTIONS = [('failover_reserve', 't'), ('refuse_soft', 'b'), ('instance', 's'),
           ('bogus', 't'), ('', 's')]
PROPERTY_NAMES = ['Version', 'MemoryTotal', 'DryRun', 'PressureLevel', 'Name', 'Rank', 'Id',
                  'Class', 'Workloads', 'Limit', 'BalloonActual', 'NoSuch', '']
INTERFACES = [MGR, 'org.memqos1.Class', 'org.memqos1.Workload', PROPS,
              'org.freedesktop.DBus.Introspectable', 'org.freedesktop.DBus.Peer',
              'org.freedesktop.DBus.ObjectManager', 'org.memqos1.NoSuch']

# (interface, member, signature, weight); RunWorkload is only sent with a
# class that does not exist (see gen_args).
MEMBERS = [
    (MGR, 'ListClasses', '', 4), (MGR, 'ListWorkloads', '', 4),
    (MGR, 'AssignWorkload', 'ssttb', 8), (MGR, 'UnassignWorkload', 's', 6),
    (MGR, 'RunWorkload', 'ssttas', 4), (MGR, 'VerifyPlacement', 'tta{sv}', 10),
    (MGR, 'Verify', '', 2), (MGR, 'Reload', '', 0.1),
    (MGR, 'RecordInstance', 'sttb', 4), (MGR, 'ForgetInstance', 's', 4),
    (MGR, 'ListInstances', '', 2), (MGR, 'ListKills', '', 2),
    (PROPS, 'Get', 'ss', 10), (PROPS, 'GetAll', 's', 6), (PROPS, 'Set', 'ssv', 3),
    ('org.freedesktop.DBus.Introspectable', 'Introspect', '', 3),
    ('org.freedesktop.DBus.ObjectManager', 'GetManagedObjects', '', 3),
    ('org.freedesktop.DBus.Peer', 'Ping', '', 1),
    ('org.freedesktop.DBus.Peer', 'GetMachineId', '', 1),
    (MGR, 'NoSuchMember', '', 1), ('org.memqos1.Workload', 'Kill', 's', 1),
    ('org.memqos1.Class', 'Rank', '', 1), ('org.memqos1.NoSuch', 'Ping', '', 1),
]
PATHS = [ROOT] * 6 + ['/org/memqos1/class/shared', '/org/memqos1/class/system',
                      '/org/memqos1/class/nosuch', '/org/memqos1/workload/nginx_2eservice',
                      '/org/memqos1/workload/memqos_2dfuzz_2d0_2eservice',
                      '/org/memqos1/workload/x', '/org/memqos1/workload', '/org/memqos1/class',
                      '/', '/org/memqos1/class/shared/deeper', '/org/freedesktop/DBus']


def rand_string(rng, pool=None):
    r = rng.random()
    if pool and r < 0.7:
        return rng.choice(pool)
    if r < 0.8:
        return ''.join(chr(rng.randrange(32, 127)) for _ in range(rng.randrange(0, 40)))
    if r < 0.9:
        return rng.choice(['', ' ', '%s%n', '\\', '"', "'", '\n', 'ü€😀', 'a\x7fb', '*', '?',
                           # quoted and cut in error messages (must not split a character)
                           'a' + 'ü' * 200, '€' * 100, '😀' * 80,
                           # valid for the bus, refused by sd-bus (U+FDD0, U+FFFF)
                           '\ufdd0', 'x\uffff'])
    return 'x' * rng.choice([255, 256, 4096])


def rand_sig(rng, depth=0):
    basics = 'ybnqiuxtdsog'
    r = rng.random()
    if depth > 2 or r < 0.6:
        return rng.choice(basics)
    if r < 0.75:
        return 'a' + rand_sig(rng, depth + 1)
    if r < 0.85:
        return 'a{' + rng.choice('sut') + rand_sig(rng, depth + 1) + '}'
    if r < 0.95:
        return '(' + ''.join(rand_sig(rng, depth + 1) for _ in range(rng.randrange(1, 4))) + ')'
    return 'v'


def rand_value(rng, t):
    c = t[0]
    if c == 'y':
        return rng.randrange(256)
    if c == 'b':
        return rng.random() < 0.5
    if c in 'nq':
        return rng.randrange(-32768, 32768) if c == 'n' else rng.randrange(65536)
    if c in 'iu':
        return rng.randrange(-2**31, 2**31) if c == 'i' else rng.randrange(2**32)
    if c in 'xt':
        return rng.randrange(-2**63, 2**63) if c == 'x' else rng.choice(SIZES + [rng.randrange(2**64)])
    if c == 'd':
        return rng.choice([0.0, -1.0, 1e308, float('inf'), float('nan'), rng.random()])
    if c == 's':
        return rand_string(rng, FUZZ_IDS + CLASSES)
    if c == 'o':
        return rng.choice(PATHS)
    if c == 'g':
        return rand_sig(rng)
    if c == 'v':
        s = rand_sig(rng, 1)
        return (s, rand_value(rng, s))
    if c == 'a':
        elem = t[1:]
        n = rng.randrange(0, 4)
        if elem[0] == '{':
            kt, vt = dbuswire.split_types(elem[1:-1])
            return {rand_value(rng, kt): rand_value(rng, vt) for _ in range(n)}
        return [rand_value(rng, elem) for _ in range(n)]
    if c == '(':
        return tuple(rand_value(rng, st) for st in dbuswire.split_types(t[1:-1]))
    raise ValueError(t)


def gen_args(rng, member, sig, root):
    """Arguments of signature sig for member, from pools of good and bad values."""
    if member == 'AssignWorkload':
        return [rand_string(rng, FUZZ_IDS), rand_string(rng, CLASSES), rng.choice(SIZES),
                rng.choice(SIZES), rng.random() < 0.5]
    if member == 'UnassignWorkload':
        return [rand_string(rng, FUZZ_IDS)]
    if member == 'RunWorkload':
        cls = 'fuzz_no_class' if root else rand_string(rng, CLASSES)
        return [rand_string(rng, FUZZ_IDS), cls, rng.choice(SIZES), rng.choice(SIZES),
                [rand_string(rng, ['/bin/true', '', '/nonexistent']) for _ in range(2)]]
    if member == 'VerifyPlacement':
        opts = {}
        for _ in range(rng.randrange(0, 3)):
            key, good = rng.choice(OPTIONS)
            vt = good if rng.random() < 0.7 else rand_sig(rng, 2)
            val = (rand_string(rng, INSTANCES) if vt == 's' else rand_value(rng, vt))
            opts[key] = (vt, val)
        return [rng.choice(SIZES), rng.choice(SIZES), opts]
    if member == 'RecordInstance':
        return [rand_string(rng, INSTANCES), rng.choice(SIZES), rng.choice(SIZES),
                rng.random() < 0.5]
    if member == 'ForgetInstance':
        return [rand_string(rng, INSTANCES)]
    if member in ('Get', 'Set'):
        iface = rng.choice(INTERFACES)
        name = rand_string(rng, PROPERTY_NAMES)
        if member == 'Get':
            return [iface, name]
        vt = rand_sig(rng, 1)
        return [iface, name, (vt, rand_value(rng, vt))]
    if member == 'GetAll':
        return [rng.choice(INTERFACES)]
    return [rand_value(rng, t) for t in dbuswire.split_types(sig)]


def one_call(rng, root):
    """(interface, member, path, signature, args, kind)"""
    iface, member, sig, _w = rng.choices(MEMBERS, weights=[m[3] for m in MEMBERS])[0]
    path = ROOT if iface == MGR and rng.random() < 0.9 else rng.choice(PATHS)
    r = rng.random()
    if r < 0.75:
        return iface, member, path, sig, gen_args(rng, member, sig, root), 'typed'
    if r < 0.93:
        wrong = ''.join(rand_sig(rng) for _ in range(rng.randrange(0, 4)))
        if wrong == sig:
            wrong += 'y'
        if member == 'RunWorkload' and root and wrong.startswith('ssttas'):
            wrong = 'y' + wrong  # never a valid RunWorkload as root
        return iface, member, path, wrong, [rand_value(rng, t) for t in
                                            dbuswire.split_types(wrong)], 'wrong signature'
    if r < 0.998:
        big = 'h' * (1 << 20 if rng.random() < 0.02 else 1 << 16)
        args = gen_args(rng, member, sig, root)
        args = [big if isinstance(a, str) else a for a in args] or [big]
        if not sig or 's' not in sig:
            sig = 's'
            args = [big]
        return iface, member, path, sig, args, 'huge strings'
    # Invalid UTF-8: the bus closes the connection (counted, reconnected).
    return iface, member, path, 's', ['bad \udcff utf-8'], 'invalid utf-8'


def drop_to_nobody():
    os.setgroups([])
    os.setresgid(NOBODY, NOBODY, NOBODY)
    os.setresuid(NOBODY, NOBODY, NOBODY)


def client(address, index, calls, seed, wfd):
    """A child process: makes `calls` calls; writes its counts as JSON."""
    root = index % 2 == 0
    if not root:
        drop_to_nobody()
    rng = random.Random(seed * 1000 + index)
    out = {'root': root, 'ok': 0, 'errors': collections.Counter(), 'unnamed': [],
           'timeouts': 0, 'disconnects': 0, 'kinds': collections.Counter()}
    conn = dbuswire.Connection(address)
    for _ in range(calls):
        iface, member, path, sig, args, kind = one_call(rng, root)
        out['kinds'][kind] += 1
        try:
            m = conn.call(MEMQOS, path, iface, member, sig, args, timeout=30)
        except dbuswire.DBusError as e:
            if 'closed' in str(e):
                out['disconnects'] += 1
            else:
                out['timeouts'] += 1
                out['unnamed'].append(f'{iface}.{member} on {path} ({kind}): {e}')
            conn.close()
            conn = dbuswire.Connection(address)
            continue
        except OSError as e:  # the bus closed the socket while we wrote
            if isinstance(e, TimeoutError):
                out['timeouts'] += 1
                out['unnamed'].append(f'{iface}.{member} on {path} ({kind}): {e}')
            else:
                out['disconnects'] += 1
            conn.close()
            conn = dbuswire.Connection(address)
            continue
        if m.type != dbuswire.ERROR:
            out['ok'] += 1
            continue
        name = m.error_name or ''
        out['errors'][name] += 1
        if not name.startswith(NAMED) and len(out['unnamed']) < 20:
            msg = str(m.body[0])[:200] if m.body else ''
            out['unnamed'].append(f'{iface}.{member}({sig}) on {path} ({kind}): {name}: {msg}')
    conn.close()
    os.write(wfd, json.dumps(out).encode())


def percentile(values, p):
    if not values:
        return float('nan')
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


def timed(conn, dest, path, iface, member, sig, args):
    t0 = time.monotonic()
    m = conn.call(dest, path, iface, member, sig, args, timeout=30)
    if m.type == dbuswire.ERROR:
        raise dbuswire.DBusError(f'{member} of {dest} failed: {m.error_name}')
    return time.monotonic() - t0


def latencies(conn, n=None, stop_fd=None):
    """Seconds of each VerifyPlacement(1 GiB) call of memqosd and, right after
    it, of the bus driver's GetAll(org.freedesktop.DBus), the peer (the
    clients' CPU load delays both alike; what memqosd adds beyond the peer is
    its own): n pairs, or until stop_fd is readable (EOF), then one pair
    every PROBE_GAP_S (a probe, not more load)."""
    mine, peer = [], []
    while (n is None or len(mine) < n):
        if stop_fd is not None and select.select([stop_fd], [], [], PROBE_GAP_S)[0]:
            break
        mine.append(timed(conn, MEMQOS, ROOT, MGR, 'VerifyPlacement', 'tta{sv}', [GIB, 0, {}]))
        peer.append(timed(conn, 'org.freedesktop.DBus', '/org/freedesktop/DBus',
                          'org.freedesktop.DBus.Properties', 'GetAll', 's',
                          ['org.freedesktop.DBus']))
    return {'mine': mine, 'peer': peer}


def probe(address, stop_fd, wfd):
    conn = dbuswire.Connection(address)
    lat = latencies(conn, stop_fd=stop_fd)
    os.write(wfd, json.dumps(lat).encode())


def fork_child(fn, *args, close=()):
    """Runs fn(*args, wfd) in a child; closes the fds in `close` there."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(rfd)
            for fd in close:
                os.close(fd)
            fn(*args, wfd)
        except BaseException as e:  # pylint: disable=broad-except
            os.write(wfd, json.dumps({'crash': f'{type(e).__name__}: {e}'}).encode())
            code = 1
        finally:
            os._exit(code)  # pylint: disable=protected-access
    os.close(wfd)
    return pid, rfd


def read_child(pid, rfd):
    with os.fdopen(rfd, 'rb') as f:
        data = f.read()
    os.waitpid(pid, 0)
    return json.loads(data) if data else {'crash': 'no output'}


def proc_identity(pid):
    """(start time in ticks, VmRSS KiB) of pid, or None when it is gone."""
    try:
        with open(f'/proc/{pid}/stat', encoding='utf-8') as f:
            start = int(f.read().rsplit(')', 1)[1].split()[19])
        with open(f'/proc/{pid}/status', encoding='utf-8') as f:
            rss = next(int(line.split()[1]) for line in f if line.startswith('VmRSS:'))
        return start, rss
    except (OSError, StopIteration, ValueError, IndexError):
        return None


def sanitized(pid):
    try:
        with open(f'/proc/{pid}/maps', encoding='utf-8', errors='replace') as f:
            return 'libasan' in f.read()
    except OSError:
        return False


def run_flood(address, pid, clients, calls, seed, rss_growth_kib, out=sys.stdout):
    """Runs the flood; (passed, one-line reason) and the report on `out`."""
    def say(text):
        print(f'flood: {text}', file=out, flush=True)

    problems = []
    if sanitized(pid):
        # ASan keeps freed memory in quarantine (256 MiB by default): RSS
        # grows with every allocation whether or not anything leaks, and
        # LeakSanitizer reports real leaks at exit instead.
        rss_growth_kib = None
        say('memqosd runs under AddressSanitizer: its RSS is printed, not bounded')
    before = proc_identity(pid)
    if before is None:
        return False, f'memqosd pid {pid} not running before the flood'
    main = dbuswire.Connection(address)
    idle_both = latencies(main, n=200)
    idle = idle_both['mine']

    stop_r, stop_w = os.pipe()
    probe_pid, probe_fd = fork_child(probe, address, stop_r, close=(stop_w,))
    os.close(stop_r)
    started = time.monotonic()
    kids = [fork_child(client, address, i, calls, seed, close=(stop_w, probe_fd))
            for i in range(clients)]
    results = [read_child(p, fd) for p, fd in kids]
    elapsed = time.monotonic() - started
    os.close(stop_w)
    busy = read_child(probe_pid, probe_fd)

    total = collections.Counter()
    kinds = collections.Counter()
    ok = timeouts = disconnects = 0
    unnamed = []
    for r in results:
        if 'crash' in r:
            problems.append(f'a client failed: {r["crash"]}')
            continue
        ok += r['ok']
        timeouts += r['timeouts']
        disconnects += r['disconnects']
        total.update(r['errors'])
        kinds.update(r['kinds'])
        unnamed += r['unnamed']
    n = clients * calls
    say(f'{clients} clients ({(clients + 1) // 2} root, {clients // 2} uid {NOBODY}) x {calls} '
        f'calls = {n} calls in {elapsed:.1f} s ({n / max(elapsed, 1e-9):.0f} calls/s), seed {seed}')
    say('calls by kind: ' + ', '.join(f'{k} {v}' for k, v in sorted(kinds.items())))
    say(f'replies: {ok} ok, {sum(total.values())} errors, {timeouts} timeouts, '
        f'{disconnects} connections closed by the bus (invalid UTF-8)')
    say('error names: ' + ', '.join(f'{k} {v}' for k, v in total.most_common()))
    if unnamed:
        problems.append(f'{len(unnamed)} unnamed errors or timeouts, e.g. {unnamed[0]}')
        for u in unnamed[:10]:
            say(f'  not named: {u}')
    if 'crash' in busy:
        problems.append(f'the VerifyPlacement probe failed: {busy.get("crash")}')
        busy = {'mine': [], 'peer': []}
    peer, busy = busy['peer'], busy['mine']
    ms = 1000.0
    say(f'VerifyPlacement latency idle: p50 {percentile(idle, 50) * ms:.2f} ms, p99 '
        f'{percentile(idle, 99) * ms:.2f} ms ({len(idle)} calls); under the flood: p50 '
        f'{percentile(busy, 50) * ms:.2f} ms, p99 {percentile(busy, 99) * ms:.2f} ms, max '
        f'{max(busy, default=float("nan")) * ms:.2f} ms ({len(busy)} calls)')
    ipeer = idle_both['peer']
    say(f'peer, the bus driver\'s GetAll(org.freedesktop.DBus), idle: p50 '
        f'{percentile(ipeer, 50) * ms:.2f} ms, p99 {percentile(ipeer, 99) * ms:.2f} ms; under '
        f'the flood: p50 {percentile(peer, 50) * ms:.2f} ms, p99 '
        f'{percentile(peer, 99) * ms:.2f} ms, max {max(peer, default=float("nan")) * ms:.2f} ms')
    if busy and peer:
        say(f'under the flood, memqosd p99 / peer p99 = '
            f'{percentile(busy, 99) / max(percentile(peer, 99), 1e-9):.2f} (issue 25 target: '
            f'at most 2)')

    # Undo what the fuzzer may have recorded (as root), then a last check.
    for name in INSTANCES:
        main.call(MEMQOS, ROOT, MGR, 'ForgetInstance', 's', [name])
    try:
        objs = main.call_ok(MEMQOS, ROOT, 'org.freedesktop.DBus.ObjectManager',
                            'GetManagedObjects')[0]
        say(f'afterwards: GetManagedObjects answers ({len(objs)} objects)')
    except dbuswire.DBusError as e:
        problems.append(f'GetManagedObjects after the flood: {e}')
    main.close()

    after = proc_identity(pid)
    if after is None or after[0] != before[0]:
        problems.append(f'memqosd pid {pid} is gone or was replaced')
        say(f'memqosd pid {pid}: GONE (RSS before {before[1]} KiB)')
    else:
        growth = after[1] - before[1]
        say(f'memqosd pid {pid} alive; VmRSS {before[1]} KiB before, {after[1]} KiB after '
            f'(growth {growth} KiB, bound {rss_growth_kib} KiB)')
        if rss_growth_kib is not None and growth > rss_growth_kib:
            problems.append(f'RSS grew by {growth} KiB (bound {rss_growth_kib} KiB)')
    for p in problems:
        say(f'FAIL {p}')
    say('PASS' if not problems else f'FAIL ({len(problems)} problems)')
    return not problems, '; '.join(problems)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--address', default=dbuswire.system_bus_address())
    ap.add_argument('--pid', type=int, help="memqosd's PID")
    ap.add_argument('--spawn', metavar='MEMQOSD',
                    help='start this memqosd on a private bus first, as the bus suite does '
                         '(needs python3-dbus, python3-dbusmock, dbus-daemon)')
    ap.add_argument('--clients', type=int, default=10)
    ap.add_argument('--calls', type=int, default=10000)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--rss-growth-kib', type=int, default=DEFAULT_RSS_GROWTH_KIB)
    a = ap.parse_args(argv[1:])
    if os.geteuid() != 0:
        print('flood.py: must run as root (half the clients become uid 65534)', file=sys.stderr)
        return 2
    if a.spawn:
        return spawned(a)
    if a.pid is None:
        ap.error('--pid or --spawn is required')
    ok, _why = run_flood(a.address, a.pid, a.clients, a.calls, a.seed, a.rss_growth_kib)
    return 0 if ok else 1


def spawned(a):
    import shutil  # pylint: disable=import-outside-toplevel
    import tempfile  # pylint: disable=import-outside-toplevel
    import busenv  # pylint: disable=import-outside-toplevel
    tmp = tempfile.mkdtemp(prefix='memqos-flood-')
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = busenv.BusEnv(tmp, src, os.path.abspath(a.spawn))
    try:
        env.start_bus()
        env.make_fixtures('')
        env.start_daemon()
        ok, _why = run_flood(env.address, env.daemon.pid, a.clients, a.calls, a.seed,
                             a.rss_growth_kib)
        if env.daemon.poll() is not None:
            ok = False
        return 0 if ok else 1
    finally:
        env.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main(sys.argv))

#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The bus suite: memqosd on a private system-like bus with the real policy.

    run_bus_tests.py MEMQOSD MEMQOSCTL SOURCE_DIR

Starts a private dbus-daemon (type system, including dbus/org.memqos1.conf),
python-dbusmock's systemd template as the fake PID 1 and memqosd on fixture
roots (tests/bus/busenv.py), then calls every org.memqos1.Manager member with
busctl and with memqosctl, as root and as uid 65534 (setpriv). One line per
check, "PASS name" or "FAIL name: why", then "N passed, N failed"; exit 1 on
any failure, 124 on the hard timeout.

Persistence: an assignment with persist=true is kept under --state-dir
(assignments/), one with persist=false under the runtime directory, which with
--state-dir and no --runtime-dir is STATE_DIR/runtime (like /run/memqos: it
lasts until reboot, so it survives a daemon restart). Both are checked after a
SIGKILL and a restart, and so is the instance record (RecordInstance, kept
under STATE_DIR/instances).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import busenv  # noqa: E402  pylint: disable=wrong-import-position
import dbuswire  # noqa: E402  pylint: disable=wrong-import-position
import flood  # noqa: E402  pylint: disable=wrong-import-position

HARD_TIMEOUT_S = 100
MEMQOS = 'org.memqos1'
ROOT = '/org/memqos1'
MGR = 'org.memqos1.Manager'
NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups']
MIB = 1024 * 1024
GIB = 1024 * MIB
UINT64_MAX = 2**64 - 1

CONFIG_GOOD = '[Overcommit]\nMemoryRatio=1.5\n'
CONFIG_GOOD2 = '[Overcommit]\nMemoryRatio=2\n'
CONFIG_BAD = '[Overcommit]\nMemoryRatio=abc\n'


class HardTimeout(Exception):
    pass


class Suite:
    def __init__(self, env, memqosctl, source_dir):
        self.env = env
        self.ctl = memqosctl
        self.src = source_dir
        self.passed = 0
        self.failed = 0

    # ---- reporting -----------------------------------------------------------
    def check(self, name, ok, why=''):
        if ok:
            self.passed += 1
            print(f'PASS {name}', flush=True)
        else:
            self.failed += 1
            print(f'FAIL {name}: {why}', flush=True)
        return ok

    def run_check(self, name, fn):
        """fn() returns None (pass) or a reason string; exceptions fail."""
        try:
            why = fn()
        except HardTimeout:
            raise
        except Exception as e:  # pylint: disable=broad-except
            why = f'{type(e).__name__}: {e}'
        return self.check(name, why is None, why)

    # ---- clients -------------------------------------------------------------
    def busctl(self, *args, user=None, json_out=True):
        cmd = (NOBODY if user == 'nobody' else []) + ['busctl', '--address=' + self.env.address]
        if json_out:
            cmd.append('--json=short')
        cmd += list(args)
        return subprocess.run(cmd, capture_output=True, text=True, timeout=15, check=False)

    def bcall(self, member, sig='', *args, user=None, path=ROOT, iface=MGR):
        r = self.busctl('call', MEMQOS, path, iface, member, *([sig] if sig else []),
                        *[str(a) for a in args], user=user)
        if r.returncode != 0:
            raise RuntimeError(f'busctl call {member}: exit {r.returncode}: {r.stderr.strip()}')
        return json.loads(r.stdout)['data'] if r.stdout.strip() else []

    def bprop(self, name, path=ROOT, iface=MGR, user=None):
        r = self.busctl('get-property', MEMQOS, path, iface, name, user=user)
        if r.returncode != 0:
            raise RuntimeError(f'busctl get-property {name}: {r.stderr.strip()}')
        return json.loads(r.stdout)['data']

    def memqosctl(self, *args, user=None):
        cmd = (NOBODY if user == 'nobody' else []) + [self.ctl, '--bus-address',
                                                       self.env.address] + list(args)
        return subprocess.run(cmd, capture_output=True, text=True, timeout=15, check=False)

    def state_files(self):
        out = set()
        for d, _dirs, files in os.walk(self.env.state_dir):
            for f in files:
                out.add(os.path.relpath(os.path.join(d, f), self.env.state_dir))
        return out

    def set_calls(self, unit=None):
        out = []
        for _m, args in self.env.calls('SetUnitProperties'):
            if unit is None or str(args[0]) == unit:
                out.append((str(args[0]), bool(args[1]),
                            {str(k): (v if isinstance(v, str) else int(v)) for k, v in args[2]}))
        return out

    def effect_calls(self):
        """SetUnitProperties calls but the memory guard's: the guard's cap on a
        class slice (MemoryHigh alone) follows the claims at the engine's next
        tick, so it may land during any later check, whatever that check does
        (seen on CI: the reclaimed slice's first cap, set once its slice
        existed, inside the non-root checks)."""
        return [c for c in self.set_calls()
                if not (c[0].startswith('memqos-') and c[0].endswith('.slice')
                        and set(c[2]) == {'MemoryHigh'})]

    def wait_for(self, fn, timeout=5.0):
        deadline = time.monotonic() + timeout
        while True:
            v = fn()
            if v or time.monotonic() > deadline:
                return v
            time.sleep(0.05)

    # ---- the checks ----------------------------------------------------------
    def run(self):
        meminfo_total = 0
        with open(os.path.join(self.env.proc_root, 'meminfo'), encoding='utf-8') as f:
            for line in f:
                if line.startswith('MemTotal:'):
                    meminfo_total = int(line.split()[1]) * 1024
        self.mem_total = meminfo_total

        self.properties()
        self.list_classes()
        self.introspection()
        self.assign()
        self.workload_objects()
        self.sampled_pressure()
        self.unassign_and_reassign()
        self.run_workload()
        self.verify_placement()
        self.instances()
        self.verify()
        self.reload()
        self.security()
        self.credentials()
        self.object_manager()
        self.bad_input()
        self.error_text()
        self.systemd_reloading()
        self.persistence()
        self.flood()
        self.stop_gives_back()
        self.no_activation()

    def properties(self):
        def via_busctl():
            total = self.bprop('MemoryTotal')
            if total != self.mem_total:
                return f'MemoryTotal {total}, meminfo says {self.mem_total}'
            if self.bprop('DryRun') is not False:
                return 'DryRun is not false'
            v = self.bprop('Version')
            if not v or not v[0].isdigit():
                return f'Version {v!r}'
            r = self.busctl('call', MEMQOS, ROOT, 'org.freedesktop.DBus.Properties', 'GetAll',
                            's', MGR)
            if r.returncode != 0:
                return r.stderr
            props = json.loads(r.stdout)['data'][0]
            contract = contract_members(self.src, 'Manager', MGR)[2]
            missing = set(contract) - set(props)
            if missing:
                return f'GetAll lacks {sorted(missing)}'
            if abs(props['MemoryRatio']['data'] - 1.5) > 1e-9:
                return f"MemoryRatio {props['MemoryRatio']['data']} (config says 1.5)"
            # tests/fixtures/proc/normal/pressure/memory: some avg10=1.53, full avg10=0.80
            psi = (props['MemoryPressureSome']['data'], props['MemoryPressureFull']['data'])
            if psi != (1.53, 0.8):
                return f'MemoryPressureSome/Full {psi}, /proc/pressure/memory says (1.53, 0.8)'
            return None
        self.run_check('properties (busctl)', via_busctl)

        def via_ctl():
            r = self.memqosctl('--json', 'status')
            if r.returncode != 0:
                r = self.memqosctl('status')
                if r.returncode != 0:
                    return f'exit {r.returncode}: {r.stderr.strip()}'
            if str(self.mem_total) not in r.stdout and '62.8G' not in r.stdout \
                    and '64' not in r.stdout:
                return f'MemoryTotal not shown: {r.stdout!r}'
            return None
        self.run_check('properties (memqosctl status)', via_ctl)

    def list_classes(self):
        def via_busctl():
            classes = self.bcall('ListClasses')[0]
            names = [c[0] for c in classes]
            if names != ['system', 'dedicated', 'shared', 'reclaimed']:
                return f'classes {names}'
            ranks = [self.bprop('Rank', path=p, iface='org.memqos1.Class') for _n, p in classes]
            if ranks != sorted(ranks, reverse=True) or len(set(ranks)) != 4:
                return f'ranks {ranks} not strictly decreasing'
            self.class_paths = dict((n, p) for n, p in classes)
            return None
        self.run_check('ListClasses: 4 default classes ranked (busctl)', via_busctl)

        def via_ctl():
            r = self.memqosctl('classes')
            if r.returncode != 0:
                return f'exit {r.returncode}: {r.stderr.strip()}'
            pos = [r.stdout.find(n) for n in ('system', 'dedicated', 'shared', 'reclaimed')]
            if -1 in pos or pos != sorted(pos):
                return f'output {r.stdout!r}'
            return None
        self.run_check('ListClasses (memqosctl classes)', via_ctl)

    def introspect_xml(self, path, user=None):
        r = self.busctl('introspect', '--xml-interface', MEMQOS, path, user=user,
                        json_out=False)
        if r.returncode != 0:
            raise RuntimeError(f'introspect {path}: {r.stderr.strip()}')
        return r.stdout

    def introspection(self):
        self.run_check('Introspect /org/memqos1 matches org.memqos1.Manager.xml',
                       lambda: compare_interface(self.src, 'Manager', MGR,
                                                 self.introspect_xml(ROOT)))

        def cls():
            path = self.class_paths['shared']
            return compare_interface(self.src, 'Class', 'org.memqos1.Class',
                                     self.introspect_xml(path))
        self.run_check('Introspect class object matches org.memqos1.Class.xml', cls)

    def assign(self):
        self.env.clear_calls()

        def via_busctl():
            before = self.state_files()
            out = self.bcall('AssignWorkload', 'ssttb', 'nginx.service', 'shared',
                             256 * MIB, GIB, 'true')
            if out != ['/org/memqos1/workload/nginx_2eservice']:
                return f'returned {out}'
            calls = self.wait_for(lambda: self.set_calls('nginx.service'))
            want = {'MemoryLow': 268435456, 'MemoryHigh': 993210368, 'MemoryMax': 1073741824}
            if not calls:
                return 'no SetUnitProperties(nginx.service)'
            name, runtime, props = calls[-1]
            if not runtime:
                return f'SetUnitProperties(nginx.service) runtime={runtime}, want true'
            bad = {k: (props.get(k), v) for k, v in want.items() if props.get(k) != v}
            if bad:
                return f'nginx.service properties (got, want): {bad}; all: {props}'
            sl = self.wait_for(lambda: [c for c in self.set_calls('system.slice')
                                        if c[2].get('MemoryLow') == 268435456])
            if not sl:
                return f'no SetUnitProperties(system.slice, MemoryLow=268435456): ' \
                       f'{self.set_calls("system.slice")}'
            new = self.state_files() - before
            if not new:
                return 'persist=true left no file in the state dir'
            return None
        self.run_check('AssignWorkload nginx.service shared 256M/1G -> SetUnitProperties '
                       '(busctl)', via_busctl)

        def via_ctl():
            self.env.clear_calls()
            r = self.memqosctl('assign', 'postgres.service', 'shared', '--request', '256M',
                               '--limit', '1G')
            if r.returncode != 0:
                return f'exit {r.returncode}: {r.stderr.strip()}'
            if '/org/memqos1/workload/postgres_2eservice' not in r.stdout:
                return f'output {r.stdout!r}'
            calls = self.wait_for(lambda: self.set_calls('postgres.service'))
            if not calls or calls[-1][2].get('MemoryHigh') != 993210368:
                return f'calls {calls}'
            sl = self.wait_for(lambda: [c for c in self.set_calls('system.slice')
                                        if c[2].get('MemoryLow') == 2 * 268435456])
            if not sl:
                return f'system.slice not given the sum 512M: {self.set_calls("system.slice")}'
            return None
        self.run_check('AssignWorkload postgres.service (memqosctl assign)', via_ctl)

    def workload_objects(self):
        def props():
            path = '/org/memqos1/workload/nginx_2eservice'
            want = {'Id': 'nginx.service', 'Kind': 'service', 'Class': 'shared',
                    'Unit': 'nginx.service', 'Request': 268435456, 'Limit': 1073741824,
                    'MemoryLow': 268435456, 'MemoryHigh': 993210368,
                    'MemoryMax': 1073741824, 'Persistent': True, 'MemoryMin': 0}
            got = {k: self.bprop(k, path=path, iface='org.memqos1.Workload') for k in want}
            bad = {k: (got[k], v) for k, v in want.items() if got[k] != v}
            if bad:
                return f'(got, want): {bad}'
            return compare_interface(self.src, 'Workload', 'org.memqos1.Workload',
                                     self.introspect_xml(path))
        self.run_check('Workload object properties and Introspect vs Workload.xml', props)

        def shared_class():
            w = self.bprop('Workloads', path=self.class_paths['shared'], iface='org.memqos1.Class')
            if sorted(w) != ['/org/memqos1/workload/nginx_2eservice',
                             '/org/memqos1/workload/postgres_2eservice']:
                return f'Workloads {w}'
            return None
        self.run_check('Class shared lists its workloads', shared_class)

        def lw():
            got = sorted(tuple(x) for x in self.bcall('ListWorkloads')[0])
            want = [('nginx.service', 'service', 'shared', '/org/memqos1/workload/nginx_2eservice'),
                    ('postgres.service', 'service', 'shared',
                     '/org/memqos1/workload/postgres_2eservice')]
            if got != want:
                return f'{got}'
            r = self.memqosctl('workloads')
            if r.returncode != 0 or 'nginx.service' not in r.stdout or \
                    'postgres.service' not in r.stdout:
                return f'memqosctl workloads: exit {r.returncode} {r.stdout!r} {r.stderr!r}'
            return None
        self.run_check('ListWorkloads (busctl and memqosctl workloads)', lw)

        def inspect():
            # memqosctl status ID, show and top against memqosd's own objects
            # (top reads them with one GetManagedObjects per frame).
            r = self.memqosctl('status', 'postgres')
            if r.returncode != 0 or not r.stdout.startswith(
                    'postgres.service - service managed by memqos\n') or \
                    'Class:    shared (rank ' not in r.stdout or 'Request:  256M' not in r.stdout:
                return f'status postgres: exit {r.returncode} {r.stdout!r} {r.stderr!r}'
            r = self.memqosctl('show', 'nginx', '-p', 'Class,MemoryHigh', '--value')
            if r.returncode != 0 or r.stdout != 'shared\n993210368\n':
                return f'show nginx: exit {r.returncode} {r.stdout!r} {r.stderr!r}'
            r = self.memqosctl('show', '-p', 'Version')
            if r.returncode != 0 or not r.stdout.startswith('Version='):
                return f'show: exit {r.returncode} {r.stdout!r} {r.stderr!r}'
            r = self.memqosctl('status', 'nothere')
            if r.returncode != 6 or "no workload 'nothere.service'" not in r.stderr:
                return f'status nothere: exit {r.returncode} {r.stderr!r}'
            r = self.memqosctl('--json=short', 'top', '-n', '1')
            doc = json.loads(r.stdout) if r.returncode == 0 and r.stdout else {}
            ids = sorted(w.get('Id') for w in doc.get('Workloads', []))
            names = [c.get('Name') for c in doc.get('Classes', [])]
            if ids != ['nginx.service', 'postgres.service'] or len(names) < 4 or \
                    doc.get('Manager', {}).get('WorkloadCount') != 2:
                return f'top --json: exit {r.returncode} {r.stdout!r} {r.stderr!r}'
            return None
        self.run_check('memqosctl status ID, show [ID], top (GetManagedObjects) on memqosd',
                       inspect)

    def sampled_pressure(self):
        # Class SwapCurrent/MemoryPressure and Workload MemoryPressure are what
        # memqosd read from the cgroup files at its last tick (or the workload's
        # full read, at least every 10 ticks here).
        shared = os.path.join(self.env.cgroup_root, 'memqos.slice', 'memqos-shared.slice')
        nginx = os.path.join(self.env.cgroup_root, 'system.slice', 'nginx.service')
        zero = ('some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n'
                'full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n')

        def write(path, text):
            with open(path, 'w', encoding='utf-8') as f:
                f.write(text)

        def check():
            write(os.path.join(shared, 'memory.pressure'),
                  'some avg10=3.50 avg60=1.00 avg300=0.20 total=1234\n'
                  'full avg10=1.25 avg60=0.00 avg300=0.00 total=99\n')
            write(os.path.join(shared, 'memory.swap.current'), f'{64 << 20}\n')
            write(os.path.join(nginx, 'memory.pressure'),
                  'some avg10=4.20 avg60=0.00 avg300=0.00 total=77\n'
                  'full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n')
            try:
                cls = self.class_paths['shared']
                wl = '/org/memqos1/workload/nginx_2eservice'

                def got():
                    return (self.bprop('SwapCurrent', path=cls, iface='org.memqos1.Class'),
                            self.bprop('MemoryPressure', path=cls, iface='org.memqos1.Class'),
                            self.bprop('MemoryPressure', path=wl, iface='org.memqos1.Workload'))
                want = (64 << 20, 3.5, 4.2)
                v = self.wait_for(lambda: got() == want, timeout=25.0)
                return None if v else f'(SwapCurrent, MemoryPressure, workload MemoryPressure) ' \
                    f'{got()}, the files say {want}'
            finally:
                write(os.path.join(shared, 'memory.pressure'), zero)
                write(os.path.join(shared, 'memory.swap.current'), '0\n')
                write(os.path.join(nginx, 'memory.pressure'), zero)
        self.run_check('Class SwapCurrent/MemoryPressure, Workload MemoryPressure from the '
                       'cgroup files', check)

        def read_once():
            # Issue 25: a GetAll of a workload reads its usage files once for
            # its three usage properties (MemoryCurrent, SwapCurrent,
            # MemoryPressure), not once each (memory.current was read three
            # times). Reads are counted with inotify (IN_ACCESS: every read
            # that returned data). A tick may read the workload meanwhile
            # (its OOM priority's repair turn), so one of five tries must see
            # exactly one read of each file.
            files = ('memory.current', 'memory.swap.current', 'memory.pressure')
            wl = '/org/memqos1/workload/nginx_2eservice'
            seen = []
            with busenv.InotifyAccess([os.path.join(nginx, f) for f in files]) as watch:
                for _ in range(5):
                    watch.drain()
                    r = self.busctl('call', MEMQOS, wl, 'org.freedesktop.DBus.Properties',
                                    'GetAll', 's', 'org.memqos1.Workload')
                    if r.returncode != 0:
                        return f'GetAll of {wl}: exit {r.returncode}: {r.stderr.strip()}'
                    data = json.loads(r.stdout)['data'][0]
                    if 'MemoryCurrent' not in data or 'MemoryPressure' not in data:
                        return f'GetAll of {wl} lacks the usage properties: {sorted(data)}'
                    counts = watch.drain()
                    got = tuple(counts.get(os.path.join(nginx, f), 0) for f in files)
                    seen.append(got)
                    if got == (1, 1, 1):
                        return None
            return f'reads of {files} per GetAll of {wl}: {seen}, expected (1, 1, 1) at least once'
        self.run_check('GetAll of a workload reads its usage files once for its three usage '
                       'properties', read_once)

    def unassign_and_reassign(self):
        def via_busctl():
            self.env.clear_calls()
            self.bcall('UnassignWorkload', 's', 'postgres.service')
            names = [x[0] for x in self.bcall('ListWorkloads')[0]]
            if 'postgres.service' in names:
                return f'still listed: {names}'
            # Given back by removing memqos's runtime drop-ins and a
            # daemon-reload (systemd re-applies the unit's configuration),
            # not by re-sending remembered values.
            if not self.wait_for(lambda: self.env.calls('Reload')):
                return f'no daemon-reload gave the unit its own values: {self.env.calls()}'
            if self.set_calls('postgres.service'):
                return f'values re-sent: {self.set_calls("postgres.service")}'
            sl = self.wait_for(lambda: [c for c in self.set_calls('system.slice')
                                        if c[2].get('MemoryLow') == 268435456])
            if not sl:
                return f'system.slice sum not lowered: {self.set_calls("system.slice")}'
            if any('postgres' in f for f in self.state_files()):
                return f'state file left: {self.state_files()}'
            return None
        self.run_check('UnassignWorkload (busctl)', via_busctl)

        def via_ctl():
            r = self.memqosctl('assign', 'postgres.service', 'shared', '--request', '128M',
                               '--limit', '512M', '--runtime')
            if r.returncode != 0:
                return f'assign exit {r.returncode}: {r.stderr.strip()}'
            if self.bprop('Persistent', path='/org/memqos1/workload/postgres_2eservice',
                          iface='org.memqos1.Workload') is not False:
                return '--runtime assignment is Persistent'
            r = self.memqosctl('unassign', 'postgres.service')
            if r.returncode != 0:
                return f'unassign exit {r.returncode}: {r.stderr.strip()}'
            names = [x[0] for x in self.bcall('ListWorkloads')[0]]
            if 'postgres.service' in names:
                return f'still listed: {names}'
            return None
        self.run_check('assign --runtime / unassign (memqosctl)', via_ctl)

    def run_workload(self):
        def check_start(unit, argv0):
            calls = self.wait_for(lambda: [a for _m, a in self.env.calls('StartTransientUnit')
                                           if str(a[0]) == unit])
            if not calls:
                return f'no StartTransientUnit({unit})'
            props = {str(k): v for k, v in calls[-1][2]}
            if str(props.get('Slice')) != 'memqos-reclaimed.slice':
                return f"Slice={props.get('Slice')}"
            ex = props.get('ExecStart')
            if not ex or str(ex[0][0]) != argv0:
                return f'ExecStart={ex}'
            return None

        def via_busctl():
            self.env.clear_calls()
            out = self.bcall('RunWorkload', 'ssttas', 'batch1', 'reclaimed', 0, 512 * MIB,
                             2, '/bin/sleep', '1')
            if out != ['/org/memqos1/workload/batch1_2eservice']:
                return f'returned {out}'
            return check_start('batch1.service', '/bin/sleep')
        self.run_check('RunWorkload -> StartTransientUnit in memqos-reclaimed.slice (busctl)',
                       via_busctl)

        def via_ctl():
            r = self.memqosctl('run', '--name', 'batch2', '--class', 'reclaimed', '--limit',
                               '256M', '--', '/bin/true')
            if r.returncode != 0:
                return f'exit {r.returncode}: {r.stderr.strip()}'
            return check_start('batch2.service', '/bin/true')
        self.run_check('RunWorkload (memqosctl run)', via_ctl)

        def cleanup():
            for u in ('batch1.service', 'batch2.service'):
                self.bcall('UnassignWorkload', 's', u)
            return None
        self.run_check('UnassignWorkload of the transient units', cleanup)

    def placement(self, memory, reserve=None, user=None):
        opts = ['0'] if reserve is None else ['1', 'failover_reserve', 't', str(reserve)]
        verdict, message, numbers = self.bcall('VerifyPlacement', 'tta{sv}', memory, memory,
                                               *opts, user=user)
        return verdict, message, numbers

    def verify_placement(self):
        def verdicts():
            v, m, n = self.placement(GIB)
            if v != 'fits' or not m.startswith('fits'):
                return f'1G: {v} {m}'
            for k in ('available', 'instances', 'reserved', 'ratio_permille', 'memory_total'):
                if k not in n:
                    return f'numbers lack {k}: {n}'
            if n['memory_total'] != self.mem_total or n['ratio_permille'] != 1500:
                return f'numbers {n}'
            cap = n['available'] * 3 // 2
            v2, m2, _ = self.placement(cap - GIB, reserve=4 * GIB)
            if v2 != 'soft':
                return f'cap-1G with reserve 4G: {v2} {m2}'
            v3, m3, _ = self.placement(cap + GIB)
            if v3 != 'hard':
                return f'cap+1G: {v3} {m3}'
            self.capacity = cap
            return None
        self.run_check('VerifyPlacement fits/soft/hard with numbers (busctl)', verdicts)

        def via_ctl():
            r = self.memqosctl('verify-placement', '1G')
            if r.returncode != 0 or 'fits' not in r.stdout + r.stderr:
                return f'1G: exit {r.returncode} {r.stdout!r} {r.stderr!r}'
            r = self.memqosctl('verify-placement', str(self.capacity - GIB),
                               '--failover-reserve', '4G')
            if r.returncode != 0 or 'soft' not in r.stdout + r.stderr:
                return f'soft: exit {r.returncode} {r.stdout!r} {r.stderr!r}'
            r = self.memqosctl('verify-placement', str(self.capacity + GIB))
            if r.returncode != 2 or 'hard' not in r.stdout + r.stderr:
                return f'hard: exit {r.returncode} {r.stdout!r} {r.stderr!r}'
            return None
        self.run_check('VerifyPlacement (memqosctl verify-placement: exit 0/0/2)', via_ctl)

        def with_class():
            # Admission is open here: the class changes nothing (the daemon
            # tests cover level 1); "" and names are accepted.
            for cls in ('dedicated', 'reclaimed', ''):
                v, m, _ = self.placement_opts(GIB, {'class': cls})
                if v != 'fits':
                    return f'class {cls!r}: {v} {m}'
            r = self.memqosctl('verify-placement', '1G', '--class', 'dedicated')
            if r.returncode != 0 or 'fits' not in r.stdout + r.stderr:
                return f'--class dedicated: exit {r.returncode} {r.stdout!r} {r.stderr!r}'
            return None
        self.run_check('VerifyPlacement option class (busctl, memqosctl --class)', with_class)

        def refusals_rate_limited():
            # Issue 24 item 11: anyone may call VerifyPlacement; its "Placement
            # refused" notice must not let a loop use up journald's rate limit
            # (kill records would be dropped). 500 hard verdicts from uid 65534
            # in one second: at most 10 lines, and one saying the rest are not
            # logged.
            start = len(self.env.daemon_stderr())
            huge = 1 << 50
            script = ('import dbus, sys\n'
                      'c = dbus.bus.BusConnection(sys.argv[1])\n'
                      'o = c.get_object("org.memqos1", "/org/memqos1")\n'
                      'hard = 0\n'
                      'for _ in range(500):\n'
                      f'    v = o.VerifyPlacement(dbus.UInt64({huge}), dbus.UInt64({huge}), '
                      f'dbus.Dictionary({{}}, signature="sv"), dbus_interface="{MGR}")\n'
                      '    hard += str(v[0]) == "hard"\n'
                      'print(hard)\n')
            r = subprocess.run(NOBODY + ['/usr/bin/python3', '-c', script, self.env.address],
                               capture_output=True, text=True, timeout=30, check=False)
            if r.returncode != 0 or r.stdout.strip() != '500':
                return f'flood as nobody: exit {r.returncode} {r.stdout!r} {r.stderr[-300:]!r}'
            # The daemon logs before it replies: the last reply means all is logged.
            log = self.env.daemon_stderr()[start:]
            refused = log.count('Placement refused:')
            if refused > 10:
                return f'{refused} "Placement refused" lines for 500 calls (at most 10 a minute)'
            if log.count('Further placement refusals this minute are not logged') != 1:
                return f'no single "not logged" line: {log[-600:]!r}'
            return None
        self.run_check('500 hard VerifyPlacement from uid 65534: at most 10 "Placement refused" '
                       'lines a minute, the rest counted', refusals_rate_limited)

    # ---- the instance record ---------------------------------------------------
    def instances_list(self):
        return sorted(tuple(x) for x in self.bcall('ListInstances')[0])

    def placement_opts(self, memory, options, min_memory=None):
        """VerifyPlacement as root through dbus-python, options typed by the caller."""
        import dbus  # pylint: disable=import-outside-toplevel
        verdict, message, numbers = self.env.conn.get_object(MEMQOS, ROOT).VerifyPlacement(
            dbus.UInt64(memory), dbus.UInt64(memory if min_memory is None else min_memory),
            dbus.Dictionary(options, signature='sv'), dbus_interface=MGR)
        return str(verdict), str(message), {str(k): int(v) for k, v in numbers.items()}

    def error_name_as_nobody(self, member, *args):
        """Calls member with python args as uid 65534; the D-Bus error name or 'OK'."""
        script = ('import dbus, sys\n'
                  'c = dbus.bus.BusConnection(sys.argv[1])\n'
                  'o = c.get_object("org.memqos1", "/org/memqos1")\n'
                  'try:\n'
                  f'    o.{member}({", ".join(args)}, dbus_interface="{MGR}")\n'
                  '    print("OK")\n'
                  'except dbus.exceptions.DBusException as e:\n'
                  '    print(e.get_dbus_name())\n')
        r = subprocess.run(NOBODY + ['/usr/bin/python3', '-c', script, self.env.address],
                           capture_output=True, text=True, timeout=15, check=False)
        if r.returncode != 0:
            raise RuntimeError(f'python as nobody: exit {r.returncode}: {r.stderr.strip()}')
        return r.stdout.strip()

    def instances(self):
        self.n0 = self.placement(GIB)[2]['instances']

        def record():
            before = self.state_files()
            up_max = self.bprop('UpInstancesMaxMemory')
            self.bcall('RecordInstance', 'sttb', 'web1.example.com', 256 * MIB, 2 * GIB, 'true')
            self.bcall('RecordInstance', 'sttb', 'web1.example.com', 512 * MIB, GIB, 'true')
            self.bcall('RecordInstance', 'sttb', 'db1.example.com', 2 * GIB, 2 * GIB, 'false')
            got = self.instances_list()
            want = [('db1.example.com', 2 * GIB, 2 * GIB, False),
                    ('web1.example.com', 512 * MIB, GIB, True)]
            if got != want:
                return f'ListInstances {got}, want {want} (a second record replaces the first)'
            if len(self.state_files() - before) != 2:
                return f'state files: new {sorted(self.state_files() - before)}, want 2'
            # Σ max_memory of the up records: web1's 1G (the replaced 2G and the down db1's
            # 2G do not count).
            if self.bprop('UpInstancesMaxMemory') != up_max + GIB:
                return (f"UpInstancesMaxMemory {self.bprop('UpInstancesMaxMemory')}, "
                        f'want {up_max} + 1G')
            return None
        self.run_check('RecordInstance (new, replaced, down) then ListInstances shows them, '
                       'UpInstancesMaxMemory sums the up ones (busctl)', record)

        def forget():
            before = self.state_files()
            self.bcall('RecordInstance', 'sttb', 'tmp1', GIB, GIB, 'true')
            if ('tmp1', GIB, GIB, True) not in self.instances_list():
                return f'tmp1 not listed: {self.instances_list()}'
            self.bcall('ForgetInstance', 's', 'tmp1')
            if any(i[0] == 'tmp1' for i in self.instances_list()):
                return f'tmp1 still listed: {self.instances_list()}'
            if self.state_files() != before:
                return f'state files differ: {self.state_files() ^ before}'
            return None
        self.run_check('ForgetInstance drops the record and its state file (busctl)', forget)

        def denied():
            before = (self.instances_list(), self.state_files())
            name = self.error_name_as_nobody('RecordInstance', '"evil1"', 'dbus.UInt64(0)',
                                             'dbus.UInt64(1 << 30)', 'True')
            if name != 'org.freedesktop.DBus.Error.AccessDenied':
                return f'RecordInstance as nobody: {name}'
            name = self.error_name_as_nobody('ForgetInstance', '"web1.example.com"')
            if name != 'org.freedesktop.DBus.Error.AccessDenied':
                return f'ForgetInstance as nobody: {name}'
            if (self.instances_list(), self.state_files()) != before:
                return 'the record changed'
            listed = self.bcall('ListInstances', user='nobody')[0]
            if len(listed) != len(before[0]):
                return f'ListInstances as nobody: {listed}'
            return None
        self.run_check('non-root RecordInstance/ForgetInstance -> '
                       'org.freedesktop.DBus.Error.AccessDenied; ListInstances open', denied)

        def counted():
            _v, _m, n = self.placement(GIB)
            if n['instances'] != self.n0 + GIB:
                return f"instances {n['instances']}, want {self.n0} + 1G (the up web1 only, " \
                       f"not the down db1)"
            _v, _m, n = self.placement_opts(GIB, {'instance': 'web1.example.com'})
            if n['instances'] != self.n0:
                return f"instance=web1: instances {n['instances']}, want {self.n0}"
            _v, _m, n = self.placement_opts(GIB, {'instance': 'db1.example.com'})
            if n['instances'] != self.n0 + GIB:
                return f"instance=db1 (down): instances {n['instances']}, want {self.n0} + 1G"
            _v, _m, n = self.placement_opts(GIB, {'instance': 'not-recorded'})
            if n['instances'] != self.n0 + GIB:
                return f"instance=not-recorded: instances {n['instances']}"
            return None
        self.run_check('VerifyPlacement counts the up instance in numbers["instances"], not the '
                       'down one; option instance leaves its own record out', counted)

        def refuse_soft():
            import dbus  # pylint: disable=import-outside-toplevel
            total = self.bprop('MemoryTotal')
            reserved_node = self.bprop('NodeReserved')
            permille = round(self.bprop('MemoryRatio') * 1000)
            _v, _m, n = self.placement(GIB)
            available = total - reserved_node - n['services']
            if available != n['available'] or permille != n['ratio_permille']:
                return f'available {available} / permille {permille} from the properties, ' \
                       f'numbers say {n}'
            cap = available * permille // 1000
            self.soft_size = cap - n['instances'] - GIB
            reserve = dbus.UInt64(4 * GIB)
            v, m, _ = self.placement_opts(self.soft_size, {'failover_reserve': reserve})
            if v != 'soft' or not m.startswith('soft'):
                return f'{self.soft_size} with reserve 4G: {v} {m!r}, want soft'
            v, m, _ = self.placement_opts(self.soft_size, {'failover_reserve': reserve,
                                                          'refuse_soft': dbus.Boolean(False)})
            if v != 'soft':
                return f'refuse_soft=false: {v} {m!r}, want soft'
            v, m, _ = self.placement_opts(self.soft_size, {'failover_reserve': reserve,
                                                          'refuse_soft': dbus.Boolean(True)})
            if v != 'hard' or not m.startswith('hard') or 'soft violations are refused' not in m:
                return f'refuse_soft=true: {v} {m!r}, want hard'
            v, m, _ = self.placement_opts(GIB, {'refuse_soft': dbus.Boolean(True)})
            if v != 'fits':
                return f'1G with refuse_soft: {v} {m!r}, want fits'
            return None
        self.run_check('VerifyPlacement refuse_soft turns soft (failover_reserve 4G) into hard, '
                       'leaves fits alone (numbers from MemoryTotal, NodeReserved)', refuse_soft)

        def via_ctl():
            r = self.memqosctl('record-instance', 'ctl1.example.com', '--max', '768M', '--min',
                               '256M', '--down')
            if r.returncode != 0 or r.stdout or r.stderr:
                return f'record-instance: exit {r.returncode} {r.stdout!r} {r.stderr!r}'
            if ('ctl1.example.com', 256 * MIB, 768 * MIB, False) not in self.instances_list():
                return f'ListInstances {self.instances_list()}'
            r = self.memqosctl('record-instance', 'ctl2.example.com', '--max', '1073741824')
            if r.returncode != 0:
                return f'record-instance ctl2: exit {r.returncode} {r.stderr!r}'
            if ('ctl2.example.com', GIB, GIB, True) not in self.instances_list():
                return f'ctl2 (min = max, up): ListInstances {self.instances_list()}'
            r = self.memqosctl('instances')
            rows = [line.split() for line in r.stdout.splitlines()]
            if r.returncode != 0 or ['NAME', 'MIN', 'MAX', 'STATE'] not in rows or \
                    ['ctl1.example.com', '256M', '768M', 'down'] not in rows or \
                    ['ctl2.example.com', '1G', '1G', 'up'] not in rows:
                return f'instances: exit {r.returncode} {r.stdout!r} {r.stderr!r}'
            r = self.memqosctl('--json', 'instances')
            doc = json.loads(r.stdout)
            if {'name': 'ctl1.example.com', 'min_memory': 256 * MIB, 'max_memory': 768 * MIB,
                    'up': False} not in doc:
                return f'instances --json: {doc}'
            r = self.memqosctl('status')
            rows = [line.split() for line in r.stdout.splitlines()]
            if r.returncode != 0 or ['ctl1.example.com', '256M', '768M', 'down'] not in rows or \
                    'Max memory of up instances: 2G (2 of 4 up)' not in r.stdout:
                return f'status: exit {r.returncode} {r.stdout!r} {r.stderr!r}'
            r = self.memqosctl('--json', 'status')
            if r.returncode != 0 or len(json.loads(r.stdout).get('instances', [])) != 4:
                return f'status --json: exit {r.returncode} {r.stdout!r}'
            for name in ('ctl1.example.com', 'ctl2.example.com'):
                r = self.memqosctl('forget-instance', name)
                if r.returncode != 0 or r.stdout or r.stderr:
                    return f'forget-instance {name}: exit {r.returncode} {r.stderr!r}'
            if any(i[0].startswith('ctl') for i in self.instances_list()):
                return f'still listed: {self.instances_list()}'
            r = self.memqosctl('forget-instance', 'ctl1.example.com')
            if r.returncode != 6 or not r.stderr.startswith(
                    'memqosctl: org.memqos1.Error.NoSuchInstance: '):
                return f'forget-instance again: exit {r.returncode} {r.stderr!r}'
            return None
        self.run_check('memqosctl record-instance, instances, status, forget-instance', via_ctl)

        def placement_ctl():
            size = str(self.soft_size)
            r = self.memqosctl('verify-placement', size, '--failover-reserve', '4G')
            if r.returncode != 0 or 'Verdict:  soft' not in r.stdout:
                return f'soft: exit {r.returncode} {r.stdout!r} {r.stderr!r}'
            r = self.memqosctl('verify-placement', size, '--failover-reserve', '4G',
                               '--refuse-soft')
            if r.returncode != 2 or 'Verdict:  hard' not in r.stdout or \
                    'soft violations are refused' not in r.stdout or \
                    not r.stderr.startswith('memqosctl: hard placement violation: hard'):
                return f'--refuse-soft: exit {r.returncode} {r.stdout!r} {r.stderr!r}'
            r = self.memqosctl('--json', 'verify-placement', '1G', '--min', '512M', '--instance',
                               'web1.example.com')
            doc = json.loads(r.stdout) if r.stdout else {}
            if r.returncode != 0 or doc.get('numbers', {}).get('instances') != self.n0:
                return f'--instance web1: exit {r.returncode} {r.stdout!r} {r.stderr!r}'
            r = self.memqosctl('verify-placement', '1G', '--instance', 'bad name')
            if r.returncode != 64 or not r.stderr.startswith(
                    'memqosctl: org.memqos1.Error.InvalidArgument: '):
                return f'--instance "bad name": exit {r.returncode} {r.stderr!r}'
            return None
        self.run_check('memqosctl verify-placement --refuse-soft: exit 2; --instance, --min',
                       placement_ctl)

    def verify(self):
        def both():
            findings = self.bcall('Verify')[0]
            for f in findings:
                if len(f) != 3 or f[0] not in ('error', 'warning', 'info'):
                    return f'bad finding {f}'
            r = self.memqosctl('verify')
            want = 2 if any(f[0] == 'error' for f in findings) else 0
            if r.returncode != want:
                return f'memqosctl verify exit {r.returncode}, want {want}: {r.stdout!r} ' \
                       f'{r.stderr!r}'
            return None
        self.run_check('Verify (busctl and memqosctl verify)', both)

    def reload(self):
        def good():
            self.env.write_config(CONFIG_GOOD2)
            answer = self.bcall('Reload')
            if answer != [[]]:
                return f'Reload answered {answer}, want [[]] (nothing needs a restart)'
            ratio = self.bprop('MemoryRatio')
            if abs(ratio - 2.0) > 1e-9:
                return f'MemoryRatio {ratio} after Reload, want 2'
            return None
        self.run_check('Reload of a good config (busctl)', good)

        def restart_needed():
            # LibvirtURI is read only at start: the answer and memqosctl say so.
            self.env.write_config(CONFIG_GOOD2 + '[VM]\nLibvirtURI=test:///default\n')
            answer = self.bcall('Reload')
            want = 'VM.LibvirtURI needs a restart: qemu:///system stays in use until memqosd ' \
                   'restarts (the configuration now says test:///default)'
            if answer != [[want]]:
                return f'Reload answered {answer}, want [[{want!r}]]'
            r = self.memqosctl('reload')
            if r.returncode != 0 or r.stdout != want + '\n':
                return f'memqosctl reload: exit {r.returncode} {r.stdout!r} {r.stderr!r}'
            r = self.memqosctl('--json', 'reload')
            if r.returncode != 0 or json.loads(r.stdout) != {'restart_needed': [want]}:
                return f'memqosctl --json reload: exit {r.returncode} {r.stdout!r}'
            return None
        self.run_check('Reload of a start-only key -> "needs a restart" in the answer', restart_needed)

        def bad():
            self.env.write_config(CONFIG_BAD)
            r = self.busctl('call', MEMQOS, ROOT, MGR, 'Reload')
            if r.returncode == 0 or 'abc' not in r.stderr:
                return f'busctl Reload: exit {r.returncode} {r.stderr!r}'
            r = self.memqosctl('reload')
            if r.returncode != 1 or not r.stderr.removeprefix('memqosctl: ').startswith(
                    'org.memqos1.Error.ConfigInvalid: '):
                return f'memqosctl reload: exit {r.returncode} {r.stderr!r}'
            ratio = self.bprop('MemoryRatio')
            if abs(ratio - 2.0) > 1e-9:
                return f'MemoryRatio {ratio} after a refused Reload, want 2 (kept)'
            return None
        self.run_check('Reload of an invalid config -> ConfigInvalid, old kept', bad)

        def triggers():
            # D-Bus Reload (not only SIGHUP) registers the PSI triggers of
            # the new thresholds: 13 % of a 1 s window is "some 130000 1000000".
            want = 'PSI triggers (some 130000 1000000'
            if want in self.env.daemon_stderr():
                return f'{want!r} logged before the reload'
            self.env.write_config(CONFIG_GOOD2 + '[Pressure]\nLevel1SomeAvg10=13%\n')
            answer = self.bcall('Reload')
            if answer != [[]]:
                return f'Reload answered {answer}, want [[]]'
            if not self.wait_for(lambda: want in self.env.daemon_stderr()):
                return f'no {want!r} in the log after Reload'
            return None
        self.run_check('Reload over D-Bus registers the new PSI triggers', triggers)

        def restore():
            self.env.write_config(CONFIG_GOOD)
            r = self.memqosctl('reload')
            if r.returncode != 0:
                return f'exit {r.returncode}: {r.stderr.strip()}'
            ratio = self.bprop('MemoryRatio')
            return None if abs(ratio - 1.5) < 1e-9 else f'MemoryRatio {ratio}'
        self.run_check('Reload back (memqosctl reload)', restore)

    def security(self):
        def reads():
            if self.bprop('MemoryTotal', user='nobody') != self.mem_total:
                return 'MemoryTotal as nobody'
            if len(self.bcall('ListClasses', user='nobody')[0]) != 4:
                return 'ListClasses as nobody'
            if self.placement(GIB, user='nobody')[0] != 'fits':
                return 'VerifyPlacement as nobody'
            self.bcall('ListWorkloads', user='nobody')
            self.bcall('Verify', user='nobody')
            self.introspect_xml(ROOT, user='nobody')
            for args in (['status'], ['classes'], ['workloads'], ['verify-placement', '1G']):
                r = self.memqosctl(*args, user='nobody')
                if r.returncode != 0:
                    return f'memqosctl {args[0]} as nobody: exit {r.returncode} {r.stderr!r}'
            return None
        self.run_check('non-root reads properties, lists, VerifyPlacement, Introspect', reads)

        calls = [
            ('AssignWorkload', ['ssttb', 'nginx.service', 'shared', '1', '2', 'false'],
             ['assign', 'nginx.service', 'shared', '--limit', '1G']),
            ('UnassignWorkload', ['s', 'nginx.service'], ['unassign', 'nginx.service']),
            ('RunWorkload', ['ssttas', 'x', 'reclaimed', '0', '1073741824', '1', '/bin/true'],
             ['run', '--name', 'x', '--class', 'reclaimed', '--', '/bin/true']),
            ('Reload', [], ['reload']),
            ('RecordInstance', ['sttb', 'evil2', '0', '1073741824', 'true'],
             ['record-instance', 'evil2', '--max', '1G']),
            ('ForgetInstance', ['s', 'db1.example.com'], ['forget-instance', 'db1.example.com']),
        ]
        for member, bargs, cargs in calls:
            def denied(member=member, bargs=bargs, cargs=cargs):
                before_calls = len(self.effect_calls())
                before_files = self.state_files()
                r = self.busctl('call', MEMQOS, ROOT, MGR, member, *bargs, user='nobody')
                if r.returncode == 0 or 'Access denied' not in r.stderr and \
                        'AccessDenied' not in r.stderr:
                    return f'busctl: exit {r.returncode} {r.stderr!r}'
                r = self.memqosctl(*cargs, user='nobody')
                if r.returncode == 0 or ('AccessDenied' not in r.stderr and
                                         'ccess denied' not in r.stderr):
                    return f'memqosctl: exit {r.returncode} {r.stderr!r}'
                if len(self.effect_calls()) != before_calls or self.state_files() != before_files:
                    return 'state changed'
                if r.returncode != 5:
                    return f'memqosctl: exit {r.returncode}, want 5 (access denied)'
                return None
            self.run_check(f'non-root {member} -> AccessDenied (busctl and memqosctl)', denied)

    def credentials(self):
        """memqosd decides from the uid the bus vouches for (the effective uid
        at connect time, SO_PEERCRED), not from /proc/PID/status, which the
        caller changes after connecting (setresuid with a saved uid of 0)."""
        nobody_then_root = ((65534, 65534, 0), (0, 0, 0))
        root_then_nobody = ((0, 0, 0), (65534, 65534, 0))

        def policy_first():
            # The real policy: the bus itself refuses (its own wall, the same
            # connect-time uid), memqosd never sees the call.
            got = call_as(self.env.address, *nobody_then_root, 'Reload')
            if got['error'] != 'org.freedesktop.DBus.Error.AccessDenied' or \
                    'for root only' in got['message']:
                return f'want the bus policy to refuse; got {got}'
            return None
        self.run_check('credentials: connect as 65534, seteuid(0), Reload -> the bus policy '
                       'refuses', policy_first)

        self.env.set_open_policy(True)
        try:
            def refused_by_memqosd(got):
                # dbus-daemon's own refusals say "Rejected send message".
                return got['error'] == 'org.freedesktop.DBus.Error.AccessDenied' and \
                    not got['message'].startswith('Rejected send message')

            # Every root-only method (sd-bus's own privilege check is off for
            # them: memqosd's is the one), twice on one connection (the
            # second answer comes from memqosd's per-connection uid).
            root_calls = (('AssignWorkload', 'ssttb', ['nginx.service', 'reclaimed', 0, GIB, True]),
                          ('UnassignWorkload', 's', ['nginx.service']),
                          ('Release', '', []),
                          ('RunWorkload', 'ssttas', ['evil4', 'reclaimed', 0, GIB, ['/bin/true']]),
                          ('Reload', '', []),
                          ('RecordInstance', 'sttb', ['evil3', 0, GIB, True]),
                          ('ForgetInstance', 's', ['db1.example.com']),
                          ('Reclaim', 'st', ['nginx.service', MIB]))

            def plain_nobody():
                before_calls = len(self.effect_calls())
                before_files = self.state_files()
                for member, sig, args in root_calls:
                    got = call_as(self.env.address, (65534,) * 3, (65534,) * 3, member, sig,
                                  args, repeat=2)
                    if len(got['all']) != 2:
                        return f'{member}: want two answers; got {got}'
                    for error, message in got['all']:
                        if not refused_by_memqosd({'error': error, 'message': message}) or \
                                'for root only' not in message:
                            return (f'{member}: want memqosd (not the bus) to refuse uid 65534 '
                                    f'on both calls; got {got}')
                if len(self.effect_calls()) != before_calls or self.state_files() != before_files:
                    return 'state changed'
                return None
            self.run_check('credentials (bus policy opened): uid 65534 calls each root-only '
                           'method twice on one connection; memqosd answers AccessDenied to all',
                           plain_nobody)

            def root_twice():
                got = call_as(self.env.address, (0,) * 3, (0,) * 3, 'Reload', repeat=2)
                if [e for e, _ in got['all']] != [None, None]:
                    return f'want both Reloads of root allowed; got {got}'
                return None
            self.run_check('credentials (bus policy opened): root calls Reload twice on one '
                           'connection; both allowed', root_twice)

            def nobody_connect_root_call():
                before_calls = len(self.effect_calls())
                before_files = self.state_files()
                for member, sig, args in (('Reload', '', []),
                                          ('AssignWorkload', 'ssttb',
                                           ['nginx.service', 'reclaimed', 0, GIB, True]),
                                          ('RecordInstance', 'sttb', ['evil3', 0, GIB, True])):
                    got = call_as(self.env.address, *nobody_then_root, member, sig, args)
                    if got['proc_uid'].split()[:2] != ['0', '0']:
                        return f'/proc did not say uid 0: {got}'
                    if not refused_by_memqosd(got):
                        return f'{member}: want AccessDenied from memqosd; got {got}'
                if len(self.effect_calls()) != before_calls or self.state_files() != before_files:
                    return 'state changed'
                if self.bprop('Class', path='/org/memqos1/workload/nginx_2eservice',
                              iface='org.memqos1.Workload') != 'shared':
                    return 'nginx.service changed class'
                return None
            self.run_check('credentials (bus policy opened): connect as 65534, then '
                           'setresuid(0,0,0) (/proc says root): Reload, AssignWorkload, '
                           'RecordInstance -> AccessDenied', nobody_connect_root_call)

            def root_connect_nobody_call():
                got = call_as(self.env.address, *root_then_nobody, 'Reload')
                if got['proc_uid'].split()[:2] != ['65534', '65534']:
                    return f'/proc did not say uid 65534: {got}'
                if got['error'] is not None:
                    return f'want Reload allowed (the bus vouches for uid 0); got {got}'
                return None
            self.run_check('credentials (bus policy opened): connect as root, then '
                           'setresuid(65534,65534,0) (/proc says 65534): Reload allowed',
                           root_connect_nobody_call)
        finally:
            self.env.set_open_policy(False)

    def object_manager(self):
        conn = dbuswire.Connection(self.env.address)
        conn.add_match(f"type='signal',sender='{MEMQOS}',path='{ROOT}',"
                       "interface='org.freedesktop.DBus.ObjectManager'")
        om = 'org.freedesktop.DBus.ObjectManager'
        pg = '/org/memqos1/workload/postgres_2eservice'
        nginx = '/org/memqos1/workload/nginx_2eservice'

        def managed():
            return conn.call_ok(MEMQOS, ROOT, om, 'GetManagedObjects')[0]

        def listing():
            objs = managed()
            want = {'/org/memqos1/class/' + c for c in ('system', 'dedicated', 'shared',
                                                        'reclaimed')} | {nginx}
            if set(objs) != want:
                return f'GetManagedObjects paths {sorted(objs)}, want {sorted(want)}'
            w = objs[nginx].get('org.memqos1.Workload', {})
            props = {k: v[1] for k, v in w.items()}
            if props.get('Id') != 'nginx.service' or props.get('Class') != 'shared' or \
                    props.get('Limit') != GIB:
                return f'nginx.service interfaces {objs[nginx]}'
            contract = set(contract_members(self.src, 'Workload', 'org.memqos1.Workload')[2])
            if set(props) != contract:
                return f'Workload properties {sorted(props)}, contract {sorted(contract)}'
            c = {k: v[1] for k, v in objs['/org/memqos1/class/shared']['org.memqos1.Class']
                 .items()}
            if c.get('Name') != 'shared' or c.get('Workloads') != [nginx]:
                return f'class shared {c}'
            r = self.busctl('call', MEMQOS, ROOT, om, 'GetManagedObjects', user='nobody')
            if r.returncode != 0 or nginx not in r.stdout:
                return f'as nobody: exit {r.returncode} {r.stderr.strip()!r}'
            return None
        self.run_check('GetManagedObjects: 4 classes and the workload with all properties '
                       '(root, and nobody through busctl)', listing)

        def added_removed():
            conn.signals.clear()
            self.bcall('AssignWorkload', 'ssttb', 'postgres.service', 'reclaimed', 0, GIB,
                       'false')
            sig = conn.wait_signal(lambda m: m.member == 'InterfacesAdded', 10)
            if sig is None or sig.body[0] != pg:
                return f'no InterfacesAdded for {pg}: {sig}'
            props = {k: v[1] for k, v in sig.body[1].get('org.memqos1.Workload', {}).items()}
            if props.get('Id') != 'postgres.service' or props.get('Class') != 'reclaimed':
                return f'InterfacesAdded properties {props}'
            if pg not in managed():
                return 'GetManagedObjects lacks the new workload'
            self.bcall('UnassignWorkload', 's', 'postgres.service')
            sig = conn.wait_signal(lambda m: m.member == 'InterfacesRemoved', 10)
            if sig is None or sig.body[0] != pg or 'org.memqos1.Workload' not in sig.body[1]:
                return f'no InterfacesRemoved for {pg}: {sig}'
            if pg in managed():
                return 'GetManagedObjects still lists the unassigned workload'
            stray = [m for m in conn.signals if m.member.startswith('Interfaces')]
            return f'unexpected signals {stray}' if stray else None
        self.run_check('AssignWorkload -> InterfacesAdded (with properties), UnassignWorkload '
                       '-> InterfacesRemoved', added_removed)

        def class_change():
            # Issue 26 item 5: Class and Workload properties were registered
            # with no change signal; a workload's class change is announced.
            conn.add_match(f"type='signal',sender='{MEMQOS}',"
                           "interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'")
            conn.signals.clear()
            try:
                self.bcall('AssignWorkload', 'ssttb', 'nginx.service', 'dedicated', 128 * MIB,
                           128 * MIB, 'false')

                def changed(path, key):
                    # The one that has `key`: a tick may announce another
                    # change of the path first (nginx's ReclaimState after an
                    # earlier check placed it again, seen in 1 of 6 runs).
                    sig = conn.wait_signal(lambda m: m.member == 'PropertiesChanged' and
                                           m.path == path and key in m.body[1], 10)
                    return {} if sig is None else {k: v[1] for k, v in sig.body[1].items()}
                got = changed(nginx, 'Class')
                if got.get('Class') != 'dedicated' or got.get('MemoryMin') != 128 * MIB or \
                        got.get('Request') != 128 * MIB:
                    return f'PropertiesChanged of {nginx}: {got}'
                if 'MemoryCurrent' in got or 'Id' in got:
                    return f'a sample or const property was announced: {got}'
                ded = changed('/org/memqos1/class/dedicated', 'Workloads')
                if ded.get('Workloads') != [nginx]:
                    return f'PropertiesChanged of class dedicated: {ded}'
                shared = changed('/org/memqos1/class/shared', 'Workloads')
                if 'Workloads' not in shared or nginx in shared['Workloads']:
                    return f'PropertiesChanged of class shared: {shared}'
                return None
            finally:
                self.bcall('AssignWorkload', 'ssttb', 'nginx.service', 'shared', 256 * MIB, GIB,
                           'true')
        self.run_check('a class change -> PropertiesChanged of the workload (Class, tiers) and '
                       'of both classes (Workloads)', class_change)

        def classes():
            conn.signals.clear()
            path = '/org/memqos1/class/batch'
            self.env.write_config(CONFIG_GOOD + '[Class.batch]\nRank=7\n')
            try:
                self.bcall('Reload')
                sig = conn.wait_signal(lambda m: m.member == 'InterfacesAdded', 10)
                if sig is None or sig.body[0] != path or \
                        sig.body[1].get('org.memqos1.Class', {}).get('Rank') != ('u', 7):
                    return f'no InterfacesAdded for {path} with Rank 7: {sig}'
                if path not in managed():
                    return 'GetManagedObjects lacks the new class'
            finally:
                self.env.write_config(CONFIG_GOOD)
                self.bcall('Reload')
            sig = conn.wait_signal(lambda m: m.member == 'InterfacesRemoved', 10)
            if sig is None or sig.body[0] != path:
                return f'no InterfacesRemoved for {path}: {sig}'
            return None if path not in managed() else 'class still listed'
        self.run_check('Reload adding a class -> InterfacesAdded; removing it -> '
                       'InterfacesRemoved', classes)
        conn.close()

    def error_text(self):
        """Error messages quote what the caller sent, cut to a length; cut
        inside a multi-byte character the string is not UTF-8, sd-bus refused
        to send it, and the caller waited for a reply that never came."""
        u = 'a' + 'ü' * 200
        calls = [('VerifyPlacement', 'tta{sv}', [GIB, 0, {u: ('t', 1)}],
                  'org.memqos1.Error.InvalidArgument'),
                 ('RecordInstance', 'sttb', [u, 0, GIB, True],
                  'org.memqos1.Error.InvalidArgument'),
                 ('AssignWorkload', 'ssttb', [u + '.service', 'shared', 0, GIB, True],
                  'org.memqos1.Error.InvalidUnit'),
                 ('RunWorkload', 'ssttas', [u, 'shared', 0, GIB, ['/bin/true']],
                  'org.memqos1.Error.InvalidUnit'),
                 ('UnassignWorkload', 's', ['x' * 5000], 'org.memqos1.Error.NoSuchWorkload')]

        def replies():
            conn = dbuswire.Connection(self.env.address)
            try:
                for member, sig, args, want in calls:
                    try:
                        m = conn.call(MEMQOS, ROOT, MGR, member, sig, args, timeout=5)
                    except dbuswire.DBusError as e:
                        return f'{member}: no reply ({e})'
                    if m.error_name != want:
                        return f'{member}: {m.error_name}, want {want}'
                    if len(m.body[0].encode()) > 1024:
                        return f'{member}: message of {len(m.body[0].encode())} bytes, max 1024'
            finally:
                conn.close()
            return None
        self.run_check('error messages quoting a long multi-byte argument are cut at a '
                       'character and capped at 1 KiB (every call answered)', replies)

    def flood(self):
        def run():
            ok, report = flood.run_flood(self.env.address, self.env.daemon.pid,
                                         clients=4, calls=500, seed=11,
                                         rss_growth_kib=flood.DEFAULT_RSS_GROWTH_KIB,
                                         out=sys.stdout)
            return None if ok else report
        self.run_check('D-Bus flood (4 clients x 500 calls, root and 65534): no crash, only '
                       'named errors, RSS bounded', run)

    def bad_input(self):
        huge = 64 * self.mem_total + 4096
        cases = [
            ('UnknownClass', ['assign', 'nginx.service', 'gold', '--limit', '1G'],
             ('AssignWorkload', 'ssttb', 'nginx.service', 'gold', 0, GIB, 'true')),
            ('RequestAboveLimit', ['assign', 'nginx.service', 'shared', '--request', '2G',
                                   '--limit', '1G'],
             ('AssignWorkload', 'ssttb', 'nginx.service', 'shared', 2 * GIB, GIB, 'true')),
            ('SizeOutOfRange', ['assign', 'nginx.service', 'shared', '--limit', '0'],
             ('AssignWorkload', 'ssttb', 'nginx.service', 'shared', 0, 0, 'true')),
            ('SizeOutOfRange', ['assign', 'nginx.service', 'shared', '--limit', str(huge)],
             ('AssignWorkload', 'ssttb', 'nginx.service', 'shared', 0, huge, 'true')),
            ('InvalidUnit', ['assign', '../x.service', 'shared', '--limit', '1G'],
             ('AssignWorkload', 'ssttb', '../x.service', 'shared', 0, GIB, 'true')),
            # memqosctl makes "nginx" nginx.service, as systemctl does; the
            # bus call shows memqosd refusing the bare name itself.
            ('InvalidUnit', ['assign', 'nginx.socket', 'shared', '--limit', '1G'],
             ('AssignWorkload', 'ssttb', 'nginx', 'shared', 0, GIB, 'true')),
            ('NoSuchUnit', ['assign', 'unknown1.service', 'shared', '--limit', '1G'],
             ('AssignWorkload', 'ssttb', 'unknown2.service', 'shared', 0, GIB, 'true')),
            ('NoSuchUnit', ['assign', 'ghost.service', 'shared', '--limit', '1G'],
             ('AssignWorkload', 'ssttb', 'ghost.service', 'shared', 0, GIB, 'true')),
            ('NoSuchWorkload', ['unassign', 'nothere.service'],
             ('UnassignWorkload', 's', 'nothere.service')),
            ('InvalidArgument', None,
             ('VerifyPlacement', 'tta{sv}', GIB, GIB, 1, 'bogus', 't', 1)),
            ('InvalidArgument', ['record-instance', '../x', '--max', '1G'],
             ('RecordInstance', 'sttb', '../x', GIB, GIB, 'true')),
            ('InvalidArgument', ['record-instance', '--max', '1G', '--', '-web'],
             ('RecordInstance', 'sttb', '-web', GIB, GIB, 'true')),
            ('InvalidArgument', ['record-instance', 'db9', '--max', '1G', '--min', '2G'],
             ('RecordInstance', 'sttb', 'db9', 2 * GIB, GIB, 'true')),
            ('SizeOutOfRange', ['record-instance', 'db9', '--max', '0'],
             ('RecordInstance', 'sttb', 'db9', 0, 0, 'true')),
            ('SizeOutOfRange', None,
             ('RecordInstance', 'sttb', 'db9', 0, UINT64_MAX, 'true')),
            ('NoSuchInstance', ['forget-instance', 'nothere'],
             ('ForgetInstance', 's', 'nothere')),
            ('InvalidArgument', None,
             ('VerifyPlacement', 'tta{sv}', GIB, GIB, 1, 'refuse_soft', 's', 'yes')),
            ('InvalidArgument', None,
             ('VerifyPlacement', 'tta{sv}', GIB, GIB, 1, 'instance', 't', 1)),
            ('InvalidArgument', None,
             ('VerifyPlacement', 'tta{sv}', GIB, GIB, 1, 'failover_reserve', 'b', 'true')),
            ('InvalidArgument', None,
             ('VerifyPlacement', 'tta{sv}', GIB, GIB, 1, 'instance', 's', '../x')),
            ('UnknownClass', ['verify-placement', '1G', '--class', 'nosuch'],
             ('VerifyPlacement', 'tta{sv}', GIB, GIB, 1, 'class', 's', 'nosuch')),
            ('InvalidArgument', None,
             ('VerifyPlacement', 'tta{sv}', GIB, GIB, 1, 'class', 't', 1)),
        ]
        for name, cargs, bargs in cases:
            label = ' '.join(str(a) for a in (cargs or bargs[2:]))

            def one(name=name, cargs=cargs, bargs=bargs):
                before_calls = len(self.effect_calls())
                before_files = self.state_files()
                before_instances = self.instances_list()
                r = self.busctl('call', MEMQOS, ROOT, MGR, bargs[0], *[str(a) for a in bargs[1:]])
                if r.returncode == 0:
                    return f'busctl succeeded: {r.stdout!r}'
                # busctl prints the message only; ask memqosctl for the name
                if cargs is not None:
                    r = self.memqosctl(*cargs)
                    want = f'org.memqos1.Error.{name}: '
                    # memqosctl prefixes its messages with "memqosctl: "
                    # memqosctl's exit status: 6 not found, 64 a refused argument
                    code = 6 if name.startswith('NoSuch') else 64
                    if r.returncode != code or not r.stderr.removeprefix('memqosctl: ') \
                            .startswith(want):
                        return f'memqosctl: exit {r.returncode} {r.stderr.strip()!r}, ' \
                               f'want "{want}..." exit {code}'
                else:
                    # busctl prints no error name: the same call through dbus-python
                    got = self.python_error_name(bargs)
                    if got != f'org.memqos1.Error.{name}':
                        return f'error {got}, want org.memqos1.Error.{name}'
                time.sleep(0.2)
                if len(self.effect_calls()) != before_calls:
                    return f'new SetUnitProperties calls: {self.effect_calls()[before_calls:]}'
                if self.state_files() != before_files:
                    return f'new state files: {self.state_files() - before_files}'
                if self.instances_list() != before_instances:
                    return f'instance record changed: {self.instances_list()}'
                return None
            self.run_check(f'bad input {name} ({label})', one)

    def python_error_name(self, bargs):
        """Calls (member, busctl signature, args...) as root through dbus-python; the
        D-Bus error name, or 'OK'. Handles the signatures bad_input() uses."""
        import dbus  # pylint: disable=import-outside-toplevel
        member, sig, args = bargs[0], bargs[1], list(bargs[2:])
        if sig == 'tta{sv}':  # memory, min, 1, key, type, value
            key, vtype, value = args[3], args[4], args[5]
            typed = {'t': lambda v: dbus.UInt64(int(v)), 's': dbus.String,
                     'b': lambda v: dbus.Boolean(str(v) == 'true')}[vtype](value)
            call_args = [dbus.UInt64(args[0]), dbus.UInt64(args[1]),
                         dbus.Dictionary({key: typed}, signature='sv')]
        elif sig == 'sttb':
            call_args = [dbus.String(args[0]), dbus.UInt64(args[1]), dbus.UInt64(args[2]),
                         dbus.Boolean(str(args[3]) == 'true')]
        else:
            call_args = [dbus.String(a) for a in args]
        try:
            getattr(self.env.conn.get_object(MEMQOS, ROOT), member)(*call_args,
                                                                    dbus_interface=MGR)
            return 'OK'
        except dbus.exceptions.DBusException as e:
            return e.get_dbus_name()

    def systemd_reloading(self):
        def reloading():
            self.env.clear_calls()
            self.env.emit('Reloading', 'b', [False])
            calls = self.wait_for(lambda: self.set_calls('nginx.service'), timeout=5)
            if not calls or calls[-1][2].get('MemoryLow') != 268435456:
                return f'no SetUnitProperties(nginx.service) after Reloading(false): {calls}'
            return None
        self.run_check('systemd Reloading(false) -> tiers re-sent', reloading)

    def persistence(self):
        def restart():
            r = self.memqosctl('assign', 'postgres.service', 'shared', '--request', '128M',
                               '--limit', '512M', '--runtime')
            if r.returncode != 0:
                return f'assign --runtime: {r.stderr}'
            files = self.state_files()
            self.env.kill_daemon(signal.SIGKILL)
            self.env.clear_calls()
            self.env.start_daemon()
            names = sorted(x[0] for x in self.bcall('ListWorkloads')[0])
            if names != ['nginx.service', 'postgres.service']:
                return f'after restart ListWorkloads {names} (state files {sorted(files)})'
            c1 = self.wait_for(lambda: self.set_calls('nginx.service'))
            c2 = self.wait_for(lambda: self.set_calls('postgres.service'))
            if not c1 or c1[-1][2].get('MemoryHigh') != 993210368:
                return f'nginx.service not re-applied: {c1}'
            if not c2:
                return 'postgres.service (runtime) not re-applied'
            p = self.bprop('Persistent', path='/org/memqos1/workload/postgres_2eservice',
                           iface='org.memqos1.Workload')
            if p is not False:
                return f'postgres.service Persistent={p}'
            return None
        self.run_check('SIGKILL + restart: persist=true (state dir) and persist=false '
                       '(runtime dir) assignments back, tiers re-sent', restart)

        def instances_back():
            got = self.instances_list()
            want = [('db1.example.com', 2 * GIB, 2 * GIB, False),
                    ('web1.example.com', 512 * MIB, GIB, True)]
            if got != want:
                return f'after restart ListInstances {got}, want {want}'
            n = self.placement(GIB)[2]
            if n['instances'] != self.n0 + GIB:
                return f"after restart numbers instances {n['instances']}, want {self.n0} + 1G"
            r = self.memqosctl('instances')
            if r.returncode != 0 or 'web1.example.com' not in r.stdout:
                return f'memqosctl instances: exit {r.returncode} {r.stdout!r}'
            return None
        self.run_check('SIGKILL + restart: the instance record is back and counted', instances_back)


    def no_activation(self):
        """memqosctl and the completion never start memqosd by D-Bus activation
        (issue 24 item 7): with an activation file for org.memqos1 on the bus
        (its Exec= appends to a marker file and fails), memqosd stopped, a query
        says "not running", exits 4, and nothing was spawned. busctl with its
        default --auto-start=yes proves that the bed does activate."""
        if self.env.daemon is not None and self.env.daemon.poll() is None:
            self.env.kill_daemon(signal.SIGTERM)
        service_dir = os.path.join(self.env.tmp, 'activation')
        os.makedirs(service_dir, exist_ok=True)
        marker = os.path.join(self.env.tmp, 'activated')
        script = os.path.join(service_dir, 'activate')
        with open(script, 'w', encoding='utf-8') as f:
            f.write(f'#!/bin/sh\necho "$$" >>{marker}\nexit 1\n')
        os.chmod(script, 0o755)
        with open(os.path.join(service_dir, 'org.memqos1.service'), 'w', encoding='utf-8') as f:
            f.write(f'[D-BUS Service]\nName=org.memqos1\nExec={script}\nUser=root\n')
        self.env.set_activation(service_dir)

        def activations():
            try:
                with open(marker, encoding='utf-8') as f:
                    return len(f.read().split())
            except FileNotFoundError:
                return 0

        def forget_activations():
            if os.path.exists(marker):
                os.unlink(marker)
        try:
            def bed_activates():
                if self.env.conn.name_has_owner(MEMQOS):
                    return 'org.memqos1 has an owner: memqosd did not stop'
                # The bus answers only after the activated program exited.
                r = self.busctl('call', MEMQOS, ROOT, 'org.freedesktop.DBus.Peer', 'Ping',
                                json_out=False)
                if activations() != 1:
                    return (f'busctl (auto-start) did not activate: {activations()} runs, '
                            f'exit {r.returncode} {r.stderr.strip()!r}')
                os.unlink(marker)
                return None
            if not self.run_check('bed: busctl with auto-start activates org.memqos1',
                                  bed_activates):
                return

            for user in (None, 'nobody'):
                for args in (['status'], ['workloads'], ['verify-placement', '1G']):
                    def no_start(args=args, user=user):
                        forget_activations()
                        r = self.memqosctl(*args, user=user)
                        if activations():
                            return f'memqosctl {args} activated memqosd ({activations()} runs)'
                        if r.returncode != 4:
                            return f'exit {r.returncode}, want 4: {r.stderr!r}'
                        if 'memqosd is not running' not in r.stderr or \
                                'does not start it' not in r.stderr:
                            return f'stderr {r.stderr!r}'
                        return None
                    self.run_check(f'memqosctl {" ".join(args)} ({user or "root"}) with memqosd '
                                   'stopped: exit 4 "not running", no activation', no_start)

            def completion_no_start():
                forget_activations()
                script_path = os.path.join(self.src, 'completions', 'memqosctl')
                # The command word is memqosctl's path: the completion runs
                # that program (completions/memqosctl).
                prog = (f'source {script_path}\n'
                        f'COMP_WORDS=({self.ctl} unassign "")\nCOMP_CWORD=2\n'
                        f'COMP_LINE="{self.ctl} unassign "\nCOMP_POINT=${{#COMP_LINE}}\n'
                        'spec=$(complete -p memqosctl) || exit 90\n'
                        'fn=${spec#*-F }; fn=${fn%% *}\n'
                        f'"$fn" {self.ctl} "" unassign\n'
                        'printf "%s\\n" "${COMPREPLY[@]}"\n')
                env = dict(os.environ)
                env['MEMQOS_BUS_ADDRESS'] = self.env.address
                r = subprocess.run(NOBODY + ['bash', '--norc', '--noprofile', '-c', prog],
                                   capture_output=True, text=True, timeout=15, env=env,
                                   check=False)
                if r.returncode != 0:
                    return f'bash exit {r.returncode}: {r.stderr!r}'
                if activations():
                    return f'the completion activated memqosd ({activations()} runs)'
                if r.stdout.strip():
                    return f'offered {r.stdout!r} with memqosd stopped'
                return None
            self.run_check('completion of "memqosctl unassign " with memqosd stopped: '
                           'no activation', completion_no_start)
        finally:
            self.env.set_activation(None)

    def stop_gives_back(self):
        slice_ = 'memqos-reclaimed.slice'

        def capped():
            return [c for c in self.set_calls(slice_)
                    if c[2].get('MemoryHigh', UINT64_MAX) != UINT64_MAX]

        def gives_back():
            if not self.wait_for(capped):
                return f'no guard cap on {slice_} to give back: {self.set_calls(slice_)}'
            self.env.clear_calls()
            self.env.kill_daemon(signal.SIGTERM)
            if self.env.daemon.poll() is None:
                return 'memqosd still runs after SIGTERM'
            back = [c for c in self.set_calls(slice_) if c[2].get('MemoryHigh') == UINT64_MAX]
            if not back:
                return f'SIGTERM: no MemoryHigh=infinity for {slice_}: {self.set_calls()}'
            return None
        self.run_check('SIGTERM gives the guard cap back (MemoryHigh=infinity) before exiting',
                       gives_back)

        def stuck_pid1():
            # A PID 1 that answers nothing (the mock stopped): memqosd still
            # ends, after its 10 s for the give-back, within TimeoutStopSec=15s.
            self.env.start_daemon()
            if not self.wait_for(capped, timeout=10):
                return f'no guard cap on {slice_} after the restart'
            os.kill(self.env.mock.pid, signal.SIGSTOP)
            try:
                t0 = time.monotonic()
                self.env.daemon.send_signal(signal.SIGTERM)
                try:
                    rc = self.env.daemon.wait(timeout=14)
                except subprocess.TimeoutExpired:
                    self.env.daemon.kill()
                    self.env.daemon.wait()
                    return 'memqosd did not stop within 14 s of SIGTERM while PID 1 hung'
                took = time.monotonic() - t0
            finally:
                os.kill(self.env.mock.pid, signal.SIGCONT)
            # Under ASan, LeakSanitizer makes any SIGTERM stop exit 1: the
            # sd-bus connection (and its match tree) is reported leaked at
            # exit, 8482 bytes in 93 libsystemd allocations, with the old
            # immediate stop as well (checked 2026-11-27). That defect is
            # not fixed yet (see doc/TESTING.md); this check is about the
            # stop itself, so that one report is let through, and nothing
            # else.
            err = self.env.daemon_stderr()
            lsan_only = (rc == 1 and 'ERROR: LeakSanitizer: detected memory leaks' in err
                         and 'ERROR: AddressSanitizer:' not in err and 'runtime error' not in err)
            if rc != 0 and not lsan_only:
                return f'memqosd exited {rc}'
            if took < 9:
                return f'stopped after {took:.1f} s: it did not wait for the give-back'
            if 'did not answer the give-back' not in self.env.daemon_stderr():
                return 'no warning that the give-back was not answered'
            return None
        self.run_check('SIGTERM with PID 1 not answering: stops after 10 s, says so', stuck_pid1)


# ---- a caller that changes its uids after connecting --------------------------

def call_as(address, connect_uids, call_uids, member, sig='', args=(), repeat=1):
    """Forks; the child takes uids connect_uids (real, effective, saved),
    connects to the bus (which records its effective uid), takes call_uids
    and calls org.memqos1.Manager.MEMBER, `repeat` times on that one
    connection. Returns {'error': name or None, 'message': str, 'proc_uid':
    the Uid: line of its /proc/PID/status at the call} of the first call,
    and 'all': [[error, message], ...] of every call."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        out = {}
        try:
            os.close(rfd)
            os.setresuid(*connect_uids)
            conn = dbuswire.Connection(address)
            os.setresuid(*call_uids)
            with open('/proc/self/status', encoding='utf-8') as f:
                out['proc_uid'] = next(l for l in f if l.startswith('Uid:'))[4:].strip()
            out['all'] = []
            for _ in range(repeat):
                m = conn.call(MEMQOS, ROOT, MGR, member, sig, args, timeout=15)
                out['all'].append([m.error_name,
                                   str(m.body[0]) if m.error_name and m.body else ''])
            out['error'], out['message'] = out['all'][0]
        except Exception as e:  # pylint: disable=broad-except
            out['error'] = f'client failed: {type(e).__name__}: {e}'
            out['message'] = ''
        os.write(wfd, json.dumps(out).encode())
        os._exit(0)  # pylint: disable=protected-access
    os.close(wfd)
    data = b''
    with os.fdopen(rfd, 'rb') as f:
        data = f.read()
    os.waitpid(pid, 0)
    got = json.loads(data or b'{}')
    got.setdefault('proc_uid', '')
    got.setdefault('error', 'client died')
    got.setdefault('message', '')
    got.setdefault('all', [])
    return got


# ---- introspection comparison -----------------------------------------------

def interface_members(root, iface):
    for node in root.iter('interface'):
        if node.get('name') == iface:
            methods = {m.get('name'): [(a.get('name'), a.get('type'), a.get('direction', 'in'))
                                       for a in m.findall('arg')]
                       for m in node.findall('method')}
            signals = {s.get('name'): [(a.get('name'), a.get('type')) for a in s.findall('arg')]
                       for s in node.findall('signal')}
            # EmitsChangedSignal: absent means "true" (the D-Bus default;
            # sd-bus writes the annotation only for const, invalidates, false).
            props = {p.get('name'): (p.get('type'), p.get('access'), next(
                (a.get('value') for a in p.findall('annotation')
                 if a.get('name') == 'org.freedesktop.DBus.Property.EmitsChangedSignal'), 'true'))
                     for p in node.findall('property')}
            return methods, signals, props
    return None


def contract_members(src, short, iface):
    path = os.path.join(src, 'dbus', f'org.memqos1.{short}.xml')
    return interface_members(ET.parse(path).getroot(), iface)


def compare_interface(src, short, iface, live_xml):
    want = contract_members(src, short, iface)
    got = interface_members(ET.fromstring(live_xml), iface)
    if got is None:
        return f'live object has no interface {iface}'
    problems = []
    for kind, w, g in zip(('method', 'signal', 'property'), want, got):
        for name in sorted(set(w) | set(g)):
            if name not in g:
                problems.append(f'{kind} {name} missing')
            elif name not in w:
                problems.append(f'{kind} {name} not in the contract')
            elif w[name] != g[name]:
                problems.append(f'{kind} {name}: contract {w[name]}, live {g[name]}')
    return '; '.join(problems) if problems else None


def main(argv):
    if len(argv) != 4:
        print(f'usage: {argv[0]} MEMQOSD MEMQOSCTL SOURCE_DIR', file=sys.stderr)
        return 2
    memqosd, memqosctl, src = (os.path.abspath(a) for a in argv[1:])

    def on_alarm(_s, _f):
        raise HardTimeout()

    def on_term(signum, _f):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGALRM, on_alarm)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    signal.alarm(HARD_TIMEOUT_S)

    tmp = tempfile.mkdtemp(prefix='memqos-bus-suite-')
    env = busenv.BusEnv(tmp, src, memqosd)
    suite = Suite(env, memqosctl, src)
    status = 1
    try:
        env.start_bus()
        env.make_fixtures(CONFIG_GOOD)
        env.start_daemon()
        suite.check('memqosd starts and owns org.memqos1', True)
        suite.run()
        status = 0 if suite.failed == 0 else 1
    except HardTimeout:
        suite.check('hard timeout', False, f'{HARD_TIMEOUT_S} s')
        status = 124
    except Exception as e:  # pylint: disable=broad-except
        suite.check('setup', False, f'{type(e).__name__}: {e}')
        status = 1
    finally:
        signal.alarm(0)
        if suite.failed:
            env.dump_logs()
        env.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f'{suite.passed} passed, {suite.failed} failed')
    return status if suite.failed == 0 else (status or 1)


if __name__ == '__main__':
    sys.exit(main(sys.argv))

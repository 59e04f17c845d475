#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""memqosctl against a fake memqosd on a private bus.

`memqosctl top` also runs in a pseudo-terminal (python's pty module), where it
must clear the screen before each frame, and in batch mode, where it must not.

Starts its own dbus-daemon (killed by PID at exit), runs python-dbusmock on it
as org.memqos1 with canned properties, objects and method replies, then runs
the built memqosctl with --bus-address and checks output, JSON and exit codes:
0 success, 1 daemon error, 2 hard verdict / error finding, 3 unreachable,
5 access denied, 6 not found, 64 usage or a refused argument. Exit 77 (meson: skipped) when dbus-daemon or python3-dbusmock is
missing.

Usage: run_ctl_bus_test.py PATH/TO/memqosctl
"""

import errno
import fcntl
import json
import os
import pty
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
import traceback

HARD_TIMEOUT_S = 100  # meson's own timeout is 120 s
CALL_TIMEOUT_S = 20

GIB = 1 << 30
MIB = 1 << 20
NO_LIMIT = (1 << 64) - 1

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


class HardTimeout(Exception):
    pass


def on_alarm(_signum, _frame):
    raise HardTimeout(f'bus test exceeded {HARD_TIMEOUT_S} s')


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = []

    def check(self, cond, what, detail=''):
        if cond:
            self.passed += 1
        else:
            self.failed.append(what)
            print(f'FAIL: {what}' + (f'\n  {detail}' if detail else ''), flush=True)
        return cond


class Ctl:
    """Runs memqosctl against the private bus."""

    def __init__(self, path, address):
        self.path = path
        self.address = address

    def env(self, extra=None):
        env = dict(os.environ)
        env.pop('MEMQOS_BUS_ADDRESS', None)
        env['LC_ALL'] = 'C.UTF-8'
        env['TZ'] = 'UTC'
        for key, value in (extra or {}).items():
            if value is None:  # None: unset it
                env.pop(key, None)
            else:
                env[key] = value
        return env

    def run(self, *args, address=True, env=None):
        cmd = [self.path]
        if address:
            cmd += ['--bus-address', self.address]
        cmd += list(args)
        p = subprocess.run(cmd, capture_output=True, timeout=CALL_TIMEOUT_S, env=self.env(env),
                           check=False)
        return p.returncode, p.stdout.decode('utf-8'), p.stderr.decode('utf-8')


def wait_for_name(bus, name, present=True, timeout=10.0):
    import dbus  # pylint: disable=import-outside-toplevel
    deadline = time.monotonic() + timeout
    dbus_iface = dbus.Interface(bus.get_object('org.freedesktop.DBus', '/org/freedesktop/DBus'),
                                'org.freedesktop.DBus')
    while time.monotonic() < deadline:
        if bool(dbus_iface.NameHasOwner(name)) == present:
            return True
        time.sleep(0.05)
    return False


def read_line(stream, timeout):
    """One line from a pipe within `timeout` seconds, '' on timeout or EOF."""
    deadline = time.monotonic() + timeout
    buf = b''
    fd = stream.fileno()
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        ch = os.read(fd, 1)
        if not ch:
            break
        buf += ch
        if ch == b'\n':
            break
    return buf.decode('utf-8')


def setup_mock(bus):
    """Canned org.memqos1: Manager properties and methods, 4 classes, 2 workloads."""
    import dbus  # pylint: disable=import-outside-toplevel
    import dbusmock  # pylint: disable=import-outside-toplevel

    mock = dbus.Interface(bus.get_object('org.memqos1', '/org/memqos1'), dbusmock.MOCK_IFACE)
    mock.AddProperties('org.memqos1.Manager', {
        'Version': dbus.String('0.1.0-mock'),
        'MemoryTotal': dbus.UInt64(16 * GIB),
        'MemoryAvailable': dbus.UInt64(9 * GIB + GIB // 2),
        'SwapTotal': dbus.UInt64(4 * GIB),
        'SwapFree': dbus.UInt64(3 * GIB),
        'NodeReserved': dbus.UInt64(GIB),
        'MemoryRatio': dbus.Double(1.5),
        'PressureLevel': dbus.UInt32(1),
        'AdmissionOpen': dbus.Boolean(False),
        'DryRun': dbus.Boolean(True),
        'ReclaimedAllocatable': dbus.UInt64(2 * GIB + GIB // 2),
        'MemoryPressureSome': dbus.Double(2.5),
        'MemoryPressureFull': dbus.Double(0.75),
        'UpInstancesMaxMemory': dbus.UInt64(GIB),
    })

    classes = [
        # name, rank, protection, factor, killable, current, workloads, swap, psi
        ('system', 0, 'min', 0.0, False, 512 * MIB, [], 0, 0.0),
        ('dedicated', 1, 'min', 0.0, False, 2 * GIB, ['vm_3aweb1'], 0, 0.5),
        ('shared', 2, 'low', 0.9, True, 3 * GIB + GIB // 4, ['nginx_2eservice'], 64 * MIB, 3.5),
        ('reclaimed', 3, 'none', 0.9, True, 0, [], 0, 0.0),
    ]
    for name, rank, protection, factor, killable, current, workloads, swap, psi in classes:
        mock.AddObject(f'/org/memqos1/class/{name}', 'org.memqos1.Class', {
            'Name': dbus.String(name),
            'Rank': dbus.UInt32(rank),
            'Protection': dbus.String(protection),
            'ThrottlingFactor': dbus.Double(factor),
            'Killable': dbus.Boolean(killable),
            'Slice': dbus.String(f'memqos-{name}.slice'),
            'Workloads': dbus.Array([dbus.ObjectPath(f'/org/memqos1/workload/{w}')
                                     for w in workloads], signature='o'),
            'MemoryCurrent': dbus.UInt64(current),
            'SwapCurrent': dbus.UInt64(swap),
            'MemoryPressure': dbus.Double(psi),
        }, [])

    workloads = [
        # id, kind, class, unit, request, limit, min, low, high, max, swapmax, current, persist
        ('nginx.service', 'service', 'shared', 'nginx.service \u2192 "web" caf\u00e9\\\t',
         256 * MIB, GIB, 0, 256 * MIB, 993210368, GIB, NO_LIMIT, 300 * MIB, True),
        ('vm:web1', 'vm', 'dedicated', 'machine-qemu\\x2d1\\x2dweb1.scope',
         2 * GIB, 2 * GIB, 2 * GIB, 0, NO_LIMIT, 2 * GIB, 0, 2 * GIB - 1, False),
    ]
    for (wid, kind, cls, unit, request, limit, mmin, low, high, mmax, swapmax, current,
         persist) in workloads:
        path = '/org/memqos1/workload/' + ''.join(
            c if c.isalnum() else f'_{ord(c):02x}' for c in wid)
        mock.AddObject(path, 'org.memqos1.Workload', {
            'Id': dbus.String(wid), 'Kind': dbus.String(kind), 'Class': dbus.String(cls),
            'Unit': dbus.String(unit), 'Request': dbus.UInt64(request),
            'Limit': dbus.UInt64(limit), 'MemoryMin': dbus.UInt64(mmin),
            'MemoryLow': dbus.UInt64(low), 'MemoryHigh': dbus.UInt64(high),
            'MemoryMax': dbus.UInt64(mmax), 'MemorySwapMax': dbus.UInt64(swapmax),
            'MemoryCurrent': dbus.UInt64(current), 'SwapCurrent': dbus.UInt64(0),
            'MemoryPressure': dbus.Double(3.25 if cls == 'shared' else 0.0),
            'Persistent': dbus.Boolean(persist),
            'ReclaimedBytes': dbus.UInt64(12 * MIB if cls == 'shared' else 0),
            'ReclaimStall': dbus.Double(0.02 if cls == 'shared' else 0.0),
            'ReclaimState': dbus.String('reclaiming' if cls == 'shared' else 'off'),
            'Source': dbus.String('api' if cls == 'shared' else 'metadata'),
            'BalloonActual': dbus.UInt64(2 * GIB if kind == 'vm' else 0),
            'BalloonTarget': dbus.UInt64(0),
        }, [])

    unknown_class = (
        'if args[1] not in ("system", "dedicated", "shared", "reclaimed"):\n'
        '    raise dbus.exceptions.DBusException(\n'
        '        "class \'%s\' does not exist (known: system, dedicated, shared, reclaimed)"'
        ' % args[1], name="org.memqos1.Error.UnknownClass")\n')
    mock.AddMethods('org.memqos1.Manager', [
        ('ListClasses', '', 'a(so)',
         'ret = [(n, "/org/memqos1/class/" + n) for n in '
         '("system", "dedicated", "shared", "reclaimed")]'),
        ('ListWorkloads', '', 'a(ssso)',
         'ret = [("nginx.service", "service", "shared", '
         '"/org/memqos1/workload/nginx_2eservice"), '
         '("vm:web1", "vm", "dedicated", "/org/memqos1/workload/vm_3aweb1")]'),
        ('AssignWorkload', 'ssttb', 'o',
         unknown_class + 'ret = "/org/memqos1/workload/nginx_2eservice"'),
        ('UnassignWorkload', 's', '',
         'if args[0] != "nginx.service":\n'
         '    raise dbus.exceptions.DBusException("workload \'%s\' is not managed by memqos"'
         ' % args[0], name="org.memqos1.Error.NoSuchWorkload")\n'),
        ('RunWorkload', 'ssttas', 'o', unknown_class + 'ret = "/org/memqos1/workload/batch"'),
        ('Reclaim', 'st', 't',
         'if args[0] != "nginx.service":\n'
         '    raise dbus.exceptions.DBusException("no workload \'%s\'"'
         ' % args[0], name="org.memqos1.Error.NoSuchWorkload")\n'
         'ret = args[1] // 2'),
        ('VerifyPlacement', 'tta{sv}', 'ssa{st}',
         'm = args[0]\n'
         'reserved = int(args[2].get("failover_reserve", 0))\n'
         'nums = {"available": 14 * 2**30, "instances": 4 * 2**30, "reserved": reserved,'
         ' "memory": m, "ratio_permille": 1000}\n'
         'if m <= 4 * 2**30: ret = ("fits", "fits: 8G of 14G", nums)\n'
         'elif m <= 8 * 2**30: ret = ("soft", "fits only without the failover reserve", nums)\n'
         'else: ret = ("hard", "does not fit: 4G + %d > 14G x 1.0" % m, nums)\n'),
        ('Verify', '', 'a(sss)',
         'ret = [("warning", "swap-short", "swap 4G < (1.5 - 1) x 14G"),'
         ' ("info", "ratio", "memory ratio 1.5")]'),
        ('Reload', '', 'as', 'ret = dbus.Array([], signature="s")'),
        ('ListInstances', '', 'a(sttb)',
         'ret = [("db1.example.com", dbus.UInt64(2 * 2**30), dbus.UInt64(4 * 2**30), False),'
         ' ("web1", dbus.UInt64(512 * 2**20), dbus.UInt64(2**30), True)]'),
        ('RecordInstance', 'sttb', '',
         'if args[2] == 0:\n'
         '    raise dbus.exceptions.DBusException("max_memory of instance %s must be above 0"'
         ' % args[0], name="org.memqos1.Error.SizeOutOfRange")\n'),
        ('ForgetInstance', 's', '',
         'if args[0] != "web1":\n'
         '    raise dbus.exceptions.DBusException("instance \'%s\' is not in this node\'s record"'
         ' % args[0], name="org.memqos1.Error.NoSuchInstance")\n'),
    ])
    return mock


def test_not_running(r, ctl):
    rc, out, err = ctl.run('status')
    r.check(rc == 4, 'not running: exit 4', f'rc={rc} err={err!r}')
    r.check('memqosd is not running' in err and 'systemctl status memqosd' in err,
            'not running: says which and what to do', err)
    r.check(out == '', 'not running: nothing on stdout', out)
    rc, out, err = ctl.run('top', '--iterations', '1')
    r.check(rc == 4 and 'memqosd is not running' in err and out == '',
            'top, not running: exit 4, nothing on stdout', f'rc={rc} out={out!r} err={err!r}')


def test_unreachable_and_usage(r, ctl, tmp):
    rc, _, err = ctl.run('--bus-address', f'unix:path={tmp}/no-such-socket', 'status',
                         address=False)
    r.check(rc == 3, 'bogus address: exit 3', f'rc={rc} err={err!r}')
    r.check(err.startswith('memqosctl: cannot connect to the bus at'), 'bogus address: message',
            err)
    rc, _, err = ctl.run('status', address=False,
                         env={'MEMQOS_BUS_ADDRESS': f'unix:path={tmp}/nope',
                              'DBUS_SYSTEM_BUS_ADDRESS': f'unix:path={tmp}/nope'})
    r.check(rc == 3 and f'{tmp}/nope' in err, '$MEMQOS_BUS_ADDRESS is used', err)

    for args, needle in [(['bogus'], "unknown command 'bogus'"),
                         (['assign'], "'assign' needs ID and CLASS"),
                         (['assign', 'a.service', 'shared', '--request', '12Q'], "bad size '12Q'"),
                         (['verify-placement'], 'needs MEMORY'),
                         (['record-instance', 'x'], 'needs --max SIZE'),
                         (['forget-instance'], "'forget-instance' needs NAME"),
                         (['status', '--frobnicate'], "unknown option '--frobnicate'"),
                         (['top', '-x'], "unknown option '-x' for 'top'"),
                         (['assign', 'a.service', 'shared', '--limit'],
                          "option '--limit' needs a value"),
                         (['top', '-d'], "option '-d' needs a value"),
                         ([], 'no command given')]:
        rc, out, err = ctl.run(*args)
        r.check(rc == 64, f'usage {args}: exit 64', f'rc={rc} err={err!r}')
        r.check(needle in err and "Try 'memqosctl --help'" in err, f'usage {args}: message', err)
        r.check(out == '', f'usage {args}: nothing on stdout', out)

    rc, out, _ = ctl.run('--help', address=False)
    r.check(rc == 0 and 'Exit status:' in out and '64' in out, '--help lists exit codes', out)
    rc, out, _ = ctl.run('verify-placement', '--help', address=False)
    r.check(rc == 0 and '--failover-reserve' in out and '--refuse-soft' in out, 'COMMAND --help',
            out)
    rc, out, _ = ctl.run('record-instance', '--help', address=False)
    r.check(rc == 0 and 'record-instance NAME --max SIZE' in out, 'record-instance --help', out)
    rc, out, _ = ctl.run('--version', address=False)
    r.check(rc == 0 and out.startswith('memqosctl '), '--version', out)


def test_status(r, ctl, mock):
    rc, out, err = ctl.run('status')
    r.check(rc == 0, 'status: exit 0', f'rc={rc} err={err!r}')
    for needle in ['Version:           0.1.0-mock', 'Memory total:      16G',
                   'Memory available:  9.5G', 'Swap total:        4G', 'Swap free:         3G',
                   'Node reserved:     1G', 'Memory ratio:      1.5',
                   'Pressure level:    1 (admission-closed)', 'Admission:         closed',
                   'Dry run:           yes', 'Best-effort room:  2.5G', 'Classes:           4',
                   'Workloads:         2']:
        r.check(needle in out, f'status shows {needle!r}', out)

    rc, out, err = ctl.run('--json', 'status')
    r.check(rc == 0, 'status --json: exit 0', err)
    try:
        doc = json.loads(out)
    except ValueError as e:
        r.check(False, 'status --json parses', f'{e}: {out!r}')
        return
    expected = {'Version': '0.1.0-mock', 'MemoryTotal': 16 * GIB,
                'MemoryAvailable': 9 * GIB + GIB // 2, 'SwapTotal': 4 * GIB,
                'SwapFree': 3 * GIB, 'NodeReserved': GIB, 'MemoryRatio': 1.5,
                'PressureLevel': 1, 'PressureLevelName': 'admission-closed',
                'AdmissionOpen': False, 'DryRun': True, 'ReclaimedAllocatable': 2 * GIB + GIB // 2,
                'MemoryPressureSome': 2.5, 'MemoryPressureFull': 0.75,
                'UpInstancesMaxMemory': GIB, 'ClassCount': 4, 'WorkloadCount': 2}
    for key, value in expected.items():
        r.check(doc.get(key) == value, f'status --json {key} == {value!r}', repr(doc.get(key)))
    r.check(doc.get('instances') == [
        {'name': 'db1.example.com', 'min_memory': 2 * GIB, 'max_memory': 4 * GIB, 'up': False},
        {'name': 'web1', 'min_memory': 512 * MIB, 'max_memory': GIB, 'up': True}],
        'status --json instances', repr(doc.get('instances')))

    rc, out, err = ctl.run('status')
    lines = out.splitlines()
    try:
        at = lines.index('Workloads:         2')
    except ValueError:
        at = -1
    r.check(at >= 0 and lines[at + 1:] == [
        '',
        'NAME              MIN  MAX  STATE',
        'db1.example.com    2G   4G  down',
        'web1             512M   1G  up',
        'Max memory of up instances: 1G (1 of 2 up)'],
        'status: instance table and the max memory of the up ones, after the rest', out)

    # The max memory is memqosd's UpInstancesMaxMemory, not a sum memqosctl makes.
    import dbus  # pylint: disable=import-outside-toplevel
    mock.UpdateProperties('org.memqos1.Manager', {'UpInstancesMaxMemory': dbus.UInt64(3 * GIB)})
    rc, out, err = ctl.run('status')
    r.check(rc == 0 and out.endswith('\nMax memory of up instances: 3G (1 of 2 up)\n'),
            'status prints UpInstancesMaxMemory as memqosd says it', f'rc={rc} {out!r} {err!r}')
    mock.UpdateProperties('org.memqos1.Manager', {'UpInstancesMaxMemory': dbus.UInt64(GIB)})


def test_status_id_and_show(r, ctl):
    rc, out, err = ctl.run('status', 'nginx')
    lines = out.splitlines()
    r.check(rc == 0 and lines[:1] == ['nginx.service - service managed by memqos'],
            'status nginx: nginx.service, a header line', f'rc={rc} out={out!r} err={err!r}')
    for needle in ['Class:    shared (rank 2, protection low, killable)',
                   'Source:   api, persistent',
                   'Request:  256M', 'Limit:    1G',
                   'Tiers:    min 0, low 256M, high 947.2M, max 1G, swap max max',
                   'Memory:   300M (swap 0)', 'PSI:      3.25% (memory.pressure some avg10)',
                   'Reclaim:  reclaiming, 12M reclaimed, stall 0.02%']:
        r.check(needle in lines, f'status nginx shows {needle!r}', out)
    r.check('Balloon:' not in out, 'status of a service: no balloon line', out)
    # No journald here: one line saying so, not an error.
    r.check(lines[-1:] in (['No journal lines about nginx.service.'],
                           ['No journal lines about nginx.service readable by this user (root '
                            'and the groups systemd-journal and adm can read memqosd\'s).'])
            or (lines[-1:] and lines[-1].startswith('Journal not readable')),
            'status nginx: the journal in one line', out)
    r.check(err == '', 'status nginx: nothing on stderr', err)

    rc, out, err = ctl.run('status', 'vm:web1')
    r.check(rc == 0 and 'Balloon:  actual 2G, target not moved by memqos' in out.splitlines()
            and 'Class:    dedicated (rank 1, protection min, not killable)' in out.splitlines(),
            'status vm:web1: balloon and class', f'rc={rc} out={out!r} err={err!r}')

    rc, out, err = ctl.run('--json', 'status', 'nginx.service')
    doc = json.loads(out) if rc == 0 else {}
    r.check(doc.get('Workload', {}).get('Id') == 'nginx.service'
            and doc['Workload'].get('ObjectPath') == '/org/memqos1/workload/nginx_2eservice'
            and doc.get('Class', {}).get('Rank') == 2 and doc.get('Journal') == []
            and isinstance(doc.get('JournalNote'), str),
            'status ID --json: Workload, Class, Journal, JournalNote', f'rc={rc} {out!r}')

    for args in (['status', 'nope'], ['show', 'nope']):
        rc, out, err = ctl.run(*args)
        r.check(rc == 6 and out == '' and err == "memqosctl: no workload 'nope.service' is "
                "managed by memqos (memqosctl workloads lists them)\n",
                f'{" ".join(args)}: exit 6, says so', f'rc={rc} out={out!r} err={err!r}')

    rc, out, err = ctl.run('show')
    lines = out.splitlines()
    r.check(rc == 0 and 'Version=0.1.0-mock' in lines and 'MemoryRatio=1.5' in lines
            and 'DryRun=yes' in lines and 'PressureLevel=1' in lines and lines == sorted(lines),
            'show: the Manager\'s properties as Key=Value, by name',
            f'rc={rc} out={out!r} err={err!r}')
    rc, out, err = ctl.run('show', 'nginx', '-p', 'MemoryHigh,Limit', '--property=Id')
    r.check(rc == 0 and out == 'MemoryHigh=993210368\nLimit=1073741824\nId=nginx.service\n',
            'show ID -p A,B -p C: those, in that order', f'rc={rc} out={out!r} err={err!r}')
    rc, out, err = ctl.run('show', 'vm:web1', '-pMemoryHigh', '--value')
    r.check(rc == 0 and out == 'infinity\n', 'show --value: no limit is infinity',
            f'rc={rc} out={out!r} err={err!r}')
    rc, out, err = ctl.run('show', '-p', 'NoSuchProperty')
    r.check(rc == 0 and out == '', 'show -p unknown: nothing, as systemctl',
            f'rc={rc} out={out!r}')
    rc, out, err = ctl.run('--json', 'show', '-p', 'Version,MemoryTotal')
    r.check(rc == 0 and json.loads(out) == {'Version': '0.1.0-mock', 'MemoryTotal': 16 * GIB},
            'show --json -p', f'rc={rc} out={out!r}')
    rc, out, err = ctl.run('status', 'a', 'b')
    r.check(rc == 64 and "unexpected argument 'b'" in err, 'status a b: usage', err)
    rc, out, err = ctl.run('status', '-p', 'x')
    r.check(rc == 64 and "unknown option '-p' for 'status'" in err, 'status -p: usage', err)


def test_classes(r, ctl):
    rc, out, err = ctl.run('classes')
    r.check(rc == 0, 'classes: exit 0', err)
    lines = out.splitlines()
    r.check(lines and lines[0].split() == ['NAME', 'RANK', 'PROTECTION', 'THROTTLE', 'KILLABLE',
                                           'SLICE', 'WORKLOADS', 'MEMORY'],
            'classes: header', out)
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    r.check(rows.get('system') == ['system', '0', 'min', 'off', 'no', 'memqos-system.slice',
                                   '0', '512M'], 'classes: system row', out)
    r.check(rows.get('shared') == ['shared', '2', 'low', '0.9', 'yes', 'memqos-shared.slice',
                                   '1', '3.3G'], 'classes: shared row', out)
    r.check([line.split()[0] for line in lines[1:]] == ['system', 'dedicated', 'shared',
                                                        'reclaimed'],
            'classes: in the daemon\'s rank order', out)

    rc, out, err = ctl.run('classes', '--json')
    r.check(rc == 0, 'classes --json: exit 0', err)
    doc = json.loads(out)
    r.check(isinstance(doc, list) and len(doc) == 4, 'classes --json: 4 entries', out)
    shared = next((c for c in doc if c.get('Name') == 'shared'), {})
    r.check(shared.get('MemoryCurrent') == 3 * GIB + GIB // 4, 'classes --json MemoryCurrent',
            repr(shared))
    r.check(shared.get('SwapCurrent') == 64 * MIB and shared.get('MemoryPressure') == 3.5,
            'classes --json SwapCurrent, MemoryPressure', repr(shared))
    r.check(shared.get('ThrottlingFactor') == 0.9 and shared.get('Killable') is True
            and shared.get('Workloads') == ['/org/memqos1/workload/nginx_2eservice'],
            'classes --json fields', repr(shared))


def test_workloads(r, ctl):
    rc, out, err = ctl.run('workloads')
    r.check(rc == 0, 'workloads: exit 0', err)
    lines = out.splitlines()
    r.check(lines and lines[0].split() == ['ID', 'KIND', 'CLASS', 'REQUEST', 'LIMIT', 'MIN',
                                           'LOW', 'HIGH', 'MAX', 'SWAPMAX', 'CURRENT', 'PERSIST',
                                           'RECLAIMED', 'RECLAIM'],
            'workloads: header', out)
    r.check(len(lines) == 3, 'workloads: 2 rows', out)
    if len(lines) == 3:
        r.check(lines[1].split() == ['nginx.service', 'service', 'shared', '256M', '1G', '0',
                                     '256M', '947.2M', '1G', 'max', '300M', 'yes', '12M',
                                     'reclaiming'],
                'workloads: nginx row', lines[1])
        r.check(lines[2].split() == ['vm:web1', 'vm', 'dedicated', '2G', '2G', '2G', '0', 'max',
                                     '2G', '0', '2G', 'no', '0', 'off'], 'workloads: vm row',
                lines[2])
        r.check(len(set(len(line) for line in lines[:1])) == 1 and
                lines[0].index('PERSIST') == lines[1].index('yes'), 'workloads: aligned', out)

    rc, out, err = ctl.run('--json', 'workloads')
    r.check(rc == 0, 'workloads --json: exit 0', err)
    doc = json.loads(out)
    nginx = next((w for w in doc if w.get('Id') == 'nginx.service'), {})
    r.check(nginx.get('MemoryHigh') == 993210368 and nginx.get('MemorySwapMax') == NO_LIMIT
            and nginx.get('Request') == 256 * MIB and nginx.get('Persistent') is True,
            'workloads --json numbers', repr(nginx))
    r.check(nginx.get('ReclaimedBytes') == 12 * MIB and nginx.get('ReclaimState') == 'reclaiming'
            and nginx.get('ReclaimStall') == 0.02, 'workloads --json reclaim', repr(nginx))
    r.check(nginx.get('MemoryPressure') == 3.25, 'workloads --json MemoryPressure', repr(nginx))
    r.check(nginx.get('Unit') == 'nginx.service \u2192 "web" caf\u00e9\\\t',
            'workloads --json escapes quotes, backslashes, controls; keeps UTF-8', repr(nginx))
    r.check('\u2192' in out and 'caf\u00e9' in out, 'workloads --json: UTF-8 passed through',
            out)


def test_assign_run(r, ctl, mock):
    mock.ClearCalls()
    rc, out, err = ctl.run('assign', 'nginx.service', 'shared')
    r.check(rc == 0 and out == '/org/memqos1/workload/nginx_2eservice\n', 'assign: prints path',
            f'rc={rc} out={out!r} err={err!r}')
    rc, out, err = ctl.run('assign', 'vm:web1', 'dedicated', '--request', '1.5G', '--limit',
                           '2G', '--runtime', '--json')
    r.check(rc == 0 and json.loads(out) == {'workload': '/org/memqos1/workload/nginx_2eservice'},
            'assign --json', f'rc={rc} out={out!r} err={err!r}')
    calls = [tuple(c[1]) for c in mock.GetMethodCalls('AssignWorkload')]
    r.check(calls[:2] == [('nginx.service', 'shared', 0, NO_LIMIT, True),
                          ('vm:web1', 'dedicated', GIB + GIB // 2, 2 * GIB, False)],
            'assign: request 0 / limit max / persist by default; sizes and --runtime passed',
            repr(calls))

    # A bare name is a service, as with systemctl; vm: ids and suffixed names stay.
    mock.ClearCalls()
    for typed, sent in [('nginx', 'nginx.service'), ('batch.scope', 'batch.scope'),
                        ('vm:web1.example.com', 'vm:web1.example.com')]:
        rc, out, err = ctl.run('assign', typed, 'shared')
        calls = [str(c[1][0]) for c in mock.GetMethodCalls('AssignWorkload')]
        r.check(rc == 0 and calls[-1:] == [sent], f'assign {typed}: sends {sent}',
                f'rc={rc} calls={calls} err={err!r}')
    rc, out, err = ctl.run('unassign', 'nginx')
    r.check(rc == 0, 'unassign nginx: nginx.service', f'rc={rc} err={err!r}')

    rc, out, err = ctl.run('assign', 'nginx.service', 'gold')
    r.check(rc == 64, 'assign unknown class: a refused argument, exit 64', f'rc={rc}')
    r.check(err == "memqosctl: org.memqos1.Error.UnknownClass: class 'gold' does not exist "
                   "(known: system, dedicated, shared, reclaimed)\n",
            'assign unknown class: daemon error shown as it is', repr(err))
    r.check(out == '', 'assign unknown class: nothing on stdout', out)

    rc, out, err = ctl.run('unassign', 'nginx.service')
    r.check(rc == 0 and out == '', 'unassign: exit 0, quiet', f'rc={rc} out={out!r} err={err!r}')
    rc, out, err = ctl.run('--json', 'unassign', 'nginx.service')
    r.check(rc == 0 and json.loads(out) == {}, 'unassign --json: {}', out)
    rc, _, err = ctl.run('unassign', 'nope.service')
    r.check(rc == 6 and 'org.memqos1.Error.NoSuchWorkload' in err, 'unassign unknown: exit 6',
            f'rc={rc} err={err!r}')

    mock.ClearCalls()
    rc, out, err = ctl.run('run', '--name', 'batch', '--class', 'reclaimed', '--limit', '512M',
                           '--', 'stress-ng', '--vm', '1')
    r.check(rc == 0 and out == '/org/memqos1/workload/batch\n', 'run: prints path',
            f'rc={rc} out={out!r} err={err!r}')
    rc, out, err = ctl.run('run', '--class', 'shared', 'sleep', '1')
    r.check(rc == 0, 'run: default name', err)
    calls = [tuple(c[1]) for c in mock.GetMethodCalls('RunWorkload')]
    r.check(len(calls) == 2 and calls[0] == ('batch', 'reclaimed', 0, 512 * MIB,
                                             ['stress-ng', '--vm', '1']),
            'run: arguments passed', repr(calls))
    if len(calls) == 2:
        name = str(calls[1][0])
        r.check(name.startswith('memqos-run-') and name.endswith('.service')
                and list(calls[1][3:]) == [NO_LIMIT, ['sleep', '1']],
                'run: default name memqos-run-<pid>-<time>.service', repr(calls[1]))


def test_placement(r, ctl, mock):
    mock.ClearCalls()
    rc, out, err = ctl.run('verify-placement', '2G')
    r.check(rc == 0 and 'Verdict:  fits' in out and err == '', 'placement fits: exit 0',
            f'rc={rc} out={out!r} err={err!r}')
    r.check('available' in out and '14G' in out and '15032385536' in out,
            'placement: numbers shown', out)
    rc, out, err = ctl.run('verify-placement', '6G', '--failover-reserve', '2G')
    r.check(rc == 0 and 'Verdict:  soft' in out, 'placement soft: exit 0', f'rc={rc} {out!r}')
    r.check(err.startswith('memqosctl: warning: soft placement violation:'),
            'placement soft: warning on stderr', err)
    rc, out, err = ctl.run('--json', 'verify-placement', '12G', '8G')
    r.check(rc == 2, 'placement hard: exit 2', f'rc={rc} err={err!r}')
    doc = json.loads(out)
    r.check(doc.get('verdict') == 'hard' and doc.get('numbers', {}).get('available') == 14 * GIB
            and doc['numbers'].get('memory') == 12 * GIB, 'placement --json numbers', out)
    calls = [tuple(c[1]) for c in mock.GetMethodCalls('VerifyPlacement')]
    r.check(len(calls) == 3 and calls[0][:2] == (2 * GIB, 2 * GIB) and dict(calls[0][2]) == {},
            'placement: min defaults to memory, no options', repr(calls))
    if len(calls) == 3:
        r.check(dict(calls[1][2]) == {'failover_reserve': 2 * GIB},
                'placement: failover_reserve option', repr(calls[1]))
        r.check(calls[2][:2] == (12 * GIB, 8 * GIB), 'placement: MIN_MEMORY', repr(calls[2]))


def test_instances(r, ctl, mock):
    rc, out, err = ctl.run('instances')
    r.check(rc == 0 and out == ('NAME              MIN  MAX  STATE\n'
                                'db1.example.com    2G   4G  down\n'
                                'web1             512M   1G  up\n'),
            'instances: table', f'rc={rc} out={out!r} err={err!r}')
    rc, out, err = ctl.run('--json', 'instances')
    r.check(rc == 0 and json.loads(out) == [
        {'name': 'db1.example.com', 'min_memory': 2 * GIB, 'max_memory': 4 * GIB, 'up': False},
        {'name': 'web1', 'min_memory': 512 * MIB, 'max_memory': GIB, 'up': True}],
        'instances --json', f'rc={rc} out={out!r} err={err!r}')

    mock.ClearCalls()
    rc, out, err = ctl.run('record-instance', 'web2.example.com', '--max', '2G')
    r.check(rc == 0 and out == '' and err == '', 'record-instance: exit 0, quiet',
            f'rc={rc} out={out!r} err={err!r}')
    rc, out, err = ctl.run('record-instance', 'db1', '--max', '1.5G', '--min=512M', '--down',
                           '--json')
    r.check(rc == 0 and json.loads(out) == {}, 'record-instance --json: {}',
            f'rc={rc} out={out!r} err={err!r}')
    calls = [tuple(c[1]) for c in mock.GetMethodCalls('RecordInstance')]
    r.check(calls == [('web2.example.com', 2 * GIB, 2 * GIB, True),
                      ('db1', 512 * MIB, GIB + GIB // 2, False)],
            'record-instance: min defaults to max, up by default; --min/--down passed',
            repr(calls))
    rc, out, err = ctl.run('record-instance', 'db1', '--max', '0')
    r.check(rc == 64 and out == '' and err.startswith(
        'memqosctl: org.memqos1.Error.SizeOutOfRange: max_memory of instance db1'),
        'record-instance max 0: a refused argument, exit 64', f'rc={rc} err={err!r}')
    rc, out, err = ctl.run('record-instance', 'db1')
    r.check(rc == 64 and "'record-instance' needs --max SIZE" in err and out == '',
            'record-instance without --max: usage, exit 64', f'rc={rc} err={err!r}')
    r.check(len(mock.GetMethodCalls('RecordInstance')) == 3, 'usage error: no call made')

    rc, out, err = ctl.run('forget-instance', 'web1')
    r.check(rc == 0 and out == '' and err == '', 'forget-instance: exit 0, quiet',
            f'rc={rc} out={out!r} err={err!r}')
    rc, out, err = ctl.run('forget-instance', 'nope')
    r.check(rc == 6 and out == '' and err == "memqosctl: org.memqos1.Error.NoSuchInstance: "
            "instance 'nope' is not in this node's record\n",
            'forget-instance unknown: NoSuchInstance, exit 6', f'rc={rc} err={err!r}')
    calls = [tuple(c[1]) for c in mock.GetMethodCalls('ForgetInstance')]
    r.check(calls == [('web1',), ('nope',)], 'forget-instance: name passed', repr(calls))

    rc, out, err = ctl.run('reclaim', 'nginx.service', '64M')
    r.check(rc == 0 and out == 'Reclaimed 32M of 64M from nginx.service\n',
            'reclaim: what was freed', f'rc={rc} out={out!r} err={err!r}')
    rc, out, err = ctl.run('--json', 'reclaim', 'nginx.service', '64M')
    r.check(rc == 0 and json.loads(out) == {'Id': 'nginx.service', 'Asked': 64 * MIB,
                                            'Reclaimed': 32 * MIB},
            'reclaim --json', f'rc={rc} out={out!r}')
    rc, out, err = ctl.run('reclaim', 'nope.service', '1M')
    r.check(rc == 6 and 'org.memqos1.Error.NoSuchWorkload' in err, 'reclaim unknown: exit 6',
            f'rc={rc} err={err!r}')
    rc, out, err = ctl.run('reclaim', 'nginx.service', '0')
    r.check(rc == 64 and out == '', 'reclaim 0: usage, exit 64', f'rc={rc} err={err!r}')
    calls = [tuple(c[1]) for c in mock.GetMethodCalls('Reclaim')]
    r.check(calls == [('nginx.service', 64 * MIB)] * 2 + [('nope.service', MIB)],
            'reclaim: id and bytes passed', repr(calls))

    # A memqosd without the instance record: status shows the rest.
    mock.AddMethod('org.memqos1.Manager', 'ListInstances', '', 'a(sttb)',
                   'raise dbus.exceptions.DBusException("Unknown method ListInstances",'
                   ' name="org.freedesktop.DBus.Error.UnknownMethod")')
    rc, out, err = ctl.run('status')
    r.check(rc == 0 and out.endswith('Workloads:         2\n') and err == '',
            'status without ListInstances: exit 0, no instance table', f'rc={rc} {out!r} {err!r}')
    rc, out, err = ctl.run('--json', 'status')
    r.check(rc == 0 and 'instances' not in json.loads(out),
            'status --json without ListInstances: no "instances"', f'rc={rc} {out!r} {err!r}')
    rc, out, err = ctl.run('instances')
    r.check(rc == 1 and err.startswith('memqosctl: org.freedesktop.DBus.Error.UnknownMethod'),
            'instances without ListInstances: exit 1', f'rc={rc} {err!r}')


# memqosctl's own JSON keys, beside the D-Bus names (README, memqosctl(1)).
CTL_ADDED_KEYS = {'ObjectPath', 'ClassCount', 'WorkloadCount', 'PressureLevelName', 'Asked',
                  'Reclaimed', 'Manager', 'Classes', 'Workloads', 'time', 'timestamp', 'event',
                  'level_name'}
# Members of D-Bus structs, by the names the XML's comments give them.
XML_STRUCT_MEMBERS = {'name', 'min_memory', 'max_memory', 'up', 'severity', 'code', 'message',
                      'time_usec', 'id', 'class', 'reason', 'numbers'}


def dbus_names():
    """Every property and argument name in dbus/*.xml."""
    import xml.etree.ElementTree as ET  # pylint: disable=import-outside-toplevel
    here = os.path.dirname(os.path.abspath(__file__))
    xml_dir = os.path.join(here, '..', '..', 'dbus')
    names = set()
    for fn in os.listdir(xml_dir):
        if fn.endswith('.xml'):
            for el in ET.parse(os.path.join(xml_dir, fn)).iter():
                if el.tag in ('property', 'arg') and el.get('name'):
                    names.add(el.get('name'))
    return names


def json_keys(doc, out):
    """Keys of `doc`, not those inside "numbers" (the daemon's data, not names)."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.add(k)
            if k != 'numbers':
                json_keys(v, out)
    elif isinstance(doc, list):
        for v in doc:
            json_keys(v, out)
    return out


def test_json_keys_are_dbus_names(r, ctl, mock):
    """Every key memqosctl prints is a D-Bus name or one of its documented own."""
    mock.AddMethod('org.memqos1.Manager', 'ListKills', '', 'a(tsssa{st})',
                   'ret = [(dbus.UInt64(1795000000000000), "vm:batch", "reclaimed", '
                   '"level 3", {"usage": dbus.UInt64(2147483648)})]')
    rc, out, err = ctl.run('--json', 'events')
    kills = json.loads(out) if rc == 0 else None
    r.check(isinstance(kills, list) and len(kills) == 1
            and kills[0].get('time_usec') == 1795000000000000 and kills[0].get('id') == 'vm:batch'
            and kills[0].get('numbers') == {'usage': 2147483648},
            'events --json: the kill history as ListKills gives it', f'rc={rc} {out!r} {err!r}')
    allowed = dbus_names() | XML_STRUCT_MEMBERS | CTL_ADDED_KEYS
    r.check('MemoryTotal' in allowed and 'restart_needed' in allowed, 'XML names read',
            repr(sorted(allowed))[:200])
    seen = set()
    for args in (['status'], ['classes'], ['workloads'], ['instances'], ['verify'],
                 ['events'], ['verify-placement', '1G', '1G'], ['reclaim', 'nginx.service', '1M'],
                 ['top', '-n', '1']):
        rc, out, err = ctl.run('--json=short', *args)
        ok = rc in (0, 2) and out.strip() != ''
        r.check(ok, f'{args[0]} --json=short: a document', f'rc={rc} {err!r}')
        if ok:
            for line in out.splitlines():
                json_keys(json.loads(line), seen)
    strange = sorted(seen - allowed)
    r.check(not strange, 'every JSON key is a D-Bus name or a documented own key',
            repr(strange))
    r.check({'instances', 'min_memory', 'severity', 'ObjectPath'} <= seen,
            'the keys checked include reply, struct, property and own names', repr(sorted(seen)))


def test_placement_options(r, ctl, mock):
    mock.ClearCalls()
    rc, out, err = ctl.run('verify-placement', '6G', '--refuse-soft', '--instance',
                           'web1.example.com', '--min', '2G')
    r.check(rc == 0 and 'Verdict:  soft' in out, 'placement with options: the verdict shown',
            f'rc={rc} out={out!r} err={err!r}')
    rc, _, err = ctl.run('verify-placement', '1G', '1G', '--min', '1G')
    r.check(rc == 64 and 'not both' in err, 'placement MIN_MEMORY and --min: exit 64', err)
    calls = [tuple(c[1]) for c in mock.GetMethodCalls('VerifyPlacement')]
    r.check(len(calls) == 1 and calls[0][:2] == (6 * GIB, 2 * GIB)
            and dict(calls[0][2]) == {'refuse_soft': True, 'instance': 'web1.example.com'},
            'placement: --min, refuse_soft and instance options passed', repr(calls))
    if calls:
        types = {str(k): type(v).__name__ for k, v in calls[0][2].items()}
        r.check(types == {'refuse_soft': 'Boolean', 'instance': 'String'},
                'placement: option types b and s', repr(types))


CLEAR = '\x1b[H\x1b[2J'


def run_in_pty(ctl, *args, env=None, timeout=CALL_TIMEOUT_S, stop_after=None, keys=None,
               rows=None):
    """Runs memqosctl with a pseudo-terminal as stdin/stdout/stderr.

    Returns (exit code, everything it wrote, '\\r\\n' turned back into '\\n').
    With stop_after=(text, signal): sends the signal once `text` was seen.
    With keys=[(text, bytes), ...]: types each bytes once its text was seen
    after the previous one was typed. With rows: the terminal is that high.
    """
    keys = list(keys or [])
    typed_at = 0
    argv = [ctl.path, '--bus-address', ctl.address, *args]
    child_env = ctl.env(dict({'TERM': 'xterm'}, **(env or {})))
    if env is None or 'NO_COLOR' not in env:
        child_env.pop('NO_COLOR', None)
    pid, fd = pty.fork()
    if pid == 0:  # the child: exec at once
        try:
            if rows:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack('HHHH', rows, 100, 0, 0))
            os.execve(argv[0], argv, child_env)
        finally:
            os._exit(127)  # pylint: disable=protected-access
    out = b''
    signalled = False
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                break
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            try:
                data = os.read(fd, 65536)
            except OSError as e:  # EIO: the child closed the terminal
                if e.errno != errno.EIO:
                    raise
                break
            if not data:
                break
            out += data
            if keys and keys[0][0].encode() in out[typed_at:]:
                os.write(fd, keys.pop(0)[1])
                typed_at = len(out)
            if stop_after and not signalled and stop_after[0].encode() in out:
                os.kill(pid, stop_after[1])
                signalled = True
    finally:
        os.close(fd)
        _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode('utf-8').replace('\r\n', '\n')


def top_rows(frame, first):
    """The rows of the table whose header starts with `first`, split on blanks."""
    lines = frame.split('\n')
    for i, line in enumerate(lines):
        if line.split()[:1] == [first]:
            rows = []
            for row in lines[i + 1:]:
                if not row.strip():
                    break
                rows.append(row.split())
            return rows
    return None


def check_top_frame(r, frame, what):
    r.check('Pressure level: 1 (admission-closed)  PSI: some 2.5% full 0.75%  Admission: closed'
            '  Dry run: yes' in frame
            and 'Memory available: 9.5G of 16G  Swap free: 3G of 4G  Best-effort room: 2.5G'
            in frame, f'{what}: the node line from the Manager', repr(frame))
    r.check(top_rows(frame, 'CLASS') == [['shared', '2', '1', '3.3G', '64M', '3.5%'],
                                         ['dedicated', '1', '1', '2G', '0', '0.5%'],
                                         ['system', '0', '0', '512M', '0', '0%'],
                                         ['reclaimed', '3', '0', '0', '0', '0%']],
            f'{what}: class rows by usage', repr(frame))
    r.check(top_rows(frame, 'WORKLOAD') == [
        ['vm:web1', 'dedicated', '2G', '2G', 'max', '2G', '0', '0%', 'off'],
        ['nginx.service', 'shared', '300M', '256M', '947.2M', '1G', '0', '3.25%', 'reclaiming']],
        f'{what}: workload rows by usage', repr(frame))


def test_top(r, ctl):
    # In a terminal: each frame starts with cursor home + clear screen.
    rc, out = run_in_pty(ctl, 'top', '--iterations', '2', '--delay', '0.2')
    r.check(rc == 0, 'top in a pty, --iterations 2: exit 0', f'rc={rc} out={out!r}')
    r.check(out.count(CLEAR) == 2 and out.startswith(CLEAR),
            'top in a pty: clear-screen before each of 2 frames', repr(out))
    frames = out.split(CLEAR)[1:]
    r.check(len(frames) == 2, 'top in a pty: two frames', repr(out))
    for n, frame in enumerate(frames, 1):
        check_top_frame(r, frame.replace('\x1b[1m', '').replace('\x1b[0m', ''),
                        f'top in a pty, frame {n}')
    r.check(out.count('\x1b[1mCLASS ') == 2 and out.count('\x1b[1mWORKLOAD ') == 2,
            'top in a pty: bold table headers', repr(out))

    rc, out = run_in_pty(ctl, 'top', '-n', '1', env={'NO_COLOR': '1'})
    r.check(rc == 0 and out.count(CLEAR) == 1 and '\x1b[1m' not in out,
            'top in a pty with NO_COLOR: clears, but no bold', repr(out))

    # Batch mode in a terminal: no control codes, frames one after the other.
    rc, out = run_in_pty(ctl, 'top', '--batch', '--iterations=2', '--delay=0.1')
    r.check(rc == 0 and '\x1b' not in out, 'top --batch in a pty: exit 0, no control codes',
            f'rc={rc} out={out!r}')
    frames = out.split('\n\nPressure level:')
    r.check(out.count('Pressure level:') == 2 and len(frames) == 2,
            'top --batch: two frames separated by a blank line', repr(out))
    check_top_frame(r, out.split('\n\nPressure level:')[0], 'top --batch, frame 1')

    # stdout not a terminal: batch implied.
    rc, out, err = ctl.run('top', '-n', '2', '-d', '0.1')
    r.check(rc == 0 and '\x1b' not in out and out.count('Pressure level:') == 2 and err == '',
            'top into a pipe: batch implied, two frames', f'rc={rc} out={out!r} err={err!r}')
    check_top_frame(r, out, 'top into a pipe')

    # Sort orders (the daemon's values: vm:web1 2G, nginx 300M; MemoryPressure: nginx 3.25 %,
    # vm:web1 0; no swap: by name).
    for order, first in [('name', 'nginx.service'), ('pressure', 'nginx.service'),
                         ('swap', 'nginx.service'), ('usage', 'vm:web1')]:
        rc, out, err = ctl.run('top', '-n', '1', f'--order={order}')
        rows = top_rows(out, 'WORKLOAD') or [[]]
        r.check(rc == 0 and rows[0][:1] == [first], f'top --order={order}: {first} first',
                f'rc={rc} out={out!r} err={err!r}')
    rc, out, _ = ctl.run('top', '-n', '1', '--order=name')
    r.check([row[0] for row in top_rows(out, 'CLASS') or []] ==
            ['dedicated', 'reclaimed', 'shared', 'system'], 'top --order=name: classes too', out)
    for order, classes in [('pressure', ['shared', 'dedicated', 'system', 'reclaimed']),
                           ('swap', ['shared', 'system', 'dedicated', 'reclaimed'])]:
        rc, out, _ = ctl.run('top', '-n', '1', f'--order={order}')
        r.check([row[0] for row in top_rows(out, 'CLASS') or []] == classes,
                f'top --order={order}: classes by their MemoryPressure / SwapCurrent', out)

    rc, out, err = ctl.run('top', '-n1', '-d0.1', '--no-legend')
    r.check(rc == 0 and 'CLASS' not in out and 'WORKLOAD' not in out
            and '\nshared     2  1  3.3G  64M  3.5%\n' in out,
            'top --no-legend: rows without headers', f'rc={rc} out={out!r} err={err!r}')

    rc, out, err = ctl.run('--json=short', 'top', '-n', '2', '-d', '0.1')
    lines = out.splitlines()
    r.check(rc == 0 and len(lines) == 2, 'top --json=short: one line per frame',
            f'rc={rc} out={out!r} err={err!r}')
    try:
        docs = [json.loads(line) for line in lines]
    except ValueError as e:
        r.check(False, 'top --json=short: each line is JSON', f'{e}: {out!r}')
        docs = []
    for doc in docs:
        r.check(doc.get('Manager', {}).get('PressureLevel') == 1
                and doc['Manager'].get('AdmissionOpen') is False
                and [c.get('Name') for c in doc.get('Classes', [])] ==
                ['shared', 'dedicated', 'system', 'reclaimed']
                and [w.get('Id') for w in doc.get('Workloads', [])] == ['vm:web1', 'nginx.service']
                and doc['Workloads'][1].get('ReclaimStall') == 0.02
                and doc['Workloads'][1].get('MemoryPressure') == 3.25
                and doc['Manager'].get('MemoryPressureSome') == 2.5
                and doc['Manager'].get('MemoryPressureFull') == 0.75
                and doc['Classes'][0].get('SwapCurrent') == 64 * MIB
                and doc['Classes'][0].get('MemoryPressure') == 3.5,
                'top --json=short: the daemon\'s properties', repr(doc))

    rc, _, err = ctl.run('top', '--order=cpu')
    r.check(rc == 64 and "--order: 'cpu' is not one of" in err, 'top --order=cpu: exit 64', err)

    # SIGINT and SIGTERM end it with 0, on the terminal as in a pipe.
    for sig in (signal.SIGINT, signal.SIGTERM):
        rc, out = run_in_pty(ctl, 'top', '--delay', '30', stop_after=('reclaiming', sig))
        r.check(rc == 0 and out.count(CLEAR) == 1,
                f'top in a pty: {sig.name} during the delay → exit 0 after one frame',
                f'rc={rc} out={out!r}')


def test_top_terminal(r, ctl, mock_log_path):
    """One round trip per frame; keys; the terminal's height."""
    with open(mock_log_path, encoding='utf-8') as f:
        before = len(f.read())
    rc, out, err = ctl.run('top', '-n', '3', '-d', '0.1')
    with open(mock_log_path, encoding='utf-8') as f:
        calls = [line.split(' ', 1)[1] for line in f.read()[before:].splitlines()
                 if ' ' in line]
    r.check(rc == 0 and calls.count('GetManagedObjects') == 3
            and calls.count('GetAll /org/memqos1 org.memqos1.Manager') == 3 and len(calls) == 6,
            'top: per frame the Manager\'s GetAll and one GetManagedObjects, nothing per '
            'class or workload', f'rc={rc} calls={calls} err={err!r}')

    # p sorts by name (nginx first), m by memory (vm:web1 first), q quits.
    rc, out = run_in_pty(ctl, 'top', '--delay', '30',
                         keys=[('reclaiming', b'p'), ('reclaiming', b'm'), ('reclaiming', b'q')])
    frames = out.split(CLEAR)[1:]
    firsts = [(top_rows(f.replace('\x1b[1m', '').replace('\x1b[0m', ''), 'WORKLOAD')
               or [['']])[0][0] for f in frames]
    r.check(rc == 0 and firsts == ['vm:web1', 'nginx.service', 'vm:web1'],
            'top keys: p by name, m by memory, each redrawn at once; q quits with 0',
            f'rc={rc} firsts={firsts} out={out!r}')
    rc, out = run_in_pty(ctl, 'top', '--delay', '30', keys=[('reclaiming', b'x'),
                                                          ('reclaiming', b'q')], timeout=5)
    r.check(rc == -9 and out.count(CLEAR) == 1,
            'top: another key does nothing (no redraw, no quit)', f'rc={rc} out={out!r}')

    rc, out = run_in_pty(ctl, 'top', '-n', '1', rows=8)
    lines = out.split(CLEAR)[-1].splitlines()
    r.check(rc == 0 and len(lines) == 7 and lines[-1].startswith('(')
            and 'more lines: a taller window shows them)' in lines[-1],
            'top in an 8-row terminal: 7 lines, the last says what was cut',
            f'rc={rc} lines={lines!r}')
    rc, out = run_in_pty(ctl, 'top', '-n', '1', rows=60)
    r.check(rc == 0 and 'more lines' not in out and 'vm:web1' in out,
            'top in a 60-row terminal: all of it', f'rc={rc} {out!r}')


def test_conventions(r, ctl):
    """--json=short|pretty|off, --no-legend, --no-pager on the other commands."""
    rc, pretty, _ = ctl.run('--json', 'status')
    rc2, short, _ = ctl.run('--json=short', 'status')
    r.check(rc == 0 and rc2 == 0 and short.count('\n') == 1 and pretty.count('\n') > 5
            and json.loads(short) == json.loads(pretty),
            '--json=short: the same document on one line', f'{short!r} {pretty!r}')
    rc, out, _ = ctl.run('--json=pretty', 'classes')
    r.check(rc == 0 and out.startswith('[\n  {\n    "Name": "system"'), '--json=pretty', out)
    rc, out, _ = ctl.run('--json', 'status', '--json=off')
    r.check(rc == 0 and out.startswith('Version:'), '--json=off: tables again', out)
    rc, out, err = ctl.run('--json=long', 'status')
    r.check(rc == 64 and out == '' and "--json: 'long' is not one of pretty, short, off" in err,
            '--json=long: exit 64', f'rc={rc} err={err!r}')

    rc, out, _ = ctl.run('--no-legend', 'workloads')
    r.check(rc == 0 and [line.split()[0] for line in out.splitlines()] ==
            ['nginx.service', 'vm:web1'], '--no-legend workloads: rows only', out)
    rc, out, _ = ctl.run('instances', '--no-legend')
    r.check(rc == 0 and out == ('db1.example.com    2G  4G  down\n'
                                'web1             512M  1G  up\n'),
            '--no-legend instances: rows only', repr(out))
    rc, out, _ = ctl.run('status', '--no-legend')
    r.check(rc == 0 and out.endswith('Workloads:         2\n\n'
                                     'db1.example.com    2G  4G  down\n'
                                     'web1             512M  1G  up\n'),
            '--no-legend status: the instance rows without header and footer', repr(out))
    rc, out, _ = ctl.run('--no-pager', 'classes')
    rc2, plain, _ = ctl.run('classes')
    r.check(rc == 0 and out == plain, '--no-pager into a pipe: output unchanged', out)
    rc, out, _ = ctl.run('classes')
    r.check('\x1b' not in out, 'no colour into a pipe', repr(out))


def test_legend_quiet(r, ctl):
    """--legend=yes|no beside --no-legend; -q/--quiet."""
    rc, out, _ = ctl.run('--legend=no', 'instances')
    rc2, nolegend, _ = ctl.run('--no-legend', 'instances')
    r.check(rc == 0 and rc2 == 0 and out == nolegend and 'NAME' not in out,
            '--legend=no: as --no-legend', repr(out))
    rc, out, _ = ctl.run('--no-legend', 'instances', '--legend', 'yes')
    r.check(rc == 0 and out.startswith('NAME '), '--legend yes after --no-legend: header back',
            repr(out))
    rc, out, err = ctl.run('--legend=maybe', 'instances')
    r.check(rc == 64 and out == '' and "--legend: 'maybe' is not a boolean" in err,
            '--legend=maybe: usage, exit 64', f'rc={rc} err={err!r}')

    for args in (['-q', 'assign', 'nginx', 'shared'], ['--quiet', 'unassign', 'nginx'],
                 ['reclaim', '-q', 'nginx', '64M'], ['-q', 'verify'],
                 ['-q', '--json', 'assign', 'nginx', 'shared']):
        rc, out, err = ctl.run(*args)
        r.check(rc == 0 and out == '' and err == '', f'{" ".join(args)}: nothing printed',
                f'rc={rc} out={out!r} err={err!r}')
    rc, out, err = ctl.run('-q', 'verify-placement', '6G', '--failover-reserve', '2G')
    r.check(rc == 0 and out == '' and err == '', '-q verify-placement soft: exit 0, silent',
            f'rc={rc} out={out!r} err={err!r}')
    rc, out, err = ctl.run('-q', 'verify-placement', '12G')
    r.check(rc == 2 and out == '' and err.startswith('memqosctl: hard placement violation'),
            '-q verify-placement hard: exit 2, the reason still on stderr',
            f'rc={rc} out={out!r} err={err!r}')
    rc, out, err = ctl.run('-q', 'unassign', 'nope')
    r.check(rc == 6 and out == '' and 'NoSuchWorkload' in err, '-q: errors still shown',
            f'rc={rc} err={err!r}')
    rc, out, _ = ctl.run('-q', 'workloads')
    r.check(rc == 0 and out.startswith('ID '), '-q workloads: a listing is still printed', out)


def test_pager_and_colors(r, ctl, tmp):
    """The pager on a terminal (SYSTEMD_PAGER, PAGER, less, LESS) and SYSTEMD_COLORS."""
    pager = os.path.join(tmp, 'pager.sh')
    with open(pager, 'w', encoding='utf-8') as f:
        f.write('#!/bin/sh\necho "PAGER $0 LESS=$LESS"\nexec sed "s/^/|/"\n')
    os.chmod(pager, 0o755)
    bindir = os.path.join(tmp, 'bin')
    os.makedirs(bindir, exist_ok=True)
    os.symlink(pager, os.path.join(bindir, 'less'))
    clean = {'SYSTEMD_PAGER': None, 'PAGER': None, 'SYSTEMD_LESS': None, 'LESS': None}

    def pty(*args, **kw):  # None unsets a variable
        return run_in_pty(ctl, *args, env=dict(clean, **kw))

    rc, out = pty('classes', SYSTEMD_PAGER=pager, PAGER='/bin/false')
    r.check(rc == 0 and f'PAGER {pager} LESS=FRSXMK' in out and '|NAME ' in out
            and '|shared ' in out,
            'classes on a terminal: through $SYSTEMD_PAGER, LESS=FRSXMK', repr(out))
    rc, out = pty('status', PAGER=pager)
    r.check(rc == 0 and '|Version:' in out, 'status on a terminal: through $PAGER', repr(out))
    rc, out = pty('show', PAGER=pager, SYSTEMD_LESS='FRX', LESS='ignored')
    r.check(rc == 0 and 'LESS=FRX' in out and '|Version=0.1.0-mock' in out,
            '$SYSTEMD_LESS is the pager\'s LESS', repr(out))
    rc, out = pty('workloads', PATH=f'{bindir}:/usr/bin:/bin')
    r.check(rc == 0 and f'PAGER {bindir}/less LESS=FRSXMK' in out and '|ID ' in out,
            'no $PAGER: less from PATH', repr(out))
    for label, kw in [('--no-pager', {'PAGER': pager}), ('SYSTEMD_PAGER=cat',
                                                          {'SYSTEMD_PAGER': 'cat', 'PAGER': pager}),
                      ('SYSTEMD_PAGER empty', {'SYSTEMD_PAGER': '', 'PAGER': pager})]:
        args = ['--no-pager', 'classes'] if label == '--no-pager' else ['classes']
        rc, out = pty(*args, **kw)
        r.check(rc == 0 and 'PAGER' not in out and 'NAME ' in out and '|' not in out,
                f'{label}: no pager', repr(out))
    rc, out = pty('classes', SYSTEMD_PAGER=os.path.join(tmp, 'no-such-pager'))
    r.check(rc == 0 and 'NAME ' in out and 'shared' in out,
            'a pager that cannot start: the output all the same', f'rc={rc} {out!r}')
    rc, out = pty('assign', 'nginx', 'shared', PAGER=pager)
    r.check(rc == 0 and 'PAGER' not in out and '/org/memqos1/workload/' in out,
            'assign: not paged', repr(out))
    rc, out = pty('top', '-n', '1', PAGER=pager)
    r.check(rc == 0 and 'PAGER' not in out, 'top: not paged', repr(out))
    rc, out, _ = ctl.run('classes', env={'PAGER': pager, 'SYSTEMD_PAGER': pager})
    # (ctl.run's output is a pipe)
    r.check(rc == 0 and 'PAGER' not in out and out.startswith('NAME '),
            'into a pipe: no pager', repr(out))

    # SYSTEMD_COLORS overrides NO_COLOR and the terminal test, both ways.
    rc, out, _ = ctl.run('top', '-n', '1', env={'SYSTEMD_COLORS': '1'})
    r.check(rc == 0 and '\x1b[1mCLASS ' in out, 'top into a pipe, SYSTEMD_COLORS=1: bold',
            repr(out))
    rc, out = run_in_pty(ctl, 'top', '-n', '1', env={'SYSTEMD_COLORS': 'yes', 'NO_COLOR': '1'})
    r.check(rc == 0 and '\x1b[1mCLASS ' in out, 'SYSTEMD_COLORS=yes beats NO_COLOR', repr(out))
    rc, out = run_in_pty(ctl, 'top', '-n', '1', env={'SYSTEMD_COLORS': '0'})
    r.check(rc == 0 and '\x1b[1m' not in out, 'top on a terminal, SYSTEMD_COLORS=0: no bold',
            repr(out))
    rc, out, _ = ctl.run('top', '-n', '1', env={'SYSTEMD_COLORS': 'sometimes'})
    r.check(rc == 0 and '\x1b[' not in out, 'SYSTEMD_COLORS=sometimes: ignored (a pipe)',
            repr(out))


def test_verify_reload(r, ctl, mock):
    rc, out, err = ctl.run('verify')
    r.check(rc == 0, 'verify warnings only: exit 0', f'rc={rc} err={err!r}')
    r.check(out.splitlines()[0].split() == ['SEVERITY', 'CODE', 'MESSAGE']
            and 'swap-short' in out, 'verify: table', out)
    mock.AddMethod('org.memqos1.Manager', 'Verify', '', 'a(sss)',
                   'ret = [("error", "no-psi", "kernel without PSI \\"memory\\"")]')
    rc, out, err = ctl.run('verify', '--json')
    r.check(rc == 2, 'verify error finding: exit 2', f'rc={rc} err={err!r}')
    r.check(json.loads(out) == [{'severity': 'error', 'code': 'no-psi',
                                 'message': 'kernel without PSI "memory"'}],
            'verify --json', out)

    rc, out, err = ctl.run('reload')
    r.check(rc == 0 and out == '' and err == '', 'reload: exit 0', f'{rc} {out!r} {err!r}')
    note = ('Manager.StateDirectory needs a restart: /var/lib/memqos stays in use until memqosd '
            'restarts (the configuration now says /srv/memqos)')
    mock.AddMethod('org.memqos1.Manager', 'Reload', '', 'as', f'ret = [{note!r}]')
    rc, out, err = ctl.run('reload')
    r.check(rc == 0 and out == note + '\n' and err == '', 'reload: restart-needed line printed',
            f'{rc} {out!r} {err!r}')
    rc, out, err = ctl.run('reload', '--json')
    r.check(rc == 0 and json.loads(out) == {'restart_needed': [note]}, 'reload --json',
            f'{rc} {out!r} {err!r}')
    mock.AddMethod('org.memqos1.Manager', 'Reload', '', 'as',
                   'raise dbus.exceptions.DBusException("memqosd.conf: [Pressure] '
                   'KillThreshold=abc: not a percentage", name="org.memqos1.Error.ConfigInvalid")')
    rc, _, err = ctl.run('reload')
    r.check(rc == 1 and err.startswith('memqosctl: org.memqos1.Error.ConfigInvalid: memqosd.conf'),
            'reload invalid config: exit 1', f'{rc} {err!r}')
    mock.AddMethod('org.memqos1.Manager', 'Reload', '', 'as',
                   'raise dbus.exceptions.DBusException("Reload is root only",'
                   ' name="org.freedesktop.DBus.Error.AccessDenied")')
    rc, _, err = ctl.run('reload')
    r.check(rc == 5 and 'access denied' in err and 'sudo' in err, 'reload access denied: exit 5',
            f'{rc} {err!r}')


def start_monitor(ctl, *args):
    p = subprocess.Popen([ctl.path, '--bus-address', ctl.address, 'monitor', *args],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ctl.env())
    banner = ''
    for _ in range(3):  # a warning may come first ("memqosd is not on the bus")
        line = read_line(p.stderr, 10)
        banner += line
        if not line or 'Monitoring memqosd' in line:
            break
    return p, banner


def stop(p, sig=signal.SIGTERM):
    if p.poll() is None:
        p.send_signal(sig)
    try:
        return p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return None


def test_monitor(r, ctl, mock):
    import dbus  # pylint: disable=import-outside-toplevel

    p, banner = start_monitor(ctl, '--json')
    try:
        r.check('Monitoring memqosd' in banner, 'monitor: subscribed', repr(banner))
        mock.EmitSignal('org.memqos1.Manager', 'PressureLevelChanged', 'us',
                        [dbus.UInt32(2), 'psi some avg10 41.2 > 40'])
        mock.EmitSignal('org.memqos1.Manager', 'WorkloadKilled', 'sssa{st}',
                        ['vm:batch', 'reclaimed', 'level 3 "kill"',
                         dbus.Dictionary({'usage': dbus.UInt64(2 * GIB)}, signature='st')])
        mock.UpdateProperties('org.memqos1.Manager',
                              {'MemoryAvailable': dbus.UInt64(GIB), 'PressureLevel': dbus.UInt32(2)})
        events = []
        for _ in range(3):
            line = read_line(p.stdout, 10)
            if not line:
                break
            try:
                events.append(json.loads(line))
            except ValueError:
                r.check(False, 'monitor --json: a line is JSON', repr(line))
        r.check(len(events) == 3, 'monitor --json: 3 events', repr(events))
        if len(events) == 3:
            r.check(events[0].get('event') == 'PressureLevelChanged' and events[0].get('level') == 2
                    and events[0].get('level_name') == 'throttle' and events[0].get('timestamp'),
                    'monitor: PressureLevelChanged', repr(events[0]))
            r.check(events[1].get('event') == 'WorkloadKilled' and events[1].get('id') == 'vm:batch'
                    and events[1].get('reason') == 'level 3 "kill"'
                    and events[1].get('numbers') == {'usage': 2 * GIB},
                    'monitor: WorkloadKilled', repr(events[1]))
            r.check(events[2].get('event') == 'PropertiesChanged'
                    and events[2].get('changed') == {'MemoryAvailable': GIB, 'PressureLevel': 2},
                    'monitor: PropertiesChanged', repr(events[2]))
        rc = stop(p, signal.SIGTERM)
        r.check(rc == 0, 'monitor: SIGTERM → exit 0', repr(rc))
    finally:
        stop(p, signal.SIGKILL)

    p, banner = start_monitor(ctl)
    try:
        r.check('Monitoring memqosd' in banner, 'monitor text: subscribed', repr(banner))
        mock.EmitSignal('org.memqos1.Manager', 'PressureLevelChanged', 'us',
                        [dbus.UInt32(0), 'calm again'])
        line = read_line(p.stdout, 10)
        r.check(line.endswith(' PressureLevelChanged level=0 (normal): calm again\n')
                and line[:4].isdigit(), 'monitor text: one line with a timestamp', repr(line))
        rc = stop(p, signal.SIGINT)
        r.check(rc == 0, 'monitor: SIGINT → exit 0', repr(rc))
    finally:
        stop(p, signal.SIGKILL)


def test_monitor_daemon_leaves(r, ctl, mock_proc, bus):
    """Last: stops the mock and then the bus under a running monitor."""
    p, banner = start_monitor(ctl)
    try:
        r.check('Monitoring memqosd' in banner, 'monitor: subscribed before the daemon leaves',
                repr(banner))
        mock_proc.terminate()
        mock_proc.wait(timeout=10)
        line = read_line(p.stdout, 10)
        r.check('NameOwnerChanged: memqosd left the bus' in line, 'monitor: daemon left',
                repr(line))
        r.check(wait_for_name(bus, 'org.memqos1', present=False), 'mock gone')
        rc, _, err = ctl.run('status')
        r.check(rc == 4 and 'memqosd is not running' in err, 'status after the daemon left: 4',
                f'{rc} {err!r}')
    finally:
        stop(p, signal.SIGKILL)


def test_monitor_bus_dies(r, ctl, daemon_proc):
    p, banner = start_monitor(ctl)
    try:
        r.check('Monitoring memqosd' in banner, 'monitor: subscribed before the bus dies',
                repr(banner))
        r.check('warning: memqosd is not on the bus' in banner,
                'monitor: warns when memqosd is not on the bus', repr(banner))
        daemon_proc.terminate()
        daemon_proc.wait(timeout=10)
        rc = p.wait(timeout=10)
        err = p.stderr.read().decode('utf-8')
        r.check(rc == 3, 'monitor: lost bus → exit 3', f'{rc} {err!r}')
    finally:
        stop(p, signal.SIGKILL)



def stop_processes(procs):
    """Ends the processes this script started (by PID), newest first."""
    for p in reversed(procs):
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 64
    ctl_path = os.path.abspath(sys.argv[1])
    try:
        import dbus  # pylint: disable=import-outside-toplevel
        import dbusmock  # noqa: F401 pylint: disable=import-outside-toplevel,unused-import
    except ImportError as e:
        print(f'SKIP: {e} (install python3-dbusmock)')
        return 77
    daemon_bin = shutil.which('dbus-daemon')
    if daemon_bin is None:
        print('SKIP: dbus-daemon not found')
        return 77

    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(HARD_TIMEOUT_S)
    r = Results()
    procs = []
    tmp = tempfile.mkdtemp(prefix='memqosctl-bus-')
    mock_log_path = os.path.join(tmp, 'mock.log')
    try:
        conf = os.path.join(tmp, 'bus.conf')
        with open(conf, 'w', encoding='utf-8') as f:
            f.write(BUS_CONFIG.format(socket=os.path.join(tmp, 'bus')))
        daemon = subprocess.Popen([daemon_bin, '--config-file', conf, '--print-address=1',
                                   '--nofork'], stdout=subprocess.PIPE)
        procs.append(daemon)
        address = read_line(daemon.stdout, 10).strip()
        if not address:
            print('FAIL: dbus-daemon printed no address')
            return 1
        print(f'private bus: {address} (dbus-daemon pid {daemon.pid})', flush=True)
        ctl = Ctl(ctl_path, address)
        bus = dbus.bus.BusConnection(address)

        test_unreachable_and_usage(r, ctl, tmp)
        test_not_running(r, ctl)

        env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address)
        with open(mock_log_path, 'w', encoding='utf-8') as mock_log:
            mock_proc = subprocess.Popen(
                # -m: /org/memqos1 is an ObjectManager, as memqosd's (top reads it)
                ['/usr/bin/python3', '-m', 'dbusmock', '--session', '-m', 'org.memqos1',
                 '/org/memqos1', 'org.memqos1.Manager'], env=env, stdout=mock_log,
                stderr=subprocess.STDOUT)
        procs.append(mock_proc)
        if not r.check(wait_for_name(bus, 'org.memqos1'), 'dbusmock owns org.memqos1'):
            return 1
        mock = setup_mock(bus)

        test_status(r, ctl, mock)
        test_status_id_and_show(r, ctl)
        test_classes(r, ctl)
        test_workloads(r, ctl)
        test_top(r, ctl)
        test_top_terminal(r, ctl, mock_log_path)
        test_conventions(r, ctl)
        test_legend_quiet(r, ctl)
        test_pager_and_colors(r, ctl, tmp)
        test_json_keys_are_dbus_names(r, ctl, mock)
        test_assign_run(r, ctl, mock)
        test_placement(r, ctl, mock)
        test_instances(r, ctl, mock)
        test_placement_options(r, ctl, mock)
        test_verify_reload(r, ctl, mock)
        test_monitor(r, ctl, mock)
        test_monitor_daemon_leaves(r, ctl, mock_proc, bus)
        bus.close()
        test_monitor_bus_dies(r, ctl, daemon)
    except Exception:  # pylint: disable=broad-except
        traceback.print_exc()
        r.failed.append('exception')
    finally:
        signal.alarm(0)
        stop_processes(procs)
        if r.failed and os.path.exists(mock_log_path):
            with open(mock_log_path, encoding='utf-8', errors='replace') as f:
                print('--- dbusmock log ---\n' + f.read())
        shutil.rmtree(tmp, ignore_errors=True)

    print(f'{r.passed} passed, {len(r.failed)} failed')
    return 1 if r.failed else 0


if __name__ == '__main__':
    sys.exit(main())

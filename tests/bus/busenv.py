# SPDX-License-Identifier: Apache-2.0
"""A private system-like bus, a fake PID 1 and memqosd, for the bus suite and
the bus benchmark.

BusEnv(tmp, source_dir) writes a dbus-daemon configuration of type "system"
that includes OUR dbus/org.memqos1.conf (so the real policy is what is
tested) plus a policy letting root own org.freedesktop.systemd1, starts that
dbus-daemon, the fake PID 1 of tests/support/fake_systemd.py on it (unknown
units load as "not-found" and transient units become active in their slice,
as with real systemd), fixture cgroup and proc roots,
and runs memqosd from the build tree. Every process is stopped by the PID
this module started (and gets SIGTERM from the kernel if the caller dies:
PR_SET_PDEATHSIG).
"""

import ctypes
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'support'))
import fake_systemd  # noqa: E402 pylint: disable=wrong-import-position
from fake_systemd import MANAGER, MANAGER_PATH, MOCK, SYSTEMD  # noqa: E402,F401

MEMQOS = 'org.memqos1'

BUS_CONFIG = '''<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <!-- like /usr/share/dbus-1/system.conf: deny by default -->
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Properties"/>
    <deny send_destination="org.freedesktop.DBus"
          send_interface="org.freedesktop.DBus"
          send_member="UpdateActivationEnvironment"/>
    <deny send_destination="org.freedesktop.DBus"
          send_interface="org.freedesktop.DBus.Debug.Stats"/>
  </policy>
  <!-- root may monitor the bus, as in system.conf -->
  <policy user="root">
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Monitoring"/>
  </policy>
  <!-- the fake PID 1 -->
  <policy user="root">
    <allow own="org.freedesktop.systemd1"/>
    <allow send_destination="org.freedesktop.systemd1"/>
  </policy>
  <include>{memqos_conf}</include>
{extra}</busconfig>
'''

# BusEnv.set_open_policy(True): lets everyone call org.memqos1, so that a
# check reaches memqosd's own authorization (the bus policy is the other wall).
OPEN_POLICY = '''  <policy context="mandatory">
    <allow send_destination="org.memqos1"/>
  </policy>
'''

# name -> (Unit properties to change, {interface: {property: value}})
UNITS = {
    'nginx.service': ({'ActiveState': 'active'},
                      {'org.freedesktop.systemd1.Service':
                       {'ControlGroup': '/system.slice/nginx.service'}}),
    'postgres.service': ({'ActiveState': 'active'},
                         {'org.freedesktop.systemd1.Service':
                          {'ControlGroup': '/system.slice/postgres.service'}}),
    'ghost.service': ({'LoadState': 'not-found', 'ActiveState': 'inactive'}, {}),
    'system.slice': ({'ActiveState': 'active'},
                     {'org.freedesktop.systemd1.Slice': {'ControlGroup': '/system.slice'}}),
    'memqos.slice': ({'ActiveState': 'active'},
                     {'org.freedesktop.systemd1.Slice': {'ControlGroup': '/memqos.slice'}}),
}
for _cls in ('system', 'dedicated', 'shared', 'reclaimed'):
    UNITS[f'memqos-{_cls}.slice'] = (
        {'ActiveState': 'active'},
        {'org.freedesktop.systemd1.Slice': {'ControlGroup': f'/memqos.slice/memqos-{_cls}.slice'}})

CGROUP_FILES = {
    'memory.current': '104857600\n',
    'memory.min': '0\n',
    'memory.low': '0\n',
    'memory.high': 'max\n',
    'memory.max': 'max\n',
    'memory.swap.current': '0\n',
    'memory.swap.max': 'max\n',
    'cgroup.procs': '',
    'memory.pressure': ('some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n'
                        'full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n'),
}


def die_with_parent():
    """preexec_fn: SIGTERM the child when the caller dies, even by SIGKILL."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG


def stop(proc, name, sig=signal.SIGTERM):
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)  # by PID
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        print(f'{name} (pid {proc.pid}) ignored signal {sig}, killing', file=sys.stderr)
        proc.kill()
        proc.wait(timeout=5)


def read_address(daemon, deadline):
    line = b''
    while not line.endswith(b'\n'):
        left = deadline - time.monotonic()
        if left <= 0:
            raise RuntimeError('dbus-daemon did not print its address')
        ready, _, _ = select.select([daemon.stdout], [], [], left)
        if not ready:
            continue
        chunk = os.read(daemon.stdout.fileno(), 4096)
        if not chunk:
            raise RuntimeError(f'dbus-daemon exited with {daemon.wait()}')
        line += chunk
    return line.decode().strip()


class InotifyAccess:
    """Counts the reads of files that returned data (inotify IN_ACCESS), per
    path: `with InotifyAccess(paths) as w: ...; w.drain()` -> {path: count}
    since the last drain."""

    IN_ACCESS = 0x00000001
    IN_NONBLOCK = 0o4000

    def __init__(self, paths):
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._fd = self._libc.inotify_init1(self.IN_NONBLOCK)
        if self._fd < 0:
            raise OSError(ctypes.get_errno(), 'inotify_init1')
        self._paths = {}
        for p in paths:
            wd = self._libc.inotify_add_watch(self._fd, p.encode(), self.IN_ACCESS)
            if wd < 0:
                os.close(self._fd)
                raise OSError(ctypes.get_errno(), f'inotify_add_watch {p}')
            self._paths[wd] = p

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        os.close(self._fd)

    def drain(self):
        counts = {}
        while True:
            try:
                buf = os.read(self._fd, 65536)
            except BlockingIOError:
                return counts
            off = 0
            while off + 16 <= len(buf):
                wd, mask, _cookie, size = struct.unpack_from('iIII', buf, off)
                if mask & self.IN_ACCESS and wd in self._paths:
                    counts[self._paths[wd]] = counts.get(self._paths[wd], 0) + 1
                off += 16 + size


def make_cgroup(root, rel, current=104857600):
    d = os.path.join(root, rel)
    os.makedirs(d, exist_ok=True)
    for name, text in CGROUP_FILES.items():
        with open(os.path.join(d, name), 'w', encoding='utf-8') as f:
            f.write(f'{current}\n' if name == 'memory.current' else text)
    with open(os.path.join(d, 'memory.stat'), 'w', encoding='utf-8') as f:
        f.write('anon 52428800\nfile 52428800\nkernel 0\nshmem 0\n'
                'file_mapped 0\nfile_dirty 0\nfile_writeback 0\n'
                'inactive_anon 0\nactive_anon 52428800\ninactive_file 26214400\n'
                'active_file 26214400\nunevictable 0\npgscan 0\npgsteal 0\n'
                'pgmajfault 0\nworkingset_refault_anon 0\nworkingset_refault_file 0\n')


def ganeti_env(source_dir, name, **changes):
    """A recorded Ganeti hook environment (tests/fixtures/ganeti/env/NAME,
    KEY=VALUE lines, '#' comments) as a dict; keyword arguments change
    variables, None removes one."""
    env = {}
    path = os.path.join(source_dir, 'tests', 'fixtures', 'ganeti', 'env', name)
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.rstrip('\n')
            if line and not line.startswith('#') and '=' in line:
                key, value = line.split('=', 1)
                env[key] = value
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


class BusEnv:
    """Everything one test run needs; stop() is safe on every path."""

    def __init__(self, tmp, source_dir, memqosd=None):
        self.tmp = tmp
        self.source_dir = source_dir
        self.memqosd = memqosd
        self.bus = self.mock = self.daemon = None
        self.daemon_log = os.path.join(tmp, 'memqosd.log')
        self.mock_log = os.path.join(tmp, 'dbusmock.log')
        self.bus_log = os.path.join(tmp, 'dbus-daemon.log')
        self.address = None
        self.conn = None
        self.cgroup_root = os.path.join(tmp, 'cgroup')
        self.proc_root = os.path.join(tmp, 'proc')
        self.state_dir = os.path.join(tmp, 'state')
        self.config = os.path.join(tmp, 'memqosd.conf')

    # ---- bus and mock --------------------------------------------------------
    def write_bus_config(self, open_policy=False, service_dir=None):
        config = os.path.join(self.tmp, 'bus.conf')
        extra = OPEN_POLICY if open_policy else ''
        if service_dir is not None:
            extra += f'  <servicedir>{service_dir}</servicedir>\n'
        with open(config + '.new', 'w', encoding='utf-8') as f:
            f.write(BUS_CONFIG.format(
                socket=os.path.join(self.tmp, 'bus'),
                memqos_conf=os.path.abspath(os.path.join(self.source_dir, 'dbus',
                                                         'org.memqos1.conf')),
                extra=extra))
        os.replace(config + '.new', config)
        return config

    def set_open_policy(self, open_policy):
        """Rewrites the bus configuration with or without OPEN_POLICY and has
        dbus-daemon reload it (ReloadConfig answers once it is in force)."""
        self.write_bus_config(open_policy)
        self.reload_bus_config()

    def set_activation(self, service_dir):
        """Rewrites the bus configuration with (or, given None, without) a
        <servicedir> for bus activation, and has dbus-daemon reload it."""
        self.write_bus_config(service_dir=service_dir)
        self.reload_bus_config()

    def reload_bus_config(self):
        self.conn.call_blocking('org.freedesktop.DBus', '/org/freedesktop/DBus',
                                'org.freedesktop.DBus', 'ReloadConfig', '', [])

    def start_bus(self, timeout=15):
        deadline = time.monotonic() + timeout
        os.chmod(self.tmp, 0o755)  # uid 65534 must reach the socket
        config = self.write_bus_config()
        # Its stderr (a line per call its policy rejects) to a file: dump_logs.
        with open(self.bus_log, 'ab') as log:
            self.bus = subprocess.Popen(  # pylint: disable=consider-using-with
                ['dbus-daemon', '--config-file=' + config, '--nofork', '--print-address=1'],
                stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL,
                preexec_fn=die_with_parent)
        self.address = read_address(self.bus, deadline)

        self.mock = fake_systemd.start(self.address, self.mock_log, die_with_parent)
        import dbus  # pylint: disable=import-outside-toplevel
        self.conn = dbus.bus.BusConnection(self.address)
        fake_systemd.wait_for_name(self.conn, self.mock, deadline)
        fake_systemd.configure(self.conn, UNITS, unknown_units='load', transient='adopt')

    def mock_iface(self):
        import dbus  # pylint: disable=import-outside-toplevel
        return dbus.Interface(self.conn.get_object(SYSTEMD, MANAGER_PATH), MOCK)

    def calls(self, method=None):
        """The mock Manager's call log: [(method, args)] in order."""
        if method is not None:
            return [(method, args) for _ts, args in self.mock_iface().GetMethodCalls(method)]
        return [(str(name), args) for _ts, name, args in self.mock_iface().GetCalls()]

    def clear_calls(self):
        self.mock_iface().ClearCalls()

    def emit(self, member, signature, args):
        self.mock_iface().EmitSignal(MANAGER, member, signature, args)

    # ---- fixtures and memqosd ------------------------------------------------
    def make_fixtures(self, config_text=''):
        os.makedirs(self.cgroup_root, exist_ok=True)
        with open(os.path.join(self.cgroup_root, 'cgroup.controllers'), 'w',
                  encoding='utf-8') as f:
            f.write('cpuset cpu io memory pids\n')
        make_cgroup(self.cgroup_root, 'system.slice', 1073741824)
        make_cgroup(self.cgroup_root, 'system.slice/nginx.service')
        make_cgroup(self.cgroup_root, 'system.slice/postgres.service')
        make_cgroup(self.cgroup_root, 'memqos.slice', 0)
        for cls in ('system', 'dedicated', 'shared', 'reclaimed'):
            make_cgroup(self.cgroup_root, f'memqos.slice/memqos-{cls}.slice', 0)
        shutil.copytree(os.path.join(self.source_dir, 'tests', 'fixtures', 'proc', 'normal'),
                        self.proc_root, dirs_exist_ok=True)
        os.makedirs(self.state_dir, exist_ok=True)
        self.write_config(config_text)

    def write_config(self, text):
        tmp = self.config + '.new'
        with open(tmp, 'w', encoding='utf-8') as f:
            f.write(text)
        os.chown(tmp, 0, 0)
        os.chmod(tmp, 0o644)
        os.replace(tmp, self.config)

    def daemon_args(self):
        return [self.memqosd, '--config', self.config, '--cgroup-root', self.cgroup_root,
                '--proc-root', self.proc_root, '--state-dir', self.state_dir,
                '--bus-address', self.address]

    def start_daemon(self, timeout=20):
        env = dict(os.environ)
        env.pop('NOTIFY_SOCKET', None)
        env.pop('WATCHDOG_USEC', None)
        log = open(self.daemon_log, 'ab')  # pylint: disable=consider-using-with
        log.write(b'---- memqosd start ----\n')
        log.flush()
        self.daemon = subprocess.Popen(  # pylint: disable=consider-using-with
            self.daemon_args(), env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            preexec_fn=die_with_parent)
        log.close()
        deadline = time.monotonic() + timeout
        while not self.conn.name_has_owner(MEMQOS):
            if self.daemon.poll() is not None:
                raise RuntimeError(f'memqosd exited with {self.daemon.returncode}')
            if time.monotonic() > deadline:
                raise RuntimeError(f'{MEMQOS} did not appear on the bus in {timeout} s')
            time.sleep(0.05)

    def kill_daemon(self, sig=signal.SIGKILL):
        """Stops memqosd (by its PID) and waits until its name is gone."""
        stop(self.daemon, 'memqosd', sig)
        deadline = time.monotonic() + 10
        while self.conn.name_has_owner(MEMQOS) and time.monotonic() < deadline:
            time.sleep(0.05)

    def daemon_stderr(self):
        try:
            with open(self.daemon_log, encoding='utf-8', errors='replace') as f:
                return f.read()
        except OSError:
            return ''

    def dump_logs(self, out=sys.stderr):
        for path in (self.daemon_log, self.mock_log, self.mock_log + '.out', self.bus_log):
            if os.path.exists(path):
                print(f'---- {os.path.basename(path)} ----', file=out)
                with open(path, encoding='utf-8', errors='replace') as f:
                    out.write(f.read()[-20000:])

    def stop(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # pylint: disable=broad-except
                pass
            self.conn = None
        stop(self.daemon, 'memqosd')
        stop(self.mock, 'dbusmock')
        stop(self.bus, 'dbus-daemon')

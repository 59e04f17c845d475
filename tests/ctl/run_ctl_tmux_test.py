#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""memqosctl top in a real terminal emulator: tmux, against the fake memqosd of
run_ctl_bus_test.py on a private bus.

What a pseudo-terminal test cannot see, tmux's screen shows: that a frame cut
to the window's height leaves its first line on the screen (no scrolling),
that each frame replaces the last, that keys reach top (p sorts by name, m by
memory, q quits with 0), and that the terminal is back in canonical mode
with echo once top exits. tmux runs on its own socket in a temporary
directory and is killed with it. Exit 77 (skipped) without tmux, dbus-daemon
or python3-dbusmock.

Usage: run_ctl_tmux_test.py PATH/TO/memqosctl
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_ctl_bus_test as bus_test  # noqa: E402 pylint: disable=wrong-import-position

HARD_TIMEOUT_S = 100


class Tmux:
    def __init__(self, tmp):
        self.socket = os.path.join(tmp, 'tmux.sock')
        self.env = {k: v for k, v in os.environ.items() if not k.startswith('TMUX')}
        self.env.update({'LC_ALL': 'C.UTF-8', 'TZ': 'UTC'})
        for k in ('NO_COLOR', 'SYSTEMD_COLORS', 'PAGER', 'SYSTEMD_PAGER'):
            self.env.pop(k, None)

    def run(self, *args):
        return subprocess.run(['tmux', '-S', self.socket, '-f', '/dev/null', *args],
                              capture_output=True, text=True, env=self.env, timeout=20,
                              check=False)

    def start(self, name, rows, command):
        return self.run('new-session', '-d', '-s', name, '-x', '100', '-y', str(rows),
                        command)

    def screen(self, name):
        r = self.run('capture-pane', '-p', '-t', name)
        return r.stdout.splitlines() if r.returncode == 0 else []

    def wait(self, name, pred, timeout=15.0):
        deadline = time.monotonic() + timeout
        lines = []
        while time.monotonic() < deadline:
            lines = self.screen(name)
            if pred(lines):
                return True, lines
            time.sleep(0.1)
        return False, lines

    def keys(self, name, *keys):
        return self.run('send-keys', '-t', name, *keys)

    def kill(self):
        self.run('kill-server')


def first_workload(lines):
    try:
        at = next(i for i, line in enumerate(lines) if line.startswith('WORKLOAD '))
    except StopIteration:
        return None
    row = lines[at + 1].split() if at + 1 < len(lines) else []
    return row[0] if row else None


def test_top(r, t, ctl_path, address):
    shell_tail = '; echo EXIT=$?; stty -a | tr " ;" "\\n\\n" | grep -E -x -e "-?(icanon|echo)"; ' \
                 'sleep 60'
    top = f'{ctl_path} --bus-address {address} top --delay 30'
    r.check(t.start('keys', 30, top + shell_tail).returncode == 0, 'tmux: a session for top')
    ok, lines = t.wait('keys', lambda ls: first_workload(ls) is not None)
    r.check(ok and lines[:1] and lines[0].startswith('Pressure level:'),
            'top in tmux: the frame from the top of the screen', '\n'.join(lines))
    r.check(first_workload(lines) == 'vm:web1', 'top in tmux: by memory at first',
            '\n'.join(lines))
    r.check(sum(1 for line in lines if line.startswith('Pressure level:')) == 1,
            'top in tmux: one frame on the screen', '\n'.join(lines))
    t.keys('keys', 'p')
    ok, lines = t.wait('keys', lambda ls: first_workload(ls) == 'nginx.service')
    r.check(ok and sum(1 for line in lines if line.startswith('Pressure level:')) == 1,
            'top in tmux: p sorts by name, redrawn in place', '\n'.join(lines))
    t.keys('keys', 'm')
    ok, lines = t.wait('keys', lambda ls: first_workload(ls) == 'vm:web1')
    r.check(ok, 'top in tmux: m sorts by memory again', '\n'.join(lines))
    t.keys('keys', 'q')
    ok, lines = t.wait('keys', lambda ls: any(line.startswith('EXIT=') for line in ls)
                       and any('icanon' in line for line in ls))
    r.check(ok and 'EXIT=0' in lines, 'top in tmux: q quits with 0', '\n'.join(lines))
    r.check('icanon' in lines and 'echo' in lines,
            'top in tmux: the terminal is back in canonical mode with echo', '\n'.join(lines))

    r.check(t.start('small', 10, top + shell_tail).returncode == 0, 'tmux: a 10-row session')
    ok, lines = t.wait('small', lambda ls: any('more lines' in line for line in ls))
    shown = [line for line in lines if line.strip()]
    r.check(ok and lines[:1] and lines[0].startswith('Pressure level:')
            and shown[-1].startswith('(') and 'more lines: a taller window shows them)'
            in shown[-1] and len(lines) <= 10,
            'top in a 10-row tmux window: cut to fit, its first line still on the screen',
            '\n'.join(lines))
    t.keys('small', 'C-c')
    ok, lines = t.wait('small', lambda ls: any(line.startswith('EXIT=') for line in ls))
    r.check(ok and 'EXIT=0' in lines, 'top in tmux: ^C ends it with 0', '\n'.join(lines))


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 64
    ctl_path = os.path.abspath(sys.argv[1])
    if shutil.which('tmux') is None:
        print('SKIP: tmux not found (tools/install-deps installs it)')
        return 77
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

    signal.signal(signal.SIGALRM, bus_test.on_alarm)
    signal.alarm(HARD_TIMEOUT_S)
    r = bus_test.Results()
    procs = []
    tmp = tempfile.mkdtemp(prefix='memqosctl-tmux-')
    t = Tmux(tmp)
    try:
        conf = os.path.join(tmp, 'bus.conf')
        with open(conf, 'w', encoding='utf-8') as f:
            f.write(bus_test.BUS_CONFIG.format(socket=os.path.join(tmp, 'bus')))
        daemon = subprocess.Popen([daemon_bin, '--config-file', conf, '--print-address=1',
                                   '--nofork'], stdout=subprocess.PIPE)
        procs.append(daemon)
        address = bus_test.read_line(daemon.stdout, 10).strip()
        if not address:
            print('FAIL: dbus-daemon printed no address')
            return 1
        bus = dbus.bus.BusConnection(address)
        env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address)
        with open(os.path.join(tmp, 'mock.log'), 'w', encoding='utf-8') as mock_log:
            procs.append(subprocess.Popen(
                ['/usr/bin/python3', '-m', 'dbusmock', '--session', '-m', 'org.memqos1',
                 '/org/memqos1', 'org.memqos1.Manager'], env=env, stdout=mock_log,
                stderr=subprocess.STDOUT))
        if not r.check(bus_test.wait_for_name(bus, 'org.memqos1'), 'dbusmock owns org.memqos1'):
            return 1
        bus_test.setup_mock(bus)
        test_top(r, t, ctl_path, address)
        bus.close()
    except Exception:  # pylint: disable=broad-except
        traceback.print_exc()
        r.failed.append('exception')
    finally:
        signal.alarm(0)
        t.kill()
        bus_test.stop_processes(procs)
        shutil.rmtree(tmp, ignore_errors=True)

    print(f'{r.passed} passed, {len(r.failed)} failed')
    return 1 if r.failed else 0


if __name__ == '__main__':
    sys.exit(main())

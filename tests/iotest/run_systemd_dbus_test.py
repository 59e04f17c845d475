#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Runs a test program against a fake PID 1 on a private bus.

Starts a private dbus-daemon (its own config, socket in a temp dir) and
python-dbusmock's systemd template on it as org.freedesktop.systemd1, adds the
Manager methods the template lacks (LoadUnit, SetUnitProperties, KillUnit,
ListUnits, Subscribe, and a StartTransientUnit that is logged), a few units
with their properties, then runs

    TEST_PROGRAM [ARGS...]

with MEMQOS_TEST_BUS_ADDRESS set to the bus address. The program asserts the
calls itself with the mock's GetMethodCalls. Test hooks on the mock object
(interface org.memqos1.Test): SetFailure(method, error_name, message) makes the
next call of `method` fail with that D-Bus error; ClearFailures(); Reconnect()
(release org.freedesktop.systemd1 and take it again, as daemon-reexec does).

Exit status: the program's, or 1 if the bus could not be set up, or 124 on the
hard timeout. dbus-daemon and the mock are stopped by PID on every path out
(they also get SIGTERM from the kernel if this script dies: PR_SET_PDEATHSIG).
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HARD_TIMEOUT_S = 100  # below the meson test timeout (120 s)
SETUP_TIMEOUT_S = 15

# Names, process hygiene and the bus address handshake are shared with the
# bus suite.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bus'))
from busenv import (MANAGER, MANAGER_PATH, MOCK, SYSTEMD, UNIT,  # noqa: E402
                    die_with_parent, read_address, stop)

TEST_IFACE = 'org.memqos1.Test'

BUS_CONFIG = '''<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
  </policy>
</busconfig>
'''

# Every mocked method starts with this: a failure injected with SetFailure
# is raised once.
PRELUDE = '''
failure = self.__dict__.setdefault('memqos_failures', {{}}).pop('{name}', None)
if failure is not None:
    raise dbus.exceptions.DBusException(failure[1], name=failure[0])
'''

NO_SUCH_UNIT = '''
if str(args[0]) not in self.units:
    raise dbus.exceptions.DBusException('Unit %s not found.' % args[0],
                                        name='org.freedesktop.systemd1.NoSuchUnit')
'''

METHODS = [
    # (name, in, out, code)
    ('Subscribe', '', '', ''),
    # Real systemd loads a unit it has no file for (LoadState not-found); the
    # mock knows only its units and fails like GetUnit for others, which is
    # how the tests reach the error path.
    ('LoadUnit', 's', 'o', NO_SUCH_UNIT + 'ret = dbus.ObjectPath(self.units[str(args[0])])'),
    ('SetUnitProperties', 'sba(sv)', '', NO_SUCH_UNIT),
    ('KillUnit', 'ssi', '', NO_SUCH_UNIT),
    ('ListUnits', '', 'a(ssssssouso)', '''
ret = []
for name, path in sorted(self.units.items()):
    p = objects[path].props['org.freedesktop.systemd1.Unit']
    ret.append((name, 'mock unit', p['LoadState'], p['ActiveState'], 'running', '',
                dbus.ObjectPath(path), dbus.UInt32(0), '', dbus.ObjectPath('/')))
'''),
    # Replaces the template's (which is not in the call log): queues a job
    # that "finishes" at once, as JobRemoved(..., "done") tells. A name the
    # mock already knows is refused with UnitExists, as systemd refuses a
    # loaded unit.
    ('StartTransientUnit', 'ssa(sv)a(sa(sv))', 'o', '''
if str(args[0]) in self.units:
    raise dbus.exceptions.DBusException(
        'Unit %s was already loaded or has a fragment file.' % args[0],
        name='org.freedesktop.systemd1.UnitExists')
self.next_job_id += 1
job = dbus.ObjectPath('/org/freedesktop/systemd1/job/%d' % self.next_job_id)
self.EmitSignal('org.freedesktop.systemd1.Manager', 'JobRemoved', 'uoss',
                [dbus.UInt32(self.next_job_id), job, args[0], 'done'])
ret = job
'''),
]

TEST_METHODS = [
    ('SetFailure', 'sss', '',
     "self.__dict__.setdefault('memqos_failures', {})[str(args[0])] = (str(args[1]), str(args[2]))"),
    ('ClearFailures', '', '', "self.__dict__['memqos_failures'] = {}"),
    # systemd leaving the bus and joining it again, as on daemon-reexec: the
    # bus sends NameOwnerChanged(name, owner, '') then (name, '', owner).
    ('Reconnect', '', '',
     "self.connection.release_name('org.freedesktop.systemd1'); "
     "self.connection.request_name('org.freedesktop.systemd1')"),
]

# name -> (Unit properties to change, {interface: {property: value}})
UNITS = {
    'nginx.service': ({'ActiveState': 'active'},
                      {'org.freedesktop.systemd1.Service':
                       {'ControlGroup': '/system.slice/nginx.service'}}),
    # A unit systemd has no file for: no ControlGroup property at all.
    'ghost.service': ({'LoadState': 'not-found'}, {}),
    'session-1.scope': ({'ActiveState': 'active'},
                        {'org.freedesktop.systemd1.Scope':
                         {'ControlGroup': '/user.slice/session-1.scope'}}),
    'memqos-shared.slice': ({'ActiveState': 'active'},
                            {'org.freedesktop.systemd1.Slice':
                             {'ControlGroup': '/memqos.slice/memqos-shared.slice'}}),
    'dbus.socket': ({'ActiveState': 'active'}, {}),
}


class HardTimeout(Exception):
    pass


def wait_for_name(conn, mock, deadline):
    while not conn.name_has_owner(SYSTEMD):
        if mock.poll() is not None:
            raise RuntimeError(f'dbusmock exited with {mock.returncode}')
        if time.monotonic() > deadline:
            raise RuntimeError(f'{SYSTEMD} did not appear on the bus')
        time.sleep(0.05)


def configure(conn):
    import dbus  # pylint: disable=import-outside-toplevel
    manager = conn.get_object(SYSTEMD, MANAGER_PATH)
    mock = dbus.Interface(manager, MOCK)
    mock.AddMethods(MANAGER, [(name, ins, outs, PRELUDE.format(name=name) + code)
                              for name, ins, outs, code in METHODS])
    mock.AddMethods(TEST_IFACE, TEST_METHODS)
    for name, (unit_props, extra) in UNITS.items():
        mock.AddMockUnit(name)
        path = manager.GetUnit(name, dbus_interface=MANAGER)
        unit = dbus.Interface(conn.get_object(SYSTEMD, path), MOCK)
        unit.UpdateProperties(UNIT, unit_props)
        for interface, props in extra.items():
            unit.AddProperties(interface, props)
    mock.ClearCalls()


def main(argv):
    if len(argv) < 2:
        print(f'usage: {argv[0]} TEST_PROGRAM [ARGS...]', file=sys.stderr)
        return 2

    def on_alarm(_signum, _frame):
        raise HardTimeout()

    def on_term(signum, _frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGALRM, on_alarm)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    signal.alarm(HARD_TIMEOUT_S)

    tmp = tempfile.mkdtemp(prefix='memqos-bus-test-')
    daemon = mock = test = None
    mock_log = os.path.join(tmp, 'dbusmock.log')
    status = 1
    try:
        config = os.path.join(tmp, 'bus.conf')
        with open(config, 'w', encoding='utf-8') as f:
            f.write(BUS_CONFIG.format(socket=os.path.join(tmp, 'bus')))
        deadline = time.monotonic() + SETUP_TIMEOUT_S
        daemon = subprocess.Popen(  # pylint: disable=consider-using-with
            ['dbus-daemon', '--config-file=' + config, '--nofork', '--print-address=1'],
            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)
        address = read_address(daemon, deadline)

        env = dict(os.environ)
        env['DBUS_SYSTEM_BUS_ADDRESS'] = address
        env.pop('DBUS_SESSION_BUS_ADDRESS', None)
        with open(mock_log + '.out', 'wb') as out:
            mock = subprocess.Popen(  # pylint: disable=consider-using-with
                ['/usr/bin/python3', '-m', 'dbusmock', '--template', 'systemd', '--system',
                 '-l', mock_log],
                env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                preexec_fn=die_with_parent)

        import dbus  # pylint: disable=import-outside-toplevel
        conn = dbus.bus.BusConnection(address)
        wait_for_name(conn, mock, deadline)
        configure(conn)
        conn.close()

        env = dict(os.environ)
        env['MEMQOS_TEST_BUS_ADDRESS'] = address
        test = subprocess.Popen(argv[1:], env=env,  # pylint: disable=consider-using-with
                                stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)
        status = test.wait()
        if status != 0:
            for path in (mock_log, mock_log + '.out'):
                if os.path.exists(path):
                    print(f'---- {os.path.basename(path)} ----', file=sys.stderr)
                    with open(path, encoding='utf-8', errors='replace') as f:
                        sys.stderr.write(f.read())
    except HardTimeout:
        print(f'{argv[0]}: hard timeout ({HARD_TIMEOUT_S} s)', file=sys.stderr)
        status = 124
    except Exception as e:  # pylint: disable=broad-except
        # Setup failures (dbus-daemon, dbusmock, configuration) end the run
        # with a message instead of a traceback; cleanup follows.
        print(f'{argv[0]}: {e}', file=sys.stderr)
        status = 1
    finally:
        signal.alarm(0)
        stop(test, 'test program')
        stop(mock, 'dbusmock')
        stop(daemon, 'dbus-daemon')
        shutil.rmtree(tmp, ignore_errors=True)
    return status


if __name__ == '__main__':
    sys.exit(main(sys.argv))

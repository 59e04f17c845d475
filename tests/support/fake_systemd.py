# SPDX-License-Identifier: Apache-2.0
"""The fake PID 1 of the Python harnesses: python-dbusmock's systemd template
as org.freedesktop.systemd1 on a given bus, with the Manager methods that
memqos's SystemdDbus calls and the template lacks, and the units a harness
asks for. One module for tests/bus/busenv.py (memqosd against it) and
tests/iotest/run_systemd_dbus_test.py (the SystemdDbus client alone).

    mock = fake_systemd.start(address, log_path, preexec_fn)
    conn = dbus.bus.BusConnection(address)
    fake_systemd.wait_for_name(conn, mock, deadline)
    fake_systemd.configure(conn, units, unknown_units=..., transient=...)

Manager methods (every one in the mock's call log): Subscribe, Unsubscribe,
LoadUnit, SetUnitProperties (fails NoSuchUnit for a unit the fake does not
know), KillUnit, Reload (answers, then emits Reloading(false) as systemd's
daemon-reload does), ListUnits and StartTransientUnit (a job that "finishes"
at once, as JobRemoved(..., "done") tells). Two behaviours differ between the
harnesses and are chosen by configure():

- unknown_units='load': like real systemd, LoadUnit of a unit it has no file
  for loads it with LoadState "not-found" (memqosd's view of the host);
  'fail': LoadUnit and KillUnit of an unknown unit fail NoSuchUnit, as GetUnit
  does (how the client tests reach their error paths).
- transient='adopt': StartTransientUnit makes the unit known and active, with
  a ControlGroup in its Slice= (memqos-*.slice under /memqos.slice);
  'refuse-known': a name the fake already knows is refused with UnitExists,
  as systemd refuses a loaded unit, and nothing is added.

Test hooks on the Manager object (interface org.memqos1.Test):
SetFailure(method, error_name, message) makes the next call of that Manager
method fail with that D-Bus error; ClearFailures(); Reconnect() (release
org.freedesktop.systemd1 and take it again, as daemon-reexec does).
"""

import os
import subprocess
import time

SYSTEMD = 'org.freedesktop.systemd1'
MANAGER_PATH = '/org/freedesktop/systemd1'
MANAGER = 'org.freedesktop.systemd1.Manager'
UNIT = 'org.freedesktop.systemd1.Unit'
MOCK = 'org.freedesktop.DBus.Mock'
TEST_IFACE = 'org.memqos1.Test'

# Every mocked Manager method starts with this: a failure injected with
# SetFailure is raised once.
_PRELUDE = '''
failure = self.__dict__.setdefault('memqos_failures', {{}}).pop('{name}', None)
if failure is not None:
    raise dbus.exceptions.DBusException(failure[1], name=failure[0])
'''

_NO_SUCH_UNIT = '''
if str(args[0]) not in self.units:
    raise dbus.exceptions.DBusException('Unit %s not found.' % args[0],
                                        name='org.freedesktop.systemd1.NoSuchUnit')
'''

_LOAD_UNIT = {
    'load': '''
name = str(args[0])
if name not in self.units:
    self.AddMockUnit(name)
    objects[self.units[name]].props['org.freedesktop.systemd1.Unit']['LoadState'] = 'not-found'
    objects[self.units[name]].props['org.freedesktop.systemd1.Unit']['ActiveState'] = 'inactive'
ret = dbus.ObjectPath(self.units[name])
''',
    'fail': _NO_SUCH_UNIT + 'ret = dbus.ObjectPath(self.units[str(args[0])])\n',
}

_JOB_DONE = '''
self.next_job_id += 1
job = dbus.ObjectPath('/org/freedesktop/systemd1/job/%d' % self.next_job_id)
self.EmitSignal('org.freedesktop.systemd1.Manager', 'JobRemoved', 'uoss',
                [dbus.UInt32(self.next_job_id), job, args[0], 'done'])
ret = job
'''

_START_TRANSIENT = {
    'adopt': '''
name = str(args[0])
if name not in self.units:
    self.AddMockUnit(name)
slice_ = 'system.slice'
for k, v in args[2]:
    if str(k) == 'Slice':
        slice_ = str(v)
cg = '/memqos.slice/' + slice_ + '/' + name if slice_.startswith('memqos-') else '/' + slice_ + '/' + name
objects[self.units[name]].props['org.freedesktop.systemd1.Unit']['ActiveState'] = 'active'
objects[self.units[name]].props.setdefault('org.freedesktop.systemd1.Service', {})['ControlGroup'] = cg
''' + _JOB_DONE,
    'refuse-known': '''
if str(args[0]) in self.units:
    raise dbus.exceptions.DBusException(
        'Unit %s was already loaded or has a fragment file.' % args[0],
        name='org.freedesktop.systemd1.UnitExists')
''' + _JOB_DONE,
}

_LIST_UNITS = '''
ret = []
for name, path in sorted(self.units.items()):
    p = objects[path].props['org.freedesktop.systemd1.Unit']
    ret.append((name, 'mock unit', p['LoadState'], p['ActiveState'], 'running', '',
                dbus.ObjectPath(path), dbus.UInt32(0), '', dbus.ObjectPath('/')))
'''

_TEST_METHODS = [
    ('SetFailure', 'sss', '',
     "self.__dict__.setdefault('memqos_failures', {})[str(args[0])] = (str(args[1]), str(args[2]))"),
    ('ClearFailures', '', '', "self.__dict__['memqos_failures'] = {}"),
    # systemd leaving the bus and joining it again, as on daemon-reexec: the
    # bus sends NameOwnerChanged(name, owner, '') then (name, '', owner).
    ('Reconnect', '', '',
     "self.connection.release_name('org.freedesktop.systemd1'); "
     "self.connection.request_name('org.freedesktop.systemd1')"),
]


def manager_methods(unknown_units, transient):
    """The mocked Manager methods, (name, in, out, code) for AddMethods."""
    methods = [
        ('Subscribe', '', '', ''),
        ('Unsubscribe', '', '', ''),
        ('LoadUnit', 's', 'o', _LOAD_UNIT[unknown_units]),
        ('SetUnitProperties', 'sba(sv)', '', _NO_SUCH_UNIT),
        ('KillUnit', 'ssi', '', _NO_SUCH_UNIT if unknown_units == 'fail' else ''),
        ('Reload', '', '',
         "self.EmitSignal('org.freedesktop.systemd1.Manager', 'Reloading', 'b', [False])\n"),
        ('ListUnits', '', 'a(ssssssouso)', _LIST_UNITS),
        # Replaces the template's, which is not in the call log.
        ('StartTransientUnit', 'ssa(sv)a(sa(sv))', 'o', _START_TRANSIENT[transient]),
    ]
    return [(name, ins, outs, _PRELUDE.format(name=name) + code)
            for name, ins, outs, code in methods]


def start(address, log_path, preexec_fn=None):
    """python-dbusmock's systemd template on the bus at `address` (as the
    system bus), its call log in `log_path` and its output in
    `log_path`.out. The caller stops the process."""
    env = dict(os.environ)
    env['DBUS_SYSTEM_BUS_ADDRESS'] = address
    env.pop('DBUS_SESSION_BUS_ADDRESS', None)
    with open(log_path + '.out', 'wb') as out:
        return subprocess.Popen(  # pylint: disable=consider-using-with
            ['/usr/bin/python3', '-m', 'dbusmock', '--template', 'systemd', '--system',
             '-l', log_path],
            env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            preexec_fn=preexec_fn)


def wait_for_name(conn, mock, deadline):
    """Until the fake owns org.freedesktop.systemd1; RuntimeError when the
    mock exited or `deadline` (time.monotonic()) passed."""
    while not conn.name_has_owner(SYSTEMD):
        if mock.poll() is not None:
            raise RuntimeError(f'dbusmock exited with {mock.returncode}')
        if time.monotonic() > deadline:
            raise RuntimeError(f'{SYSTEMD} did not appear on the bus')
        time.sleep(0.05)


def configure(conn, units, unknown_units, transient):
    """Adds the Manager methods, the test hooks and `units`
    ({name: ({Unit property: value}, {interface: {property: value}})}), then
    clears the call log."""
    import dbus  # pylint: disable=import-outside-toplevel
    manager = conn.get_object(SYSTEMD, MANAGER_PATH)
    mock = dbus.Interface(manager, MOCK)
    mock.AddMethods(MANAGER, manager_methods(unknown_units, transient))
    mock.AddMethods(TEST_IFACE, _TEST_METHODS)
    for name, (unit_props, extra) in units.items():
        mock.AddMockUnit(name)
        path = manager.GetUnit(name, dbus_interface=MANAGER)
        unit = dbus.Interface(conn.get_object(SYSTEMD, path), MOCK)
        unit.UpdateProperties(UNIT, unit_props)
        for interface, props in extra.items():
            unit.AddProperties(interface, props)
    mock.ClearCalls()

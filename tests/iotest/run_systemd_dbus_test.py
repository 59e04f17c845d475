#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Runs a test program against a fake PID 1 on a private bus.

Starts a private dbus-daemon (its own config, socket in a temp dir) and the
fake PID 1 of tests/support/fake_systemd.py on it as org.freedesktop.systemd1
(LoadUnit and KillUnit of a unit it does not know fail NoSuchUnit; a
StartTransientUnit of a known name fails UnitExists), a few units with their
properties, then runs

    TEST_PROGRAM [ARGS...]

with MEMQOS_TEST_BUS_ADDRESS set to the bus address. The program asserts the
calls itself with the mock's GetMethodCalls, and injects failures and
reconnects through the fake's test hooks (interface org.memqos1.Test:
SetFailure, ClearFailures, Reconnect; see fake_systemd.py).

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

# Process hygiene and the bus address handshake are shared with the bus
# suite, the fake PID 1 with it too.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bus'))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'support'))
import fake_systemd  # noqa: E402 pylint: disable=wrong-import-position
from busenv import die_with_parent, read_address, stop  # noqa: E402

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

        mock = fake_systemd.start(address, mock_log, die_with_parent)
        import dbus  # pylint: disable=import-outside-toplevel
        conn = dbus.bus.BusConnection(address)
        fake_systemd.wait_for_name(conn, mock, deadline)
        fake_systemd.configure(conn, UNITS, unknown_units='fail', transient='refuse-known')
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

#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""memqos-ganeti-hook against the real memqosd (build tree) on a private bus.

The bus suite's environment (tests/bus/busenv.py): a private dbus-daemon with
our policy, python-dbusmock's systemd as PID 1, memqosd on fixture roots
(MemTotal 8 GiB, NodeReserved 1 GiB: available 7 GiB). The hook runs with
--bus-address and recorded Ganeti environments (tests/fixtures/ganeti/env)
or small edits of them, and the checks read memqosd's instance record.
Also: the fallback when memqosd is gone (allow / refuse) and the hook's own
deadline when memqosd hangs (SIGSTOP).

Usage: run_hook_bus_test.py HOOK MEMQOSD SOURCE_DIR
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bus'))
import busenv  # noqa: E402  pylint: disable=wrong-import-position

MIB = 1 << 20
NODE = 'node1.example.test'


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = []

    def check(self, name, ok, detail=''):
        if ok:
            self.passed += 1
            print(f'ok {name}')
        else:
            self.failed.append(name)
            print(f'FAIL {name}: {detail}')


def main(argv):
    hook, memqosd, src = argv[1:4]
    checks = Checks()
    tmp = tempfile.mkdtemp(prefix='memqos-hook-bus.')
    env = busenv.BusEnv(tmp, src, memqosd)
    hook_conf = os.path.join(tmp, 'hook.conf')

    def run_hook(genv, conf='', timeout=30):
        with open(hook_conf, 'w', encoding='utf-8') as f:
            f.write(conf)
        os.chmod(hook_conf, 0o644)
        penv = {'PATH': '/usr/sbin:/usr/bin:/sbin:/bin'}
        penv.update(genv)
        t0 = time.monotonic()
        r = subprocess.run([hook, '--config', hook_conf, '--no-drop-ins', '--node-name', NODE,
                            '--bus-address', env.address],
                           env=penv, capture_output=True, text=True, timeout=timeout, check=False)
        return r, time.monotonic() - t0

    def record():
        import dbus  # pylint: disable=import-outside-toplevel
        mgr = dbus.Interface(env.conn.get_object(busenv.MEMQOS, '/org/memqos1'),
                             'org.memqos1.Manager')
        return {str(n): (int(a), int(b), bool(u)) for n, a, b, u in mgr.ListInstances()}

    try:
        env.start_bus()
        env.make_fixtures('')
        with open(os.path.join(env.proc_root, 'meminfo'), encoding='utf-8') as f:
            total = int(f.readline().split()[1]) * 1024
        # available = MemTotal - NodeReserved = 7 GiB
        base_conf = f'[Overcommit]\nNodeReserved={total - 7 * 1024 * MIB}\n'
        env.write_config(base_conf)
        env.start_daemon()

        # pre add (512 MiB): fits on an empty node.
        r, _ = run_hook(busenv.ganeti_env(src, 'instance-add-pre-1.env'))
        checks.check('pre add fits: exit 0', r.returncode == 0, r.stdout + r.stderr)
        # post add: recorded, up.
        r, _ = run_hook(busenv.ganeti_env(src, 'instance-add-post-1.env'))
        checks.check('post add: exit 0', r.returncode == 0, r.stdout + r.stderr)
        checks.check('post add: recorded up',
                     record().get('inst1.example.test') == (256 * MIB, 512 * MIB, True), record())
        # pre add of 7 GiB more: hard (7 GiB available, 512 MiB taken).
        big = busenv.ganeti_env(src, 'instance-add-pre-2.env', GANETI_INSTANCE_MAXMEM='7168',
                       GANETI_INSTANCE_MINMEM='7168')
        r, _ = run_hook(big)
        line = r.stdout.strip()
        checks.check('pre add too big: exit 1', r.returncode == 1, r.stdout + r.stderr)
        checks.check('refusal is one line naming instance, size and available',
                     line.count('\n') == 0 and 'inst2.example.test' in line and
                     '7.0 GiB asked' in line and 'available 7.0 GiB' in line, line)
        # refuse_soft via [Ganeti] RefuseSoft with a failover reserve.
        soft = busenv.ganeti_env(src, 'instance-add-pre-2.env', GANETI_INSTANCE_MAXMEM='6144')
        r, _ = run_hook(soft)
        checks.check('6.5 GiB of 7 with no reserve fits', r.returncode == 0, r.stdout)
        env.write_config(base_conf + 'FailoverReserve=1G\n')
        subprocess.run(['busctl', '--address=' + env.address, 'call', busenv.MEMQOS,
                        '/org/memqos1', 'org.memqos1.Manager', 'Reload'], check=True)
        r, _ = run_hook(soft)
        checks.check('soft: allowed (exit 0) with a warning line',
                     r.returncode == 0 and 'allowed with a warning' in r.stdout, r.stdout)
        r, _ = run_hook(soft, '[Ganeti]\nRefuseSoft=yes\n')
        checks.check('soft with RefuseSoft=yes: refused', r.returncode == 1 and
                     'soft violations are refused' in r.stdout, r.stdout)
        # modify pre counts the new size without the instance's own record.
        mod = busenv.ganeti_env(src, 'instance-modify-pre-1.env', GANETI_INSTANCE_MAXMEM='6144')
        r, _ = run_hook(mod)
        checks.check('modify to 6 GiB fits (own record left out)', r.returncode == 0, r.stdout)
        # post stop / rename / remove keep the record.
        run_hook(busenv.ganeti_env(src, 'instance-stop-post-1.env'))
        checks.check('post stop: down', record().get('inst1.example.test') ==
                     (256 * MIB, 512 * MIB, False), record())
        run_hook(busenv.ganeti_env(src, 'instance-rename-post-1.env',
                          GANETI_INSTANCE_NAME='inst1.example.test'))
        rec = record()
        checks.check('post rename: record moved', 'inst1.example.test' not in rec and
                     'inst1-renamed.example.test' in rec, rec)
        r, _ = run_hook(busenv.ganeti_env(src, 'instance-remove-post-1.env'))
        checks.check('post remove: forgotten', r.returncode == 0 and record() == {},
                     (r.stdout, record()))
        r, _ = run_hook(busenv.ganeti_env(src, 'instance-remove-post-1.env'))
        checks.check('post remove again: nothing to forget is fine', r.returncode == 0, r.stdout)
        # Closed admission (pressure level 1): the pre-hook names the
        # instance's class, and only a killable one is refused.
        # (DefaultClass=shared: the shipped default leaves an untagged
        # instance unplaced, which VerifyPlacement answers as before.)
        env.write_config(base_conf + '[Pressure]\nLevel1MemAvailable=99%\n[VM]\nDefaultClass=shared\n')
        subprocess.run(['busctl', '--address=' + env.address, 'call', busenv.MEMQOS,
                        '/org/memqos1', 'org.memqos1.Manager', 'Reload'], check=True)
        level = ''
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            level = subprocess.run(['busctl', '--address=' + env.address, 'get-property',
                                    busenv.MEMQOS, '/org/memqos1', 'org.memqos1.Manager',
                                    'PressureLevel'], capture_output=True, text=True,
                                   check=False).stdout.strip()
            if level == 'u 1':
                break
            time.sleep(0.2)
        checks.check('pressure level 1 with Level1MemAvailable=99%', level == 'u 1', level)
        tagged = busenv.ganeti_env(src, 'instance-failover-pre-1.env',
                                   GANETI_INSTANCE_TAGS='web memqos:class:dedicated')
        r, _ = run_hook(tagged)
        checks.check('level 1: failover of a dedicated instance (tag) allowed',
                     r.returncode == 0, r.stdout + r.stderr)
        r, _ = run_hook(busenv.ganeti_env(src, 'instance-failover-pre-1.env'))
        checks.check('level 1: failover of an untagged instance (DefaultClass shared) refused',
                     r.returncode == 1 and 'admission is closed' in r.stdout and
                     'class shared is killable' in r.stdout, r.stdout + r.stderr)
        env.write_config(base_conf)
        subprocess.run(['busctl', '--address=' + env.address, 'call', busenv.MEMQOS,
                        '/org/memqos1', 'org.memqos1.Manager', 'Reload'], check=True)
        # Other nodes do nothing, even with memqosd gone.
        other = busenv.ganeti_env(src, 'instance-add-pre-1.env', GANETI_INSTANCE_PRIMARY='node2.example.test')

        # memqosd hung: the hook's own deadline, then the fallback.
        os.kill(env.daemon.pid, signal.SIGSTOP)
        try:
            r, took = run_hook(busenv.ganeti_env(src, 'instance-add-pre-1.env'), '[Ganeti]\nHookTimeout=1s\n')
        finally:
            os.kill(env.daemon.pid, signal.SIGCONT)
        checks.check('memqosd hung: allowed after HookTimeout=1s',
                     r.returncode == 0 and 'did not answer' in r.stdout and 0.9 < took < 10,
                     f'{took:.1f}s {r.stdout}')
        # memqosd gone: allow (default) / refuse.
        env.kill_daemon(signal.SIGTERM)
        r, took = run_hook(busenv.ganeti_env(src, 'instance-add-pre-1.env'))
        checks.check('memqosd gone: allowed by default with a warning',
                     r.returncode == 0 and 'allowed instance-add of inst1.example.test' in r.stdout
                     and took < 5, f'{took:.1f}s {r.stdout}')
        r, _ = run_hook(busenv.ganeti_env(src, 'instance-add-pre-1.env'), '[Ganeti]\nWhenUnreachable=refuse\n')
        checks.check('memqosd gone, WhenUnreachable=refuse: refused',
                     r.returncode == 1 and 'refused instance-add' in r.stdout, r.stdout)
        r, _ = run_hook(other, '[Ganeti]\nWhenUnreachable=refuse\n')
        checks.check('another node: nothing to do, exit 0, no output',
                     r.returncode == 0 and r.stdout == '', r.stdout)
        r, _ = run_hook(busenv.ganeti_env(src, 'instance-stop-post-1.env'))
        checks.check('post hook with memqosd gone: exit 1 (Ganeti warns)',
                     r.returncode == 1 and 'could not record' in r.stdout, r.stdout)
        r, _ = run_hook({'GANETI_HOOKS_PATH': 'instance-add'})
        checks.check('not a Ganeti environment: exit 64', r.returncode == 64, r.stdout)
        odd = busenv.ganeti_env(src, 'instance-add-pre-1.env', GANETI_INSTANCE_MAXMEM='lots',
                       GANETI_INSTANCE_BE_maxmem='lots')
        r, _ = run_hook(odd)
        checks.check('unreadable Ganeti environment, pre: allowed with a warning (exit 0)',
                     r.returncode == 0 and 'cannot decide' in r.stdout and 'allowed' in r.stdout,
                     r.stdout)
        r, _ = run_hook(odd, '[Ganeti]\nWhenUnreachable=refuse\n')
        checks.check('unreadable Ganeti environment, pre, WhenUnreachable=refuse: exit 1',
                     r.returncode == 1 and 'refused' in r.stdout, r.stdout)
    except Exception:  # pylint: disable=broad-except
        traceback.print_exc()
        checks.failed.append('exception')
        env.dump_logs()
    finally:
        env.stop()
    print(f'{checks.passed} passed, {len(checks.failed)} failed')
    return 0 if not checks.failed else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))

#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The bash and zsh completions of memqosctl (completions/memqosctl,
completions/_memqosctl) against a fake memqosd.

Reuses run_ctl_bus_test.py's private dbus-daemon and python-dbusmock memqosd
(4 classes, 2 workloads, 2 instances). Every case runs once per shell, on the
same line with the same expected words:

- bash: a non-interactive `bash --norc` sources the completion script, sets
  COMP_WORDS, COMP_CWORD, COMP_LINE and COMP_POINT as readline would for the
  line, calls the function `complete` registered for memqosctl and compares
  COMPREPLY and what was printed.
- zsh: an interactive zsh on a pseudo-terminal (its own ZDOTDIR: compinit with
  only this _memqosctl added to $fpath) is typed the line and a TAB; a
  compadd wrapper (as zsh-capture-completion does it) records the words the
  completion offers, after zsh's own matching against the word, instead of
  adding them, and what the shell printed on stdout and stderr is recorded.
  Replies are compared as readline shows them: after the word's last ':'
  (bash splits "vm:w" at ':', zsh does not; zsh's own insertion is checked
  interactively).

The built memqosctl is found first in PATH. Cases in an interactive shell
(bash and zsh) see what the line becomes (a workload id with a ':'). It also
checks that each script offers exactly the commands and options that
`memqosctl --help` and `memqosctl COMMAND --help` document, and that nothing
is offered or printed when memqosd cannot be reached. Exit 77 (meson:
skipped) when dbus-daemon or python3-dbusmock is missing, or zsh (after the
bash cases ran and passed).

Usage: run_ctl_completion_test.py PATH/TO/memqosctl PATH/TO/completions/memqosctl
                                  PATH/TO/completions/_memqosctl
"""

import os
import pty
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_ctl_bus_test as bus_test  # noqa: E402 pylint: disable=wrong-import-position

HARD_TIMEOUT_S = 220  # below the meson test timeout (240 s)
# bash's default, with the characters readline splits words at.
WORDBREAKS = ' \t\n"\'><=;|&(:'


def comp_words(line):
    """COMP_WORDS and COMP_CWORD as bash builds them for `line` (cursor at its end)."""
    words = []
    for token in re.split(r'[ \t]+', line.lstrip(' \t')):
        words += [w for w in re.split(r'([=:]+)', token) if w != ''] or ['']
    if line.endswith((' ', '\t')) or not line.strip():
        if words[-1:] != ['']:
            words.append('')
    return words, len(words) - 1


class Completer:
    shell = 'bash'

    def __init__(self, ctl_path, ctl_dir, script, env):
        self.ctl_path = ctl_path
        self.ctl_dir = ctl_dir
        self.script = script
        self.env = dict(env)
        self.env['PATH'] = ctl_dir + os.pathsep + self.env.get('PATH', '/usr/bin:/bin')

    def complete(self, line, env=None):
        """(COMPREPLY as a list, stdout other than it, stderr, whether bash and
        the completion function both exited 0)."""
        words, cword = comp_words(line)
        # set -u: the script must not trip over an unset variable in a shell
        # that has nounset on.
        prog = ('set -u\n'
                f'source {shlex.quote(self.script)}\n'
                f'COMP_WORDBREAKS={shlex.quote(WORDBREAKS)}\n'
                f'COMP_WORDS=({" ".join(shlex.quote(w) for w in words)})\n'
                f'COMP_CWORD={cword}\n'
                f'COMP_LINE={shlex.quote(line)}\n'
                f'COMP_POINT={len(line)}\n'
                'spec=$(complete -p memqosctl) || exit 90\n'
                'fn=${spec#*-F }; fn=${fn%% *}\n'
                'cur=${COMP_WORDS[COMP_CWORD]} prev=\n'
                '((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD-1]}\n'
                'COMPREPLY=(sentinel)\n'
                '"$fn" memqosctl "$cur" "$prev"\n'
                'echo "@@rc=$?"\n'
                'for w in "${COMPREPLY[@]}"; do printf "@@=%s\\n" "$w"; done\n')
        run_env = dict(self.env)
        if env:
            run_env.update(env)
        p = subprocess.run(['bash', '--norc', '--noprofile', '-c', prog], capture_output=True,
                           timeout=bus_test.CALL_TIMEOUT_S, env=run_env, check=False)
        out = p.stdout.decode('utf-8')
        reply = [ln[3:] for ln in out.splitlines() if ln.startswith('@@=')]
        other = '\n'.join(ln for ln in out.splitlines() if not ln.startswith('@@'))
        ok = p.returncode == 0 and '@@rc=0' in out
        return reply, other, p.stderr.decode('utf-8'), ok


def type_on_pty(argv, env, setup, ready, typed, done, timeout):
    """Starts `argv` on a pseudo-terminal, writes `setup`, waits for `ready`
    on the terminal, types `typed` and reads on until done(what the terminal
    showed since) or `timeout` seconds; kills the process it started and
    returns what the terminal showed after `ready`."""
    pid, fd = pty.fork()
    if pid == 0:  # the child
        os.execvpe(argv[0], argv, env)
    shown = b''
    try:
        if setup:
            os.write(fd, setup)
        deadline = time.monotonic() + timeout
        typed_yet = False
        while time.monotonic() < deadline:
            ready_fds, _, _ = select.select([fd], [], [], 0.05)
            if ready_fds:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                shown += chunk
            if not typed_yet and ready in shown:
                shown = b''
                os.write(fd, typed.encode())
                typed_yet = True
            elif typed_yet and done(shown):
                break
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    return shown.decode('utf-8', 'replace')


# compinit reads the dump ZshCompleter made once (-C: as it is): without one,
# every shell would scan all of fpath again, about a second each.
ZSHRC = """unsetopt beep
PS1='@@ready%% '
fpath=({fpath} $fpath)
autoload -Uz compinit && compinit -u -C -d {dump}
{capture}exec >{out} 2>{err}
"""

# The words a completion offers, instead of adding them: every compadd that
# is not itself a query (-O, -A, -D) is asked which of its words match the
# word on the line (-O) and they are written to $MEMQOS_ZCAP.
ZSH_CAPTURE = r"""compadd() {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
  local -a __hits
  builtin compadd -O __hits "$@"
  (( $#__hits )) && print -rl -- "${(@)__hits/#/@@=}" >>$MEMQOS_ZCAP
  return 0
}
"""


class ZshCompleter:
    """Completer's interface for an interactive zsh on a pseudo-terminal."""
    shell = 'zsh'

    def __init__(self, zsh, ctl_path, ctl_dir, script, env, tmp):
        self.zsh = zsh
        self.ctl_path = ctl_path
        self.ctl_dir = ctl_dir
        self.env = dict(env)
        self.env['PATH'] = ctl_dir + os.pathsep + self.env.get('PATH', '/usr/bin:/bin')
        self.dir = os.path.join(tmp, 'zsh')
        fpath = os.path.join(self.dir, 'functions')
        os.makedirs(fpath)
        shutil.copy(script, os.path.join(fpath, '_memqosctl'))
        self.files = {k: os.path.join(self.dir, k) for k in ('cap', 'out', 'err')}
        # The completion dump of this fpath, as a user's first zsh writes it.
        dump = os.path.join(self.dir, 'zcompdump')
        subprocess.run([zsh, '-f', '-c', f'fpath=({shlex.quote(fpath)} $fpath); '
                        f'autoload -Uz compinit && compinit -u -d {shlex.quote(dump)}'],
                       env=self.env, check=True, timeout=60, stdin=subprocess.DEVNULL)
        if not os.path.exists(dump):
            raise RuntimeError(f'zsh wrote no completion dump {dump}')
        for name, capture in (('capture', ZSH_CAPTURE), ('plain', '')):
            os.makedirs(os.path.join(self.dir, name))
            with open(os.path.join(self.dir, name, '.zshrc'), 'w', encoding='utf-8') as f:
                f.write(ZSHRC.format(fpath=shlex.quote(fpath), dump=shlex.quote(dump), capture=capture,
                                     out=shlex.quote(self.files['out']),
                                     err=shlex.quote(self.files['err'])))

    def type_into(self, typed, zdotdir, env=None, timeout=15.0):
        """Types `typed` into a new interactive zsh once its prompt is up, and
        returns (stdout, stderr of that zsh, whether its input ran to the
        end: `typed` must end by printing @@done)."""
        for f in self.files.values():
            open(f, 'w', encoding='utf-8').close()  # pylint: disable=consider-using-with
        run_env = dict(self.env, ZDOTDIR=os.path.join(self.dir, zdotdir), TERM='dumb',
                       MEMQOS_ZCAP=self.files['cap'])
        run_env.pop('HISTFILE', None)
        if env:
            run_env.update(env)

        def done(_shown):
            with open(self.files['out'], encoding='utf-8', errors='replace') as f:
                return '@@done' in f.read()
        # An interactive zsh that reads only this ZDOTDIR.
        type_on_pty([self.zsh, '-i'], run_env, b'', b'@@ready', typed, done, timeout)
        with open(self.files['out'], encoding='utf-8', errors='replace') as f:
            out = f.read()
        with open(self.files['err'], encoding='utf-8', errors='replace') as f:
            err = f.read()
        return out, err, '@@done' in out

    def complete(self, line, env=None):
        """As Completer.complete: the line, a TAB, then the line is dropped
        (^U) and @@done printed."""
        out, err, done = self.type_into(line + '\t\x15print -r -- @@done\r', 'capture', env)
        with open(self.files['cap'], encoding='utf-8', errors='replace') as f:
            reply = [ln[3:] for ln in f.read().splitlines() if ln.startswith('@@=')]
        word = re.split(r'[ \t]', line)[-1]
        if ':' in word:  # as readline shows it: after the word's last ':'
            pre = word[:word.rindex(':') + 1]
            reply = [w[len(pre):] if w.startswith(pre) else w for w in reply]
        other = '\n'.join(ln for ln in out.splitlines() if ln != '@@done')
        return reply, other, err, done

    def line_after(self, typed, env=None):
        """What the line holds after `typed` (with TABs) in zsh's own
        completion: ^A, "print -r -- " before it, and Enter."""
        out, err, done = self.type_into(typed + '\x01print -r -- \r print -r -- @@done\r',
                                        'plain', env)
        return out.split('@@done')[0].strip(), err, done


def check_reply(r, c, line, expected, what, env=None, exact=True):
    reply, other, err, ok = c.complete(line, env)
    detail = f'line={line!r} reply={reply!r} out={other!r} err={err!r}'
    clean = ok and other == '' and err == ''
    what = f'{c.shell}: {what}'
    if exact:
        r.check(clean and sorted(reply) == sorted(expected), what, detail)
    else:  # expected is a subset of the reply
        r.check(clean and set(expected) <= set(reply), what, detail)
    return reply


def help_options(text):
    return set(re.findall(r'(?<![\w-])(--?[a-z][a-z-]*)', text))


def test_help_agrees(r, c, ctl):
    """The script offers what --help documents, nothing more."""
    help_text = subprocess.run([ctl, '--help'], capture_output=True, check=False,
                               timeout=bus_test.CALL_TIMEOUT_S).stdout.decode('utf-8')
    commands = help_text.split('Commands:\n', 1)[-1].split('\n\n', 1)[0]
    verbs = [ln.split()[0] for ln in commands.splitlines() if ln.strip()]
    r.check(len(verbs) >= 10, '--help lists the commands', help_text)
    check_reply(r, c, 'memqosctl ', verbs, 'memqosctl <TAB>: every command of --help')
    options_part = help_text.split('Options:\n', 1)[-1].split('\n\n', 1)[0]
    global_opts = help_options(options_part)
    r.check({'--json', '--system', '--bus-address', '--help'} <= global_opts,
            '--help lists the global options', options_part)
    check_reply(r, c, 'memqosctl -', global_opts, 'memqosctl -<TAB>: the options of --help')

    for verb in verbs:
        text = subprocess.run([ctl, verb, '--help'], capture_output=True, check=False,
                              timeout=bus_test.CALL_TIMEOUT_S).stdout.decode('utf-8')
        # The synopsis and the option lines, not the prose ("Everything after \"--\"").
        usage = text.splitlines()[0] if text else ''
        lines = [ln for ln in text.splitlines() if re.match(r'\s+-', ln)]
        own = help_options(usage + '\n' + '\n'.join(lines)) - {'--'}
        want = global_opts | own | ({'--'} if verb == 'run' else set())
        check_reply(r, c, f'memqosctl {verb} -', want,
                    f'memqosctl {verb} -<TAB>: the options of {verb} --help')


def test_static(r, c):
    check_reply(r, c, 'memqosctl as', ['assign'], 'as<TAB> → assign')
    check_reply(r, c, 'memqosctl --json re', ['reclaim', 'record-instance', 'reload', 'release'],
                're<TAB> after a global option')
    reply = check_reply(r, c, 'memqosctl assign x y --', [
        '--request', '--limit', '--runtime', '--json', '--system', '--bus-address', '--help',
        '--version'], 'assign x y --<TAB>: assign\'s and the global options', exact=False)
    r.check(not {'--class', '--name', '--max', '--min', '--order'} & set(reply) and
            all(o.startswith('--') for o in reply),
            'assign x y --<TAB>: no other command\'s options, no short ones', repr(reply))
    check_reply(r, c, 'memqosctl record-instance db1 --m', ['--max', '--min'],
                'record-instance --m<TAB>')
    check_reply(r, c, 'memqosctl status --j', ['--json'], 'status --j<TAB>')
    check_reply(r, c, 'memqosctl assign x y --request ', [], 'a size: nothing offered')
    check_reply(r, c, 'memqosctl verify-placement 4G --failover-reserve ', [],
                '--failover-reserve SIZE: nothing offered')
    check_reply(r, c, 'memqosctl status x ', [], 'status takes one ID at most')
    check_reply(r, c, 'memqosctl show --p', ['--property'], 'show --p<TAB>')
    check_reply(r, c, 'memqosctl show -p ', [], 'show -p NAME: nothing offered, a value')
    check_reply(r, c, 'memqosctl bogus --s', ['--system'],
                'an unknown command: the global options (and no unset-variable error)')
    check_reply(r, c, 'memqosctl --json=', ['pretty', 'short', 'off'], '--json=<TAB>: the modes')
    check_reply(r, c, 'memqosctl --json=s', ['short'], '--json=s<TAB>')
    check_reply(r, c, 'memqosctl --legend=', ['yes', 'no'], '--legend=<TAB>: yes, no')
    check_reply(r, c, 'memqosctl --legend n', ['no'], '--legend n<TAB>')
    check_reply(r, c, 'memqosctl --json cl', ['classes'], '--json takes no separate value')
    check_reply(r, c, 'memqosctl top --order ', ['usage', 'pressure', 'swap', 'name'],
                'top --order <TAB>: the sort keys')
    check_reply(r, c, 'memqosctl top -o p', ['pressure'], 'top -o p<TAB>')
    check_reply(r, c, 'memqosctl top --order=s', ['swap'], 'top --order=s<TAB>')
    check_reply(r, c, 'memqosctl top -n 5 ', [], 'top -n N <TAB>: nothing')
    check_reply(r, c, 'memqosctl run --class shared bas', ['bash'],
                'run: the command is completed from the commands', exact=False)
    check_reply(r, c, 'memqosctl run --class shared -- bas', ['bash'],
                'run --: the command after "--"', exact=False)
    if c.shell == 'bash':
        reply, other, err, ok = c.complete('memqosctl run --class shared -- bash -')
        r.check(ok and reply == [] and other == '' and err == '',
                'bash: run: the command\'s own arguments are left to the shell',
                f'{reply!r} {err!r}')
    else:  # zsh completes them as it completes that command: cat's, files
        files = os.path.join(os.path.dirname(c.ctl_dir), 'run-files')
        os.makedirs(files, exist_ok=True)
        open(os.path.join(files, 'notes.txt'), 'w', encoding='utf-8').close()
        check_reply(r, c, f'memqosctl run --class shared -- cat {files}/no', ['notes.txt'],
                    'run: the command\'s own arguments as zsh completes that command')
    # run needs --class: before it, an empty word offers run's options.
    check_reply(r, c, 'memqosctl run ', ['--name', '--class', '--request', '--limit'],
                'run <TAB>: run\'s options (--class is needed)')
    check_reply(r, c, 'memqosctl run --name batch ', ['--name', '--class', '--request',
                                                      '--limit'],
                'run --name NAME <TAB>: run\'s options until --class is given')
    check_reply(r, c, 'memqosctl run --name ', [], 'run --name <TAB>: nothing, a new name')
    check_reply(r, c, 'memqosctl run --limit 1G --request ', [], 'run --request <TAB>: a size')
    check_reply(r, c, 'memqosctl run --class shared ', ['bash'],
                'run --class CLASS <TAB>: the commands', exact=False)
    check_reply(r, c, 'memqosctl run --class=shared --limit 1G bas', ['bash'],
                'run --class=CLASS --limit SIZE bas<TAB>: the commands', exact=False)
    check_reply(r, c, 'memqosctl run --r', ['--request'], 'run --r<TAB>')


def test_daemon(r, c, address):
    bus = ['--bus-address', address]
    b = ' '.join(shlex.quote(x) for x in bus)
    classes = ['system', 'dedicated', 'shared', 'reclaimed']
    ids = ['nginx.service', 'vm:web1']
    check_reply(r, c, f'memqosctl {b} assign foo.service ', classes,
                'assign ID <TAB>: the class names from memqosd')
    check_reply(r, c, f'memqosctl {b} assign foo.service sh', ['shared'], 'assign ID sh<TAB>')
    check_reply(r, c, f'memqosctl --bus-address={address} assign foo.service --runtime ', classes,
                'assign with --bus-address=ADDRESS and an option before CLASS')
    check_reply(r, c, f'memqosctl {b} assign ', ids, 'assign <TAB>: the managed workloads')
    # With systemd's units: those memqos does not manage yet follow.
    fake = os.path.join(os.path.dirname(c.ctl_dir), 'fake-systemctl')
    os.makedirs(fake, exist_ok=True)
    with open(os.path.join(fake, 'systemctl'), 'w', encoding='utf-8') as f:
        f.write('#!/bin/sh\n'
                '[ "$1" = list-units ] || exit 1\n'
                'case "$*" in *--type=service,scope*--plain*--no-legend*) ;; *) exit 1 ;; esac\n'
                "cat <<'EOF'\n"
                'nginx.service loaded active running A high performance web server\n'
                'postgres.service loaded inactive dead PostgreSQL\n'
                '\u25cf broken.service loaded failed failed Broken\n'
                '\u25cf gone.service not-found inactive dead gone.service\n'
                'init.scope loaded active running System and Service Manager\n'
                'machine-qemu\\x2d1\\x2dweb1.scope loaded active running VM web1\n'
                'session-3.scope loaded active running Session 3 of User root\n'
                'EOF\n')
    os.chmod(os.path.join(fake, 'systemctl'), 0o755)
    path = f'{fake}:{c.env["PATH"]}'
    check_reply(r, c, f'memqosctl {b} assign ', ids + ['postgres.service', 'broken.service',
                                                     'session-3.scope'],
                'assign <TAB>: the managed, then the loaded units not managed (no VM scopes, '
                'no init.scope, nothing not found)', env={'PATH': path})
    check_reply(r, c, f'memqosctl {b} assign p', ['postgres.service'], 'assign p<TAB>',
                env={'PATH': path})
    check_reply(r, c, f'memqosctl {b} unassign ', ids, 'unassign <TAB>: only the managed',
                env={'PATH': path})
    check_reply(r, c, f'memqosctl {b} unassign ', ids, 'unassign <TAB>: the managed workloads')
    check_reply(r, c, f'memqosctl {b} reclaim ', ids, 'reclaim <TAB>: the managed workloads')
    check_reply(r, c, f'memqosctl {b} reclaim nginx.service ', [], 'reclaim ID <TAB>: a size')
    check_reply(r, c, f'memqosctl {b} status ', ids, 'status <TAB>: the managed workloads')
    check_reply(r, c, f'memqosctl {b} show -p Id ', ids, 'show -p NAME <TAB>: the workloads')
    check_reply(r, c, f'memqosctl {b} unassign n', ['nginx.service'], 'unassign n<TAB>')
    # readline completes only after the ':' (COMP_WORDBREAKS): "vm:" + "web1".
    check_reply(r, c, f'memqosctl {b} unassign vm:', ['web1'], 'unassign vm:<TAB> → web1')
    check_reply(r, c, f'memqosctl {b} unassign vm:w', ['web1'], 'unassign vm:w<TAB> → web1')
    check_reply(r, c, f'memqosctl {b} unassign nginx.service ', [], 'unassign takes one ID')
    check_reply(r, c, f'memqosctl {b} run --class ', classes, 'run --class <TAB>')
    check_reply(r, c, f'memqosctl {b} run --name x --class=d', ['dedicated'],
                'run --class=d<TAB>')
    check_reply(r, c, f'memqosctl {b} forget-instance ', ['db1.example.com', 'web1'],
                'forget-instance <TAB>: the instance record')
    check_reply(r, c, f'memqosctl {b} verify-placement 2G --instance d', ['db1.example.com'],
                'verify-placement --instance d<TAB>')
    check_reply(r, c, 'memqosctl unassign ', ids, 'the daemon at $MEMQOS_BUS_ADDRESS',
                env={'MEMQOS_BUS_ADDRESS': address})
    check_reply(r, c, f'{c.ctl_path} {b} unassign ', ids,
                'the memqosctl of the line when it is given as a path',
                env={'PATH': '/usr/bin:/bin'})


def interactive(c, typed, expect, env, timeout=10.0):
    """Types `typed` into an interactive bash on a pty (readline, the script
    sourced) and returns what the terminal showed once `expect` appeared or
    the time ran out."""
    # An interactive bash that reads nothing of ~.
    return type_on_pty(['bash', '--norc', '--noprofile', '-i'], env,
                       b'PS1="$ "; HISTFILE=/dev/null; bind "set bell-style none"; '
                       b'source ' + shlex.quote(c.script).encode() + b'; echo READY\n',
                       b'READY\r\n', typed, lambda shown: expect.encode() in shown, timeout)


def test_interactive(r, c, address):
    """What bash's readline does with the replies: it replaces only the part
    after ':' (COMP_WORDBREAKS), so "vm:w" must end as "vm:web1"."""
    env = dict(c.env, MEMQOS_BUS_ADDRESS=address, TERM='dumb', HISTFILE='/dev/null')
    shown = interactive(c, 'memqosctl unassign vm:w\t', 'vm:web1', env)
    r.check('memqosctl unassign vm:web1' in shown and 'vm:vm:' not in shown,
            'interactive bash: unassign vm:w<TAB> → vm:web1', repr(shown))
    shown = interactive(c, 'memqosctl assign nginx.service sh\t', 'shared', env)
    r.check('memqosctl assign nginx.service shared' in shown,
            'interactive bash: assign ID sh<TAB> → shared', repr(shown))


def test_interactive_zsh(r, z, address):
    """What zsh's own completion makes of the line: it keeps "vm:" and
    completes the id (no word break at ':'), and a class."""
    env = {'MEMQOS_BUS_ADDRESS': address}
    for typed, want in [('memqosctl unassign vm:w\t', 'memqosctl unassign vm:web1'),
                        ('memqosctl assign nginx.service sh\t',
                         'memqosctl assign nginx.service shared'),
                        ('memqosctl run --name batch --cl\t', 'memqosctl run --name batch --class'),
                        ('memqosctl top --order=p\t', 'memqosctl top --order=pressure')]:
        line, err, done = z.line_after(typed, env)
        r.check(done and line == want and err == '',
                f'interactive zsh: {typed.strip()}<TAB> → {want.split()[-1]}',
                f'line={line!r} err={err!r} done={done}')


def test_unreachable(r, c, tmp, address=None, when='no such bus'):
    bad = address or f'unix:path={tmp}/no-such-socket'
    env = {'MEMQOS_BUS_ADDRESS': bad, 'DBUS_SYSTEM_BUS_ADDRESS': bad}
    for line in [f'memqosctl --bus-address {bad} assign foo.service ',
                 f'memqosctl --bus-address {bad} unassign ',
                 'memqosctl unassign v', 'memqosctl run --class ', 'memqosctl forget-instance ',
                 'memqosctl --system reclaim ']:
        check_reply(r, c, line, [], f'{when}: {line!r} offers nothing, prints nothing', env=env)
    check_reply(r, c, 'memqosctl assign x y --r', ['--request', '--runtime'],
                f'{when}: options still complete', env=env)


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 64
    ctl_path = os.path.abspath(sys.argv[1])
    script = os.path.abspath(sys.argv[2])
    zsh_script = os.path.abspath(sys.argv[3])
    if shutil.which('bash') is None:
        print('SKIP: no bash')
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
    tmp = tempfile.mkdtemp(prefix='memqosctl-completion-')
    base_env = {k: v for k, v in os.environ.items()
                if k not in ('MEMQOS_BUS_ADDRESS', 'BASH_ENV', 'ENV')}
    base_env['LC_ALL'] = 'C.UTF-8'
    # The built memqosctl first in PATH, under its own name.
    ctl_dir = os.path.join(tmp, 'bin')
    os.mkdir(ctl_dir)
    os.symlink(ctl_path, os.path.join(ctl_dir, 'memqosctl'))
    completers = [Completer(ctl_path, ctl_dir, script, base_env)]
    zsh = shutil.which('zsh')
    if zsh is not None:
        completers.append(ZshCompleter(zsh, ctl_path, ctl_dir, zsh_script, base_env, tmp))
    else:
        print('zsh not found: only the bash completion is tested (tools/install-deps installs '
              'zsh)')
    try:
        for c in completers:
            test_static(r, c)
            test_help_agrees(r, c, ctl_path)
            test_unreachable(r, c, tmp)

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
        for c in completers:
            test_unreachable(r, c, tmp, address, 'a bus without memqosd')

        env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address)
        with open(os.path.join(tmp, 'mock.log'), 'w', encoding='utf-8') as mock_log:
            mock_proc = subprocess.Popen(
                # -m: /org/memqos1 is an ObjectManager, as memqosd's (classes and
                # workloads read it)
                ['/usr/bin/python3', '-m', 'dbusmock', '--session', '-m', 'org.memqos1',
                 '/org/memqos1', 'org.memqos1.Manager'], env=env, stdout=mock_log,
                stderr=subprocess.STDOUT)
        procs.append(mock_proc)
        if not r.check(bus_test.wait_for_name(bus, 'org.memqos1'), 'dbusmock owns org.memqos1'):
            return 1
        mock = bus_test.setup_mock(bus)
        for c in completers:
            test_daemon(r, c, address)
        test_interactive(r, completers[0], address)
        if zsh is not None:
            test_interactive_zsh(r, completers[1], address)

        # memqosd answers with an error: still nothing printed.
        mock.AddMethod('org.memqos1.Manager', 'ListClasses', '', 'a(so)',
                       'raise dbus.exceptions.DBusException("broken",'
                       ' name="org.memqos1.Error.Failed")')
        for c in completers:
            check_reply(r, c, f'memqosctl --bus-address {address} assign foo.service ', [],
                        'ListClasses fails: nothing offered, nothing printed')
        bus.close()
    except Exception:  # pylint: disable=broad-except
        traceback.print_exc()
        r.failed.append('exception')
    finally:
        signal.alarm(0)
        bus_test.stop_processes(procs)
        shutil.rmtree(tmp, ignore_errors=True)

    print(f'{r.passed} passed, {len(r.failed)} failed')
    if r.failed:
        return 1
    if zsh is None:
        print('SKIP: zsh not found (the bash cases passed)')
        return 77
    return 0


if __name__ == '__main__':
    sys.exit(main())

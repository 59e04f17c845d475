#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""memqosd and memqos-ganeti-hook read their command lines alike (getopt_long).

Usage: options.py MEMQOSD HOOK FIXTURES_DIR

For both programs: --help/-h and --version exit 0; an unknown option, a
missing or empty value, a value given to a flag, and any operand (also after
"--") exit 64 with exactly two lines on stderr, glibc's message and
"Try 'PROGRAM --help'."; --help stops at once ("--help --bogus" is help).
Then that "--opt=value", "--opt value", a unique prefix ("--conf") and a
trailing "--" give the same result: memqosd --check-config on a bad
configuration, the hook's --dry-run plan of a recorded Ganeti environment.
Prints TAP; exits non-zero if any case failed.
"""

import os
import re
import subprocess
import sys
import tempfile

EX_OK = 0
EX_USAGE = 64
EX_CONFIG = 78


class Runner:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def run(self, cmd):
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")

    def result(self, name, why, cmd=None, out="", err=""):
        self.n += 1
        if not why:
            print(f"ok {self.n} - {name}")
            return
        self.failed += 1
        print(f"not ok {self.n} - {name}: {'; '.join(why)}")
        if cmd:
            print(f"# command: {' '.join(cmd)}")
        for label, text in (("stdout", out), ("stderr", err)):
            for line in text.splitlines():
                print(f"# {label}: {line}")


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    memqosd, hook, fixtures = sys.argv[1:4]
    r = Runner()

    for prog in (memqosd, hook):
        name = os.path.basename(prog)
        hint = f"Try '{name} --help'."
        for args in (["--help"], ["-h"], ["--help", "--bogus"], ["--he"]):
            rc, out, err = r.run([prog] + args)
            why = [] if rc == EX_OK else [f"exit {rc}"]
            if not out.startswith(f"Usage: {name} "):
                why.append("no usage on stdout")
            r.result(f"{name} {' '.join(args)}", why, [prog] + args, out, err)
        rc, out, err = r.run([prog, "--version"])
        r.result(f"{name} --version",
                 ([] if rc == EX_OK else [f"exit {rc}"]) +
                 ([] if re.fullmatch(re.escape(name) + r" \d+\.\d+\.\d+\n", out) else
                  ["stdout is not 'NAME VERSION'"]),
                 [prog, "--version"], out, err)
        for args, message in (
            (["--bogus"], "unrecognized option '--bogus'"),
            (["--bogus=1"], "unrecognized option '--bogus'"),
            (["-x"], "invalid option -- 'x'"),
            (["--config"], "option '--config' requires an argument"),
            (["--dry-run", "--config"], "option '--config' requires an argument"),
            (["--config="], "option '--config' needs a non-empty value"),
            (["--dry-run=yes"], "option '--dry-run' doesn't allow an argument"),
            (["--no-drop-ins=no"], "option '--no-drop-ins' doesn't allow an argument"),
            (["extra"], "unexpected argument 'extra'"),
            (["--dry-run", "extra"], "unexpected argument 'extra'"),
            (["--", "--help"], "unexpected argument '--help'"),
        ):
            rc, out, err = r.run([prog] + args)
            why = [] if rc == EX_USAGE else [f"exit {rc}, want {EX_USAGE}"]
            want = f"{name}: {message}\n{hint}\n"
            if err != want:
                why.append(f"stderr is not {want!r}")
            r.result(f"{name} {' '.join(args)}: exit 64, {message}", why, [prog] + args, out, err)

    with tempfile.TemporaryDirectory(prefix="memqos-cli-") as tmp:
        os.chmod(tmp, 0o755)
        conf = os.path.join(tmp, "memqosd.conf")
        with open(conf, "w", encoding="utf-8") as f:
            f.write("[Manager]\nInterval=abc\n")
        os.chmod(conf, 0o644)

        # memqosd: the same check, however the value is written.
        forms = (
            ["--check-config", "--config", conf, "--no-drop-ins"],
            ["--check-config", f"--config={conf}", "--no-drop-ins"],
            ["--no-drop-ins", "--conf", conf, "--check"],
            ["--check-config", "--config", conf, "--no-drop-ins", "--"],
        )
        results = [r.run([memqosd] + a) for a in forms]
        for args, (rc, out, err) in zip(forms, results):
            why = [] if rc == EX_CONFIG else [f"exit {rc}, want {EX_CONFIG}"]
            if conf not in err or "[Manager] Interval=abc" not in err:
                why.append(f"stderr does not name {conf} [Manager] Interval=abc")
            if (rc, out, err) != results[0]:
                why.append("differs from the first form")
            r.result(f"memqosd {' '.join(args[:3])} ...", why, [memqosd] + args, out, err)

        # The hook: the same dry-run plan.
        with open(conf, "w", encoding="utf-8") as f:
            f.write("[Ganeti]\nHookTimeout=5s\n")
        env = os.path.join(fixtures, "ganeti", "env", "instance-add-pre-1.env")
        node = "node1.example.test"
        forms = (
            ["--dry-run", "--config", conf, "--no-drop-ins", "--env-file", env, "--node-name", node],
            ["--dry-run", f"--config={conf}", "--no-drop-ins", f"--env-file={env}",
             f"--node-name={node}"],
            [f"--node-name={node}", "--env", env, "--no-drop-ins", "--conf", conf, "--dry"],
            ["--dry-run", "--config", conf, "--no-drop-ins", "--env-file", env, "--node-name", node,
             "--"],
        )
        results = [r.run([hook] + a) for a in forms]
        want = "instance-add pre inst1.example.test: check instance-add of inst1.example.test"
        for args, (rc, out, err) in zip(forms, results):
            why = [] if rc == EX_OK else [f"exit {rc}, want {EX_OK}"]
            if not out.startswith(want):
                why.append(f"stdout does not start with {want!r}")
            if (rc, out) != results[0][:2]:
                why.append("differs from the first form")
            r.result(f"memqos-ganeti-hook {' '.join(args[:3])} ...", why, [hook] + args, out, err)

    print(f"1..{r.n}")
    print(f"# {r.n - r.failed} passed, {r.failed} failed")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())

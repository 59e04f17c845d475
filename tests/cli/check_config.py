#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""memqosd --check-config against the fixture configs: exit codes and messages.

Usage: check_config.py MEMQOSD FIXTURES_DIR

Every fixture is copied into a fresh mkdtemp directory with mode 0644 (git
checkouts under umask 002 are group-writable, which memqosd rightly refuses)
and checked with `memqosd --check-config --config COPY`:

  good/*.conf  exit 0, nothing on stderr
  bad/*.conf   exit 78, stderr has the "# expect: ..." text of the first line
  warn/*.conf  exit 78 (every problem counts under --check-config), stderr
               has the expected text

plus: a world-writable config exits 78; a missing --config file exits 78; a
drop-in in FILE.d/ is read after FILE (and can make it fail); --no-drop-ins
skips it. Prints TAP; exits non-zero if any case failed.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

EX_OK = 0
EX_USAGE = 64
EX_CONFIG = 78


class Runner:
    def __init__(self, memqosd):
        self.memqosd = memqosd
        self.n = 0
        self.failed = 0

    def check(self, name, args, want_exit, want_text=None, want_quiet=False):
        self.n += 1
        cmd = [self.memqosd, "--check-config"] + args
        try:
            p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as e:
            self.fail(name, f"cannot run {cmd}: {e}")
            return
        out = p.stdout.decode("utf-8", "replace")
        err = p.stderr.decode("utf-8", "replace")
        why = []
        if p.returncode != want_exit:
            why.append(f"exit {p.returncode}, want {want_exit}")
        if want_text is not None and want_text not in out + err:
            why.append(f"output lacks {want_text!r}")
        if want_quiet and err.strip():
            why.append("stderr not empty")
        if why:
            self.fail(name, "; ".join(why), cmd, out, err)
        else:
            print(f"ok {self.n} - {name}")

    def fail(self, name, why, cmd=None, out="", err=""):
        self.failed += 1
        print(f"not ok {self.n} - {name}: {why}")
        if cmd:
            print(f"# command: {' '.join(cmd)}")
        for label, text in (("stdout", out), ("stderr", err)):
            for line in text.splitlines():
                print(f"# {label}: {line}")


def expectation(path):
    with open(path, "rb") as f:
        first = f.readline().decode("utf-8", "replace")
    first = first.lstrip("\ufeff").rstrip("\r\n")
    tag = "# expect: "
    return first[len(tag):] if first.startswith(tag) else None


def copy_to(tmp, src, name=None, mode=0o644):
    dst = os.path.join(tmp, name or os.path.basename(src))
    shutil.copyfile(src, dst)
    os.chmod(dst, mode)
    return dst


def write(path, text, mode=0o644):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, mode)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    memqosd, fixtures = sys.argv[1], os.path.join(sys.argv[2], "config")
    r = Runner(memqosd)

    for kind, want_exit in (("good", EX_OK), ("bad", EX_CONFIG), ("warn", EX_CONFIG)):
        d = os.path.join(fixtures, kind)
        for fn in sorted(os.listdir(d)):
            if not fn.endswith(".conf"):
                continue
            src = os.path.join(d, fn)
            want = None if kind == "good" else expectation(src)
            if kind != "good" and not want:
                r.n += 1
                r.fail(f"{kind}/{fn}", "first line must be '# expect: ...'")
                continue
            with tempfile.TemporaryDirectory(prefix="memqos-cli-") as tmp:
                os.chmod(tmp, 0o755)
                conf = copy_to(tmp, src)
                r.check(f"{kind}/{fn}", ["--config", conf], want_exit, want, want_quiet=(kind == "good"))

    with tempfile.TemporaryDirectory(prefix="memqos-cli-") as tmp:
        os.chmod(tmp, 0o755)
        conf = os.path.join(tmp, "memqosd.conf")

        write(conf, "[Manager]\nDryRun=yes\n", 0o666)
        r.check("world-writable config", ["--config", conf], EX_CONFIG, "writable by group or others")
        write(conf, "[Manager]\nDryRun=yes\n", 0o664)
        r.check("group-writable config", ["--config", conf], EX_CONFIG, "writable by group or others")

        r.check("missing --config file", ["--config", os.path.join(tmp, "nope.conf")], EX_CONFIG,
                "No such file or directory")

        write(conf, "[Manager]\nInterval=5s\n")
        r.check("good main file", ["--config", conf], EX_OK, want_quiet=True)
        dropins = conf + ".d"
        os.mkdir(dropins)
        os.chmod(dropins, 0o755)
        write(os.path.join(dropins, "10-good.conf"), "[Manager]\nInterval=2s\n")
        r.check("good drop-in", ["--config", conf], EX_OK, want_quiet=True)
        write(os.path.join(dropins, "20-bad.conf"), "[Overcommit]\nMemoryRatio=abc\n")
        r.check("bad drop-in is read", ["--config", conf], EX_CONFIG,
                "20-bad.conf: [Overcommit] MemoryRatio=abc: not a number (expected a ratio ≥ 1.0, e.g. 1.5)")
        r.check("--no-drop-ins skips it", ["--config", conf, "--no-drop-ins"], EX_OK, want_quiet=True)
        write(os.path.join(dropins, "20-bad.conf"), "[Manager]\nFrobnicate=1\n")
        r.check("unknown key in a drop-in", ["--config", conf], EX_CONFIG,
                "20-bad.conf: [Manager] Frobnicate=1: unknown key")
        os.remove(os.path.join(dropins, "20-bad.conf"))
        r.check("--example-request that is not a size", ["--config", conf, "--print",
                "--example-request=lots"], EX_USAGE, "--example-request: not a size")
        r.check("--example-limit without --print", ["--config", conf, "--example-limit=2G"],
                EX_USAGE, "go with --check-config --print")

    # The configuration examples operators copy: every ```ini block of the
    # README and every .EX block with a [Section] of memqosd.conf(5).
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    examples = []
    with open(os.path.join(top, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    for i, block in enumerate(re.findall(r"^```ini\n(.*?)^```", readme, re.S | re.M)):
        examples.append((f"README.md ini block {i + 1}", block))
    with open(os.path.join(top, "doc", "memqosd.conf.5"), encoding="utf-8") as f:
        man = f.read()
    for i, block in enumerate(re.findall(r"^\.EX\n(.*?)^\.EE", man, re.S | re.M)):
        text = block.replace("\\-", "-").replace("\\(aq", "'")
        if re.search(r"^\[", text, re.M):
            examples.append((f"memqosd.conf(5) example {i + 1}", text))
    if not examples:
        r.n += 1
        r.fail("documented examples", "no ini example found in README.md or memqosd.conf(5)")
    for name, text in examples:
        with tempfile.TemporaryDirectory(prefix="memqos-cli-") as tmp:
            os.chmod(tmp, 0o755)
            conf = os.path.join(tmp, "example.conf")
            write(conf, text)
            r.check(name, ["--config", conf, "--no-drop-ins"], EX_OK, want_quiet=True)

    print(f"1..{r.n}")
    print(f"# {r.n - r.failed} passed, {r.failed} failed")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())

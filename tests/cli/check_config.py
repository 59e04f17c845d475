#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""memqosd --check-config against the fixture configs: exit codes and messages.

Usage: check_config.py MEMQOSD FIXTURES_DIR

Every finding is one line "FILE:LINE: SEVERITY: message"; an error fails
the check (exit 78), a warning never does (exit 0). Every fixture is copied
into a fresh mkdtemp directory with mode 0644 (git checkouts under umask 002
are group-writable, which memqosd rightly refuses) and checked with
`memqosd --check-config --config COPY`; its first line is
"# expect: :LINE: message":

  good/*.conf     exit 0, nothing on stderr
  bad/*.conf      exit 78, stderr has "COPY:LINE: error: message"
  unknown/*.conf  what start-up ignores with a warning: exit 78, stderr has
                  "COPY:LINE: error: message" and says "would be ignored"
  warn/*.conf     exit 0, stderr has "COPY:LINE: warning: message"

and no output of --check-config says "ignoring" (nothing is ignored in a
check). Plus: a world-writable config exits 78; a missing --config file exits
78; a drop-in in FILE.d/ is read after FILE (and can make it fail);
--no-drop-ins skips it; misspelt keys and sections get a suggestion;
--print plans against FIXTURES_DIR/proc/plan/meminfo (--proc-root), never
this host's. Prints TAP; exits non-zero if any case failed.
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

    def check(self, name, args, want_exit, want_text=None, want_quiet=False, want_err=(),
              want_out=(), unwanted=()):
        """want_text: in stdout or stderr; want_err / want_out: each in that
        stream; unwanted: in neither."""
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
        why += [f"stderr lacks {t!r}" for t in want_err if t not in err]
        why += [f"stdout lacks {t!r}" for t in want_out if t not in out]
        why += [f"output has {t!r}" for t in ("ignoring",) + tuple(unwanted) if t in out + err]
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

    fixture_kinds = (("good", EX_OK, None), ("bad", EX_CONFIG, "error"),
                     ("unknown", EX_CONFIG, "error"), ("warn", EX_OK, "warning"))
    for kind, want_exit, severity in fixture_kinds:
        d = os.path.join(fixtures, kind)
        for fn in sorted(os.listdir(d)):
            if not fn.endswith(".conf"):
                continue
            src = os.path.join(d, fn)
            want = expectation(src)
            m = re.fullmatch(r":(\d+): (.+)", want or "")
            if kind != "good" and not m:
                r.n += 1
                r.fail(f"{kind}/{fn}", "first line must be '# expect: :LINE: message'")
                continue
            with tempfile.TemporaryDirectory(prefix="memqos-cli-") as tmp:
                os.chmod(tmp, 0o755)
                conf = copy_to(tmp, src)
                diag = [] if kind == "good" else [f"{conf}:{m.group(1)}: {severity}: {m.group(2)}"]
                if kind == "unknown":
                    diag.append("would be ignored")
                r.check(f"{kind}/{fn}", ["--config", conf], want_exit, want_quiet=(kind == "good"),
                        want_err=diag)

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
                want_err=[f"{dropins}/20-bad.conf:2: error: [Overcommit] MemoryRatio=abc: not a "
                          "number (expected a ratio ≥ 1.0, e.g. 1.5)",
                          "memqosd: 1 error, 0 warnings: the configuration is invalid"])
        r.check("--no-drop-ins skips it", ["--config", conf, "--no-drop-ins"], EX_OK, want_quiet=True)
        write(os.path.join(dropins, "20-bad.conf"), "[Manager]\nFrobnicate=1\n")
        r.check("unknown key in a drop-in", ["--config", conf], EX_CONFIG,
                want_err=[f"{dropins}/20-bad.conf:2: error: [Manager] Frobnicate=1: unknown key, "
                          "would be ignored"])
        os.remove(os.path.join(dropins, "20-bad.conf"))
        r.check("--example-request that is not a size", ["--config", conf, "--print",
                "--example-request=lots"], EX_USAGE, "--example-request: not a size")
        r.check("--example-limit without --print", ["--config", conf, "--example-limit=2G"],
                EX_USAGE, "go with --check-config --print")
        os.remove(os.path.join(dropins, "10-good.conf"))
        os.rmdir(dropins)

        # Severity: a warning never fails the check, an error always does.
        write(conf, "[Class.dedicated]\nKillable=yes\n")
        r.check("a warning alone passes", ["--config", conf], EX_OK,
                want_err=[f"{conf}:2: warning: [Class.dedicated] Killable=yes: class has "
                          "Protection=min but is killable",
                          "memqosd: 0 errors, 1 warning: the configuration is valid"])
        write(conf, "[Class.dedicated]\nKillable=yes\n[Manager]\nInterval=0\n")
        r.check("an error fails, with the warning", ["--config", conf], EX_CONFIG,
                want_err=[f"{conf}:2: warning: [Class.dedicated] Killable=yes",
                          f"{conf}:4: error: [Manager] Interval=0: must be greater than 0",
                          "memqosd: 1 error, 1 warning: the configuration is invalid"])

        # A rule's glob that reaches units no rule adopts (issue 23): a warning
        # each, with an example; a glob that reaches none says nothing.
        write(conf, "[Rule.slices]\nMatch=*.slice\nClass=reclaimed\n"
                    "[Rule.vms]\nMatch=machine-*\nClass=reclaimed\n"
                    "[Rule.web]\nMatch=nginx*.service\nClass=shared\n")
        r.check("rule globs that reach slices and VM scopes", ["--config", conf], EX_OK,
                want_err=[f"{conf}:2: warning: [Rule.slices] Match=*.slice: matches system.slice, "
                          "which no rule adopts (only services and scopes are adopted by a rule); "
                          "memqosd skips such units: narrow the glob to say what you mean",
                          f"{conf}:5: warning: [Rule.vms] Match=machine-*: matches "
                          "machine-qemu\\x2d1\\x2dweb.scope, which no rule adopts (a VM's scope",
                          "memqosd: 0 errors, 2 warnings: the configuration is valid"])

        # Misspelt names: a suggestion, and where a key belongs.
        for text, line, want in (
            ("[Reclaim]\nStalTarget=0.2%\n", 2,
             "error: [Reclaim] StalTarget=0.2%: unknown key, would be ignored (did you mean "
             "'StallTarget'?)"),
            ("[Overcommit]\nMemRatio=1.5\n", 2, "did you mean 'MemoryRatio'?"),
            ("[Manager]\nStallTarget=1%\n", 2,
             "error: [Manager] StallTarget=1%: unknown key, would be ignored ('StallTarget' is a "
             "key of [Reclaim])"),
            ("\n[Reclam]\nEnabled=no\n", 2,
             "error: [Reclam]: unknown section, would be ignored (did you mean '[Reclaim]'?)"),
            ("[Clas.shared]\nSwap=no\n", 1, "did you mean '[Class.shared]'?"),
            ("[Rule.web]\nMatch=web*.service\nClass=sahred\n", 3,
             "error: [Rule.web] Class=sahred: no such class (classes: system, dedicated, shared, "
             "reclaimed; did you mean 'shared'?)"),
        ):
            write(conf, text)
            r.check(f"suggestion: {want}", ["--config", conf], EX_CONFIG,
                    want_err=[f"{conf}:{line}: " + want if want.startswith("error") else want,
                              f"{conf}:{line}: error: "])

        # --print plans against the fixture's meminfo: MemTotal 16 GiB, SwapTotal 2 GiB.
        proc = os.path.join(sys.argv[2], "proc", "plan")
        mem_total, swap_total = 16 * 2**30, 2 * 2**30
        write(conf, "[Overcommit]\nMemoryRatio=1.5\nNodeReserved=10%\nFailoverReserve=2G\n"
                    "SwapCheck=refuse\n")
        node_reserved = mem_total // 10000 * 1000 + mem_total % 10000 * 1000 // 10000
        available = mem_total - node_reserved           # no services: this is no running daemon
        capacity = available * 3 // 2                   # × MemoryRatio, rounded down
        swap_needed = (available + 1) // 2              # (ratio − 1) × available, rounded up
        assert (node_reserved, available, capacity, swap_needed) == (
            1717986918, 15461882266, 23192823399, 7730941133)
        row = "#   {:<26} {:<26} {}"
        r.check("--print: planning rows against the fixture meminfo",
                ["--config", conf, "--no-drop-ins", "--print", f"--proc-root={proc}"], EX_OK,
                want_out=[
                    f"# Planning against this host's memory ({proc}/meminfo)",
                    row.format("MemTotal", "16.0 GiB (17179869184)", "").rstrip(),
                    row.format("SwapTotal", "2.0 GiB (2147483648)", "").rstrip(),
                    row.format("NodeReserved=10%", f"1.6 GiB ({node_reserved})",
                               f"set in {conf}:3"),
                    row.format("available", f"14.4 GiB ({available})", "MemTotal − NodeReserved"),
                    row.format("MemoryRatio=1.5", "", f"set in {conf}:2"),
                    row.format("VM capacity", f"21.6 GiB ({capacity})", "available × MemoryRatio"),
                    row.format("FailoverReserve=2G", "2.0 GiB (2147483648)", f"set in {conf}:4"),
                    row.format("for instances", f"19.6 GiB ({capacity - 2 * 2**30})", "VM capacity"),
                    row.format("swap needed", f"7.2 GiB ({swap_needed})",
                               "(MemoryRatio − 1) × available; SwapTotal is 5.2 GiB short: "
                               "SwapCheck=refuse would refuse every VM placement"),
                    row.format("Level1MemAvailable=10%", f"1.6 GiB ({node_reserved})",
                               "MemAvailable below it; default"),
                    row.format("SwapUsedKill=90%", "1.8 GiB (1932735283)", "of SwapTotal; default"),
                    # which file set each key, in the effective configuration
                    f"# set in {conf}:2\nMemoryRatio=1.5\n",
                    f"# set in {conf}:5\nSwapCheck=refuse\n",
                    "\nVMOverhead=0\n",
                ],
                want_err=[f"{conf}:5: warning: [Overcommit] SwapCheck=refuse: this host's "
                          "SwapTotal 2.0 GiB (2147483648) is below the 7.2 GiB (7730941133) "
                          "that MemoryRatio=1.5 needs",
                          "memqosd: 0 errors, 1 warning: the configuration is valid"],
                unwanted=["NodeReserved=10%: reserves"])
        write(conf, "[Overcommit]\nMemoryRatio=1.5\n")
        r.check("--print: SwapCheck=warn with too little swap is no finding",
                ["--config", conf, "--no-drop-ins", "--print", f"--proc-root={proc}"], EX_OK,
                want_quiet=True,
                want_out=["SwapTotal is 5.5 GiB short: SwapCheck=warn would add a warning to "
                          "every VM placement"])
        write(conf, "[Overcommit]\n\nNodeReserved=16G\n")
        r.check("--print: NodeReserved of all MemTotal",
                ["--config", conf, "--no-drop-ins", "--print", f"--proc-root={proc}"], EX_OK,
                want_err=[f"{conf}:3: warning: [Overcommit] NodeReserved=16G: reserves 16.0 GiB "
                          "(17179869184), at least this host's MemTotal 16.0 GiB (17179869184): "
                          "nothing is left for VMs, memqosd would refuse every VM placement"],
                want_out=[row.format("available", "0 B (0)", "MemTotal")])
        # The memory guard on this host: MemTotal − max(NodeReserved, in use
        # now) − GuardHeadroom; the fixture has 8 GiB in use, so 15G of
        # NodeReserved leaves the reclaimed class its 2 % floor, 1G does not.
        write(conf, "[Overcommit]\nNodeReserved=15G\n")
        r.check("--print: a NodeReserved that leaves the guarded class its floor",
                ["--config", conf, "--no-drop-ins", "--print", f"--proc-root={proc}"], EX_OK,
                want_err=[f"{conf}:2: warning: [Overcommit] NodeReserved=15G: leaves the memory "
                          "guard of class reclaimed 327.7 MiB (343597056) on this host (MemTotal "
                          "16.0 GiB (17179869184), in use now 8.0 GiB (8589934592), GuardHeadroom "
                          "819.2 MiB (858993459)): its workloads would be throttled there"],
                want_out=[row.format("guard of reclaimed", "327.7 MiB (343597056)",
                                     "MemTotal − max(NodeReserved, in use now 8.0 GiB "
                                     "(8589934592)) − GuardHeadroom")])
        write(conf, "[Overcommit]\nNodeReserved=1G\n")
        r.check("--print: the guard when the host uses more than NodeReserved",
                ["--config", conf, "--no-drop-ins", "--print", f"--proc-root={proc}"], EX_OK,
                want_quiet=True,
                want_out=[row.format("guard of reclaimed", "7.2 GiB (7730937856)",
                                     "MemTotal − max(NodeReserved")])

        # OOMScoreAdjust=keep: in the effective configuration and as the
        # OOMADJ of the class's tiers row (memqos writes none for it).
        write(conf, "[Class.shared]\nOOMScoreAdjust=keep\n")
        r.check("--print: OOMScoreAdjust=keep",
                ["--config", conf, "--no-drop-ins", "--print", f"--proc-root={proc}"], EX_OK,
                want_quiet=True,
                want_out=[f"# set in {conf}:2\nOOMScoreAdjust=keep\n",
                          "# shared     memqos-shared.slice",
                          "OOMADJ\n", " keep\n", " -997\n"])

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

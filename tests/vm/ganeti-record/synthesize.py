#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""synthesize.py ENV_DIR — write the migrate and failover hook environments
that a one-node cluster cannot record, derived from a recorded one.

    tests/vm/ganeti-record/synthesize.py tests/fixtures/ganeti/env

Reads ENV_DIR/instance-stop-pre-1.env (a running instance, maxmem 512,
minmem 256 on node1.example.test) and writes ENV_DIR/instance-{migrate,
failover}-{pre,post}-1.env for a move of that instance from node1.example.test
(master and primary) to node2.example.test, with the variables and values
that Ganeti 3.0.2 gives (see tests/fixtures/ganeti/NOTES.md):

- LUInstanceMigrate/LUInstanceFailover.BuildHooksEnv (cmdlib/
  instance_migration.py) add their own keys to BuildInstanceHookEnvByObject;
  the opcodes' defaults are used (migrate: mode from the hypervisor's
  migration_mode=live, cleanup False, allow_runtime_changes True; failover:
  ignore_consistency False, shutdown_timeout 120, cleanup False);
  OLD_/NEW_SECONDARY are "" (diskless is an externally mirrored template).
- hooksmaster.HooksMaster: the pre environment gets the prefix GANETI_; the
  post environment is BuildHooksEnv called again after Exec, prefixed
  GANETI_POST_, merged with the pre one. After Exec the instance's primary
  is already the target, so GANETI_POST_INSTANCE_PRIMARY, GANETI_POST_OLD_PRIMARY
  and GANETI_POST_NEW_PRIMARY are all the TARGET node.
"""
import os
import sys

SOURCE, TARGET = "node1.example.test", "node2.example.test"
BASE = "instance-stop-pre-1.env"
# Keys that hooksmaster._RunWrapper sets (never GANETI_POST_-prefixed), and
# those of the hook's own shell.
RUNNER_KEYS = {"PATH", "PWD", "GANETI_HOOKS_VERSION", "GANETI_OP_CODE", "GANETI_DATA_DIR",
               "GANETI_HOOKS_PHASE", "GANETI_HOOKS_PATH", "GANETI_OBJECT_TYPE",
               "GANETI_CLUSTER", "GANETI_MASTER"}


def read_env(path):
    env = {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            key, _, value = line.partition("=")
            env[key] = value
    return env


def write_env(path, comments, env):
    with open(path, "w") as f:
        for c in comments:
            f.write("# %s\n" % c)
        for key in sorted(env):
            f.write("%s=%s\n" % (key, env[key]))


def build(base, hpath, opcode, extra, nodes_note):
    # Pre: the instance's keys (minus the op-specific one of the base op), the
    # runner's keys, and the LU's own keys.
    pre = {k: v for k, v in base.items() if k != "GANETI_TIMEOUT"}
    pre.update(GANETI_HOOKS_PATH=hpath, GANETI_OP_CODE=opcode, GANETI_HOOKS_PHASE="pre")
    pre.update(("GANETI_" + k, v) for k, v in extra.items())
    # Post: BuildHooksEnv again after Exec (primary is now the target), as
    # GANETI_POST_*, plus the whole pre environment.
    post = dict(pre)
    post["GANETI_HOOKS_PHASE"] = "post"
    for k, v in pre.items():
        if k in RUNNER_KEYS:
            continue
        post["GANETI_POST_" + k[len("GANETI_"):]] = v
    post.update(GANETI_POST_INSTANCE_PRIMARY=TARGET, GANETI_POST_OLD_PRIMARY=TARGET,
                GANETI_POST_NEW_PRIMARY=TARGET)
    head = "synthetic: built from %s per instance_migration.py BuildHooksEnv" % BASE
    return ([head, "(tests/vm/ganeti-record/synthesize.py) " + nodes_note[0]], pre), \
           ([head, "(tests/vm/ganeti-record/synthesize.py) " + nodes_note[1]], post)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    base = read_env(os.path.join(d, BASE))
    assert base["GANETI_INSTANCE_PRIMARY"] == SOURCE and base["GANETI_INSTANCE_STATUS"] == "up"
    moves = {
        "migrate": ("instance-migrate", "OP_INSTANCE_MIGRATE", {
            "MIGRATE_LIVE": "True", "MIGRATE_CLEANUP": "False",
            "OLD_PRIMARY": SOURCE, "NEW_PRIMARY": TARGET,
            "ALLOW_RUNTIME_CHANGES": "True",
            "OLD_SECONDARY": "", "NEW_SECONDARY": ""},
            ("move %s -> %s; the same environment on every node: runs on the master, source and target" % (SOURCE, TARGET),
             "move %s -> %s; the same environment on every node: runs on the master, source and target" % (SOURCE, TARGET))),
        "failover": ("instance-failover", "OP_INSTANCE_FAILOVER", {
            "IGNORE_CONSISTENCY": "False", "SHUTDOWN_TIMEOUT": "120",
            "OLD_PRIMARY": SOURCE, "NEW_PRIMARY": TARGET, "FAILOVER_CLEANUP": "False",
            "OLD_SECONDARY": "", "NEW_SECONDARY": ""},
            ("move %s -> %s; the same environment on every node: pre runs on the master and target only (the source here because it is the master)" % (SOURCE, TARGET),
             "move %s -> %s; the same environment on every node: post runs on the master, target and source" % (SOURCE, TARGET))),
    }
    for name, (hpath, opcode, extra, notes) in moves.items():
        (pre_c, pre), (post_c, post) = build(base, hpath, opcode, extra, notes)
        write_env(os.path.join(d, "%s-pre-1.env" % hpath), pre_c, pre)
        write_env(os.path.join(d, "%s-post-1.env" % hpath), post_c, post)
        print("wrote %s-pre-1.env, %s-post-1.env" % (hpath, hpath))


if __name__ == "__main__":
    main()

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 24 item 3 on the real kernel: oom_score_adj is given back, and a
# class with OOMScoreAdjust=keep is never written.
#  a. og.service has two processes: its main process with the unit's 0, and
#     a child that set its own -500 (as PostgreSQL's postmaster sets -1000
#     for itself). Assigned to reclaimed, both get memqos's 1000; after
#     UnassignWorkload the main process has 0 and the child -500 again
#     (before: both kept 1000 until they exited).
#  b. With [Class.shared] OOMScoreAdjust=keep (a drop-in and a reload),
#     og.service assigned to shared keeps 0 and -500: memqosd's sweep has
#     run over it (it set memory.oom.group=1, shared being killable) and
#     wrote no oom_score_adj.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

dropin=/etc/memqos/memqosd.conf.d/48-keep.conf
cg=/sys/fs/cgroup/system.slice/og.service
cleanup() {
  mgr UnassignWorkload s og.service >/dev/null 2>&1 || true
  systemctl stop og.service 2>/dev/null || true
  rm -f /etc/systemd/system/og.service "$dropin"
  systemctl daemon-reload
  systemctl reload memqosd 2>/dev/null || true
}
trap cleanup EXIT

wait_memqosd
cat >/etc/systemd/system/og.service <<'UNIT'
[Service]
ExecStart=/bin/sh -c 'sh -c "echo -500 >/proc/self/oom_score_adj; exec sleep infinity" & exec sleep infinity'
UNIT
systemctl daemon-reload
systemctl start og.service
main=$(systemctl show -p MainPID --value og.service)
child() { grep -vx "$main" "$cg/cgroup.procs" | head -n1; }
wait_for 20 "og.service's child" bash -c "[[ -n \$(grep -vx $main $cg/cgroup.procs) ]]"
kid=$(child)
adj() { cat "/proc/$1/oom_score_adj"; }
wait_for 20 "the child's own -500" bash -c "[[ \$(cat /proc/$kid/oom_score_adj) == -500 ]]"
[[ $(adj "$main") == 0 ]] || fail "main process $main starts with $(adj "$main"), expected 0"
ok "og.service: main $main at 0, child $kid at -500"

echo "--- a. reclaimed, then unassigned: each process gets its own value back"
mgr AssignWorkload ssttb og.service reclaimed 0 1073741824 false >/dev/null
both() { [[ $(adj "$main") == "$1" && $(adj "$kid") == "$2" ]]; }
export -f adj both
wait_for 30 "both processes at reclaimed's 1000" both 1000 1000
ok "assigned to reclaimed: both at 1000"
mgr UnassignWorkload s og.service >/dev/null
wait_for 30 "main back at 0 and child back at -500" both 0 -500
journalctl -u memqosd -o cat | grep "og.service" | grep -m1 "their own oom_score_adj back" | sed 's/^/  journal: /' || true
ok "unassigned: main 0, child -500 again"

echo "--- b. a class with OOMScoreAdjust=keep is never written"
mkdir -p "$(dirname "$dropin")"
printf '[Class.shared]\nOOMScoreAdjust=keep\n' >"$dropin"
memqosd --check-config >/dev/null || fail "the keep drop-in does not pass --check-config"
systemctl reload memqosd
echo 0 >"$cg/memory.oom.group" # behind memqosd's back: its 1 again is the sweep's mark
mgr AssignWorkload ssttb og.service shared 0 1073741824 false >/dev/null
wait_for 30 "memory.oom.group=1 on og.service (the sweep ran over it)" grep -qx 1 "$cg/memory.oom.group"
both 0 -500 || fail "class shared keeps oom_score_adj, but main has $(adj "$main") and child $(adj "$kid")"
ok "assigned to shared with OOMScoreAdjust=keep: main 0, child -500 untouched after the sweep"

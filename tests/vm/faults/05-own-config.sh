#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 11, defects 1 and 2: memqosd never lowers what units' own
# configuration sets, and gives a unit back exactly its own configuration
# when it lets go — across a kill -9, and so that a later edit of the unit's
# own files takes effect again (no runtime drop-in of memqos's left behind).
set -euo pipefail
source "$(dirname "$0")/lib.bash"

wait_memqosd
sys=/sys/fs/cgroup/system.slice
cg=$sys/own.service

# A service with memory limits of its own, and an administrator's MemoryLow=
# on system.slice (memqosd.service itself has MemoryMin=64M in its unit).
cat >/etc/systemd/system/own.service <<'UNIT'
[Service]
ExecStart=/bin/sleep infinity
MemoryLow=10M
MemoryHigh=280M
MemoryMax=300M
UNIT
mkdir -p /etc/systemd/system/system.slice.d
printf '[Slice]\nMemoryLow=1G\n' >/etc/systemd/system/system.slice.d/50-admin.conf
systemctl daemon-reload
systemctl start own.service
wait_for 10 "own.service cgroup" test -d "$cg"
expect_file "$cg/memory.max" 314572800
expect_file "$sys/memory.low" 1073741824
min_before=$(cat "$sys/memory.min")
ok "before memqos: system.slice memory.min=$min_before"

out=$(mgr AssignWorkload ssttb own.service shared 268435456 1073741824 true)
[[ $out == *own_2eservice* ]] || fail "AssignWorkload answered '$out'"
wait_for 20 "memqosd's limit on own.service" grep -qx 1073741824 "$cg/memory.max"
expect_file "$cg/memory.low" 268435456
# Defect 1: 256 MiB of workloads below a slice with 1 GiB of its own: the
# administrator's value stays (before the fix: lowered to memqos's sum).
wait_for 20 "system.slice memory.min covering memqosd.service's 64M" \
  bash -c "(( \$(cat $sys/memory.min) >= 67108864 ))"
expect_file "$sys/memory.low" 1073741824
ok "system.slice keeps MemoryLow=1G, and memory.min=$(cat $sys/memory.min) covers memqosd's own MemoryMin=64M"
[[ -f /var/lib/memqos/originals/own_2eservice ]] || fail "no record of own.service's own values"
grep -qx 'MemoryMax=314572800' /var/lib/memqos/originals/own_2eservice ||
  fail "the record has not own.service's MemoryMax: $(cat /var/lib/memqos/originals/own_2eservice)"
ok "own.service's own values remembered: $(tr '\n' ' ' </var/lib/memqos/originals/own_2eservice | sed 's/# [^=]*Written by memqosd\. //')"

# Across a kill -9: the record is on disk, not in memqosd's memory.
pid_before=$(systemctl show -p MainPID --value memqosd)
systemctl kill -s KILL memqosd
wait_for 60 "memqosd restarted" bash -c "[[ \$(systemctl show -p MainPID --value memqosd) != $pid_before && \$(systemctl is-active memqosd) == active ]]"
wait_memqosd
ok "memqosd restarted after kill -9"

# Defect 2: unassign gives back exactly the unit's own values (before the
# fix: MemoryMax=infinity, MemoryLow=0 at runtime until the next reboot).
mgr UnassignWorkload s own.service >/dev/null
wait_for 20 "own.service's own MemoryMax back" grep -qx 314572800 "$cg/memory.max"
expect_file "$cg/memory.high" 293601280
expect_file "$cg/memory.low" 10485760
expect_file "$sys/memory.low" 1073741824
wait_for 20 "system.slice memory.min back to its own" grep -qx "$min_before" "$sys/memory.min"
ok "system.slice memory.min=$min_before again"
[[ ! -e /var/lib/memqos/originals/own_2eservice ]] || fail "the record outlived the unassign"
left=$(ls /run/systemd/system.control/own.service.d/ 2>/dev/null | grep '^50-Memory' || true)
[[ -z $left ]] || fail "memqos's runtime drop-ins left behind: $left"
ok "no runtime drop-in of memqos's left for own.service"

# As if memqos had never touched it: the administrator edits the unit's own
# configuration and reloads; the new value takes effect (a runtime drop-in
# left by memqos would have masked it until reboot).
mkdir -p /etc/systemd/system/own.service.d
printf '[Service]\nMemoryMax=400M\n' >/etc/systemd/system/own.service.d/60-edit.conf
systemctl daemon-reload
wait_for 20 "the edited MemoryMax=400M" grep -qx 419430400 "$cg/memory.max"
ok "an edit of own.service's own configuration takes effect after unassign"

systemctl stop own.service
rm -rf /etc/systemd/system/own.service /etc/systemd/system/own.service.d \
  /etc/systemd/system/system.slice.d/50-admin.conf
systemctl daemon-reload

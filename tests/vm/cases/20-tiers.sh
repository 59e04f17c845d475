#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The control plane's promise on a real systemd: assigning a running service
# to "shared" with request 256 MiB and limit 1 GiB sets its cgroup's tiers and
# its parent slice's protection, and they survive daemon-reload and kill -9 of
# memqosd (persist=true).
set -euo pipefail
source "$(dirname "$0")/lib.bash"

wait_memqosd
systemd-run --unit=web.service /bin/sleep infinity >/dev/null
cg=/sys/fs/cgroup/system.slice/web.service
wait_for 10 "web.service cgroup" test -d "$cg"

out=$(mgr AssignWorkload ssttb web.service shared 268435456 1073741824 true)
[[ $out == 'o "/org/memqos1/workload/web_2eservice"' ]] || fail "AssignWorkload answered '$out'"
ok "AssignWorkload -> $out"

check_tiers() {
  wait_for 10 "memory.low of web.service" grep -qx 268435456 "$cg/memory.low"
  wait_for 10 "memory.max of web.service" grep -qx 1073741824 "$cg/memory.max"
  expect_file "$cg/memory.low" 268435456
  expect_file "$cg/memory.high" 993210368
  expect_file "$cg/memory.max" 1073741824
  expect_file "$cg/memory.min" 0
  local parent
  parent=$(cat /sys/fs/cgroup/system.slice/memory.low)
  ((parent >= 268435456)) || fail "system.slice memory.low=$parent, expected >= 268435456"
  ok "system.slice memory.low=$parent >= 268435456"
}
check_tiers

for p in MemoryLow MemoryHigh MemoryMax; do
  busctl get-property org.memqos1 /org/memqos1/workload/web_2eservice org.memqos1.Workload $p
done
cur=$(busctl get-property org.memqos1 /org/memqos1/workload/web_2eservice org.memqos1.Workload Persistent)
[[ $cur == "b true" ]] || fail "Persistent=$cur"

echo "--- systemctl daemon-reload re-applies what was changed behind memqosd's back"
# set-property --runtime writes the drop-in memqosd's runtime properties live
# in: systemd itself keeps these values across the reload; only memqosd puts
# its own back.
systemctl set-property --runtime web.service MemoryLow=0 MemoryMax=536870912
wait_for 10 "memory.max changed behind memqosd's back" grep -qx 536870912 "$cg/memory.max"
expect_file "$cg/memory.low" 0
cursor=$(journalctl -u memqosd -n 0 --show-cursor | sed -n 's/^-- cursor: //p')
systemctl daemon-reload
check_tiers
journalctl -u memqosd --after-cursor="$cursor" -o cat | grep -q "systemd reloaded" ||
  fail "memqosd did not log the reload it reacted to"
ok "memqosd put its tiers back after daemon-reload"

echo "--- systemctl kill -s KILL memqosd"
pid_before=$(systemctl show -p MainPID --value memqosd)
systemctl kill -s KILL memqosd
wait_for 30 "memqosd restarted" bash -c "[[ \$(systemctl show -p MainPID --value memqosd) != $pid_before && \$(systemctl is-active memqosd) == active ]]"
wait_memqosd
ok "memqosd restarted (pid $pid_before -> $(systemctl show -p MainPID --value memqosd))"
check_tiers
mgr ListWorkloads | grep -q '"web.service"' || fail "web.service not listed after the restart: $(mgr ListWorkloads)"
ok "web.service still managed after kill -9"
[[ -n $(ls /var/lib/memqos/assignments) ]] || fail "no persistent assignment in /var/lib/memqos/assignments"

echo "--- a restarted unit gets its tiers again"
systemctl stop web.service
systemd-run --unit=web.service /bin/sleep infinity >/dev/null
wait_for 10 "web.service cgroup" test -d "$cg"
check_tiers

echo "--- UnassignWorkload takes the tiers back"
mgr UnassignWorkload s web.service
wait_for 10 "memory.low back to 0" grep -qx 0 "$cg/memory.low"
expect_file "$cg/memory.max" max
systemctl stop web.service

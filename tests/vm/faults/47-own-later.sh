#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 24, items 1 and 2: what others set *after* memqos's first touch is
# kept, and a unit is given back what its configuration says now.
#  a. An administrator raises system.slice's MemoryLow with set-property
#     (persistent, /etc/systemd/system.control) after memqosd put its sum
#     there, then daemon-reload, then a change below the slice: memqosd never
#     lowers the 2 GiB, and leaves them when it lets go (before: lowered back
#     to its own record of the slice's first value).
#  b. The unit file's MemoryMax is raised from 300M to 600M while the unit is
#     assigned (not reloaded); unassign: memory.max is 600M (before: memqos
#     re-sent the 300M it remembered, under a workload holding 400M).
#  c. A persistent assignment whose record is from another boot (its BootId
#     changed, its runtime drop-ins gone, as after a reboot) with the unit
#     file now at 700M: memqosd drops the record at start, learns afresh,
#     and unassign gives 700M (before: the record's 300M).
# Every value checked is one systemd alone would not have at that moment
# without memqosd's give-back (or would have, had memqosd re-sent its record).
set -euo pipefail
source "$(dirname "$0")/lib.bash"

sys=/sys/fs/cgroup/system.slice
cleanup() {
  systemctl stop ol1.service ol2.service mm.service 2>/dev/null || true
  rm -f /etc/systemd/system/ol1.service /etc/systemd/system/ol2.service \
    /etc/systemd/system/mm.service
  systemctl revert system.slice >/dev/null 2>&1 || true
  systemctl start memqosd 2>/dev/null || true
  systemctl daemon-reload
}
trap cleanup EXIT
cursor_now() { journalctl -u memqosd --show-cursor -n 0 -q | sed -n 's/^-- cursor: //p'; }

wait_memqosd
for u in ol1 ol2; do
  printf '[Service]\nExecStart=/bin/sleep infinity\n' >/etc/systemd/system/$u.service
done
# mm.service holds 400 MiB (tail keeps the last 400M of its input while its
# reader, sleep, never reads).
cat >/etc/systemd/system/mm.service <<'UNIT'
[Service]
ExecStart=/bin/sh -c 'head -c 400M /dev/zero | tail -c 400M | sleep infinity'
MemoryMax=300M
UNIT
systemctl daemon-reload
systemctl start ol1.service ol2.service

# --- a. the administrator's later raise of a slice's protection -----------
mgr AssignWorkload ssttb ol1.service shared 268435456 1073741824 true >/dev/null
wait_for 20 "system.slice memory.low with memqosd's sum" \
  bash -c "(( \$(cat $sys/memory.low) >= 268435456 ))"
ok "memqosd's sum on system.slice: memory.low=$(cat $sys/memory.low)"
systemctl set-property system.slice MemoryLow=2G
cursor=$(cursor_now)
systemctl daemon-reload
wait_for 20 "memqosd's look after the daemon-reload" bash -c \
  "journalctl -u memqosd --after-cursor='$cursor' -o cat | grep -q 'systemd reloaded'"
mgr AssignWorkload ssttb ol2.service shared 536870912 1073741824 true >/dev/null
wait_for 20 "ol2.service's tiers" grep -qx 536870912 $sys/ol2.service/memory.low
# Give a wrong lowering the time it would take (memqosd's answer to the
# assignment includes the ancestors' sums).
wait_for 10 "memqosd's tiers settled" bash -c \
  "journalctl -u memqosd --after-cursor='$cursor' -o cat | grep -q 'Assigned ol2.service'"
expect_file $sys/memory.low 2147483648
for u in ol1 ol2; do mgr UnassignWorkload s $u.service >/dev/null; done
wait_for 20 "ol1.service's own memory.low back" grep -qx 0 $sys/ol1.service/memory.low
wait_for 20 "ol2.service's own memory.low back" grep -qx 0 $sys/ol2.service/memory.low
expect_file $sys/memory.low 2147483648
[[ $(systemctl show -p MemoryLow --value system.slice) == 2147483648 ]] ||
  fail "systemd says system.slice MemoryLow=$(systemctl show -p MemoryLow --value system.slice)"
ok "a. the administrator's later MemoryLow=2G on system.slice kept through daemon-reload, a change below it and both unassigns"
systemctl revert system.slice >/dev/null

# --- b. the unit file's MemoryMax raised while assigned -------------------
systemctl start mm.service
cg=$sys/mm.service
wait_for 10 "mm.service cgroup" test -d $cg
expect_file $cg/memory.max 314572800
mgr AssignWorkload ssttb mm.service shared 268435456 1073741824 true >/dev/null
wait_for 20 "memqosd's limit on mm.service" grep -qx 1073741824 $cg/memory.max
wait_for 90 "mm.service holding more than 300M" bash -c \
  "(( \$(cat $cg/memory.current) + \$(cat $cg/memory.swap.current) > 330000000 ))"
sed -i 's/^MemoryMax=300M/MemoryMax=600M/' /etc/systemd/system/mm.service # not reloaded
mgr UnassignWorkload s mm.service >/dev/null
wait_for 20 "mm.service's unit file MemoryMax of now (600M)" grep -qx 629145600 $cg/memory.max
systemctl is-active -q mm.service || fail "mm.service died: $(systemctl status mm.service | tail -5)"
oom=$(awk '$1 == "oom_kill" {print $2}' $cg/memory.events)
[[ $oom == 0 ]] || fail "oom_kill=$oom in mm.service"
ok "b. unassign gave mm.service the unit file's MemoryMax of now (600M, not the 300M of the first touch); it lives, oom_kill=0, memory.current=$(cat $cg/memory.current)"

# --- c. a record from another boot ---------------------------------------
systemctl stop mm.service
systemctl daemon-reload
sed -i 's/^MemoryMax=600M/MemoryMax=300M/' /etc/systemd/system/mm.service
systemctl daemon-reload
systemctl start mm.service
wait_for 10 "mm.service cgroup" test -d $cg
expect_file $cg/memory.max 314572800
mgr AssignWorkload ssttb mm.service shared 268435456 1073741824 true >/dev/null
wait_for 20 "memqosd's limit on mm.service" grep -qx 1073741824 $cg/memory.max
rec=/var/lib/memqos/originals/mm_2eservice
grep -qx 'MemoryMax=314572800' $rec || fail "the record has not the 300M: $(cat $rec)"
grep -q '^BootId=' $rec || fail "the record has no BootId: $(cat $rec)"
# "Reboot": memqosd stopped, the record's boot another one, /run's drop-ins
# gone, the unit file changed meanwhile and in force.
systemctl stop memqosd
sed -i 's/^BootId=.*/BootId=00000000000000000000000000000000/' $rec
rm -f /run/systemd/system.control/mm.service.d/50-Memory*
sed -i 's/^MemoryMax=300M/MemoryMax=700M/' /etc/systemd/system/mm.service
systemctl daemon-reload
expect_file $cg/memory.max 734003200
cursor=$(cursor_now)
systemctl start memqosd
wait_memqosd
wait_for 20 "memqosd's limit on mm.service again" grep -qx 1073741824 $cg/memory.max
journalctl -u memqosd --after-cursor="$cursor" -o cat | grep -q "Forgot the record of mm.service's own memory properties made in an earlier boot" ||
  fail "no line about the earlier boot's record: $(journalctl -u memqosd --after-cursor="$cursor" -o cat | tail -20)"
grep -qx 'MemoryMax=734003200' $rec || fail "not learned afresh: $(cat $rec)"
mgr UnassignWorkload s mm.service >/dev/null
wait_for 20 "mm.service's 700M back" grep -qx 734003200 $cg/memory.max
ok "c. a record from an earlier boot dropped at start; unassign gave the 700M the unit file says now"

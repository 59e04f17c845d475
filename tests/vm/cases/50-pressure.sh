#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The pressure engine on the real kernel (issue: pressure engine):
#  - OOM priority: oom_score_adj per class on every process of a workload and
#    memory.oom.group=1 on killable ones, repaired when changed behind
#    memqosd's back;
#  - the memory guard writes the reclaimed slice's MemoryHigh through systemd;
#  - admission closes at level 1 (AdmissionClosed) and reopens at level 0;
#  - dry run: a kill decision kills nothing;
#  - swap-usage kill: with SwapUsedKill reached, the victim with the most swap
#    goes first;
#  - a reclaimed hog growing without bound is capped and then killed by
#    memqosd, as a whole unit that systemd sees failed, before the kernel OOM
#    killer fires; the dedicated service is never killed and stays resident;
#  - the kill is in the persistent history after a restart of memqosd.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

wait_memqosd
dropin=/etc/memqos/memqosd.conf.d
mkdir -p "$dropin"
# On any exit: what this case started and configured goes, so that a failure
# here does not leave a swapped-out workload, a forced level or a long kill
# cooldown to the cases after it (CI of 488aba0: 52, 55 and 56 failed after
# this case did, on its swapper.service and drop-ins).
cleanup() {
  local u
  for u in idle early victim big swapper hog online; do
    systemctl stop "$u.service" 2>/dev/null || true
    systemctl reset-failed "$u.service" 2>/dev/null || true
  done
  rm -f "$dropin"/50-*.conf
  systemctl restart memqosd 2>/dev/null || true
}
trap cleanup EXIT
prop() { busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager "$1" | awk '{print $2}'; }
restart_memqosd() {
  systemctl restart memqosd
  wait_memqosd
}
kills_of() { # kills_of UNIT: how many kills of UNIT the history holds
  mgr ListKills | grep -o "\"$1\"" | wc -l
}
oom_kills() { awk '/^oom_kill / {print $2}' /proc/vmstat; }

# --- the dedicated "online" service: 200 MiB touched, re-touched every second
memqosctl run --name online --class dedicated --request 264M --limit 264M -- /usr/bin/python3 -c "$ONLINE_PY" 200 >/dev/null
ocg=/sys/fs/cgroup/memqos.slice/memqos-dedicated.slice/online.service
wait_for 60 "online.service resident (memory.current >= 200 MiB)" \
  bash -c "(( \$(cat $ocg/memory.current) >= 200 << 20 ))"
online_pid=$(systemctl show -p MainPID --value online.service)
ok "online.service pid $online_pid resident: $(cat $ocg/memory.current) bytes"

# --- OOM priority
wait_for 20 "oom_score_adj -997 on online" grep -qx -- -997 /proc/$online_pid/oom_score_adj
ok "online (dedicated) oom_score_adj = -997"
systemd-run --unit=idle.service --slice=memqos-reclaimed.slice /bin/sleep infinity >/dev/null
icg=/sys/fs/cgroup/memqos.slice/memqos-reclaimed.slice/idle.service
idle_pid=$(systemctl show -p MainPID --value idle.service)
wait_for 20 "oom_score_adj 1000 on idle" grep -qx 1000 /proc/$idle_pid/oom_score_adj
wait_for 20 "memory.oom.group 1 on idle" grep -qx 1 $icg/memory.oom.group
ok "idle (reclaimed) oom_score_adj = 1000, memory.oom.group = 1"
echo 0 >/proc/$idle_pid/oom_score_adj
echo 0 >$icg/memory.oom.group
# The repair turn takes one workload every 2 ticks (Manager::kRepairTicks):
# each within 2 s per workload managed, however many earlier cases left.
wait_for 60 "oom_score_adj repaired" grep -qx 1000 /proc/$idle_pid/oom_score_adj
wait_for 60 "memory.oom.group repaired" grep -qx 1 $icg/memory.oom.group
ok "changed behind memqosd's back: both repaired"
cursor=$(journalctl -u memqosd -n 0 --show-cursor | sed -n 's/^-- cursor: //p')
systemctl daemon-reload
# memqosd hears Reloading(false): systemd's reload, and whatever it re-applies, is over.
reloaded() { journalctl -u memqosd --after-cursor="$cursor" -o cat | grep -q "systemd reloaded"; }
wait_for 30 "memqosd hears the daemon-reload" reloaded
echo "after daemon-reload: memory.oom.group=$(cat $icg/memory.oom.group) oom_score_adj=$(cat /proc/$idle_pid/oom_score_adj)"
wait_for 20 "memory.oom.group 1 after daemon-reload" grep -qx 1 $icg/memory.oom.group
wait_for 20 "oom_score_adj 1000 after daemon-reload" grep -qx 1000 /proc/$idle_pid/oom_score_adj
ok "OOM priority holds across daemon-reload"
systemctl stop idle.service

# --- memory guard: take the cap away, restart memqosd, it is written again
systemctl set-property --runtime memqos-reclaimed.slice MemoryHigh=infinity
expect_file /sys/fs/cgroup/memqos.slice/memqos-reclaimed.slice/memory.high max
restart_memqosd
wait_for 30 "guard cap on memqos-reclaimed.slice" \
  bash -c "[[ \$(cat /sys/fs/cgroup/memqos.slice/memqos-reclaimed.slice/memory.high) != max ]]"
cap=$(cat /sys/fs/cgroup/memqos.slice/memqos-reclaimed.slice/memory.high)
total=$(prop MemoryTotal)
((cap < total)) || fail "guard cap $cap is not below MemTotal $total"
journalctl -u memqosd -o cat MESSAGE_ID=4d8a0f6b9c5e4b7f8a2e1c3d5b7a9e05 | grep -q "Set MemoryHigh of memqos-reclaimed.slice" ||
  fail "no journal entry for the guard cap"
ok "memory guard: memqos-reclaimed.slice memory.high = $cap (MemTotal $total)"

# --- admission: level 1 whenever MemAvailable <= 99 %
printf '[Pressure]\nLevel1MemAvailable=99%%\n' >"$dropin/50-admission.conf"
memqosd --check-config || fail "the admission drop-in does not pass --check-config"
systemctl reload memqosd
wait_for 30 "pressure level 1" bash -c "[[ \$(busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager PressureLevel) == 'u 1' ]]"
[[ $(prop AdmissionOpen) == false ]] || fail "AdmissionOpen is $(prop AdmissionOpen) at level 1"
# late.service is loaded but does not run: assigning it is a new placement.
printf '[Service]\nExecStart=/bin/sleep infinity\n' >/run/systemd/system/late.service
systemctl daemon-reload
out=$(mgr AssignWorkload ssttb late.service shared 0 18446744073709551615 false 2>&1) &&
  fail "AssignWorkload into shared succeeded while admission is closed: $out"
[[ $out == *"admission is closed"* ]] || fail "AssignWorkload answered: $out"
ok "admission closed: $out"
out=$(mgr AssignWorkload ssttb late.service dedicated 0 18446744073709551615 false) ||
  fail "AssignWorkload into dedicated (not killable) refused: $out"
# A unit that runs adds no memory when its class changes: never refused.
systemd-run --unit=early.service /bin/sleep infinity >/dev/null
out=$(mgr AssignWorkload ssttb early.service shared 0 18446744073709551615 false 2>&1) ||
  fail "AssignWorkload of a running unit refused while admission is closed: $out"
ok "a running unit is assigned into shared while admission is closed"
mgr UnassignWorkload s early.service
systemctl stop early.service
verdict=$(mgr VerifyPlacement tta{sv} $((64 << 20)) 0 0)
[[ $verdict == *'"hard"'*"admission is closed"* ]] || fail "VerifyPlacement at level 1: $verdict"
verdict=$(mgr VerifyPlacement tta{sv} $((64 << 20)) 0 1 class s dedicated)
[[ $verdict == *'"fits"'* ]] || fail "VerifyPlacement into dedicated at level 1: $verdict"
ok "VerifyPlacement at level 1: hard with the pressure reason (killable class), fits in dedicated"
rm "$dropin/50-admission.conf"
systemctl reload memqosd
wait_for 60 "admission reopened" bash -c "[[ \$(busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager AdmissionOpen) == 'b true' ]]"
mgr UnassignWorkload s late.service
mgr AssignWorkload ssttb late.service shared 0 18446744073709551615 false >/dev/null ||
  fail "AssignWorkload into shared refused after admission reopened"
ok "admission reopened at level 0"
systemctl stop late.service
mgr UnassignWorkload s late.service
rm /run/systemd/system/late.service
systemctl daemon-reload

# --- dry run: level 3 whenever MemAvailable <= 99 %, nothing is killed
# (a higher level's MemAvailable threshold may not be above a lower one's)
printf '[Manager]\nDryRun=yes\nMetricsFile=/run/memqos/dry.prom\nMetricsInterval=1s\n[Pressure]\nLevel1MemAvailable=99%%\nLevel2MemAvailable=99%%\nLevel3MemAvailable=99%%\nLevel3Duration=2s\n' >"$dropin/50-dry.conf"
memqosd --check-config || fail "the dry-run drop-in does not pass --check-config"
restart_memqosd
systemd-run --unit=victim.service --slice=memqos-reclaimed.slice /bin/sleep infinity >/dev/null
since=$(date '+%Y-%m-%d %H:%M:%S')
wait_for 60 "a 'Would kill' line" bash -c "journalctl -u memqosd -o cat --since '$since' | grep -q 'Would kill victim.service'"
# Three more ticks at level 3 (the metrics file counts them): still nothing may die.
ticks() { memqos_ticks /run/memqos/dry.prom; }
ticks0=$(ticks)
more_ticks() { (($(ticks) >= ticks0 + 3)); }
wait_for 30 "three more ticks at level 3" more_ticks
[[ $(prop PressureLevel) == 3 ]] || fail "pressure level $(prop PressureLevel) after the ticks, expected 3"
systemctl is-active --quiet victim.service || fail "dry run killed victim.service"
((($(kills_of victim.service)) == 0)) || fail "dry run recorded a kill"
ok "dry run: $(journalctl -u memqosd -o cat --since "$since" | grep -c 'Would kill') 'Would kill' lines, victim alive"
rm "$dropin/50-dry.conf" /run/memqos/dry.prom
systemctl stop victim.service
restart_memqosd

# --- swap-usage kill: with swap used past SwapUsedKill (and MemAvailable
# below level 3's threshold), victims are ranked by swap usage, not by size.
# big holds 160 MiB resident and no swap; swapper holds 64 MiB, all pushed to
# swap through its own memory.reclaim. By size big goes first; by swap,
# swapper. KillCooldown keeps it to one kill while we look.
printf '[Pressure]\nLevel1MemAvailable=99%%\nLevel2MemAvailable=99%%\nLevel3MemAvailable=99%%\nLevel3Duration=2s\nSwapUsedKill=1%%\nKillCooldown=10min\n' >"$dropin/50-swap.conf"
memqosd --check-config || fail "the swap drop-in does not pass --check-config"
hold_py='
import mmap, sys, time
n = int(sys.argv[1]) << 20
m = mmap.mmap(-1, n)
for i in range(0, n, 4096):
    m[i] = 1
open("/run/" + sys.argv[2] + ".ready", "w").close()
while True:
    time.sleep(60)
'
rm -f /run/big.ready /run/swapper.ready
systemd-run --unit=big.service --slice=memqos-reclaimed.slice /usr/bin/python3 -c "$hold_py" 160 big >/dev/null
systemd-run --unit=swapper.service --slice=memqos-reclaimed.slice /usr/bin/python3 -c "$hold_py" 64 swapper >/dev/null
wait_for 60 "big and swapper hold their memory" test -e /run/big.ready -a -e /run/swapper.ready
scg=/sys/fs/cgroup/memqos.slice/memqos-reclaimed.slice/swapper.service
# memory.reclaim answers EAGAIN when it reclaimed less than asked: fine here.
for _ in 1 2 3 4 5; do
  echo 64M >"$scg/memory.reclaim" 2>/dev/null || true
  (($(cat $scg/memory.swap.current) >= 48 << 20)) && break
done
(($(cat $scg/memory.swap.current) >= 48 << 20)) || fail "swapper has only $(cat $scg/memory.swap.current) bytes in swap"
ok "swapper: $(cat $scg/memory.swap.current) bytes in swap, $(cat $scg/memory.current) resident; big: $(cat /sys/fs/cgroup/memqos.slice/memqos-reclaimed.slice/big.service/memory.current) resident"
since=$(date '+%Y-%m-%d %H:%M:%S')
systemctl reload memqosd
wait_for 90 "a kill under the swap drop-in" bash -c "journalctl -u memqosd -o cat --since '$since' MESSAGE_ID=4d8a0f6b9c5e4b7f8a2e1c3d5b7a9e01 | grep -q Killed"
first=$(journalctl -u memqosd -o cat --since "$since" MESSAGE_ID=4d8a0f6b9c5e4b7f8a2e1c3d5b7a9e01 | grep Killed | head -n1)
echo "$first"
[[ $first == "Killed swapper.service"* ]] || fail "the swap kill took the wrong victim: $first"
[[ $first == *"swap used"* ]] || fail "the kill does not name the swap signal: $first"
journalctl -u memqosd -o export --since "$since" MESSAGE_ID=4d8a0f6b9c5e4b7f8a2e1c3d5b7a9e01 | grep -qx 'SWAP_TRIGGER=1' ||
  fail "the kill entry has no SWAP_TRIGGER=1 field"
systemctl is-active --quiet big.service || fail "big.service was killed too, within KillCooldown"
ok "swap-usage kill: swapper (most swap) killed first, big (largest) alive"
rm "$dropin/50-swap.conf"
systemctl stop big.service
restart_memqosd

# --- the surge: a reclaimed hog that grows 50 MiB every 0.5 s and never frees
oom_before=$(oom_kills)
systemd-run --unit=hog.service --slice=memqos-reclaimed.slice /usr/bin/python3 -c "$HOG_PY" >/dev/null
t0=$SECONDS
wait_for 240 "memqosd killed hog.service" bash -c "[[ \$(systemctl show -p Result --value hog.service) == signal ]]"
ok "hog.service killed after $((SECONDS - t0)) s: $(systemctl show -p ActiveState,SubState,Result --value hog.service | tr '\n' ' ')"
state=$(systemctl show -p ActiveState --value hog.service)
[[ $state == failed || $state == inactive ]] || fail "hog.service is '$state' after the kill, expected failed/inactive"
((($(kills_of hog.service)) >= 1)) || fail "the kill of hog.service is not in ListKills: $(mgr ListKills)"
journalctl -u memqosd -o cat MESSAGE_ID=4d8a0f6b9c5e4b7f8a2e1c3d5b7a9e01 | grep "Killed hog.service" ||
  fail "no kill entry with the kill MESSAGE_ID in the journal"
oom_after=$(oom_kills)
((oom_after == oom_before)) || fail "the kernel OOM killer fired ($oom_before -> $oom_after)"
ok "kernel OOM killer did not fire (oom_kill stays $oom_after)"
[[ $(systemctl show -p MainPID --value online.service) == "$online_pid" ]] || fail "online.service was restarted or killed"
systemctl is-active --quiet online.service || fail "online.service is not active"
((($(cat $ocg/memory.current)) >= 200 << 20)) || fail "online.service memory.current $(cat $ocg/memory.current) < 200 MiB"
swap=$(cat $ocg/memory.swap.current)
((swap == 0)) || fail "online.service has $swap bytes in swap"
ok "online.service untouched: pid $online_pid, resident $(cat $ocg/memory.current), swap $swap"

# --- the history survives a restart
restart_memqosd
((($(kills_of hog.service)) >= 1)) || fail "the kill is gone after a restart of memqosd: $(mgr ListKills)"
memqosctl events
memqosctl events | grep -q hog.service || fail "memqosctl events does not show hog.service"
ok "kill history after a restart: memqosctl events shows hog.service"
systemctl stop online.service

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Precision of the pressure engine under real memory use (issue 23), with the
# shipped thresholds (no forced level in parts a-c):
#  a. a bounded reclaimed batch (300 MiB, its last 100 MiB re-touched every
#     pass) beside a protected (dedicated) service lives and keeps making
#     passes at level 0 for 30 s: nothing is killed;
#  b. an unbounded hog started beside it (50 MiB every 0.5 s, never freed) is
#     the one memqosd kills, through cgroup.kill (systemd sees the unit fail
#     with signal), before the kernel OOM killer fires; the batch and the
#     protected service live; a PSI trigger started at least one tick early
#     meanwhile (memqos_psi_triggered_ticks_total grew);
#  c. a second bounded batch started right after that kill, while the cap
#     comes back, lives and makes passes for 30 s; no second kill;
#  e. rules whose globs reach slices, VM scopes, init.scope and dbus.service:
#     --check-config warns about each, and after a restart none of those
#     units is a workload.
# Part d (PID 1 latency during a throttle) is 56-pid1-latency.sh.
# Prints MEASURE: lines.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

dropin=/etc/memqos/memqosd.conf.d
prom=/run/memqos/precision-case.prom
D=/var/tmp/precision-case
units=(prot.service batch.service surge.service batch2.service)
cleanup() {
  local u
  for u in "${units[@]}"; do systemctl stop "$u" 2>/dev/null || true; done
  systemctl reset-failed "${units[@]}" 2>/dev/null || true
  rm -f "$dropin/55-case.conf" "$dropin/55-throttle.conf" "$dropin/55-rules.conf" "$prom"
  systemctl reload memqosd 2>/dev/null || true
}
trap cleanup EXIT

wait_memqosd
mkdir -p "$dropin" "$D"
rm -f "$D"/*
# NodeReserved=256M: the shipped 1G is half of this 2 GiB guest; with it the
# guard (MemTotal − the other classes − max(NodeReserved, the memory in use
# outside the classes) − 5 %) would leave the reclaimed class about 900 MiB,
# and the host would not be hurt before the hog meets that cap. 256M is what
# the guest's own services use (README: sizing small hosts).
printf '[Manager]\nMetricsFile=%s\n[Overcommit]\nNodeReserved=256M\n' "$prom" >"$dropin/55-case.conf"
memqosd --check-config >/dev/null || fail "the case's drop-in does not pass --check-config"
memqosctl reload >/dev/null || fail "memqosctl reload failed"
wait_for 30 "memqosd's metrics file" test -s "$prom"

prop() { busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager "$1" | awk '{print $2}'; }
metric() { awk -v k="$1" '$1 == k {print $2}' "$prom"; }
kills_of() { memqosctl events 2>/dev/null | grep -c -- "$1" || true; }
oom_kills() { awk '/^oom_kill / {print $2}' /proc/vmstat; }
passes() { cat "$D/$1" 2>/dev/null || echo 0; }
rcg=/sys/fs/cgroup/memqos.slice/memqos-reclaimed.slice

# The previous case's surge must be over: its stall in the host's PSI (avg10
# decays over tens of seconds) would raise the level during a.
wait_psi_quiet
echo "host memory PSI full avg10 $(psi_full_avg10) % at the start"
level=$(prop PressureLevel)
if [[ $level != 0 ]]; then
  echo "pressure level $level at the start (earlier cases); waiting for 0"
  wait_for 120 "pressure level 0" bash -c "[[ \$(busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager PressureLevel) == 'u 0' ]]"
fi

# bounded: allocate TOTAL MiB, then re-touch the last HOT MiB every pass and
# write the pass count to FILE (atomically) after each.
bounded_py='
import os, sys, time
total, hot, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
chunks = [bytearray(1 << 20) for _ in range(total)]
n = 0
while True:
    for c in chunks[total - hot:]:
        for i in range(0, len(c), 4096):
            c[i] = (c[i] + 1) & 255
    n += 1
    with open(out + ".tmp", "w") as f:
        f.write(str(n))
    os.replace(out + ".tmp", out)
    time.sleep(0.2)
'
memqosctl run --name prot --class dedicated --request 192M --limit 192M -- /usr/bin/python3 -c "$ONLINE_PY" 128 >/dev/null
prot_pid=$(systemctl show -p MainPID --value prot.service)
oom0=$(oom_kills)

# ---------------------------------------------------------------- a
systemd-run --unit=batch.service --slice=memqos-reclaimed.slice \
  /usr/bin/python3 -c "$bounded_py" 300 100 "$D/batch" >/dev/null
wait_for 120 "batch's first pass" bash -c "(( \$(cat $D/batch 2>/dev/null || echo 0) >= 1 ))"
p0=$(passes batch) t0=$SECONDS
sleep 30 # the observation window itself: the batch must live through it
systemctl is-active --quiet batch.service || fail "a: batch.service died at level 0: $(journalctl -b -o cat -u memqosd | grep -E 'Kill' | tail -n 3)"
p1=$(passes batch)
((p1 > p0)) || fail "a: batch.service made no pass in 30 s ($p0 -> $p1)"
(($(kills_of batch.service) == 0)) || fail "a: memqosd killed batch.service"
echo "MEASURE: a: batch $((p1 - p0)) passes in $((SECONDS - t0)) s at level $(prop PressureLevel); reclaimed memory.high $(cat $rcg/memory.high), memory.current $(cat $rcg/memory.current)"
ok "a: the bounded batch lives and works at level 0 ($((p1 - p0)) passes in 30 s)"

# ---------------------------------------------------------------- b
trig0=$(metric memqos_psi_triggered_ticks_total)
[[ -n $trig0 ]] || fail "no memqos_psi_triggered_ticks_total in $prom"
since=$(date '+%Y-%m-%d %H:%M:%S')
systemd-run --unit=surge.service --slice=memqos-reclaimed.slice /usr/bin/python3 -c "$HOG_PY" >/dev/null
t0=$SECONDS
wait_for 300 "memqosd killed surge.service" bash -c "[[ \$(systemctl show -p Result --value surge.service) == signal ]]"
t_kill=$((SECONDS - t0))
line=$(journalctl -u memqosd -o cat --since "$since" MESSAGE_ID=4d8a0f6b9c5e4b7f8a2e1c3d5b7a9e01 | grep Killed | head -n1)
echo "kill: $line"
[[ $line == "Killed surge.service"* ]] || fail "b: the first kill was not surge.service: $line"
journalctl -u memqosd -o verbose --since "$since" MESSAGE_ID=4d8a0f6b9c5e4b7f8a2e1c3d5b7a9e01 | grep -q 'KILLED_BY=cgroup.kill' ||
  fail "b: the kill was not done through cgroup.kill"
systemctl is-active --quiet batch.service || fail "b: batch.service died beside the hog"
[[ $(systemctl show -p MainPID --value prot.service) == "$prot_pid" ]] || fail "b: prot.service was restarted or killed"
(($(oom_kills) == oom0)) || fail "b: the kernel OOM killer fired ($oom0 -> $(oom_kills))"
trig1=$(metric memqos_psi_triggered_ticks_total)
((trig1 > trig0)) || fail "b: no tick was started by a PSI trigger during the surge ($trig0 -> $trig1)"
echo "MEASURE: b: hog killed after $t_kill s; PSI-triggered ticks $trig0 -> $trig1; batch passes $(passes batch)"
ok "b: the hog was killed (cgroup.kill, after $t_kill s), the batch and the protected service live, no kernel OOM kill"

# ---------------------------------------------------------------- c
systemd-run --unit=batch2.service --slice=memqos-reclaimed.slice \
  /usr/bin/python3 -c "$bounded_py" 200 50 "$D/batch2" >/dev/null
wait_for 120 "batch2's first pass" bash -c "(( \$(cat $D/batch2 2>/dev/null || echo 0) >= 1 ))"
q0=$(passes batch2) b0=$(passes batch)
sleep 30 # the observation window: both batches must live through it
for u in batch batch2; do
  systemctl is-active --quiet $u.service || fail "c: $u.service died after the hog's kill"
  (($(kills_of $u.service) == 0)) || fail "c: memqosd killed $u.service"
done
q1=$(passes batch2) b1=$(passes batch)
((q1 > q0 && b1 > b0)) || fail "c: no progress in 30 s (batch2 $q0 -> $q1, batch $b0 -> $b1)"
echo "MEASURE: c: batch2 $((q1 - q0)) passes, batch $((b1 - b0)) passes in 30 s after the kill; level $(prop PressureLevel)"
ok "c: a bounded batch started after the kill lives and works"
systemctl stop batch.service batch2.service prot.service

# ---------------------------------------------------------------- e
printf '%s\n' '[Rule.slices]' 'Match=*.slice' 'Class=reclaimed' '[Rule.vms]' 'Match=machine-*' \
  'Class=reclaimed' '[Rule.bus]' 'Match=dbus*' 'Class=reclaimed' '[Rule.init]' 'Match=init.*' \
  'Class=reclaimed' >"$dropin/55-rules.conf"
warn=$(memqosd --check-config 2>&1 >/dev/null) || fail "e: --check-config failed: $warn"
echo "$warn"
(($(grep -c 'which no rule adopts' <<<"$warn") == 4)) || fail "e: expected 4 rule warnings from --check-config"
systemctl restart memqosd
wait_memqosd
list=$(mgr ListWorkloads)
for u in system.slice machine.slice memqos-reclaimed.slice init.scope dbus.service; do
  [[ $list != *"\"$u\""* ]] || fail "e: a rule adopted $u: $list"
done
[[ $list != *'"machine-'* ]] || fail "e: a rule adopted a VM's scope: $list"
rm -f "$dropin/55-rules.conf"
systemctl restart memqosd
wait_memqosd
ok "e: rules reaching slices, VM scopes, init.scope and dbus.service adopted none of them"

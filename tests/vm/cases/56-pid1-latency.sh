#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# PID 1 does not reclaim for memqos (issue 23 item 2): the reclaimed class is
# throttled down from 1 GiB (level 2 forced: this is about how the throttle
# is done, not when). memqosd reclaims on its own worker first, so PID 1
# never writes a memory.high more than 8 MiB under the usage.
# Two measures: PID 1's own answer time, Properties.Get over one kept D-Bus
# connection (pid1-probe.py: no process start per call), and what a user
# sees, `systemctl show` latency (its exec alone takes ~100 ms under TCG);
# both idle, then while memqosd throttles, and, for contrast, what systemd alone does when an
# admin lowers a slice's MemoryHigh from 512 MiB to 64 MiB in one step
# (`systemctl set-property`): PID 1 reclaims the difference itself and
# answers nothing meanwhile. Asserted: while memqosd throttles PID 1's
# answers stay under 100 ms at p95 (issue 23 item 2) and no call of either
# kind takes as long as the contrast's one call, which takes over 1 s and
# stalls the probe as long (so the case can see a PID 1 that reclaims). The p95 against the idle p95 is printed, not asserted:
# under TCG the guest's vCPUs are busy with the reclaim itself (two runs of
# 2026-11-27, two vCPUs: p95 283 ms against 104 idle, and 102 against 97;
# CI since 2026-12-07 boots one vCPU: 23.7 against 16.4). PID 1's
# system time is printed besides. (PSI cannot tell: since Linux 5.8 reclaim
# by a limit's writer is not counted as memory stall; nor can /proc/1/stack,
# which shows nothing while PID 1 runs.)
set -euo pipefail
source "$(dirname "$0")/lib.bash"

dropin=/etc/memqos/memqosd.conf.d
prom=/run/memqos/pid1-case.prom
D=/var/tmp/pid1-case
rcg=/sys/fs/cgroup/memqos.slice/memqos-reclaimed.slice
cleanup() {
  systemctl stop cold.service peer-cold.service 2>/dev/null || true
  systemctl reset-failed cold.service peer-cold.service 2>/dev/null || true
  rm -f "$dropin/56-case.conf" "$dropin/56-throttle.conf" "$prom"
  systemctl reload memqosd 2>/dev/null || true
}
trap cleanup EXIT
wait_memqosd
mkdir -p "$dropin" "$D"
rm -f "$D"/*
level() { busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager PressureLevel | awk '{print $2}'; }
export -f level

pid1_stime() { awk '{print $15}' /proc/1/stat; }
# probe N: N Properties.Get calls to PID 1, 0.05 s apart; prints p50 p95 max (ms).
probe() {
  python3 "$(dirname "$0")/pid1-probe.py" "$1" 0.05 org.freedesktop.systemd1 /org/freedesktop/systemd1 \
    org.freedesktop.systemd1.Manager Version
}
# latency N: N calls of `systemctl show`, 0.25 s apart; prints p50 p95 max (ms).
latency() {
  local lat=() i a b
  for ((i = 0; i < $1; i++)); do
    a=$(date +%s%N)
    systemctl show -p MemoryHigh memqos-reclaimed.slice >/dev/null
    b=$(date +%s%N)
    lat+=($(((b - a) / 1000000)))
    sleep 0.25
  done
  printf '%s\n' "${lat[@]}" | sort -n | awk '{v[NR] = $1} END {print v[int(NR * 0.5)], v[int(NR * 0.95)], v[NR]}'
}
# cold_py FILE MIB: fill MIB MiB once, create FILE, sleep.
cold_py='
import sys, time
b = bytearray(int(sys.argv[2]) << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
open(sys.argv[1], "w").write("1")
time.sleep(100000)
'

wait_for 180 "pressure level 0 first" bash -c '[[ $(level) == 0 ]]'
s0=$(pid1_stime)
read -r i50 i95 imax < <(latency 40)
echo "MEASURE: systemctl show latency idle (40 calls): p50 $i50 ms, p95 $i95 ms, max $imax ms"
read -r b50 b95 bmax < <(probe 200)
s1=$(pid1_stime)
echo "MEASURE: PID 1's answer idle (200 Properties.Get on one connection): p50 $b50 ms, p95 $b95 ms, max $bmax ms; PID 1 system time for these 40 + 200 calls $(((s1 - s0) * 10)) ms"

# ---------------------------------------------------------------- memqosd
# Room for 1 GiB in the reclaimed class (NodeReserved=0), then level 2.
printf '[Manager]\nMetricsFile=%s\n[Overcommit]\nNodeReserved=0\n' "$prom" >"$dropin/56-case.conf"
memqosctl reload >/dev/null || fail "reload with NodeReserved=0 failed"
systemd-run --unit=cold.service --slice=memqos-reclaimed.slice /usr/bin/python3 -c "$cold_py" "$D/cold" 1024 >/dev/null
wait_for 180 "cold.service holds 1 GiB" test -s "$D/cold"
echo "reclaimed class at $(cat $rcg/memory.current) bytes, memory.high $(cat $rcg/memory.high)"
since=$(date '+%Y-%m-%d %H:%M:%S')
start_high=$(cat $rcg/memory.high) start_cur=$(cat $rcg/memory.current)
t0=$(pid1_stime)
printf '[Pressure]\nLevel1MemAvailable=99%%\nLevel2MemAvailable=99%%\n' >"$dropin/56-throttle.conf"
memqosctl reload >/dev/null || fail "reload with the level-2 drop-in failed"
wait_for 60 "pressure level 2" bash -c '[[ $(level) == 2 ]]'
probe 500 >"$D/probe" &
probe_pid=$!
read -r p50 p95 max < <(latency 100)
wait "$probe_pid" || fail "pid1-probe.py failed"
read -r q50 q95 qmax <"$D/probe"
t1=$(pid1_stime)
end_high=$(cat $rcg/memory.high) end_cur=$(cat $rcg/memory.current)
echo "MEASURE: memqosd's throttle: class memory.current $start_cur -> $end_cur, memory.high $start_high -> $end_high; PID 1 system time $(((t1 - t0) * 10)) ms; systemctl show p50 $p50 ms, p95 $p95 ms, max $max ms"
((end_cur < start_cur - (256 << 20))) || fail "the throttle did not bring the class down by 256 MiB ($start_cur -> $end_cur)"
journalctl -u memqosd -o cat --since "$since" | grep -qE "^Reclaimed [0-9]+ (of [0-9]+ )?bytes (asked )?from class reclaimed" ||
  fail "memqosd never reclaimed from the class on its worker"
echo "MEASURE: PID 1's answer while memqosd throttled (500 Properties.Get): p50 $q50 ms, p95 $q95 ms, max $qmax ms"
awk -v p="$q95" 'BEGIN {exit !(p < 100)}' ||
  fail "PID 1 answered Properties.Get in p95 $q95 ms (idle $b95 ms), max $qmax ms while memqosd throttled the class"
ok "PID 1 answered in p95 $q95 ms (idle $b95 ms), max $qmax ms; systemctl show p95 $p95 ms (idle $i95 ms), max $max ms; while memqosd throttled the class by $(((start_cur - end_cur) >> 20)) MiB"
systemctl stop cold.service
rm -f "$dropin/56-throttle.conf" "$dropin/56-case.conf"
memqosctl reload >/dev/null
wait_for 120 "pressure level 0 after the throttle" bash -c '[[ $(level) == 0 ]]'

# ---------------------------------------------------------------- systemd alone
# The contrast, without memqosd in the way: a slice memqosd does not manage,
# 512 MiB in it, MemoryHigh lowered to 64 MiB in one SetUnitProperties.
systemd-run --unit=peer-cold.service --slice=peer56.slice /usr/bin/python3 -c "$cold_py" "$D/peer" 512 >/dev/null
wait_for 180 "peer-cold.service holds 512 MiB" test -s "$D/peer"
t0=$(pid1_stime)
probe 100 >"$D/probe-peer" &
probe_pid=$!
sleep 0.5
a=$(date +%s%N)
systemctl set-property --runtime peer56.slice MemoryHigh=64M
b=$(date +%s%N)
t1=$(pid1_stime)
call=$(((b - a) / 1000000))
wait "$probe_pid" || fail "pid1-probe.py failed"
read -r _ _ pmax <"$D/probe-peer"
echo "MEASURE: systemd alone: PID 1's longest answer to the probe meanwhile $pmax ms"
echo "MEASURE: systemd alone (set-property MemoryHigh 512 MiB -> 64 MiB): PID 1 system time $(((t1 - t0) * 10)) ms, the call took $call ms; slice now $(cat /sys/fs/cgroup/peer56.slice/memory.current) bytes"
systemctl stop peer-cold.service
systemctl set-property --runtime peer56.slice MemoryHigh=infinity
((call > 1000)) || fail "the contrast's set-property took only $call ms: the case cannot see a PID 1 that reclaims"
awk -v m="$pmax" 'BEGIN {exit !(m > 1000)}' ||
  fail "the probe's longest answer during the contrast's set-property was $pmax ms: it cannot see a PID 1 that reclaims"
# The tails against the contrast of the same boot, not against a fixed 1 s:
# under CI's load (two TCG guests on two cores) a guest's vCPUs are at times
# descheduled for most of a second whoever reclaims (CI of 2026-12-05:
# systemctl show max 1100 ms with PID 1's p95 at 53 ms). No call under
# memqosd's throttle of the whole class may take as long as systemd alone's
# one cut of less than half of it.
((max < call)) ||
  fail "under memqosd's throttle a systemctl show took $max ms, as long as systemd alone's set-property ($call ms)"
awk -v q="$qmax" -v c="$call" 'BEGIN {exit !(q < c)}' ||
  fail "under memqosd's throttle PID 1 took $qmax ms to answer, as long as systemd alone's set-property ($call ms)"
ok "PID 1: longest systemctl show $max ms under memqosd's throttle of $(((start_cur - end_cur) >> 20)) MiB; one set-property of systemd alone (448 MiB) took $call ms"

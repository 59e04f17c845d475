# SPDX-License-Identifier: Apache-2.0
# Helpers sourced by the VM cases (not a case itself: cases end in .sh).
# fail MESSAGE: says why, with memqosd's last journal lines, and ends the case.
fail() {
  echo "FAIL: $*" >&2
  journalctl -u memqosd -n 25 -o cat --no-pager 2>/dev/null | sed 's/^/  memqosd: /' >&2 || true
  exit 1
}
ok() { echo "ok: $*"; }

# wait_for SECONDS DESCRIPTION CMD...: retry CMD every WAIT_POLL seconds
# (default 0.5) until it succeeds.
wait_for() {
  local secs=$1 what=$2; shift 2
  local end=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < end)) || fail "timed out after ${secs}s waiting for: $what"
    sleep "${WAIT_POLL:-0.5}"
  done
}

# wpath ID: the object path of workload ID (sd_bus_path_encode: every byte
# but [A-Za-z0-9] as _xx).
wpath() {
  local s=$1 out='' c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    if [[ $c == [A-Za-z0-9] ]]; then out+=$c; else out+=$(printf '_%02x' "'$c"); fi
  done
  echo "/org/memqos1/workload/$out"
}

# expect_file FILE VALUE: the file holds exactly VALUE.
expect_file() {
  local got
  got=$(cat "$1" 2>&1) || fail "cannot read $1: $got"
  [[ $got == "$2" ]] || fail "$1 is '$got', expected '$2'"
  ok "$1 = $got"
}

mgr() { busctl call org.memqos1 /org/memqos1 org.memqos1.Manager "$@"; }

# wait_psi_quiet: wait (up to 180 s) until the host's memory PSI full avg10
# is under 1 %: an earlier case's stalls out of the averages before a case
# that judges levels or stalls starts.
wait_psi_quiet() {
  wait_for 180 "the host's memory PSI full avg10 under 1 %" psi_quiet
}
# psi_full_avg10: the host's memory PSI full avg10 (percent).
psi_full_avg10() { awk '$1 == "full" {sub("avg10=", "", $2); print $2}' /proc/pressure/memory; }
psi_quiet() { awk -v v="$(psi_full_avg10)" 'BEGIN {exit !(v != "" && v < 1)}'; }

wait_memqosd() {
  wait_for 90 "memqosd active" systemctl is-active --quiet memqosd
  wait_for 30 "org.memqos1 on the bus" busctl status org.memqos1
}
# memqos_ticks PROMFILE: memqosd's ticks so far, the count of tick durations in
# the metrics file it writes ([Manager] MetricsFile=PROMFILE, with
# MetricsInterval=1s: written at every tick, not only on a change).
memqos_ticks() { awk '$1 == "memqos_tick_duration_seconds_count" {print $2}' "$1"; }
# stall_pct US0 US1 MS [DIGITS]: the percentage of MS milliseconds that a PSI
# total growing from US0 to US1 microseconds covered.
stall_pct() { awk -v a="$1" -v b="$2" -v t="$3" -v d="${4:-1}" 'BEGIN {printf "%.*f", d, (b - a) / (t * 1000) * 100}'; }
# HOG_PY: a python3 -c program that grows 50 MiB every 0.5 s and never frees
# (the unbounded hog of the pressure cases).
HOG_PY='
import time
held = []
while True:
    held.append(b"x" * (50 << 20))
    time.sleep(0.5)
'
# ONLINE_PY: a python3 -c program that maps MIB (its argument) MiB and
# re-touches every page of it every second (a latency-critical service).
ONLINE_PY='
import mmap, sys, time
n = int(sys.argv[1]) << 20
m = mmap.mmap(-1, n)
while True:
    for i in range(0, n, 4096):
        m[i] = (m[i] + 1) & 255
    time.sleep(1)
'

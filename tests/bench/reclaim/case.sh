#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The proactive reclaim benchmark's guest side (tests/bench/reclaim/README.md),
# run by tests/vm/run as the CASE with the FILE reclaim-touch (static binary)
# and optionally reclaim.env (RUNS="kernel memqosd oneshot", WINDOW=120).
# One boot, the same workload once per run, in this order:
#   kernel   memqosd running with [Reclaim] Enabled=no: the kernel alone
#   memqosd  memqosd's controller with its defaults (no [Reclaim] drop-in)
#   oneshot  Enabled=no, and one `echo 500M > memory.reclaim` of the
#            workload's cgroup right after its fill: what the kernel can do
# Each run: memqosd restarted with its configuration, caches dropped, the
# workload (reclaim-touch hotcold, 600 MiB filled, the last 100 MiB hot)
# started with `memqosctl run --class reclaimed`, then a WINDOW-second window
# from the end of its fill, sampled every second; its files go to
# $MEMQOS_VM_ARTIFACTS/<run>/.
#
# Exit status: 0 when every run was measured; non-zero only when a run could
# not be set up.
set -euo pipefail
# wait_for and wpath (tests/vm/cases/lib.bash, passed as a FILE); fail and
# log below replace lib.bash's with the benchmark's prefixed ones.
# shellcheck source=../../vm/cases/lib.bash
source ./lib.bash
WAIT_POLL=0.2
fail() { echo "reclaim: FAIL: $*" >&2; exit 1; }
log() { echo "reclaim: $(date +%T) $*"; }

[[ -x reclaim-touch ]] || fail "reclaim-touch must be in $(pwd)"
RUNS="kernel memqosd oneshot" WINDOW=120
# shellcheck source=/dev/null
if [[ -r reclaim.env ]]; then source ./reclaim.env; fi
art=${MEMQOS_VM_ARTIFACTS:?not run by tests/vm/run}
TOTAL=600 HOT=100 COLD=500 DBUS_EVERY=5
install -m 0755 reclaim-touch /usr/local/bin/reclaim-touch
now() { reclaim-touch now; }
dropin=/etc/memqos/memqosd.conf.d
mkdir -p "$dropin"
slice=/sys/fs/cgroup/memqos.slice/memqos-reclaimed.slice

mprop() { busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager "$1" | cut -d' ' -f2-; }
level0() { [[ $(mprop PressureLevel) == 0 ]]; }
swap_used_mib() { awk '/^SwapTotal:/ {t = $2} /^SwapFree:/ {f = $2} END {print int((t - f) / 1024)}' /proc/meminfo; }
swap_settled() { (($(swap_used_mib) < 16)); }

{
  echo "kernel=$(uname -r)"
  echo "thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled)"
  echo "lru_gen=$(cat /sys/kernel/mm/lru_gen/enabled 2>/dev/null || echo none)"
  echo "swappiness=$(cat /proc/sys/vm/swappiness)"
  echo "page_cluster=$(cat /proc/sys/vm/page-cluster)"
  echo "memtotal_kib=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)"
  echo "swaptotal_kib=$(awk '/^SwapTotal:/ {print $2}' /proc/meminfo)"
  echo "nproc=$(nproc)"
  echo "memqos=$(dpkg-query -W -f '${Version}' memqos 2>/dev/null || echo none)"
  echo "runs=$RUNS"
  echo "window_s=$WINDOW total_mib=$TOTAL hot_mib=$HOT cold_mib=$COLD"
} >"$art/guest.txt"

for run in $RUNS; do
  case $run in
  kernel | oneshot) printf '[Reclaim]\nEnabled=no\n' >"$dropin/90-bench.conf" ;;
  memqosd) rm -f "$dropin/90-bench.conf" ;;
  *) fail "unknown run '$run' (kernel, memqosd, oneshot)" ;;
  esac
  memqosd --check-config >/dev/null || fail "$run: the configuration does not pass --check-config"
  systemctl restart memqosd.service
  wait_for 90 "memqosd active" systemctl is-active --quiet memqosd.service
  wait_for 30 "org.memqos1 on the bus" busctl status org.memqos1
  wait_for 120 "pressure level 0" level0
  wait_for 120 "swap back to < 16 MiB used" swap_settled
  sync
  echo 3 >/proc/sys/vm/drop_caches
  sleep 5 # let the restart and the drop settle (not a measurement)
  out=$art/$run
  D=/var/tmp/reclaim-bench/$run
  rm -rf "$D"
  mkdir -p "$out" "$D"
  pid=$(systemctl show -p MainPID --value memqosd.service)
  unit=hotcold-$run.service
  wcg=$slice/$unit
  obj=$(wpath "$unit")
  log "=== run $run: memqosd pid $pid, reclaim $(grep -h Enabled "$dropin/90-bench.conf" 2>/dev/null || echo 'defaults')"
  reclaim-touch sample --interval 1 --out "$D/samples.txt" \
    "cur=$wcg/memory.current" "swap=$wcg/memory.swap.current" "pressure=$wcg/memory.pressure" \
    "events=$wcg/memory.events" "stat=$wcg/memory.stat" \
    "s_high=$slice/memory.high" "s_events=$slice/memory.events" \
    "memqosd=/proc/$pid/stat" host_psi=/proc/pressure/memory meminfo=/proc/meminfo &
  sampler=$!
  # D-Bus properties every DBUS_EVERY s (busctl costs CPU under emulation:
  # the same in every run).
  (
    while :; do
      t=$(now)
      st=$(busctl get-property org.memqos1 "$obj" org.memqos1.Workload ReclaimState 2>/dev/null | cut -d' ' -f2- | tr -d '"') || st=-
      rb=$(busctl get-property org.memqos1 "$obj" org.memqos1.Workload ReclaimedBytes 2>/dev/null | cut -d' ' -f2-) || rb=-
      sl=$(busctl get-property org.memqos1 "$obj" org.memqos1.Workload ReclaimStall 2>/dev/null | cut -d' ' -f2-) || sl=-
      lv=$(mprop PressureLevel 2>/dev/null) || lv=-
      echo "$t ${st:--} ${rb:--} ${sl:--} $lv"
      sleep $DBUS_EVERY
    done
  ) >"$D/dbus.txt" &
  dbus_loop=$!
  since=$(date '+%Y-%m-%d %H:%M:%S')
  t_start=$(now)
  memqosctl run --name "hotcold-$run" --class reclaimed -- \
    /usr/local/bin/reclaim-touch hotcold --total-mib $TOTAL --hot-mib $HOT --out "$D/hot.rec" --ready "$D/ready" >/dev/null ||
    fail "$run: memqosctl run failed"
  wait_for 180 "$run: workload filled" test -e "$D/ready"
  t0=$(now)
  wl_pid=$(systemctl show -p MainPID --value "$unit")
  log "$run: filled in $(awk -v a="$t_start" -v b="$t0" 'BEGIN {printf "%.1f", b - a}') s; memory.current $(cat "$wcg/memory.current")"
  oneshot=
  if [[ $run == oneshot ]]; then
    a=$(now) rc=0
    msg=$( { echo "${COLD}M" >"$wcg/memory.reclaim"; } 2>&1) || rc=$?
    b=$(now)
    oneshot="oneshot_start=$a oneshot_end=$b oneshot_rc=$rc oneshot_msg=${msg// /_}"
    log "$run: echo ${COLD}M > memory.reclaim: rc $rc ${msg:+($msg) }in $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", b - a}') s; memory.current $(cat "$wcg/memory.current")"
  fi
  sleep "$(awk -v t="$t0" -v n="$(now)" -v w="$WINDOW" 'BEGIN { d = t + w + 2 - n; print (d > 0 ? d : 0) }')"
  t_end=$(now)
  kill "$sampler" "$dbus_loop" 2>/dev/null || true
  wait "$sampler" "$dbus_loop" 2>/dev/null || true
  {
    echo "run=$run"
    echo "t_start=$t_start"
    echo "t0=$t0"
    echo "t_end=$t_end"
    echo "window_s=$WINDOW"
    echo "memqosd_pid=$pid"
    echo "workload_pid=$wl_pid"
    echo "clk_tck=$(getconf CLK_TCK)"
    echo "cgroup=$wcg"
    [[ -z $oneshot ]] || echo "${oneshot// /$'\n'}"
    echo "unit_state=$(systemctl show -p ActiveState,SubState,Result,NRestarts "$unit" | tr '\n' ' ')"
    echo "memqosd_state=$(systemctl show -p ActiveState,SubState,NRestarts memqosd.service | tr '\n' ' ')"
    echo "dropin=$(tr '\n' ' ' 2>/dev/null <"$dropin/90-bench.conf")"
  } >"$D/meta.txt"
  systemctl stop "$unit" || true
  journalctl -u memqosd.service --since "$since" -o short-monotonic --no-pager >"$D/memqosd.journal" 2>&1 || true
  cp "$D"/* "$out/"
  log "$run: done; window $(awk -v a="$t0" -v b="$t_end" 'BEGIN {printf "%.1f", b - a}') s"
done
rm -f "$dropin/90-bench.conf"
journalctl -b -k -o short-monotonic --no-pager >"$art/kernel.log" 2>&1 || true
log "artifacts: $(cd "$art" && find . -type f | sort | tr '\n' ' ')"

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Proactive reclaim (issue 12) on the real kernel, with memqosd's defaults
# ([Reclaim] Interval=5s, StallTarget=0.1%, MaxStep=5%), in this order:
#  e. Reclaim(s,t) from root returns > 0 for a workload with cold memory; a
#     non-root caller is refused (by the bus policy, and by memqosd itself
#     with the policy opened) and nothing is reclaimed; an unknown id gets
#     org.memqos1.Error.NoSuchWorkload;
#  a. a reclaimed-class workload that filled 600 MiB of anonymous memory and
#     keeps only the last 100 MiB hot: within 120 s memory.current falls below
#     350 MiB, ReclaimedBytes > 0 and growing, ReclaimState was "reclaiming",
#     its own stall stays low and its hot set stays resident;
#  d. pressure level 1 (a drop-in with Level1MemAvailable=99%): "paused",
#     and not paused at level 0 again;
#  b. the same workload touching all 600 MiB again: "backed-off", no new
#     step while it stays backed off, and it keeps running;
#  c. a dedicated workload with cold memory is never touched: "off",
#     ReclaimedBytes 0, memory.current as it was.
# Prints MEASURE: lines (times, stall %, throughput) for tuning.
#
# The class-stall kill rule is ON here, at its defaults (it was off until
# issue 23: it killed coldhot in b for stalling under memqos's own cap on a
# calm host, CI 2026-11-26). It now kills only with evidence that the host is
# hurt (MemAvailable at level 1's threshold, or a protected class slice,
# system.slice or machine.slice stalling), only under the guard's own cap,
# and only a workload that stalls itself; none of that holds for coldhot
# here, so a kill is a defect this case reports. The drop-in sets only
# MetricsFile= (for the tick count). b's MEASURE line prints the slice's full
# stall and usage against its cap.
# Thresholds (why): 350 MiB = a workload of ~612 MiB (600 MiB + python)
# minus more than half of its 500 MiB cold part: "most of the cold part"
# without needing the benchmark's 70 % target (tests/bench/reclaim measures
# that). Stall: at most 1 % of the reclaim window, 10x the controller's
# target: the test VM swaps under emulation, where one refault costs far more
# than on hardware; the exact value is printed. Hot set: at least 90 % of the
# hot mapping resident (its Rss in /proc/PID/smaps) when the window ends.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

dropin=/etc/memqos/memqosd.conf.d
policy=/etc/dbus-1/system.d/zz-memqos-reclaim-test.conf
D=/var/tmp/reclaim-case # on disk, not tmpfs: the records must not cost RAM
prom=/run/memqos/reclaim-case.prom # the metrics file: it counts memqosd's ticks
MiB=1048576
units=(ded.service oneoff.service coldhot.service)

cleanup() {
  local u
  for u in "${units[@]}"; do systemctl stop "$u" 2>/dev/null || true; done
  rm -f "$dropin/70-paused.conf" "$dropin/70-case.conf" "$policy" "$prom"
  busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig >/dev/null 2>&1 || true
  systemctl reload memqosd 2>/dev/null || true
}
trap cleanup EXIT

mkdir -p "$dropin" "$D"
rm -f "$D"/*
wait_memqosd
# NodeReserved=256M (the shipped 1G is half of this 2 GiB guest): the guard's
# cap (MemTotal − the other classes − max(NodeReserved, the memory in use
# outside the classes) − 5 %)
# then stays above coldhot's ~612 MiB, so the reclaim controller, this
# case's subject, is what brings it down, not the guard.
printf '[Manager]\nMetricsFile=%s\nMetricsInterval=1s\n[Overcommit]\nNodeReserved=256M\n' "$prom" >"$dropin/70-case.conf"
memqosd --check-config >/dev/null || fail "the case's drop-in does not pass --check-config"
memqosctl reload >/dev/null || fail "memqosctl reload with the case's drop-in failed"

# sd_bus_path_encode: [A-Za-z0-9] kept, every other byte as _xx.
# wprop UNIT PROPERTY: a property of the workload's object, without its type.
wprop() { busctl get-property org.memqos1 "$(wpath "$1")" org.memqos1.Workload "$2" | cut -d' ' -f2- | tr -d '"'; }
mprop() { busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager "$1" | cut -d' ' -f2-; }
cur() { cat "$1/memory.current"; }
# ticks: memqosd's ticks so far (the metrics file's count of tick durations);
# ticked N: N ticks or more since ticks0 was read.
ticks() { memqos_ticks "$prom"; }
ticked() { local n; n=$(ticks) && [[ -n $n ]] && ((n >= ticks0 + $1)); }
some_us() { awk '$1 == "some" {sub("total=", "", $5); print $5}' "$1/memory.pressure"; }
full_us() { awk '$1 == "full" {sub("total=", "", $5); print $5}' "$1/memory.pressure"; }
mib() { echo $(($1 / MiB)); }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# wsnap UNIT: all properties of the workload's object in one GetAll (busctl's
# text form: "ReclaimState" s "reclaiming" "ReclaimedBytes" t 123 ...);
# snap_get TEXT PROPERTY: one value of it.
wsnap() { busctl call org.memqos1 "$(wpath "$1")" org.freedesktop.DBus.Properties GetAll s org.memqos1.Workload; }
snap_get() { grep -o "\"$2\" [a-z] [^ ]*" <<<"$1" | head -n 1 | cut -d' ' -f3 | tr -d '"'; }
state_is() { [[ $(wprop "$1" ReclaimState) == "$2" ]]; }
state_is_not() { [[ $(wprop "$1" ReclaimState) != "$2" ]]; }
level_is() { [[ $(mprop PressureLevel) == "$1" ]]; }

# hotcold.py TOTAL_MIB HOT_MIB BASE: two private anonymous mappings, the
# cold part (TOTAL - HOT MiB) and the hot part (HOT MiB), filled in that
# order (the hot pages are the youngest); their addresses go to BASE.maps
# ("COLD HOT", hex; the hot one is its own VMA in /proc/PID/smaps); then
# BASE.ready; then, for ever,
# write one byte of every page of the hot part (of both while BASE.all
# exists), and once a second append "T PASSES PAGES RANGE_PAGES" to
# BASE.rec. HOT_MIB 0: hold the memory and sleep (cold only).
hotcold_py='
import ctypes, mmap, os, sys, time
P = 4096
total, hot, base = int(sys.argv[1]) << 20, int(sys.argv[2]) << 20, sys.argv[3]
chunk = b"\x01" * (4 << 20)
def filled(n):
    m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE)
    for off in range(0, n, len(chunk)):
        m[off:off + len(chunk)] = chunk[:n - off]
    return m
cold = filled(total - hot)
hotm = filled(hot) if hot else None
if hotm is not None:
    # A VMA of its own in /proc/PID/smaps: without a flag of its own the hot
    # mapping would be merged with the cold one beside it.
    hotm.madvise(mmap.MADV_NOHUGEPAGE)
addr = lambda m: ctypes.addressof(ctypes.c_char.from_buffer(m)) if m is not None else 0
with open(base + ".maps", "w") as f:
    f.write("%x %x\n" % (addr(cold), addr(hotm)))
open(base + ".ready", "w").close()
if hot == 0:
    while True:
        time.sleep(3600)
rec = open(base + ".rec", "a", buffering=1)
ncold, nhot = (total - hot) // P, hot // P
cold_pat, hot_pat = bytes(ncold), bytes(nhot)
passes = pages = 0
every = False
nxt = time.monotonic()
while True:
    if every:
        cold[0:total - hot:P] = cold_pat
        pages += ncold
    hotm[0:hot:P] = hot_pat
    pages += nhot
    passes += 1
    t = time.monotonic()
    if t >= nxt:
        every = os.path.exists(base + ".all")
        rec.write("%.3f %d %d %d\n" % (t, passes, pages, ncold + nhot if every else nhot))
        nxt = t + 1
'
# mapping PID ADDR: "RSS_KIB SWAP_KIB" of the mapping that starts at ADDR.
mapping() {
  awk -v a="$2" 'index($1, a "-") == 1 {on = 1; next}
    on && $1 ~ /^[0-9a-f]+-[0-9a-f]+$/ {on = 0}
    on && $1 == "Rss:" {r = $2} on && $1 == "Swap:" {s = $2}
    END {print r + 0, s + 0}' "/proc/$1/smaps"
}
# alive UNIT WHEN: the workload is still running (memqosd's class-stall rule
# or the kernel may have killed it; the journal says which).
alive() {
  systemctl is-active --quiet "$1" && return 0
  journalctl -b -o cat -u memqosd -u "$1" | grep -E "Kill|Killed|$1" | tail -n 8 >&2 || true
  fail "$2: $1 is no longer running ($(systemctl show -p ActiveState,Result --value "$1" | tr '\n' ' '))"
}
majflt() { awk '{sub(/.*\) /, ""); print $10}' "/proc/$1/stat"; }
# run_wl NAME CLASS REQUEST LIMIT TOTAL_MIB HOT_MIB: a transient unit NAME.service
# started by memqosd (RunWorkload) in CLASS.
# A killable class is closed to new workloads above level 0 (AdmissionClosed,
# "retry later"): what an earlier case or the last fill left in the PSI
# averages can raise the level for a while. run_wl then waits for level 0 and
# retries, as a client is told to, for up to 120 s (2026-12-05: 70-reclaim run
# right after 50-pressure met level 2 from full avg10 5.8 % at oneoff's start).
run_wl() {
  local out end=$((SECONDS + 120))
  until out=$(memqosctl run --name "$1" --class "$2" --request "$3" --limit "$4" -- \
    /usr/bin/python3 -c "$hotcold_py" "$5" "$6" "$D/$1" 2>&1 >/dev/null); do
    if [[ $out != *AdmissionClosed* ]] || ((SECONDS >= end)); then
      fail "memqosctl run $1 in $2 failed: $out"
    fi
    echo "memqosctl run $1: admission closed at level $(mprop PressureLevel); waiting for level 0"
    wait_for 120 "pressure level 0" level_is 0
  done
}
# rate FILE first|last SECONDS: passes per second over the first (or last)
# SECONDS of the records in FILE (the hot loop's own clock).
rate() {
  awk -v w="$2" -v d="$3" '{t[NR] = $1; p[NR] = $2}
    END {
      if (NR < 2) { print "nan"; exit }
      if (w == "first") { a = 1; for (b = 1; b < NR && t[b + 1] <= t[1] + d; b++); }
      else { b = NR; for (a = NR; a > 1 && t[a - 1] >= t[NR] - d; a--); }
      if (t[b] > t[a]) printf "%.1f", (p[b] - p[a]) / (t[b] - t[a]); else print "nan"
    }' "$1"
}

# Start quiet: earlier cases' stalls out of the PSI averages.
wait_psi_quiet
level=$(mprop PressureLevel)
if [[ $level != 0 ]]; then
  echo "pressure level $level at the start (earlier cases); waiting for 0"
  wait_for 120 "pressure level 0" level_is 0
fi
# Earlier cases' level 2 leaves the reclaimed class throttled below its
# guard; memqosd gives the cap back at once at level 0 (before issue 23: one
# step per tick, and a fill against the climbing cap was killed, CI
# 2026-11-25). Start once the cap has stopped moving (unchanged over 3 ticks).
wait_for 30 "memqosd's metrics file" test -s "$prom"
cap_settled() {
  local f=/sys/fs/cgroup/memqos.slice/memqos-reclaimed.slice/memory.high h
  h=$(cat "$f") ticks0=$(ticks)
  wait_for 30 "3 ticks" ticked 3
  [[ $(cat "$f") == "$h" ]]
}
wait_for 180 "memqos-reclaimed.slice memory.high settled (the throttle restored)" cap_settled
alloc=$(mprop ReclaimedAllocatable) || fail "no Manager property ReclaimedAllocatable"
total=$(mprop MemoryTotal)
((alloc <= total)) || fail "ReclaimedAllocatable $alloc > MemoryTotal $total"
ok "ReclaimedAllocatable = $alloc ($(mib "$alloc") MiB of $(mib "$total") MiB)"

# ---------------------------------------------------------------- c: dedicated, cold
run_wl ded dedicated 160M 160M 96 0
dcg=/sys/fs/cgroup/memqos.slice/memqos-dedicated.slice/ded.service
wait_for 60 "ded filled" test -e "$D/ded.ready"
ded_cur0=$(cur "$dcg")
ok "ded (dedicated, 96 MiB cold): memory.current $(mib "$ded_cur0") MiB, memory.min $(cat "$dcg/memory.min")"
ded_check() { # ded_check WHEN: ded is left alone
  local st rb c
  st=$(wprop ded.service ReclaimState)
  rb=$(wprop ded.service ReclaimedBytes)
  c=$(cur "$dcg")
  [[ $st == off ]] || fail "$1: ded (dedicated) ReclaimState is '$st', expected off"
  [[ $rb == 0 ]] || fail "$1: ded (dedicated) ReclaimedBytes is $rb, expected 0"
  ((c * 100 >= ded_cur0 * 95)) || fail "$1: ded memory.current fell from $ded_cur0 to $c"
  ok "$1: ded untouched (off, 0 reclaimed, memory.current $(mib "$c") MiB)"
}

# ---------------------------------------------------------------- e: one-off Reclaim
run_wl oneoff shared 0 1G 64 0
ocg=/sys/fs/cgroup/memqos.slice/memqos-shared.slice/oneoff.service
wait_for 60 "oneoff filled" test -e "$D/oneoff.ready"
o_cur0=$(cur "$ocg") o_rb0=$(wprop oneoff.service ReclaimedBytes)
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
out=$(nobody busctl call org.memqos1 /org/memqos1 org.memqos1.Manager Reclaim st oneoff.service $((32 * MiB)) 2>&1) &&
  fail "non-root Reclaim was allowed: $out"
[[ $out == *"ccess denied"* || $out == *AccessDenied* || $out == *org.memqos1.Error.* ]] ||
  fail "non-root Reclaim: unexpected answer '$out'"
ok "non-root Reclaim refused by the bus policy: $out"
# The same with the policy opened, so that the call reaches memqosd: its own
# uid check must refuse it.
cat >"$policy" <<'EOF'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><policy context="default">
  <allow send_destination="org.memqos1" send_interface="org.memqos1.Manager" send_member="Reclaim"/>
</policy></busconfig>
EOF
busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig
out=$(nobody busctl call org.memqos1 /org/memqos1 org.memqos1.Manager Reclaim st oneoff.service $((32 * MiB)) 2>&1) &&
  fail "non-root Reclaim was allowed by memqosd with the bus policy opened: $out"
[[ $out == *"ccess denied"* || $out == *AccessDenied* || $out == *org.memqos1.Error.* ]] ||
  fail "non-root Reclaim with the policy opened: unexpected answer '$out'"
ok "non-root Reclaim refused by memqosd (policy opened): $out"
rm -f "$policy"
busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig
o_cur1=$(cur "$ocg")
((o_cur1 * 100 >= o_cur0 * 95)) || fail "oneoff memory.current fell from $o_cur0 to $o_cur1 after refused calls"
[[ $(wprop oneoff.service ReclaimedBytes) == "$o_rb0" ]] || fail "ReclaimedBytes of oneoff moved after refused calls"
# busctl prints only the message of an error; dbus-send (package dbus-bin) its name.
out=$(dbus-send --system --print-reply --dest=org.memqos1 /org/memqos1 org.memqos1.Manager.Reclaim \
  string:ghost.service uint64:$((32 * MiB)) 2>&1) && fail "Reclaim of an unknown workload succeeded: $out"
[[ $out == *org.memqos1.Error.NoSuchWorkload* ]] || fail "Reclaim of an unknown workload: expected NoSuchWorkload, got '$out'"
ok "Reclaim of an unknown workload: $out"
t=$(now_ms)
out=$(mgr Reclaim st oneoff.service $((32 * MiB))) || fail "root Reclaim of oneoff failed: $out"
got=${out#t }
[[ $got =~ ^[0-9]+$ ]] || fail "Reclaim answered '$out'"
((got > 0)) || fail "Reclaim(oneoff.service, 32 MiB) returned $got"
o_cur2=$(cur "$ocg")
echo "MEASURE: Reclaim(oneoff, 32 MiB) -> $got bytes in $(($(now_ms) - t)) ms; memory.current $(mib "$o_cur1") -> $(mib "$o_cur2") MiB, swap $(mib "$(cat "$ocg/memory.swap.current")") MiB, ReclaimedBytes $(wprop oneoff.service ReclaimedBytes)"
ok "root Reclaim of a workload with cold memory returned $got > 0"
systemctl stop oneoff.service

# ---------------------------------------------------------------- a: 600 MiB, 100 MiB hot
ccg=/sys/fs/cgroup/memqos.slice/memqos-reclaimed.slice/coldhot.service
scg=/sys/fs/cgroup/memqos.slice/memqos-reclaimed.slice
t_start=$SECONDS
run_wl coldhot reclaimed 0 max 600 100
wait_for 120 "coldhot filled 600 MiB" test -e "$D/coldhot.ready"
t_ready=$SECONDS
c_peak=$(cur "$ccg")
some0=$(some_us "$ccg") ms0=$(now_ms)
cpid=$(systemctl show -p MainPID --value coldhot.service)
read -r _ hot_addr <"$D/coldhot.maps"
maj0=$(majflt "$cpid")
high0=$(awk '$1 == "high" {print $2}' "$scg/memory.events")
echo "MEASURE: coldhot filled in $((t_ready - t_start)) s; memory.current $(mib "$c_peak") MiB; slice memory.high $(cat "$scg/memory.high"); state $(wprop coldhot.service ReclaimState)"
states=" "
target=$((350 * MiB))
first_rb=0 grew=0 t_first=''
while :; do
  st=$(wprop coldhot.service ReclaimState)
  rb=$(wprop coldhot.service ReclaimedBytes)
  c=$(cur "$ccg")
  [[ $states == *" $st "* ]] || states+="$st "
  if ((rb > 0)); then
    if ((first_rb == 0)); then first_rb=$rb t_first=$((SECONDS - t_ready)); elif ((rb > first_rb)); then grew=1; fi
  fi
  if ((c < target && grew)) && [[ $states == *" reclaiming "* ]]; then break; fi
  if ((SECONDS - t_ready > 120)); then
    fail "after 120 s: memory.current $(mib "$c") MiB (want < 350), ReclaimedBytes $rb (first $first_rb), states seen:$states; stall $(wprop coldhot.service ReclaimStall)%"
  fi
  sleep 1
done
t_a=$((SECONDS - t_ready))
some1=$(some_us "$ccg") ms1=$(now_ms)
stall=$(stall_pct "$some0" "$some1" $((ms1 - ms0)) 4)
echo "MEASURE: memory.current $(mib "$c_peak") -> $(mib "$c") MiB (swap $(mib "$(cat "$ccg/memory.swap.current")") MiB) after $t_a s; ReclaimedBytes first $first_rb at ${t_first}s, now $rb; states seen:$states"
echo "MEASURE: coldhot memory stall over the ${t_a} s: $stall % (some total +$((some1 - some0)) us); last interval ReclaimStall $(wprop coldhot.service ReclaimStall) %"
ok "a: memory.current below 350 MiB after $t_a s, ReclaimedBytes $first_rb -> $rb, states:$states"
awk -v s="$stall" 'BEGIN {exit !(s <= 1.0)}' || fail "coldhot stalled $stall % of the reclaim window (> 1 %)"
ok "a: stall $stall % <= 1 %"
# The hot set stays resident: its own mapping's Rss and Swap
# (/proc/PID/smaps), and the major faults of the process (pages read back).
read -r hot_rss hot_swap <<<"$(mapping "$cpid" "$hot_addr")"
maj1=$(majflt "$cpid")
echo "MEASURE: hot mapping (100 MiB) Rss $((hot_rss / 1024)) MiB, Swap $((hot_swap / 1024)) MiB; major faults +$((maj1 - maj0)) over the window"
((hot_rss >= 100 * 1024 * 90 / 100)) || fail "the hot set was reclaimed: Rss $hot_rss KiB of 102400 (swap $hot_swap KiB)"
# The hot loop's passes per second, reported, not asserted: under emulation,
# any reclaim from the workload's address space slows it down while it runs
# (tests/bench/reclaim/README.md: the kernel's own one-shot reclaim too), with
# no memory stall at all; residency above is what this case asserts.
r0=$(rate "$D/coldhot.rec" first 5)
r1=$(rate "$D/coldhot.rec" last 15)
echo "MEASURE: hot loop passes/s: first 5 s after the fill $r0, last 15 s of the window $r1"
high1=$(awk '$1 == "high" {print $2}' "$scg/memory.events")
echo "MEASURE: memqos-reclaimed.slice memory.events high $high0 -> $high1 (the guard cap did not reclaim if equal)"
((high1 == high0)) || fail "the guard cap of memqos-reclaimed.slice reclaimed too (high $high0 -> $high1): not the controller alone"
ok "a: hot set resident (Rss $((hot_rss / 1024)) MiB of 100, swap $((hot_swap / 1024)) MiB)"
ded_check "after a"

# ---------------------------------------------------------------- d: the ladder pauses it
printf '[Pressure]\nLevel1MemAvailable=99%%\n' >"$dropin/70-paused.conf"
memqosd --check-config >/dev/null || fail "the level-1 drop-in does not pass --check-config"
systemctl reload memqosd
wait_for 30 "pressure level 1" level_is 1
t_d=$SECONDS
wait_for 30 "coldhot paused" state_is coldhot.service paused
alive coldhot.service "d: paused"
echo "MEASURE: paused $((SECONDS - t_d)) s after level 1"
rb=$(wprop coldhot.service ReclaimedBytes)
# More than one [Reclaim] Interval (5 s) at level 1, in which memqosd ticked
# at least 6 times ([Manager] Interval 1 s): coldhot's reclaim came due, and
# nothing may be reclaimed.
ticks0=$(ticks) t_p=$(now_ms)
paused_long() { ticked 6 && (($(now_ms) - t_p > 5000)); }
wait_for 60 "6 ticks and 5 s at level 1" paused_long
[[ $(wprop coldhot.service ReclaimState) == paused ]] || fail "coldhot left paused at level 1: $(wprop coldhot.service ReclaimState)"
[[ $(wprop coldhot.service ReclaimedBytes) == "$rb" ]] || fail "ReclaimedBytes grew while paused: $rb -> $(wprop coldhot.service ReclaimedBytes)"
ok "d: paused at level 1, ReclaimedBytes unchanged"
rm "$dropin/70-paused.conf"
systemctl reload memqosd
wait_for 60 "pressure level 0" level_is 0
wait_for 30 "coldhot no longer paused" state_is_not coldhot.service paused
ok "d: at level 0 again: $(wprop coldhot.service ReclaimState)"
ded_check "after d"

# ---------------------------------------------------------------- b: hot again
backed_off_or_gone() { ! systemctl is-active --quiet coldhot.service || state_is coldhot.service backed-off; }
sfull0=$(full_us "$scg") sms0=$(now_ms)
touch "$D/coldhot.all"
t_b=$SECONDS
wait_for 90 "coldhot backed-off" backed_off_or_gone
alive coldhot.service "b: waiting for backed-off"
sfull=$(stall_pct "$sfull0" "$(full_us "$scg")" $(($(now_ms) - sms0)))
echo "MEASURE: backed-off $((SECONDS - t_b)) s after the workload turned hot; stall $(wprop coldhot.service ReclaimStall) %; memqos-reclaimed.slice full stall $sfull % of that time (what the class-stall rule reads), memory.current $(mib "$(cur "$scg")") MiB of memory.high $(cat "$scg/memory.high")"
# Sample every half second until $want_pairs such pairs are seen (at most
# $pair_window s), each sample one GetAll (state, bytes and stall of the same
# moment; separate reads may straddle a tick). Two samples in a row that say
# backed-off and were taken less than an Interval (5 s) apart: no step was
# decided between them. ReclaimedBytes may still grow
# there, once per back-off, when a step decided before it finishes on
# memqosd's reclaim thread (a step can take longer than the Interval here:
# THP splitting and swap writes under emulation); a second growth in the same
# back-off is a step made while backed off. A busy guest takes seconds per
# sample (CI of f0271aa, next to two fuzzers: 4-5 s, and only 2 pairs in the
# 15 s this case sampled then); a pair further apart than an Interval proves
# nothing and ends the back-off it was in. A back-off lasts as long as the
# workload stalls: once its pages are back it stops stalling, memqosd steps
# again, the refaults of that step back it off again, and so on; a back-off
# may last a single Interval, 1-2 pairs at 2 s per sample (the project's CI
# of 8d4c9d3 saw 2 in 30 s, one per back-off). Hence sampling until enough
# pairs, over several back-offs, not for a fixed time.
want_pairs=3 pair_window=150 interval_ms=5000 # [Reclaim] Interval of this case
prev_st='' prev_rb='' prev_ms=0 held=0 moved='' bad='' t_end=$((SECONDS + pair_window))
while ((SECONDS < t_end && held < want_pairs)); do
  alive coldhot.service "b: backed-off"
  ms=$(now_ms)
  snap=$(wsnap coldhot.service)
  st=$(snap_get "$snap" ReclaimState) rb=$(snap_get "$snap" ReclaimedBytes)
  echo "  b: $(date +%T) state $st ReclaimedBytes $rb stall $(snap_get "$snap" ReclaimStall) memory.current $(mib "$(cur "$ccg")") MiB"
  if [[ $st == backed-off && $prev_st == backed-off ]] && ((ms - prev_ms < interval_ms)); then
    held=$((held + 1))
    if [[ $rb != "$prev_rb" ]]; then
      [[ -z $moved ]] || bad+=" $moved and $prev_rb->$rb"
      moved="$prev_rb->$rb"
    fi
  else
    moved=''
  fi
  prev_st=$st prev_rb=$rb prev_ms=$ms
  sleep 0.5
done
[[ -z $bad ]] || fail "ReclaimedBytes grew twice within one back-off:$bad"
((held >= want_pairs)) || fail "backed-off held for only $held pairs of samples less than $((interval_ms / 1000)) s apart in $pair_window s"
ok "b: backed-off, no step made while backed off ($held pairs of backed-off samples)"
rm -f "$D/coldhot.all"

# ---------------------------------------------------------------- c: the end
ded_check "at the end"
systemctl stop coldhot.service ded.service
echo "MEASURE: case time $((SECONDS - t_start)) s from the coldhot start"

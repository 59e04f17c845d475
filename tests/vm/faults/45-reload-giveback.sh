#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 24, items 5 and 4: one reload path, and caps given back.
#  a. `memqosctl reload` (D-Bus Reload, not SIGHUP) with a changed
#     Level1SomeAvg10 registers the new PSI trigger (journal line).
#  b. A reload re-derives a [Rule.*] for a unit that runs now: adopted at the
#     reload, its new Limit applied at the next, its own memory.max back when
#     the rule goes.
#  c. A reload that moves, then clears MetricsFile removes the old file.
#  d. A reload with MemoryGuard=no for the reclaimed class gives its slice's
#     MemoryHigh back (infinity, its own configuration's), memqosd's runtime
#     drop-in goes, and no later tick caps it again; MemoryGuard back on
#     caps it again.
#  e. `systemctl stop memqosd` gives the guard's cap back, and
#     memory.oom.group of a reclaimed workload memqosd set to 1 goes back to
#     0, within the unit's TimeoutStopSec.
# Each value checked after memqosd acted is one systemd would not produce by
# itself at that moment (the cap was seen in force first; the unit's own
# memory.max differs from the rule's).
set -euo pipefail
source "$(dirname "$0")/lib.bash"

dropin=/etc/memqos/memqosd.conf.d/90-fault-giveback.conf
slice=memqos-reclaimed.slice
scg=/sys/fs/cgroup/memqos.slice/$slice
own_dropin=/run/systemd/system.control/$slice.d/50-MemoryHigh.conf
cg=/sys/fs/cgroup/system.slice/rg.service
cleanup() {
  rm -f $dropin
  systemctl start memqosd 2>/dev/null || true
  memqosctl reload >/dev/null 2>&1 || true
  systemctl stop rg.service gb.service 2>/dev/null || true
  rm -f /etc/systemd/system/rg.service
  systemctl daemon-reload
}
trap cleanup EXIT
mkdir -p /etc/memqos/memqosd.conf.d
cursor_now() { journalctl -u memqosd --show-cursor -n 0 -q | sed -n 's/^-- cursor: //p'; }
journal_since() { journalctl -u memqosd --after-cursor="$1" -o cat; }
slice_high() { systemctl show -p MemoryHigh --value $slice; }
capped() { [[ $(slice_high) != infinity ]] && ! grep -qx max $scg/memory.high; }

wait_memqosd

# --- a. PSI triggers by D-Bus reload -------------------------------------
cursor=$(cursor_now)
printf '[Pressure]\nLevel1SomeAvg10=13%%\n' >$dropin
out=$(memqosctl reload)
[[ -z $out ]] || fail "reload answered: $out"
wait_for 20 "a PSI trigger line with the new threshold after memqosctl reload" bash -c \
  "journalctl -u memqosd --after-cursor='$cursor' -o cat | grep -q 'PSI triggers (some 130000 1000000'"
ok "$(journal_since "$cursor" | grep -m1 'PSI triggers (some 130000')"
rm -f $dropin
memqosctl reload >/dev/null

# --- b. rules re-derived for a running unit ------------------------------
printf '[Service]\nExecStart=/bin/sleep infinity\nMemoryMax=500M\n' >/etc/systemd/system/rg.service
systemctl daemon-reload
systemctl start rg.service
wait_for 10 "rg.service cgroup" test -d $cg
expect_file $cg/memory.max 524288000
printf '[Rule.rg]\nMatch=rg.service\nClass=shared\nRequest=64M\nLimit=300M\n' >$dropin
memqosctl reload >/dev/null
wait_for 20 "rg.service adopted by the rule at the reload (memory.max 300M)" \
  grep -qx 314572800 $cg/memory.max
expect_file $cg/memory.low 67108864
printf '[Rule.rg]\nMatch=rg.service\nClass=shared\nRequest=64M\nLimit=200M\n' >$dropin
memqosctl reload >/dev/null
wait_for 20 "the rule's new Limit on rg.service (memory.max 200M)" grep -qx 209715200 $cg/memory.max
rm -f $dropin
memqosctl reload >/dev/null
wait_for 20 "rg.service's own MemoryMax=500M back once no rule matches" \
  grep -qx 524288000 $cg/memory.max
memqosctl --no-legend workloads | grep -q rg.service && fail "rg.service still managed without a rule"
ok "rg.service: adopted, changed and let go by reloads"
systemctl stop rg.service

# --- c. MetricsFile moved, then cleared ----------------------------------
printf '[Manager]\nMetricsFile=/run/memqos/a.prom\n' >$dropin
memqosctl reload >/dev/null
wait_for 20 "/run/memqos/a.prom written" test -s /run/memqos/a.prom
printf '[Manager]\nMetricsFile=/run/memqos/b.prom\n' >$dropin
out=$(memqosctl reload)
[[ -z $out ]] || fail "reload answered: $out"
[[ ! -e /run/memqos/a.prom ]] || fail "the old metrics file /run/memqos/a.prom is still there"
wait_for 20 "/run/memqos/b.prom written" test -s /run/memqos/b.prom
rm -f $dropin
memqosctl reload >/dev/null
[[ ! -e /run/memqos/b.prom ]] || fail "a cleared MetricsFile left /run/memqos/b.prom"
sleep 3 # a few ticks: nothing writes it again
[[ ! -e /run/memqos/b.prom ]] || fail "/run/memqos/b.prom written again after MetricsFile was cleared"
ok "metrics file removed when moved and when cleared"

# --- d. MemoryGuard=no by reload gives the cap back ----------------------
# A workload in the class first: its slice exists only once something runs
# in it (systemd creates it for its first unit), and an absent slice has no
# cap to give back. gb.service stays for part e.
memqosctl run --name gb --class reclaimed -- /bin/sleep infinity >/dev/null
gcg=$scg/gb.service
wait_for 10 "gb.service cgroup" test -d $gcg
wait_for 30 "the guard's cap on $slice" capped
ok "$slice capped: MemoryHigh=$(slice_high), memory.high=$(cat $scg/memory.high)"
[[ -f $own_dropin ]] || fail "no $own_dropin while capped (systemd's copy of memqosd's cap)"
printf '[Class.reclaimed]\nMemoryGuard=no\n' >$dropin
cursor=$(cursor_now)
out=$(memqosctl reload)
[[ -z $out ]] || fail "reload answered: $out"
wait_for 20 "$slice MemoryHigh=infinity after MemoryGuard=no" bash -c \
  "[[ \$(systemctl show -p MemoryHigh --value $slice) == infinity ]]"
expect_file $scg/memory.high max
[[ ! -e $own_dropin ]] || fail "$own_dropin left after the give-back"
journal_since "$cursor" | grep -q "Gave $slice back its own MemoryHigh" ||
  fail "no journal line for the give-back"
sleep 5 # several ticks
[[ $(slice_high) == infinity ]] || fail "$slice capped again without its guard: $(slice_high)"
ok "MemoryGuard=no: $slice has MemoryHigh=infinity, no memqosd drop-in, not capped again"
rm -f $dropin
memqosctl reload >/dev/null
wait_for 30 "the guard's cap back once MemoryGuard is on again" capped
ok "guard on again: MemoryHigh=$(slice_high)"

# --- e. systemctl stop memqosd gives the cap and memory.oom.group back ---
wait_for 30 "memory.oom.group=1 on gb.service (memqosd's, Killable class)" grep -qx 1 $gcg/memory.oom.group
wait_for 30 "the guard's cap on $slice before the stop" capped
cursor=$(cursor_now)
t0=$SECONDS
systemctl stop memqosd
took=$((SECONDS - t0))
((took < 15)) || fail "systemctl stop memqosd took ${took}s"
[[ $(slice_high) == infinity ]] || fail "the stop left MemoryHigh=$(slice_high) on $slice"
expect_file $scg/memory.high max
[[ ! -e $own_dropin ]] || fail "$own_dropin left after the stop"
expect_file $gcg/memory.oom.group 0
journal_since "$cursor" | grep -q "Gave $slice back its own MemoryHigh" ||
  fail "no journal line for the give-back at stop"
journal_since "$cursor" | grep -qF "Gave ${gcg#/sys/fs/cgroup/} back memory.oom.group=0" ||
  fail "no journal line for memory.oom.group at stop"
ok "stop (${took}s): $slice MemoryHigh=infinity, memory.oom.group of gb.service 0"
systemctl stop gb.service
systemctl start memqosd
wait_memqosd

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 24 item 6: taking memqos off a host without a reboot.
#  a. `dpkg -r memqos` with a placed workload: the package's prerm runs
#     `memqosctl release --all`: the unit has its own MemoryMax again (not
#     memqosd's), its process its own oom_score_adj, system.slice its own protection, no runtime drop-in of
#     memqosd's is left, no stored assignment, memqosd stopped.
#  b. `dpkg --purge memqos`: /var/lib/memqos and /run/memqos are gone.
#  c. Reinstall: memqosd starts with no workload of the old assignment, and
#     the unit keeps its own values.
# The last case of the suite: it removes the package (and installs it again).
set -euo pipefail
source "$(dirname "$0")/lib.bash"

sys=/sys/fs/cgroup/system.slice
cg=$sys/rp.service
cleanup() {
  systemctl stop rp.service 2>/dev/null || true
  rm -f /etc/systemd/system/rp.service
  systemctl daemon-reload
}
trap cleanup EXIT

wait_memqosd
printf '[Service]\nExecStart=/bin/sleep infinity\nMemoryMax=300M\n' >/etc/systemd/system/rp.service
systemctl daemon-reload
systemctl start rp.service
wait_for 10 "rp.service cgroup" test -d $cg
low_before=$(cat $sys/memory.low)
min_before=$(cat $sys/memory.min)
mgr AssignWorkload ssttb rp.service shared 268435456 1073741824 true >/dev/null
wait_for 20 "memqosd's limit on rp.service" grep -qx 1073741824 $cg/memory.max
wait_for 20 "memqosd's sum on system.slice" bash -c "(( \$(cat $sys/memory.low) >= 268435456 ))"
pid=$(systemctl show -p MainPID --value rp.service)
wait_for 30 "memqosd's oom_score_adj on rp.service" bash -c "[[ \$(cat /proc/$pid/oom_score_adj) != 0 ]]"
adj=$(cat /proc/$pid/oom_score_adj)
marked() { grep -rl '^# memqos: written by systemd for memqosd' /run/systemd/system.control 2>/dev/null || true; }
[[ -n $(marked) ]] || fail "no marked drop-in of memqosd's while it manages rp.service"
ok "placed: rp.service memory.max=1G, oom_score_adj=$adj, system.slice memory.low=$(cat $sys/memory.low), marked drop-ins: $(marked | wc -l)"

# --- a. remove ---------------------------------------------------------------
dpkg -r memqos >/tmp/memqos-remove.log 2>&1 || fail "dpkg -r memqos: $(cat /tmp/memqos-remove.log)"
systemctl is-active -q memqosd && fail "memqosd still active after dpkg -r"
expect_file $cg/memory.max 314572800
expect_file $sys/memory.low "$low_before"
expect_file $sys/memory.min "$min_before"
[[ -z $(marked) ]] || fail "memqosd's drop-ins left: $(marked)"
saved=$(find /run/systemd/system.control -name '*.memqos-saved' 2>/dev/null)
[[ -z $saved ]] || fail "kept copies left: $saved"
[[ -z $(ls -A /var/lib/memqos/assignments 2>/dev/null) ]] ||
  fail "stored assignments left: $(ls /var/lib/memqos/assignments)"
[[ -z $(ls -A /var/lib/memqos/originals 2>/dev/null) ]] ||
  fail "records left: $(ls /var/lib/memqos/originals)"
expect_file /proc/$pid/oom_score_adj 0
ok "a. dpkg -r: rp.service memory.max=300M (its own), oom_score_adj 0 (its own), system.slice memory.low=$low_before memory.min=$min_before, no drop-in, copy, assignment or record of memqos's left, memqosd stopped"

# --- b. purge ---------------------------------------------------------------
dpkg --purge memqos >/tmp/memqos-purge.log 2>&1 || fail "dpkg --purge memqos: $(cat /tmp/memqos-purge.log)"
[[ ! -e /var/lib/memqos && ! -e /run/memqos ]] || fail "left after purge: $(ls -d /var/lib/memqos /run/memqos 2>/dev/null)"
ok "b. dpkg --purge: /var/lib/memqos and /run/memqos gone"

# --- c. reinstall -------------------------------------------------------------
dpkg -i /tmp/memqos-debs/memqos_*.deb >/tmp/memqos-reinstall.log 2>&1 ||
  fail "reinstall: $(cat /tmp/memqos-reinstall.log)"
wait_memqosd
out=$(memqosctl workloads --no-legend)
[[ $out != *rp.service* ]] || fail "the old assignment came back: $out"
expect_file $cg/memory.max 314572800
ok "c. reinstalled: memqosd active, rp.service not managed, memory.max=300M"

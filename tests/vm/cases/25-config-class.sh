#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A class added by a drop-in gets a transient slice after `systemctl reload`,
# workloads run in it; an invalid configuration is refused on reload and the
# old one stays in force.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

wait_memqosd
mkdir -p /etc/memqos/memqosd.conf.d
printf '[Class.gold]\nRank=5\nProtection=min\nKillable=no\nSwap=no\n' >/etc/memqos/memqosd.conf.d/50-gold.conf
memqosd --check-config || fail "the gold drop-in does not pass --check-config"
systemctl reload memqosd
wait_for 20 "memqos-gold.slice active" systemctl is-active --quiet memqos-gold.slice
ok "memqos-gold.slice: $(systemctl show -p ActiveState,Description --value memqos-gold.slice | tr '\n' ' ')"
mgr ListClasses | grep -q '"gold" "/org/memqos1/class/gold"' || fail "gold not in ListClasses: $(mgr ListClasses)"
memqosctl run --name goldjob --class gold --request 64M --limit 64M -- /bin/sleep infinity
cg=/sys/fs/cgroup/memqos.slice/memqos-gold.slice/goldjob.service
wait_for 10 "goldjob cgroup" test -d "$cg"
expect_file "$cg/memory.min" 67108864
expect_file "$cg/memory.max" 67108864
expect_file "$cg/memory.swap.max" 0
wait_for 10 "memqos-gold.slice memory.min" grep -qx 67108864 /sys/fs/cgroup/memqos.slice/memqos-gold.slice/memory.min
ok "memqos-gold.slice memory.min = 67108864 (sum of its workloads)"

ratio_before=$(busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager MemoryRatio)
printf '[Overcommit]\nMemoryRatio=abc\n' >/etc/memqos/memqosd.conf.d/90-bad.conf
out=$(memqosctl reload 2>&1) && fail "reload of an invalid config succeeded: $out"
[[ $out == *org.memqos1.Error.ConfigInvalid* && $out == *MemoryRatio=abc* ]] || fail "reload answer: $out"
ok "invalid config refused: $out"
[[ $(busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager MemoryRatio) == "$ratio_before" ]] || fail "MemoryRatio changed"
pid=$(systemctl show -p MainPID --value memqosd)
cursor=$(journalctl -u memqosd -n 0 --show-cursor | sed -n 's/^-- cursor: //p')
systemctl reload memqosd
refused() { journalctl -u memqosd --after-cursor="$cursor" -o cat | grep -qE 'Reload refused|Configuration rejected'; }
wait_for 20 "memqosd refuses the invalid config on SIGHUP" refused
systemctl is-active --quiet memqosd || fail "SIGHUP with an invalid config stopped memqosd"
[[ $(systemctl show -p MainPID --value memqosd) == "$pid" ]] || fail "SIGHUP with an invalid config restarted memqosd"
ok "SIGHUP with an invalid config keeps memqosd running with the old config"
systemctl stop goldjob.service
rm -f /etc/memqos/memqosd.conf.d/90-bad.conf /etc/memqos/memqosd.conf.d/50-gold.conf
memqosctl reload
if mgr ListClasses | grep -q '"gold"'; then fail "gold still listed after its drop-in was removed"; fi
ok "gold gone after its drop-in was removed and memqosd reloaded"

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# systemctl daemon-reload and daemon-reexec while an assign loop keeps memqosd
# busy: a managed unit's tiers are changed behind memqosd's back first
# (set-property --runtime writes the same drop-in memqosd's runtime
# properties live in, so systemd itself keeps the wrong value), and the
# values go back to memqosd's after the reload / re-exec. After the re-exec
# memqosd still hears systemd: a restarted unit gets its tiers again, and a
# further daemon-reload is still noticed. memqosd keeps its MainPID.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

wait_memqosd
work=$(mktemp -d)
pid=$(systemctl show -p MainPID --value memqosd)
cat >/run/systemd/system/x@.service <<'EOF'
[Service]
ExecStart=/bin/sleep infinity
EOF
systemctl daemon-reload
systemctl start $(seq -f 'x@%g.service' 1 10)
systemd-run --unit=web.service /bin/sleep infinity >/dev/null
cg=/sys/fs/cgroup/system.slice/web.service
wait_for 10 "web.service cgroup" test -d "$cg"
mgr AssignWorkload ssttb web.service shared 268435456 1073741824 true >/dev/null
for i in $(seq 1 10); do
  mgr AssignWorkload ssttb "x@$i.service" shared 16777216 134217728 false >/dev/null
done

tiers_are_memqosds() { grep -qx 268435456 "$cg/memory.low" && grep -qx 1073741824 "$cg/memory.max"; }
wait_for 20 "web.service's tiers" tiers_are_memqosds
ok "web.service: memory.low=268435456 memory.max=1073741824"

# The load: assignments of the x@ units with changing values until stopped.
loop() {
  local n=0 okc=0
  while [[ ! -e $work/stop ]]; do
    n=$((n + 1))
    if busctl --timeout=20 call org.memqos1 /org/memqos1 org.memqos1.Manager AssignWorkload ssttb \
      "x@$((RANDOM % 10 + 1)).service" shared $(((RANDOM % 4 + 1) * 8388608)) 134217728 false \
      >/dev/null 2>&1; then okc=$((okc + 1)); fi
  done
  echo "$okc/$n" >"$work/calls"
}
loop &
lpid=$!

cursor() { journalctl -u memqosd -n 0 --show-cursor | sed -n 's/^-- cursor: //p'; }
journal_has() { journalctl -u memqosd --after-cursor="$1" -o cat | grep -q "$2"; }

# behind_its_back VALUE: web.service's MemoryMax set by someone else.
behind_its_back() {
  systemctl set-property --runtime web.service MemoryMax="$1" MemoryLow=0
  wait_for 10 "memory.max=$1 written by systemctl" grep -qx "$1" "$cg/memory.max"
  ok "set-property behind memqosd's back: memory.max=$1, memory.low=$(cat "$cg/memory.low")"
}

echo "--- daemon-reload"
behind_its_back 536870912
c=$(cursor)
t=$SECONDS
systemctl daemon-reload
wait_for 60 "memqosd puts web.service's tiers back after daemon-reload" tiers_are_memqosds
wait_for 10 "memqosd logs the reload" journal_has "$c" "systemd reloaded"
ok "daemon-reload: memqosd re-applied web.service's tiers ($((SECONDS - t)) s)"

echo "--- daemon-reexec"
behind_its_back 402653184
c=$(cursor)
t=$SECONDS
systemctl daemon-reexec
wait_for 90 "memqosd puts web.service's tiers back after daemon-reexec" tiers_are_memqosds
ok "daemon-reexec: memqosd re-applied web.service's tiers ($((SECONDS - t)) s)"
journalctl -u memqosd --after-cursor="$c" -o cat | grep -i "systemd" | head -5 || true

echo "--- after the re-exec memqosd still hears systemd"
systemctl stop web.service
systemd-run --unit=web.service /bin/sleep infinity >/dev/null
wait_for 30 "a restarted web.service gets its tiers (JobRemoved heard)" tiers_are_memqosds
ok "restarted web.service got its tiers again"
behind_its_back 469762048
systemctl daemon-reload
wait_for 60 "memqosd puts the tiers back on a daemon-reload after the re-exec" tiers_are_memqosds
ok "a daemon-reload after the re-exec is still noticed"

touch "$work/stop"
wait "$lpid"
echo "assign loop: $(cat "$work/calls") calls succeeded"
now=$(systemctl show -p MainPID --value memqosd)
[[ $now == "$pid" ]] || fail "memqosd's MainPID changed: $pid -> $now"
ok "memqosd kept its MainPID $pid"

mgr UnassignWorkload s web.service >/dev/null
for i in $(seq 1 10); do mgr UnassignWorkload s "x@$i.service" >/dev/null || true; done
systemctl stop web.service $(seq -f 'x@%g.service' 1 10)
rm -f /run/systemd/system/x@.service
systemctl daemon-reload

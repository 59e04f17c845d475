#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The D-Bus surface under standard clients and under a flood.
# 1. ObjectManager: with `busctl monitor` subscribed (its readiness waited on:
#    it must have seen our own Peer.Ping), AssignWorkload of a transient unit
#    emits InterfacesAdded for its object, GetManagedObjects lists it with its
#    properties, UnassignWorkload emits InterfacesRemoved.
# 2. The flood (flood.py, beside this case): MEMQOS_FLOOD_CLIENTS clients
#    (half root, half uid 65534) x MEMQOS_FLOOD_CALLS random calls with random
#    and malformed arguments (10 x 500 here: 10 x 1000 took 217 s in TCG; the
#    full size, 10 x 10000, runs on a host, see doc/TESTING.md); flood.py
#    asserts every error is named, no
#    call goes unanswered, VmRSS growth bounded, and prints VerifyPlacement
#    p50/p99 under the flood. Here also: memqosd active with the same MainPID
#    and NRestarts.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

wait_memqosd
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
unit=flood-om.service
path=/org/memqos1/workload/flood_2dom_2eservice
om=org.freedesktop.DBus.ObjectManager

# ---- 1. ObjectManager ------------------------------------------------------
systemd-run --quiet --unit="$unit" /bin/sleep infinity
busctl --json=short monitor \
  --match="type='signal',sender='org.memqos1',interface='$om'" \
  --match="type='method_call',destination='org.memqos1',interface='org.freedesktop.DBus.Peer'" \
  >"$work/monitor" 2>"$work/monitor.err" &
mon=$!
cleanup() { kill "$mon" 2>/dev/null || true; systemctl stop "$unit" 2>/dev/null || true; }
trap cleanup EXIT
# The monitor is subscribed once it has seen one of our pings.
monitor_ready() { busctl call org.memqos1 /org/memqos1 org.freedesktop.DBus.Peer Ping >/dev/null; grep -q '"Ping"' "$work/monitor"; }
wait_for 60 "busctl monitor subscribed" monitor_ready
ok "busctl monitor subscribed"

mgr AssignWorkload ssttb "$unit" shared 16777216 67108864 false >/dev/null
added() { grep '"InterfacesAdded"' "$work/monitor" | grep -q "$path"; }
wait_for 30 "InterfacesAdded for $path" added
grep '"InterfacesAdded"' "$work/monitor" | grep "$path" | grep -q '"org.memqos1.Workload"' ||
  fail "InterfacesAdded for $path without org.memqos1.Workload: $(grep InterfacesAdded "$work/monitor" | head -c 600)"
ok "InterfacesAdded for $path (with org.memqos1.Workload)"

objs=$(busctl --json=short call org.memqos1 /org/memqos1 "$om" GetManagedObjects)
check_objects='
import json, sys
path, unit = sys.argv[1], sys.argv[2]
objs = json.load(sys.stdin)["data"][0]
w = objs[path]["org.memqos1.Workload"]
assert w["Id"]["data"] == unit and w["Class"]["data"] == "shared", w
assert w["Limit"]["data"] == 67108864, w
classes = [p for p in objs if p.startswith("/org/memqos1/class/")]
assert "/org/memqos1/class/shared" in classes, classes
print(f"ok: GetManagedObjects lists {path} (Id {unit}, class shared, Limit 64M), "
      f"{len(classes)} classes, {len(objs)} objects")
'
python3 -c "$check_objects" "$path" "$unit" <<<"$objs" || fail "GetManagedObjects: $(head -c 600 <<<"$objs")"

mgr UnassignWorkload s "$unit" >/dev/null
removed() { grep '"InterfacesRemoved"' "$work/monitor" | grep -q "$path"; }
wait_for 30 "InterfacesRemoved for $path" removed
busctl --json=short call org.memqos1 /org/memqos1 "$om" GetManagedObjects | grep -q "$path" &&
  fail "GetManagedObjects still lists $path after UnassignWorkload"
ok "UnassignWorkload: InterfacesRemoved for $path, gone from GetManagedObjects"
cleanup
trap - EXIT

# ---- 2. The flood --------------------------------------------------------
clients=${MEMQOS_FLOOD_CLIENTS:-10}
calls=${MEMQOS_FLOOD_CALLS:-500}
pid=$(systemctl show -p MainPID --value memqosd)
restarts=$(systemctl show -p NRestarts --value memqosd)
echo "flood: $clients clients x $calls calls against memqosd pid $pid (NRestarts $restarts)"
python3 "$here/flood.py" --pid "$pid" --clients "$clients" --calls "$calls" --seed "${MEMQOS_FLOOD_SEED:-1}" ||
  fail "the flood failed (see the flood: lines above)"
systemctl is-active --quiet memqosd || fail "memqosd is not active after the flood"
now=$(systemctl show -p MainPID --value memqosd)
[[ $now == "$pid" ]] || fail "memqosd restarted: MainPID $pid -> $now"
nr=$(systemctl show -p NRestarts --value memqosd)
[[ $nr == "$restarts" ]] || fail "NRestarts $restarts -> $nr"
ok "after $((clients * calls)) calls: memqosd active, same MainPID $pid, NRestarts $nr"

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# memqosd runs under systemd as Type=notify, owns org.memqos1, and its live
# introspection matches the installed dbus/*.xml contract.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

wait_memqosd
type=$(systemctl show -p Type --value memqosd)
[[ $type == notify ]] || fail "memqosd.service Type=$type, expected notify"
state=$(systemctl show -p ActiveState,SubState --value memqosd | tr '\n' ' ')
[[ $state == "active running "* ]] || fail "memqosd is '$state', expected active running"
ok "memqosd.service Type=notify, $state"
status=$(systemctl show -p StatusText --value memqosd)
[[ $status == Managing* ]] || fail "no STATUS= from memqosd (StatusText='$status')"
ok "STATUS=$status"
wd=$(systemctl show -p WatchdogUSec --value memqosd)
ok "WatchdogUSec=$wd"

busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager Version
total=$(busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager MemoryTotal | awk '{print $2}')
kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
((total == kb * 1024)) || fail "MemoryTotal=$total, /proc/meminfo says $((kb * 1024))"
ok "MemoryTotal=$total matches /proc/meminfo"

# Compare live introspection with the installed contract, member by member
# (name, signature, direction, access).
systemd-run --unit=introspect-probe.service /bin/sleep 600 >/dev/null
mgr AssignWorkload ssttb introspect-probe.service shared 0 18446744073709551615 false >/dev/null
python3 - <<'PY'
import subprocess, sys, xml.etree.ElementTree as ET
def members(root, iface):
    out = set()
    for i in root.iter("interface"):
        if i.get("name") != iface:
            continue
        for m in i:
            if m.tag == "property":
                out.add(("property", m.get("name"), m.get("type"), m.get("access")))
            elif m.tag in ("method", "signal"):
                args = tuple((a.get("type"), a.get("direction", "out" if m.tag == "signal" else "in")) for a in m.iter("arg"))
                out.add((m.tag, m.get("name"), args))
    return out
checks = [("org.memqos1.Manager", "/org/memqos1"),
          ("org.memqos1.Class", "/org/memqos1/class/shared"),
          ("org.memqos1.Workload", "/org/memqos1/workload/introspect_2dprobe_2eservice")]
bad = False
for iface, path in checks:
    want = members(ET.parse(f"/usr/share/dbus-1/interfaces/{iface}.xml").getroot(), iface)
    live_xml = subprocess.run(["busctl", "introspect", "--xml-interface", "org.memqos1", path],
                              check=True, capture_output=True, text=True).stdout
    got = members(ET.fromstring(live_xml), iface)
    if want != got:
        bad = True
        print(f"FAIL: {iface} at {path} differs from the XML", file=sys.stderr)
        for m in sorted(want - got, key=str): print("  missing live:", m, file=sys.stderr)
        for m in sorted(got - want, key=str): print("  not in XML:  ", m, file=sys.stderr)
    else:
        print(f"ok: {iface} at {path}: {len(got)} members match the XML")
sys.exit(1 if bad else 0)
PY
mgr UnassignWorkload s introspect-probe.service
systemctl stop introspect-probe.service

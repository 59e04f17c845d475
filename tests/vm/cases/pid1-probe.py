#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# pid1-probe.py N INTERVAL DEST PATH IFACE PROP: N calls of Properties.Get
# over one D-Bus connection (no process start per call, unlike systemctl
# show, whose exec alone takes ~100 ms under TCG); prints p50 p95 max in ms.
# Used by 56-pid1-latency.sh to time PID 1's answers while memqosd throttles.
# dbuswire.py (the faults suite's pure-Python D-Bus client, linked here):
# the guest has no python3-dbus.
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dbuswire  # noqa: E402  pylint: disable=wrong-import-position


def main():
    n, interval = int(sys.argv[1]), float(sys.argv[2])
    dest, path, iface, prop = sys.argv[3:7]
    conn = dbuswire.Connection(os.environ.get("PROBE_BUS"))
    lat = []
    for _ in range(n):
        a = time.monotonic()
        conn.call_ok(dest, path, "org.freedesktop.DBus.Properties", "Get", "ss", (iface, prop))
        lat.append((time.monotonic() - a) * 1000)
        time.sleep(interval)
    lat.sort()
    print("%.1f %.1f %.1f" % (lat[len(lat) // 2], lat[min(len(lat) - 1, len(lat) * 95 // 100)],
                              lat[-1]))


main()

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What an operator sees: runs inside the test VM (tests/vm/demo).
set -euo pipefail
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

until systemctl is-active --quiet memqosd; do sleep 0.5; done
step systemctl --no-pager status memqosd --lines=0
step memqosctl status
step memqosctl classes

echo
echo "# A latency-critical web service and a batch job share this host."
step systemd-run --unit=web.service /bin/sleep infinity
step memqosctl assign web.service shared --request 256M --limit 1G
step memqosctl run --name batch --class reclaimed --limit 512M -- /bin/sleep infinity
sleep 2
step memqosctl workloads

echo
echo "# The tiers, read back from the kernel's cgroup files:"
for f in memory.min memory.low memory.high memory.max memory.swap.max; do
  printf '  system.slice/web.service/%-16s %s\n' "$f" "$(cat /sys/fs/cgroup/system.slice/web.service/$f)"
done
printf '  system.slice/%-28s %s\n' memory.low "$(cat /sys/fs/cgroup/system.slice/memory.low)"
for f in memory.max memory.swap.max; do
  printf '  memqos.slice/memqos-reclaimed.slice/batch.service/%-16s %s\n' "$f" \
    "$(cat /sys/fs/cgroup/memqos.slice/memqos-reclaimed.slice/batch.service/$f)"
done

echo
echo "# Would a 256 MiB VM fit under the memory ratio? A 64 GiB one?"
step memqosctl verify-placement 256M || true
step memqosctl verify-placement 64G || true
step memqosctl verify || true

echo
echo "# Ganeti's state of record on this node (the Ganeti post-hooks keep it; here by hand):"
echo "# Two instances of 256 MiB are up and count against the ratio; the candidate's own"
echo "# record (--instance) does not."
step memqosctl record-instance web1.example.test --max 256M --min 128M --up
step memqosctl record-instance web2.example.test --max 256M --min 128M --up
step memqosctl record-instance old.example.test --max 1G --down
step memqosctl instances
step memqosctl verify-placement 256M || true
step memqosctl verify-placement 256M --instance web2.example.test || true
step memqosctl --json status

echo
echo "# A memory surge. online (dedicated, 200 MiB, protected by memory.min) re-touches its"
echo "# memory every second; hog (reclaimed) grabs 50 MiB every 0.5 s and never frees it."
echo "# memqosd caps the reclaimed class (the memory guard) and, once the hog stalls at its"
echo "# cap, kills it as a whole unit, before the kernel's OOM killer would pick anything."
online_py='
import mmap, time
m = mmap.mmap(-1, 200 << 20)
while True:
    for i in range(0, 200 << 20, 4096):
        m[i] = (m[i] + 1) & 255
    time.sleep(1)
'
hog_py='
import time
held = []
while True:
    held.append(b"x" * (50 << 20))
    time.sleep(0.5)
'
step memqosctl run --name online --class dedicated --request 264M -- /usr/bin/python3 -c "$online_py"
step systemd-run --unit=hog.service --slice=memqos-reclaimed.slice /usr/bin/python3 -c "$hog_py"
oom_before=$(awk '/^oom_kill / {print $2}' /proc/vmstat)
t0=$SECONDS
while [[ $(systemctl show -p Result --value hog.service) != signal ]] && ((SECONDS - t0 < 180)); do
  printf '  t=%3ds  hog %4d MiB (swap %4d MiB)  reclaimed cap %s  level %s\n' $((SECONDS - t0)) \
    $(($(cat /sys/fs/cgroup/memqos.slice/memqos-reclaimed.slice/hog.service/memory.current 2>/dev/null || echo 0) >> 20)) \
    $(($(cat /sys/fs/cgroup/memqos.slice/memqos-reclaimed.slice/hog.service/memory.swap.current 2>/dev/null || echo 0) >> 20)) \
    "$(cat /sys/fs/cgroup/memqos.slice/memqos-reclaimed.slice/memory.high)" \
    "$(busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager PressureLevel | cut -d' ' -f2)"
  sleep 1
done
echo "# hog ended after $((SECONDS - t0)) s; kernel OOM kills: $(( $(awk '/^oom_kill / {print $2}' /proc/vmstat) - oom_before ))"
step systemctl --no-pager status hog.service --lines=0 || true
step memqosctl events
step journalctl -x --no-pager -o short MESSAGE_ID=4d8a0f6b9c5e4b7f8a2e1c3d5b7a9e01
step systemctl --no-pager status online.service --lines=0
step memqosctl status

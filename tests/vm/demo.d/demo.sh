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

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 11, fault row "state directory full / read-only" (defect 5): a
# persistent AssignWorkload/UnassignWorkload that cannot be stored fails with
# org.memqos1.Error.StateWriteFailed naming the file and the system's error,
# changes nothing (the stored files are byte for byte as before, the unit's
# tiers too), and memqosd keeps running (same MainPID, still answering).
#
# The tiny tmpfs goes over /var/lib/memqos on the host. memqosd runs in its
# own mount namespace (ProtectSystem=strict; StateDirectory= is bind-mounted
# into it when it starts), so a mount made later on the host is not reliably
# what memqosd sees: memqosd is restarted once after the mount, and its
# namespace is then built on the tmpfs. The later remount read-only changes
# the tmpfs's superblock, which every mount of it shares, so no second
# restart is needed for that.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

state=/var/lib/memqos
asg=$state/assignments
cursor=$(journalctl -u memqosd --show-cursor -n 0 -q | sed -n 's/^-- cursor: //p')
since() { journalctl -u memqosd --after-cursor="$cursor" -o cat; }

cleanup() {
  mountpoint -q $state && umount -l $state
  systemctl stop sd-a.service sd-b.service 2>/dev/null || true
  rm -f /etc/systemd/system/sd-a.service /etc/systemd/system/sd-b.service
  systemctl daemon-reload
  systemctl restart memqosd
}
trap cleanup EXIT

wait_memqosd
for u in sd-a sd-b; do
  printf '[Service]\nExecStart=/bin/sleep infinity\n' >/etc/systemd/system/$u.service
done
systemctl daemon-reload
systemctl start sd-a.service sd-b.service
cg=/sys/fs/cgroup/system.slice/sd-a.service

# The old state: sd-a.service assigned persistently.
memqosctl assign sd-a.service shared --request 64M --limit 512M >/dev/null
wait_for 20 "sd-a.service limit" grep -qx 536870912 $cg/memory.max
[[ -f $asg/sd_2da_2eservice ]] || fail "no stored assignment of sd-a.service"

# A 1 MiB tmpfs with a copy of the state directory, filled to the last byte.
tmp=$(mktemp -d)
cp -a $state/. "$tmp"/
mount -t tmpfs -o size=1m,mode=0755 memqos-full $state
cp -a "$tmp"/. $state/
rm -rf "$tmp"
dd if=/dev/zero of=$state/filler bs=4k 2>/dev/null || true
df -h $state | tail -1
systemctl restart memqosd
wait_memqosd
pid=$(systemctl show -p MainPID --value memqosd)
sums_before=$(cd $asg && sha256sum -- *)
ok "memqosd (pid $pid) runs on a full state directory; stored: $(cd $asg && echo *)"

# named WHY memqosctl-args...: the call fails with StateWriteFailed naming WHY.
named() {
  local why=$1 out rc=0; shift
  out=$(memqosctl "$@" 2>&1) || rc=$?
  ((rc == 1)) || fail "memqosctl $* exited $rc, expected 1: $out"
  [[ $out == *org.memqos1.Error.StateWriteFailed* && $out == *"$why"* && $out == *$state/* ]] ||
    fail "memqosctl $*: expected StateWriteFailed with '$why' and a path: $out"
  ok "memqosctl $*: ${out:0:200}"
}
alive() {
  [[ $(systemctl show -p MainPID --value memqosd) == "$pid" ]] || fail "memqosd restarted"
  busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager Version >/dev/null ||
    fail "memqosd does not answer Version"
  mgr Verify >/dev/null || fail "memqosd does not answer Verify"
  [[ $(cd $asg && sha256sum -- *) == "$sums_before" ]] || fail "stored files changed"
  ok "memqosd $pid alive (Version, Verify); stored files unchanged"
}

# Full: a new persistent workload and a change of the stored one.
named "No space left on device" assign sd-b.service shared --request 64M --limit 256M
named "No space left on device" assign sd-a.service dedicated --request 128M --limit 512M
[[ $(memqosctl workloads) != *$'\n'sd-b.service* ]] || fail "sd-b.service is managed although not stored"
expect_file $cg/memory.low 67108864
[[ $(since) == *"Cannot store the assignment of sd-a.service: $asg/sd_2da_2eservice: No space left on device"* ]] ||
  fail "no journal entry for the refused write: $(since | tail -5)"
ok "journal: $(since | grep -m1 'Cannot store the assignment of sd-a.service')"
alive

# Read-only (space again, so only the read-only mount refuses): the same,
# and removing a stored assignment fails too.
rm -f $state/filler
mount -o remount,ro $state
named "Read-only file system" assign sd-b.service shared --request 64M --limit 256M
named "Read-only file system" assign sd-a.service dedicated --request 128M --limit 512M
named "Read-only file system" unassign sd-a.service
[[ $(memqosctl workloads) == *$'\n'sd-a.service* ]] || fail "sd-a.service no longer managed after a refused unassign"
expect_file $cg/memory.max 536870912
alive

trap - EXIT
umount $state
systemctl restart memqosd
wait_memqosd
[[ $(memqosctl workloads) == *$'\n'sd-a.service* ]] || fail "sd-a.service not loaded again after the restart"
memqosctl unassign sd-a.service
systemctl stop sd-a.service sd-b.service
rm -f /etc/systemd/system/sd-a.service /etc/systemd/system/sd-b.service
systemctl daemon-reload
ok "state directory back on disk; sd-a.service was still stored there and is unassigned"

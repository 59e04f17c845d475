#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The test bed itself: the guest is the kind of host memqosd is written for.
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

pid1=$(cat /proc/1/comm)
[[ $pid1 == systemd ]] || fail "PID 1 is '$pid1', not systemd"
ok "PID 1 is systemd $(systemctl --version | head -n1 | cut -d' ' -f2)"

fstype=$(stat -f -c %T /sys/fs/cgroup)
[[ $fstype == cgroup2fs ]] || fail "/sys/fs/cgroup is '$fstype', not cgroup v2 (cgroup2fs)"
controllers=$(cat /sys/fs/cgroup/cgroup.controllers)
[[ " $controllers " == *" memory "* ]] ||
    fail "no memory controller in /sys/fs/cgroup/cgroup.controllers ('$controllers')"
ok "cgroup v2 with controllers: $controllers"
findmnt -n -o OPTIONS /sys/fs/cgroup | grep -qw memory_recursiveprot ||
    fail "cgroup2 is not mounted with memory_recursiveprot ($(findmnt -n -o OPTIONS /sys/fs/cgroup))"
ok "cgroup2 mounted with memory_recursiveprot"

psi=$(cat /proc/pressure/memory) || fail "/proc/pressure/memory is not readable (kernel without PSI, or psi=0?)"
grep -q '^some avg10=' <<<"$psi" || fail "/proc/pressure/memory has no 'some' line: $psi"
grep -q '^full avg10=' <<<"$psi" || fail "/proc/pressure/memory has no 'full' line: $psi"
[[ -r /sys/fs/cgroup/system.slice/memory.pressure ]] || fail "no per-cgroup memory.pressure in system.slice"
ok "PSI: $(head -n1 <<<"$psi")"

swaps=$(swapon --show --noheadings)
[[ -n $swaps ]] || fail "no active swap (swapon --show is empty)"
ok "swap: $swaps"

systemctl start libvirtd.service || fail "systemctl start libvirtd failed: $(systemctl status --no-pager libvirtd.service 2>&1 | tail -n 20)"
systemctl is-active --quiet libvirtd.service || fail "libvirtd.service is not active after start"
virsh -c qemu:///system list --all >/tmp/virsh.out 2>&1 || fail "virsh -c qemu:///system list failed: $(cat /tmp/virsh.out)"
ok "libvirtd active, virsh list works: libvirt $(virsh -c qemu:///system version --daemon | sed -n 's/^Running against daemon: //p')"

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The test bed for VMs as workloads (no memqosd involved): a tiny libvirt
# domain (TCG, no disk, the image's kernel and tiny-initrd.img, see
# memqos-tiny-domain) boots to its console marker, runs in a systemd machine
# scope (machine.slice by default, memqos.slice/memqos-shared.slice with
# <partition>/memqos/shared), and its virtio balloon really moves with
# `virsh setmem`. Prints MEASURE: lines (boot to marker, balloon move, RSS).
set -euo pipefail
source "$(dirname "$0")/lib.bash"

V=(virsh -q -c qemu:///system)
A=memqos-tiny-a B=memqos-tiny-b
MEM=256 TARGET=160 TOUCH=64

# Whatever happens, leave no domain behind (later cases share the guest).
cleanup() {
    local d
    for d in "$A" "$B"; do
        "${V[@]}" destroy "$d" >/dev/null 2>&1 || true
        "${V[@]}" undefine "$d" >/dev/null 2>&1 || true
    done
}
trap cleanup EXIT

# ms: milliseconds since an arbitrary start (for MEASURE: lines).
ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { # FROM_MS -> "S.SSS"
    local d=$(($(ms) - $1))
    printf '%d.%03d' $((d / 1000)) $((d % 1000))
}
# qemu_pid NAME: the domain's QEMU process.
qemu_pid() { cat "/run/libvirt/qemu/$1.pid"; }
# cgroup_of PID: its cgroup v2 path.
cgroup_of() { sed -n 's/^0:://p' "/proc/$1/cgroup"; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
# actual NAME: the balloon's "actual" in KiB (dommemstat).
actual() { "${V[@]}" dommemstat "$1" | awk '$1 == "actual" {print $2}'; }

[[ -x /usr/local/bin/memqos-tiny-domain && -r /usr/local/share/memqos-test/tiny-initrd.img ]] ||
    fail "the image has no memqos-tiny-domain / tiny-initrd.img (old image? rebuild: tests/vm/build-image)"
ok "tiny-initrd.img: $(stat -c %s /usr/local/share/memqos-test/tiny-initrd.img) bytes"

systemctl start libvirtd.service ||
    fail "systemctl start libvirtd failed: $(systemctl status --no-pager libvirtd.service 2>&1 | tail -n 20)"
systemctl is-active --quiet libvirtd.service || fail "libvirtd.service is not active after start"
ok "libvirtd active"

# --- A: default partition, touches $TOUCH MiB -------------------------------
memqos-tiny-domain define "$A" "$MEM" --touch "$TOUCH"
t0=$(ms)
memqos-tiny-domain start "$A" || fail "virsh start $A failed"
echo "MEASURE: libvirt tiny domain: virsh start returned after $(secs "$t0") s"
marker=$(memqos-tiny-domain wait-up "$A" 600) || fail "$A did not reach its console marker"
echo "MEASURE: libvirt tiny domain ($MEM MiB, TCG in TCG): start to console marker $(secs "$t0") s"
ok "$A is up: $marker"
[[ $marker == *balloon=yes* ]] || fail "$A has no virtio balloon driver bound: '$marker'"

pid=$(qemu_pid "$A")
rssm=$(rss_kib "$pid")
cg=$(cgroup_of "$pid")
[[ $cg == */machine.slice/machine-qemu* && $cg == *.scope* ]] ||
    fail "QEMU of $A (pid $pid) is in '$cg', expected under machine.slice/machine-qemu...scope"
ok "QEMU of $A (pid $pid) in $cg"
scope=${cg%%.scope*}.scope
systemctl is-active --quiet "${scope##*/}" ||
    fail "the scope unit ${scope##*/} of $A is not active"
ok "scope unit ${scope##*/} active"

# The guest touched $TOUCH MiB after the marker: wait for it (host RSS grows).
log=$(memqos-tiny-domain log "$A")
wait_for 300 "$A touched $TOUCH MiB" grep -q "memqos-tiny: touched $TOUCH MiB" "$log"
rss0=$(rss_kib "$pid")
echo "MEASURE: libvirt tiny domain: QEMU RSS $((rssm / 1024)) MiB at the marker, $((rss0 / 1024)) MiB after the guest touched $TOUCH MiB"
((rss0 > TOUCH * 1024)) || fail "QEMU RSS is $rss0 KiB after the guest touched $TOUCH MiB"

# Balloon: stats need a period; actual starts at MEM.
"${V[@]}" dommemstat --period 1 --live "$A" || fail "virsh dommemstat --period 1 --live $A failed"
a0=$(actual "$A")
[[ $a0 == $((MEM * 1024)) ]] || fail "$A balloon actual is '$a0' KiB before setmem, expected $((MEM * 1024))"
ok "$A balloon actual $a0 KiB"
t1=$(ms)
"${V[@]}" setmem "$A" "${TARGET}M" --live || fail "virsh setmem $A ${TARGET}M --live failed"
near_target() { local a; a=$(actual "$A"); [[ -n $a ]] && ((a <= TARGET * 1024 + 1024)); }
wait_for 180 "$A balloon actual <= $((TARGET * 1024 + 1024)) KiB (now $(actual "$A"))" near_target
echo "MEASURE: libvirt tiny domain: virsh setmem ${MEM}M -> ${TARGET}M, balloon actual moved in $(secs "$t1") s"
a1=$(actual "$A")
ok "$A balloon actual $a1 KiB after setmem ${TARGET}M"
rss1=$(rss_kib "$pid")
echo "MEASURE: libvirt tiny domain: QEMU RSS $((rss0 / 1024)) MiB before, $((rss1 / 1024)) MiB after the balloon move (falls only for pages the guest had touched)"
"${V[@]}" dommemstat "$A" | sed 's/^/  dommemstat: /'

t2=$(ms)
"${V[@]}" destroy "$A" >/dev/null || fail "virsh destroy $A failed"
[[ $("${V[@]}" domstate "$A") == "shut off"* ]] || fail "$A is '$("${V[@]}" domstate "$A")' after destroy"
[[ ! -d /proc/$pid ]] || fail "QEMU of $A (pid $pid) still runs after destroy"
ok "virsh destroy $A ended QEMU in $(secs "$t2") s"

# --- B: <partition>/memqos/shared: the scope lands in memqos-shared.slice ---
systemctl cat memqos-shared.slice >/dev/null 2>&1 ||
    echo "note: no memqos-shared.slice unit (is the .deb installed?); systemd makes the slice implicitly"
memqos-tiny-domain define "$B" "$MEM" --partition /memqos/shared
t0=$(ms)
memqos-tiny-domain start "$B" || fail "virsh start $B (partition /memqos/shared) failed"
echo "MEASURE: libvirt tiny domain in /memqos/shared: virsh start returned after $(secs "$t0") s"
pid=$(qemu_pid "$B")
cg=$(cgroup_of "$pid")
[[ $cg == /memqos.slice/memqos-shared.slice/machine-qemu*.scope* ]] ||
    fail "QEMU of $B (pid $pid) is in '$cg', expected under /memqos.slice/memqos-shared.slice/machine-qemu...scope"
ok "QEMU of $B (pid $pid) in $cg"
"${V[@]}" destroy "$B" >/dev/null || fail "virsh destroy $B failed"
[[ ! -d /proc/$pid ]] || fail "QEMU of $B (pid $pid) still runs after destroy"
ok "virsh destroy $B"

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# libvirt domains as workloads (issue 10), with tiny TCG domains
# (memqos-tiny-domain): a domain is managed from its memqos metadata, with
# tiers on its machine scope and the sum on machine.slice; one with no
# metadata is only observed under the shipped default (issue 23: no limit,
# no oom_score_adj write), and placed once a drop-in sets DefaultClass=shared;
# AssignWorkload vm: moves it and (persist) stores metadata and partition;
# tiers changed behind memqosd's back come back after `systemctl restart
# libvirtd` and after kill -9 of memqosd; at pressure level 2 the reclaimed
# VM's balloon shrinks (never below its request) and comes back when the
# pressure is gone; at level 3 it is destroyed through libvirt, the dedicated
# one is not; its next start lands in memqos-reclaimed.slice.
# Prints MEASURE: lines (start to tiers, balloon moves).
set -euo pipefail
source "$(dirname "$0")/lib.bash"

V=(virsh -q -c qemu:///system)
NS=https://memqos.org/xmlns/workload/1
dropin=/etc/memqos/memqosd.conf.d
MiB=1048576

cleanup() {
    local d
    for d in qosa qosb; do
        "${V[@]}" destroy "$d" >/dev/null 2>&1 || true
        "${V[@]}" undefine "$d" >/dev/null 2>&1 || true
    done
    # AssignWorkload's record outlives the domain (as for a service): drop
    # it, or the next case starts with a reclaimed vm:qosb on the list.
    mgr UnassignWorkload s vm:qosb >/dev/null 2>&1 || true
    rm -f "$dropin"/65-*.conf
    systemctl reload memqosd 2>/dev/null || true
}
trap cleanup EXIT

ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { local d=$(($(ms) - $1)); printf '%d.%03d' $((d / 1000)) $((d % 1000)); }
# wprop NAME PROPERTY: a property of the Workload object of vm:NAME.
wprop() {
    busctl get-property org.memqos1 "/org/memqos1/workload/vm_3a$1" org.memqos1.Workload "$2" |
        cut -d' ' -f2- | tr -d '"'
}
# scope_cg NAME: the cgroup of the domain's scope, relative to /sys/fs/cgroup.
scope_cg() {
    local pid
    pid=$(cat "/run/libvirt/qemu/$1.pid") || return 1
    sed -n 's|^0::/||p' "/proc/$pid/cgroup" | sed 's|\(\.scope\).*|\1|'
}
# actual NAME: the balloon's actual size in KiB as the guest reports it.
actual() { virsh -q -c qemu:///system dommemstat "$1" | awk '$1 == "actual" {print $2}'; }
export -f wprop actual

mkdir -p "$dropin"
systemctl start libvirtd.service || fail "cannot start libvirtd"
wait_memqosd

echo "--- two domains: qosa with memqos metadata (dedicated), qosb with none (unplaced, then default class)"
memqos-tiny-domain define qosa 256 \
    --metadata "<memqos:workload xmlns:memqos='$NS' class='dedicated' request='128M' limit='512M'/>"
memqos-tiny-domain define qosb 256
# qosa is started paused: its qemu and scope exist, and it takes no CPU
# from qosb's boot (nested emulation is slow enough).
"${V[@]}" start --paused qosa >/dev/null || fail "virsh start --paused qosa failed"
t0=$(ms)
cga=/sys/fs/cgroup/$(scope_cg qosa)
[[ $cga == */machine.slice/machine-qemu*.scope ]] || fail "qosa's scope is '$cga'"
wait_for 60 "memory.min of qosa's scope set by memqosd" grep -qx $((128 * MiB)) "$cga/memory.min"
echo "MEASURE: libvirt domain: virsh start returned to memqosd's tiers on its scope: $(secs "$t0") s"
memqos-tiny-domain start qosb || fail "virsh start qosb failed"
cgb=/sys/fs/cgroup/$(scope_cg qosb)
expect_file "$cga/memory.max" $((512 * MiB))
[[ $(wprop qosa Class) == dedicated ]] || fail "vm:qosa class is '$(wprop qosa Class)'"
[[ $(wprop qosa Source) == metadata ]] || fail "vm:qosa source is '$(wprop qosa Source)'"
unit=$(wprop qosa Unit)
unit=${unit//\\\\/\\} # busctl doubles backslashes
[[ $unit == "${cga##*/}" ]] || fail "vm:qosa unit '$unit' is not ${cga##*/}"
ok "vm:qosa: dedicated from its metadata, unit ${cga##*/}"
min=$(cat /sys/fs/cgroup/machine.slice/memory.min)
((min >= 128 * MiB)) || fail "machine.slice memory.min=$min, expected >= 128 MiB (the sum)"
ok "machine.slice memory.min=$min"
# qosb under the shipped default (no [VM] DefaultClass): unplaced, observed
# only. Its scope keeps libvirt's and systemd's values, its qemu its OOM
# priority (memqosd's shared class would write 999).
qpid=$(cat /run/libvirt/qemu/qosb.pid) || fail "no pidfile for qosb"
adj0=$(cat "/proc/$qpid/oom_score_adj")
wait_for 60 "vm:qosb listed as unplaced" bash -c '[[ $(wprop qosb Source) == unplaced ]]'
[[ -z $(wprop qosb Class) ]] || fail "unplaced vm:qosb has class '$(wprop qosb Class)'"
sleep 5 # several ticks: a placed VM gets its tiers and OOM priority at the first
expect_file "$cgb/memory.max" max
mmax=$(systemctl show -p MemoryMax --value "${cgb##*/}")
[[ $mmax == infinity ]] || fail "unplaced qosb's scope has MemoryMax=$mmax"
adj=$(cat "/proc/$qpid/oom_score_adj")
[[ $adj == "$adj0" && $adj != 999 ]] || fail "unplaced qosb's qemu oom_score_adj $adj0 -> $adj"
ok "vm:qosb unplaced: listed, scope MemoryMax=infinity, qemu oom_score_adj $adj untouched"

# The old behaviour, asked for: [VM] DefaultClass=shared; limit = <memory>
# 256M + LimitOverhead 256M. A reload places the running domain.
printf '[VM]\nDefaultClass=shared\n' >"$dropin/65-default.conf"
memqosd --check-config || fail "the DefaultClass drop-in does not pass --check-config"
systemctl reload memqosd
wait_for 60 "memory.max of qosb's scope set by memqosd" grep -qx $((512 * MiB)) "$cgb/memory.max"
[[ $(wprop qosb Class) == shared && $(wprop qosb Source) == default ]] ||
    fail "vm:qosb is '$(wprop qosb Class)' from '$(wprop qosb Source)', expected shared from default"
ok "vm:qosb: shared by default, memory.max 512M"
mgr Verify | grep -q . || fail "Verify gave no answer"

echo "--- AssignWorkload vm:qosb reclaimed 64M/384M, persist"
out=$(mgr AssignWorkload ssttb vm:qosb reclaimed $((64 * MiB)) $((384 * MiB)) true)
[[ $out == 'o "/org/memqos1/workload/vm_3aqosb"' ]] || fail "AssignWorkload answered '$out'"
wait_for 30 "memory.max 384M on qosb's scope" grep -qx $((384 * MiB)) "$cgb/memory.max"
[[ $(wprop qosb Class) == reclaimed && $(wprop qosb Source) == api ]] || fail "vm:qosb not reclaimed/api"
"${V[@]}" dumpxml --inactive qosb | grep -q '<partition>/memqos/reclaimed</partition>' ||
    fail "qosb's persistent XML has no partition /memqos/reclaimed"
"${V[@]}" metadata qosb "$NS" | grep -q 'class="reclaimed"' ||
    fail "qosb has no memqos metadata: $("${V[@]}" metadata qosb "$NS" 2>&1)"
ok "vm:qosb reclaimed; metadata and partition stored in the domain"

echo "--- systemctl restart libvirtd (qosa's memory.min reset behind memqosd's back first)"
systemctl set-property --runtime "${cga##*/}" MemoryMin=0
expect_file "$cga/memory.min" 0
systemctl restart libvirtd.service
wait_for 90 "memory.min of qosa back after the libvirtd restart" grep -qx $((128 * MiB)) "$cga/memory.min"
ok "tiers re-applied after libvirtd came back"

echo "--- kill -9 memqosd (qosb's memory.max reset behind its back first)"
systemctl set-property --runtime "${cgb##*/}" MemoryMax=infinity
expect_file "$cgb/memory.max" max
pid_before=$(systemctl show -p MainPID --value memqosd)
systemctl kill -s KILL memqosd
wait_for 60 "memqosd restarted" bash -c "[[ \$(systemctl show -p MainPID --value memqosd) != $pid_before && \$(systemctl is-active memqosd) == active ]]"
wait_memqosd
wait_for 60 "memory.max of qosb back after memqosd's restart" grep -qx $((384 * MiB)) "$cgb/memory.max"
[[ $(wprop qosb Class) == reclaimed && $(wprop qosb Source) == api ]] || fail "vm:qosb lost its assignment"
ok "vm:qosb still reclaimed 64M/384M after kill -9"

others=$(mgr ListWorkloads | tr ' ' '\n' | grep -c '"reclaimed"' || true)
((others == 1)) || fail "expected vm:qosb alone in class reclaimed, ListWorkloads: $(mgr ListWorkloads)"

echo "--- pressure level 2 shrinks the reclaimed VM's balloon"
marker=$(memqos-tiny-domain wait-up qosb 600) || fail "qosb did not boot"
[[ $marker == *balloon=yes* ]] || fail "qosb has no balloon driver: $marker"
a0=$(actual qosb)
[[ $a0 == $((256 * 1024)) ]] || fail "qosb actual is '$a0' KiB before pressure"
since=$(date '+%Y-%m-%d %H:%M:%S')
cp "$(dirname "$0")/level2-forced.conf" "$dropin/65-balloon.conf"
memqosd --check-config || fail "the balloon drop-in does not pass --check-config"
systemctl reload memqosd
t1=$(ms)
wait_for 120 "the guest's balloon below 256 MiB" bash -c '(( $(actual qosb) < 256 * 1024 ))'
echo "MEASURE: balloon: level-2 drop-in reload to the guest's first balloon move: $(secs "$t1") s"
# Steps of 25 % of 256 MiB, each at most half of what the guest has usable:
# the tiny guest's kernel keeps ~70 MiB, so it ends above its 64 MiB request.
wait_for 180 "the balloon below 160 MiB" bash -c '(( $(actual qosb) < 160 * 1024 ))'
echo "MEASURE: balloon: 256 MiB to below 160 MiB: $(secs "$t1") s"
target=$(wprop qosb BalloonTarget)
((target >= 64 * MiB)) || fail "BalloonTarget $target is below the request"
journalctl -u memqosd -o cat --since "$since" | grep 'Moved the balloon of vm:qosb' | tail -n 3
if journalctl -u memqosd -o cat --since "$since" | grep -E 'from ([0-9.]+ [KMG]iB) to \1:'; then
    fail "memqosd logged balloon moves that move nothing"
fi
journalctl -u memqosd -o cat --since "$since" | grep -q 'Moved the balloon of vm:qosb' ||
    fail "no 'Moved the balloon' in memqosd's journal"
ok "balloon shrunk to $((target / MiB)) MiB, journaled"
rm "$dropin/65-balloon.conf"
systemctl reload memqosd
t2=$(ms)
wait_for 240 "the balloon back at 256 MiB" bash -c '(( $(actual qosb) >= 256 * 1024 - 1024 ))'
echo "MEASURE: balloon: pressure gone to 256 MiB given back: $(secs "$t2") s"
wait_for 30 "BalloonTarget 0 again" bash -c '[[ $(wprop qosb BalloonTarget) == 0 ]]'
ok "balloon given back in steps"

echo "--- pressure level 3 destroys vm:qosb through libvirt, never vm:qosa"
since=$(date '+%Y-%m-%d %H:%M:%S')
printf '[Pressure]\nLevel1MemAvailable=99%%\nLevel2MemAvailable=99%%\nLevel3MemAvailable=99%%\nLevel3Duration=2s\nKillCooldown=10min\n' >"$dropin/65-kill.conf"
memqosd --check-config || fail "the kill drop-in does not pass --check-config"
systemctl reload memqosd
wait_for 120 "qosb shut off" bash -c '[[ $(virsh -q -c qemu:///system domstate qosb) == "shut off" ]]'
rm "$dropin/65-kill.conf"
systemctl reload memqosd
"${V[@]}" domstate --reason qosb | grep -q destroyed || fail "qosb: $("${V[@]}" domstate --reason qosb)"
[[ $("${V[@]}" domstate qosa) == paused ]] || fail "qosa (dedicated) is not there any more: $("${V[@]}" domstate qosa)"
journalctl -u memqosd -o cat --since "$since" MESSAGE_ID=4d8a0f6b9c5e4b7f8a2e1c3d5b7a9e01 |
    grep -q 'Killed vm:qosb' || fail "no kill record of vm:qosb in the journal"
memqosctl events | grep -q 'vm:qosb' || fail "memqosctl events does not list vm:qosb"
ok "vm:qosb destroyed (libvirt: $("${V[@]}" domstate --reason qosb)), recorded; qosa untouched"

echo "--- the next start of qosb lands in memqos-reclaimed.slice"
memqos-tiny-domain start qosb || fail "virsh start qosb failed"
cg=$(scope_cg qosb)
[[ $cg == memqos.slice/memqos-reclaimed.slice/machine-qemu*.scope ]] || fail "qosb's scope is '$cg'"
wait_for 60 "memory.max 384M on the new scope" grep -qx $((384 * MiB)) "/sys/fs/cgroup/$cg/memory.max"
ok "qosb now in $cg with its tiers"
if mgr ListWorkloads | grep -q '"machine-'; then
    fail "a VM's scope is managed as a unit too: $(mgr ListWorkloads)"
fi
ok "the scope in the class slice is the VM's, not a second workload"

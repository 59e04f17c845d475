#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The iallocator memqos (/usr/lib/ganeti/iallocators/memqos) on the two-node
# bed: with the cluster tagged memqos:memory-ratio:1.5, an instance bigger
# than what hail sees free on either node is refused by `-I hail` and placed
# by `-I memqos`, on node1 (the emptier node, which hail's score prefers); an
# instance over the capacity of every node is refused by `-I memqos` and not
# created; so is any instance while a memqos tag is malformed. The nodes'
# own memqosd (what their pre-hooks ask) agree with each answer: not hard for
# the placed instance on node1, hard for the refused one on both nodes.
# Then, with allocations restricted to node1: -I memqos places instance
# after instance there that -I hail refuses, up to node1's capacity under
# the ratio (the soft limit), node1's pre-hook allowing each start, and
# refuses the next one, which node1's memqosd calls hard.
#
# First passed on the bed 2026-11-28 (222 s with the cluster's set-up).
#
# Instances are added with --no-start: Ganeti 3.0.2's own free-memory check
# (cmdlib CheckNodeFreeMemory) wants the instance's maxmem free on the node
# for an add with start (instance_create.py; minmem for a later start,
# migrate or failover), whatever the iallocator said.
#
# hail's capacity check (global N+1, on by default) must hold as well: after
# the placement each node's instances must fit on the other node. So both
# nodes have mem_node 512M, node2 runs a small instance (inst6, 128M, so
# node1 is the emptier), and the big instance fits the memory left on either
# node. Numbers (MiB) from gnt-node list; hail itself sees
# min(mtotal − mnode − up instances, mfree − down instances).
set -euo pipefail
. "$(dirname "$0")/lib-ganeti.bash"

conf=/etc/memqos/memqosd.conf.d/90-iallocator-test.conf
restricted='' vcpu_ratio=''
t0=$SECONDS
ganeti_pair_up

# finish: the instances, tags and test configs go, whatever happened.
# shellcheck disable=SC2317  # the EXIT trap
finish() {
    local rc=$?
    local i
    # The instances that exist, removed side by side (a gnt-instance call
    # takes seconds under TCG).
    for i in $(gnt-instance list --no-headers -o name 2>/dev/null | grep -E '^inst[1-8]\.' || true); do
        gnt-instance remove -f "$i" >/dev/null 2>&1 &
    done
    wait
    [[ -z $restricted ]] || gnt-cluster modify --default-iallocator-params= >/dev/null 2>&1 || true
    [[ -z $vcpu_ratio ]] || gnt-cluster modify --ipolicy-vcpu-ratio=4 >/dev/null 2>&1 || true
    gnt-cluster remove-tags memqos:memory-ratio:1.5 memqos:mem-node:512M >/dev/null 2>&1 || true
    gnt-cluster remove-tags memqos:memory-ratio:lots >/dev/null 2>&1 || true
    gnt-node remove-tags "$GANETI_NODE2" memqos:mem-node:1M >/dev/null 2>&1 || true
    rm -f "$conf"
    memqosctl reload >/dev/null 2>&1 || true
    on2 "rm -f $conf; memqosctl reload >/dev/null" || true
    ((rc == 0)) || _gnt_node2_journal
}
trap finish EXIT

# The nodes' memqosd agree with the tags (their hooks check inst6's start).
ganeti_pair_policy "$conf" 1.5 512M
# node2 (2 GiB) is the smaller VM of the bed: its own tag (a node's beats the
# cluster's) leaves it room for node1's big instance, which hail's global N+1
# wants (first run: with 512M on both no size fitted node1 and node2 both).
gnt-node add-tags "$GANETI_NODE2" memqos:mem-node:1M || gnt_fail "cannot tag node2"
GANETI_ADD_NODE=$GANETI_NODE2 ganeti_add inst6 128M 128M >/dev/null ||
    gnt_fail "add inst6 on node2 failed: $GANETI_OUT"

read -r t1 n1 f1 u1 d1 hail1 <<<"$(ganeti_figures "$GANETI_NODE")"
read -r t2 n2 f2 u2 d2 hail2 <<<"$(ganeti_figures "$GANETI_NODE2")"
left1=$(((t1 - 512) * 3 / 2 - u1))
left2=$(((t2 - 1) * 3 / 2 - u2))
echo "node1: total $t1, node $n1, free $f1, up $u1, down $d1: hail sees $hail1, memqos leaves $left1"
echo "node2: total $t2, node $n2, free $f2, up $u2, down $d2: hail sees $hail2, memqos leaves $left2"
big=$(((hail1 > hail2 ? hail1 : hail2) + 64))
((big <= left1 - 128 && big <= left2)) ||
    gnt_fail "the bed's figures leave no size that only memqos places and that keeps hail's N+1 (big $big)"

add() { # add ALLOCATOR NAME MAXMEM [MINMEM]
    gnt-instance add -t diskless -o noop --no-ip-check --no-start -I "$1" \
        -B "maxmem=${3}M,minmem=${4:-$3}M" "$2" 2>&1
}
exists() { gnt-instance list --no-headers -o name "$1" >/dev/null 2>&1; }

# --- hail alone refuses it; memqos places it on node1 -------------------------
out=$(add hail inst7 "$big") && gnt_fail "-I hail placed ${big}M: $out"
exists inst7.example.test && gnt_fail "-I hail failed but inst7 exists"
ok "-I hail refuses ${big}M (it sees $hail1 and $hail2 MiB free): $(tail -n 1 <<<"$out")"

out=$(add memqos inst7 "$big") || gnt_fail "-I memqos did not place ${big}M: $out"
pnode=$(gnt-instance list --no-headers -o pnode inst7.example.test)
[[ $pnode == "$GANETI_NODE" ]] || gnt_fail "-I memqos placed inst7 on $pnode, expected $GANETI_NODE"
ok "-I memqos places ${big}M on node1 (memqos leaves $left1 there, $left2 on node2)"
v=$(ganeti_verdict "$big")
[[ $v == fits || $v == soft ]] ||
    gnt_fail "node1's memqosd answers '$v' for ${big}M, which -I memqos placed there"
ok "node1's memqosd agrees with -I memqos: '$v' for ${big}M (its pre-hooks would let it start)"

# --- over the capacity of every node: refused, nothing created -----------------
huge=$(((left1 > left2 ? left1 : left2) + 64))
out=$(add memqos inst8 "$huge") && gnt_fail "-I memqos placed ${huge}M: $out"
grep -q "Request failed" <<<"$out" || gnt_fail "-I memqos failed, but not as hail's refusal: $out"
exists inst8.example.test && gnt_fail "-I memqos refused but inst8 exists"
ok "-I memqos refuses ${huge}M on every node: $(tail -n 1 <<<"$out")"
v1=$(ganeti_verdict "$huge") v2=$(ganeti_verdict "$huge" on2)
[[ $v1 == hard && $v2 == hard ]] ||
    gnt_fail "-I memqos refused ${huge}M, but the nodes' memqosd answer '$v1' (node1), '$v2' (node2)"
ok "both nodes' memqosd agree: 'hard' for ${huge}M"

# --- a malformed tag: a clear error, nothing created ---------------------------
gnt-cluster add-tags memqos:memory-ratio:lots || gnt_fail "cannot add the malformed tag"
out=$(add memqos inst8 128) && gnt_fail "-I memqos ran with a malformed tag: $out"
gnt-cluster remove-tags memqos:memory-ratio:lots || true
grep -q "memqos: cluster: tag memqos:memory-ratio:lots" <<<"$out" ||
    gnt_fail "the error does not name the malformed tag: $out"
exists inst8.example.test && gnt_fail "inst8 exists after the malformed-tag failure"
ok "a malformed tag fails the request with: $(tail -n 1 <<<"$out")"

# --- up to the soft limit: several instances hail refuses, one node ----------
# Allocations are restricted to node1 (hail's --restrict-allocation-to, as a
# cluster default iallocator parameter, which Ganeti passes to -I hail and
# -I memqos alike and memqos passes on to hail). node2 stays in hail's N+1
# check as the node node1's instances would be re-created on: its capacity
# (mem_node 1M) is above node1's. node1 first runs a big instance that leaves hail less than
# S free; then -I memqos places S-sized instances on node1 (each first
# refused by -I hail) while they fit under node1's capacity, ratio 1.5 of
# (total - 512M), and refuses the next. They are started, so that they count
# (the model, like hail, counts instances that are up): node1's pre-hook asks
# memqosd at each start. Their minmem is 0: Ganeti's own start check wants
# minmem free in the fake hypervisor's real-memory figure, which the big
# instance has used up (on KVM the balloon would run them at minmem).
for i in inst6 inst7; do
    gnt-instance remove -f "$i.example.test" >/dev/null || gnt_fail "cannot remove $i"
done
restricted=1
# Memory, not CPUs, must end the fill: the bed's node1 has one vCPU (CI
# boots every guest with one), and hail's CPU check (the instance policy's
# vcpu-ratio, 4 by default) refused the fourth instance of one vCPU with
# "FailCPU: 1" (2026-12-07). Ganeti's default (4) comes back at the end.
vcpu_ratio=1
out=$(gnt-cluster modify --ipolicy-vcpu-ratio=32 2>&1) || gnt_fail "cannot set the instance policy's vcpu-ratio: $out"
out=$(gnt-cluster modify --default-iallocator-params="restrict-allocation-to=$GANETI_NODE" 2>&1) ||
    gnt_fail "cannot restrict allocations to node1: $out"
read -r t1 n1 f1 u1 d1 hail1 <<<"$(ganeti_figures "$GANETI_NODE")"
pre=$((hail1 - 128))
ganeti_add inst1 "${pre}M" "${pre}M" >/dev/null || gnt_fail "add inst1 (${pre}M, started) on node1 failed: $GANETI_OUT"
read -r t1 n1 f1 u1 d1 hail1 <<<"$(ganeti_figures "$GANETI_NODE")"
cap1=$(((t1 - 512) * 3 / 2))
left=$((cap1 - u1))
size=$((left * 2 / 7)) # three fit, a fourth does not
echo "node1: total $t1, up $u1 (inst1), hail sees $hail1: capacity $cap1, left $left; instances of ${size}M"
((size > hail1 && size >= 128)) ||
    gnt_fail "the bed's figures leave no size that hail refuses on node1 (${size}M, hail sees $hail1)"
placed=()
for i in inst2 inst3 inst4 inst5; do
    out=$(add hail "$i" "$size") && gnt_fail "-I hail placed $i (${size}M): $out"
    exists "$i.example.test" && gnt_fail "-I hail failed but $i exists"
    out=$(add memqos "$i" "$size" 0) || break
    pnode=$(gnt-instance list --no-headers -o pnode "$i.example.test")
    [[ $pnode == "$GANETI_NODE" ]] || gnt_fail "-I memqos placed $i on $pnode, not node1 (the only allowed node)"
    out=$(gnt-instance start "$i.example.test" 2>&1) ||
        gnt_fail "start of $i (${size}M, placed by -I memqos) failed: $out"
    placed+=("$i")
done
expect=$((left / size))
((${#placed[@]} == expect)) ||
    gnt_fail "-I memqos placed ${#placed[@]} instances of ${size}M (${placed[*]}), the model fits $expect; the last answer: $out"
grep -q "Request failed" <<<"$out" || gnt_fail "-I memqos failed after ${#placed[@]}, but not as hail's refusal: $out"
exists "$i.example.test" && gnt_fail "-I memqos refused $i but it exists"
starts=$(hook_journal | grep -cE "^(Allowed|allowed with a warning) instance-start of ($(IFS='|'; echo "${placed[*]}"))\." || true)
((starts == ${#placed[@]})) ||
    gnt_fail "node1's hook allowed $starts of the ${#placed[@]} starts: $(hook_journal | tail -n 5)"
read -r _ _ _ up _ _ <<<"$(ganeti_figures "$GANETI_NODE")"
ok "-I memqos placed ${#placed[@]} instances of ${size}M that -I hail refused (${placed[*]}), node1's hook allowed each start: $up MiB up of capacity $cap1"
v=$(ganeti_verdict "$size")
[[ $v == hard ]] || gnt_fail "-I memqos refused $i (${size}M), but node1's memqosd answers '$v'"
ok "-I memqos refuses $i, which would pass the soft limit: $(tail -n 1 <<<"$out"); node1's memqosd: $v"
out=$(gnt-cluster modify --default-iallocator-params= 2>&1) || gnt_fail "cannot clear the iallocator parameters: $out"
gnt-cluster info | grep -A1 -i 'default iallocator parameters' | grep -q restrict &&
    gnt_fail "the iallocator parameters still restrict: $(gnt-cluster info | grep -A1 -i 'default iallocator parameters')"
restricted=''
out=$(gnt-cluster modify --ipolicy-vcpu-ratio=4 2>&1) || gnt_fail "cannot set the instance policy's vcpu-ratio back to 4: $out"
vcpu_ratio=''

echo "ok: iallocator case passed in $((SECONDS - t0)) s"

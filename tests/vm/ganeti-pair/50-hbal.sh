#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# hbal under the memory-ratio model on the two-node bed (issue 27 item 3):
# with the cluster tagged memqos:memory-ratio:1.5, an instance on node1 that
# is bigger than the memory htools see free on node2 is moved to node2 in the
# plan of `memqos-cluster hbal`, and plain `hbal -L` plans no move at all
# (the control: without the ratio there is no room). node2's memqosd (what
# its pre-hook asks) does not call the move a hard violation.
#
# hbal moves no diskless instance (htools' movable disk templates are drbd,
# blockdev, sharedfile, gluster, rbd and ext): the case enables sharedfile
# (a directory on both nodes, in Ganeti's file-storage-paths) for the big
# instance, and gives the cluster its disk templates back at the end. The
# small instance beside it on node1 is diskless, so it stays where it is and
# the balanced plan has one move, which the case then runs as an operator
# would (the gnt-instance command hbal -C printed): inst7 ends up running on
# node2, Ganeti's migrate ballooning it down to what node2 has free (its
# minmem is 128M), and node2's memqos pre-hook allowed the move. The bed has
# no shared storage: before the move node2 gets a copy of inst7's disk file
# at the same path (sparse, by tar), what a shared filesystem would show it.
set -euo pipefail
. "$(dirname "$0")/lib-ganeti.bash"

conf=/etc/memqos/memqosd.conf.d/90-hbal-test.conf
dir=/srv/ganeti/shared-file-storage
paths=/etc/ganeti/file-storage-paths
t0=$SECONDS
ganeti_pair_up

# finish: the instances, tags, disk templates and test configs go, whatever
# happened.
# shellcheck disable=SC2317  # the EXIT trap
finish() {
    local rc=$?
    local i
    for i in inst6 inst7; do gnt-instance remove -f "$i.example.test" >/dev/null 2>&1 || true; done
    gnt-cluster modify --enabled-disk-templates=diskless --ipolicy-disk-templates=diskless \
        >/dev/null 2>&1 || true
    gnt-cluster remove-tags memqos:memory-ratio:1.5 memqos:mem-node:512M >/dev/null 2>&1 || true
    rm -rf "${dir:?}"/* 2>/dev/null || true
    on2 "rm -rf ${dir:?}/*" >/dev/null 2>&1 || true
    sed -i "\\|^$dir\$|d" "$paths" 2>/dev/null || true
    rm -f "$conf"
    memqosctl reload >/dev/null 2>&1 || true
    on2 "sed -i '\\|^$dir\$|d' $paths; rm -f $conf; memqosctl reload >/dev/null" || true
    ((rc == 0)) || _gnt_node2_journal
}
trap finish EXIT

ganeti_pair_policy "$conf" 1.5 512M
mkdir -p "$dir"
grep -qx "$dir" "$paths" 2>/dev/null || echo "$dir" >>"$paths"
on2 "mkdir -p $dir && { grep -qx $dir $paths 2>/dev/null || echo $dir >>$paths; }" ||
    gnt_fail "cannot allow $dir on node2"
gnt-cluster modify --enabled-disk-templates=diskless,sharedfile \
    --ipolicy-disk-templates=diskless,sharedfile --shared-file-storage-dir="$dir" ||
    gnt_fail "cannot enable the sharedfile disk template"
ganeti_add inst6 128M 128M >/dev/null || gnt_fail "add inst6 (diskless) on node1 failed: $GANETI_OUT"

read -r t1 n1 f1 u1 d1 htools1 <<<"$(ganeti_figures "$GANETI_NODE")"
read -r t2 n2 f2 u2 d2 htools2 <<<"$(ganeti_figures "$GANETI_NODE2")"
left2=$(((t2 - 512) * 3 / 2 - u2))
echo "node1: total $t1, node $n1, free $f1, up $u1, down $d1: htools see $htools1"
echo "node2: total $t2, node $n2, free $f2, up $u2, down $d2: htools see $htools2, memqos leaves $left2"
big=$((htools2 + 64))
# Started on node1, where Ganeti's own check wants it free (real memory).
((big <= f1 - 128 && big <= left2)) ||
    gnt_fail "the bed's figures leave no size bigger than node2's $htools2 MiB that node1 can start and memqos leaves room for on node2 (big $big)"
out=$(gnt-instance add -t sharedfile --disk 0:size=64M --ignore-ipolicy -o noop --no-ip-check \
    -B "maxmem=${big}M,minmem=128M" -n "$GANETI_NODE" inst7 2>&1) ||
    gnt_fail "add inst7 (sharedfile, ${big}M) on node1 failed: $out"
ok "node1 runs inst7 (sharedfile, ${big}M) and inst6 (diskless, 128M); node2 none; htools see $htools2 MiB free on node2"

# --- plain hbal: no room on node2, no move -----------------------------------
plain=$(hbal -L -C 2>&1) || gnt_fail "hbal -L -C failed: $plain"
echo "$plain" | sed 's/^/  hbal: /'
grep -q 'gnt-instance' <<<"$plain" && gnt_fail "plain hbal planned a move: $plain"
ok "plain hbal -L plans no move (inst7's ${big}M do not fit the $htools2 MiB it sees on node2)"

# --- memqos-cluster hbal: the ratio makes room --------------------------------
plan=$(memqos-cluster hbal -- -C 2>&1) || gnt_fail "memqos-cluster hbal -- -C failed: $plan"
echo "$plan" | sed 's/^/  memqos-cluster: /'
moves=$(grep -E '^ *gnt-instance (migrate|failover|move)' <<<"$plan" || true)
# (hbal shortens the names by the domain they share.)
grep -qE -- "-n ${GANETI_NODE2%%.*}(\\.example\\.test)? inst7(\\.example\\.test)?\$" <<<"$moves" ||
    gnt_fail "memqos-cluster hbal planned no move of inst7 to node2: $plan"
grep -q 'inst6' <<<"$moves" && gnt_fail "hbal planned a move of diskless inst6: $moves"
verdict=$(ganeti_verdict "$big" on2)
[[ $verdict == fits || $verdict == soft ]] ||
    gnt_fail "node2's memqosd calls ${big}M '$verdict' (its pre-hook would refuse the move)"
ok "memqos-cluster hbal plans: $(tr -s ' ' <<<"$moves" | sed 's/^ //'); node2's memqosd: $verdict"

# --- the plan, run ------------------------------------------------------------
# node2 sees inst7's disk as shared storage would show it: a copy at the same
# path (tar keeps it sparse). Then hbal's command, as printed (short names,
# which Ganeti expands).
files=$(find "$dir" -type f)
[[ -n $files ]] || gnt_fail "inst7's disk file is not under $dir: $(ls -lR "$dir" 2>&1)"
# shellcheck disable=SC2086  # one path a word (Ganeti's names have no spaces)
tar -C / -cSf - ${files//$'\n'/ } | on2 "tar -C / -xSf -" ||
    gnt_fail "cannot copy inst7's disk file(s) to node2: $files"
read -ra run <<<"$(grep -m1 'inst7' <<<"$moves")"
t=$SECONDS
out=$("${run[@]}" 2>&1) || gnt_fail "'${run[*]}' (hbal's plan) failed: $out"
read -r pnode state ram < <(gnt-instance list --no-headers --units=m -o pnode,status,oper_ram inst7.example.test)
[[ $pnode == "$GANETI_NODE2" && $state == running ]] ||
    gnt_fail "after '${run[*]}' inst7 is on $pnode (running: $state), not running on node2"
journal=$(on2 journalctl -b --no-pager -o cat -t memqos-ganeti-hook)
hook=$(grep -E "^(Allowed|allowed with a warning) instance-migrate of inst7\.[^ ]* on $GANETI_NODE2" <<<"$journal" | tail -n 1)
[[ -n $hook ]] || gnt_fail "node2's memqos hook did not allow the migrate of inst7: $(tail -n 5 <<<"$journal")"
ok "'${run[*]}' moved inst7 to node2 in $((SECONDS - t)) s (it runs with $ram MiB there); node2's hook: $hook"
ok "hbal case passed in $((SECONDS - t0)) s"

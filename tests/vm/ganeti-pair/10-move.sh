#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# gnt-instance migrate and failover on the two-node bed, with memqos's hooks
# on both nodes: the pre-hook decides on the target node only (the source
# lets it pass), a hard violation on the target refuses the move, and after a
# move the instance record leaves the source's memqosd for the target's.
#
# Numbers: inst1 has maxmem 256M, minmem 128M. For the refusals node2's
# NodeReserved is set so that its available memory is 64 MiB.
#
# It also records the real hook environments of these moves on both nodes
# (an env-dumping hook beside ours, as tests/vm/ganeti-record/record.sh does
# on one node): artifacts env-node1/ and env-node2/, <path>-<phase>-<n>.env,
# the source of tests/fixtures/ganeti/env/instance-{migrate,failover}-*.
set -euo pipefail
. "$(dirname "$0")/lib-ganeti.bash"
envdir=/var/tmp/memqos-hook-env
# shellcheck disable=SC2317  # the EXIT trap
finish() {
    local rc=$?
    if [[ -n ${MEMQOS_VM_ARTIFACTS:-} ]]; then
        mkdir -p "$MEMQOS_VM_ARTIFACTS/env-node1" "$MEMQOS_VM_ARTIFACTS/env-node2"
        cp -a "$envdir/." "$MEMQOS_VM_ARTIFACTS/env-node1/" 2>/dev/null || true
        on2 "tar -C $envdir -c ." 2>/dev/null | tar -C "$MEMQOS_VM_ARTIFACTS/env-node2" -x 2>/dev/null || true
    fi
    ((rc == 0)) || _gnt_node2_journal
}
trap finish EXIT

MiB=$((1024 * 1024))
conf=/etc/memqos/memqosd.conf.d/90-pair-test.conf
INST=inst1.example.test
REC="$INST:134217728:268435456:true"

# on NODE CMD: the shell command CMD on node1 (here) or node2.
on() {
    local node=$1
    shift
    if [[ $node == 1 ]]; then bash -c "$*"; else on2 "$*"; fi
}
# record NODE, number NODE KEY: ganeti_records and ganeti_placement on NODE.
record() { if [[ $1 == 2 ]]; then ganeti_records on2; else ganeti_records; fi; }
number() { if [[ $1 == 2 ]]; then ganeti_placement "$2" on2; else ganeti_placement "$2"; fi; }
expect_records() {
    local r1 r2
    r1=$(record 1) r2=$(record 2)
    [[ $r1 == "$1" && $r2 == "$2" ]] ||
        gnt_fail "records: node1 '$r1', node2 '$r2'; expected node1 '$1', node2 '$2'"
    ok "records: node1 '${r1:-none}', node2 '${r2:-none}'"
}
journal() { on "$1" journalctl -b --no-pager -o cat -t memqos-ganeti-hook; }
# logged NODE TEXT: NODE's hook journal has a line with TEXT (fixed string).
logged() {
    journal "$1" | grep -qF "$2" || gnt_fail "node$1's hook journal lacks '$2': $(journal "$1" | tail -n 5)"
}
not_logged() {
    if journal "$1" | grep -qF "$2"; then
        gnt_fail "node$1's hook journal has '$2': $(journal "$1" | grep -F "$2")"
    fi
}
pnode() { gnt-instance list --no-headers -o pnode,status "$INST" | tr -s ' '; }
expect_on() {
    [[ $(pnode) == "$1 running" ]] || gnt_fail "$INST is '$(pnode)', expected '$1 running'"
}
t0=$SECONDS

ganeti_pair_up
on 2 "rm -f $conf; memqosctl reload"

# The env-dumping hook, on both nodes.
dumper=$(ganeti_envdump_hook "$envdir")
for node in 1 2; do
    on "$node" "mkdir -p $envdir && cat >/usr/local/sbin/memqos-test-envdump &&
        for p in instance-migrate instance-failover; do for ph in pre post; do
            install -D -m 0755 /usr/local/sbin/memqos-test-envdump /etc/ganeti/hooks/\$p-\$ph.d/10-memqos-test-envdump
        done; done" <<<"$dumper" || gnt_fail "cannot install the env-dumping hook on node$node"
done

ganeti_add inst1 256M 128M || gnt_fail "add inst1 on node1 failed: $GANETI_OUT"
expect_on "$GANETI_NODE"
expect_records "$REC" ""

# move OP TO FROM: gnt-instance OP to node TO (1 or 2) from FROM succeeds;
# TO's hook allowed it, FROM's did not check it; the record moved to TO.
move() {
    local op=$1 to=$2 from=$3 t=$SECONDS nodes=("" "$GANETI_NODE" "$GANETI_NODE2")
    local to_name=${nodes[$to]} from_name=${nodes[$from]}
    gnt-instance "$op" -f -n "$to_name" "$INST" || gnt_fail "$op of $INST to node$to failed"
    expect_on "$to_name"
    if [[ $to == 2 ]]; then expect_records "" "$REC"; else expect_records "$REC" ""; fi
    logged "$to" "Allowed instance-$op of $INST on $to_name"
    not_logged "$from" "instance-$op of $INST on $from_name"
    logged "$to" "record $INST after instance-$op"
    logged "$from" "forget $INST after instance-$op"
    ok "$op to node$to in $((SECONDS - t)) s: node$to's hook checked it, the record moved"
}
move migrate 2 1
move failover 1 2

# --- a hard violation on the target refuses the move --------------------------
total=$(number 2 memory_total) services=$(number 2 services)
reserve=$((total - services - 64 * MiB))
on 2 "mkdir -p ${conf%/*} && printf '[Overcommit]\nNodeReserved=%s\n' $reserve >$conf && memqosctl reload" ||
    gnt_fail "node2 refused the test config"
[[ $(number 2 available) == $((64 * MiB)) ]] || gnt_fail "node2's available is $(number 2 available), expected $((64 * MiB))"
for op in migrate failover; do
    refused gnt-instance "$op" -f -n "$GANETI_NODE2" "$INST"
    for want in "instance-$op of $INST on $GANETI_NODE2" '256.0 MiB asked'; do
        grep -qF "$want" <<<"$REFUSAL" || gnt_fail "refusal '$REFUSAL' lacks '$want'"
    done
    expect_on "$GANETI_NODE"
    expect_records "$REC" ""
    logged 2 "refused instance-$op of $INST on $GANETI_NODE2"
    ok "$op to node2 refused by node2's hook: $REFUSAL"
done

# --- room on node2 again: the same migrate goes through ------------------------
on 2 "rm -f $conf; memqosctl reload"
gnt-instance migrate -f -n "$GANETI_NODE2" "$INST" || gnt_fail "migrate after the refusal failed"
expect_on "$GANETI_NODE2"
expect_records "" "$REC"
gnt-instance remove -f "$INST" || gnt_fail "remove $INST failed"
expect_records "" ""
ok "with room again the migrate passes; remove forgets it on node2"
echo "ok: migrate/failover case passed in $((SECONDS - t0)) s"

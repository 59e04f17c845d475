#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# record.sh — one-off tool (not a test case): record the hook environments
# that real Ganeti 3.0.2 gives hooks, as fixtures for memqos' Ganeti hook.
# Re-record with (from the top of the tree; no .deb needed):
#
#   tests/vm/run --flavour ganeti --no-deb --mem 3072 --timeout 1800 \
#       --log-dir /tmp/gnt-rec tests/vm/ganeti-record/record.sh \
#       tests/vm/ganeti-cases/lib-ganeti.bash
#   rm -f tests/fixtures/ganeti/env/instance-{add,start,stop,reboot,modify,rename,remove}-*.env
#   cp /tmp/gnt-rec/artifacts/env/instance-{add,start,stop,reboot,modify,rename,remove}-*.env \
#       tests/fixtures/ganeti/env/
#   cp /tmp/gnt-rec/artifacts/refused-add.txt /tmp/gnt-rec/artifacts/too-big-add.txt \
#       tests/fixtures/ganeti/
#   chmod 0644 tests/fixtures/ganeti/env/* tests/fixtures/ganeti/*.txt
#
# then check tests/fixtures/ganeti/NOTES.md (which file is which operation).
# The migrate and failover files come from the two-node bed instead (its
# artifacts env-node1/, see tests/vm/ganeti-pair/10-move.sh and NOTES.md).
#
# In the guest it: brings the one-node cluster up (lib-ganeti.bash), installs
# an env-dumping hook in /etc/ganeti/hooks/<path>-{pre,post}.d/ for the
# instance operations, then runs add (started; maxmem 512M, minmem 256M),
# stop, start, reboot, modify -B maxmem=768M,minmem=384M (running), rename,
# failover and migrate (expected to fail on one node), remove; then an add
# refused by a pre hook and adds too big for the policy (64G) and for the
# node (16G).
#
# Artifacts ($MEMQOS_VM_ARTIFACTS, i.e. LOG_DIR/artifacts on the host):
#   env/<GANETI_HOOKS_PATH>-<phase>-<n>.env   `env | sort` of each hook run
#                                             (n counts runs of that path+phase)
#   ops.txt            every command, its exit status, time and output
#   times.txt          op seconds
#   refused-add.txt    client output + `gnt-job info` of the refused add
#   too-big-add.txt    client output + `gnt-job info` of the 64G and 16G adds
#   ganeti-logs/       /var/log/ganeti at the end
set -uo pipefail

. "$MEMQOS_VM_FILES/lib-ganeti.bash"

art=$MEMQOS_VM_ARTIFACTS
envdir=/var/tmp/memqos-hook-env
mkdir -p "$art/env" "$envdir"
ops=$art/ops.txt times=$art/times.txt
: >"$ops"
: >"$times"

save() {
    cp -a "$envdir/." "$art/env/" 2>/dev/null
    mkdir -p "$art/ganeti-logs"
    cp -a /var/log/ganeti/. "$art/ganeti-logs/" 2>/dev/null
    return 0
}
trap save EXIT

# op NAME CMD...: run CMD, log status, time and output to ops.txt and stdout.
op() {
    local name=$1 t0 t1 rc=0 out
    shift
    t0=$(date +%s.%N)
    out=$("$@" 2>&1) || rc=$?
    t1=$(date +%s.%N)
    local secs
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    {
        echo "==== $name: $* (exit $rc, ${secs} s)"
        printf '%s\n' "$out"
    } | tee -a "$ops"
    echo "$name $secs exit=$rc" >>"$times"
    LAST_OUT=$out
    return "$rc"
}

t=$SECONDS
ganeti_cluster_up 2>&1 | tee "$art/cluster-up.txt"
[[ ${PIPESTATUS[0]} == 0 ]] || { save; exit 1; }
echo "cluster_up $((SECONDS - t))" >>"$times"
op cluster-info gnt-cluster info
op node-list gnt-node list -o name,mtotal,mnode,mfree,pinst_cnt
op os-list gnt-os list

# The env-dumping hook.
ganeti_envdump_hook "$envdir" >/usr/local/sbin/memqos-envdump
chmod 0755 /usr/local/sbin/memqos-envdump
for p in instance-add instance-start instance-stop instance-modify instance-remove \
    instance-rename instance-migrate instance-failover instance-reboot; do
    for ph in pre post; do
        mkdir -p "/etc/ganeti/hooks/$p-$ph.d"
        install -m 0755 /usr/local/sbin/memqos-envdump "/etc/ganeti/hooks/$p-$ph.d/50-memqos-envdump"
    done
done

op add ganeti_add inst1 512M 256M
op list1 gnt-instance list -o name,status,be/maxmem,be/minmem,oper_ram,pnode
op stop gnt-instance stop inst1.example.test
op start gnt-instance start inst1.example.test
op reboot gnt-instance reboot inst1.example.test
if ! op modify gnt-instance modify -B maxmem=768M,minmem=384M inst1.example.test; then
    # Record what Ganeti said, then what works.
    op modify-force gnt-instance modify --force -B maxmem=768M,minmem=384M inst1.example.test ||
        { op stop-for-modify gnt-instance stop inst1.example.test
          op modify-stopped gnt-instance modify -B maxmem=768M,minmem=384M inst1.example.test
          op start-after-modify gnt-instance start inst1.example.test; }
fi
op list2 gnt-instance list -o name,status,be/maxmem,be/minmem,oper_ram,pnode
op modify-runtime gnt-instance modify -m 600M inst1.example.test
op failover gnt-instance failover -f inst1.example.test
op migrate gnt-instance migrate -f inst1.example.test
op failover-ignore gnt-instance failover -f --ignore-consistency inst1.example.test
op failover-target gnt-instance failover -f -n node1.example.test inst1.example.test
op migrate-target gnt-instance migrate -f -n node1.example.test inst1.example.test
if ! op rename-running gnt-instance rename --no-ip-check inst1.example.test inst1-renamed.example.test; then
    op stop-for-rename gnt-instance stop inst1.example.test
    op rename gnt-instance rename --no-ip-check inst1.example.test inst1-renamed.example.test
fi
op list3 gnt-instance list -o name,status,be/maxmem,be/minmem,oper_ram,pnode
op remove gnt-instance remove -f inst1-renamed.example.test

# An add refused by a pre hook.
mkdir -p /etc/ganeti/hooks/instance-add-pre.d
printf '#!/bin/sh\necho "memqos: refused test"\nexit 1\n' >/etc/ganeti/hooks/instance-add-pre.d/60-memqos-refuse
chmod 0755 /etc/ganeti/hooks/instance-add-pre.d/60-memqos-refuse
{
    echo "# gnt-instance add refused by a pre hook (Ganeti 3.0.2, recorded by tests/vm/ganeti-record/record.sh)"
    echo "# hook /etc/ganeti/hooks/instance-add-pre.d/60-memqos-refuse: echo \"memqos: refused test\"; exit 1"
    echo "\$ gnt-instance add -t diskless -o noop --no-ip-check -B maxmem=512M,minmem=256M -n node1.example.test inst2"
} >"$art/refused-add.txt"
op refused-add ganeti_add inst2 512M 256M
{
    printf '%s\n' "$LAST_OUT"
    echo "(exit status $(awk '$1 == "refused-add" { print $3 }' "$times" | tail -n1 | cut -d= -f2))"
} >>"$art/refused-add.txt"
job=$(gnt-job list --no-headers -o id | sort -n | tail -n1)
op refused-job gnt-job info "$job"
{
    echo
    echo "\$ gnt-job info $job"
    printf '%s\n' "$LAST_OUT"
} >>"$art/refused-add.txt"
rm -f /etc/ganeti/hooks/instance-add-pre.d/60-memqos-refuse

# Adds too big: 64G is refused by the default instance policy (memory-size
# at most 32768 MiB) before the node is looked at; 16G fits the policy but
# not the node (the fake hypervisor reports the guest's memory).
: >"$art/too-big-add.txt"
for size in 64G 16G; do
    {
        echo "# gnt-instance add of a ${size} instance (Ganeti 3.0.2, fake hypervisor, guest with --mem 3072; recorded by tests/vm/ganeti-record/record.sh)"
        echo "\$ gnt-instance add -t diskless -o noop --no-ip-check -B maxmem=${size},minmem=${size} -n node1.example.test inst3"
    } >>"$art/too-big-add.txt"
    op "too-big-add-$size" ganeti_add inst3 "$size" "$size"
    {
        printf '%s\n' "$LAST_OUT"
        echo "(exit status $(awk -v n="too-big-add-$size" '$1 == n { print $3 }' "$times" | tail -n1 | cut -d= -f2))"
    } >>"$art/too-big-add.txt"
    job=$(gnt-job list --no-headers -o id | sort -n | tail -n1)
    op "too-big-job-$size" gnt-job info "$job"
    {
        echo
        echo "\$ gnt-job info $job"
        printf '%s\n' "$LAST_OUT"
        echo
    } >>"$art/too-big-add.txt"
done
op list4 gnt-instance list -o name,status,be/maxmem,be/minmem,oper_ram,pnode
op jobs gnt-job list

save
ls -l "$art/env"
cat "$times"
exit 0

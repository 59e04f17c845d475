# SPDX-License-Identifier: Apache-2.0
# Helpers sourced by the Ganeti VM cases (not a case itself: cases end in .sh).
# Needs the "ganeti" image flavour:
#   tests/vm/run --flavour ganeti --mem 3072 --suite tests/vm/ganeti-cases
# A single case (not --suite) gets this file as a FILE, in its working
# directory:
#   tests/vm/run --flavour ganeti ... CASE tests/vm/ganeti-cases/lib-ganeti.bash
# and sources it with  . "$MEMQOS_VM_FILES/lib-ganeti.bash".
#
# The one-node cluster (names from the image's /etc/hosts, addresses from
# TEST-NET-1; the guest has no network):
#   node1.example.test    192.0.2.1    on bridge br0 (made per boot)
#   cluster.example.test  192.0.2.100  the master IP; Ganeti adds it to br0
#   instN.example.test    192.0.2.1N   (N = 1..9)
#   instN-renamed.example.test  192.0.2.2N
# Hypervisor "fake" (instances are only records; memory checks use the
# guest's real free memory), disk template diskless, OS "noop".

# gnt_fail MESSAGE: says why, with memqosd's last journal lines (what it did
# or refused is the first thing to read), and ends the case.
gnt_fail() {
    echo "FAIL: $*" >&2
    journalctl -u memqosd -n 25 -o cat --no-pager 2>/dev/null | sed 's/^/  memqosd: /' >&2 || true
    exit 1
}

ok() { echo "ok: $*"; }
mgr() { busctl call org.memqos1 /org/memqos1 org.memqos1.Manager "$@"; }
ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { # FROM_MS -> "S.SSS" since then
    local d=$(($(ms) - $1))
    printf '%d.%03d' $((d / 1000)) $((d % 1000))
}
# wait_for SECS WHAT CMD...: until CMD succeeds, else gnt_fail after SECS.
wait_for() {
    local secs=$1 what=$2
    shift 2
    local end=$((SECONDS + secs))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < end)) || gnt_fail "timed out after ${secs}s waiting for: $what"
        sleep 0.5
    done
}
# wait_memqosd: memqosd active and its name on the bus.
wait_memqosd() {
    wait_for 90 "memqosd active" systemctl is-active --quiet memqosd
    wait_for 30 "org.memqos1 on the bus" busctl status org.memqos1
}

GANETI_NODE=node1.example.test
GANETI_NODE2=node2.example.test # the second node of the two-node bed (tests/vm/pair)
GANETI_CLUSTER=cluster.example.test
GANETI_CLUSTER_IP=192.0.2.100
GANETI_MARKER=/run/memqos-ganeti-cluster-up

# _gnt_cluster_ip_probe: who answers for the cluster IP on br0 (ARP, then a
# TCP connect to Ganeti's port as its init check does), the neighbour entry
# and this node's addresses. Never fails (arping exits 1 when nobody answers).
_gnt_cluster_ip_probe() {
    { arping -c 2 -w 3 -I br0 "$GANETI_CLUSTER_IP" 2>&1 || true; } | sed 's/^/  arping: /'
    python3 -c '
import errno, socket, sys
s = socket.socket(); s.settimeout(5)
try:
    s.connect((sys.argv[1], 1811)); print("  tcp 1811: connected")
except socket.timeout:
    print("  tcp 1811: timeout")
except OSError as e:
    print("  tcp 1811:", errno.errorcode.get(e.errno, e.errno))
' "$GANETI_CLUSTER_IP" || true
    echo "  neighbour: $(ip neigh show "$GANETI_CLUSTER_IP")"
    { ip -br addr || true; } | sed 's/^/  addr: /'
}

# _gnt_logs_tail: the end of Ganeti's logs, to stderr (after a failure).
_gnt_logs_tail() {
    local f
    for f in /var/log/ganeti/*.log; do
        [[ -s $f ]] || continue
        echo "---- tail of $f ----" >&2
        tail -n "${1:-30}" "$f" >&2
    done
}

# _gnt_nic: the name of the private-network NIC (tests/vm/run --nic: MAC
# 52:54:00:4d:51:0X), or nothing when this VM has none (the one-node bed).
_gnt_nic() {
    local d
    for d in /sys/class/net/*; do
        [[ -e $d/device && $(cat "$d/address" 2>/dev/null) == 52:54:00:4d:51:0* ]] || continue
        echo "${d##*/}"
        return 0
    done
}

# _gnt_bridge ADDRESS: bridge br0 with ADDRESS/24 and a port: the private
# network's NIC when there is one (two-node bed), else a dummy (so that br0
# has a carrier).
_gnt_bridge() {
    local addr=${1:?_gnt_bridge ADDRESS} nic
    if ! ip link show br0 >/dev/null 2>&1; then
        ip link add br0 type bridge || gnt_fail "ip link add br0 type bridge failed"
    fi
    nic=$(_gnt_nic)
    if [[ -n $nic ]]; then
        ip link set "$nic" master br0 up || gnt_fail "cannot make $nic a port of br0"
    elif ! ip link show dummy0 >/dev/null 2>&1; then
        ip link add dummy0 type dummy 2>/dev/null && ip link set dummy0 master br0 up ||
            echo "ganeti: note: no dummy port on br0 (bridge without carrier)"
    fi
    ip -4 addr show dev br0 | grep -q " ${addr//./\\.}/24 " ||
        ip addr add "$addr/24" dev br0 || gnt_fail "ip addr add $addr/24 dev br0 failed"
    ip link set br0 up || gnt_fail "ip link set br0 up failed"
}

# ganeti_node_prepare NAME ADDRESS: what a node needs before it joins a
# cluster: its name (hostname, /etc/hosts with every name of the bed), bridge
# br0 with ADDRESS, sshd. node1 is 192.0.2.1, node2 192.0.2.2.
ganeti_node_prepare() {
    local name=${1:?ganeti_node_prepare NAME ADDRESS} addr=${2:?}
    # Name: the image sets node1's (/etc/hostname, /etc/hosts); node2's is
    # set here, as is node1's if it is not.
    if [[ $(hostname) != "$name" ]]; then
        { hostname "$name" && echo "$name" >/etc/hostname; } ||
            gnt_fail "cannot set the hostname to $name"
    fi
    local ip host short i
    while read -r ip host short; do
        getent hosts "$host" >/dev/null || printf '%s\t%s %s\n' "$ip" "$host" "$short" >>/etc/hosts
    done < <(
        echo "192.0.2.1 $GANETI_NODE node1"
        echo "192.0.2.2 $GANETI_NODE2 node2"
        echo "$GANETI_CLUSTER_IP $GANETI_CLUSTER cluster"
        for i in 1 2 3 4 5 6 7 8 9; do
            echo "192.0.2.1$i inst$i.example.test inst$i"
            echo "192.0.2.2$i inst$i-renamed.example.test inst$i-renamed"
        done
    )
    getent hosts "$name" | grep -q "^${addr//./\\.} " ||
        gnt_fail "$name does not resolve to $addr: '$(getent hosts "$name")'"

    _gnt_bridge "$addr"

    # sshd (enabled in the image, usually up already).
    systemctl start ssh.service ||
        gnt_fail "sshd does not start: $(systemctl status --no-pager ssh.service 2>&1 | tail -n 15)"
}

# ganeti_cluster_up: make this guest a one-node Ganeti cluster. Idempotent
# within one boot (marker $GANETI_MARKER). Exits the case with the reason
# (and Ganeti's log tails) when it cannot.
ganeti_cluster_up() {
    if [[ -f $GANETI_MARKER ]]; then
        echo "ganeti: cluster already up (since $(cat "$GANETI_MARKER"))"
        return 0
    fi
    local t0=$SECONDS t_init out

    ganeti_node_prepare "$GANETI_NODE" 192.0.2.1

    echo "ganeti: node prepared in $((SECONDS - t0)) s; gnt-cluster init ..."
    t_init=$SECONDS
    # Ganeti refuses init when the cluster IP answers its TCP probe (a
    # connection or a refusal on port 1811). Nothing on the bed has that IP
    # before init, yet once in CI (two-node bed, node2 still booting) init was
    # refused and a later init in the same boot passed; the cause is not
    # known. That refusal alone is retried, twice, each time with what the
    # network said about the cluster IP (for the next look at the cause).
    local attempt
    for attempt in 1 2 3; do
        out=$(gnt-cluster init --enabled-hypervisors=fake --enabled-disk-templates=diskless \
            --master-netdev=br0 --nic-parameters=link=br0 --no-etc-hosts "$GANETI_CLUSTER" 2>&1) && break
        if [[ $out == *"Cluster IP already active"* ]] && ((attempt < 3)); then
            echo "ganeti: init attempt $attempt refused: 'Cluster IP already active'; what answers for $GANETI_CLUSTER_IP:"
            _gnt_cluster_ip_probe
            sleep 5
            continue
        fi
        echo "$out" >&2
        [[ $out == *"Cluster IP already active"* ]] && _gnt_cluster_ip_probe >&2
        _gnt_logs_tail 40
        gnt_fail "gnt-cluster init failed after $((SECONDS - t_init)) s, attempt $attempt (output and log tails above)"
    done
    [[ -n $out ]] && echo "$out"
    # The master daemon answers once the job queue is up.
    local end=$((SECONDS + 120))
    until gnt-cluster getmaster >/dev/null 2>&1; do
        if ((SECONDS >= end)); then
            _gnt_logs_tail 40
            gnt_fail "gnt-cluster init succeeded but 'gnt-cluster getmaster' does not answer after 120 s"
        fi
        sleep 1
    done
    echo "ganeti: cluster $GANETI_CLUSTER up: init $((SECONDS - t_init)) s, total $((SECONDS - t0)) s"
    date -u +%FT%TZ >"$GANETI_MARKER"
}

# ganeti_add NAME MAXMEM MINMEM [EXTRA-ARGS...]: gnt-instance add a diskless
# "noop" instance on node1, or on $GANETI_ADD_NODE when set (started, unless
# EXTRA-ARGS has --no-start).
# NAME must be in /etc/hosts (Ganeti's name check resolves it, and expands
# e.g. inst1 to inst1.example.test); the IP check (is the address already in
# use?) is off: it would wait for ARP on br0. Output in $GANETI_OUT (also
# printed); returns gnt-instance's exit status.
GANETI_OUT=''
ganeti_add() {
    local name=${1:?ganeti_add NAME MAXMEM MINMEM [ARGS...]} maxmem=${2:?} minmem=${3:?}
    shift 3
    local rc=0
    GANETI_OUT=$(gnt-instance add -t diskless -o noop --no-ip-check \
        -B "maxmem=$maxmem,minmem=$minmem" -n "${GANETI_ADD_NODE:-$GANETI_NODE}" "$@" "$name" 2>&1) || rc=$?
    [[ -n $GANETI_OUT ]] && printf '%s\n' "$GANETI_OUT"
    return "$rc"
}

# hook_journal: what memqos's Ganeti hook logged on this node in this boot.
hook_journal() { journalctl -b --no-pager -o cat -t memqos-ganeti-hook; }

# refused CMD...: CMD fails, and its output carries memqos's refusal (the
# refusal line in $REFUSAL, which the cases read).
# shellcheck disable=SC2034
REFUSAL=''
refused() {
    local out rc=0
    out=$("$@" 2>&1) || rc=$?
    printf '%s\n' "$out"
    ((rc != 0)) || gnt_fail "'$*' succeeded; expected memqos to refuse it"
    grep -q 'hooks execution failed' <<<"$out" ||
        gnt_fail "'$*' failed, but not in a hook: $out"
    grep -q 'memqos: refused' <<<"$out" || gnt_fail "'$*' output lacks memqos's refusal: $out"
    # shellcheck disable=SC2034
    REFUSAL=$(grep -o 'memqos: refused.*' <<<"$out" | head -n1)
}

# ganeti_envdump_hook DIR: prints a hook script (sh) that writes its whole
# environment, sorted, to DIR/<GANETI_HOOKS_PATH>-<GANETI_HOOKS_PHASE>-<n>.env
# (n counts runs of that path and phase). Hooks get a clean environment:
# GANETI_* and PATH. Used to record fixtures (ganeti-record/record.sh,
# ganeti-pair/10-move.sh).
ganeti_envdump_hook() {
    cat <<EOS
#!/bin/sh
d=${1:?ganeti_envdump_hook DIR}
n=1
while [ -e "\$d/\${GANETI_HOOKS_PATH}-\${GANETI_HOOKS_PHASE}-\$n.env" ]; do n=\$((n + 1)); done
env | sort >"\$d/\${GANETI_HOOKS_PATH}-\${GANETI_HOOKS_PHASE}-\$n.env"
exit 0
EOS
}

# --- the two-node bed (tests/vm/pair, cases in tests/vm/ganeti-pair) ----------
# node1 (this VM, the master) and node2 (tests/vm/ganeti-pair/peer) share a
# private Ethernet (tests/vm/run --nic); both are bridged on br0. The bed's
# root key pair (made by tests/vm/pair on the host, FILEs pair-key and
# pair-key.pub) lets node1 log in to node2 before Ganeti has keys of its own.
GANETI_PAIR_KEY=/root/.ssh/memqos-pair
GANETI_PAIR_MARKER=/run/memqos-ganeti-pair-up
GANETI_PEER_READY=/run/memqos-pair-ready # written by the peer when prepared

# on2 CMD...: run the shell command CMD on node2, as root, over ssh.
on2() {
    ssh -i "$GANETI_PAIR_KEY" -o BatchMode=yes -o StrictHostKeyChecking=no \
        -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ConnectTimeout=10 \
        root@192.0.2.2 "$@"
}

min() { echo $(($1 < $2 ? $1 : $2)); }

# ganeti_figures NODE: "mtotal mnode mfree up down htools" in MiB, from
# gnt-node list and gnt-instance list: up/down the maxmem of the node's
# primary instances by admin state; htools the free memory hail and hbal see
# on the node, min(mtotal - mnode - up, mfree - down).
ganeti_figures() {
    local t n f u d
    read -r t n f < <(gnt-node list --no-headers --units=m -o mtotal,mnode,mfree "$1")
    read -r u d < <(gnt-instance list --no-headers --units=m -o pnode,be/maxmem,admin_state |
        awk -v n="$1" '$1 == n { if ($3 == "up") u += $2; else d += $2 } END { print u + 0, d + 0 }')
    echo "$t $n $f $u $d $(min $((t - n - u)) $((f - d)))"
}

# ganeti_records [RUNNER]: memqosd's instance records as "name:min:max:up"
# words, sorted; with RUNNER (on2), node2's memqosd is asked.
ganeti_records() {
    "$@" busctl --json=short call org.memqos1 /org/memqos1 org.memqos1.Manager ListInstances |
        python3 -c 'import json,sys; print(" ".join(sorted("%s:%d:%d:%s" % (n, a, b, str(u).lower()) for n, a, b, u in json.load(sys.stdin)["data"][0])))'
}

# _gnt_verify_placement MAX MIN [RUNNER]: memqosd's VerifyPlacement answer
# (busctl's line) for an instance of MAX bytes of memory, MIN its minimum;
# with RUNNER (on2), node2's memqosd.
_gnt_verify_placement() {
    local max=$1 min=$2
    shift 2
    "$@" busctl call org.memqos1 /org/memqos1 org.memqos1.Manager VerifyPlacement \
        'tta{sv}' "$max" "$min" 0
}

# ganeti_placement KEY [RUNNER]: one number of memqosd's VerifyPlacement
# answer for 1 MiB; with RUNNER (on2), node2's.
ganeti_placement() {
    local key=$1
    shift
    _gnt_verify_placement 1048576 0 "$@" | tr ' ' '\n' | grep -A1 -x "\"$key\"" | tail -n1
}

# ganeti_verdict MIB [RUNNER]: memqosd's verdict (fits, soft or hard) for an
# instance of MIB MiB (its minimum too): the question a node's
# instance-start, -migrate and -failover pre-hooks ask before they let the
# instance run there. With RUNNER (on2), node2's.
ganeti_verdict() {
    local mib=$1
    shift
    _gnt_verify_placement $((mib * 1048576)) $((mib * 1048576)) "$@" |
        awk '{ gsub(/"/, "", $2); print $2 }'
}

# _gnt_node2_journal: node2's journal into the artifacts (after a failure).
_gnt_node2_journal() {
    [[ -n ${MEMQOS_VM_ARTIFACTS:-} ]] || return 0
    on2 journalctl -b --no-pager >"$MEMQOS_VM_ARTIFACTS/node2-journal.txt" 2>&1 || true
    on2 'tail -n 200 /var/log/ganeti/*.log' >"$MEMQOS_VM_ARTIFACTS/node2-ganeti-logs.txt" 2>&1 || true
}

# ganeti_pair_up: the two-node cluster: node1 master (ganeti_cluster_up),
# node2 added with gnt-node add. Idempotent within one boot. Exits the case
# with the reason when it cannot.
ganeti_pair_up() {
    if [[ -f $GANETI_PAIR_MARKER ]]; then
        echo "ganeti: two-node cluster already up (since $(cat "$GANETI_PAIR_MARKER"))"
        return 0
    fi
    local t0=$SECONDS end out
    [[ -n $(_gnt_nic) ]] ||
        gnt_fail "this VM has no private NIC: the two-node cases run with tests/vm/pair (see tests/vm/README.md)"
    [[ -r $MEMQOS_VM_FILES/pair-key ]] || gnt_fail "no FILE pair-key (tests/vm/pair passes it)"
    install -d -m 0700 /root/.ssh
    install -m 0600 "$MEMQOS_VM_FILES/pair-key" "$GANETI_PAIR_KEY"
    ganeti_cluster_up

    # node2 answers once its peer script has prepared it.
    end=$((SECONDS + 300))
    until on2 test -f "$GANETI_PEER_READY" 2>/dev/null; do
        ((SECONDS < end)) || gnt_fail "node2 (192.0.2.2) is not ready over ssh after 300 s: $(on2 true 2>&1; ip -br addr; ip -br link)"
        sleep 2
    done
    echo "ganeti: node2 answers over ssh after $((SECONDS - t0)) s"
    # gnt-node add logs in to node2 with root's key that gnt-cluster init made.
    compgen -G '/root/.ssh/id_*.pub' >/dev/null || gnt_fail "gnt-cluster init made no root key in /root/.ssh"
    cat /root/.ssh/id_*.pub | on2 'cat >>/root/.ssh/authorized_keys' ||
        gnt_fail "cannot authorize node1's root key on node2"
    local t_add=$SECONDS
    if ! out=$(gnt-node add --no-ssh-key-check "$GANETI_NODE2" </dev/null 2>&1); then
        echo "$out" >&2
        _gnt_logs_tail 40
        _gnt_node2_journal
        gnt_fail "gnt-node add $GANETI_NODE2 failed after $((SECONDS - t_add)) s (output and log tails above)"
    fi
    [[ -n $out ]] && echo "$out"
    out=$(gnt-node list --no-headers -o name)
    grep -qx "$GANETI_NODE2" <<<"$out" || gnt_fail "gnt-node list lacks $GANETI_NODE2: $out"
    echo "ganeti: node2 added in $((SECONDS - t_add)) s; two-node cluster up in $((SECONDS - t0)) s"
    date -u +%FT%TZ >"$GANETI_PAIR_MARKER"
}

# ganeti_pair_policy CONF RATIO RESERVED: both nodes' memqosd and the
# cluster's tags agree on one policy: CONF (a drop-in) gets [Overcommit]
# MemoryRatio=RATIO and NodeReserved=RESERVED on node1 and node2, both
# reload, and the cluster is tagged memqos:memory-ratio:RATIO
# memqos:mem-node:RESERVED. Checks first that the memqos iallocator (a
# symlink) and hail are installed. The case's EXIT trap removes CONF on both
# nodes and the tags.
ganeti_pair_policy() {
    local conf=$1 ratio=$2 reserved=$3
    [[ -L /usr/lib/ganeti/iallocators/memqos && -x /usr/lib/ganeti/iallocators/hail ]] ||
        gnt_fail "no /usr/lib/ganeti/iallocators/memqos (symlink) or hail: $(ls -l /usr/lib/ganeti/iallocators)"
    mkdir -p "${conf%/*}"
    printf '[Overcommit]\nMemoryRatio=%s\nNodeReserved=%s\n' "$ratio" "$reserved" >"$conf"
    memqosctl reload >/dev/null || gnt_fail "node1 refused the test config"
    on2 "mkdir -p ${conf%/*} && cat >$conf && memqosctl reload >/dev/null" <"$conf" ||
        gnt_fail "node2 refused the test config"
    gnt-cluster add-tags "memqos:memory-ratio:$ratio" "memqos:mem-node:$reserved" ||
        gnt_fail "cannot tag the cluster"
}

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

gnt_fail() { echo "FAIL: $*" >&2; exit 1; }

GANETI_NODE=node1.example.test
GANETI_CLUSTER=cluster.example.test
GANETI_MARKER=/run/memqos-ganeti-cluster-up

# _gnt_logs_tail: the end of Ganeti's logs, to stderr (after a failure).
_gnt_logs_tail() {
    local f
    for f in /var/log/ganeti/*.log; do
        [[ -s $f ]] || continue
        echo "---- tail of $f ----" >&2
        tail -n "${1:-30}" "$f" >&2
    done
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

    # Name: the image sets it (/etc/hostname, /etc/hosts); repair if not.
    if [[ $(hostname) != "$GANETI_NODE" ]]; then
        hostnamectl set-hostname "$GANETI_NODE" 2>/dev/null ||
            { hostname "$GANETI_NODE" && echo "$GANETI_NODE" >/etc/hostname; } ||
            gnt_fail "cannot set the hostname to $GANETI_NODE"
    fi
    local ip name short i
    while read -r ip name short; do
        getent hosts "$name" >/dev/null || printf '%s\t%s %s\n' "$ip" "$name" "$short" >>/etc/hosts
    done < <(
        echo "192.0.2.1 $GANETI_NODE node1"
        echo "192.0.2.100 $GANETI_CLUSTER cluster"
        for i in 1 2 3 4 5 6 7 8 9; do
            echo "192.0.2.1$i inst$i.example.test inst$i"
            echo "192.0.2.2$i inst$i-renamed.example.test inst$i-renamed"
        done
    )
    getent hosts "$GANETI_NODE" | grep -q '^192\.0\.2\.1 ' ||
        gnt_fail "$GANETI_NODE does not resolve to 192.0.2.1: '$(getent hosts "$GANETI_NODE")'"

    # The node's network: a bridge with the node's address (and a dummy port,
    # so that it has a carrier).
    if ! ip link show br0 >/dev/null 2>&1; then
        ip link add br0 type bridge || gnt_fail "ip link add br0 type bridge failed"
    fi
    if ! ip link show dummy0 >/dev/null 2>&1; then
        ip link add dummy0 type dummy 2>/dev/null && ip link set dummy0 master br0 up ||
            echo "ganeti: note: no dummy port on br0 (bridge without carrier)"
    fi
    ip -4 addr show dev br0 | grep -q ' 192\.0\.2\.1/24 ' ||
        ip addr add 192.0.2.1/24 dev br0 || gnt_fail "ip addr add 192.0.2.1/24 dev br0 failed"
    ip link set br0 up || gnt_fail "ip link set br0 up failed"

    # sshd (enabled in the image, usually up already).
    systemctl start ssh.service ||
        gnt_fail "sshd does not start: $(systemctl status --no-pager ssh.service 2>&1 | tail -n 15)"

    echo "ganeti: node prepared in $((SECONDS - t0)) s; gnt-cluster init ..."
    t_init=$SECONDS
    if ! out=$(gnt-cluster init --enabled-hypervisors=fake --enabled-disk-templates=diskless \
        --master-netdev=br0 --nic-parameters=link=br0 --no-etc-hosts "$GANETI_CLUSTER" 2>&1); then
        echo "$out" >&2
        _gnt_logs_tail 40
        gnt_fail "gnt-cluster init failed after $((SECONDS - t_init)) s (output and log tails above)"
    fi
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
# "noop" instance on node1 (started, unless EXTRA-ARGS has --no-start).
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
        -B "maxmem=$maxmem,minmem=$minmem" -n "$GANETI_NODE" "$@" "$name" 2>&1) || rc=$?
    [[ -n $GANETI_OUT ]] && printf '%s\n' "$GANETI_OUT"
    return "$rc"
}

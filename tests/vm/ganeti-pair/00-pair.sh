#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The two-node Ganeti bed itself (tests/vm/pair): node1 is the master, node2
# joins with gnt-node add over the private network, both carry memqos and its
# hooks, and an instance can be placed on either node.
set -euo pipefail
. "$(dirname "$0")/lib-ganeti.bash"
trap '[[ $? == 0 ]] || _gnt_node2_journal' EXIT

ganeti_pair_up
nodes=$(gnt-node list --no-headers -o name | sort | tr '\n' ' ')
[[ $nodes == "$GANETI_NODE $GANETI_NODE2 " ]] || gnt_fail "gnt-node list: '$nodes'"
[[ $(on2 hostname) == "$GANETI_NODE2" ]] || gnt_fail "node2's hostname is '$(on2 hostname)'"
on2 systemctl is-active --quiet memqosd || gnt_fail "memqosd is not running on node2"
on2 test -x /etc/ganeti/hooks/instance-migrate-pre.d/memqos ||
    gnt_fail "node2 lacks memqos's instance-migrate-pre hook"
echo "ok: two nodes ($nodes), memqosd and the hooks on both"

GANETI_ADD_NODE=$GANETI_NODE2 ganeti_add inst9 128M 128M || gnt_fail "add of inst9 on node2 failed: $GANETI_OUT"
[[ $(gnt-instance list --no-headers -o pnode,status inst9.example.test | tr -s ' ') == "$GANETI_NODE2 running" ]] ||
    gnt_fail "inst9: $(gnt-instance list --no-headers -o pnode,status inst9.example.test)"
gnt-instance remove -f inst9.example.test || gnt_fail "remove inst9 failed"
echo "ok: an instance added on node2 runs there and is removed"

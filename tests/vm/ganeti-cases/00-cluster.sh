#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The Ganeti test bed itself: a one-node cluster comes up (fake hypervisor,
# diskless), an instance of the "noop" OS can be added, runs, and is removed.
# Needs no .deb (other cases in this directory do):
#   tests/vm/run --flavour ganeti --deb DEB --mem 3072 --timeout 900 --suite tests/vm/ganeti-cases
set -euo pipefail
. "$(dirname "$0")/lib-ganeti.bash"

ganeti_cluster_up
ganeti_cluster_up # idempotent: the second call only reports
[[ $(gnt-cluster getmaster) == node1.example.test ]] ||
    gnt_fail "master is '$(gnt-cluster getmaster)', expected node1.example.test"
ip -4 addr show dev br0 | grep -q ' 192\.0\.2\.100/' ||
    gnt_fail "the master IP 192.0.2.100 is not on br0: $(ip -4 addr show dev br0)"
gnt-os list --no-headers | grep -qx noop || gnt_fail "OS noop not listed: $(gnt-os list 2>&1)"

ganeti_add inst1 256M 128M || gnt_fail "gnt-instance add inst1 failed"
got=$(gnt-instance list --no-headers -o name,status,be/maxmem,be/minmem inst1.example.test | tr -s ' ')
[[ $got == "inst1.example.test running 256M 128M" ]] ||
    gnt_fail "gnt-instance list: '$got', expected inst1.example.test running 256M 128M"
gnt-instance remove -f inst1.example.test || gnt_fail "gnt-instance remove failed"
echo "ok: one-node cluster, add/list/remove"

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The memqos iallocator with Ganeti's real hail 3.0.2 (htools' multi-call
# binary under the name hail) on the move requests: relocate (gnt-instance
# failover|migrate -I) and node-evacuate (gnt-node evacuate -p -I), on
# tests/fixtures/ganeti-iallocator/relocate.json: the two-node bed's figures
# as Ganeti 3.0.2 sends them (hand-written in its format, fake hypervisor),
# a diskless instance of 2359 MiB up on node1, whose free_memory is below 0
# (Ganeti: the hypervisor's free memory less maxmem minus running memory).
# hail alone refuses both moves (FailMem on node2); on the tags' ratio 2
# memqos's hail moves it to node2; with node2 at ratio 1.3 it refuses again.
# The binary: $MEMQOS_HTOOLS, else Debian's /usr/lib/ganeti/3.0/usr/bin/htools,
# else hail in PATH; exit 77 (skipped) when there is none.
#   run_iallocator_hail_test.sh MEMQOS-IALLOCATOR
# TAP output.
set -uo pipefail
prog=$1
fixture=$(cd "$(dirname "${BASH_SOURCE[0]}")/../fixtures/ganeti-iallocator" && pwd)/relocate.json
htools=${MEMQOS_HTOOLS:-}
for c in /usr/lib/ganeti/3.0/usr/bin/htools "$(command -v hail 2>/dev/null)"; do
    [[ -z $htools && -n $c && -x $c ]] && htools=$(readlink -f "$c")
done
if [[ -z $htools || ! -x $htools ]]; then
    echo "skipped: no htools binary (set MEMQOS_HTOOLS, or install ganeti-htools-3.0)" >&2
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/memqos-iallocator-hail.XXXXXX")
trap 'rm -rf "$work"' EXIT
ln -s "$htools" "$work/hail"
export MEMQOS_HAIL=$work/hail
# shellcheck source=tests/ganeti/lib-tap.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib-tap.bash"
echo "# hail: $htools"

evacuate='{"evac_mode": "primary-only", "instances": ["inst1.example.test"], "type": "node-evacuate"}'
sed "s/^ \"request\": .*/ \"request\": $evacuate/" "$fixture" >"$work/evacuate.json"
# node2 at ratio 1.3: capacity (1964 - 256) * 1.3 = 2220 < 2359.
for f in relocate evacuate; do
    src=$fixture
    [[ $f == evacuate ]] && src=$work/evacuate.json
    sed '/"node2.example.test": {/,/"tags"/ s/"tags": \[\]/"tags": ["memqos:memory-ratio:1.3"]/' \
        "$src" >"$work/$f-low.json"
done
cp "$fixture" "$work/relocate.json"

out=$("$work/hail" "$work/relocate.json" 2>&1)
check "relocate: hail alone refuses node2 (it sees 1686 MiB free there)" \
    grep -qF '"success":false,"info":"Request failed: Can'"'"'t find any good node:  Node node2.example.test failed: FailMem;"' <<<"$out"
out=$("$prog" "$work/relocate.json" 2>/dev/null)
check "relocate: memqos (ratio 2) moves it to node2" \
    test "$out" = '{"success":true,"info":"Request successful: success","result":["node2.example.test"]}'
out=$("$prog" "$work/relocate-low.json" 2>/dev/null)
check "relocate: memqos with node2 at ratio 1.3 refuses (FailMem)" \
    grep -qF '"success":false,"info":"Request failed: Can'"'"'t find any good node:  Node node2.example.test failed: FailMem;"' <<<"$out"

out=$("$work/hail" "$work/evacuate.json" 2>&1)
check "node-evacuate: hail alone fails the instance (FailMem on node2)" \
    grep -qF '"result":[[],[["inst1.example.test","Can'"'"'t find any good node:  Node node2.example.test failed: FailMem;"]],[]]' <<<"$out"
out=$("$prog" "$work/evacuate.json" 2>/dev/null)
check "node-evacuate: memqos moves it to node2 with a migrate job" \
    grep -qF '"result":[[["inst1.example.test","default",["node2.example.test"]]],[],[[{"OP_ID":"OP_INSTANCE_MIGRATE","instance_name":"inst1.example.test","target_node":"node2.example.test"' <<<"$out"
out=$("$prog" "$work/evacuate-low.json" 2>/dev/null)
check "node-evacuate: memqos with node2 at ratio 1.3 fails the instance (FailMem)" \
    grep -qF '"result":[[],[["inst1.example.test","Can'"'"'t find any good node:  Node node2.example.test failed: FailMem;"]],[]]' <<<"$out"

tap_end

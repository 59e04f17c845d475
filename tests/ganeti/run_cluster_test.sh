#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The memqos-cluster program against stand-ins for Ganeti's tools, put first
# in PATH by MEMQOS_GANETI_BINDIR: hscan (writes the fixture cluster to
# DIR/LOCAL.data), gnt-cluster (prints a fixture node-data file), hbal and
# hcheck (record what they were given). Fixtures: tests/fixtures/ganeti-cluster.
#   run_cluster_test.sh MEMQOS-CLUSTER
# TAP output.
set -uo pipefail
prog=$1
fixtures=$(cd "$(dirname "${BASH_SOURCE[0]}")/../fixtures/ganeti-cluster" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/memqos-cluster-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work/tmp
mkdir "$TMPDIR" "$work/bin"
export MEMQOS_GANETI_BINDIR=$work/bin FAKE_DIR=$work
# shellcheck source=tests/ganeti/lib-tap.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib-tap.bash"

cat >"$work/bin/hscan" <<'SH'
#!/bin/sh
# hscan --no-headers -d DIR: the cluster in DIR/LOCAL.data, a summary line on stdout.
printf '%s\n' "$*" >"$FAKE_DIR/hscan-args"
[ -n "${FAKE_HSCAN_FAIL:-}" ] && { echo "Error for LOCAL: failed to load data. Details: luxi"; exit 2; }
cp "$FAKE_CLUSTER" "$3/LOCAL.data"
echo "LOCAL     2     4     0     0   8192   2000    200    100 0.00000000"
SH
cat >"$work/bin/gnt-cluster" <<'SH'
#!/bin/sh
printf '%s\n' "$@" >"$FAKE_DIR/gnt-args"
[ -n "${FAKE_GNT_FAIL:-}" ] && { echo "Cannot communicate with the master daemon" >&2; exit 1; }
cat "$FAKE_NODES"
SH
for tool in hbal hcheck; do
    cat >"$work/bin/$tool" <<SH
#!/bin/sh
printf '%s\n' "\$*" >"\$FAKE_DIR/$tool-args"
cp "\$2" "\$FAKE_DIR/$tool-seen.data"
echo "$tool plan"
exit \${FAKE_EXIT:-0}
SH
done
chmod +x "$work/bin/"*
export FAKE_CLUSTER=$fixtures/pair.data FAKE_NODES=$fixtures/nodes-good.txt

# verify through the stand-ins: node2 is not N+1 redundant (exit 1).
out=$("$prog" verify 2>"$work/err")
rc=$?
check "verify: a finding is exit 1" test "$rc" = 1
check "verify: hscan is run with -d on a private directory" \
    grep -qx -- "--no-headers -d $TMPDIR/memqos-cluster\.[A-Za-z0-9]*" "$work/hscan-args"
check "verify: gnt-cluster command runs memqosctl show on the nodes" \
    grep -qx 'memqosctl --no-pager show -p MemoryRatio,NodeReserved,SwapTotal,MemoryTotal' "$work/gnt-args"
check "verify: names the node that is not N+1 redundant" grep -qF \
    'error: not-n-plus-1: node node2: not N+1 redundant: if node2 fails, node1 gets 3000 MiB (inst3) on top of 2048 MiB: 5048 MiB > capacity 4608 MiB' <<<"$out"
check "verify: the plain instance cannot fail over (info)" grep -qF 'info: no-failover: node node1: instance inst2 (plain)' <<<"$out"
check "verify: the group line" grep -qF 'group default: 2 node(s), capacity 9216 MiB, up instances 5048 MiB, not N+1 redundant (node2)' <<<"$out"
check "verify: the temporary directory is removed" test -z "$(ls -A "$TMPDIR")"

# --json: one document, the same findings.
out=$("$prog" verify --json)
rc=$?
check "verify --json: exit 1" test "$rc" = 1
check "verify --json: one JSON document with status and findings" \
    python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); assert d["status"]=="findings"; assert [f["node"] for f in d["findings"] if f["kind"]=="not-n-plus-1"]==["node2"]' <<<"$out"

# Files instead of the tools; swap short on node1, drift on node2.
out=$(FAKE_CLUSTER=/nonexistent "$prog" verify --cluster-data "$fixtures/pair.data" --node-data "$fixtures/nodes-findings.txt")
rc=$?
check "verify --cluster-data --node-data: exit 1" test "$rc" = 1
check "verify: swap short on node1" grep -qF 'error: swap-insufficient: node node1: swap 1073741824 bytes < (ratio 1.5 - 1) * available 3072 MiB = 1610612736 bytes' <<<"$out"
check "verify: drift on node2" grep -qF "error: policy-drift: node node2: policy drift: memqosd's MemoryRatio 2 but the tags say 1.5" <<<"$out"

# A node that does not answer: exit 2, named, with what to do.
out=$("$prog" verify --cluster-data "$fixtures/pair.data" --node-data "$fixtures/nodes-unreachable.txt")
rc=$?
check "verify: an unreachable node is exit 2" test "$rc" = 2
check "verify: says which node and what to run" grep -qF 'unchecked: node-unchecked: node node2: cannot check swap and policy: memqosctl exited with status 255: ssh: connect to host node2 port 22: Connection refused; check memqosd there: gnt-cluster command -n node2 memqosctl status' <<<"$out"

# Errors of the data or the tools: exit 2 with a message.
"$prog" verify --cluster-data "$work/none.data" --node-data "$fixtures/nodes-good.txt" >/dev/null 2>"$work/err"
check "verify: missing cluster file is exit 2" test $? = 2
check "verify: ... naming it" grep -qF "$work/none.data" "$work/err"
printf 'garbage\n' >"$work/bad.data"
"$prog" verify --cluster-data "$work/bad.data" --node-data "$fixtures/nodes-good.txt" >/dev/null 2>"$work/err"
check "verify: malformed cluster file is exit 2" test $? = 2
check "verify: ... saying why" grep -qF "not htools' text format" "$work/err"
printf 'node1: MemoryRatio=1\n' >"$work/bad-nodes.txt"
"$prog" verify --cluster-data "$fixtures/pair.data" --node-data "$work/bad-nodes.txt" >/dev/null 2>"$work/err"
check "verify: malformed node data is exit 2" test $? = 2
FAKE_HSCAN_FAIL=1 "$prog" verify >/dev/null 2>"$work/err"
check "verify: hscan failing is exit 2" test $? = 2
check "verify: ... with hscan's words" grep -qF 'hscan (Ganeti' "$work/err"
FAKE_GNT_FAIL=1 "$prog" verify >/dev/null 2>"$work/err"
check "verify: gnt-cluster failing is exit 2" test $? = 2
sed 's/memory-ratio:1.5/memory-ratio:lots/' "$fixtures/pair.data" >"$work/tag.data"
"$prog" verify --cluster-data "$work/tag.data" --node-data "$fixtures/nodes-good.txt" >/dev/null 2>"$work/err"
check "verify: malformed tag is exit 2" test $? = 2

# hbal and hcheck: the rewritten file, the options, output and status relayed.
out=$("$prog" hbal -C --print-instances 2>"$work/err")
rc=$?
check "hbal: output relayed" test "$out" = "hbal plan"
check "hbal: exit 0 relayed" test "$rc" = 0
check "hbal: runs hbal -t FILE with the options" \
    grep -qx -- "-t $TMPDIR/memqos-cluster\.[A-Za-z0-9]*/memqos\.data -C --print-instances" "$work/hbal-args"
check "hbal: sees the rewritten nodes" grep -qx 'node1|5509|900|2561|102400|51200|4|M|uuid-g1|1||N|1|4|1.000000' "$work/hbal-seen.data"
check "hbal: one stderr line per rewritten node" grep -qF 'memqos: node node2: ratio 1.500000, mem_node 1024 MiB, capacity 4608 MiB, instances 3000 MiB' "$work/err"
check "hbal: names the plain instance it never moves" grep -qF 'hbal moves no instance of disk template diskless, plain or file' "$work/err"
check "hbal: 1 of 4 instances, inst2 (plain)" grep -qF '1 of 4 instance(s) stay where they are: inst2 (plain).' "$work/err"
check "hbal: the temporary directory is removed" test -z "$(ls -A "$TMPDIR")"
"$prog" hcheck >/dev/null 2>"$work/err"
check "hcheck: no hbal note" bash -c "! grep -q 'hbal moves no instance' '$work/err'"
FAKE_EXIT=1 "$prog" hcheck --cluster-data "$fixtures/pair.data" -- --machine-readable >/dev/null 2>&1
check "hcheck: exit status 1 relayed" test $? = 1
check "hcheck: options after -- passed" grep -q -- '--machine-readable$' "$work/hcheck-args"
for opt in -L -X --luxi=/x -t/x -m; do
    "$prog" hbal "$opt" >/dev/null 2>"$work/err"
    check "hbal: $opt refused (exit 64)" test $? = 64
done
check "hbal: says to run the plan's commands" grep -qF "run the plan's commands (-C) yourself" "$work/err"

"$prog" >/dev/null 2>&1
check "no command: usage, exit 64" test $? = 64
"$prog" frobnicate >/dev/null 2>&1
check "unknown command: exit 64" test $? = 64
"$prog" verify --bogus >/dev/null 2>&1
check "unknown verify option: exit 64" test $? = 64
helps() { "$prog" --help | grep -qF "cannot execute moves"; }
check "--help: exit 0 and says hbal cannot execute moves" helps

# The bash completion (completions/memqos-cluster).
completes() { # completes "WORDS..." WANT: the candidates for the last word
    local want=$1
    shift
    local got
    got=$(bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _memqos_cluster; printf "%s\n" "${COMPREPLY[@]}"' \
        _ "$(dirname "${BASH_SOURCE[0]}")/../../completions/memqos-cluster" memqos-cluster "$@" | sort | tr '\n' ' ')
    # (an empty reply prints one empty line: " ")
    [[ $got == "$want" ]] || { echo "# completing '$*': got '$got', want '$want'"; return 1; }
}
check "completion: the commands" completes "--help hbal hcheck verify " ""
check "completion: verify's options" completes "--json " verify --j
check "completion: hbal's own options" completes "--cluster-data " hbal --cl
check "completion: nothing of ours after --" completes " " hbal -- -
touch "$work/c1.data"
check "completion: a file after --cluster-data" completes "$work/c1.data " verify --cluster-data "$work/c1"

tap_end

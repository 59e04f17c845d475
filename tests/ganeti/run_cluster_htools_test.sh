#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# memqos-cluster hcheck/hbal with Ganeti's real htools 3.0.2 (one multi-call
# binary: hcheck, hbal are its names) on the fixture cluster
# tests/fixtures/ganeti-cluster/pair.data: htools reads the rewritten file,
# and judges N+1 on the ratio (one node not N+1 happy instead of two).
# The binary: $MEMQOS_HTOOLS, else Debian's /usr/lib/ganeti/3.0/usr/bin/htools,
# else hcheck in PATH; exit 77 (skipped) when there is none.
#   run_cluster_htools_test.sh MEMQOS-CLUSTER
# TAP output.
set -uo pipefail
prog=$1
fixtures=$(cd "$(dirname "${BASH_SOURCE[0]}")/../fixtures/ganeti-cluster" && pwd)
htools=${MEMQOS_HTOOLS:-}
for c in /usr/lib/ganeti/3.0/usr/bin/htools "$(command -v hcheck 2>/dev/null)"; do
    [[ -z $htools && -n $c && -x $c ]] && htools=$(readlink -f "$c")
done
if [[ -z $htools || ! -x $htools ]]; then
    echo "skipped: no htools binary (set MEMQOS_HTOOLS, or install ganeti-htools-3.0)" >&2
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/memqos-cluster-htools.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
ln -s "$htools" "$work/bin/hcheck"
ln -s "$htools" "$work/bin/hbal"
export MEMQOS_GANETI_BINDIR=$work/bin
# shellcheck source=tests/ganeti/lib-tap.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib-tap.bash"
echo "# htools: $htools ($("$work/bin/hcheck" --version 2>&1 | head -n1))"

out=$("$work/bin/hcheck" -t "$fixtures/pair.data" 2>/dev/null)
check "hcheck on Ganeti's figures: both nodes not N+1 happy" grep -q 'Nodes not N+1 happy: 2' <<<"$out"
out=$("$prog" hcheck --cluster-data "$fixtures/pair.data" 2>"$work/err")
rc=$?
check "memqos-cluster hcheck: htools reads the rewritten file" grep -q 'Statistics for group default initially' <<<"$out"
check "memqos-cluster hcheck: on the ratio one node is not N+1 happy" grep -q 'Nodes not N+1 happy: 1' <<<"$out"
check "memqos-cluster hcheck: hcheck's exit status 1 (unhealthy) relayed" test "$rc" = 1
out=$("$prog" hbal --cluster-data "$fixtures/pair.data" -- -C -p 2>&1)
rc=$?
check "memqos-cluster hbal: exit 0 relayed" test "$rc" = 0
# node1: t_mem = n_mem 900 + capacity 4608 + 1, f_mem 4609 - 2048; '*': N+1 fails
# (it could not take node2's inst3 of 3000 MiB).
check "memqos-cluster hbal -p: node1's rewritten figures, N+1 failing" \
    grep -qE '^ \* node1 +5509 +900 +2048 +0 +2561 ' <<<"$out"
check "memqos-cluster hbal -p: node2 N+1 fine" grep -qE '^   node2 +5509 +900 +3000 ' <<<"$out"
check "memqos-cluster hbal -C: prints the commands section" grep -q 'Commands to run to reach the above solution' <<<"$out"

# bed-diskless.data: what hscan gave on the two-node bed (2026-12-05; names
# shortened), two diskless instances up on node1, node2 empty. Ganeti 3.0.2's
# hbal never moves diskless instances (htools' movableDiskTemplates), with
# Ganeti's figures or with the ratio; the same cluster with sharedfile
# instances gets a migrate. memqos-cluster hbal says so before hbal runs.
out=$("$work/bin/hbal" -t "$fixtures/bed-diskless.data" -C 2>&1)
check "hbal, bed's diskless instances: no solution" grep -q 'Solution length=0' <<<"$out"
sed 's/|diskless||/|sharedfile||/; s/|diskless|4.0/|diskless,sharedfile|4.0/' \
    "$fixtures/bed-diskless.data" >"$work/bed-sharedfile.data"
out=$("$work/bin/hbal" -t "$work/bed-sharedfile.data" -C 2>&1)
check "hbal, the same as sharedfile: a migrate to node2" \
    grep -qE 'gnt-instance migrate -f -n node2 inst[67]' <<<"$out"
out=$("$prog" hbal --cluster-data "$fixtures/bed-diskless.data" -- -C 2>&1)
check "memqos-cluster hbal, diskless: no solution either" grep -q 'Solution length=0' <<<"$out"
check "memqos-cluster hbal, diskless: the note names both instances" \
    grep -qF '2 of 2 instance(s) stay where they are: inst6 (diskless), inst7 (diskless).' <<<"$out"

tap_end

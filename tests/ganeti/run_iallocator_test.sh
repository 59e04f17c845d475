#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The memqos-iallocator program with a stand-in for hail (MEMQOS_HAIL): it
# runs hail on a private temporary copy of the rewritten input with Ganeti's
# extra options, relays hail's stdout and exit status unchanged and removes
# the copy; its own errors are Ganeti's failed-request JSON with exit 0.
#   run_iallocator_test.sh MEMQOS-IALLOCATOR
# TAP output.
set -uo pipefail
prog=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/memqos-iallocator-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work/tmp
mkdir "$TMPDIR"
# shellcheck source=tests/ganeti/lib-tap.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib-tap.bash"

cat >"$work/hail" <<'HAIL'
#!/bin/sh
# Answers like hail, with what it was given.
printf '%s\n' "$*" >"$(dirname "$0")/args"
stat -c %a "$1" >"$(dirname "$0")/mode"
cp "$1" "$(dirname "$0")/seen.json"
printf '{"success":true,"info":"Request successful: fake","result":["node1"]}\n'
exit "${FAKE_HAIL_EXIT:-0}"
HAIL
chmod +x "$work/hail"
cat >"$work/in.json" <<'JSON'
{"cluster_tags":["memqos:memory-ratio:1.5","memqos:mem-node:1G"],"enabled_hypervisors":["kvm"],
 "nodegroups":{"g":{"name":"default","tags":[]}},
 "nodes":{"node1":{"group":"g","offline":false,"total_memory":8192,"reserved_memory":700,"free_memory":100}},
 "instances":{},"request":{"type":"allocate"}}
JSON

out=$(MEMQOS_HAIL=$work/hail "$prog" "$work/in.json" --static-kvm-node-memory=0 --x=y 2>"$work/err")
rc=$?
check "hail's answer is relayed unchanged" \
    test "$out" = '{"success":true,"info":"Request successful: fake","result":["node1"]}'
check "exit status 0 relayed" test "$rc" = 0
check "hail gets the temporary file and Ganeti's options" \
    grep -qx "$TMPDIR/memqos-iallocator\.[A-Za-z0-9]* --static-kvm-node-memory=0 --x=y" "$work/args"
check "the temporary file is private (0600)" grep -qx 600 "$work/mode"
check "the temporary file is removed" test -z "$(ls -A "$TMPDIR")"
# --static-kvm-node-memory=0: hail's node memory is reserved_memory (700);
# capacity 1.5 × (8192 − 1024) = 10752.
check "hail sees the capacity" grep -q '"total_memory":11453' "$work/seen.json"
check "one stderr line per rewritten node" grep -q 'node node1: ratio 1.500000, mem_node 1024 MiB, capacity 10752 MiB' "$work/err"

out=$(FAKE_HAIL_EXIT=3 MEMQOS_HAIL=$work/hail "$prog" "$work/in.json" 2>/dev/null)
check "hail's exit status 3 relayed" test $? = 3

fails() { # fails WANT ARGS...: exit 0 with Ganeti's failed-request JSON naming WANT
    local want=$1 out rc
    shift
    out=$(MEMQOS_HAIL=$work/hail "$@" 2>/dev/null)
    rc=$?
    [[ $rc == 0 && $out == '{"info":"memqos: '*"$want"*'","result":[],"success":false}' ]] ||
        { echo "# rc $rc, out: $out"; return 1; }
}
printf '{"request":' >"$work/bad.json"
check "malformed JSON: a failed request" fails "not JSON" "$prog" "$work/bad.json"
sed 's/"allocate"/"bogus"/' "$work/in.json" >"$work/type.json"
check "unknown request type: a failed request" fails "unknown type bogus" "$prog" "$work/type.json"
sed 's/memory-ratio:1.5/memory-ratio:lots/' "$work/in.json" >"$work/tag.json"
check "malformed tag: a failed request" fails "cluster: tag memqos:memory-ratio:lots" "$prog" "$work/tag.json"
check "missing input: a failed request" fails "cannot read the input" "$prog" "$work/none.json"
check "bad hail option: a failed request" fails "static-kvm-node-memory" "$prog" "$work/in.json" --static-kvm-node-memory=x
out=$(MEMQOS_HAIL=$work/nohail "$prog" "$work/in.json" 2>/dev/null)
check "hail missing: a failed request naming it" \
    grep -qF "\"info\":\"memqos: Ganeti's allocator hail ($work/nohail) cannot be run" <<<"$out"
"$prog" >/dev/null 2>&1
check "no input file: usage, exit 64" test $? = 64

tap_end

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Read-only members are open to everyone; mutating ones are refused for a
# non-root caller; bad input gets a named org.memqos1.Error and changes nothing.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

wait_memqosd
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

nobody busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager MemoryAvailable >/dev/null ||
  fail "a non-root caller cannot read MemoryAvailable"
nobody busctl call org.memqos1 /org/memqos1 org.memqos1.Manager ListClasses >/dev/null ||
  fail "a non-root caller cannot call ListClasses"
nobody busctl call org.memqos1 /org/memqos1 org.memqos1.Manager VerifyPlacement 'tta{sv}' 1073741824 0 0 >/dev/null ||
  fail "a non-root caller cannot call VerifyPlacement"
nobody busctl introspect org.memqos1 /org/memqos1 >/dev/null || fail "a non-root caller cannot introspect"
ok "a non-root caller reads properties, lists, verifies and introspects"

systemd-run --unit=sec.service /bin/sleep infinity >/dev/null
refused() { # refused DESCRIPTION busctl-args...
  local what=$1; shift
  local out rc=0
  out=$(nobody busctl call org.memqos1 /org/memqos1 org.memqos1.Manager "$@" 2>&1) || rc=$?
  ((rc != 0)) || fail "non-root $what was allowed: $out"
  [[ $out == *"ccess denied"* || $out == *AccessDenied* ]] || fail "non-root $what: unexpected answer '$out'"
  ok "non-root $what refused: $out"
}
refused AssignWorkload AssignWorkload ssttb sec.service shared 0 1073741824 true
refused UnassignWorkload UnassignWorkload s sec.service
refused RunWorkload RunWorkload ssttas x.service shared 0 1073741824 1 /bin/true
refused Reload Reload
[[ -z $(mgr ListWorkloads | grep sec.service || true) ]] || fail "sec.service got managed by a refused call"

# Bad input, as root: memqosctl shows the daemon's error name and message,
# and exits 64 for a refused argument, 6 for no such unit or workload.
named() { # named ERROR memqosctl-args...
  local want=$1; shift
  local out rc=0 code=64
  [[ $want == NoSuch* ]] && code=6
  out=$(memqosctl "$@" 2>&1) || rc=$?
  ((rc == code)) || fail "memqosctl $* exited $rc, expected $code: $out"
  [[ $out == *"org.memqos1.Error.$want"* ]] || fail "memqosctl $*: expected org.memqos1.Error.$want, got: $out"
  ok "$want: $out"
}
named UnknownClass assign sec.service gold --limit 1G
named RequestAboveLimit assign sec.service shared --request 1G --limit 512M
named SizeOutOfRange assign sec.service shared --request 1G --limit 1T
named InvalidUnit assign ../../etc/passwd.service shared --limit 1G
named InvalidUnit assign sec.socket shared --limit 1G  # "sec" would be sec.service
named NoSuchUnit assign ghost-unit.service shared --limit 1G
named NoSuchWorkload unassign sec.service
out=$(mgr VerifyPlacement 'tta{sv}' 1073741824 0 1 bogus t 1 2>&1) && fail "an unknown VerifyPlacement option was accepted"
[[ $out == *"unknown option 'bogus'"* ]] || fail "VerifyPlacement with an unknown option: '$out'"
ok "VerifyPlacement unknown option: $out"
[[ -z $(mgr ListWorkloads | grep sec.service || true) ]] || fail "a refused call changed the workload list"
[[ -z $(ls /var/lib/memqos/assignments 2>/dev/null | grep sec || true) ]] || fail "a refused call left a stored assignment"
ok "nothing changed"
systemctl stop sec.service

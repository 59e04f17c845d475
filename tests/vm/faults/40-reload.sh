#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 11, defect 4: a reload either applies a key or says it needs a
# restart. DryRun switches on and off by reload (before the fix it could
# only be switched on); a changed StateDirectory or LibvirtURI is named in
# the reload's answer (memqosctl reload prints it) and in the journal.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

dropin=/etc/memqos/memqosd.conf.d/90-fault-reload.conf
cg=/sys/fs/cgroup/system.slice/rl.service
cleanup() {
  rm -f $dropin
  memqosctl reload >/dev/null 2>&1 || true
  memqosctl unassign rl.service >/dev/null 2>&1 || true
  systemctl stop rl.service 2>/dev/null || true
  rm -f /etc/systemd/system/rl.service
  systemctl daemon-reload
}
trap cleanup EXIT

wait_memqosd
printf '[Service]\nExecStart=/bin/sleep infinity\n' >/etc/systemd/system/rl.service
systemctl daemon-reload
systemctl start rl.service
wait_for 10 "rl.service cgroup" test -d $cg
mkdir -p /etc/memqos/memqosd.conf.d
dry() { busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager DryRun; }

# DryRun on by reload: an assignment is only logged.
printf '[Manager]\nDryRun=yes\n' >$dropin
out=$(memqosctl reload)
[[ -z $out ]] || fail "reload to DryRun=yes answered: $out"
[[ $(dry) == "b true" ]] || fail "DryRun after reload: $(dry)"
cursor=$(journalctl -u memqosd --show-cursor -n 0 -q | sed -n 's/^-- cursor: //p')
memqosctl assign rl.service shared --request 64M --limit 300M --runtime >/dev/null
wait_for 20 "a 'Dry run: would' line" bash -c \
  "journalctl -u memqosd --after-cursor='$cursor' -o cat | grep -q 'Dry run: would'"
ok "$(journalctl -u memqosd --after-cursor="$cursor" -o cat | grep -m1 'Dry run: would')"
expect_file $cg/memory.max max

# DryRun off by reload: the assignment takes effect on the cgroup.
printf '[Manager]\nDryRun=no\n' >$dropin
out=$(memqosctl reload)
[[ -z $out ]] || fail "reload to DryRun=no answered: $out"
[[ $(dry) == "b false" ]] || fail "DryRun after reload: $(dry) (a reload could not end a dry run)"
wait_for 20 "rl.service memory.max set once the dry run ended" grep -qx 314572800 $cg/memory.max
expect_file $cg/memory.low 67108864
[[ $(journalctl -u memqosd --after-cursor="$cursor" -o cat) == *"Dry run off: memqosd acts from now on"* ]] ||
  fail "no journal entry for the end of the dry run"

# Start-only keys: named in the answer and the journal, the running value kept.
printf '[Manager]\nStateDirectory=/var/lib/memqos-elsewhere\n[VM]\nLibvirtURI=test:///default\n' >$dropin
state_now=/var/lib/memqos
cursor=$(journalctl -u memqosd --show-cursor -n 0 -q | sed -n 's/^-- cursor: //p')
out=$(memqosctl reload)
echo "$out"
[[ $out == *"Manager.StateDirectory needs a restart: $state_now stays in use until memqosd restarts (the configuration now says /var/lib/memqos-elsewhere)"* ]] ||
  fail "reload answer does not name StateDirectory: $out"
[[ $out == *"VM.LibvirtURI needs a restart: "*"(the configuration now says test:///default)"* ]] ||
  fail "reload answer does not name LibvirtURI: $out"
json=$(memqosctl --json reload)
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert len(d["restart_needed"]) == 2, d' "$json" ||
  fail "memqosctl --json reload: $json"
wait_for 10 "journal entry for StateDirectory" bash -c \
  "journalctl -u memqosd --after-cursor='$cursor' -o cat | grep -q 'Reload: Manager.StateDirectory needs a restart'"
ok "journal: $(journalctl -u memqosd --after-cursor="$cursor" -o cat | grep -m1 'Reload: Manager.StateDirectory')"
# Still stored where it was: an assignment goes to the running state directory.
memqosctl assign rl.service shared --request 64M --limit 310M >/dev/null
[[ -f $state_now/assignments/rl_2eservice ]] || fail "not stored in $state_now"
[[ ! -e /var/lib/memqos-elsewhere ]] || fail "/var/lib/memqos-elsewhere was used before a restart"
ok "the state directory in use is still $state_now"

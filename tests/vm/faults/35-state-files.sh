#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 11, fault row "corrupt, truncated, empty, huge and wrong-owner state
# files": written into /var/lib/memqos/assignments while memqosd is stopped.
# memqosd starts anyway, applies the good assignment (its unit's memory.max
# proves it), sets every bad file aside as <name>.bad-<UTC time> with a
# journal entry naming the file and why, and applies none of them.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

asg=/var/lib/memqos/assignments
sys=/sys/fs/cgroup/system.slice
units=(sf-good sf-owner sf-corrupt sf-trunc)

cleanup() {
  systemctl start memqosd || true
  for u in "${units[@]}"; do
    memqosctl unassign $u.service >/dev/null 2>&1 || true
    systemctl stop $u.service 2>/dev/null || true
    rm -f /etc/systemd/system/$u.service
  done
  rm -f $asg/*.bad-*
  systemctl daemon-reload
}
trap cleanup EXIT

wait_memqosd
for u in "${units[@]}"; do
  printf '[Service]\nExecStart=/bin/sleep infinity\n' >/etc/systemd/system/$u.service
done
systemctl daemon-reload
systemctl start "${units[@]/%/.service}"

# assignment ID LIMIT: a good file's text.
assignment() {
  printf '# memqos assignment; written by memqosd, do not edit while it runs\n'
  printf 'Id=%s\nKind=service\nClass=shared\nRequest=67108864\nLimit=%s\nPriority=0\n' "$1" "$2"
}

systemctl stop memqosd
# Issue 24 item 7: a user's query does not start the stopped memqosd again by
# D-Bus activation (the dbus-org.memqos1.service alias exists while enabled).
rc=0
setpriv --reuid=65534 --regid=65534 --clear-groups memqosctl status >/dev/null 2>&1 || rc=$?
[ "$rc" = 4 ] || fail "memqosctl status as nobody with memqosd stopped: exit $rc, want 4"
state=$(systemctl is-active memqosd || true)
[ "$state" = inactive ] || fail "memqosd is $state after a user's memqosctl status (activated)"
ok "a stopped memqosd stays stopped through memqosctl status as nobody (exit 4)"
cursor=$(journalctl -u memqosd --show-cursor -n 0 -q | sed -n 's/^-- cursor: //p')
mkdir -p $asg
assignment sf-good.service 402653184 >$asg/sf_2dgood_2eservice
# Another user's file, planted: good content, but memqosd must not trust it.
assignment sf-owner.service 335544320 >$asg/sf_2downer_2eservice
chown nobody:nogroup $asg/sf_2downer_2eservice
# Corrupt: random (printable) garbage. Truncated: cut in its third line.
# Empty. Huge: a good text followed by 10 MiB of zeros.
head -c 300 /dev/urandom | base64 >$asg/sf_2dcorrupt_2eservice
assignment sf-trunc.service 335544320 | head -c 90 >$asg/sf_2dtrunc_2eservice
: >$asg/sf_2dempty_2eservice
{ assignment sf-huge.service 335544320; head -c 10485760 /dev/zero; } >$asg/sf_2dhuge_2eservice
bad=(sf_2downer_2eservice sf_2dcorrupt_2eservice sf_2dtrunc_2eservice sf_2dempty_2eservice
     sf_2dhuge_2eservice)
ls -ln $asg

systemctl start memqosd
wait_memqosd
# The good assignment is applied: memqosd set its limit at start.
wait_for 60 "sf-good.service MemoryMax=384M from its stored assignment" \
  grep -qx 402653184 $sys/sf-good.service/memory.max
ok "the good file was applied: sf-good.service memory.max=$(cat $sys/sf-good.service/memory.max)"
systemctl is-active --quiet memqosd || fail "memqosd is not active"

journal=$(journalctl -u memqosd --after-cursor="$cursor" -o cat)
declare -A why=(
  [sf_2downer_2eservice]="owned by uid 65534, not by memqosd's uid 0"
  [sf_2dcorrupt_2eservice]="line 1: "
  [sf_2dtrunc_2eservice]="line 3: 'Kin': expected Key=Value"
  [sf_2dempty_2eservice]=": empty, set aside"
  [sf_2dhuge_2eservice]="bytes, more than the 65536 a state file may have"
)
for f in "${bad[@]}"; do
  [[ ! -e $asg/$f ]] || fail "$f is still in place"
  aside=$(compgen -G "$asg/$f.bad-*") || fail "$f was not set aside: $(ls $asg)"
  line=$(grep -F "Ignoring a stored assignment: $asg/$f: " <<<"$journal") ||
    fail "no journal entry for $f"
  [[ $line == *"${why[$f]}"* && $line == *"set aside as $asg/$f.bad-"* ]] ||
    fail "journal entry for $f does not say why and where: $line"
  ok "${line:0:200}"
  ok "set aside: $aside ($(stat -c '%s bytes, uid %u' "$aside"))"
done
# None of the bad files' workloads is managed, and the planted one got nothing.
workloads=$(memqosctl workloads)
for u in sf-owner sf-corrupt sf-trunc; do
  [[ $workloads != *$'\n'$u.service* ]] || fail "$u.service is managed from a bad file"
done
expect_file $sys/sf-owner.service/memory.max max
# A second start reads only the good file and sets nothing more aside.
cursor=$(journalctl -u memqosd --show-cursor -n 0 -q | sed -n 's/^-- cursor: //p')
systemctl restart memqosd
wait_memqosd
wait_for 30 "memqosd loaded its assignments" bash -c \
  "journalctl -u memqosd --after-cursor='$cursor' -o cat | grep -q 'Loaded [0-9]* stored assignments'"
again=$(journalctl -u memqosd --after-cursor="$cursor" -o cat)
[[ $again != *"Ignoring a stored assignment"* ]] ||
  fail "the second start complained again: $(grep 'Ignoring' <<<"$again")"
ok "second start: nothing more set aside; $(ls $asg | grep -c '\.bad-') files wait for the operator"

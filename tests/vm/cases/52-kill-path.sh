#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Kills do not depend on dbus-daemon (issue 23): with dbus-daemon stopped
# (SIGSTOP) for the whole surge, a reclaimed hog that grows without bound is
# still killed by memqosd, through its own write of the hog's cgroup.kill,
# before the kernel OOM killer fires; systemd sees the unit fail
# (Result=signal) and the kill is recorded once dbus-daemon is back.
# systemctl and systemd-run reach PID 1 on its private socket as root, so
# they work while dbus-daemon is stopped; busctl does not, and is used only
# after it is continued.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

wait_memqosd
oom_kills() { awk '/^oom_kill / {print $2}' /proc/vmstat; }

dbus_pid=$(systemctl show -p MainPID --value dbus.service)
if [[ -z $dbus_pid || $dbus_pid == 0 || $(cat "/proc/$dbus_pid/comm" 2>/dev/null) != dbus-daemon ]]; then
  echo "skipped: no dbus-daemon as dbus.service's main process"
  exit 77
fi
# Whatever happens below, dbus-daemon runs again when the case ends.
trap 'kill -CONT "$dbus_pid" 2>/dev/null || true' EXIT

unit=hog-nobus.service
oom_before=$(oom_kills)
since=$(date '+%Y-%m-%d %H:%M:%S')
kill -STOP "$dbus_pid"
[[ $(ps -o stat= -p "$dbus_pid") == T* ]] || fail "dbus-daemon (pid $dbus_pid) is not stopped"
ok "dbus-daemon (pid $dbus_pid) stopped"
systemd-run --unit="$unit" --slice=memqos-reclaimed.slice /usr/bin/python3 -c "$HOG_PY" >/dev/null
hog_pid=$(systemctl show -p MainPID --value "$unit")
((hog_pid > 0)) || fail "$unit has no main process"
t0=$SECONDS
wait_for 240 "memqosd killed $unit with dbus-daemon stopped" bash -c "! kill -0 $hog_pid"
ok "$unit (pid $hog_pid) killed after $((SECONDS - t0)) s"
[[ $(ps -o stat= -p "$dbus_pid") == T* ]] || fail "dbus-daemon was running again when $unit died"
ok "dbus-daemon was still stopped when $unit died"
oom_after=$(oom_kills)
((oom_after == oom_before)) || fail "the kernel OOM killer fired ($oom_before -> $oom_after)"
ok "kernel OOM killer did not fire (oom_kill stays $oom_after)"
wait_for 30 "$unit failed" bash -c "[[ \$(systemctl show -p Result --value $unit) == signal ]]"
ok "$unit: $(systemctl show -p ActiveState,SubState,Result --value "$unit" | tr '\n' ' ')"

kill -CONT "$dbus_pid"
wait_memqosd
journalctl -u memqosd -o export --since "$since" MESSAGE_ID=4d8a0f6b9c5e4b7f8a2e1c3d5b7a9e01 |
  grep -qx 'KILLED_BY=cgroup.kill' || fail "no kill entry with KILLED_BY=cgroup.kill since $since"
journalctl -u memqosd -o cat --since "$since" MESSAGE_ID=4d8a0f6b9c5e4b7f8a2e1c3d5b7a9e01 |
  grep "Killed $unit" || fail "no 'Killed $unit' journal entry"
mgr ListKills | grep -q "\"$unit\"" || fail "the kill of $unit is not in ListKills: $(mgr ListKills)"
ok "the kill is in the journal (KILLED_BY=cgroup.kill) and in ListKills"
systemctl reset-failed "$unit" 2>/dev/null || true

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# case.sh — guest side of the overhead benchmark (tests/bench/overhead/run
# boots the "bench" VM flavour with it; see README.md). Runs as root in the
# guest, in /mnt/host/files, which holds sample.py and params.env.
#
#  1. memqosd with [Manager] Interval=1s and a MetricsFile (drop-in), restarted;
#     systemd-oomd started, with ManagedOOMMemoryPressure=kill on
#     memqos-shared.slice (drop-in);
#  2. baseline: BASELINE_S seconds with no benchmark units;
#  3. UNITS template units ovh@N.service (Slice=memqos-shared.slice,
#     /bin/sleep infinity) started in batches of BATCH; wait until memqosd
#     manages all of them (memqos_workloads in the metrics file);
#  4. memqosd restarted (so its tick-duration window of 1024 ticks holds only
#     ticks with the units; the daemon adopts them from the slice at start),
#     wait until it manages them again, then SETTLE_S seconds;
#  5. the window: MINUTES minutes, memqosd, systemd-oomd and PID 1 sampled
#     by sample.py;
#  5b. unless WATCH_S=0, two more windows of WATCH_S seconds each, still at
#     level 0: "watchful" (a pressure drop-in makes level 1's MemAvailable
#     condition hold, 99 %, with Level1Duration=1h: it builds up, never
#     entered) and "kill near" (the same for levels 1-3: memqosd reads every
#     killable workload every tick); each proven by the metrics file
#     (memqos_pressure_condition_level, memqos_kill_near) before and after;
#  6. filecost.py: what each file memqosd reads per workload costs;
#  7. check that every unit is still running and that neither daemon
#     restarted; write $MEMQOS_VM_ARTIFACTS/overhead.json and print it
#     between markers.
set -euo pipefail

here=$(pwd)
# shellcheck source=/dev/null
[[ -f $here/params.env ]] && . "$here/params.env"
UNITS=${UNITS:-1000}
MINUTES=${MINUTES:-5}
BASELINE_S=${BASELINE_S:-60}
SETTLE_S=${SETTLE_S:-30}
WATCH_S=${WATCH_S:-120}
BATCH=${BATCH:-100}
EVERY_S=${EVERY_S:-5}
art=${MEMQOS_VM_ARTIFACTS:-/tmp/overhead-artifacts}
mkdir -p "$art"
# On disk, as an operator's would be (ProtectSystem=strict: memqosd may write
# its StateDirectory); memqosd writes it without fsync, on a thread of its own.
prom=/var/lib/memqos/bench.prom
t_case=$SECONDS

log() { printf '[overhead %4ds] %s\n' $((SECONDS - t_case)) "$*"; }
die() {
    printf '[overhead] ERROR: %s\n' "$*" >&2
    { journalctl -u memqosd -n 30 --no-pager; systemctl status memqosd systemd-oomd --no-pager; } >&2 2>/dev/null || true
    exit 1
}
# metric NAME: its value in the metrics file (empty if absent).
metric() { awk -v n="$1" '$1 == n { print $2; exit }' "$prom" 2>/dev/null || true; }
mainpid() { systemctl show -P MainPID "$1"; }
# wait_for SECONDS WHAT CMD...: poll CMD every second until it succeeds.
wait_for() {
    local limit=$1 what=$2 t=$SECONDS
    shift 2
    until "$@"; do
        ((SECONDS - t < limit)) || die "$what: not reached within $limit s"
        sleep 1
    done
    log "$what ($((SECONDS - t)) s)"
}
workloads_at_least() {
    local w
    w=$(metric memqos_workloads)
    [[ -n $w ]] && (( ${w%.*} >= $1 ))
}

systemctl is-active --quiet memqosd || die "memqosd is not active after installing the .deb: $(systemctl is-active memqosd || true)"
command -v python3 >/dev/null || die "python3 is missing in the guest"
[[ -f $here/sample.py ]] || die "sample.py was not copied to $here"
systemctl cat systemd-oomd.service >/dev/null 2>&1 || die "systemd-oomd.service is not installed: boot the 'bench' flavour (tests/vm/run --flavour bench)"

log "guest: $(nproc) CPUs, $(awk '/MemTotal/ {print int($2/1024) " MiB"}' /proc/meminfo), kernel $(uname -r), systemd $(systemctl --version | awk 'NR==1 {print $2}'), memqos $(dpkg-query -W -f '${Version}' memqos)"

# --- 1. configuration ------------------------------------------------------------
if [[ ${LIBVIRT:-running} == absent ]]; then
    # As on a host without VMs: no libvirtd socket, so memqosd (restarted
    # below) does not load libvirt.
    systemctl stop libvirtd.service libvirtd.socket libvirtd-ro.socket libvirtd-admin.socket 2>/dev/null || true
    [[ ! -e /run/libvirt/libvirt-sock && ! -e /run/libvirt/virtqemud-sock ]] ||
        die "--libvirt absent: a libvirt socket is still there after stopping libvirtd's units"
fi
mkdir -p /etc/memqos/memqosd.conf.d
printf '[Manager]\nInterval=1s\nMetricsFile=%s\n' "$prom" >/etc/memqos/memqosd.conf.d/90-overhead-bench.conf
[[ ${RECLAIM:-yes} == no ]] && printf '[Reclaim]\nEnabled=no\n' >>/etc/memqos/memqosd.conf.d/90-overhead-bench.conf
memqosd --check-config >/dev/null || die "memqosd --check-config rejects the benchmark drop-in"
mkdir -p /etc/systemd/system/memqos-shared.slice.d
printf '[Slice]\nManagedOOMMemoryPressure=kill\n' >/etc/systemd/system/memqos-shared.slice.d/90-overhead-bench-oomd.conf
cat >/etc/systemd/system/ovh@.service <<'EOF'
[Unit]
Description=overhead benchmark sleeper %i

[Service]
Slice=memqos-shared.slice
ExecStart=/bin/sleep infinity
EOF
systemctl daemon-reload
rm -f "$prom" # it survives restarts: wait for a new one
systemctl restart memqosd
wait_for 60 "memqosd restarted with Interval=1s and writes $prom" test -s "$prom"
systemctl start systemd-oomd.service || die "systemctl start systemd-oomd failed"
systemctl is-active --quiet systemd-oomd || die "systemd-oomd is not active"
[[ $(systemctl show -P ManagedOOMMemoryPressure memqos-shared.slice) == kill ]] ||
    die "memqos-shared.slice does not have ManagedOOMMemoryPressure=kill"
have_ticks=0
[[ -n $(metric memqos_tick_duration_seconds_count) ]] && have_ticks=1
log "tick-duration metrics in $prom: $([[ $have_ticks == 1 ]] && echo yes || echo 'NO (this memqosd does not write them)')"
base_workloads=$(metric memqos_workloads)
base_workloads=${base_workloads%.*}
log "memqosd manages ${base_workloads:-?} workloads before the benchmark units"

# --- 2. baseline -------------------------------------------------------------------
if ((BASELINE_S > 0)); then
    sleep 5 # past the restart's first ticks
    log "baseline: ${BASELINE_S} s with no benchmark units"
    python3 "$here/sample.py" --seconds "$BASELINE_S" --every "$EVERY_S" --metrics "$prom" \
        --out "$art/baseline.json" \
        memqosd="$(mainpid memqosd)" systemd-oomd="$(mainpid systemd-oomd)" pid1=1
fi

# --- 3. the units ------------------------------------------------------------------
log "starting $UNITS units ovh@N.service in memqos-shared.slice, $BATCH at a time"
t_units=$SECONDS
for ((first = 1; first <= UNITS; first += BATCH)); do
    last=$((first + BATCH - 1 > UNITS ? UNITS : first + BATCH - 1))
    names=()
    for ((i = first; i <= last; i++)); do names+=("ovh@$i.service"); done
    systemctl start "${names[@]}" || die "systemctl start ovh@$first..$last failed"
    log "  started ovh@1..$last ($((SECONDS - t_units)) s); memqosd manages $(metric memqos_workloads)"
done
units_start_s=$((SECONDS - t_units))
want=$((${base_workloads:-0} + UNITS))
wait_for 900 "memqosd manages all $want workloads" workloads_at_least "$want"
units_managed_s=$((SECONDS - t_units))
ramp_hwm=$(awk '/VmHWM/ {print $2}' "/proc/$(mainpid memqosd)/status")
log "memqosd VmHWM after adopting the units one by one: $((ramp_hwm / 1024)) MiB"

# --- 4. restart memqosd, settle ----------------------------------------------------------
t_restart=$SECONDS
rm -f "$prom"
systemctl restart memqosd
wait_for 600 "restarted memqosd manages all $want workloads again" workloads_at_least "$want"
restart_managed_s=$((SECONDS - t_restart))
log "settling ${SETTLE_S} s"
sleep "$SETTLE_S"

# --- 5. the window --------------------------------------------------------------------------
active_before=$(systemctl list-units --no-legend --state=active 'ovh@*.service' | wc -l)
log "window: ${MINUTES} min; $active_before units active; memqosd pid $(mainpid memqosd), systemd-oomd pid $(mainpid systemd-oomd)"
oomctl dump >"$art/oomctl-dump-before.txt" 2>&1 || true
python3 "$here/sample.py" --seconds $((MINUTES * 60)) --every "$EVERY_S" --metrics "$prom" \
    --out "$art/window.json" \
    memqosd="$(mainpid memqosd)" systemd-oomd="$(mainpid systemd-oomd)" pid1=1
oomctl dump >"$art/oomctl-dump-after.txt" 2>&1 || true
active_after=$(systemctl list-units --no-legend --state=active 'ovh@*.service' | wc -l)
log "after the window: $active_after units active"
cp "$prom" "$art/metrics-end.prom"

# --- 5b. watchful and kill near --------------------------------------------------------------
watch_conf=/etc/memqos/memqosd.conf.d/91-overhead-bench-watch.conf
metric_is() { [[ $(metric "$1") == "$2" ]]; }
# watch_phase NAME LEVELS NEAR: levels 1..LEVELS' MemAvailable condition made
# to hold (99 % of MemTotal) for an hour before it counts; memqosctl reload;
# wait until the metrics file shows it; sample WATCH_S seconds; check again.
watch_phase() {
    local name=$1 levels=$2 near=$3 l
    { echo '[Pressure]'; for ((l = 1; l <= levels; l++)); do printf 'Level%dMemAvailable=99%%\nLevel%dDuration=1h\n' "$l" "$l"; done; } >"$watch_conf"
    memqosctl reload >/dev/null || die "memqosctl reload with $watch_conf failed"
    wait_for 60 "$name: memqos_pressure_condition_level $levels" metric_is memqos_pressure_condition_level "$levels"
    metric_is memqos_kill_near "$near" || die "$name: memqos_kill_near is $(metric memqos_kill_near), not $near"
    metric_is memqos_pressure_level 0 || die "$name: memqosd entered level $(metric memqos_pressure_level)"
    log "$name: ${WATCH_S} s at level 0 with level $levels building up (memqos_kill_near $near)"
    python3 "$here/sample.py" --seconds "$WATCH_S" --every "$EVERY_S" --metrics "$prom" \
        --out "$art/$name.json" \
        memqosd="$(mainpid memqosd)" systemd-oomd="$(mainpid systemd-oomd)" pid1=1
    metric_is memqos_pressure_condition_level "$levels" && metric_is memqos_kill_near "$near" &&
        metric_is memqos_pressure_level 0 ||
        die "$name: at its end the metrics file says level $(metric memqos_pressure_level), condition level $(metric memqos_pressure_condition_level), kill near $(metric memqos_kill_near)"
}
if ((WATCH_S > 0)); then
    watch_phase watchful 1 0
    watch_phase kill-near 3 1
    rm -f "$watch_conf"
    memqosctl reload >/dev/null || die "memqosctl reload without $watch_conf failed"
    active_after=$(systemctl list-units --no-legend --state=active 'ovh@*.service' | wc -l)
    log "after the watch windows: $active_after units active"
fi

# --- 6. where a tick's reading time goes ------------------------------------------------
if [[ -f $here/filecost.py ]]; then
    log "cost of each file memqosd reads per workload, over all $UNITS cgroups (python, after the window):"
    python3 "$here/filecost.py" --out "$art/filecost.json" || log "filecost.py failed (ignored)"
fi

# --- 7. results ---------------------------------------------------------------------------------
oomd_monitors=0
grep -q 'memqos-shared.slice' "$art/oomctl-dump-before.txt" && oomd_monitors=1
warnings=$(journalctl -u memqosd -p warning --no-pager -q -o cat | wc -l)
oomd_kills=$(journalctl -u systemd-oomd --no-pager -q -o cat | grep -ci 'killed' || true)
maps_libvirt=$(grep -c 'libvirt\.so' "/proc/$(mainpid memqosd)/maps" || true)
python3 - "$art" <<EOF
import json, sys, os
art = sys.argv[1]
def load(name):
    p = os.path.join(art, name)
    return json.load(open(p)) if os.path.exists(p) else None
out = {
    'params': {'units': $UNITS, 'minutes': $MINUTES, 'baseline_s': $BASELINE_S,
               'settle_s': $SETTLE_S, 'watch_s': $WATCH_S, 'batch': $BATCH, 'every_s': $EVERY_S,
               'interval': '1s', 'metrics_file': '$prom', 'reclaim': '${RECLAIM:-yes}',
               'libvirt': '${LIBVIRT:-running}'},
    'guest': {'cpus': $(nproc), 'mem_total_kib': $(awk '/MemTotal/ {print $2}' /proc/meminfo),
              'kernel': '$(uname -r)', 'systemd': '$(systemctl --version | awk 'NR==1 {print $2}')',
              'memqos': '$(dpkg-query -W -f '${Version}' memqos)',
              'oomd': '$(dpkg-query -W -f '${Version}' systemd-oomd 2>/dev/null || true)'},
    'tick_metrics_present': bool($have_ticks),
    'timing': {'units_start_s': $units_start_s, 'units_managed_s': $units_managed_s,
               'restart_managed_s': $restart_managed_s},
    'memqosd_vm_hwm_after_ramp_mib': round($ramp_hwm / 1024, 2),
    'units_active_before_window': $active_before,
    'units_active_after_window': $active_after,
    'oomd_monitors_slice': bool($oomd_monitors),
    'oomd_kill_lines': $oomd_kills,
    'memqosd_warning_lines': $warnings,
    'memqosd_maps_libvirt': bool(${maps_libvirt:-0}),
    'baseline': load('baseline.json'),
    'window': load('window.json'),
    'watchful': load('watchful.json'),
    'kill_near': load('kill-near.json'),
    'filecost': load('filecost.json'),
}
json.dump(out, open(os.path.join(art, 'overhead.json'), 'w'), indent=1)
EOF
echo "=== OVERHEAD-JSON-BEGIN ==="
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [p.pop("series", None) for p in (d["baseline"], d["window"], d["watchful"], d["kill_near"]) if p]; print(json.dumps(d))' "$art/overhead.json"
echo "=== OVERHEAD-JSON-END ==="
((active_after == UNITS)) || die "only $active_after of $UNITS units still active after the windows (killed?)"
log "done"

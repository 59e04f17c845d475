#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The surge benchmark's guest side (tests/bench/surge/README.md), run by
# tests/vm/run as the CASE, with FILEs surge-touch (static binary) and
# surge.env (CONTENDER=..., VARIANT=base|harsh|bounded). One boot = one run of one
# contender: set it up, start probe and online, 10 s warm-up, start batch,
# 90 s window with a sampler, then write everything to $MEMQOS_VM_ARTIFACTS.
#
# Exit status: 0 when the run was measured (whatever the contender did, even
# if it killed online); non-zero only when the run could not be set up.
set -euo pipefail
# wait_for and wpath (tests/vm/cases/lib.bash, passed as a FILE); fail and
# log below replace lib.bash's with the benchmark's prefixed ones.
# shellcheck source=../../vm/cases/lib.bash
source ./lib.bash
WAIT_POLL=0.2
fail() { echo "surge: FAIL: $*" >&2; exit 1; }
log() { echo "surge: $(date +%T) $*"; }

[[ -r surge.env && -x surge-touch ]] || fail "surge.env and surge-touch must be in $(pwd)"
source ./surge.env
: "${CONTENDER:?surge.env sets no CONTENDER}" "${VARIANT:?surge.env sets no VARIANT}"
art=${MEMQOS_VM_ARTIFACTS:?not run by tests/vm/run}
D=/var/tmp/surge # on the guest's disk (not tmpfs: records must not cost RAM)
mkdir -p "$D"

case $VARIANT in
base) W=300 PERIOD=1.0 RETOUCH= ;;
harsh) W=800 PERIOD=3.5 RETOUCH=--retouch ;;
# bounded: killing is the wrong answer. The batch grows to 700 MiB (which fits
# beside online's 800 MiB with the guest's 1 GiB of swap) and then works on
# its last 150 MiB, one pass every 0.25 s.
bounded) W=800 PERIOD=3.5 RETOUCH="--max-mib 700 --hot-mib 150 --pass-period 0.25" ;;
*) fail "unknown VARIANT '$VARIANT' (base|harsh|bounded)" ;;
esac
STEP=50 INTERVAL=0.5 WARMUP=10 WINDOW=90
REQ=$((W + 64))

# Distinct process names: earlyoom's --prefer/--avoid and nohang match them.
for n in online probe batch; do install -m 0755 surge-touch /usr/local/bin/$n-touch; done
install -m 0755 surge-touch /usr/local/bin/surge-touch
now() { surge-touch now; }


unit_dir=/run/systemd/system
slice_unit() { # slice_unit NAME LINES...
  local name=$1; shift
  { echo "[Slice]"; printf '%s\n' "$@"; } >"$unit_dir/$name"
}

# ---------------------------------------------------------------- contender
contender_unit=
peer=1
online_slice=online.slice batch_slice=batch.slice
online_props=() batch_slice_lines=() online_slice_lines=()
case $CONTENDER in
memqosd)
  peer=0
  online_slice=memqos.slice/memqos-dedicated.slice batch_slice=memqos.slice/memqos-reclaimed.slice
  contender_unit=memqosd.service
  # NodeReserved sized for this 2 GiB guest as the README says for small
  # hosts (what the guest's own services use): with the shipped 1G the guard
  # sits at its 2 % floor here. Everything else is the shipped default.
  mkdir -p /etc/memqos/memqosd.conf.d
  printf '[Overcommit]\nNodeReserved=256M\n' >/etc/memqos/memqosd.conf.d/50-surge.conf
  systemctl restart memqosd.service
  ;;
kernel) ;;
kernel-min | oomd-systemd-min)
  online_props=(-p "MemoryMin=${REQ}M")
  online_slice_lines=("MemoryMin=${REQ}M")
  ;;&
oomd-systemd | oomd-systemd-min | oomd-systemd-aggr)
  contender_unit=systemd-oomd.service
  batch_slice_lines=(ManagedOOMMemoryPressure=kill ManagedOOMSwap=kill)
  ;;&
oomd-systemd-aggr)
  batch_slice_lines+=(ManagedOOMMemoryPressureLimit=20%)
  mkdir -p /etc/systemd/oomd.conf.d
  printf '[OOM]\nDefaultMemoryPressureDurationSec=5s\n' >/etc/systemd/oomd.conf.d/50-surge-aggr.conf
  ;;
kernel-min | oomd-systemd | oomd-systemd-min | oomd-systemd-aggr) ;;
earlyoom)
  contender_unit=earlyoom.service
  echo 'EARLYOOM_ARGS="-r 60 --prefer ^batch --avoid ^online"' >/etc/default/earlyoom
  ;;
oomd)
  contender_unit=oomd.service
  cat >/etc/oomd/surge.json <<'EOF'
{
  "rulesets": [
    {
      "name": "protect online: online.slice pressure above 20 for 5s",
      "detectors": [
        [
          "online pressure above 20 for 5s",
          {"name": "pressure_above",
           "args": {"cgroup": "online.slice", "resource": "memory", "threshold": "20", "duration": "5"}}
        ]
      ],
      "actions": [
        {"name": "kill_by_memory_size_or_growth", "args": {"cgroup": "batch.slice/*"}}
      ]
    },
    {
      "name": "protection against low swap",
      "detectors": [
        [
          "free swap below 10 percent",
          {"name": "swap_free", "args": {"threshold_pct": "10"}}
        ]
      ],
      "actions": [
        {"name": "kill_by_memory_size_or_growth", "args": {"cgroup": "batch.slice/*"}}
      ]
    }
  ]
}
EOF
  # Debian's default adds --cgroup-fs /sys/fs/cgroup/unified (hybrid setups);
  # this guest is unified, where that option must go (see /etc/default/oomd).
  echo 'DAEMON_OPTS="--interval 1 --config /etc/oomd/surge.json"' >/etc/default/oomd
  ;;
nohang) contender_unit=nohang.service ;;
*) fail "unknown CONTENDER '$CONTENDER'" ;;
esac

if ((peer)); then
  systemctl disable --now memqosd.service >/dev/null 2>&1 || true
  systemctl is-active --quiet memqosd.service && fail "memqosd is still active after disable --now"
  log "memqosd stopped: $(systemctl is-active memqosd.service || true)"
  slice_unit online.slice "${online_slice_lines[@]}"
  slice_unit batch.slice "${batch_slice_lines[@]}"
  systemctl daemon-reload
  if [[ -n $contender_unit ]]; then
    systemctl start "$contender_unit"
    wait_for 30 "$contender_unit active" systemctl is-active --quiet "$contender_unit"
  fi
else
  wait_for 90 "memqosd active" systemctl is-active --quiet memqosd.service
  wait_for 30 "org.memqos1 on the bus" busctl status org.memqos1
fi
log "contender $CONTENDER set up (unit: ${contender_unit:-none}), variant $VARIANT: W=${W}MiB period=${PERIOD}s retouch=${RETOUCH:-no}"

ocg=/sys/fs/cgroup/$online_slice/online.service
bcg=/sys/fs/cgroup/$batch_slice/batch.service
bscg=/sys/fs/cgroup/$batch_slice
pcg=/sys/fs/cgroup/system.slice/probe.service

# ---------------------------------------------------------------- sampler
surge-touch sample --interval 0.5 --out "$D/samples.txt" \
  psi=/proc/pressure/memory meminfo=/proc/meminfo \
  on_cur=$ocg/memory.current on_swap=$ocg/memory.swap.current on_min=$ocg/memory.min on_procs=$ocg/cgroup.procs \
  pr_cur=$pcg/memory.current pr_swap=$pcg/memory.swap.current pr_procs=$pcg/cgroup.procs \
  b_cur=$bcg/memory.current b_swap=$bcg/memory.swap.current b_events=$bcg/memory.events b_procs=$bcg/cgroup.procs \
  bs_cur=$bscg/memory.current bs_high=$bscg/memory.high bs_max=$bscg/memory.max bs_events=$bscg/memory.events \
  os_psi=/sys/fs/cgroup/$online_slice/memory.pressure sys_psi=/sys/fs/cgroup/system.slice/memory.pressure &
sampler=$!
trap 'kill $sampler 2>/dev/null || true' EXIT

# ---------------------------------------------------------------- probe, online
systemd-run --quiet --unit=probe.service /usr/local/bin/probe-touch touch \
  --mib 20 --chunk-mib 4 --period 0.1 --out $D/probe.rec --ready $D/probe.ready
online_cmd=(/usr/local/bin/online-touch touch --mib $W --chunk-mib 4 --period $PERIOD --out $D/online.rec --ready $D/online.ready)
if ((peer)); then
  systemd-run --quiet --unit=online.service --slice=online.slice "${online_props[@]}" "${online_cmd[@]}"
else
  memqosctl run --name online --class dedicated --request ${REQ}M -- "${online_cmd[@]}" >/dev/null
fi
wait_for 120 "probe filled" test -e $D/probe.ready
wait_for 180 "online filled (${W} MiB)" test -e $D/online.ready
if [[ $CONTENDER == memqosd || $CONTENDER == *-min ]]; then
  wait_for 30 "memory.min set on online.service" bash -c "(( \$(cat $ocg/memory.min) > 0 ))"
fi
log "online and probe running; online memory.current=$(cat $ocg/memory.current) memory.min=$(cat $ocg/memory.min)"

# ---------------------------------------------------------------- warm-up, batch, window
sleep $WARMUP
oom_before=$(awk '/^oom_kill / {print $2}' /proc/vmstat)
psi_before=$(cat /proc/pressure/memory | tr '\n' '|')
t_batch=$(now)
systemd-run --quiet --unit=batch.service --slice=${batch_slice##*/} /usr/local/bin/batch-touch batch \
  --step-mib $STEP --interval $INTERVAL $RETOUCH --out $D/batch.rec
log "batch started at t=$t_batch; window ${WINDOW}s"
sleep "$(awk -v t="$t_batch" -v n="$(now)" -v w=$WINDOW 'BEGIN { d = t + w - n; print (d > 0 ? d : 0) }')"
t_end=$(now)
oom_after=$(awk '/^oom_kill / {print $2}' /proc/vmstat)
psi_after=$(cat /proc/pressure/memory | tr '\n' '|')
# Whether batch is still alive, then end it at once through its cgroup (a
# thrashing guest would take minutes for the collection otherwise); its unit
# state below is therefore not its fate: batch_procs_end is.
batch_procs_end=$(wc -l <$bcg/cgroup.procs 2>/dev/null || echo 0)
if ((batch_procs_end > 0)) && [[ -e $bcg/cgroup.kill ]]; then echo 1 >$bcg/cgroup.kill || true; fi
log "window over at t=$t_end; oom_kill $oom_before -> $oom_after; batch processes at the end: $batch_procs_end"

# ---------------------------------------------------------------- collect
show() { systemctl show -p ActiveState,SubState,Result,ExecMainStatus,ExecMainCode,NRestarts,MainPID "$1" 2>&1 | tr '\n' ' '; }
{
  echo "contender=$CONTENDER"
  echo "variant=$VARIANT"
  echo "W_mib=$W period_s=$PERIOD step_mib=$STEP interval_s=$INTERVAL retouch=$([[ $RETOUCH == --retouch ]] && echo 1) warmup_s=$WARMUP window_s=$WINDOW request_mib=$REQ"
  echo "batch_args=${RETOUCH// /_}"
  if [[ $CONTENDER == memqosd ]]; then echo "memqosd_dropins=$(cat /etc/memqos/memqosd.conf.d/*.conf 2>/dev/null | tr '\n' '|')"; fi
  echo "t_batch=$t_batch"
  echo "t_end=$t_end"
  echo "oom_before=$oom_before"
  echo "oom_after=$oom_after"
  echo "psi_before=$psi_before"
  echo "psi_after=$psi_after"
  echo "online_state=$(show online.service)"
  echo "batch_state=$(show batch.service)"
  echo "batch_procs_end=$batch_procs_end"
  echo "probe_state=$(show probe.service)"
  if [[ -n $contender_unit ]]; then echo "contender_state=$(show "$contender_unit")"; fi
  echo "memqosd_state=$(systemctl is-active memqosd.service || true)"
  echo "online_cgroup=$ocg"
  echo "batch_cgroup=$bcg"
} >"$D/meta.txt"
kill $sampler 2>/dev/null || true
systemctl kill --signal=KILL batch.service 2>/dev/null || true
systemctl stop online.service probe.service 2>/dev/null || true

if [[ -n $contender_unit ]]; then
  journalctl -b -u "$contender_unit" -o short-monotonic --no-pager >"$D/contender.journal" 2>&1 || true
fi
journalctl -b -k -o short-monotonic --no-pager >"$D/kernel.log" 2>&1 || true
journalctl -b -u online.service -u batch.service -u probe.service -o short-monotonic --no-pager >"$D/units.journal" 2>&1 || true
if [[ $CONTENDER == memqosd ]]; then
  memqosctl events --json >"$D/memqos-events.json" 2>&1 || true
fi
if [[ $CONTENDER == oomd-systemd* ]]; then oomctl dump >"$D/oomctl.txt" 2>&1 || true; fi
systemctl show -p MemoryMin,MemoryLow,MemoryHigh,MemoryMax system.slice online.slice batch.slice >"$D/slices.txt" 2>&1 || true
for f in meta.txt samples.txt online.rec probe.rec batch.rec contender.journal kernel.log units.journal memqos-events.json oomctl.txt slices.txt; do
  if [[ -e $D/$f ]]; then cp "$D/$f" "$art/"; fi
done
cat "$D/meta.txt"
log "artifacts written: $(ls "$art" | tr '\n' ' ')"

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The test bed for Ganeti KVM instances as workloads, then memqosd's balloon
# on it: a diskless Ganeti 3.0 instance of the kvm hypervisor runs under TCG
# (kvm_flag=disabled, kvm_path=qemu-system-x86_64: Debian's /usr/bin/kvm
# forces -enable-kvm), booting the image's kernel and tiny-initrd.img (see
# tests/vm/README.md, "Tiny nested guests"), without NICs. With memqosd
# stopped (these are the facts before any adoption; its hooks fall back to
# "allow", the WhenUnreachable default): its QEMU has Ganeti's pidfile and
# runs in ganeti.service's cgroup (Ganeti's daemons are moved under the
# SysV-generated ganeti.service first, as on a node booted with them); the
# HMP monitor socket answers `info balloon`, and `balloon N` moves the
# guest's balloon. Then with memqosd (the instance recorded with
# `memqosctl record-instance`, placed by [VM] DefaultClass=reclaimed): at
# pressure level 2 (forced by a drop-in: this proves the action; 67-vm-ladder
# reaches level 2 with real memory use, for a libvirt domain) memqosd shrinks
# the balloon through HMP in steps, never below the request (minmem), and
# gives it back once the level is 0 again. Prints MEASURE: lines.
#   tests/vm/run --flavour ganeti --deb DEB --mem 3072 --timeout 1200 --suite tests/vm/ganeti-cases
set -euo pipefail
. "$(dirname "$0")/lib-ganeti.bash"

INST=inst9.example.test
KVMDIR=/var/run/ganeti/kvm-hypervisor
PIDFILE=$KVMDIR/pid/$INST
MONITOR=$KVMDIR/ctrl/$INST.monitor
SERIAL=$KVMDIR/ctrl/$INST.serial
INITRD=/usr/local/share/memqos-test/tiny-initrd.img
KERNEL=/usr/local/share/memqos-test/tiny-vmlinux
SERIAL_LOG=/var/log/memqos-tiny/ganeti-$INST.log
MEM=256 TARGET=160

[[ -r $KERNEL && -r $INITRD ]] ||
    gnt_fail "no $KERNEL or $INITRD in the image (old image? rebuild: tests/vm/build-image --flavour ganeti)"

reader_pid='' restart_memqosd=0
cleanup() {
    if [[ -n $reader_pid ]]; then kill "$reader_pid" 2>/dev/null || true; fi
    if gnt-instance list --no-headers -o name "$INST" >/dev/null 2>&1; then
        gnt-instance remove -f --shutdown-timeout=0 "$INST" >/dev/null 2>&1 || true
    fi
    if ((restart_memqosd)); then systemctl start memqosd || true; fi
}
trap cleanup EXIT
if systemctl is-active --quiet memqosd; then
    systemctl stop memqosd
    restart_memqosd=1
    ok "memqosd stopped for this case"
fi

# hmp COMMAND: run one HMP command on the instance's monitor socket, print
# its answer (without the echo and the prompt).
hmp() {
    python3 - "$MONITOR" "$1" <<'PY'
import re, socket, sys
path, cmd = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(60)
s.connect(path)
def until_prompt():
    buf = b""
    while not buf.endswith(b"(qemu) "):
        d = s.recv(4096)
        if not d:
            break
        buf += d
    return buf
until_prompt()
s.sendall(cmd.encode() + b"\n")
out = until_prompt().decode(errors="replace")
out = re.sub(r"\x1b\[[0-9;]*[A-Za-z]|\x1b[A-Za-z]", "", out)  # readline's echo
lines = [l.strip() for l in out.replace("\r", "\n").split("\n")]
print("\n".join(l for l in lines if l and l != "(qemu)" and not l.startswith(cmd) and cmd not in l))
PY
}
balloon_actual() { hmp "info balloon" | sed -n 's/.*actual=\([0-9]*\).*/\1/p'; }
cgroup_of() { sed -n 's/^0:://p' "/proc/$1/cgroup"; }

ganeti_cluster_up

# Ganeti's daemons under ganeti.service (the SysV-generated unit; the image
# masks it because there is no cluster at boot). gnt-cluster init started
# them from this case, i.e. in the autorun's cgroup.
noded_cg() { cgroup_of "$(cat /var/run/ganeti/ganeti-noded.pid)"; }
if [[ $(noded_cg) != /system.slice/ganeti.service ]]; then
    t0=$(ms)
    /usr/lib/ganeti/daemon-util stop-all || gnt_fail "daemon-util stop-all failed"
    systemctl unmask ganeti.service >/dev/null 2>&1 || true
    systemctl daemon-reload
    systemctl start ganeti.service ||
        gnt_fail "systemctl start ganeti.service failed: $(systemctl status --no-pager ganeti.service 2>&1 | tail -n 20)"
    end=$((SECONDS + 120))
    until gnt-cluster getmaster >/dev/null 2>&1; do
        ((SECONDS < end)) || { _gnt_logs_tail 30; gnt_fail "the master does not answer 120 s after starting ganeti.service"; }
        sleep 0.5
    done
    echo "MEASURE: ganeti: daemons restarted under ganeti.service in $(secs "$t0") s"
fi
[[ $(noded_cg) == /system.slice/ganeti.service ]] || gnt_fail "ganeti-noded is in '$(noded_cg)', not ganeti.service"
ok "Ganeti's daemons run in /system.slice/ganeti.service"

# Enable the kvm hypervisor (fake stays the default) with TCG-friendly params.
t0=$(ms)
gnt-cluster modify --enabled-hypervisors=fake,kvm \
    -H "kvm:kvm_path=/usr/bin/qemu-system-x86_64,kvm_flag=disabled,kernel_path=$KERNEL,initrd_path=$INITRD,kernel_args=ro quiet,serial_console=true" ||
    gnt_fail "gnt-cluster modify --enabled-hypervisors=fake,kvm failed"
echo "MEASURE: ganeti: gnt-cluster modify (enable kvm) $(secs "$t0") s"
gnt-cluster info | sed -n '/^ *kvm:/,/^ *[a-z]*:$/p' | grep -E 'kvm_path|kvm_flag|kernel_path|initrd_path|serial_console|kernel_args' | sed 's/^/  /' || true

t0=$(ms)
ganeti_add "${INST%%.*}" "${MEM}M" "${MEM}M" -H kvm --no-nics --ignore-ipolicy ||
    { _gnt_logs_tail 40; gnt_fail "gnt-instance add of a kvm instance failed (output and log tails above)"; }
echo "MEASURE: ganeti: gnt-instance add (kvm, diskless, started) $(secs "$t0") s"

# Follow the serial console (a unix socket server; output before a client
# connects is lost, the kernel is quiet until the marker).
mkdir -p "${SERIAL_LOG%/*}"
: >"$SERIAL_LOG"
python3 - "$SERIAL" "$SERIAL_LOG" <<'PY' &
import socket, sys, time
path, log = sys.argv[1], sys.argv[2]
for _ in range(600):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        break
    except OSError:
        time.sleep(0.1)
with open(log, "ab", buffering=0) as f:
    while True:
        d = s.recv(4096)
        if not d:
            break
        f.write(d)
PY
reader_pid=$!

[[ -s $PIDFILE ]] || gnt_fail "no pidfile $PIDFILE"
pid=$(cat "$PIDFILE")
[[ -d /proc/$pid ]] || gnt_fail "pid $pid of $PIDFILE does not run"
exe=$(readlink "/proc/$pid/exe")
[[ $exe == /usr/bin/qemu-system-x86_64 ]] || gnt_fail "pid $pid is '$exe', expected QEMU"
tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "-pidfile $PIDFILE" ||
    gnt_fail "QEMU pid $pid has no '-pidfile $PIDFILE': $(tr '\0' ' ' <"/proc/$pid/cmdline")"
ok "QEMU of $INST: pid $pid from $PIDFILE"
echo "  cmdline: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
cg=$(cgroup_of "$pid")
[[ $cg == /system.slice/ganeti.service ]] ||
    gnt_fail "QEMU of $INST is in '$cg', expected /system.slice/ganeti.service (ganeti-noded's)"
ok "QEMU of $INST in $cg"
status=$(gnt-instance list --no-headers -o status "$INST")
[[ $status == running ]] || gnt_fail "gnt-instance list says '$status', expected running"
ok "gnt-instance list: $INST running"

[[ -S $MONITOR ]] || gnt_fail "no monitor socket $MONITOR"
t0=$(ms)
answer=$(hmp "info balloon") || gnt_fail "the HMP monitor $MONITOR does not answer"
[[ $answer == *"actual=$MEM"* ]] || gnt_fail "info balloon says '$answer', expected actual=$MEM"
ok "HMP $MONITOR: info balloon -> $answer ($(secs "$t0") s)"

# The guest: the console marker, then the balloon really moves.
t_up=$(ms)
end=$((SECONDS + 600))
until grep -q 'memqos-tiny: up' "$SERIAL_LOG"; do
    ((SECONDS < end)) || { tail -n 20 "$SERIAL_LOG" >&2; gnt_fail "no 'memqos-tiny: up' on the serial console of $INST after 600 s"; }
    [[ -d /proc/$pid ]] || gnt_fail "QEMU of $INST ended before the marker"
    sleep 0.5
done
echo "MEASURE: ganeti: kvm instance start (add returned) to console marker $(secs "$t_up") s"
marker=$(grep -m1 'memqos-tiny: up' "$SERIAL_LOG")
ok "$INST is up: $marker"
[[ $marker == *balloon=yes* ]] || gnt_fail "$INST has no virtio balloon driver bound: '$marker'"

t0=$(ms)
hmp "balloon $TARGET" >/dev/null
end=$((SECONDS + 180))
until a=$(balloon_actual) && [[ -n $a ]] && ((a <= TARGET + 1)); do
    ((SECONDS < end)) || gnt_fail "balloon actual is '$a' MiB 180 s after 'balloon $TARGET'"
    sleep 0.5
done
echo "MEASURE: ganeti: HMP balloon ${MEM} -> ${TARGET} MiB, actual moved in $(secs "$t0") s"
ok "info balloon: actual=$a after 'balloon $TARGET'"

echo "--- with memqosd: level 2 shrinks the balloon through HMP, level 0 gives it back"
# Ganeti's own balloon, back to the instance's memory first.
hmp "balloon $MEM" >/dev/null
wait_actual() { # wait_actual SECS WHAT TEST: TEST (an arithmetic test of $a) holds
    local end=$((SECONDS + $1)) what=$2 test=$3
    until a=$(balloon_actual) && [[ -n $a ]] && (($test)); do
        ((SECONDS < end)) || gnt_fail "balloon actual is '$a' MiB after $1 s waiting for: $what"
        sleep 2 # memqosd's HMP connections share the monitor socket
    done
}
wait_actual 180 "actual back at $MEM MiB before memqosd starts" "a >= MEM - 1"
dropin=/etc/memqos/memqosd.conf.d
cleanup_memqosd() { rm -f "$dropin/20-class.conf" "$dropin/20-level2.conf"; }
# (On the way out after a failure: the record too; the remove post-hook
# forgets it on the way through.)
trap 'cleanup_memqosd; memqosctl forget-instance "$INST" >/dev/null 2>&1 || true; cleanup' EXIT
mkdir -p "$dropin"
systemctl start memqosd
restart_memqosd=0
wait_memqosd
memqosctl record-instance "$INST" --max "${MEM}M" --min 128M --up >/dev/null ||
    gnt_fail "memqosctl record-instance $INST failed"
printf '[VM]\nDefaultClass=reclaimed\n' >"$dropin/20-class.conf"
memqosd --check-config >/dev/null || gnt_fail "the DefaultClass drop-in does not pass --check-config"
systemctl reload memqosd
want=/memqos.slice/memqos-reclaimed.slice/memqos-vm-$INST.scope
end=$((SECONDS + 60))
until [[ $(cgroup_of "$pid") == "$want" ]]; do
    ((SECONDS < end)) || gnt_fail "QEMU of $INST is in '$(cgroup_of "$pid")' 60 s after the reload, expected $want"
    sleep 0.5
done
ok "QEMU of $INST adopted into $want"
since=$(date '+%Y-%m-%d %H:%M:%S')
t0=$(ms)
cp "$(dirname "$0")/level2-forced.conf" "$dropin/20-level2.conf"
memqosd --check-config >/dev/null || gnt_fail "the level-2 drop-in does not pass --check-config"
systemctl reload memqosd
wait_actual 180 "memqosd's first balloon move (below $MEM MiB)" "a < MEM"
echo "MEASURE: ganeti: level-2 drop-in reload to the first HMP balloon move by memqosd: $(secs "$t0") s (actual $a MiB)"
wait_actual 120 "the balloon at the request, 128 MiB" "a <= 129"
journalctl -u memqosd -o cat --since "$since" | grep -q "Moved the balloon of vm:$INST" ||
    gnt_fail "no 'Moved the balloon of vm:$INST' in memqosd's journal"
sleep 10 # several more ticks at level 2: never below the request
a=$(balloon_actual) || gnt_fail "the HMP monitor $MONITOR does not answer"
((a >= 127)) || gnt_fail "memqosd ballooned $INST to $a MiB, below its request of 128 MiB"
[[ $(busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager PressureLevel) == 'u 2' ]] ||
    gnt_fail "the level is not 2: $(busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager PressureLevel)"
echo "MEASURE: ganeti: memqosd's moves: $(journalctl -u memqosd -o cat --since "$since" | grep "Moved the balloon of vm:$INST" | sed 's/: .*//; s/.* from //' | tr '\n' ';')"
ok "memqosd shrank $INST's balloon to $a MiB at level 2 (request 128 MiB)"
t0=$(ms)
rm "$dropin/20-level2.conf"
systemctl reload memqosd
wait_actual 240 "the balloon given back ($MEM MiB)" "a >= MEM - 1"
echo "MEASURE: ganeti: level-2 drop-in removed to the balloon given back: $(secs "$t0") s"
ok "$INST's balloon back at $a MiB at level 0"
cleanup_memqosd
systemctl reload memqosd

t0=$(ms)
gnt-instance remove -f --shutdown-timeout=0 "$INST" || gnt_fail "gnt-instance remove failed"
echo "MEASURE: ganeti: gnt-instance remove (kvm) $(secs "$t0") s"
[[ ! -d /proc/$pid ]] || gnt_fail "QEMU pid $pid still runs after gnt-instance remove"
# Its record goes with its remove post-hook; should Ganeti's RPC to the node
# have failed, the next case must not find it (as an operator would mend it).
memqosctl forget-instance "$INST" >/dev/null 2>&1 || true
ok "gnt-instance remove ended QEMU"

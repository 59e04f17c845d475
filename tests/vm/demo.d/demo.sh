#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A new operator's path through memqos, as README.md's quickstart tells it,
# with the README's own commands in its order; runs as root inside the test
# VM (tests/vm/demo), which boots WITHOUT memqos installed and passes the
# .deb as a file (the working directory):
#
#   1. dry run on before the package starts memqosd;  2. install (apt);
#   3. plan (memqosd --check-config --print);  4. place a service, still in
#   dry run;  5. read what memqosd would do (journal, memqosctl);  6. let it
#   act (DryRun off, reload);  7. place a VM (a tiny libvirt domain);
#   8. a memory surge, a kill, and finding out why (memqosctl events and
#   status, journalctl);  9. removal (apt purge) and what is given back.
#
# Each command is printed before it runs. The checks that the README's
# promises hold (nothing applied in dry run, tiers once it acts, the kill on
# record, everything given back after the purge) print "ok:" or "NOT:"; the
# demo exits 1 if any NOT was printed.
set -euo pipefail

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }
say() { printf '\n\033[1m# %s\033[0m\n' "$*"; }
bad=0
check() { # check DESCRIPTION CMD...: prints ok or NOT, counts NOTs
    local what=$1
    shift
    if "$@" >/dev/null 2>&1; then echo "ok: $what"; else echo "NOT: $what"; bad=$((bad + 1)); fi
}
# wait_until SECONDS CMD...: retries CMD every 0.5 s
wait_until() {
    local end=$((SECONDS + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < end)) || return 1
        sleep 0.5
    done
}
tiers() { systemctl show "$1" -p MemoryMin -p MemoryLow -p MemoryHigh -p MemoryMax -p MemorySwapMax; }

debs=(memqos_*_amd64.deb)
[[ -f ${debs[0]} ]] || { echo "demo: no memqos_*_amd64.deb beside the script" >&2; exit 2; }
mkdir -p /root/build-deb-out
cp "${debs[0]}" /root/build-deb-out/
cd /root
deb=./build-deb-out/${debs[0]##*/}

say "A Debian 12 host: systemd with cgroup v2 and PSI, no memqos yet."
step systemctl --version
step cat /proc/pressure/memory
check "memqos is not installed" bash -c '! dpkg-query -W memqos'

say "A service the operator wants to place (a stand-in for a web server), and what it has now:"
step systemd-run --unit=web.service /bin/sleep infinity
web_pid=$(systemctl show -p MainPID --value web.service)
web_before=$(tiers web.service)
slice_before=$(systemctl show system.slice -p MemoryMin -p MemoryLow)
adj_before=$(cat "/proc/$web_pid/oom_score_adj")
echo "$web_before"
echo "oom_score_adj of its process: $adj_before"

say "Quickstart 1. Turn dry run on before the package starts memqosd."
step mkdir -p /etc/memqos/memqosd.conf.d
printf '\n\033[1m$ %s\033[0m\n' "printf '[Manager]\nDryRun=yes\n' > /etc/memqos/memqosd.conf.d/00-dry-run.conf"
printf '[Manager]\nDryRun=yes\n' >/etc/memqos/memqosd.conf.d/00-dry-run.conf

say "Quickstart 2. Install."
step apt install -y "$deb"
step systemctl status memqosd
step memqosctl status
check "memqosctl status says Dry run yes" bash -c 'memqosctl status | grep -Eq "Dry run: *yes"'

say "Quickstart 3. Plan: the effective configuration and what each class would give a workload."
step memqosd --check-config --print || echo "(memqosd --check-config exited $?)"

say "Quickstart 4. Place a workload, still in dry run."
step memqosctl classes
step memqosctl assign web.service shared --request 256M --limit 1G
step memqosctl workloads
sleep 3 # a tick or two

say "Quickstart 5. Read what memqosd would do: nothing is applied yet."
step journalctl -u memqosd -g 'Would|would' || true
step memqosctl top --batch --iterations 1 || true
step systemctl show web.service -p MemoryLow -p MemoryHigh -p MemoryMax
check "dry run: web.service's tiers are what they were" test "$(tiers web.service)" == "$web_before"
check "dry run: its oom_score_adj is what it was" test "$(cat "/proc/$web_pid/oom_score_adj")" == "$adj_before"
check "the journal says what it would set on web.service (MemoryLow 256M, MemoryMax 1G)" \
    journalctl -u memqosd -g 'Dry run: would set memory properties of web.service: .*MemoryLow=256.0 MiB .*MemoryMax=1.0 GiB'
check "the journal says what it would set on web.service's processes" \
    journalctl -u memqosd -g 'Would set oom_score_adj=[0-9-]+ on the 1 processes of web.service'
check "memqosctl workloads shows the tiers it would get (LOW 256M, MAX 1G)" \
    bash -c 'memqosctl workloads | grep -Eq "^web.service +service +shared +256M +1G +0 +256M +[0-9.]+[KMG] +1G "'

say "Quickstart 6. Let it act: remove the drop-in and reload."
step rm /etc/memqos/memqosd.conf.d/00-dry-run.conf
step systemctl reload memqosd
wait_until 30 journalctl -u memqosd -g 'Dry run off' || true
step journalctl -u memqosd -g 'Dry run off' -o cat || true
step memqosctl workloads
wait_until 30 bash -c '[[ $(systemctl show -p MemoryLow --value web.service) != 0 ]]' || true
step systemctl show web.service -p MemoryLow -p MemoryHigh -p MemoryMax
check "acting: web.service got MemoryLow 256M (its request)" \
    test "$(systemctl show -p MemoryLow --value web.service)" == $((256 << 20))
check "acting: web.service got MemoryMax 1G (its limit)" \
    test "$(systemctl show -p MemoryMax --value web.service)" == $((1 << 30))

say "Quickstart 7. Place a VM: libvirt domains are workloads vm:NAME, observed until placed."
step systemctl start libvirtd
step memqos-tiny-domain define web-vm 256
step virsh -c qemu:///system start web-vm
# memqosd reconnects to libvirt with backoff (at most 30 s) and lists it.
if ! wait_until 120 bash -c 'memqosctl workloads | grep -q "^vm:web-vm "'; then
    step memqosctl workloads
    echo "NOT: vm:web-vm listed by memqosd within 120 s"
    exit 1
fi
step memqosctl workloads
vm_unit=$(memqosctl show vm:web-vm -p Unit --value)
vm_before=$(tiers "$vm_unit")
step memqosctl assign vm:web-vm dedicated --request 128M --limit 512M
wait_until 30 bash -c "[[ \$(systemctl show -p MemoryMax --value '$vm_unit') == $((512 << 20)) ]]" || true
step memqosctl status vm:web-vm
step systemctl show "$vm_unit" -p MemoryMin -p MemoryMax
check "vm:web-vm's scope got MemoryMin 128M and MemoryMax 512M" bash -c \
    "[[ \$(systemctl show -p MemoryMin --value '$vm_unit') == $((128 << 20)) && \$(systemctl show -p MemoryMax --value '$vm_unit') == $((512 << 20)) ]]"
check "the assignment is in the domain's definition (persistent)" \
    bash -c 'virsh -c qemu:///system dumpxml --inactive web-vm | grep -q "memqos:workload"'

say "8. A memory surge. online (dedicated, protected) re-touches 200 MiB every second; hog
# (reclaimed) grabs 50 MiB every 0.5 s and never frees it. memqosd caps the reclaimed class
# and, once the hog stalls at its cap, kills it as a whole unit, before the kernel's OOM killer."
online_py='
import mmap, time
m = mmap.mmap(-1, 200 << 20)
while True:
    for i in range(0, 200 << 20, 4096):
        m[i] = (m[i] + 1) & 255
    time.sleep(1)
'
hog_py='
import time
held = []
while True:
    held.append(b"x" * (50 << 20))
    time.sleep(0.5)
'
step memqosctl run --name online --class dedicated --request 264M -- /usr/bin/python3 -c "$online_py"
step systemd-run --unit=hog.service --slice=memqos-reclaimed.slice /usr/bin/python3 -c "$hog_py"
oom_before=$(awk '/^oom_kill / {print $2}' /proc/vmstat)
hog_cg=/sys/fs/cgroup/memqos.slice/memqos-reclaimed.slice/hog.service
t0=$SECONDS
while [[ $(systemctl show -p Result --value hog.service) != signal ]] && ((SECONDS - t0 < 240)); do
    printf '  t=%3ds  hog %4d MiB (swap %4d MiB)  reclaimed cap %s  level %s\n' $((SECONDS - t0)) \
        $(($(cat "$hog_cg/memory.current" 2>/dev/null || echo 0) >> 20)) \
        $(($(cat "$hog_cg/memory.swap.current" 2>/dev/null || echo 0) >> 20)) \
        "$(cat /sys/fs/cgroup/memqos.slice/memqos-reclaimed.slice/memory.high)" \
        "$(memqosctl show -p PressureLevel --value)"
    sleep 1
done
echo "# hog ended after $((SECONDS - t0)) s; kernel OOM kills: $(($(awk '/^oom_kill / {print $2}' /proc/vmstat) - oom_before))"

say "Troubleshooting 2: was it killed by memqos, and why?"
step systemctl status hog.service --lines=0 || true
step memqosctl events
step journalctl -x MESSAGE_ID=4d8a0f6b9c5e4b7f8a2e1c3d5b7a9e01 || true
say "Troubleshooting 1: is memqosd running, and in what state? The protected ones are untouched."
step memqosctl status
step memqosctl status online.service
check "memqosctl events lists the kill of hog.service" bash -c 'memqosctl events | grep -q "hog.service"'
check "online.service (dedicated) still runs" systemctl is-active online.service
check "vm:web-vm (dedicated) still runs" \
    bash -c '[[ $(virsh -c qemu:///system domstate web-vm) == running ]]'

say "9. Removal: apt purge gives back what memqos changed (prerm: memqosctl release --all)."
web_acting=$(tiers web.service)
step apt purge -y memqos
step systemctl is-active memqosd || true
step systemctl show web.service -p MemoryMin -p MemoryLow -p MemoryHigh -p MemoryMax -p MemorySwapMax
step cat "/proc/$web_pid/oom_score_adj"
step systemctl show system.slice -p MemoryMin -p MemoryLow
step systemctl show "$vm_unit" -p MemoryMin -p MemoryMax
step ls /run/systemd/system.control/ || true
say "Runtime drop-ins still marked '# memqos:' (slices get their own values back; see README's Removal):"
grep -rl '^# memqos:' /run/systemd/system.control/ /run/systemd/transient/ 2>/dev/null |
    while read -r f; do echo "  $f: $(grep -v '^#' "$f" | tr '\n' ' ')"; done || true
check "memqosd is stopped" bash -c '! systemctl is-active --quiet memqosd'
check "web.service has its own tiers back (was: ${web_acting//$'\n'/ })" \
    test "$(tiers web.service)" == "$web_before"
check "its process has its own oom_score_adj back ($adj_before)" \
    test "$(cat "/proc/$web_pid/oom_score_adj")" == "$adj_before"
check "system.slice has its own protection back" \
    test "$(systemctl show system.slice -p MemoryMin -p MemoryLow)" == "$slice_before"
check "vm:web-vm's scope has its own values back" test "$(tiers "$vm_unit")" == "$vm_before"
check "the domain's definition has neither memqos's metadata nor its partition" \
    bash -c '! virsh -c qemu:///system dumpxml --inactive web-vm | grep -Eq "memqos:workload|<partition>/memqos"'
check "no runtime drop-in marked '# memqos:' is left on web.service or the VM's scope" \
    bash -c "! grep -rlqs '^# memqos:' /run/systemd/system.control/web.service.d '/run/systemd/system.control/$vm_unit.d'"
check "/var/lib/memqos and /etc/memqos/memqosd.conf are gone" \
    bash -c '[[ ! -e /var/lib/memqos && ! -e /etc/memqos/memqosd.conf ]]'

virsh -c qemu:///system destroy web-vm >/dev/null 2>&1 || true
echo
if ((bad)); then
    echo "demo: $bad of the README's promises did not hold (NOT: above)"
    exit 1
fi
echo "demo: every promise checked held"

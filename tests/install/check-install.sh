#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# check-install.sh — `meson install --destdir` of this build tree into a
# temporary directory, then: the installed files are exactly the expected
# ones (no more, no fewer), the installed memqosd and Ganeti hook name as
# their default configuration the file that was installed (so an install and
# its daemon agree, whatever the prefix), that file passes --check-config, the
# hook wrappers exec the installed hook program and the unit's ExecStart is
# the installed memqosd. Reads nothing of this host's /etc.
#
#   check-install.sh MESON BUILD_ROOT KEY=ABSOLUTE_DIR... [file=ABSOLUTE_PATH...]
#   keys: prefix bindir sbindir libexecdir sysconfdir datadir mandir unitdir
#         dbuspolicydir ganetihooksdir ganetiiallocatordir; file= adds a file to the expected list
#
# TAP output; exit 0 when every check passed.
set -uo pipefail

meson=$1 build=$2
shift 2
declare -A dir
more=()
for kv in "$@"; do
    if [[ $kv == file=* ]]; then more+=("${kv#file=}"); else dir[${kv%%=*}]=${kv#*=}; fi
done
for k in prefix bindir sbindir libexecdir sysconfdir datadir mandir unitdir dbuspolicydir ganetihooksdir ganetiiallocatordir; do
    [[ ${dir[$k]:-} == /* ]] || { echo "Bail out! $k is not given as an absolute directory"; exit 1; }
done

dest=$(mktemp -d "${TMPDIR:-/tmp}/memqos-install-test.XXXXXX")
trap 'rm -rf "$dest"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { # not_ok TITLE [DETAIL...]: each line of each DETAIL as a TAP comment
    n=$((n + 1)) failed=$((failed + 1))
    echo "not ok $n - $1"
    shift
    local d
    for d in "$@"; do sed 's/^/# /' <<<"$d"; done
}

if ! out=$("$meson" install -C "$build" --no-rebuild --quiet --destdir "$dest" 2>&1); then
    echo "Bail out! meson install --destdir failed: $out"
    exit 1
fi
ok "meson install --destdir $dest"

# 1. The file list.
hooks=(instance-add-pre instance-start-pre instance-modify-pre instance-migrate-pre
       instance-failover-pre instance-add-post instance-start-post instance-stop-post
       instance-modify-post instance-remove-post instance-rename-post
       instance-migrate-post instance-failover-post)
conf=${dir[sysconfdir]}/memqos/memqosd.conf
hook=${dir[libexecdir]}/memqos/memqos-ganeti-hook
iallocator=${dir[libexecdir]}/memqos/memqos-iallocator
cluster=${dir[libexecdir]}/memqos/memqos-cluster
expected=(
    "${dir[bindir]}/memqosctl"
    "${dir[sbindir]}/memqosd"
    "$hook"
    "$iallocator"
    "${dir[ganetiiallocatordir]}/memqos"
    "$cluster"
    "${dir[sbindir]}/memqos-cluster"
    "$conf"
    "${dir[unitdir]}/memqosd.service"
    "${dir[unitdir]}/memqos.slice"
    "${dir[unitdir]}/memqos-system.slice"
    "${dir[unitdir]}/memqos-dedicated.slice"
    "${dir[unitdir]}/memqos-shared.slice"
    "${dir[unitdir]}/memqos-reclaimed.slice"
    "${dir[prefix]}/lib/tmpfiles.d/memqos.conf"
    "${dir[prefix]}/lib/systemd/catalog/memqos.catalog"
    "${dir[dbuspolicydir]}/org.memqos1.conf"
    "${dir[datadir]}/dbus-1/system-services/org.memqos1.service"
    "${dir[datadir]}/dbus-1/interfaces/org.memqos1.Manager.xml"
    "${dir[datadir]}/dbus-1/interfaces/org.memqos1.Class.xml"
    "${dir[datadir]}/dbus-1/interfaces/org.memqos1.Workload.xml"
    "${dir[mandir]}/man1/memqosctl.1"
    "${dir[mandir]}/man5/memqosd.conf.5"
    "${dir[mandir]}/man8/memqosd.8"
    "${dir[mandir]}/man8/memqos-ganeti-hook.8"
    "${dir[mandir]}/man8/memqos-iallocator.8"
    "${dir[mandir]}/man8/memqos-cluster.8"
)
for h in "${hooks[@]}"; do expected+=("${dir[ganetihooksdir]}/$h.d/memqos"); done
expected+=("${more[@]}")
want=$(printf '%s\n' "${expected[@]}" | sort)
have=$(cd "$dest" && find . \( -type f -o -type l \) -printf '/%P\n' | sort)
if [[ $want == "$have" ]]; then
    ok "the ${#expected[@]} installed files are the expected ones"
else
    mapfile -t extra < <(comm -13 <(echo "$want") <(echo "$have"))
    mapfile -t missing < <(comm -23 <(echo "$want") <(echo "$have"))
    not_ok "installed files differ from the expected list" \
        "${extra[@]/#/installed but not expected: }" "${missing[@]/#/expected but not installed: }"
fi

# 2. The daemon and the hook read by default the configuration that was installed.
memqosd=$dest${dir[sbindir]}/memqosd
if help=$("$memqosd" --help 2>&1) && grep -qF -- "$conf and $conf.d/*.conf" <<<"$help"; then
    ok "memqosd --help names $conf (and its .d) as the default"
else
    not_ok "memqosd --help does not name the installed $conf as its default" "$help"
fi
if [[ -f $dest$conf ]]; then
    if out=$("$memqosd" --check-config --config "$dest$conf" --no-drop-ins 2>&1); then
        ok "the installed $conf passes memqosd --check-config"
    else
        not_ok "memqosd --check-config refuses the installed $conf" "$out"
    fi
else
    not_ok "$conf was not installed"
fi
if help=$("$dest$hook" --help 2>&1) && grep -qF -- "(default $conf)" <<<"$help"; then
    ok "memqos-ganeti-hook --help names $conf as the default"
else
    not_ok "memqos-ganeti-hook --help does not name the installed $conf as its default" "$help"
fi

# 3. What runs the programs finds them where they were installed.
bad=()
for h in "${hooks[@]}"; do
    w=$dest${dir[ganetihooksdir]}/$h.d/memqos
    [[ -x $w ]] || { bad+=("$w is not executable"); continue; }
    target=$(sed -n 's/^exec \([^ ]*\) .*/\1/p' "$w")
    [[ $target == "$hook" && -x $dest$target ]] || bad+=("$w execs '$target', not the installed $hook")
done
if ((${#bad[@]} == 0)); then
    ok "the ${#hooks[@]} Ganeti hook wrappers are executable and exec $hook"
else
    not_ok "Ganeti hook wrappers" "${bad[@]}"
fi
link=$(readlink "$dest${dir[ganetiiallocatordir]}/memqos")
if [[ $link == "$iallocator" && -x $dest$link ]]; then
    ok "${dir[ganetiiallocatordir]}/memqos links to the installed $iallocator"
else
    not_ok "${dir[ganetiiallocatordir]}/memqos links to '$link', not the installed $iallocator"
fi
link=$(readlink "$dest${dir[sbindir]}/memqos-cluster")
if [[ $link == "$cluster" && -x $dest$link ]]; then
    ok "${dir[sbindir]}/memqos-cluster links to the installed $cluster"
else
    not_ok "${dir[sbindir]}/memqos-cluster links to '$link', not the installed $cluster"
fi
execstart=$(sed -n 's/^ExecStart=//p' "$dest${dir[unitdir]}/memqosd.service")
if [[ $execstart == "${dir[sbindir]}/memqosd" ]]; then
    ok "memqosd.service's ExecStart is the installed ${dir[sbindir]}/memqosd"
else
    not_ok "memqosd.service's ExecStart is '$execstart', not ${dir[sbindir]}/memqosd"
fi
# The metrics file where memqosd.conf(5) suggests it (node_exporter's
# textfile directory on Debian) is writable under ProtectSystem=strict:
# the unit lists it in ReadWritePaths=, '-' so a host without it still starts.
metricsdir=$(sed -n 's|^\.BR \(/var/lib/prometheus/node\\-exporter\)/memqos\.prom ).*|\1|p' \
    "$dest${dir[mandir]}/man5/memqosd.conf.5" | sed 's/\\-/-/g')
rwpaths=$(sed -n 's/^ReadWritePaths=//p' "$dest${dir[unitdir]}/memqosd.service" | tr '\n' ' ')
if [[ -n $metricsdir && " $rwpaths " == *" -$metricsdir "* ]]; then
    ok "memqosd.service may write memqosd.conf(5)'s MetricsFile directory $metricsdir"
else
    not_ok "memqosd.service's ReadWritePaths= ($rwpaths) lack -${metricsdir:-<the MetricsFile directory of memqosd.conf(5)>}"
fi

echo "1..$n"
((failed == 0))

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The memqos .deb installed without network and its daemon checks configs.
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

status=$(dpkg-query -W -f='${db:Status-Abbrev} ${Version}' memqos 2>&1) || fail "package memqos is not known to dpkg: $status"
[[ $status == "ii "* ]] || fail "package memqos is not installed correctly: '$status'"
dpkg -s memqos >/dev/null || fail "dpkg -s memqos failed"
ok "memqos installed: $status"

[[ -x /usr/sbin/memqosd ]] || fail "/usr/sbin/memqosd is missing or not executable; the package has: $(dpkg -L memqos | tr '\n' ' ')"
ok "/usr/sbin/memqosd is there"

rc=0
memqosd --check-config >/tmp/check.out 2>&1 || rc=$?
((rc == 0)) || fail "memqosd --check-config (installed config) exited $rc, not 0: $(cat /tmp/check.out)"
ok "memqosd --check-config accepts the installed config"

printf '[Manager]\nInterval=abc\n' >/tmp/bad.conf
rc=0
memqosd --check-config --config /tmp/bad.conf >/tmp/check.out 2>&1 || rc=$?
((rc == 78)) || fail "memqosd --check-config --config /tmp/bad.conf exited $rc, not 78 (EX_CONFIG): $(cat /tmp/check.out)"
ok "a bad config is refused with 78: $(head -n1 /tmp/check.out)"

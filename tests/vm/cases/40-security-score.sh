#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The unit's hardening, as systemd-analyze scores it (lower is safer).
set -euo pipefail
source "$(dirname "$0")/lib.bash"
out=$(systemd-analyze security --no-pager memqosd.service 2>&1) || true
echo "$out" | tail -n 25
score=$(echo "$out" | sed -n 's/.*Overall exposure level for memqosd.service: \([0-9.]*\).*/\1/p')
[[ -n $score ]] || fail "systemd-analyze security printed no exposure level"
ok "exposure level $score"
awk -v s="$score" 'BEGIN { exit !(s <= 5.0) }' || fail "exposure $score is above 5.0 (MEDIUM or worse)"

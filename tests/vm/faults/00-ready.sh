#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The fault suite's boot: memqosd is up before any fault is injected.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
wait_memqosd
ok "memqosd $(busctl get-property org.memqos1 /org/memqos1 org.memqos1.Manager Version) on the bus"

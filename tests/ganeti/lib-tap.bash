# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# TAP for the Ganeti program tests: `check TITLE COMMAND...` prints
# "ok N - TITLE" or "not ok N - TITLE"; `tap_end` prints the plan and
# fails when a check did.
n=0 failed=0
check() { # check TITLE COMMAND...
    local title=$1
    shift
    n=$((n + 1))
    if "$@"; then echo "ok $n - $title"; else echo "not ok $n - $title"; failed=$((failed + 1)); fi
}
tap_end() {
    echo "1..$n"
    ((failed == 0))
}

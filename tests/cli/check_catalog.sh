#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Every fixed MESSAGE_ID memqosd logs (include/memqos/io/log.hpp) has an
# entry in the journal catalog (packaging/memqos.catalog), the catalog has no
# entry for an id memqosd does not use, every entry has the headers
# journalctl shows, and journalctl itself (when present) reads the file.
set -euo pipefail
top=${1:?usage: check_catalog.sh SOURCE_ROOT}
catalog=$top/packaging/memqos.catalog
ids=$(grep -o 'kMessage[A-Za-z]* = "[0-9a-f]\{32\}"' "$top/include/memqos/io/log.hpp" | grep -o '[0-9a-f]\{32\}' | sort)
cat_ids=$(sed -n 's/^-- \([0-9a-f]\{32\}\)$/\1/p' "$catalog" | sort)
[[ -n $ids ]] || { echo "FAIL: no MESSAGE_IDs found in log.hpp"; exit 1; }
if [[ $ids != "$cat_ids" ]]; then
  echo "FAIL: log.hpp ids and catalog ids differ (< log.hpp, > catalog)"
  diff <(echo "$ids") <(echo "$cat_ids") || true
  exit 1
fi
# Each entry: "-- ID", then Subject:, Defined-By: memqos and Support: headers.
bad=$(awk '
  /^-- / { if (id != "" && (!subj || !def || !sup)) print id; id = $2; subj = def = sup = 0; next }
  /^Subject: ./ { subj = 1 } /^Defined-By: memqos$/ { def = 1 } /^Support: ./ { sup = 1 }
  END { if (id != "" && (!subj || !def || !sup)) print id }' "$catalog")
if [[ -n $bad ]]; then
  echo "FAIL: entries without Subject:, Defined-By: memqos or Support: $bad"
  exit 1
fi
if command -v journalctl >/dev/null; then
  root=$(mktemp -d "${TMPDIR:-/tmp}/memqos-catalog.XXXXXX")
  trap 'rm -rf "$root"' EXIT
  mkdir -p "$root/usr/lib/systemd/catalog"
  cp "$catalog" "$root/usr/lib/systemd/catalog/memqos.catalog"
  journalctl --root="$root" --update-catalog
  listed=$(journalctl --root="$root" --list-catalog | awk '{ print $1 }' | sort)
  if [[ $ids != "$listed" ]]; then
    echo "FAIL: journalctl --list-catalog does not list every id (< log.hpp, > journalctl)"
    diff <(echo "$ids") <(echo "$listed") || true
    exit 1
  fi
  echo "ok: journalctl reads the catalog"
else
  echo "note: no journalctl, the catalog's syntax was not checked by it"
fi
echo "ok: $(echo "$ids" | wc -l) MESSAGE_IDs, each with a catalog entry"

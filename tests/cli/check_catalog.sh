#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Every fixed MESSAGE_ID memqosd logs (include/memqos/io/log.hpp) has an
# entry in the journal catalog (packaging/memqos.catalog), and the catalog
# has no entry for an id memqosd does not use.
set -euo pipefail
top=${1:?usage: check_catalog.sh SOURCE_ROOT}
ids=$(grep -o 'kMessage[A-Za-z]* = "[0-9a-f]\{32\}"' "$top/include/memqos/io/log.hpp" | grep -o '[0-9a-f]\{32\}' | sort)
cat_ids=$(sed -n 's/^-- \([0-9a-f]\{32\}\)$/\1/p' "$top/packaging/memqos.catalog" | sort)
[[ -n $ids ]] || { echo "FAIL: no MESSAGE_IDs found in log.hpp"; exit 1; }
if [[ $ids != "$cat_ids" ]]; then
  echo "FAIL: log.hpp ids and catalog ids differ"
  diff <(echo "$ids") <(echo "$cat_ids") || true
  exit 1
fi
echo "ok: $(echo "$ids" | wc -l) MESSAGE_IDs, each with a catalog entry"

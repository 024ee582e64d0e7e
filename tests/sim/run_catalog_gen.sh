#!/usr/bin/env bash
# The simulator's compiled-in catalog (src/sim/catalog_gen.c) must be what
# scripts/gen-sim-catalog.py makes of catalog/*.tsv today (then clang-formatted).
set -euo pipefail
SRC=${IM_SOURCE_DIR:?IM_SOURCE_DIR not set}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$SRC/scripts/gen-sim-catalog.py" "$work/catalog_gen.c"
clang-format --style=file:"$SRC/.clang-format" -i "$work/catalog_gen.c"
if ! diff -u "$SRC/src/sim/catalog_gen.c" "$work/catalog_gen.c" > "$work/diff"; then
  echo "FAIL: src/sim/catalog_gen.c is stale: run scripts/gen-sim-catalog.py && clang-format -i src/sim/catalog_gen.c"
  head -40 "$work/diff"
  exit 1
fi
echo "ok: catalog_gen.c is up to date"

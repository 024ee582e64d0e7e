#!/usr/bin/env bash
# Fails when any C source differs from what clang-format would write.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files -co --exclude-standard '*.c' '*.h' | grep -v -e '^web/node_modules' -e '^build/' || true)
[ -z "$files" ] && exit 0
bad=0
for f in $files; do
  [ -f "$f" ] || continue
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "format-check: $f is not clang-formatted (run: make format)"
    bad=1
  fi
done
exit $bad

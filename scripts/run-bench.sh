#!/usr/bin/env bash
# Runs every benchmark script bench/*.sh with the release build directory.
set -euo pipefail
dir=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
for b in "$src"/bench/*.sh; do
  [ -f "$b" ] || continue
  echo "== $(basename "$b")"
  IM_BUILD_DIR="$dir" IM_SOURCE_DIR="$src" bash "$b"
done

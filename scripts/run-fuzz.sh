#!/usr/bin/env bash
# Runs every libFuzzer target in BUILD_DIR for SECONDS each, starting from the
# seed corpus in fuzz/corpus/<target>/ (new inputs go to a scratch dir so the
# repository stays clean). Crashes are saved under BUILD_DIR/fuzz-artifacts/.
set -euo pipefail
dir=$1; secs=$2
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$dir/fuzz-artifacts"
fail=0
for t in "$dir"/fuzz_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  work=$(mktemp -d)
  seeds="$src/fuzz/corpus/$name"
  mkdir -p "$seeds"
  dict=()
  [ -f "$src/fuzz/$name.dict" ] && dict=(-dict="$src/fuzz/$name.dict")
  echo "fuzz: $name for ${secs}s"
  if ! ASAN_OPTIONS=detect_leaks=1 "$t" -max_total_time="$secs" -max_len=65536 \
      -artifact_prefix="$dir/fuzz-artifacts/$name-" "${dict[@]}" "$work" "$seeds" \
      >"$dir/fuzz-artifacts/$name.log" 2>&1; then
    echo "fuzz: $name FAILED (log: $dir/fuzz-artifacts/$name.log)"
    tail -40 "$dir/fuzz-artifacts/$name.log"
    fail=1
  else
    grep -E '^(Done|#[0-9]+ *DONE)' "$dir/fuzz-artifacts/$name.log" | tail -1 || true
  fi
  rm -rf "$work"
done
exit $fail

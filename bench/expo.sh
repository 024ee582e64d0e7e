#!/usr/bin/env bash
# Exposition parsing benchmark (issue 2): builds ≈100 MB of vLLM-shaped text
# exposition, times our parser next to a memchr newline scan of the same buffer
# (bench_expo), then times `infermon check metrics` and `promtool check metrics`
# on the same file and prints the ratios (CPU time: the machine may be shared).
# EXPO_BENCH_MB to change the size.
set -euo pipefail
build=${IM_BUILD_DIR:?}; src=${IM_SOURCE_DIR:?}
mb=${EXPO_BENCH_MB:-100}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
file="$work/vllm-pods.prom"
"$build/bench_expo" "$src/catalog/vllm-sample.prom" "$file" "$mb" | tee "$work/out"
parse_s=$(sed -n 's/.*PARSE_SECONDS=\([0-9.]*\).*/\1/p' "$work/out")

# cpu CMD...: "wall_s cpu_s" (user+sys, all threads) of a command; output discarded.
cpu() {
  local TIMEFORMAT='%R %U %S' t
  t=$( { time "$@" >/dev/null 2>&1; } 2>&1 ) || true
  echo "$t" | awk '{printf "%.3f %.3f\n", $1, $2 + $3}'
}
read -r ours_wall ours_cpu < <(cpu "$build/infermon" check metrics "$file")
echo "infermon check metrics: wall ${ours_wall} s, cpu ${ours_cpu} s"
if command -v promtool >/dev/null; then
  read -r pt_wall pt_cpu < <(cpu sh -c "promtool check metrics < '$file'")
  echo "promtool check metrics ($(promtool --version 2>&1 | head -1 | awk '{print $3}')): wall ${pt_wall} s, cpu ${pt_cpu} s"
  awk -v a="$pt_cpu" -v b="$ours_cpu" -v c="$pt_wall" -v d="$ours_wall" -v p="$parse_s" 'BEGIN {
    printf "ratio promtool/infermon check metrics: %.1fx cpu, %.1fx wall\n", a / b, c / d
    printf "ratio promtool check / expo parser alone (cpu): %.1fx\n", a / p }' 
else
  echo "promtool not installed: peer timing skipped"
fi

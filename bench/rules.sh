#!/usr/bin/env bash
# Rules benchmarks, each next to the same work done by the peer in the same run:
#  1. rule unit tests: every tests/rules/unit/*.yml test file, R rounds, under
#     `infermon test rules` and `promtool test rules` (wall time, ratio);
#  2. rule-file checking: tests/rules/check/ok_full.yml + the built-in rules,
#     R rounds, `infermon check rules` vs `promtool check rules`.
set -euo pipefail
: "${IM_BUILD_DIR:?}" "${IM_SOURCE_DIR:?}"
BIN="$IM_BUILD_DIR/infermon"
R=${RULES_BENCH_ROUNDS:-5}
command -v promtool >/dev/null || { echo "promtool missing: no peer figure"; exit 0; }
cd "$IM_SOURCE_DIR/tests/rules/unit"
files=(pass_*.yml fail_*.yml)
ms() { date +%s%N | cut -c1-13; }
run() { # $1 = tool
  local t0 t1
  t0=$(ms)
  for _ in $(seq "$R"); do
    if [ "$1" = infermon ]; then "$BIN" test rules "${files[@]}" >/dev/null 2>&1 || true
    else promtool test rules "${files[@]}" >/dev/null 2>&1 || true; fi
  done
  t1=$(ms); echo $((t1 - t0))
}
i=$(run infermon); p=$(run promtool)
awk -v i="$i" -v p="$p" -v n="${#files[@]}" -v r="$R" 'BEGIN {
  printf "rule unit tests (%d files x %d rounds): infermon %d ms, promtool %d ms, promtool/infermon = %.1fx\n", n, r, i, p, p / (i ? i : 1) }'
cd "$IM_SOURCE_DIR/tests/rules"
chk() {
  local t0 t1
  t0=$(ms)
  for _ in $(seq "$((R * 4))"); do
    if [ "$1" = infermon ]; then "$BIN" check rules check/ok_full.yml unit/builtin_rules.yml >/dev/null 2>&1
    else promtool check rules check/ok_full.yml unit/builtin_rules.yml >/dev/null 2>&1; fi
  done
  t1=$(ms); echo $((t1 - t0))
}
i=$(chk infermon); p=$(chk promtool)
awk -v i="$i" -v p="$p" -v r="$((R * 4))" 'BEGIN {
  printf "check rules (2 files x %d rounds): infermon %d ms, promtool %d ms, promtool/infermon = %.1fx\n", r, i, p, p / (i ? i : 1) }'

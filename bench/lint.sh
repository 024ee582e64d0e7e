#!/usr/bin/env bash
# Lint benchmark, next to the peer in the same run: a generated rule file of N
# alerting rules (the correct-queries corpus repeated, each as `expr > 0`), R
# rounds of `infermon lint --target catalog/vllm-sample.prom` (parse every
# expression, run every check against the exposition's names) vs `promtool check
# rules` (parse and type-check only). Also: lint of the 26-query old-style
# fixtures, and lint against the catalog only.
set -euo pipefail
: "${IM_BUILD_DIR:?}" "${IM_SOURCE_DIR:?}"
BIN="$IM_BUILD_DIR/infermon"
R=${LINT_BENCH_ROUNDS:-5}
N=${LINT_BENCH_RULES:-2000}
command -v promtool >/dev/null || { echo "promtool missing: no peer figure"; exit 0; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
F="$IM_SOURCE_DIR/tests/lint/fixtures"
grep -v '^\s*\(#\|$\)' "$F/correct-queries.txt" >"$T/q.txt"
/usr/bin/python3 - "$T/q.txt" "$N" >"$T/rules.yml" <<'PYEOF'
import sys, json
qs = [l.rstrip("\n") for l in open(sys.argv[1])]
n = int(sys.argv[2])
print("groups:\n  - name: bench\n    rules:")
for i in range(n):
    q = qs[i % len(qs)]
    print("      - alert: A%d\n        expr: %s\n        for: 15m" % (i, json.dumps("(" + q + ") > 0")))
PYEOF
ms() { date +%s%N | cut -c1-13; }
run() {
  local t0 t1
  t0=$(ms)
  for _ in $(seq "$R"); do
    case "$1" in
      infermon) "$BIN" lint --target "$IM_SOURCE_DIR/catalog/vllm-sample.prom" "$T/rules.yml" >/dev/null 2>&1 || true ;;
      catalog) "$BIN" lint "$T/rules.yml" >/dev/null 2>&1 || true ;;
      promtool) promtool check rules "$T/rules.yml" >/dev/null 2>&1 || true ;;
    esac
  done
  t1=$(ms); echo $((t1 - t0))
}
i=$(run infermon); c=$(run catalog); p=$(run promtool)
awk -v i="$i" -v c="$c" -v p="$p" -v n="$N" -v r="$R" 'BEGIN {
  printf "lint %d rules x %d rounds: infermon lint --target %d ms (%.0f rules/s), catalog-only %d ms, promtool check rules %d ms; promtool/infermon = %.2fx\n",
    n, r, i, n * r * 1000 / (i ? i : 1), c, p, p / (i ? i : 1) }'

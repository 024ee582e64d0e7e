#!/usr/bin/env bash
# Runs Prometheus 3.14.0's PromQL test scripts (tests/promql/upstream-v3/) through
# `infermon promql-test --promql.compat=3`, plus our own 3.x scripts
# (tests/promql/v3/*.test). Native-histogram evals are skipped and counted by the
# runner. Every other eval must pass, except those listed in
# tests/promql/v3_known_failures.txt (features not implemented yet, each with its
# reason): an unlisted failure fails the test, and so does a listed eval that now
# passes (the list only shrinks). The data is tests/promql/upstream-v3/ (Prometheus
# v3.14.0's scripts, see its README); IM_PROMQL_TESTDATA may name another folder
# holding v3.14.0/.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
dir="$IM_SOURCE_DIR/tests/promql/upstream-v3"
[ -n "${IM_PROMQL_TESTDATA:-}" ] && dir="$IM_PROMQL_TESTDATA/v3.14.0"
[ -d "$dir" ] || fail "Prometheus 3.14.0 test data not found in $dir"
out=$("$IM_BINARY" promql-test --promql.compat=3 "$dir"/*.test) || true
echo "v3.14.0: $(echo "$out" | tail -n 1)"
got=$(echo "$out" | grep ': FAIL: ' | sed -E 's#^.*/([^/]+\.test):([0-9]+): FAIL: .*$#\1:\2#' | sort)
known=$(grep -v '^#' "$IM_SOURCE_DIR/tests/promql/v3_known_failures.txt" | cut -f1 | grep . | sort)
new=$(comm -23 <(echo "$got") <(echo "$known") | grep . || true)
fixed=$(comm -13 <(echo "$got") <(echo "$known") | grep . || true)
if [ -n "$new" ]; then
  echo "$out" | grep -A12 -F -f <(echo "$new" | sed 's/^/\//; s/$/: FAIL/') | head -200
  fail "evals failing that are not in v3_known_failures.txt: $(echo $new)"
fi
[ -z "$fixed" ] || fail "evals in v3_known_failures.txt now pass (remove them): $(echo $fixed)"
echo "$out" | tail -n 1 | grep -Eq '^[0-9]+ passed' || fail "unexpected summary"
# our own scripts for what the v3.14.0 data leaves out: all must pass
own=$("$IM_BINARY" promql-test --promql.compat=3 "$IM_SOURCE_DIR"/tests/promql/v3/*.test) ||
  { echo "$own"; fail "tests/promql/v3 scripts failed"; }
echo "ours: $(echo "$own" | tail -n 1)"

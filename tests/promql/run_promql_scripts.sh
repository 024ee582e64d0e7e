#!/usr/bin/env bash
# Runs every PromQL test script — Prometheus 2.53.5's (tests/promql/upstream/) and
# ours (tests/promql/*.test) — through `infermon promql-test`; fails unless every
# eval passes (native-histogram evals are counted as skipped).
source "$IM_SOURCE_DIR/tests/lib/common.sh"
out=$("$IM_BINARY" promql-test "$IM_SOURCE_DIR"/tests/promql/upstream/*.test \
  "$IM_SOURCE_DIR"/tests/promql/*.test) || { echo "$out"; fail "promql-test reported failures"; }
echo "$out" | tail -n 1
echo "$out" | tail -n 1 | grep -Eq '^[0-9]+ passed, 0 failed' || fail "unexpected summary"

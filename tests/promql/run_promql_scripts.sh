#!/usr/bin/env bash
# Runs every PromQL test script — Prometheus 2.53.5's (tests/promql/upstream/) and
# ours (tests/promql/*.test) — through `infermon promql-test`; fails unless every
# eval passes (native-histogram evals are counted as skipped). A second pass with
# --parallel sends every range function over two or more series through the
# multi-threaded path (large queries take it), which must give the same answers.
# These are Prometheus 2.x's semantics: run with --promql.compat=2 (the v3.14.0
# suite is run_promql_v3.sh).
source "$IM_SOURCE_DIR/tests/lib/common.sh"
for mode in "" --parallel; do
  out=$("$IM_BINARY" promql-test --promql.compat=2 $mode "$IM_SOURCE_DIR"/tests/promql/upstream/*.test \
    "$IM_SOURCE_DIR"/tests/promql/*.test) || { echo "$out"; fail "promql-test $mode reported failures"; }
  echo "${mode:-sequential}: $(echo "$out" | tail -n 1)"
  echo "$out" | tail -n 1 | grep -Eq '^[0-9]+ passed, 0 failed' || fail "unexpected summary"
done

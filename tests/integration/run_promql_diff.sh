#!/usr/bin/env bash
# Differential test of the PromQL engine against the real Prometheus 2.42: the same
# generated data (OpenMetrics, backfilled with promtool) and the same queries —
# the DOMAIN.md queries, every function and operator, and randomly generated
# well-typed expressions — at five instants and over two ranges. Results must
# agree (labels, values within 1e-9 relative, NaN = NaN). Known 2.42/2.53
# differences are skipped by rule and listed (see docs/promql.md).
source "$IM_SOURCE_DIR/tests/lib/common.sh"
command -v prometheus >/dev/null || fail "prometheus (Debian package) is not installed"
command -v promtool >/dev/null || fail "promtool (Debian package prometheus) is not installed"
IM_PROMQL_DIFF_STORE=${IM_PROMQL_DIFF_STORE:-tsdb} \
  $PY "$IM_SOURCE_DIR/tests/integration/promql_diff.py" "$IM_BINARY" "$IM_TMP/diff" \
  --random "${IM_PROMQL_DIFF_RANDOM:-1200}" --seed 42

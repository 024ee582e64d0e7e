#!/usr/bin/env bash
# PromQL benchmark: the DOMAIN.md queries (range: all data, step 60 s; instant: at
# the end) over an LLM-serving data set, infermon vs Prometheus 2.42 and
# VictoriaMetrics 1.79 in the same run. Scale with IM_BENCH_PROMQL_PODS (100) and
# IM_BENCH_PROMQL_HOURS (6); repetitions IM_BENCH_PROMQL_REPEAT (5); rounds of all
# systems IM_BENCH_PROMQL_ROUNDS (1); IM_BENCH_PROMQL_BASELINE=an older infermon
# binary to time in the same rounds (before/after).
set -euo pipefail
: "${IM_BUILD_DIR:?}" "${IM_SOURCE_DIR:?}"
PY=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pods=${IM_BENCH_PROMQL_PODS:-100}
hours=${IM_BENCH_PROMQL_HOURS:-6}
$PY "$IM_SOURCE_DIR/bench/promql_data.py" "$work/data" "$pods" "$hours"
$PY "$IM_SOURCE_DIR/bench/promql_bench.py" "$IM_BUILD_DIR/infermon" "$work/data" "$work" \
  "${IM_BENCH_PROMQL_REPEAT:-5}"

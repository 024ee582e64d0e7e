#!/usr/bin/env bash
# The bucket check: a latency threshold must be an le bound of the histogram —
# of the catalog's layout offline (vLLM, SGLang; dcgm-exporter has no latency
# histogram) and of the series as scraped (a simulated vLLM and SGLang fleet in
# a local store); otherwise the SLO is refused with the two neighbouring bounds
# and a suggestion, naming the threshold field.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
slo() { # name engine signal-or-metric-line threshold
  cat >"$IM_TMP/$1.yml" <<YML
slos:
  - name: $1
    model: meta-llama/Llama-3.1-8B-Instruct
    engine: $2
    sli: latency
    $3
    threshold: $4
    objective: 99
YML
}
expect_refused() { # name want-substring [backend args]
  local n=$1 want=$2
  shift 2
  set +e
  "$IM_BINARY" slo check "$IM_TMP/$n.yml" "$@" >"$IM_TMP/$n.out" 2>&1
  local rc=$?
  set -e
  [ "$rc" = 1 ] || fail "$n: exit $rc, expected 1: $(cat "$IM_TMP/$n.out")"
  grep -qF -- "$want" "$IM_TMP/$n.out" || fail "$n: wanted \"$want\", got: $(cat "$IM_TMP/$n.out")"
  echo "ok: $n refused: $(tail -1 "$IM_TMP/$n.out")"
}
expect_ok() {
  local n=$1
  shift
  "$IM_BINARY" slo check "$IM_TMP/$n.yml" "$@" >"$IM_TMP/$n.out" 2>&1 \
    || fail "$n: $(cat "$IM_TMP/$n.out")"
  echo "ok: $n accepted"
}
# catalog layouts
slo v2 vllm "signal: ttft" 2s
expect_refused v2 "slos[0].threshold (v2): 2s is not a bucket bound of vllm:time_to_first_token_seconds (catalog layout; neighbours 1s and 2.5s)"
grep -qF "use threshold: 2.5s (or 1s)" "$IM_TMP/v2.out" || fail "no suggestion: $(cat "$IM_TMP/v2.out")"
slo v25 vllm "signal: ttft" 2.5s && expect_ok v25
slo vitl vllm "signal: itl" 30ms
expect_refused vitl "neighbours 0.025s and 0.05s"
slo s25 sglang "signal: ttft" 2.5s
expect_refused s25 "sglang:time_to_first_token_seconds (catalog layout; neighbours 2s and 4s)"
slo s2 sglang "signal: ttft" 2s && expect_ok s2
slo s2e sglang "signal: e2e" 2500s
expect_refused s2e "neighbours 2400s and none"
slo dcgm dcgm "metric: DCGM_FI_DEV_GPU_UTIL" 1s
expect_refused dcgm "slos[0].metric (dcgm): DCGM_FI_DEV_GPU_UTIL is a gauge, not a histogram"
slo dcgmsig dcgm "signal: ttft" 1s
expect_refused dcgmsig "slos[0].signal (dcgmsig): no target exposes a latency histogram for it (ttft of dcgm)"
# the series as scraped: simulated vLLM and SGLang fleets, each in a local store
for e in vllm sglang; do
  "$IM_BINARY" simulate --history 20m --step 30s --pods 2 --engine $e \
    --out "$IM_TMP/$e.om" 2>"$IM_TMP/sim.err" || { cat "$IM_TMP/sim.err"; fail "simulate $e"; }
  "$IM_BINARY" tsdb import --format openmetrics "$IM_TMP/$e.om" "$IM_TMP/st-$e" >/dev/null 2>&1 \
    || fail "import $e"
done
L=(--storage.tsdb.path "$IM_TMP/st-vllm")
S=(--storage.tsdb.path "$IM_TMP/st-sglang")
expect_refused v2 "(as scraped; neighbours 1s and 2.5s)" "${L[@]}"
expect_ok v25 "${L[@]}"
expect_refused s25 "sglang:time_to_first_token_seconds (as scraped; neighbours 2s and 4s)" "${S[@]}"
expect_ok s2 "${S[@]}"
# without engine: every engine the store exposes (here SGLang only) is checked
sed -i '/engine: sglang/d' "$IM_TMP/s2.yml"
expect_ok s2 "${S[@]}"
# an SLO on a histogram no target exposes
slo missing vllm "metric: my_ttft_seconds" 1s
expect_refused missing "no series of my_ttft_seconds_bucket" "${L[@]}"
# availability of an engine the store does not have
cat >"$IM_TMP/dyn.yml" <<'YML'
slos:
  - {name: dyn, engine: dynamo, sli: availability, objective: 99}
YML
expect_refused dyn "slos[0].sli (dyn): no target exposes the request-outcome counters of dynamo" "${L[@]}"

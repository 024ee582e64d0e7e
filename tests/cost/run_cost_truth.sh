#!/usr/bin/env bash
# Every figure of every row of `infermon cost` against a hand calculation from
# the simulator's ground truth (tests/cost/truth_check.py), over the local store
# and over Prometheus 2.42 holding the same history (promtool backfill): three
# teams (one with no team in the mapping), Kueue reservations with cohort
# borrowing (llm-serving: quota 2, 40 batch jobs/h) and lending (research: quota
# 6, lending limit 3), a MIG node (1g.10gb instances, fractional GPUs, energy
# split by slices), GPUs no pod holds, energy counters and vLLM tokens; the
# period is the whole history, (start, end], which is the truth's. Then the
# period's edges: a period is (from, to], so two halves add up to the whole.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
END=2026-08-25T12:00:00Z
FROM=2026-08-25T11:30:00Z
cat >"$IM_TMP/sc.yml" <<'YML'
base: healthy
events:
  - at: 0s
    team: llm-serving
    set: {quota_gpus: 2, batch_jobs_per_h: 40}
  - at: 0s
    team: research
    set: {quota_gpus: 6, lending_limit: 3, batch_jobs_per_h: 2}
YML
cat >"$IM_TMP/cfg.yml" <<'YML'
llm:
  cost:
    prices:
      - flavor: h100-80gb
        gpu_model: NVIDIA H100 80GB HBM3
        on_demand: 4
    energy_price_per_kwh: 0.2
    teams:
      llm-serving: search
      research: research
YML
"$IM_BINARY" simulate --history 30m --step 30s --tick 30s --pods 3 \
  --teams llm-serving,research,sandbox --mig-nodes 1 --scenario "$IM_TMP/sc.yml" \
  --end "$END" --seed 3 --out "$IM_TMP/h.om" --ground-truth "$IM_TMP/truth.json" \
  2>"$IM_TMP/sim.err" || { cat "$IM_TMP/sim.err"; fail "simulate"; }
"$IM_BINARY" tsdb import --format openmetrics "$IM_TMP/h.om" "$IM_TMP/db" >"$IM_TMP/import" 2>&1 \
  || { tail -5 "$IM_TMP/import"; fail "tsdb import"; }
report() { # backend-flag backend by format [extra...]
  local fl=$1 be=$2 by=$3 fmt=$4
  shift 4
  set +e
  "$IM_BINARY" cost "$fl" "$be" --from "$FROM" --to "$END" --step 30s \
    --config.file "$IM_TMP/cfg.yml" --by "$by" --output "$fmt" "$@" >"$IM_TMP/out" 2>"$IM_TMP/err"
  local rc=$?
  set -e
  [ $rc = 0 ] || { cat "$IM_TMP/err"; fail "cost $fl --by $by exited $rc"; }
  cat "$IM_TMP/out"
}
check_all() { # backend-flag backend
  for by in team namespace cluster_queue flavor; do
    report "$1" "$2" $by json >"$IM_TMP/r.json"
    report "$1" "$2" $by csv >"$IM_TMP/r.csv"
    $PY "$IM_SOURCE_DIR/tests/cost/truth_check.py" "$IM_TMP/truth.json" $by "$IM_TMP/r.json" \
      "$IM_TMP/r.csv"
  done
}
check_all --storage.tsdb.path "$IM_TMP/db"

# (from, to]: the two halves of the period add up to the whole, sample by sample
for p in "$FROM 2026-08-25T11:45:00Z a" "2026-08-25T11:45:00Z $END b" "$FROM $END all"; do
  set -- $p
  "$IM_BINARY" cost --storage.tsdb.path "$IM_TMP/db" --from "$1" --to "$2" --step 30s \
    --config.file "$IM_TMP/cfg.yml" --by namespace --output json >"$IM_TMP/half.$3.json" \
    2>"$IM_TMP/err" || { cat "$IM_TMP/err"; fail "cost $1..$2"; }
done
$PY - "$IM_TMP/half.a.json" "$IM_TMP/half.b.json" "$IM_TMP/half.all.json" <<'PYEOF'
import json, sys
a, b, w = (json.load(open(p)) for p in sys.argv[1:4])
rows = lambda d: {r["group"]: r for r in d["rows"]}
for g, r in rows(w).items():
    for k in ("gpu_hours_reserved", "gpu_hours_allocated", "gpu_hours_busy", "energy_kwh",
              "output_tokens", "input_tokens"):
        s = rows(a)[g][k] + rows(b)[g][k]
        assert abs(s - r[k]) <= 1e-9 * max(1, abs(r[k])), (g, k, s, r[k])
print("ok: (from, to] halves add up to the whole period")
PYEOF

# the same figures over Prometheus 2.42 holding the same samples
command -v promtool >/dev/null && command -v prometheus >/dev/null || fail "prometheus not installed"
promtool tsdb create-blocks-from openmetrics "$IM_TMP/h.om" "$IM_TMP/prom" >"$IM_TMP/blocks" 2>&1 \
  || { cat "$IM_TMP/blocks"; fail "promtool create-blocks"; }
echo 'global: {scrape_interval: 15s}' >"$IM_TMP/prom.yml"
port=$(free_port)
bg prometheus --config.file="$IM_TMP/prom.yml" --storage.tsdb.path="$IM_TMP/prom" \
  --storage.tsdb.retention.time=100y --web.listen-address="127.0.0.1:$port" >"$IM_TMP/prom.log" 2>&1
wait_http "http://127.0.0.1:$port/-/ready" 60 || { tail "$IM_TMP/prom.log"; fail "prometheus"; }
check_all --prometheus "http://127.0.0.1:$port"
echo "cost: every figure equals the ground truth over the local store and Prometheus 2.42"

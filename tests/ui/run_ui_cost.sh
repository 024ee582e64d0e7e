#!/usr/bin/env bash
# The dashboard's Cost page in headless Chromium (tests/ui/cost_test.mjs) over
# `infermon run` holding a simulated history that ends now: three teams (one
# with no team), cohort borrowing and lending, a MIG node; the page's rows equal
# GET /api/v1/llm/cost's for every grouping and period choice.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
command -v node >/dev/null || fail "node is required"
[ -x /usr/bin/chromium ] || fail "chromium is required (scripts/install-deps.sh installs it)"
[ -d "$IM_SOURCE_DIR/web/node_modules/playwright-core" ] || fail "web/node_modules missing (scripts/web-deps.sh)"
SHOTS=${IM_UI_SHOTS:-$PWD/ui-screenshots}
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
"$IM_BINARY" simulate --history 1h --step 30s --tick 30s --pods 3 \
  --teams llm-serving,research,sandbox --mig-nodes 1 --scenario "$IM_TMP/sc.yml" --seed 3 \
  --out "$IM_TMP/h.om" 2>"$IM_TMP/sim.err" || { cat "$IM_TMP/sim.err"; fail "simulate"; }
"$IM_BINARY" tsdb import --format openmetrics "$IM_TMP/h.om" "$IM_TMP/db" >"$IM_TMP/import" 2>&1 \
  || { tail -5 "$IM_TMP/import"; fail "tsdb import"; }
cat >"$IM_TMP/cfg.yml" <<'YML'
global: {scrape_interval: 30s}
scrape_configs: []
llm:
  cost:
    prices:
      - flavor: h100-80gb
        gpu_model: NVIDIA H100 80GB HBM3
        on_demand: 4.1
        reserved: 2.6
    energy_price_per_kwh: 0.12
    teams:
      llm-serving: search
      research: research
YML
port=$(free_port)
bg "$IM_BINARY" run --config.file "$IM_TMP/cfg.yml" --storage.tsdb.path "$IM_TMP/db" \
  --web.listen-address "127.0.0.1:$port" >"$IM_TMP/run.log" 2>&1
wait_http "http://127.0.0.1:$port/-/ready" 60 || { tail "$IM_TMP/run.log"; fail "run"; }
node "$IM_SOURCE_DIR/tests/ui/cost_test.mjs" "http://127.0.0.1:$port" "$SHOTS" \
  || { tail -20 "$IM_TMP/run.log"; fail "cost page test failed (screenshots in $SHOTS)"; }

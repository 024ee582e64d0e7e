#!/usr/bin/env bash
# The SLO page (web/slo.js) in headless Chromium (playwright-core + chromium):
#  1. `infermon run` with llm.slos (a TTFT latency SLO and an availability SLO)
#     scraping the simulator: GET /api/v1/llm/slos as the daemon answers it,
#     a row per SLO with its objective, attainment and budget, the burn-rate
#     chart drawn from query_range of the recorded SLI error ratios, goodput.
#  2. a daemon without SLOs: the empty state.
#  3. behind a proxy that answers /api/v1/llm/slos from a file (states the live
#     fleet does not reach on demand): a firing alert is marked, an SLO whose
#     values are all null reads "no data", an empty answer shows the empty state.
# Screenshots go to $IM_UI_SHOTS (default build dir's ui-screenshots/).
source "$IM_SOURCE_DIR/tests/lib/common.sh"
command -v node >/dev/null || fail "node is required"
[ -x /usr/bin/chromium ] || fail "chromium is required (scripts/install-deps.sh installs it)"
[ -d "$IM_SOURCE_DIR/web/node_modules/playwright-core" ] || fail "web/node_modules missing (scripts/web-deps.sh)"
SHOTS=${IM_UI_SHOTS:-$PWD/ui-screenshots}
mkdir -p "$SHOTS"
U=$IM_SOURCE_DIR/tests/ui

sport=$(free_port); rport=$(free_port); pport=$(free_port)
bg "$IM_BINARY" simulate --listen "127.0.0.1:$sport" --pods 2 --speed 10 >"$IM_TMP/sim.log" 2>&1
wait_http "http://127.0.0.1:$sport/targets" 30
curl -fsS "http://127.0.0.1:$sport/targets" >"$IM_TMP/targets.json"
cat >"$IM_TMP/run.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: fleet
    file_sd_configs: [{files: ['$IM_TMP/targets.json']}]
llm:
  slos:
    - name: chat-ttft
      model: meta-llama/Llama-3.1-8B-Instruct
      sli: latency
      signal: ttft
      threshold: 2.5s
      objective: 99
      window: 7d
    - name: chat-avail
      sli: availability
      objective: 99.9
      window: 7d
YML
cat >"$IM_TMP/plain.yml" <<YML
global: {scrape_interval: 1s}
scrape_configs:
  - job_name: fleet
    file_sd_configs: [{files: ['$IM_TMP/targets.json']}]
YML
nport=$(free_port)
bg "$IM_BINARY" run --config.file "$IM_TMP/plain.yml" --storage.memory-only \
  --web.listen-address "127.0.0.1:$nport" >"$IM_TMP/plain.log" 2>&1
bg "$IM_BINARY" run --config.file "$IM_TMP/run.yml" --storage.memory-only \
  --web.listen-address "127.0.0.1:$rport" >"$IM_TMP/run.log" 2>&1
wait_http "http://127.0.0.1:$rport/-/ready" 30 || { cat "$IM_TMP/run.log"; fail "run did not start"; }
cat >"$IM_TMP/slos.json" <<'JSON'
{"status":"success","data":{"slos":[
 {"name":"chat-ttft","model":"meta-llama/Llama-3.1-8B-Instruct","sli":"latency","signal":"ttft","threshold_seconds":2.5,
  "objective":0.99,"window":"30d","attainment":0.9931,"error_budget_remaining":0.31,
  "burn_rates":{"5m":15.2,"30m":14.9,"1h":14.6,"2h":9.1,"6h":3.3,"1d":1.2,"3d":0.7},
  "alerts":[{"name":"SLOBurnRatePage","severity":"page","firing":true},{"name":"SLOBurnRateTicket","severity":"ticket","firing":false}]},
 {"name":"chat-avail","model":"meta-llama/Llama-3.1-8B-Instruct","sli":"availability","signal":null,"threshold_seconds":null,
  "objective":0.999,"window":"30d","attainment":null,"error_budget_remaining":null,
  "burn_rates":{"5m":null,"30m":null,"1h":null,"2h":null,"6h":null,"1d":null,"3d":null},"alerts":[]}],
 "goodput":[{"model":"meta-llama/Llama-3.1-8B-Instruct","requests_per_second":3.2}]}}
JSON
echo '{"status":"success","data":{"slos":[],"goodput":[]}}' >"$IM_TMP/empty.json"
cp "$IM_TMP/slos.json" "$IM_TMP/current.json"
bg python3 "$U/slo_proxy.py" "$pport" "http://127.0.0.1:$rport" "$IM_TMP/current.json"
wait_http "http://127.0.0.1:$pport/-/ready" 30
# the recorded SLI error ratios have points before the page is opened
deadline=$((SECONDS + 90))
for slo in chat-ttft chat-avail; do
  until curl -fsS "http://127.0.0.1:$rport/api/v1/query" --data-urlencode "query=count_over_time(infermon_slo:sli_error:ratio_rate5m{slo=\"$slo\"}[1m]) > 15" | grep -q '"result":\[{'; do
    [ $SECONDS -lt $deadline ] || fail "no recorded error ratio of $slo after 90 s: $(tail -5 "$IM_TMP/run.log")"
    sleep 0.5
  done
done
curl -fsS "http://127.0.0.1:$rport/api/v1/llm/slos" >"$IM_TMP/live.json"
python3 - "$IM_TMP/live.json" <<'PY' || fail "live /api/v1/llm/slos: $(cat "$IM_TMP/live.json")"
import json, sys
d = json.load(open(sys.argv[1]))["data"]
names = sorted(s["name"] for s in d["slos"])
assert names == ["chat-avail", "chat-ttft"], names
assert d["goodput"], d
PY
rc=0
SLO_MIN_POINTS=15 node "$U/slo_test.mjs" slos "http://127.0.0.1:$rport" "$SHOTS/live" chat-ttft chat-avail || rc=1
wait_http "http://127.0.0.1:$nport/-/ready" 30
node "$U/slo_test.mjs" empty "http://127.0.0.1:$nport" "$SHOTS/live" || rc=1
SLO_FIRING=1 SLO_MIN_POINTS=15 node "$U/slo_test.mjs" slos "http://127.0.0.1:$pport" "$SHOTS" chat-ttft || rc=1
node "$U/slo_test.mjs" nodata "http://127.0.0.1:$pport" "$SHOTS" chat-avail || rc=1
cp "$IM_TMP/empty.json" "$IM_TMP/current.json"
node "$U/slo_test.mjs" empty "http://127.0.0.1:$pport" "$SHOTS" || rc=1
[ $rc -eq 0 ] || { tail -20 "$IM_TMP/run.log"; fail "SLO page test failed (screenshots in $SHOTS)"; }
echo "SLO page: live SLOs with their burn-rate charts and goodput, the empty state, a firing alert, no data"

#!/usr/bin/env bash
# The dashboard in a real browser (headless Debian chromium driven by
# playwright-core from web/node_modules):
#  1. `infermon demo` (healthy): every panel renders, timings, crosshair, zoom,
#     themes, phone width, Explore errors, Alerts and Targets pages.
#  2. `infermon simulate --scenario kv-pressure` scraped by `infermon run` with a
#     dead target and a rule that fires within seconds: KV crosses 0.9,
#     preemptions rise, the down target and the firing alert are shown.
#  3. `infermon simulate --engine vllm,sglang` scraped by `infermon run`: both
#     engines' panels.
# Screenshots go to $IM_UI_SHOTS (default build dir's ui-screenshots/).
source "$IM_SOURCE_DIR/tests/lib/common.sh"
command -v node >/dev/null || fail "node is required"
[ -x /usr/bin/chromium ] || fail "chromium is required (scripts/install-deps.sh installs it)"
[ -d "$IM_SOURCE_DIR/web/node_modules/playwright-core" ] || fail "web/node_modules missing (scripts/web-deps.sh)"
SHOTS=${IM_UI_SHOTS:-$PWD/ui-screenshots}
mkdir -p "$SHOTS"

# 1. the demo, healthy
dport=$(free_port)
bg "$IM_BINARY" demo --web.listen-address "127.0.0.1:$dport" --scrape-interval 2s --pods 8 \
  --storage.tsdb.path "$IM_TMP/demo-data" >"$IM_TMP/demo.log" 2>&1

# 3. a demo whose last hour is backfilled (kv-pressure: long latencies on the axes)
bport=$(free_port)
bg "$IM_BINARY" demo --web.listen-address "127.0.0.1:$bport" --scrape-interval 2s --pods 2 \
  --scenario kv-pressure --backfill 1h >"$IM_TMP/backfill.log" 2>&1

# 2. kv-pressure fleet + daemon with a dead target and a fast alert
sport=$(free_port); rport=$(free_port); dead=$(free_port)
bg "$IM_BINARY" simulate --listen "127.0.0.1:$sport" --pods 4 --scenario kv-pressure --speed 10 \
  >"$IM_TMP/sim.log" 2>&1
wait_http "http://127.0.0.1:$sport/targets" 30
curl -fsS "http://127.0.0.1:$sport/targets" >"$IM_TMP/targets.json"
cat >"$IM_TMP/rules.yml" <<'YML'
groups:
  - name: ui-test
    interval: 2s
    rules:
      - alert: KVCachePinned
        expr: max by (model_name) (vllm:kv_cache_usage_perc) > 0.9
        for: 4s
        labels: {severity: warning}
        annotations: {summary: 'KV cache above 0.9 for {{ $labels.model_name }}'}
YML
cat >"$IM_TMP/run.yml" <<YML
global: {scrape_interval: 2s, scrape_timeout: 2s, evaluation_interval: 2s}
rule_files: ['$IM_TMP/rules.yml']
scrape_configs:
  - job_name: fleet
    file_sd_configs: [{files: ['$IM_TMP/targets.json']}]
  - job_name: broken
    static_configs: [{targets: ['127.0.0.1:$dead']}]
YML
bg "$IM_BINARY" run --config.file "$IM_TMP/run.yml" --storage.tsdb.path "$IM_TMP/run-data" \
  --web.listen-address "127.0.0.1:$rport" >"$IM_TMP/run.log" 2>&1

# 3. a mixed vLLM + SGLang fleet (one model each) scraped by a second daemon
mport=$(free_port); xport=$(free_port)
bg "$IM_BINARY" simulate --listen "127.0.0.1:$mport" --pods 4 --engine vllm,sglang \
  --models "meta-llama/Llama-3.1-8B-Instruct,Qwen/Qwen3-8B" --speed 10 >"$IM_TMP/sim-mixed.log" 2>&1
wait_http "http://127.0.0.1:$mport/targets" 30
curl -fsS "http://127.0.0.1:$mport/targets" >"$IM_TMP/targets-mixed.json"
cat >"$IM_TMP/run-mixed.yml" <<YML
global: {scrape_interval: 2s, scrape_timeout: 2s}
scrape_configs:
  - job_name: fleet
    file_sd_configs: [{files: ['$IM_TMP/targets-mixed.json']}]
YML
bg "$IM_BINARY" run --config.file "$IM_TMP/run-mixed.yml" --storage.tsdb.path "$IM_TMP/run-mixed" \
  --web.listen-address "127.0.0.1:$xport" >"$IM_TMP/run-mixed.log" 2>&1

wait_http "http://127.0.0.1:$dport/-/ready" 60 || { cat "$IM_TMP/demo.log"; fail "demo did not start"; }
wait_http "http://127.0.0.1:$rport/-/ready" 60 || { cat "$IM_TMP/run.log"; fail "run did not start"; }
wait_http "http://127.0.0.1:$bport/-/ready" 90 || { cat "$IM_TMP/backfill.log"; fail "backfilled demo did not start"; }
# Until every rate panel of a 5 m view has data: each query below answers a
# non-empty vector (counters and histogram counts over the dashboard's shortest
# live window, 4 x the 2 s scrape spacing, rounded up), 120 s at most.
wait_data() { # PORT QUERY...
  local port=$1 q i; shift
  for q in "$@"; do
    for i in $(seq 600); do
      curl -fsS -G "http://127.0.0.1:$port/api/v1/query" --data-urlencode "query=$q" 2>/dev/null \
        | grep -q '"result":\[{' && continue 2
      sleep 0.2
    done
    fail "no data on :$port for $q after 120 s"
  done
}
VQ=('sum(rate(vllm:generation_tokens_total[10s])) > 0' 'count(rate(vllm:num_preemptions_total[10s]))'
  'sum(rate(vllm:time_to_first_token_seconds_count[10s])) > 0'
  'sum(rate(vllm:inter_token_latency_seconds_count[10s])) > 0'
  'sum(rate(vllm:e2e_request_latency_seconds_count[10s])) > 0'
  'count(rate(vllm:prefix_cache_queries_total[10s]))')
wait_data "$dport" "${VQ[@]}"
wait_data "$rport" "${VQ[@]}"

rc=0
node "$IM_SOURCE_DIR/tests/ui/ui_test.mjs" healthy "http://127.0.0.1:$dport" "$SHOTS" || rc=1
node "$IM_SOURCE_DIR/tests/ui/ui_test.mjs" pressure "http://127.0.0.1:$rport" "$SHOTS" || rc=1
wait_http "http://127.0.0.1:$xport/-/ready" 30 || { cat "$IM_TMP/run-mixed.log"; fail "mixed run did not start"; }
wait_data "$xport" "${VQ[@]}" 'sum(rate(sglang:generation_tokens_total[10s])) > 0' \
  'sum(rate(sglang:time_to_first_token_seconds_count[10s])) > 0' \
  'sum(rate(sglang:e2e_request_latency_seconds_count[10s])) > 0'
node "$IM_SOURCE_DIR/tests/ui/ui_test.mjs" mixed "http://127.0.0.1:$xport" "$SHOTS" || rc=1
node "$IM_SOURCE_DIR/tests/ui/ui_test.mjs" backfill "http://127.0.0.1:$bport" "$SHOTS" || rc=1
if [ $rc != 0 ]; then
  echo "--- demo log"; tail -20 "$IM_TMP/demo.log"
  echo "--- run log"; tail -20 "$IM_TMP/run.log"
  echo "--- backfilled demo log"; tail -20 "$IM_TMP/backfill.log"
  fail "browser test failed (screenshots in $SHOTS)"
fi
# embedded assets over HTTP: content types, caching, no path traversal
hdr=$(curl -fsS -D - -o /dev/null "http://127.0.0.1:$dport/static/app.js")
# here-strings, not pipes: grep -q may exit before its writer is done (pipefail)
grep -qi '^content-type: text/javascript' <<<"$hdr" || fail "app.js content type: $hdr"
grep -qi '^etag: "' <<<"$hdr" || fail "app.js has no ETag"
etag=$(grep -i '^etag:' <<<"$hdr" | cut -d' ' -f2 | tr -d '\r')
code=$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "http://127.0.0.1:$dport/static/app.js")
[ "$code" = 304 ] || fail "If-None-Match did not give 304 (got $code)"
root=$(curl -fsS -D - -o /dev/null "http://127.0.0.1:$dport/")
grep -qi '^cache-control: no-cache' <<<"$root" || fail "/ is not no-cache: $root"
for p in /static/../index.html /static/%2e%2e/index.html /../../etc/passwd /static/ /etc/passwd; do
  code=$(curl -s --path-as-is -o /dev/null -w '%{http_code}' "http://127.0.0.1:$dport$p")
  [ "$code" = 404 ] || fail "path $p answered $code, want 404"
done
echo "ui: browser test passed; screenshots in $SHOTS"

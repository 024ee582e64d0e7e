#!/usr/bin/env bash
# The query backend (src/query, `infermon run --query.backend-url`) against real
# stores: Prometheus 2.42 and VictoriaMetrics both scrape the simulator, as does a
# local infermon; then
#  1. infermon over each store answers /api/v1/query, query_range, series,
#     labels, label/<name>/values and metadata exactly as the store itself does
#     (the answer is relayed as-is), limit= is applied even where the store
#     ignores it, and /api/v1/status/query_backend says which store answers;
#  2. the dashboard in headless Chromium over the local store, over Prometheus
#     and over VictoriaMetrics renders the same panels with the same series;
#  3. over a backend that is down, slow (past --query.backend-timeout), answers
#     500/400 without JSON, a Prometheus error, malformed JSON or JSON of the
#     wrong shape: a Prometheus error answer naming the backend, with a fitting
#     status code, and on the dashboard every panel shows that message;
#  4. scrape_configs with --query.backend-url are refused with the reason.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
command -v node >/dev/null || fail "node is required"
[ -x /usr/bin/chromium ] || fail "chromium is required"
command -v prometheus >/dev/null || fail "prometheus is required"
command -v victoria-metrics >/dev/null || fail "victoria-metrics is required"
SHOTS=${IM_UI_SHOTS:-$PWD/ui-screenshots}
t_start=$(date +%s)
phase() { echo "query backend: $* at $(($(date +%s) - t_start)) s"; }

sport=$(free_port); pport=$(free_port); vport=$(free_port); lport=$(free_port)
# a mixed fleet: two vLLM and two SGLang pods (engines cycle over the models)
fleet=(--engine vllm,sglang --models meta-llama/Llama-3.1-8B-Instruct,Qwen/Qwen2.5-7B-Instruct --pods 4)
bg "$IM_BINARY" simulate --listen "127.0.0.1:$sport" "${fleet[@]}" >"$IM_TMP/sim.log" 2>&1
# The same fleet's past, backfilled into all three stores: the values the panels
# plot are compared over it. Scraping gives each store its own scrape offsets
# (each answers a panel's step with samples taken up to a second apart), so only
# identical samples make the values comparable; the history ends on a whole
# minute 20 min ago, its samples on whole seconds (the panels' steps too).
hist_end=$(( ($(date +%s) - 1200) / 60 * 60 ))
"$IM_BINARY" simulate "${fleet[@]}" --history 6m --step 1s --end "$hist_end" --out "$IM_TMP/past.om" 2>"$IM_TMP/past.log" ||
  fail "simulate --history: $(cat "$IM_TMP/past.log")"
promtool tsdb create-blocks-from openmetrics "$IM_TMP/past.om" "$IM_TMP/pdata" >"$IM_TMP/promtool.log" 2>&1 ||
  fail "promtool backfill: $(tail -3 "$IM_TMP/promtool.log")"
"$IM_BINARY" tsdb import "$IM_TMP/past.om" "$IM_TMP/ldata" >"$IM_TMP/import.log" 2>&1 ||
  fail "infermon tsdb import: $(tail -3 "$IM_TMP/import.log")"
# VictoriaMetrics imports the Prometheus text format, timestamps in milliseconds
grep -v '^#' "$IM_TMP/past.om" | sed -E 's/ ([0-9]+)$/ \1000/' >"$IM_TMP/past.prom"
wait_http "http://127.0.0.1:$sport/targets" 20 || fail "simulator did not start"
curl -fsS "http://127.0.0.1:$sport/targets" >"$IM_TMP/targets.json"
cat >"$IM_TMP/scrape.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: fleet
    file_sd_configs: [{files: ['$IM_TMP/targets.json']}]
YML
bg prometheus --config.file="$IM_TMP/scrape.yml" --storage.tsdb.path="$IM_TMP/pdata" \
  --web.listen-address="127.0.0.1:$pport" >"$IM_TMP/prom.log" 2>&1
bg victoria-metrics -httpListenAddr="127.0.0.1:$vport" -storageDataPath="$IM_TMP/vdata" \
  -promscrape.config="$IM_TMP/scrape.yml" -search.latencyOffset=0s -search.disableCache \
  -retentionPeriod=100y >"$IM_TMP/vm.log" 2>&1
# --promql.compat=2: the stores are Prometheus 2.42 and VictoriaMetrics, whose range
# selectors include a sample on the window's start (Prometheus 3's are left-open:
# a 4 s rate over 1 s samples then sees 4 samples, not 5, and extrapolates)
bg "$IM_BINARY" run --config.file "$IM_TMP/scrape.yml" --storage.tsdb.path "$IM_TMP/ldata" --promql.compat=2 \
  --web.listen-address "127.0.0.1:$lport" >"$IM_TMP/local.log" 2>&1

# infermon over each store, and over failing ones (the dashboard reads the
# scrape interval from infermon's own config: global only, no scrape_configs)
echo 'global: {scrape_interval: 1s}' >"$IM_TMP/backend.yml"
fport=$(free_port); dead=$(free_port)
bg $PY "$IM_SOURCE_DIR/tests/ui/fake_backend.py" "$fport"
declare -A port url
for b in prom vm down slow http500 http400 prometheus malformed shape; do
  port[$b]=$(free_port)
  case $b in
  prom) url[$b]=http://127.0.0.1:$pport ;;
  vm) url[$b]=http://127.0.0.1:$vport ;;
  down) url[$b]=http://127.0.0.1:$dead ;;
  *) url[$b]=http://127.0.0.1:$fport/$b ;;
  esac
  bg "$IM_BINARY" run --config.file "$IM_TMP/backend.yml" --query.backend-url "${url[$b]}" \
    --query.backend-timeout 1s --web.listen-address "127.0.0.1:${port[$b]}" >"$IM_TMP/im-$b.log" 2>&1
done
for p in $pport $lport "${port[@]}"; do wait_http "http://127.0.0.1:$p/-/ready" 30 || fail "port $p not ready"; done
wait_http "http://127.0.0.1:$vport/health" 30 || fail "victoria-metrics not ready"
curl -fsS --data-binary "@$IM_TMP/past.prom" "http://127.0.0.1:$vport/api/v1/import/prometheus" ||
  fail "victoria-metrics import"
curl -fsS "http://127.0.0.1:$vport/internal/force_flush" >/dev/null || fail "victoria-metrics flush"

phase "all servers ready"
# 4. refused: scrape_configs (and friends) with a backend
if "$IM_BINARY" run --config.file "$IM_TMP/scrape.yml" --query.backend-url "${url[prom]}" \
  --web.listen-address "127.0.0.1:$(free_port)" >"$IM_TMP/refused.log" 2>&1; then
  fail "scrape_configs with --query.backend-url was accepted"
fi
grep -q 'scrape_configs is not allowed with --query.backend-url' "$IM_TMP/refused.log" ||
  fail "no clear refusal: $(cat "$IM_TMP/refused.log")"

# enough data in all three stores for the 4 s rate windows of a 1 s interval
for s in $pport $vport $lport; do
  i=0
  until curl -fsS "http://127.0.0.1:$s/api/v1/query" --data-urlencode \
    'query=count(count_over_time(vllm:num_requests_running[30s]) >= 8) >= 2' | grep -q '"result":\[{'; do
    i=$((i + 1)); [ $i -lt 300 ] || fail "store on port $s has no data"
    sleep 0.1
  done
done
phase "data in every store"

# 1. the same answers as the stores themselves
now=$(date +%s)
$PY - "$now" "$pport" "${port[prom]}" "$vport" "${port[vm]}" <<'PY' || fail "API answers differ"
import json, sys, urllib.parse, urllib.request
now, pp, ip, vp, iv = int(sys.argv[1]), *sys.argv[2:]
t = now - 3
reqs = [
    ("query", {"query": "vllm:num_requests_running", "time": t}),
    ("query", {"query": "sum by (model_name) (rate(vllm:generation_tokens_total[5s]))", "time": t}),
    ("query", {"query": "scalar(count(up))", "time": t}),
    ("query_range", {"query": "histogram_quantile(0.9, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[4s])))",
                     "start": t - 8, "end": t, "step": 1}),
    ("query_range", {"query": "vllm:kv_cache_usage_perc", "start": t - 6, "end": t, "step": "2s"}),
    ("series", {"match[]": "vllm:num_requests_running", "start": t - 10, "end": t}),
    ("labels", {"match[]": "up", "start": t - 10, "end": t}),
    ("label/pod/values", {"match[]": "vllm:num_requests_running", "start": t - 10, "end": t}),
    ("label/__name__/values", {"start": t - 10, "end": t}),
    ("metadata", {"metric": "vllm:num_requests_running"}),
    ("query", {"query": "sum(rate(", "time": t}),  # a parse error: the store's, named
]
def get(port, path, params, method="GET"):
    q = urllib.parse.urlencode(params, doseq=True)
    u = "http://127.0.0.1:%s/api/v1/%s" % (port, path)
    r = urllib.request.Request(u + "?" + q) if method == "GET" else urllib.request.Request(u, data=q.encode())
    try:
        with urllib.request.urlopen(r, timeout=10) as f:
            code, body = f.status, f.read()
    except urllib.error.HTTPError as e:
        code, body = e.code, e.read()
    try:
        return code, json.loads(body)
    except ValueError:
        return code, {"status": "not JSON", "body": body[:300].decode(errors="replace")}
n = 0
for store, sp, via in (("prometheus", pp, ip), ("victoriametrics", vp, iv)):
    for path, params in reqs:
        if store == "victoriametrics" and path == "metadata":
            continue  # VictoriaMetrics 1.79 has no metadata
        for method in ("GET",) if path.startswith("label/") or path == "metadata" else ("GET", "POST"):
            sc, a = get(sp, path, params, method)
            ic, b = get(via, path, params, method)
            if a.get("status") == "error":
                want = "backend http://127.0.0.1:%s: %s" % (sp, a["error"])
                et = a["errorType"]  # VictoriaMetrics writes the status code: named by it
                et = {"400": "bad_data", "422": "execution"}.get(et, et)
                if (ic, b.get("errorType"), b.get("error")) != (sc, et, want):
                    sys.exit("%s %s %s: error %s %s, want %s %s" % (store, method, path, ic, b, sc, want))
            elif a != b or sc != ic:
                sys.exit("%s %s %s %s: infermon %s %s\n  store %s %s" % (store, method, path, params, ic, json.dumps(b)[:300], sc, json.dumps(a)[:300]))
            if path in ("query", "query_range") and a.get("status") == "success" and not a["data"]["result"] and "rate(" not in params["query"]:
                sys.exit("%s %s: empty result, the comparison means nothing" % (store, path))
            n += 1
# limit= applied also where the store ignores it (Prometheus 2.42)
_, full = get(pp, "series", {"match[]": "vllm:num_requests_running"})
_, lim = get(ip, "series", {"match[]": "vllm:num_requests_running", "limit": 1})
if len(full["data"]) < 2 or lim["data"] != full["data"][:1]:
    sys.exit("limit=1: %s of %s" % (lim, full))
for p, u in ((ip, "http://127.0.0.1:%s" % pp), (iv, "http://127.0.0.1:%s" % vp)):
    _, st = get(p, "status/query_backend", {})
    if st["data"]["type"] != "remote" or st["data"]["url"] != u:
        sys.exit("status/query_backend: %s" % st)
print("ok: %d answers equal the stores' own, limit applied, status names the store" % (n + 1))
PY

phase "API answers compared"
# 3. failing backends: a Prometheus error answer naming the backend
$PY - "$dead" "$fport" "${port[down]}" "${port[slow]}" "${port[http500]}" "${port[http400]}" \
  "${port[prometheus]}" "${port[malformed]}" "${port[shape]}" <<'PY' || fail "backend errors"
import json, sys, time, urllib.parse, urllib.request
dead, fp = sys.argv[1:3]
ports = dict(zip(["down", "slow", "http500", "http400", "prometheus", "malformed", "shape"], sys.argv[3:]))
want = {  # mode: (status, errorType, text in the message)
    "down": (503, "unavailable", "backend http://127.0.0.1:%s is unavailable" % dead),
    "slow": (503, "timeout", "did not answer within 1000 ms; raise --query.backend-timeout"),
    "http500": (502, "unavailable", "answered HTTP 500 to /api/v1/query: \"upstream store exploded\""),
    "http400": (503, "unavailable", "answered HTTP 400"),
    "prometheus": (422, "execution", "/prometheus: query processing would load too many samples"),
    "malformed": (502, "internal", "is not the Prometheus API's JSON"),
    "shape": (502, "internal", "does not have the shape of one"),
}
for mode, p in ports.items():
    for path in ("query", "label/__name__/values"):
        u = "http://127.0.0.1:%s/api/v1/%s?query=up" % (p, path)
        t0 = time.time()
        try:
            urllib.request.urlopen(u, timeout=10)
            sys.exit("%s %s: answered 200" % (mode, path))
        except urllib.error.HTTPError as e:
            code, body = e.code, json.loads(e.read())
        took = time.time() - t0
        st, et, text = want[mode]
        if path != "query":
            text = text.replace("/api/v1/query", "/api/v1/label/__name__/values")
        if mode == "shape" and path != "query":
            continue  # data [] is the shape of a label values answer
        if code != st or body.get("status") != "error" or body.get("errorType") != et or text not in body.get("error", "") \
                or "backend http://127.0.0.1:" not in body["error"]:
            sys.exit("%s %s: %s %s, want %s %s with %r" % (mode, path, code, body, st, et, text))
        if took > 3:
            sys.exit("%s %s: took %.1f s (timeout 1 s)" % (mode, path, took))
print("ok: down, slow, 500, 400, Prometheus error, malformed and misshapen answers named and coded")
PY

phase "backend errors checked"
# 2. the dashboard over the three stores, then over failing ones
to=$(($(date +%s) - 2)); from=$((to - 120))
mkdir -p "$SHOTS"
IM_VALUES_HASH="#/overview?from=$((hist_end - 120))&to=$hist_end" IM_EXPECT_ENGINES=vLLM,SGLang \
  node "$IM_SOURCE_DIR/tests/ui/backend_test.mjs" "#/overview?from=$from&to=$to" "$SHOTS" \
  local="http://127.0.0.1:$lport" prometheus="http://127.0.0.1:${port[prom]}" \
  victoriametrics="http://127.0.0.1:${port[vm]}" -- \
  down="http://127.0.0.1:${port[down]}=backend http://127.0.0.1:$dead is unavailable" \
  slow="http://127.0.0.1:${port[slow]}=backend http://127.0.0.1:$fport/slow did not answer within 1000 ms" \
  http500="http://127.0.0.1:${port[http500]}=backend http://127.0.0.1:$fport/http500 answered HTTP 500" \
  malformed="http://127.0.0.1:${port[malformed]}=backend http://127.0.0.1:$fport/malformed: .*not the Prometheus API's JSON" ||
  { for f in "$IM_TMP"/im-*.log; do tail -n 3 "$f"; done; fail "browser test failed (screenshots in $SHOTS)"; }
echo "query backend: passed in $(($(date +%s) - t_start)) s"

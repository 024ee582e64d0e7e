#!/usr/bin/env bash
# Compatibility with Prometheus 2.42: the same targets (a static exposition, a
# prometheus_client exporter, node_exporter, a down target) scraped by infermon
# and by Prometheus with the same relabelling (every action, hashmod included);
# /api/v1/targets labels and discoveredLabels, and the answers of the same
# queries, series, labels and label values compared field by field (values only
# where they cannot differ in time). Then promtool query instant|range|series|
# labels against infermon.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
EXP="$IM_SOURCE_DIR/tests/integration/exporter.py"
sport=$(free_port); gport=$(free_port); nport=$(free_port); pport=$(free_port); iport=$(free_port)
mkdir -p "$IM_TMP/www" "$IM_TMP/pdata"
cat >"$IM_TMP/www/metrics" <<'EXPO'
# HELP static_gauge A gauge.
# TYPE static_gauge gauge
static_gauge{a="1",b="x"} 1.5
static_gauge{a="2",b="<&>"} -2e-07
static_gauge{a="3",b="é\"\\n"} 1e+21
static_gauge{a="4"} NaN
static_gauge{a="5"} +Inf
# TYPE static_hist histogram
static_hist_bucket{le="0.1"} 1
static_hist_bucket{le="1"} 3
static_hist_bucket{le="+Inf"} 4
static_hist_sum 2.5
static_hist_count 4
# TYPE conflict gauge
conflict{job="inner",instance="i"} 7
EXPO
bg $PY "$IM_SOURCE_DIR/tests/lib/serve_dir.py" "$sport" --bind 127.0.0.1 --directory "$IM_TMP/www" >/dev/null 2>&1
bg $PY "$EXP" "$gport" good
bg prometheus-node-exporter --web.listen-address="127.0.0.1:$nport" --collector.disable-defaults \
  --collector.cpu --collector.loadavg >/dev/null 2>&1
cat >"$IM_TMP/cfg.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: static
    static_configs:
      - targets: ['127.0.0.1:$sport']
        labels: {__meta_zone: EU-West, team: Infra}
    relabel_configs:
      - {source_labels: [__address__], target_label: shard, modulus: 13, action: hashmod}
      - {source_labels: [__address__], target_label: shard_big, modulus: 1000003, action: hashmod}
      - {regex: '__meta_(.+)', replacement: 'm_\$1', action: labelmap}
      - {source_labels: [team], target_label: team_lc, action: lowercase}
      - {source_labels: [team], target_label: team_uc, action: uppercase}
      - {source_labels: [__address__], regex: '(.*):(\\d+)', target_label: port, replacement: 'p\$2'}
      - {source_labels: [team_lc], target_label: team_copy}
      - {source_labels: [team_lc], target_label: team_copy, action: keepequal}
      - {regex: 'team_copy', action: labeldrop}
    metric_relabel_configs:
      - {source_labels: [__name__, a], separator: '@', regex: 'static_gauge@5', action: drop}
  - job_name: honor
    honor_labels: true
    metrics_path: /metrics
    static_configs: [{targets: ['127.0.0.1:$sport']}]
    metric_relabel_configs:
      - {source_labels: [__name__], regex: 'conflict', action: keep}
  - job_name: py
    static_configs: [{targets: ['127.0.0.1:$gport', 'localhost:$gport']}]
    relabel_configs:
      - {source_labels: [__address__], regex: 'localhost.*', action: drop}
  - job_name: node
    params:
      'collect[]': [cpu]
    static_configs: [{targets: ['127.0.0.1:$nport']}]
    relabel_configs:
      - {source_labels: [__address__], target_label: hostport}
      - {source_labels: [hostport], target_label: instance, regex: '(.*):.*', replacement: '\$1'}
  - job_name: down
    static_configs: [{targets: ['127.0.0.1:1']}]
    relabel_configs:
      - {source_labels: [job], target_label: kept, action: dropequal}
YML
bg prometheus --config.file="$IM_TMP/cfg.yml" --storage.tsdb.path="$IM_TMP/pdata" \
  --web.listen-address="127.0.0.1:$pport" >"$IM_TMP/prom.log" 2>&1
bg "$IM_BINARY" run --promql.compat=2 --config.file="$IM_TMP/cfg.yml" --storage.tsdb.path="$IM_TMP/idata" \
  --web.listen-address="127.0.0.1:$iport" >"$IM_TMP/im.log" 2>&1
wait_http "http://127.0.0.1:$pport/-/ready" 60
wait_http "http://127.0.0.1:$iport/-/ready" 30
P="http://127.0.0.1:$pport"; I="http://127.0.0.1:$iport"
# both have scraped every target at least three times
for base in "$P" "$I"; do
  for i in $(seq 300); do
    n=$(curl -fsS "$base/api/v1/query?query=count(count_over_time(up%5B10s%5D)%3E%3D3)" | $PY -c '
import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
    [ "$n" = 5 ] && break
    sleep 0.2
  done
  [ "$n" = 5 ] || fail "$base did not scrape all targets"
done
$PY - "$P" "$I" <<'PY' || fail "answers differ from Prometheus"
import json, sys, time, urllib.parse, urllib.request
P, I = sys.argv[1], sys.argv[2]
def get(base, path, **params):
    q = urllib.parse.urlencode(params, doseq=True)
    try:
        with urllib.request.urlopen(base + path + ("?" + q if q else ""), timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
bad = 0
def check(what, a, b):
    global bad
    if a != b:
        bad += 1
        print("DIFF", what, "\n  prometheus:", a, "\n  infermon:  ", b)
# targets
def targets(base):
    d = get(base, "/api/v1/targets")[1]["data"]
    act = {}
    for t in d["activeTargets"]:
        act[(t["scrapePool"], t["scrapeUrl"])] = (t["labels"], t["discoveredLabels"], t["health"], t["scrapeInterval"], t["scrapeTimeout"])
    drop = sorted(json.dumps(t["discoveredLabels"], sort_keys=True) for t in d["droppedTargets"])
    return act, drop
pa, pd = targets(P); ia, id_ = targets(I)
check("active target keys", sorted(pa), sorted(ia))
for k in pa:
    if k in ia:
        check("target %s" % (k,), pa[k], ia[k])
check("dropped targets", pd, id_)
t = time.time() - 1
# instant queries: full answers where values are time-independent
for q in ['static_gauge', 'static_hist_bucket', 'sum by (job) (static_gauge{a!="4"})',
          'conflict', 'histogram_quantile(0.5, static_hist_bucket)', 'up', 'count(demo_requests_total) by (path, job)',
          'count(node_cpu_seconds_total) by (mode, instance, hostport)', 'scrape_samples_scraped{job=~"static|honor"}',
          'scrape_samples_post_metric_relabeling{job=~"static|honor"}', 'label_replace(static_gauge, "x", "$1", "b", "(.*)")',
          'vector(1)', '1.5', '"s"', 'static_gauge{a="1"}[5s] offset 0s > 0']:
    sp, rp = get(P, "/api/v1/query", query=q, time="%.3f" % t)
    si, ri = get(I, "/api/v1/query", query=q, time="%.3f" % t)
    check("status " + q, sp, si)
    if q.endswith("> 0"):  # a range vector: compare shape only
        check("error " + q, rp.get("errorType"), ri.get("errorType")); continue
    def norm(r):
        if r.get("status") != "success": return r
        d = r["data"]
        if d["resultType"] in ("vector", "matrix"):
            return d["resultType"], sorted(json.dumps(x["metric"], sort_keys=True) + " " + json.dumps(x.get("value", [0, ""])[1]) for x in d["result"])
        return d["resultType"], d["result"][1]
    check("query " + q, norm(rp), norm(ri))
# labels only for values that move
for q in ['rate(demo_requests_total[5s])', 'demo_latency_seconds_bucket', 'node_load1']:
    rp = get(P, "/api/v1/query", query=q, time="%.3f" % t)[1]["data"]["result"]
    ri = get(I, "/api/v1/query", query=q, time="%.3f" % t)[1]["data"]["result"]
    check("labels " + q, sorted(json.dumps(x["metric"], sort_keys=True) for x in rp), sorted(json.dumps(x["metric"], sort_keys=True) for x in ri))
# errors
for q, extra in [('sum(', {}), ('rate(x)', {}), ('1', {"time": "abc"})]:
    params = dict(query=q); params.update(extra)
    sp, rp = get(P, "/api/v1/query", **params); si, ri = get(I, "/api/v1/query", **params)
    check("error status " + q, sp, si); check("error " + q, (rp.get("errorType"), rp.get("error")), (ri.get("errorType"), ri.get("error")))
sp, rp = get(P, "/api/v1/query_range", query="1", start="10", end="5", step="1")
si, ri = get(I, "/api/v1/query_range", query="1", start="10", end="5", step="1")
check("range error", (sp, rp), (si, ri))
# series, labels, values for the static job
m = ['{job="static"}', 'up']
check("series", sorted(json.dumps(x, sort_keys=True) for x in get(P, "/api/v1/series", **{"match[]": m})[1]["data"]),
      sorted(json.dumps(x, sort_keys=True) for x in get(I, "/api/v1/series", **{"match[]": m})[1]["data"]))
check("labels", get(P, "/api/v1/labels", **{"match[]": m})[1], get(I, "/api/v1/labels", **{"match[]": m})[1])
check("label values", get(P, "/api/v1/label/b/values")[1], get(I, "/api/v1/label/b/values")[1])
check("job values", get(P, "/api/v1/label/job/values")[1], get(I, "/api/v1/label/job/values")[1])
pm = get(P, "/api/v1/metadata", metric="static_gauge")[1]; im = get(I, "/api/v1/metadata", metric="static_gauge")[1]
check("metadata", pm, im)
# /api/v1/status/tsdb over the same series: head counts equal; each top-10 list
# has the same counts, and the same names above the list's lowest count (ties at
# the cut are ordered arbitrarily by Prometheus)
ps = get(P, "/api/v1/status/tsdb")[1]["data"]; is_ = get(I, "/api/v1/status/tsdb")[1]["data"]
check("tsdb numSeries", ps["headStats"]["numSeries"], is_["headStats"]["numSeries"])
check("tsdb numLabelPairs", ps["headStats"]["numLabelPairs"], is_["headStats"]["numLabelPairs"])
for k in ["seriesCountByMetricName", "labelValueCountByLabelName", "memoryInBytesByLabelName", "seriesCountByLabelValuePair"]:
    pc = sorted((x["value"] for x in ps[k]), reverse=True); ic = sorted((x["value"] for x in is_[k]), reverse=True)
    check("tsdb counts " + k, pc, ic)
    if pc:
        cut = pc[-1]
        check("tsdb names " + k, sorted((x["name"], x["value"]) for x in ps[k] if x["value"] > cut),
              sorted((x["name"], x["value"]) for x in is_[k] if x["value"] > cut))
print("compared; differences:", bad)
sys.exit(1 if bad else 0)
PY
# promtool against infermon
now=$(date +%s)
# Outputs are captured first: grep -q exits at its first match, and a writer
# still writing then dies of SIGPIPE, which pipefail reports as a failure.
out=$(promtool query instant "$I" 'static_gauge{a="1"}')
grep -q '=> 1.5 @' <<<"$out" || fail "promtool query instant: $out"
out=$(promtool query range --start=$((now - 3)) --end="$now" --step=1s "$I" 'static_gauge{a="1"}')
grep -q '^1.5 @' <<<"$out" || fail "promtool query range: $out"
out=$(promtool query series --match='static_hist_bucket' "$I")
grep -q 'le="+Inf"' <<<"$out" || fail "promtool query series: $out"
out=$(promtool query labels "$I" job)
grep -qx 'static' <<<"$out" || fail "promtool query labels: $out"
echo "run_prom_compat: all passed"

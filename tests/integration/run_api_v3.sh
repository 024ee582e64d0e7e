#!/usr/bin/env bash
# Prometheus 3's API surface and ingest under --promql.compat=3 (the default), and
# compat 2 keeping 2.x's answers: buildinfo's version, /api/v1/features,
# format_query, parse_query, query_exemplars, targets/metadata, scrape_pools,
# status/walreplay, notifications, duration expressions through /api/v1/query, and
# le/quantile normalised on ingest ("1" -> "1.0" for histogram and summary
# families only). One exporter, one infermon per level.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
eport=$(free_port)
cat >"$IM_TMP/exp.py" <<'PYEOF'
import http.server, sys
body = b"""# HELP lat Request latency.
# TYPE lat histogram
lat_bucket{le="1"} 3
lat_bucket{le="2.50"} 5
lat_bucket{le="+Inf"} 6
lat_sum 7
lat_count 6
# TYPE s summary
s{quantile="0.50"} 1
s_sum 2
s_count 3
# TYPE g gauge
g{le="1"} 4
"""
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PYEOF
bg $PY "$IM_TMP/exp.py" "$eport"
wait_http "http://127.0.0.1:$eport/metrics" 30
cat >"$IM_TMP/cfg.yml" <<CFG
global: {scrape_interval: 1s}
scrape_configs:
  - job_name: e
    static_configs: [{targets: ["127.0.0.1:$eport"]}]
CFG
api() { curl -fsS "http://127.0.0.1:$port/api/v1/$1" "${@:2}"; }
# series of job e with a le or quantile label, as name:label=value words, sorted
bounds() {
  api series --data-urlencode 'match[]={job="e"}' | $PY -c '
import json, sys
for s in json.load(sys.stdin)["data"]:
    for l in ("le", "quantile"):
        if l in s: print("%s:%s=%s" % (s["__name__"], l, s[l]))' | sort | tr '\n' ' '
}
wait_scraped() {
  local i=0
  while [ $i -lt 300 ]; do
    [ "$(bounds | wc -w)" -ge 5 ] && return 0
    sleep 0.1; i=$((i + 1))
  done
  fail "the exporter's series did not arrive"
}
start() {
  port=$(free_port)
  bg "$IM_BINARY" run "$@" --config.file="$IM_TMP/cfg.yml" --storage.memory-only \
    --web.listen-address="127.0.0.1:$port" >>"$IM_TMP/im.log" 2>&1
  IPID=$!
  wait_http "http://127.0.0.1:$port/-/ready" 30
  wait_scraped
}

# ---- compat 3 (the default) ----
start
got=$(bounds)
want="g:le=1 lat_bucket:le=+Inf lat_bucket:le=1.0 lat_bucket:le=2.5 s:quantile=0.5 "
[ "$got" = "$want" ] || fail "compat 3 bounds: got '$got', want '$want'"
api status/buildinfo | grep -q '"version":"3.14.0+infermon.0.1.0"' || fail "buildinfo version"
f=$(api features)
echo "$f" | grep -q '"duration_expr":true' || fail "features: duration_expr"
echo "$f" | grep -q '"first_over_time":true' || fail "features: first_over_time"
echo "$f" | grep -q '"mad_over_time":false' || fail "features: experimental off without the flag"
if echo "$f" | grep -q '"holt_winters"'; then fail "features: holt_winters listed under compat 3"; fi
api format_query --data-urlencode 'query=sum(rate(x[5m*2]))by(job)' |
  grep -qF '"data":"sum by (job) (rate(x[10m]))"' || fail "format_query"
api parse_query --data-urlencode 'query=rate(x{a="b"}[5m])' | grep -qF \
  '"type":"matrixSelector","range":300000,"vectorSelector":{"type":"vectorSelector","name":"x"' ||
  fail "parse_query"
curl -sS "http://127.0.0.1:$port/api/v1/parse_query" --data-urlencode 'query=x(' | grep -qF \
  '"errorType":"bad_data","error":"invalid parameter \"query\": 1:3: parse error: unclosed left parenthesis"' ||
  fail "parse_query error"
api query_exemplars --data-urlencode 'query=lat_bucket' | grep -qF '"data":[]' || fail "query_exemplars"
api scrape_pools | grep -qF '"scrapePools":["e"]' || fail "scrape_pools"
api status/walreplay | grep -qF '"current":1' || fail "walreplay"
api notifications | grep -qF '"data":[]' || fail "notifications"
# targets/metadata carries the exporter's HELP (metadata comes with a scrape)
i=0
until api targets/metadata --data-urlencode 'metric=lat' --data-urlencode 'match_target={job="e"}' |
  grep -qF '"metric":"lat","type":"histogram","help":"Request latency."'; do
  i=$((i + 1)); [ $i -lt 100 ] || fail "targets/metadata"; sleep 0.1
done
[ "$(api targets/metadata --data-urlencode 'match_target={job="nope"}')" = '{"status":"success","data":[]}' ] ||
  fail "targets/metadata match_target"
# an exact matcher on the normalised bound; a duration expression with step()
api query --data-urlencode 'query=lat_bucket{le="1.0"}' | grep -qF '"le":"1.0"' || fail "le=1.0 query"
now=$(date +%s)
api query_range --data-urlencode 'query=count_over_time(up[step()*5])' --data-urlencode "start=$now" \
  --data-urlencode "end=$now" --data-urlencode 'step=1' | grep -q '"resultType":"matrix"' ||
  fail "duration expression in a range query"
kill "$IPID"
wait "$IPID" 2>/dev/null || true

# ---- compat 2: 2.x's answers ----
start --promql.compat=2
got=$(bounds)
want="g:le=1 lat_bucket:le=+Inf lat_bucket:le=1 lat_bucket:le=2.50 s:quantile=0.50 "
[ "$got" = "$want" ] || fail "compat 2 bounds: got '$got', want '$want'"
api status/buildinfo | grep -q '"version":"0.1.0"' || fail "compat 2 buildinfo version"
curl -sS "http://127.0.0.1:$port/api/v1/query" --data-urlencode 'query=x[5m*2]' |
  grep -qF 'in subquery or range, expected' || fail "compat 2 refuses duration expressions"
api features | grep -q '"holt_winters":true' || fail "compat 2 features: holt_winters"
echo "ok"

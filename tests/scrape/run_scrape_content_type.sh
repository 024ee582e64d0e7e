#!/usr/bin/env bash
# Scrape Content-Type handling as Prometheus 3: under --promql.compat=3 (the
# default) a response with no, a blank or an unknown Content-Type fails the
# scrape (up = 0, lastError names fallback_scrape_protocol) unless the job sets
# fallback_scrape_protocol, which then decides the format (the samples are
# stored); under --promql.compat=2 such a response is read as text, as 2.x did.
# scrape_protocols sets the Accept header. Bad values are config errors, and
# Prometheus 2.42's promtool refuses both keys (they are 2.49+/3.x keys).
source "$IM_SOURCE_DIR/tests/lib/common.sh"
eport=$(free_port)
cat >"$IM_TMP/exp.py" <<'PY'
import http.server, sys
text = b"# TYPE ct_metric gauge\nct_metric 7\n"
om = b"# TYPE ct_om gauge\nct_om 3\n# EOF\n"
types = {"/none": None, "/empty": "", "/unknown": "application/octet-stream",
         "/html": "text/html; charset=utf-8", "/ok": "text/plain; version=0.0.4",
         "/om_none": None, "/accept": "text/plain; version=0.0.4"}
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        p = self.path.split("?")[0]
        if p not in types:
            self.send_response(404); self.end_headers(); return
        if p == "/accept":
            with open(sys.argv[2], "w") as f:
                f.write(self.headers.get("Accept", "-") + "\n")
        body = om if p == "/om_none" else text
        self.send_response(200)
        if types[p] is not None:
            self.send_header("Content-Type", types[p])
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
bg $PY "$IM_TMP/exp.py" "$eport" "$IM_TMP/accept.log"
wait_http "http://127.0.0.1:$eport/ok" 30
T="static_configs: [{targets: ['127.0.0.1:$eport']}]"
cat >"$IM_TMP/cfg.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - {job_name: none, metrics_path: /none, $T}
  - {job_name: empty, metrics_path: /empty, $T}
  - {job_name: unknown, metrics_path: /unknown, $T}
  - {job_name: ok, metrics_path: /ok, $T}
  - {job_name: unknown_fb, metrics_path: /html, fallback_scrape_protocol: PrometheusText0.0.4, $T}
  - {job_name: none_fb, metrics_path: /none, fallback_scrape_protocol: PrometheusText1.0.0, $T}
  - {job_name: om_fb, metrics_path: /om_none, fallback_scrape_protocol: OpenMetricsText1.0.0, $T}
  - job_name: accept
    metrics_path: /accept
    scrape_protocols: [PrometheusText0.0.4, OpenMetricsText1.0.0]
    $T
YML
"$IM_BINARY" check config "$IM_TMP/cfg.yml" >/dev/null || fail "check config refused the keys"

# health JOB: "health|lastError" of the job's target, once it has been scraped
health() {
  curl -fsS "http://127.0.0.1:$port/api/v1/targets" | $PY -c '
import json, sys
for t in json.load(sys.stdin)["data"]["activeTargets"]:
    if t["scrapePool"] == sys.argv[1] and t["health"] != "unknown":
        print("%s|%s" % (t["health"], t["lastError"]))' "$1"
}
wait_health() {
  local i=0 h
  while [ $i -lt 300 ]; do
    h=$(health "$1")
    [ -n "$h" ] && { echo "$h"; return 0; }
    sleep 0.1; i=$((i + 1))
  done
  fail "job $1 was never scraped"
}
# value EXPR: the instant value of a one-series query ("" when empty)
value() {
  curl -fsS "http://127.0.0.1:$port/api/v1/query" --data-urlencode "query=$1" | $PY -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")'
}
wait_value() {
  local i=0
  while [ $i -lt 300 ]; do
    [ "$(value "$1")" = "$2" ] && return 0
    sleep 0.1; i=$((i + 1))
  done
  fail "$1: got '$(value "$1")', want $2"
}
start() {
  port=$(free_port)
  bg "$IM_BINARY" run "$@" --config.file="$IM_TMP/cfg.yml" --storage.memory-only \
    --web.listen-address="127.0.0.1:$port" >>"$IM_TMP/im.log" 2>&1
  IPID=$!
  wait_http "http://127.0.0.1:$port/-/ready" 30
}

# ---- compat 3 (the default) ----
start
blank="down|non-compliant scrape target sending blank Content-Type and no fallback_scrape_protocol specified for target"
h=$(wait_health none); [ "$h" = "$blank" ] || fail "none: '$h'"
h=$(wait_health empty); [ "$h" = "$blank" ] || fail "empty: '$h'"
h=$(wait_health unknown)
[ "$h" = 'down|received unsupported Content-Type "application/octet-stream" and no fallback_scrape_protocol specified for target' ] ||
  fail "unknown: '$h'"
for j in ok unknown_fb none_fb om_fb accept; do
  h=$(wait_health $j); [ "$h" = "up|" ] || fail "$j: '$h'"
done
wait_value 'up{job="none"}' 0
wait_value 'up{job="unknown"}' 0
[ -z "$(value 'ct_metric{job="none"}')" ] || fail "a failed scrape stored samples"
wait_value 'ct_metric{job="unknown_fb"}' 7
wait_value 'ct_metric{job="none_fb"}' 7
wait_value 'ct_om{job="om_fb"}' 3
wait_value 'up{job="om_fb"}' 1
# scrape_protocols: the Accept header in that order, then anything
acc=$(cat "$IM_TMP/accept.log")
case "$acc" in
  "text/plain;version=0.0.4,application/openmetrics-text;version=1.0.0;q=0.9,*/*;q=0.1") ;;
  *) fail "Accept with scrape_protocols: '$acc'" ;;
esac
curl -fsS "http://127.0.0.1:$port/api/v1/status/config" | grep -q 'fallback_scrape_protocol: PrometheusText0.0.4' ||
  fail "fallback_scrape_protocol missing from /api/v1/status/config"
kill "$IPID"; wait "$IPID" 2>/dev/null || true

# ---- compat 2: the 2.x text fallback ----
start --promql.compat=2
for j in none empty unknown ok; do
  h=$(wait_health $j); [ "$h" = "up|" ] || fail "compat 2 $j: '$h'"
done
wait_value 'ct_metric{job="unknown"}' 7
wait_value 'ct_metric{job="none"}' 7
kill "$IPID"; wait "$IPID" 2>/dev/null || true

# ---- bad values are config errors naming the key ----
bad() { # NAME YAML-FRAGMENT EXPECTED-MESSAGE-PART
  printf 'scrape_configs:\n  - job_name: j\n    %s\n    static_configs: [{targets: ["a:1"]}]\n' "$2" >"$IM_TMP/$1.yml"
  if "$IM_BINARY" check config "$IM_TMP/$1.yml" >"$IM_TMP/$1.out" 2>&1; then fail "$1 accepted"; fi
  grep -qF "$3" "$IM_TMP/$1.out" || { cat "$IM_TMP/$1.out"; fail "$1: no '$3'"; }
}
bad fb_unknown "fallback_scrape_protocol: PrometheusText0.0.5" \
  'invalid fallback_scrape_protocol for scrape config with job name "j": unknown scrape protocol PrometheusText0.0.5'
bad fb_case "fallback_scrape_protocol: prometheustext0.0.4" "unknown scrape protocol prometheustext0.0.4"
bad fb_proto "fallback_scrape_protocol: PrometheusProto" "PrometheusProto is not supported"
bad fb_list "fallback_scrape_protocol: [PrometheusText0.0.4]" "fallback_scrape_protocol must be a string"
bad sp_dup "scrape_protocols: [PrometheusText0.0.4, PrometheusText0.0.4]" "duplicated protocol in scrape_protocols"
bad sp_empty "scrape_protocols: []" "scrape_protocols must not be empty"
bad sp_unknown "scrape_protocols: [OpenMetricsText2.0.0]" "unknown scrape protocol OpenMetricsText2.0.0"
printf 'global:\n  scrape_protocols: [Foo]\n' >"$IM_TMP/g.yml"
"$IM_BINARY" check config "$IM_TMP/g.yml" >"$IM_TMP/g.out" 2>&1 && fail "global scrape_protocols: [Foo] accepted"
grep -qF "invalid scrape_protocols: unknown scrape protocol Foo" "$IM_TMP/g.out" || { cat "$IM_TMP/g.out"; fail "global scrape_protocols message"; }

# ---- Prometheus 2.42 does not know the keys (3.x; scrape_protocols 2.49+) ----
if command -v promtool >/dev/null; then
  printf 'scrape_configs:\n  - job_name: j\n    fallback_scrape_protocol: PrometheusText0.0.4\n    static_configs: [{targets: ["a:1"]}]\n' >"$IM_TMP/p.yml"
  if promtool check config "$IM_TMP/p.yml" >"$IM_TMP/p.out" 2>&1; then fail "promtool 2.42 accepted fallback_scrape_protocol"; fi
  grep -q "field fallback_scrape_protocol not found" "$IM_TMP/p.out" || { cat "$IM_TMP/p.out"; fail "promtool message"; }
fi
echo "scrape content type: compat 3 fails blank/unknown types, fallback and compat 2 read them"

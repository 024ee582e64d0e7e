#!/usr/bin/env bash
# A huge target does not starve a healthy one: next to a target exposing
# BIG_SERIES series (no sample_limit; each scrape takes long to parse and
# commit), a small target scraped every second misses no scrape slot: the gaps
# between its `up` samples stay within 1.5 intervals, and it is up all along,
# while the huge target's scrapes are stored too. With --scrape.workers=2 (the
# least default): one worker may be busy with the huge target all along.
# ctest-labels: nosan
source "$IM_SOURCE_DIR/tests/lib/common.sh"
BIG_SERIES=${BIG_SERIES:-300000}
WINDOW_S=${WINDOW_S:-20}
eport=$(free_port); iport=$(free_port)
cat >"$IM_TMP/exp.py" <<'PY'
import http.server, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
big = "".join('big_metric{i="%07d",pad="abcdefgh"} %d\n' % (i, i % 7) for i in range(n)).encode()
small = b"# TYPE small_metric gauge\nsmall_metric 1\n"
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        body = big if self.path == "/big" else small
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
PY
bg $PY "$IM_TMP/exp.py" "$eport" "$BIG_SERIES"
wait_http "http://127.0.0.1:$eport/small" 60
cat >"$IM_TMP/cfg.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: small
    metrics_path: /small
    static_configs: [{targets: ['127.0.0.1:$eport']}]
  - job_name: big
    metrics_path: /big
    scrape_interval: 4s
    scrape_timeout: 4s
    static_configs: [{targets: ['127.0.0.1:$eport']}]
YML
U="http://127.0.0.1:$iport"
for bad in 0 257 x; do
  if timeout 10 "$IM_BINARY" run --scrape.workers=$bad >"$IM_TMP/bad" 2>&1; then fail "--scrape.workers=$bad accepted"; fi
  grep -q "infermon run: --scrape.workers: bad number \"$bad\" (must be 1 to 256)" "$IM_TMP/bad" ||
    fail "--scrape.workers=$bad: $(cat "$IM_TMP/bad")"
done
bg "$IM_BINARY" run --config.file="$IM_TMP/cfg.yml" --storage.tsdb.path="$IM_TMP/data" \
  --web.listen-address="127.0.0.1:$iport" --scrape.workers="${SCRAPE_WORKERS:-2}" \
  >"$IM_TMP/log" 2>&1
wait_http "$U/-/ready" 30
grep -q "msg=\"Scrape workers\" workers=${SCRAPE_WORKERS:-2}" "$IM_TMP/log" || fail "no workers log line"

q() { curl -fsS "$U/api/v1/query" --data-urlencode "query=$1" ${2:+--data-urlencode "time=$2"}; }
# the first scrape of the huge target (all series created) is stored
for _ in $(seq 600); do
  n=$(q 'up{job="big"} == 1' | $PY -c 'import json,sys; print(len(json.load(sys.stdin)["data"]["result"]))')
  [ "$n" = 1 ] && break
  sleep 0.1
done
[ "$n" = 1 ] || { tail -20 "$IM_TMP/log"; fail "the huge target was never scraped"; }
t0=$($PY -c 'import time; print(time.time())')
# wait for the window to fill: WINDOW_S scrapes of the small target after t0
for _ in $(seq $((WINDOW_S * 30))); do
  got=$(q "up{job=\"small\"}[$((WINDOW_S * 3))s]" | $PY -c '
import json, sys
t0 = float(sys.argv[1])
r = json.load(sys.stdin)["data"]["result"]
print(sum(1 for t, v in r[0]["values"] if t > t0) if r else 0)' "$t0")
  [ "$got" -ge "$WINDOW_S" ] && break
  sleep 0.2
done
t1=$($PY -c 'import time; print(time.time())')
# gaps between the small target's scrapes over [t0 - 1, t1], and its up values
q "up{job=\"small\"}[$((WINDOW_S * 3))s]" "$t1" | $PY -c '
import json, sys
t0, iv = float(sys.argv[1]), 1.0
vals = json.load(sys.stdin)["data"]["result"][0]["values"]
ts = [float(t) for t, v in vals if float(t) >= t0 - 1]
down = [t for t, v in vals if float(t) >= t0 - 1 and v != "1"]
gaps = [b - a for a, b in zip(ts, ts[1:])]
print("small target: %d scrapes in %.1f s, max gap %.2f s, down %d" % (len(ts), ts[-1] - ts[0], max(gaps), len(down)))
bad = [g for g in gaps if g > 1.5 * iv]
if bad or down or len(ts) < 10:
    print("FAIL: gaps over 1.5 intervals: %s; down at %s" % (bad, down)); sys.exit(1)
' "$t0" || { tail -20 "$IM_TMP/log"; fail "the small target missed scrape slots"; }
# the huge target kept being scraped and stored meanwhile, whole
q "up{job=\"big\"}[$((WINDOW_S * 3))s]" "$t1" | $PY -c '
import json, sys
t0 = float(sys.argv[1])
vals = [(float(t), v) for t, v in json.load(sys.stdin)["data"]["result"][0]["values"] if float(t) >= t0]
print("big target: %d scrapes in the window, up %s" % (len(vals), sorted(set(v for t, v in vals))))
sys.exit(0 if len(vals) >= 2 and all(v == "1" for t, v in vals) else 1)
' "$t0" || fail "the huge target was not scraped every interval"
n=$(q 'count(big_metric)' | $PY -c 'import json,sys; print(json.load(sys.stdin)["data"]["result"][0]["value"][1])')
[ "$n" = "$BIG_SERIES" ] || fail "count(big_metric) = $n, want $BIG_SERIES"
curl -fsS "$U/api/v1/targets" | $PY -c '
import json, sys
a = json.load(sys.stdin)["data"]["activeTargets"]
h = {t["labels"]["job"]: (t["health"], t["lastError"]) for t in a}
print("targets:", h)
sys.exit(0 if h == {"small": ("up", ""), "big": ("up", "")} else 1)' || fail "targets not both up"
echo PASS

#!/usr/bin/env bash
# Hostile requests against `infermon run`, side by side with Prometheus 2.42:
# extreme time and duration parameters (the range query that used to abort the
# daemon with a 1.8e19-byte allocation among them) answer with the same status
# codes as Prometheus and the daemon stays up; /api/v1/status/config hides the
# password of a remote-write URL as Prometheus does (xxxxx) and every other
# secret (<secret>); a remote write with a label name twice is refused with 400;
# a path with %00 never serves another file; a 2 MiB label value scrapes (no
# hidden line limit) and label_limit names itself.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
wport=$(free_port); iport=$(free_port); pport=$(free_port)
mkdir -p "$IM_TMP/www"
$PY - "$IM_TMP/www/metrics" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write('big_value{v="%s"} 1\n' % ("x" * (2 << 20)))
    f.write('many_labels{a="1",b="2",c="3",d="4"} 1\n')
PY
bg $PY "$IM_SOURCE_DIR/tests/lib/serve_dir.py" "$wport" --bind 127.0.0.1 --directory "$IM_TMP/www" >/dev/null 2>&1
cfg() { # $1 = file
  cat >"$1" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: big
    static_configs: [{targets: ['127.0.0.1:$wport']}]
    basic_auth: {username: u, password: s3cr1t-scrape}
  - job_name: lab
    label_limit: 3
    static_configs: [{targets: ['127.0.0.1:$wport']}]
    authorization: {credentials: s3cr1t-token}
remote_write:
  - url: http://rwuser:s3cr1t-url@127.0.0.1:1/api/v1/write
    basic_auth: {username: x, password: s3cr1t-rw}
alerting:
  alertmanagers:
    - basic_auth: {username: am, password: s3cr1t-am}
      static_configs: [{targets: ['127.0.0.1:2']}]
YML
}
cfg "$IM_TMP/im.yml"
cfg "$IM_TMP/prom.yml"
# The 2 MiB label value below is over the store's default series size
# (--storage.tsdb.max-series-bytes, 1 MiB; tested in run_storage_limits): raise it.
# A store on disk: remote_write reads the WAL (refused with --storage.memory-only).
"$IM_BINARY" run --promql.compat=2 --config.file="$IM_TMP/im.yml" --storage.tsdb.path="$IM_TMP/idata" \
  --storage.tsdb.wal-fsync=never \
  --storage.tsdb.max-series-bytes=4MiB \
  --web.listen-address="127.0.0.1:$iport" --web.enable-remote-write-receiver >"$IM_TMP/im.log" 2>&1 &
IPID=$!
IM_PIDS+=($IPID)
prometheus --config.file="$IM_TMP/prom.yml" --storage.tsdb.path="$IM_TMP/pdata" \
  --web.listen-address="127.0.0.1:$pport" --web.enable-remote-write-receiver >"$IM_TMP/prom.log" 2>&1 &
IM_PIDS+=($!)
I="http://127.0.0.1:$iport"; P="http://127.0.0.1:$pport"
wait_http "$I/-/ready" 30 || { cat "$IM_TMP/im.log"; fail "infermon not ready"; }
wait_http "$P/-/ready" 60 || { tail -20 "$IM_TMP/prom.log"; fail "prometheus not ready"; }

# the same status code as Prometheus 2.42 for every case
$PY - "$I" "$P" <<'PY' || { tail -20 "$IM_TMP/im.log"; fail "status codes differ from Prometheus"; }
import sys, urllib.error, urllib.parse, urllib.request
I, P = sys.argv[1], sys.argv[2]
R = "/api/v1/query_range?query=vector(1)&"
Q = "/api/v1/query?query=vector(1)&"
cases = [
    R + "start=-9e15&end=9e15&step=1", R + "start=-9e18&end=9e18&step=1",
    R + "start=NaN&end=1&step=1", R + "start=1e309&end=1e309&step=1",
    R + "start=0&end=100&step=1e309", R + "start=0&end=100&step=Inf", R + "start=0&end=100&step=NaN",
    R + "start=0&end=100&step=0", R + "start=0&end=100&step=-1", R + "start=0&end=100&step=9e15",
    R + "start=0&end=100&step=9999999999999y", R + "start=0&end=100&step=292y",
    R + "start=0&end=100&step=293y", R + "start=0&end=100&step=0.0001", R + "start=0&end=1&step=1e-10",
    R + "start=9999-12-31T23:59:59Z&end=9999-12-31T23:59:59Z&step=1",
    R + "start=0000-01-01T00:00:00Z&end=0000-01-01T00:00:00Z&step=1",
    R + "start=0000-01-01T00:00:00Z&end=9999-12-31T23:59:59Z&step=1",
    R + "start=-292273086-05-16T16:47:06Z&end=292277025-08-18T07:12:54.999999999Z&step=1",
    R + "start=1&end=0&step=1", R + "start=0&end=1",
    R + "start=0&end=100&step=1&timeout=-1s", R + "start=0&end=100&step=1&timeout=-1",
    R + "start=0&end=100&step=1&timeout=0", R + "start=0&end=100&step=1&timeout=9e15",
    R + "start=0&end=100&step=1&timeout=9999999999999y", R + "start=0&end=100&step=1&timeout=1e309",
    Q + "time=9e15", Q + "time=-9e15", Q + "time=9e18", Q + "time=Inf", Q + "time=-Inf", Q + "time=NaN",
    Q + "time=1e309", Q + "time=9999-12-31T23:59:59Z", Q + "time=0000-01-01T00:00:00Z",
    Q + "time=10000-01-01T00:00:00Z", Q + "time=9223372036854775.807", Q + "time=-9223372036854775.808",
    Q + "time=1&timeout=-5s", Q + "time=1&timeout=Inf", Q + "time=1&timeout=292y",
    "/api/v1/query?query=up offset 9999999y&time=0", "/api/v1/query?query=up @ 1e309&time=0",
    "/api/v1/query?query=up @ -9e15&time=0", "/api/v1/query?query=up[292y]&time=0",
    "/api/v1/query?query=rate(up[5m])&time=-9223372036854775.808",
    "/api/v1/series?match[]=up&start=-9e15&end=9e15", "/api/v1/series?match[]=up&start=Inf&end=NaN",
    "/api/v1/series?match[]=up&start=1e309", "/api/v1/labels?start=-9e15&end=9e15",
    "/api/v1/labels?start=NaN", "/api/v1/labels?end=1e309",
    "/api/v1/label/job/values?start=-Inf&end=Inf", "/api/v1/label/job/values?start=10&end=1",
    "/api/v1/metadata?limit=99999999999999999999", "/api/v1/metadata?limit=abc",
]
def enc(p):
    path, _, q = p.partition("?")
    return path + "?" + "&".join(k + "=" + urllib.parse.quote(v, safe="")
                                 for k, _, v in (x.partition("=") for x in q.split("&")))
def status(base, p):
    try:
        with urllib.request.urlopen(base + enc(p), timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
bad = 0
for c in cases:
    a, b = status(I, c), status(P, c)
    if a != b:
        print("%s: infermon %d, prometheus %d" % (c, a, b)); bad += 1
assert status(I, "/-/healthy") == 200, "daemon died"
print("%d cases, %d differ" % (len(cases), bad))
sys.exit(1 if bad else 0)
PY
kill -0 "$IPID" || fail "daemon died"
body=$(curl -s "$I/api/v1/query_range?query=vector(1)&start=-9e15&end=9e15&step=1")
[[ $body == *'exceeded maximum resolution of 11,000 points per timeseries'* ]] || fail "resolution: $body"

# secrets in /api/v1/status/config: as Prometheus prints them
for base in "$I" "$P"; do
  curl -fsS "$base/api/v1/status/config" | $PY -c 'import json,sys; print(json.load(sys.stdin)["data"]["yaml"])' \
    >"$IM_TMP/cfg.$([ "$base" = "$I" ] && echo im || echo prom)"
done
for f in im prom; do
  ! grep -n 's3cr1t' "$IM_TMP/cfg.$f" || fail "a secret in the $f config dump"
  grep -q -- '- url: http://rwuser:xxxxx@127.0.0.1:1/api/v1/write' "$IM_TMP/cfg.$f" || fail "$f: url"
  [ "$(grep -c 'password: <secret>' "$IM_TMP/cfg.$f")" = 3 ] || fail "$f: passwords"
  grep -q 'credentials: <secret>' "$IM_TMP/cfg.$f" || fail "$f: credentials"
done

# remote write: a label name twice in a series is refused, the request stored nothing
$PY - "$I" <<'PY' || fail "remote write"
import os, sys, time, urllib.request
sys.path.insert(0, os.environ["IM_SOURCE_DIR"] + "/tests/lib")
import remote_write as rw
I = sys.argv[1]
def write(series):
    t = int(time.time() * 1000)
    st, body, _ = rw.post(I, rw.v1_request([(ls, [(t, 1)]) for ls in series]), encoding=None, timeout=10)
    return st, body.encode()
code, body = write([[("__name__", "rw_ok_first"), ("a", "1")], [("__name__", "rw_dup"), ("a", "1"), ("b", "2"), ("a", "3")]])
assert code == 400 and b'label name "a" is not unique: invalid sample' in body, (code, body)
code, body = write([[("__name__", "rw_empty"), ("", "x")]])
assert code == 400, (code, body)
code, body = write([[("__name__", "rw_ok"), ("z", "1"), ("a", "2")]])
assert code == 204, (code, body)
with urllib.request.urlopen(I + "/api/v1/series?match[]=%7B__name__%3D~%22rw_.%2A%22%7D") as r:
    data = r.read().decode()
assert data == '{"status":"success","data":[{"__name__":"rw_ok","a":"2","z":"1"}]}', data
PY

# paths: %00 and dot segments never reach another file or handler
code=$(curl -s -o /dev/null -w '%{http_code}' "$I/static/app.js")
[ "$code" = 200 ] || fail "/static/app.js: $code"
for u in '/static/app.js%00.html' '/static/app.js%00' '/index.html%00.js' '/static/x/../app.js' \
  '/static/%2e%2e/index.html' '/-/healthy%00x' '/api/v1/query%00x?query=1' '/static/app.js%0a'; do
  code=$(curl -s --path-as-is -o "$IM_TMP/p.out" -w '%{http_code}' "$I$u")
  [ "$code" = 404 ] || fail "$u: $code $(head -c 100 "$IM_TMP/p.out")"
done

# scraping: a 2 MiB label value is read (no hidden line limit); label_limit names itself
for i in $(seq 150); do
  n=$(curl -fsS "$I/api/v1/query?query=count(big_value)" | $PY -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
  [ "$n" = 1 ] && break; sleep 0.2
done
[ "$n" = 1 ] || { curl -s "$I/api/v1/targets" | head -c 600; fail "the 2 MiB label value was not scraped"; }
len=$(curl -fsS "$I/api/v1/query?query=big_value" | $PY -c 'import json,sys; print(len(json.load(sys.stdin)["data"]["result"][0]["metric"]["v"]))')
[ "$len" = $((2 << 20)) ] || fail "label value length $len"
for i in $(seq 100); do
  e=$(curl -fsS "$I/api/v1/targets" | $PY -c '
import json,sys
t = [x for x in json.load(sys.stdin)["data"]["activeTargets"] if x["scrapePool"] == "lab"]
print(t[0]["lastError"] if t else "")')
  [ -n "$e" ] && break; sleep 0.1
done
[[ $e == *label_limit* ]] || fail "label_limit error: '$e'"
kill -0 "$IPID" || fail "daemon died"
echo "run_api_limits: all passed"

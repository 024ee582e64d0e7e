#!/usr/bin/env bash
# OTLP metrics receiver (POST /api/v1/otlp/v1/metrics): requests built by our
# own encoder (tests/otlp/otlp_encode.py) with every data-point type, resource
# attributes, gzip, OTLP/JSON, staleness; the API then shows the exact series names,
# labels and values Prometheus 3's receiver writes (counter _total, unit
# suffixes, histogram buckets, summary quantiles, target_info, job/instance).
# Rejections come back as partial_success (exponential histogram, delta sum,
# out-of-order sample); a malformed request is 400 with nothing stored; a wrong
# content type 415 (JSON is accepted); a body over --web.remote-write-max-bytes 413 naming the flag
# (also when only its gzip-inflated size is over); the receiver off → 404.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
echo 'scrape_configs: []' >"$IM_TMP/im.yml"
start() { # PORT DATA extra flags...
  local port=$1 data=$2
  shift 2
  "$IM_BINARY" run --config.file="$IM_TMP/im.yml" --storage.tsdb.path="$IM_TMP/$data" \
    --web.listen-address="127.0.0.1:$port" --storage.tsdb.wal-fsync=never "$@" \
    >>"$IM_TMP/im.log" 2>&1 &
  IM_PIDS+=($!)
  LASTPID=$!
  wait_http "http://127.0.0.1:$port/-/ready" 30
}
# no local store to write into
if "$IM_BINARY" run --query.backend-url=http://127.0.0.1:1 --web.enable-otlp-receiver \
  --web.listen-address=127.0.0.1:0 >"$IM_TMP/backend.log" 2>&1; then
  fail "--query.backend-url with --web.enable-otlp-receiver started"
fi
grep -q -- "not with --web.enable-otlp-receiver" "$IM_TMP/backend.log" || fail "backend: $(cat "$IM_TMP/backend.log")"
off=$(free_port)
start "$off" off
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/x-protobuf' \
  --data-binary 'x' "http://127.0.0.1:$off/api/v1/otlp/v1/metrics")
[ "$code" = 404 ] || fail "receiver off: got $code, want 404"
kill "$LASTPID"; wait "$LASTPID" 2>/dev/null || true
port=$(free_port)
start "$port" on --web.enable-otlp-receiver --web.remote-write-max-bytes=4KB
PYTHONPATH="$IM_SOURCE_DIR/tests/otlp" $PY - "http://127.0.0.1:$port" <<'PY' || { tail -20 "$IM_TMP/im.log"; fail "OTLP ingest"; }
import gzip, json, sys, time, urllib.error, urllib.parse, urllib.request
import otlp_encode as oe
B = sys.argv[1]
U = B + "/api/v1/otlp/v1/metrics"

def post(body, ctype="application/x-protobuf", enc=None):
    h = {"Content-Type": ctype}
    if enc:
        h["Content-Encoding"] = enc
    req = urllib.request.Request(U, data=body, headers=h, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()

def query(q, t_ms):
    u = B + "/api/v1/query?" + urllib.parse.urlencode({"query": q, "time": "%.3f" % (t_ms / 1000)})
    with urllib.request.urlopen(u, timeout=30) as r:
        return json.loads(r.read())["data"]["result"]

def series(q, t_ms):
    return sorted((json.dumps(x["metric"], sort_keys=True), x["value"][1]) for x in query(q, t_ms))

def check(what, got, want):
    if got != want:
        print("FAIL %s:\n got  %s\n want %s" % (what, got, want))
        sys.exit(1)

t = int(time.time() * 1000) - 20000
code, body = post(oe.sample_request(t))
check("status", code, 200)
rej, msg = oe.decode_response(body)
check("rejected", rej, 2)
assert 'exponential histogram "lat.exp"' in msg and "invalid temporality" in msg and '"delta.c"' in msg, msg

R = {"job": "shop/checkout", "instance": "pod-1"}
def lab(name, **kw):
    d = dict(R, __name__=name)
    d.update(kw)
    return json.dumps(d, sort_keys=True)

check("gauge", series("queue_depth", t), [(lab("queue_depth", queue="q1"), "7")])
check("counter", series("http_server_requests_total", t),
      [(lab("http_server_requests_total", http_method="GET"), "42")])
check("histogram", series('{__name__=~"http_server_duration_seconds.*"}', t), sorted([
    (lab("http_server_duration_seconds_bucket", le="0.1"), "4"),
    (lab("http_server_duration_seconds_bucket", le="1"), "9"),
    (lab("http_server_duration_seconds_bucket", le="+Inf"), "10"),
    (lab("http_server_duration_seconds_sum"), "3.5"),
    (lab("http_server_duration_seconds_count"), "10")]))
check("summary", series('{__name__=~"rpc_latency_milliseconds.*"}', t), sorted([
    (lab("rpc_latency_milliseconds", quantile="0.5"), "9"),
    (lab("rpc_latency_milliseconds", quantile="0.99"), "15"),
    (lab("rpc_latency_milliseconds_sum"), "30"),
    (lab("rpc_latency_milliseconds_count"), "3")]))
check("ratio", series("cache_hit_ratio", t), [(lab("cache_hit_ratio"), "1" if False else "0.5")])
check("target_info", series("target_info", t),
      [(lab("target_info", host_name="node-a", k8s_pod_name="p1"), "1")])
check("rejected not stored", series('{__name__=~"lat_exp.*|delta.*"}', t), [])
check("histogram_quantile", query("histogram_quantile(0.5, http_server_duration_seconds_bucket)", t)[0]["value"][1],
      str(0.1 + (1 - 0.1) * (5 - 4) / 5))

# gzip, and a resource without service attributes (no job, no target_info)
g = oe.request([{"attrs": {}, "metrics": [
    {"name": "gz.gauge", "unit": "By", "type": "gauge", "points": [{"t_ms": t, "value": 3.25, "attrs": {"9a": "x", "_b": "y"}}]}]}])
code, body = post(gzip.compress(g), enc="gzip")
check("gzip status", (code, oe.decode_response(body)), (200, (0, "")))
check("gzip gauge", series("gz_gauge_bytes", t),
      [(json.dumps({"__name__": "gz_gauge_bytes", "key_9a": "x", "key_b": "y"}, sort_keys=True), "3.25")])

# repeated fields not packed, a bound written in Go's %f form
u = oe.request([{"attrs": {"service.name": "unp"}, "metrics": [
    {"name": "unp.h", "type": "histogram", "points": [{"t_ms": t, "count": 3, "unpacked": True,
     "bounds": [1e-05, 2.5e21], "counts": [1, 1, 1]}]}]}])
check("unpacked status", post(u)[0], 200)
check("unpacked", series("unp_h_bucket", t), sorted([
    (json.dumps({"__name__": "unp_h_bucket", "job": "unp", "le": le}, sort_keys=True), v)
    for le, v in (("0.00001", "1"), ("2500000000000000000000", "2"), ("+Inf", "3"))]))

# OTLP/JSON (proto3 JSON mapping: 64-bit integers as strings, camelCase names)
tn = str(t * 1000000)
j = {"resourceMetrics": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "js"}},
        {"key": "region", "value": {"stringValue": "eu"}}]},
    "scopeMetrics": [{"scope": {"name": "s"}, "metrics": [
        {"name": "js.requests", "sum": {"aggregationTemporality": 2, "isMonotonic": True,
            "dataPoints": [{"timeUnixNano": tn, "asInt": "12", "attributes": [
                {"key": "ok", "value": {"boolValue": True}}, {"key": "n", "value": {"intValue": "5"}}]}]}},
        {"name": "js.lat", "unit": "s", "histogram": {"aggregationTemporality": 2, "dataPoints": [
            {"timeUnixNano": tn, "count": "4", "sum": 2.0, "bucketCounts": ["1", "3"], "explicitBounds": [0.5]}]}},
        {"name": "js.exp", "exponentialHistogram": {"aggregationTemporality": 2, "dataPoints": [
            {"timeUnixNano": tn, "count": "1", "scale": 2, "positive": {"offset": 1, "bucketCounts": ["1"]}}]}}]}]}]}
code, body = post(json.dumps(j).encode(), ctype="application/json")
check("json status", code, 200)
jr = json.loads(body)
check("json partial", jr["partialSuccess"]["rejectedDataPoints"], "1")
assert 'exponential histogram "js.exp"' in jr["partialSuccess"]["errorMessage"], jr
check("json sum", series("js_requests_total", t),
      [(json.dumps({"__name__": "js_requests_total", "job": "js", "ok": "true", "n": "5"}, sort_keys=True), "12")])
check("json hist", series('{__name__=~"js_lat_seconds.*"}', t), sorted([
    (json.dumps({"__name__": n, "job": "js", **l}, sort_keys=True), v) for n, l, v in (
        ("js_lat_seconds_bucket", {"le": "0.5"}, "1"), ("js_lat_seconds_bucket", {"le": "+Inf"}, "4"),
        ("js_lat_seconds_sum", {}, "2"), ("js_lat_seconds_count", {}, "4"))]))
check("json target_info", series('target_info{job="js"}', t),
      [(json.dumps({"__name__": "target_info", "job": "js", "region": "eu"}, sort_keys=True), "1")])
code, body = post(gzip.compress(json.dumps({"resourceMetrics": []}).encode()), ctype="application/json", enc="gzip")
check("json gzip", (code, json.loads(body)), (200, {}))

# staleness: no recorded value → the series ends
s1 = oe.request([{"attrs": {"service.name": "st"}, "metrics": [
    {"name": "st.g", "type": "gauge", "points": [{"t_ms": t, "value": 1.0}, {"t_ms": t + 5000, "value": 1.0, "flags": 1}]}]}])
check("stale status", post(s1)[0], 200)
check("before stale", len(query("st_g", t + 1000)), 1)
check("after stale", query("st_g", t + 6000), [])

# out of order → partial success, the rest written
check("ooo first", post(oe.request([{"attrs": {"service.name": "ooo"}, "metrics": [
    {"name": "ooo.g", "type": "gauge", "points": [{"t_ms": t, "value": 1.0}]}]}]))[0], 200)
o1 = oe.request([{"attrs": {"service.name": "ooo"}, "metrics": [
    {"name": "ooo.g", "type": "gauge", "points": [{"t_ms": t - 10000, "value": 2.0}]},
    {"name": "ooo.h", "type": "gauge", "points": [{"t_ms": t, "value": 5.0}]}]}])
code, body = post(o1)
rej, msg = oe.decode_response(body)
check("ooo", (code, rej), (200, 1))
assert "ooo_g" in msg and "out of order" in msg.lower(), msg
check("ooo rest", series("ooo_h", t), [(json.dumps({"__name__": "ooo_h", "job": "ooo"}, sort_keys=True), "5")])

# malformed: a valid resource, then a truncated one → 400, nothing stored
good = oe.request([{"attrs": {"service.name": "bad"}, "metrics": [
    {"name": "malformed.first", "type": "gauge", "points": [{"t_ms": t, "value": 1.0}]}]}])
code, body = post(good + oe.sample_request(t)[:-7])
check("malformed status", code, 400)
assert b"malformed" in body, body
check("malformed stored nothing", query("malformed_first", t), [])
code, body = post(b"\x0a\xff\xff\xff\xff\x0f")
check("garbage", code, 400)

# content type, encoding, size
check("xml", post(b"<a/>", ctype="application/xml")[0], 415)
check("bad json", post(b"{", ctype="application/json")[0], 400)
check("json wrong type", post(b'{"resourceMetrics":[{"scopeMetrics":"x"}]}', ctype="application/json")[0], 400)
check("deflate", post(good, enc="br")[0], 415)
code, body = post(good + b"\x00" * 5000)
check("too large", code, 413)
assert b"--web.remote-write-max-bytes" in body, body
code, body = post(gzip.compress(good * 200), enc="gzip")
check("inflated too large", code, 413)
assert b"--web.remote-write-max-bytes" in body, body
code, body = post(b"\x1f\x8b\x08\x00garbage", enc="gzip")
check("bad gzip", code, 400)

with urllib.request.urlopen(B + "/metrics", timeout=30) as r:
    m = r.read().decode()
assert "infermon_otlp_data_points_rejected_total 4" in m, [l for l in m.splitlines() if "otlp" in l]
print("ok")
PY
# the daemons' logs: no sanitizer report (leaks are written at exit)
kill -TERM "$LASTPID" 2>/dev/null || true
wait "$LASTPID" 2>/dev/null || true
if grep -En 'ERROR: AddressSanitizer|runtime error:|LeakSanitizer' "$IM_TMP/im.log" >"$IM_TMP/san.txt"; then
  fail "sanitizer report: $(head -20 "$IM_TMP/san.txt")"
fi

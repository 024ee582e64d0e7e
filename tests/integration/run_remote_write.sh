#!/usr/bin/env bash
# Remote-write receiver: Prometheus 2.42 scrapes a prometheus_client exporter and
# a static exposition and remote-writes into infermon; every raw sample it holds
# must arrive in infermon with the same timestamp and value, and the staleness
# markers too (a series removed from the exposition and a killed exporter vanish
# from instant queries in both). Then durability: a write answered 204 survives a
# SIGKILL right after the answer. And the switch: without the flag, 404.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
EXP="$IM_SOURCE_DIR/tests/integration/exporter.py"
sport=$(free_port); gport=$(free_port); pport=$(free_port); iport=$(free_port); jport=$(free_port)
mkdir -p "$IM_TMP/www" "$IM_TMP/pdata"
printf 'kept_metric{a="1"} 1\ngone_metric{a="1"} 2\n' >"$IM_TMP/www/metrics"
bg $PY "$IM_SOURCE_DIR/tests/lib/serve_dir.py" "$sport" --bind 127.0.0.1 --directory "$IM_TMP/www" >/dev/null 2>&1
$PY "$EXP" "$gport" good &
EXPPID=$!
IM_PIDS+=($EXPPID)
echo 'scrape_configs: []' >"$IM_TMP/im.yml"
start_im() { start_receiver "$iport"; }
start_im
cat >"$IM_TMP/prom.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: static
    static_configs: [{targets: ['127.0.0.1:$sport']}]
  - job_name: py
    static_configs: [{targets: ['127.0.0.1:$gport']}]
remote_write:
  - url: http://127.0.0.1:$iport/api/v1/write
    queue_config: {batch_send_deadline: 500ms, min_backoff: 100ms, max_backoff: 1s}
YML
prometheus --config.file="$IM_TMP/prom.yml" --storage.tsdb.path="$IM_TMP/pdata" \
  --web.listen-address="127.0.0.1:$pport" >"$IM_TMP/prom.log" 2>&1 &
PROMPID=$!
IM_PIDS+=($PROMPID)
P="http://127.0.0.1:$pport"; I="http://127.0.0.1:$iport"
wait_http "$P/-/ready" 60
sleep 4
printf 'kept_metric{a="1"} 1\n' >"$IM_TMP/www/metrics" # gone_metric gets a staleness marker
sleep 2
kill "$EXPPID"                                        # every py series gets one
sleep 3
$PY - "$P" "$I" <<'PY' || { tail -20 "$IM_TMP/prom.log"; fail "remote-written data differs"; }
import json, sys, time, urllib.parse, urllib.request
P, I = sys.argv[1], sys.argv[2]
def q(base, query, t):
    u = base + "/api/v1/query?" + urllib.parse.urlencode({"query": query, "time": "%.3f" % t})
    with urllib.request.urlopen(u, timeout=30) as r:
        return json.loads(r.read())["data"]["result"]
t = time.time()
sel = '{job=~"static|py"}[2m]'
def raw(base):
    return {json.dumps(x["metric"], sort_keys=True): x["values"] for x in q(base, sel, t)}
for attempt in range(40):
    rp, ri = raw(P), raw(I)
    if rp == ri:
        break
    time.sleep(0.5)
nsamples = sum(len(v) for v in rp.values())
if rp != ri:
    for k in sorted(set(rp) | set(ri)):
        if rp.get(k) != ri.get(k):
            print("DIFF", k, "\n prometheus:", (rp.get(k) or [])[-3:], len(rp.get(k) or []), "\n infermon:  ", (ri.get(k) or [])[-3:], len(ri.get(k) or []))
    sys.exit(1)
if nsamples < 50:
    print("too few samples:", nsamples); sys.exit(1)
# staleness markers arrived: the series are gone from instant queries in both
for query in ['gone_metric', 'demo_temperature_celsius', 'up{job="py"} == 1']:
    a, b = q(P, query, t), q(I, query, t)
    if a != [] or b != []:
        print("not stale:", query, a, b); sys.exit(1)
if len(q(I, 'kept_metric', t)) != 1:
    print("kept_metric missing"); sys.exit(1)
print("remote write: %d series, %d samples identical" % (len(rp), nsamples))
PY

kill "$PROMPID"; wait "$PROMPID" || true # before infermon goes away (its queue would wait 1m)

# durability: 204 means in the WAL, even with SIGKILL right after the answer
$PY - "$I" "$IPID" <<'PY' || fail "durability write"
import os, signal, sys, time
sys.path.insert(0, os.environ["IM_SOURCE_DIR"] + "/tests/lib")
import remote_write as rw
I, pid = sys.argv[1], int(sys.argv[2])
t = int(time.time() * 1000)
req = rw.v1_request([([("__name__", "rw_durable"), ("n", str(k))], [(t, k + 0.5)]) for k in range(100)])
st, body, _ = rw.post(I, req, timeout=10)
assert st == 204, (st, body)
os.kill(pid, signal.SIGKILL)
open(os.environ.get("IM_TMP", "/tmp") + "/rw_t", "w").write(str(t))
PY
wait "$IPID" 2>/dev/null || true
start_im
n=$(curl -fsS "$I/api/v1/query?query=count(rw_durable)" | $PY -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
[ "$n" = 100 ] || fail "after SIGKILL: $n of 100 series"
kill "$IPID"; wait "$IPID" || fail "clean shutdown"

# without the flag: 404
"$IM_BINARY" run --promql.compat=2 --config.file="$IM_TMP/im.yml" --storage.memory-only \
  --web.listen-address="127.0.0.1:$jport" >>"$IM_TMP/im2.log" 2>&1 &
IM_PIDS+=($!)
wait_http "http://127.0.0.1:$jport/-/ready" 30
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary x "http://127.0.0.1:$jport/api/v1/write")
[ "$code" = 404 ] || fail "receiver off: expected 404, got $code"
echo "run_remote_write: all passed"

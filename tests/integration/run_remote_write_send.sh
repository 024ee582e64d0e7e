#!/usr/bin/env bash
# Remote-write sender: infermon scrapes the simulator and forwards through four
# queues at once — Prometheus 2.42 (--web.enable-remote-write-receiver, a job
# dropped by write_relabel_configs, external labels added), VictoriaMetrics 1.79
# (/api/v1/write), a receiver that answers 500, 429 + Retry-After, 400, slowly
# and by closing the connection (tests/integration/rw_receiver.py), and a dead
# URL. Then the real receivers stop; infermon is SIGKILLed while they are down
# and started again; they come back. At the end every sample in infermon's own
# store is at Prometheus bit for bit, at VictoriaMetrics within its precision
# (it keeps about 12 significant decimal digits: relative 1e-9), and at the
# faulty receiver except exactly the batch it refused with 400, which infermon
# counted in prometheus_remote_storage_samples_failed_total; the dead queue
# retried all along without holding the others back.
# The outage lasts RW_OUTAGE_S seconds (default 3; `make soak` style runs set 120).
source "$IM_SOURCE_DIR/tests/lib/common.sh"
OUTAGE=${RW_OUTAGE_S:-3}
simport=$(free_port); pport=$(free_port); vport=$(free_port); fport=$(free_port)
iport=$(free_port); dport=$(free_port)
mkdir -p "$IM_TMP/pdata" "$IM_TMP/vdata" "$IM_TMP/faulty"
bg "$IM_BINARY" simulate --pods 2 --listen "127.0.0.1:$simport" >"$IM_TMP/sim.log" 2>&1
echo 'scrape_configs: []' >"$IM_TMP/prom.yml"
start_prom() {
  prometheus --config.file="$IM_TMP/prom.yml" --storage.tsdb.path="$IM_TMP/pdata" \
    --web.listen-address="127.0.0.1:$pport" --web.enable-remote-write-receiver \
    --storage.tsdb.retention.time=1d >>"$IM_TMP/prom.log" 2>&1 &
  PROMPID=$!
  IM_PIDS+=($PROMPID)
}
start_vm() {
  victoria-metrics -httpListenAddr="127.0.0.1:$vport" -storageDataPath="$IM_TMP/vdata" \
    -retentionPeriod=100y -search.disableCache -maxLabelsPerTimeseries=100 >>"$IM_TMP/vm.log" 2>&1 &
  VMPID=$!
  IM_PIDS+=($VMPID)
}
start_prom
start_vm
$PY "$IM_SOURCE_DIR/tests/integration/rw_receiver.py" "$fport" "$IM_TMP/faulty" \
  "500,500,429,400,slow,close,500" &
IM_PIDS+=($!)
cat >"$IM_TMP/im.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s, external_labels: {cluster: c1}}
scrape_configs:
  - job_name: pods
    metrics_path: /pods/0/metrics
    static_configs: [{targets: ['127.0.0.1:$simport']}]
  - job_name: kueue
    metrics_path: /kueue/metrics
    static_configs: [{targets: ['127.0.0.1:$simport']}]
remote_write:
  - url: http://127.0.0.1:$pport/api/v1/write
    name: prom
    write_relabel_configs: [{source_labels: [job], regex: kueue, action: drop}]
    queue_config: {batch_send_deadline: 200ms, min_backoff: 50ms, max_backoff: 500ms, max_samples_per_send: 200}
  - url: http://127.0.0.1:$vport/api/v1/write
    name: vm
    queue_config: {batch_send_deadline: 200ms, min_backoff: 50ms, max_backoff: 500ms}
  - url: http://127.0.0.1:$fport/api/v1/write
    name: faulty
    remote_timeout: 1s
    queue_config: {batch_send_deadline: 200ms, min_backoff: 50ms, max_backoff: 500ms, retry_on_http_429: true}
    metadata_config: {send: false}
  - url: http://127.0.0.1:$dport/api/v1/write
    name: dead
    queue_config: {batch_send_deadline: 200ms, min_backoff: 50ms, max_backoff: 500ms}
YML
"$IM_BINARY" check config "$IM_TMP/im.yml" >/dev/null || fail "config refused"
start_im() {
  "$IM_BINARY" run --promql.compat=2 --config.file="$IM_TMP/im.yml" --storage.tsdb.path="$IM_TMP/idata" \
    --web.listen-address="127.0.0.1:$iport" --web.enable-lifecycle \
    --storage.tsdb.wal-fsync=never >>"$IM_TMP/im.log" 2>&1 &
  IPID=$!
  IM_PIDS+=($IPID)
  wait_http "http://127.0.0.1:$iport/-/ready" 30
}
start_im
P="http://127.0.0.1:$pport"; V="http://127.0.0.1:$vport"; I="http://127.0.0.1:$iport"
wait_http "$P/-/ready" 60
wait_http "$V/health" 60
# wait_query BASE QUERY: until the instant query has a result.
wait_query() {
  for _ in $(seq 1 300); do
    if curl -fsS "$1/api/v1/query" --data-urlencode "query=$2" 2>/dev/null | grep -q '"value"'; then
      return 0
    fi
    sleep 0.1
  done
  fail "no result for $2 at $1"
}
wait_query "$P" 'up{job="pods",cluster="c1"}'
# Outage: both real receivers stop; infermon is SIGKILLed meanwhile and restarted.
kill "$PROMPID" "$VMPID"
wait "$PROMPID" "$VMPID" 2>/dev/null || true
t_end=$(($(date +%s) + OUTAGE))
while [ "$(date +%s)" -lt $t_end ]; do sleep 0.2; done
kill -9 "$IPID"
wait "$IPID" 2>/dev/null || true
start_im
t_end=$(($(date +%s) + OUTAGE))
while [ "$(date +%s)" -lt $t_end ]; do sleep 0.2; done
start_prom
start_vm
wait_http "$P/-/ready" 60
wait_http "$V/health" 60
# Stop scraping (the queues restart from their saved positions and drain).
sed -i '/^scrape_configs:/,/^remote_write:/{/^remote_write:/!d}' "$IM_TMP/im.yml"
sed -i 's/^remote_write:/scrape_configs: []\nremote_write:/' "$IM_TMP/im.yml"
curl -fsS -X POST "$I/-/reload" >/dev/null || fail "reload failed"
$PY - "$I" "$P" "$V" "$IM_TMP/faulty" "$IM_TMP/im.log" <<'PY' || { tail -30 "$IM_TMP/im.log"; fail "forwarded data differs"; }
import json, math, re, struct, sys, time, urllib.parse, urllib.request
I, P, V, F, LOG = sys.argv[1:6]
def get(u):
    with urllib.request.urlopen(u, timeout=30) as r:
        return r.read().decode()
def raw(base, sel, extra=None):
    t = time.time()
    u = base + "/api/v1/query?" + urllib.parse.urlencode({"query": sel + "[15m]", "time": "%.3f" % t})
    out = {}
    for x in json.loads(get(u))["data"]["result"]:
        m = dict(x["metric"])
        if extra: m.update(extra)
        out[json.dumps(m, sort_keys=True)] = [(int(round(float(a) * 1000)), b) for a, b in x["values"]]
    return out
def bits(s):
    v = float(s)
    return struct.pack(">d", v).hex()
def metric(name, queue):
    txt = get(I + "/metrics")
    m = re.search(r'^%s\{remote_name="%s",[^}]*\} (\S+)$' % (name, queue), txt, re.M)
    return float(m.group(1)) if m else None
mine = raw(I, '{job="pods"}', {"cluster": "c1"})
allmine = {**mine, **raw(I, '{job="kueue"}', {"cluster": "c1"})}
n = sum(len(v) for v in mine.values())
assert n > 50, "too few samples in infermon: %d" % n
problems = []
for attempt in range(600):
    problems = []
    prom = raw(P, '{job="pods"}')
    for k, vs in mine.items():
        got = dict(prom.get(k, []))
        for t, v in vs:
            if t not in got: problems.append("prometheus misses %s @%d" % (k, t)); break
            if bits(got[t]) != bits(v): problems.append("prometheus %s @%d: %s != %s" % (k, t, got[t], v)); break
    if raw(P, '{job="kueue"}'): problems.append("write_relabel_configs did not drop job kueue")
    vm = {}
    for line in get(V + "/api/v1/export?" + urllib.parse.urlencode({"match[]": '{job=~"pods|kueue"}'})).splitlines():
        line = re.sub(r'([\[,])\+Inf', r'\1Infinity', re.sub(r'([\[,])-Inf', r'\1-Infinity', line))
        x = json.loads(line)  # null: a staleness marker (not in range selections either)
        vm[json.dumps(x["metric"], sort_keys=True)] = {t: v for t, v in zip(x["timestamps"], x["values"]) if v is not None}
    for k, vs in allmine.items():
        got = vm.get(k, {})
        for t, v in vs:
            fv = float(v)
            if t not in got: problems.append("victoriametrics misses %s @%d" % (k, t)); break
            g = got[t]
            if isinstance(g, str): g = float(g)
            if not (g == fv or abs(g - fv) <= 1e-9 * max(abs(fv), 1e-300)):
                problems.append("victoriametrics %s @%d: %r != %r" % (k, t, g, fv)); break
    acc, ref = set(), set()
    for name, s in (("accepted", acc), ("refused", ref)):
        try:
            for line in open(F + "/" + name + ".jsonl"):
                key, t, b = json.loads(line)
                s.add((key, t, b))
        except FileNotFoundError:
            pass
    missing = 0
    for k, vs in allmine.items():
        for t, v in vs:
            x = (k, t, bits(v))
            if x not in acc and x not in ref: missing += 1
    if missing: problems.append("faulty receiver misses %d samples" % missing)
    # The counter restarts with the process: the log keeps every drop's count.
    failed = sum(int(m) for m in re.findall(r'non-recoverable.*remote_name=faulty .*count=(\d+)', open(LOG).read()))
    if failed < 1 or len(ref) != failed:
        problems.append("faulty: refused %d samples, infermon dropped and counted %d" % (len(ref), failed))
    if not problems: break
    time.sleep(0.2)
assert not problems, "\n".join(problems[:10])
assert metric("prometheus_remote_storage_samples_dropped_total", "prom") > 0, "prom dropped nothing"
assert metric("prometheus_remote_storage_samples_retried_total", "dead") > 0, "dead: no retries"
assert metric("prometheus_remote_storage_samples_pending", "dead") > 0, "dead: nothing pending"
assert (metric("prometheus_remote_storage_shards", "prom") or 0) >= 1
# The dashboard's view of the queues (Targets page, "Remote write").
st = {q["name"]: q for q in json.loads(get(I + "/api/v1/status/remote_write"))["data"]}
assert sorted(st) == ["dead", "faulty", "prom", "vm"], sorted(st)
assert st["dead"]["lastError"] and st["dead"]["pendingSamples"] > 0, st["dead"]
assert st["prom"]["sentSamples"] > 0 and st["prom"]["lastSuccessMs"] > 0, st["prom"]
print("ok: %d samples of %d series at prometheus (bit for bit) and victoriametrics; faulty refused %d, counted %d"
      % (n, len(mine), len(ref), failed))
PY
grep -q "level=error.*non-recoverable" "$IM_TMP/im.log" || fail "the 400 was not logged"
echo "PASS"

#!/usr/bin/env bash
# Agent mode (infermon run --agent, as Prometheus' agent): scrape and forward
# only. The query API over local data answers 422 "unavailable with infermon
# agent" as Prometheus 2.42's agent does (/federate 500); rule_files and alerting
# are refused; the samples reach Prometheus 2.42; the WAL keeps what the queue
# has not sent while the receiver is down and drops the sent segments once it is
# back (every 10 s), and nothing is lost across the outage.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
simport=$(free_port); pport=$(free_port); iport=$(free_port)
mkdir -p "$IM_TMP/pdata"
bg "$IM_BINARY" simulate --pods 1 --listen "127.0.0.1:$simport" >"$IM_TMP/sim.log" 2>&1
echo 'scrape_configs: []' >"$IM_TMP/prom.yml"
start_prom() {
  prometheus --config.file="$IM_TMP/prom.yml" --storage.tsdb.path="$IM_TMP/pdata" \
    --web.listen-address="127.0.0.1:$pport" --web.enable-remote-write-receiver \
    >>"$IM_TMP/prom.log" 2>&1 &
  PROMPID=$!
  IM_PIDS+=($PROMPID)
}
start_prom
cat >"$IM_TMP/im.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: pods
    metrics_path: /pods/0/metrics
    static_configs: [{targets: ['127.0.0.1:$simport']}]
remote_write:
  - url: http://127.0.0.1:$pport/api/v1/write
    name: central
    queue_config: {batch_send_deadline: 200ms, min_backoff: 50ms, max_backoff: 500ms}
YML
# Rules are refused in agent mode, as Prometheus refuses them.
printf 'rule_files: [x.yml]\n' >>"$IM_TMP/bad.yml"
cat "$IM_TMP/im.yml" >>"$IM_TMP/bad.yml"
if "$IM_BINARY" run --promql.compat=2 --agent --config.file="$IM_TMP/bad.yml" --storage.tsdb.path="$IM_TMP/bad" \
  --web.listen-address="127.0.0.1:$iport" >"$IM_TMP/bad.log" 2>&1; then
  fail "agent mode accepted rule_files"
fi
grep -q "rule_files is not allowed in agent mode" "$IM_TMP/bad.log" || fail "no reason given"
"$IM_BINARY" run --promql.compat=2 --agent --config.file="$IM_TMP/im.yml" --storage.tsdb.path="$IM_TMP/idata" \
  --web.listen-address="127.0.0.1:$iport" --storage.tsdb.wal-fsync=never >"$IM_TMP/im.log" 2>&1 &
IPID=$!
IM_PIDS+=($IPID)
I="http://127.0.0.1:$iport"; P="http://127.0.0.1:$pport"
wait_http "$I/-/ready" 30
curl -fsS "$I/-/ready" | grep -q "Agent is Ready" || fail "ready text"
for u in "/api/v1/query?query=up" "/api/v1/query_range?query=up&start=1&end=2&step=1" \
  "/api/v1/series?match[]=up" "/api/v1/labels" "/api/v1/label/job/values" "/api/v1/rules" \
  "/api/v1/alerts" "/api/v1/status/tsdb"; do
  out=$(curl -sS -w ' %{http_code}' "$I$u")
  [ "$out" = '{"status":"error","errorType":"execution","error":"unavailable with infermon agent"} 422' ] ||
    fail "$u answered: $out"
done
[ "$(curl -sS -o /dev/null -w '%{http_code}' "$I/federate?match[]=up")" = 500 ] || fail "/federate"
curl -fsS "$I/api/v1/targets" | grep -q '"health":"up"' || sleep 2
wait_http "$P/-/ready" 60
count() { curl -fsS "$P/api/v1/query" --data-urlencode "query=count_over_time(up{job=\"pods\"}[10m])" |
  $PY -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(int(r[0]["value"][1]) if r else 0)'; }
for _ in $(seq 1 100); do [ "$(count)" -ge 2 ] && break; sleep 0.1; done
[ "$(count)" -ge 2 ] || fail "nothing forwarded"
segs() { ls "$IM_TMP/idata/wal" | grep -c '^[0-9]*$' || true; }
first_seg() { ls "$IM_TMP/idata/wal" | grep '^[0-9]*$' | sort | head -1; }
# The receiver goes away: the WAL must keep everything unsent.
kill "$PROMPID"
wait "$PROMPID" 2>/dev/null || true
sleep 1 # (no acknowledgement can come now: the queue's position is final)
# The oldest segment a shard still needs, from the queue's positions file.
pos_seg=$(awk 'NR > 2 {print $1}' "$IM_TMP/idata/remote/central.pos" | sort -n | head -1)
f0=$(printf '%08d' "$pos_seg")
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt 12 ]; do sleep 0.5; done
[ -f "$IM_TMP/idata/wal/$f0" ] || fail "segment $f0, not sent yet, was deleted"
[ "$(first_seg)" \< "$f0" ] || [ "$(first_seg)" = "$f0" ] || fail "first segment $(first_seg) > $f0"
[ "$(segs)" -ge 2 ] || fail "no segment cut while the receiver was away"
start_prom
wait_http "$P/-/ready" 60
# Back: the backlog goes out and the sent segments are dropped.
for _ in $(seq 1 300); do [ "$(first_seg)" != "$f0" ] && break; sleep 0.1; done
[ "$(first_seg)" != "$f0" ] || fail "sent WAL segments were not dropped"
ls "$IM_TMP/idata/blocks" 2>/dev/null | grep -q . && fail "agent mode wrote blocks"
# Every scrape infermon made during the outage is at Prometheus: up has one
# sample per second with no hole longer than 2 s.
$PY - "$P" <<'PY' || fail "samples lost across the outage"
import json, sys, time, urllib.parse, urllib.request
P = sys.argv[1]
for _ in range(100):
    u = P + "/api/v1/query?" + urllib.parse.urlencode({"query": 'up{job="pods"}[10m]'})
    r = json.load(urllib.request.urlopen(u))["data"]["result"]
    ts = [float(t) for t, _ in r[0]["values"]] if r else []
    gaps = [b - a for a, b in zip(ts, ts[1:]) if b - a > 2.5]
    if len(ts) > 30 and not gaps:
        print("ok: %d samples of up, no gap" % len(ts)); sys.exit(0)
    time.sleep(0.2)
print("gaps:", gaps, "samples:", len(ts)); sys.exit(1)
PY
echo PASS

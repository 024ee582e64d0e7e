#!/usr/bin/env bash
# Remote-write sender: what a receiver sees after a SIGKILL (docs/remote-write.md,
# "Guarantees"). A python receiver (tests/integration/rw_receiver.py) answers
# the first two requests at once and holds the third for 5 s; infermon is
# SIGKILLed while the third is in flight, then started again on the same data.
#  - the first request after the restart is exactly the batch that was in flight
#    (the same samples, sent alone: its size was saved before it was sent);
#  - nothing of the two acknowledged batches is sent again, although they ended
#    inside a WAL record (max_samples_per_send 100 < a scrape's samples: the
#    saved position counts the samples acknowledged after the record boundary);
#  - and nothing is lost: every sample infermon stored reaches the receiver.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
simport=$(free_port); rport=$(free_port); iport=$(free_port)
mkdir -p "$IM_TMP/rx"
bg "$IM_BINARY" simulate --pods 1 --listen "127.0.0.1:$simport" >"$IM_TMP/sim.log" 2>&1
bg $PY "$IM_SOURCE_DIR/tests/integration/rw_receiver.py" "$rport" "$IM_TMP/rx" "ok,ok,delay:5000"
cat >"$IM_TMP/im.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: pods
    static_configs: [{targets: ['127.0.0.1:$simport']}]
    metrics_path: /pods/0/metrics
remote_write:
  - url: http://127.0.0.1:$rport/api/v1/write
    name: rx
    remote_timeout: 30s
    metadata_config: {send: false}
    queue_config: {batch_send_deadline: 100ms, max_samples_per_send: 100}
YML
wait_http "http://127.0.0.1:$simport/targets" 30
start_im() {
  "$IM_BINARY" run --config.file="$IM_TMP/im.yml" --storage.tsdb.path="$IM_TMP/idata" \
    --web.listen-address="127.0.0.1:$iport" --storage.tsdb.wal-fsync=never >>"$IM_TMP/im.log" 2>&1 &
  IPID=$!
  IM_PIDS+=($IPID)
  wait_http "http://127.0.0.1:$iport/-/ready" 30
}
start_im
lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }
for _ in $(seq 1 200); do [ "$(lines "$IM_TMP/rx/arrived.jsonl")" -ge 3 ] && break; sleep 0.05; done
[ "$(lines "$IM_TMP/rx/arrived.jsonl")" -ge 3 ] || fail "the third request did not come"
kill -9 "$IPID"; wait "$IPID" 2>/dev/null || true
# (The receiver answers the held request 200 to a dead sender: it has it.)
# Stop scraping, so that what the store holds is final once the queue drained.
sed -i '/^scrape_configs:/,/^remote_write:/{/^remote_write:/!d}' "$IM_TMP/im.yml"
sed -i 's/^remote_write:/scrape_configs: []\nremote_write:/' "$IM_TMP/im.yml"
start_im
$PY - "http://127.0.0.1:$iport" "$IM_TMP/rx" <<'PY' || { tail -20 "$IM_TMP/im.log"; fail "resend"; }
import json, struct, sys, time, urllib.parse, urllib.request
I, D = sys.argv[1:3]
def reqs():
    return sorted((json.loads(l) for l in open(D + "/requests.jsonl")), key=lambda q: q["t"])  # arrival order
def stored():
    u = I + "/api/v1/query?" + urllib.parse.urlencode({"query": '{job="pods"}[15m]', "time": "%.3f" % time.time()})
    out = set()
    for x in json.loads(urllib.request.urlopen(u, timeout=30).read())["data"]["result"]:
        key = json.dumps(x["metric"], sort_keys=True)
        for t, v in x["values"]:
            out.add((key, int(round(float(t) * 1000)), struct.pack(">d", float(v)).hex()))
    return out
for _ in range(300):
    r = reqs()
    got = {tuple(x) for q in r for x in q["rows"]}
    mine = stored()
    held = any(q["act"] == "delay:5000" for q in r)  # (logged when answered, 5 s on)
    if held and len(r) >= 4 and mine <= got:
        break
    time.sleep(0.1)
assert len(r) >= 4, "no request after the restart: %d" % len(r)
assert [q["act"] for q in r[:3]] == ["ok", "ok", "delay:5000"], [q["act"] for q in r[:3]]
assert r[3]["rows"] == r[2]["rows"], "first request after the restart (%d samples) is not the batch in flight (%d)" % (r[3]["n"], r[2]["n"])
acked = {tuple(x) for q in r[:2] for x in q["rows"]}
again = acked & {tuple(x) for q in r[3:] for x in q["rows"]}
assert not again, "%d acknowledged samples sent again" % len(again)
missing = mine - got
assert not missing, "%d stored samples missing at the receiver, e.g. %s" % (len(missing), sorted(missing)[:2])
print("ok: in-flight batch of %d resent alone first; 0 of %d acknowledged resent; %d stored samples all received"
      % (r[2]["n"], len(acked), len(mine)))
PY
echo "PASS"

#!/usr/bin/env bash
# Remote-write sender: the retry timing and dynamic resharding, measured at
# python receivers (tests/integration/rw_receiver.py logs each request's arrival).
#  - queue "retry": the receiver answers 500, 500, 500, then 429 with
#    Retry-After: 3, then 200. The same batch is sent five times; the waits
#    (from an answer to the next request) after the 500s follow the exponential backoff (min_backoff 200ms doubling:
#    >= 0.2, 0.4, 0.8 s) and the wait after the 429 is Retry-After (>= 3 s,
#    though the backoff would be 1.6 s), after which the batch is accepted.
#  - queue "reshard": a receiver answering every request after 250 ms, fed more
#    than one shard can send (max_samples_per_send 50 = 200 samples/s/shard): the
#    shard count (prometheus_remote_storage_shards) rises above min_shards 1 and,
#    sampled every 100 ms for the whole run, never exceeds max_shards 2.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
simport=$(free_port); rport=$(free_port); sport=$(free_port); iport=$(free_port)
mkdir -p "$IM_TMP/retry" "$IM_TMP/reshard"
bg "$IM_BINARY" simulate --pods 4 --listen "127.0.0.1:$simport" >"$IM_TMP/sim.log" 2>&1
bg $PY "$IM_SOURCE_DIR/tests/integration/rw_receiver.py" "$rport" "$IM_TMP/retry" "500,500,500,429:3"
bg $PY "$IM_SOURCE_DIR/tests/integration/rw_receiver.py" "$sport" "$IM_TMP/reshard" "" "delay:250"
cat >"$IM_TMP/im.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: pods
    static_configs: [{targets: ['127.0.0.1:$simport']}]
    metrics_path: /pods/0/metrics
  - job_name: pods1
    static_configs: [{targets: ['127.0.0.1:$simport']}]
    metrics_path: /pods/1/metrics
  - job_name: pods2
    static_configs: [{targets: ['127.0.0.1:$simport']}]
    metrics_path: /pods/2/metrics
remote_write:
  - url: http://127.0.0.1:$rport/api/v1/write
    name: retry
    metadata_config: {send: false}
    queue_config: {batch_send_deadline: 100ms, min_backoff: 200ms, max_backoff: 10s,
                   retry_on_http_429: true, max_samples_per_send: 200}
  - url: http://127.0.0.1:$sport/api/v1/write
    name: reshard
    metadata_config: {send: false}
    queue_config: {batch_send_deadline: 100ms, max_samples_per_send: 50, capacity: 200,
                   min_shards: 1, max_shards: 2}
YML
wait_http "http://127.0.0.1:$simport/targets" 30
"$IM_BINARY" run --agent --config.file="$IM_TMP/im.yml" --storage.tsdb.path="$IM_TMP/idata" \
  --web.listen-address="127.0.0.1:$iport" --storage.tsdb.wal-fsync=never >"$IM_TMP/im.log" 2>&1 &
IM_PIDS+=($!)
wait_http "http://127.0.0.1:$iport/-/ready" 30
$PY - "http://127.0.0.1:$iport" "$IM_TMP" <<'PY' || { tail -20 "$IM_TMP/im.log"; fail "retry/reshard"; }
import json, re, sys, time, urllib.request
I, D = sys.argv[1:3]
def metric(name, txt):
    m = re.search(r'^%s\{remote_name="reshard",[^}]*\} (\S+)$' % name, txt, re.M)
    return float(m.group(1)) if m else 0
info = ""
def shards():
    global info
    txt = urllib.request.urlopen(I + "/metrics", timeout=10).read().decode()
    info = "desired %d, sent %d, pending %d" % tuple(metric("prometheus_remote_storage_" + n, txt)
        for n in ("shards_desired", "samples_total", "samples_pending"))
    return int(metric("prometheus_remote_storage_shards", txt))
def reqs(q):
    try:
        return [json.loads(l) for l in open(D + "/" + q + "/requests.jsonl")]
    except FileNotFoundError:
        return []
seen, t0 = [], time.time()
retry_done = False
while time.time() - t0 < 18:
    seen.append(shards())
    r = reqs("retry")
    retry_done = len(r) >= 5
    if retry_done and max(seen) > 1 and time.time() - t0 > 12:
        break
    time.sleep(0.1)
# Retry timing.
r = reqs("retry")[:5]
assert len(r) == 5, "retry: %d requests" % len(r)
assert [x["act"] for x in r] == ["500", "500", "500", "429:3", "ok"], r
assert len({x["n"] for x in r}) == 1 and r[0]["n"] > 0, "not the same batch each time: %s" % r
gaps = [b["t"] - a["t_out"] for a, b in zip(r, r[1:])]  # answer to next request
for i, lo in enumerate((0.2, 0.4, 0.8)):
    assert gaps[i] >= lo * 0.98, "backoff %d: waited %.3f s < %.1f s" % (i, gaps[i], lo)
assert gaps[1] > gaps[0] * 1.5 and gaps[2] > gaps[1] * 1.5, "backoff not exponential: %s" % gaps
assert 3.0 <= gaps[3] < 5.0, "after 429 + Retry-After: 3 waited %.3f s" % gaps[3]
# Resharding.
assert max(seen) > 1, "reshard: shards stayed at %s (%s)" % (sorted(set(seen)), info)
assert max(seen) <= 2, "reshard: shards %d > max_shards 2" % max(seen)
log = open(D + "/im.log").read()
to = [int(x) for x in re.findall(r'remote storage resharded.*remote_name=reshard from=\d+ to=(\d+)', log)]
assert to and max(to) <= 2, "reshard log: %s" % to
print("ok: backoff gaps %s s, after 429 %.2f s; shards seen %s" %
      (["%.2f" % g for g in gaps[:3]], gaps[3], sorted(set(seen))))
PY
echo "PASS"

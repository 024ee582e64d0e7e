#!/usr/bin/env bash
# Storage ingest limits (issue 22), end to end through the remote-write receiver
# and a scrape:
#  - a sample ten years ahead of the clock is answered 400 naming
#    --storage.tsdb.max-future, and the history written before it, and the
#    current writes after it, are all there after a restart (Prometheus 2.42
#    answers 204 and, at its next head compaction, drops every block by time
#    retention and refuses current writes as out of bounds);
#  - a series of 4,097 labels is answered 400 naming
#    --storage.tsdb.max-labels-per-series, and everything acknowledged after it
#    survives a SIGKILL and the WAL replay;
#  - the setting is a flag: above the format cap the daemon refuses to start;
#    lowered, a scrape over it fails with the limit in the target's lastError.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
iport=$(free_port); sport=$(free_port); jport=$(free_port)
I="http://127.0.0.1:$iport"
echo 'scrape_configs: []' >"$IM_TMP/im.yml"
start_im() {
  "$IM_BINARY" run --config.file="$IM_TMP/im.yml" --storage.tsdb.path="$IM_TMP/idata" \
    --web.listen-address="127.0.0.1:$iport" --web.enable-remote-write-receiver \
    --storage.tsdb.wal-fsync=never "$@" >>"$IM_TMP/im.log" 2>&1 &
  IPID=$!
  IM_PIDS+=($IPID)
  wait_http "$I/-/ready" 30
}
start_im

cat >"$IM_TMP/rw.py" <<'PY'
import json, os, sys, time, urllib.parse, urllib.request
sys.path.insert(0, os.environ["IM_SOURCE_DIR"] + "/tests/lib")
import remote_write as rw
I = sys.argv[1]
def write(series):  # [(labels dict, [(t, v)])] -> (status, body)
    st, body, _ = rw.post(I, rw.v1_request([(sorted(ls.items()), smp) for ls, smp in series]))
    return st, body
def q(query):
    u = I + "/api/v1/query?" + urllib.parse.urlencode({"query": query})
    with urllib.request.urlopen(u, timeout=30) as r:
        res = json.loads(r.read())["data"]["result"]
    return float(res[0]["value"][1]) if res else 0
now = int(time.time() * 1000)
step = sys.argv[2]
if step == "write":
    # an hour of history, 3 series, one sample every 15 s
    hist = [({"__name__": "hist", "i": str(i)}, [(now - 3600000 + k * 15000, k) for k in range(241)])
            for i in range(3)]
    st, body = write(hist); assert st == 204, (st, body)
    ten_years = 10 * 365 * 86400 * 1000
    st, body = write([({"__name__": "hist", "i": "0"}, [(now + ten_years, 1)])])
    assert st == 400 and "--storage.tsdb.max-future" in body, (st, body)
    st, body = write([({"__name__": "cur"}, [(now - 1000, 1)])]); assert st == 204, (st, body)
    wide = {"__name__": "wide"}
    wide.update({"l%04d" % k: "v" for k in range(4096)})
    st, body = write([(wide, [(now, 1)])])
    assert st == 400 and "4097 labels" in body and "--storage.tsdb.max-labels-per-series" in body, (st, body)
    for k in range(5):  # acknowledged after it
        st, body = write([({"__name__": "after", "k": str(k)}, [(now, k)])]); assert st == 204, (st, body)
    print("writes answered as expected")
elif step == "check":
    n_hist = q("sum(count_over_time(hist[2h]))")
    assert n_hist == 3 * 241, n_hist
    assert q("count(cur)") == 1 and q("count(after)") == 5 and q("count(wide)") == 0
    st, body = write([({"__name__": "cur"}, [(now, 2)])]); assert st == 204, (st, body)
    print("after restart: history, current and later writes all there")
PY
$PY "$IM_TMP/rw.py" "$I" write || fail "remote writes"
# the refusals are counted on /metrics
curl -fsS "$I/metrics" >"$IM_TMP/metrics.txt" || fail "/metrics"
for m in infermon_tsdb_too_far_future_samples_total infermon_tsdb_series_over_limits_total \
  infermon_tsdb_out_of_bounds_samples_total; do
  awk -v m="$m" '$1 == m && $2 >= 1 { ok = 1 } END { exit !ok }' "$IM_TMP/metrics.txt" ||
    fail "$m not counted: $(grep "^$m" "$IM_TMP/metrics.txt")"
done
kill -9 "$IPID"; wait "$IPID" 2>/dev/null || true # no clean close: the WAL replay must hold it all
start_im
$PY "$IM_TMP/rw.py" "$I" check || fail "after SIGKILL"
kill "$IPID"; wait "$IPID" || fail "clean shutdown"
grep -q "block is corrupt" "$IM_TMP/im.log" && fail "corrupt block: $(grep corrupt "$IM_TMP/im.log")"

# a setting above the format cap: the daemon does not start, and says why
if "$IM_BINARY" run --config.file="$IM_TMP/im.yml" --storage.memory-only \
  --web.listen-address="127.0.0.1:$jport" --storage.tsdb.max-labels-per-series=5000 \
  >"$IM_TMP/bad.log" 2>&1; then
  fail "started with a labels limit above the format cap"
fi
grep -q "max-labels-per-series 5000 is above" "$IM_TMP/bad.log" || fail "no reason: $(cat "$IM_TMP/bad.log")"

# lowered: a scrape with a series over it fails, the limit in lastError
mkdir -p "$IM_TMP/www"
printf 'wide{a="1",b="2",c="3",d="4"} 1\n' >"$IM_TMP/www/metrics"
bg $PY "$IM_SOURCE_DIR/tests/lib/serve_dir.py" "$sport" --bind 127.0.0.1 --directory "$IM_TMP/www" >/dev/null 2>&1
cat >"$IM_TMP/im.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: w
    static_configs: [{targets: ['127.0.0.1:$sport']}]
YML
start_im --storage.tsdb.max-labels-per-series=6
for i in $(seq 100); do
  curl -fsS "$I/api/v1/targets" >"$IM_TMP/targets.json" 2>/dev/null || true
  grep -q 'max-labels-per-series' "$IM_TMP/targets.json" && break
  sleep 0.1
done
grep -q '7 labels, more than the limit of 6 labels per series (--storage.tsdb.max-labels-per-series' \
  "$IM_TMP/targets.json" || fail "scrape lastError: $(cat "$IM_TMP/targets.json")"
kill "$IPID"; wait "$IPID" || fail "clean shutdown"
echo "run_storage_limits: all passed"

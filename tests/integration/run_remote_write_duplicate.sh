#!/usr/bin/env bash
# What the real receivers do with a batch sent twice (the one case the sender
# resends: a SIGKILL between a 2xx and saving the position; docs/remote-write.md,
# "Guarantees"), so the docs say what is true:
#  - Prometheus 2.42: a batch holding only each series' newest sample is
#    answered 204 again and kept once; a batch with an older sample of a series
#    is answered 400 "out of order sample" (the whole request: nothing of it is
#    written again, and nothing new was in it);
#  - VictoriaMetrics 1.79: 204 again; it keeps both copies (export and
#    count_over_time count them) unless -dedup.minScrapeInterval is set, then one.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
pport=$(free_port); vport=$(free_port); dport=$(free_port)
echo 'scrape_configs: []' >"$IM_TMP/prom.yml"
bg prometheus --config.file="$IM_TMP/prom.yml" --storage.tsdb.path="$IM_TMP/p" \
  --web.listen-address="127.0.0.1:$pport" --web.enable-remote-write-receiver >"$IM_TMP/p.log" 2>&1
bg victoria-metrics -httpListenAddr="127.0.0.1:$vport" -storageDataPath="$IM_TMP/v" \
  -search.latencyOffset=0s -search.disableCache >"$IM_TMP/v.log" 2>&1
bg victoria-metrics -httpListenAddr="127.0.0.1:$dport" -storageDataPath="$IM_TMP/vd" \
  -search.latencyOffset=0s -search.disableCache -dedup.minScrapeInterval=1ms >"$IM_TMP/vd.log" 2>&1
wait_http "http://127.0.0.1:$pport/-/ready" 60
wait_http "http://127.0.0.1:$vport/health" 60
wait_http "http://127.0.0.1:$dport/health" 60
$PY - "$IM_SOURCE_DIR/tests/lib" "http://127.0.0.1:$pport" "http://127.0.0.1:$vport" "http://127.0.0.1:$dport" <<'PY' || fail "duplicates"
import json, sys, time, urllib.parse, urllib.request
sys.path.insert(0, sys.argv[1])
import remote_write as rw
P, V, VD = sys.argv[2:5]
t = int(time.time() * 1000) - 5000
def req(name, n):
    return rw.v1_request([([("__name__", name), ("job", "dup")], [(t + k * 1000, k + 0.5) for k in range(n)])])
def count(base, name):
    for _ in range(100):
        u = base + "/api/v1/query?" + urllib.parse.urlencode({"query": "count_over_time(%s[5m])" % name})
        r = json.loads(urllib.request.urlopen(u, timeout=10).read())["data"]["result"]
        if r:
            return int(float(r[0]["value"][1]))
        time.sleep(0.1)
    return 0
one, two = req("dup_one", 1), req("dup_two", 2)
st = [rw.post(P, one)[0] for _ in range(2)] + [rw.post(P, two)[0] for _ in range(2)]
assert st == [204, 204, 204, 400], "prometheus: %s" % st
body = rw.post(P, two)[1]
assert "out of order sample" in body, body
assert count(P, "dup_one") == 1 and count(P, "dup_two") == 2, (count(P, "dup_one"), count(P, "dup_two"))
for base, want in ((V, 4), (VD, 2)):
    st = [rw.post(base, two)[0] for _ in range(2)]
    assert st == [204, 204], "%s: %s" % (base, st)
    for _ in range(100):  # (VictoriaMetrics makes a write searchable within about a second)
        if count(base, "dup_two") == want:
            break
        time.sleep(0.1)
    assert count(base, "dup_two") == want, "%s keeps %d samples of 2 sent twice" % (base, count(base, "dup_two"))
print("ok: prometheus 204/204 (newest only), 204/400 (with an older sample); victoriametrics keeps 4, with dedup 2")
PY
echo "PASS"

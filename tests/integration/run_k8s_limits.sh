#!/bin/bash
# run_k8s_limits.sh — the Kubernetes list/watch size limits are flags, and an
# answer over one is logged naming the role, the namespace and the flag to
# raise, while the other scrape jobs go on:
#   --discovery.kubernetes.max-list-page-bytes: a List page larger than it;
#   --discovery.kubernetes.max-event-bytes: a watch event larger than it.
# Bad values are refused at start naming the flag; /api/v1/status/flags shows both.
. "$IM_SOURCE_DIR/tests/lib/common.sh"
API=$(free_port)
bg $PY "$IM_SOURCE_DIR/tests/integration/k8s_api.py" --port "$API" --pods 20
wait_http "http://127.0.0.1:$API/version" 10
curl -fsS -XPOST "http://127.0.0.1:$API/_control/churn?rate=10" > /dev/null
# One infermon, both limits small: job "pods" lists all 20 pods (a page over
# 4KiB), job "shard1" the 2 of shard 1 (a page under it), whose watch events
# (the churn updates them) are over 300 bytes; a static job scrapes infermon.
port=$(free_port)
cat > "$IM_TMP/im.yml" <<YML
global: {scrape_interval: 1s}
scrape_configs:
  - job_name: self
    static_configs: [{targets: ["127.0.0.1:$port"]}]
  - job_name: pods
    kubernetes_sd_configs: [{role: pod, api_server: "http://127.0.0.1:$API", namespaces: {names: [bench]}}]
  - job_name: shard1
    kubernetes_sd_configs:
      - role: pod
        api_server: "http://127.0.0.1:$API"
        namespaces: {names: [bench]}
        selectors: [{role: pod, label: shard=1}]
YML
"$IM_BINARY" run --config.file="$IM_TMP/im.yml" --storage.tsdb.path="$IM_TMP/data" \
  --web.listen-address="127.0.0.1:$port" --storage.tsdb.wal-fsync=never \
  --discovery.kubernetes.max-list-page-bytes=4KiB --discovery.kubernetes.max-event-bytes=300B \
  > "$IM_TMP/im.log" 2>&1 &
PID=$!
IM_PIDS+=($PID)
I=http://127.0.0.1:$port
wait_http "$I/-/ready" 30
# wait_log PATTERN WHAT: waits (15 s at most) for PATTERN in the log
wait_log() {
  for i in $(seq 150); do grep -q "$1" "$IM_TMP/im.log" && return 0; sleep 0.1; done
  cat "$IM_TMP/im.log" >&2
  fail "$2"
}
wait_log 'Kubernetes discovery failed.*job=pods role=pod resource=pod namespace=bench.*a list page is larger than 4096 bytes (raise --discovery.kubernetes.max-list-page-bytes)' \
  "the list page limit was not logged naming job, role, namespace and flag"
wait_log 'Kubernetes discovery failed.*job=shard1 role=pod resource=pod namespace=bench.*watch event larger than 300 bytes (raise --discovery.kubernetes.max-event-bytes)' \
  "the event limit was not logged naming job, role, namespace and flag"
# The other jobs go on: infermon scraped, shard 1's listed pods kept.
for i in $(seq 100); do
  [ "$(curl -fsS -G "$I/api/v1/query" --data-urlencode 'query=up{job="self"}' | $PY -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")')" = 1 ] && break
  sleep 0.1
done
[ "$i" -lt 100 ] || fail "the static job was not scraped"
# shard 1's listed pods reach the target set once discovery has handed them over
for i in $(seq 150); do
  pools=$(curl -fsS "$I/api/v1/targets" | $PY -c 'import json,collections,sys; c=collections.Counter(t["scrapePool"] for t in json.load(sys.stdin)["data"]["activeTargets"]); print(c["self"], c["shard1"], c["pods"])')
  [ "$pools" = "1 2 0" ] && break
  sleep 0.1
done
[ "$pools" = "1 2 0" ] || fail "targets self/shard1/pods are $pools, want 1 2 0"
flags=$(curl -fsS "$I/api/v1/status/flags")
echo "$flags" | grep -q '"discovery.kubernetes.max-list-page-bytes":"4KiB"' || fail "flag not in status/flags"
echo "$flags" | grep -q '"discovery.kubernetes.max-event-bytes":"300B"' || fail "flag not in status/flags (2)"
kill -TERM "$PID"
wait "$PID" || fail "exit status $?"
grep -q Sanitizer "$IM_TMP/im.log" && fail "sanitizer report"
# Bad values.
for f in max-list-page-bytes max-event-bytes; do
  "$IM_BINARY" run --discovery.kubernetes.$f=lots > "$IM_TMP/bad.out" 2>&1 && fail "--discovery.kubernetes.$f=lots accepted"
  grep -q "infermon run: --discovery.kubernetes.$f: bad size \"lots\"" "$IM_TMP/bad.out" || { cat "$IM_TMP/bad.out"; fail "bad $f not explained"; }
done
"$IM_BINARY" run --help | grep -q -- '--discovery.kubernetes.max-event-bytes=SIZE' || fail "flag not in --help"
echo "PASS: Kubernetes list and watch limits are flags, named in the errors; other jobs unaffected"

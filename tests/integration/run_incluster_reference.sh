#!/bin/bash
# run_incluster_reference.sh — the in-cluster default configuration
# (`infermon check config --in-cluster`) loaded by the reference Prometheus
# 2.42.0 with Kubernetes discovery, against a test API server serving the pods of
# tests/fixtures/k8s/incluster/pods.json. Its /api/v1/targets (active targets
# with labels and scrape URL, dropped targets) must equal the recorded
# prometheus-2.42.0-targets.json, which tests/unit/scrape/test_incluster.c runs
# through our own relabelling (so that comparison runs without the binary).
# IM_RECORD=1 rewrites the recording. Skips when the reference binary is absent.
. "$IM_SOURCE_DIR/tests/lib/common.sh"
FX=$IM_SOURCE_DIR/tests/fixtures/k8s/incluster
XZ=${IM_PROM_K8S_XZ:-}
for c in "$IM_SOURCE_DIR/../shared/tools" "$IM_SOURCE_DIR/../../shared/tools"; do
  [ -z "$XZ" ] && [ -f "$c/prometheus-2.42.0-k8s.xz" ] && XZ=$c/prometheus-2.42.0-k8s.xz
done
if [ -z "$XZ" ]; then echo "SKIP: prometheus-2.42.0-k8s.xz not found (set IM_PROM_K8S_XZ)"; exit 0; fi
xz -dc "$XZ" > "$IM_TMP/prometheus-k8s" && chmod +x "$IM_TMP/prometheus-k8s"

API=$(free_port)
bg $PY "$IM_SOURCE_DIR/tests/integration/k8s_list_api.py" "$API" "/api/v1/pods=$FX/pods.json"
wait_http "http://127.0.0.1:$API/version" 10

"$IM_BINARY" check config --in-cluster > "$IM_TMP/incluster.yml" 2>"$IM_TMP/check.err" || true
grep -q "job_name: kubernetes-pods" "$IM_TMP/incluster.yml" || fail "no in-cluster config printed"
# No pod here has a service account: point the discovery at the test server.
sed "s|^      - role: pod\$|      - role: pod\n        api_server: http://127.0.0.1:$API|" \
  "$IM_TMP/incluster.yml" > "$IM_TMP/prom.yml"

PP=$(free_port)
bg "$IM_TMP/prometheus-k8s" --config.file="$IM_TMP/prom.yml" --storage.tsdb.path="$IM_TMP/data" \
  --web.listen-address="127.0.0.1:$PP" --log.level=warn
wait_http "http://127.0.0.1:$PP/-/ready" 30

# Discovery is asynchronous: wait until every job has seen every pod.
WANT=$($PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["discovered_total"])' \
  "$FX/prometheus-2.42.0-targets.json")
norm() {
  $PY - "$1" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))["data"]
act = sorted(({"job": t["scrapePool"], "url": t["scrapeUrl"], "labels": t["labels"],
               "discoveredLabels": t["discoveredLabels"]} for t in d["activeTargets"]),
             key=lambda t: (t["job"], t["url"], json.dumps(t["labels"], sort_keys=True)))
drop = sorted((t["discoveredLabels"] for t in d["droppedTargets"]),
              key=lambda l: json.dumps(l, sort_keys=True))
out = {"source": "Prometheus 2.42.0 (with Kubernetes SD) /api/v1/targets, recorded by "
                 "tests/integration/run_incluster_reference.sh",
       "discovered_total": len(act) + len(drop), "active": act, "dropped": drop}
print(json.dumps(out, indent=1, sort_keys=True))
PYEOF
}
got=""
same=0
for _ in $(seq 300); do
  if curl -fsS "http://127.0.0.1:$PP/api/v1/targets" -o "$IM_TMP/t.json" 2>/dev/null; then
    norm "$IM_TMP/t.json" > "$IM_TMP/got.json"
    got=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["discovered_total"])' "$IM_TMP/got.json")
    [ "${IM_RECORD:-}" != 1 ] && [ "$got" = "$WANT" ] && break
    # Recording: until the count is non-zero and has not changed for 20 polls.
    if [ "${IM_RECORD:-}" = 1 ] && [ "$got" != 0 ]; then
      [ "$got" = "${last:-}" ] && same=$((same + 1)) || same=0
      last=$got
      [ "$same" -ge 20 ] && break
    fi
  fi
  sleep 0.1
done
if [ "${IM_RECORD:-}" = 1 ]; then
  cp "$IM_TMP/got.json" "$FX/prometheus-2.42.0-targets.json"
  echo "recorded $got targets"
  exit 0
fi
[ "$got" = "$WANT" ] || fail "Prometheus discovered $got targets, the recording has $WANT"
diff -u "$FX/prometheus-2.42.0-targets.json" "$IM_TMP/got.json" || fail "targets differ from the recording"
echo "PASS: Prometheus 2.42.0 keeps and labels the in-cluster targets as recorded ($WANT targets)"

# The scrape configs generated from PodMonitors / ServiceMonitors
# (tests/fixtures/k8s/monitors/*.expected.yml, checked byte for byte by
# tests/unit/discovery/test_monitors.c) load in the same Prometheus.
{
  echo "scrape_configs:"
  for f in "$IM_SOURCE_DIR"/tests/fixtures/k8s/monitors/*.expected.yml; do sed 's/^/  /' "$f"; done
} | sed "s|^      - role: \(.*\)\$|      - role: \1\n        api_server: http://127.0.0.1:$API|" > "$IM_TMP/monitors.yml"
NJOBS=$(grep -c '^  - job_name:' "$IM_TMP/monitors.yml")
PM=$(free_port)
bg "$IM_TMP/prometheus-k8s" --config.file="$IM_TMP/monitors.yml" --storage.tsdb.path="$IM_TMP/data2" \
  --web.listen-address="127.0.0.1:$PM" --log.level=warn
wait_http "http://127.0.0.1:$PM/-/ready" 30
curl -fsS "http://127.0.0.1:$PM/api/v1/status/config" -o "$IM_TMP/cfg.json"
got=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["data"]["yaml"].count("- job_name:"))' "$IM_TMP/cfg.json")
[ "$got" = "$NJOBS" ] || fail "Prometheus loaded $got of the $NJOBS monitor jobs"
echo "PASS: Prometheus 2.42.0 loads all $NJOBS scrape configs generated from monitors"

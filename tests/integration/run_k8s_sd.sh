#!/usr/bin/env bash
# kubernetes_sd_configs, differential: a fixture API server (k8s_api.py: TLS with
# a generated certificate, bearer token, list + watch with resourceVersions,
# bookmarks, 410 Gone) serves an LLM-serving cluster (tests/fixtures/k8s/) and
# changes it step by step; infermon and the reference Prometheus 2.42 with
# Kubernetes SD (../shared/tools/prometheus-2.42.0-k8s.xz) run the same
# kubernetes_sd_configs for every role, and /api/v1/targets (discovered labels,
# labels, dropped targets) must be equal at every step, after churn and after
# forced re-lists (410 as an ERROR event and as HTTP 410). Without the binary the
# answers recorded from it (tests/fixtures/k8s/prometheus-2.42.0/) are the
# reference; K8S_SD_RECORD=1 re-records them. infermon alone then: the in-cluster
# configuration (service-account directory, rotated token), kubeconfig_file, and
# a failing API server (500, 403, malformed list, hang) logged per role and
# namespace while every other discovery keeps its targets. K8S_SD_RECORDED=1 uses
# the recorded answers even when the binary is there.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
FIX="$IM_SOURCE_DIR/tests/fixtures/k8s"
REC="$FIX/prometheus-2.42.0"
T="$PY $IM_SOURCE_DIR/tests/integration/k8s_targets.py"
XZ=""
for c in "$IM_SOURCE_DIR/../shared/tools" "$IM_SOURCE_DIR/../../shared/tools"; do
  [ -f "$c/prometheus-2.42.0-k8s.xz" ] && XZ="$c/prometheus-2.42.0-k8s.xz" && break
done
aport=$(free_port); iport=$(free_port); pport=$(free_port)
cd "$IM_TMP"
openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 2 \
  -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1
echo "sd-token-1" >token
cp token api-tokens
mkdir -p sa
cp cert.pem sa/ca.crt
cp token sa/token
echo llm >sa/namespace
$PY "$IM_SOURCE_DIR/tests/integration/k8s_api.py" --port "$aport" --cert cert.pem --key key.pem \
  --token-file api-tokens --fixture "$FIX/cluster.json" --script "$FIX/script.json" >api.log 2>&1 &
IM_PIDS+=($!)
A="https://127.0.0.1:$aport"
for i in $(seq 100); do curl -sk -o /dev/null "$A/version" && break; sleep 0.1; done
cat >kubeconfig <<EOF
apiVersion: v1
kind: Config
current-context: test
contexts:
- name: test
  context: {cluster: fixture, user: sd}
clusters:
- name: fixture
  cluster:
    server: $A
    certificate-authority-data: $(base64 -w0 cert.pem)
users:
- name: sd
  user: {tokenFile: $IM_TMP/token}
EOF
# conn ROLE [incluster]: the connection part of one kubernetes_sd_config
conn() {
  if [ "${2:-}" = incluster ]; then echo "{role: $1"; else
    echo "{role: $1, api_server: '$A', tls_config: {ca_file: $IM_TMP/cert.pem}, authorization: {credentials_file: $IM_TMP/token}"
  fi
}
write_cfg() { # write_cfg FILE incluster|explicit
  local m=$2
  cat >"$1" <<EOF
global: {scrape_interval: 5m, scrape_timeout: 10s}
scrape_configs:
  - job_name: k8s-pods
    kubernetes_sd_configs: [$(conn pod $m)}]
  - job_name: k8s-pods-annotated
    kubernetes_sd_configs:
      - $(conn pod $m), namespaces: {names: [llm, gpu-operator]}, attach_metadata: {node: true},
         selectors: [{role: pod, field: status.phase=Running}]}
    relabel_configs:
      - {source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_scrape], action: keep, regex: "true"}
      - {source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_path], target_label: __metrics_path__, regex: (.+)}
      - {source_labels: [__address__, __meta_kubernetes_pod_annotation_prometheus_io_port], regex: '([^:]+|\[[^\]]+\])(?::\d+)?;(\d+)', replacement: '\$1:\$2', target_label: __address__}
      - {action: labelmap, regex: __meta_kubernetes_pod_label_(.+)}
      - {source_labels: [__meta_kubernetes_namespace], target_label: namespace}
      - {source_labels: [__meta_kubernetes_pod_name], target_label: pod}
      - {source_labels: [__meta_kubernetes_pod_node_name], target_label: node}
  - job_name: k8s-pods-selected
    kubernetes_sd_configs:
      - $(conn pod $m), selectors: [{role: pod, label: "app.kubernetes.io/name in (vllm),model!=llama"}]}
    relabel_configs:
      - {source_labels: [__meta_kubernetes_pod_container_init], regex: "true", action: drop}
  - job_name: k8s-services
    kubernetes_sd_configs: [$(conn service $m)}]
    relabel_configs:
      - {source_labels: [__meta_kubernetes_service_type], regex: ExternalName, action: drop}
  - job_name: k8s-endpoints
    kubernetes_sd_configs: [$(conn endpoints $m), attach_metadata: {node: true}}]
  - job_name: k8s-endpoints-kueue
    kubernetes_sd_configs:
      - $(conn endpoints $m), namespaces: {names: [kueue-system]},
         selectors: [{role: service, label: "control-plane=controller-manager"}]}
    relabel_configs:
      - {source_labels: [__meta_kubernetes_service_name], regex: ".*metrics.*", action: keep}
      - {source_labels: [__meta_kubernetes_endpoint_port_name], target_label: __scheme__}
  - job_name: k8s-endpointslice
    kubernetes_sd_configs: [$(conn endpointslice $m), attach_metadata: {node: true}}]
  - job_name: k8s-nodes
    kubernetes_sd_configs: [{role: node, kubeconfig_file: $IM_TMP/kubeconfig}]
    relabel_configs:
      - {action: labelmap, regex: __meta_kubernetes_node_label_(.+)}
  - job_name: k8s-ingress
    kubernetes_sd_configs: [$(conn ingress $m)}]
    relabel_configs:
      - {source_labels: [__meta_kubernetes_ingress_scheme], target_label: __scheme__}
      - {source_labels: [__meta_kubernetes_ingress_path], target_label: __metrics_path__}
EOF
}
write_cfg im.yml incluster
write_cfg prom.yml explicit
# infermon uses the in-cluster configuration: only the connection settings differ
KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=$aport INFERMON_K8S_SERVICEACCOUNT_DIR="$IM_TMP/sa" \
  "$IM_BINARY" run --config.file=im.yml --storage.tsdb.path=idata --web.listen-address="127.0.0.1:$iport" \
  --storage.tsdb.wal-fsync=never >im.log 2>&1 &
IM_PIDS+=($!)
I="http://127.0.0.1:$iport"
wait_http "$I/-/ready" 30
live=0
if [ -n "$XZ" ] && [ "${K8S_SD_RECORDED:-0}" != 1 ]; then
  xz -dc "$XZ" >prometheus-k8s && chmod +x prometheus-k8s
  ./prometheus-k8s --config.file=prom.yml --storage.tsdb.path=pdata --web.listen-address="127.0.0.1:$pport" >prom.log 2>&1 &
  PROMPID=$!
  IM_PIDS+=($PROMPID)
  P="http://127.0.0.1:$pport"
  wait_http "$P/-/ready" 60
  live=1
  ./prometheus-k8s --version 2>&1 | head -1
elif [ -n "$XZ" ]; then
  echo "K8S_SD_RECORDED=1: comparing with the recorded answers in $REC"
else
  echo "SKIP live comparison: prometheus-2.42.0-k8s.xz not found next to the repository; comparing with the recorded answers in $REC"
fi
[ "${K8S_SD_RECORD:-0}" = 1 ] && [ $live = 1 ] && mkdir -p "$REC"
prev=""
check() { # check NAME: compare infermon with the reference at this step
  local name=$1 ref
  if [ $live = 1 ]; then
    $T settle "$P" "ref-$name.json" $prev || fail "$name: Prometheus never settled"
    ref="ref-$name.json"
    if [ "${K8S_SD_RECORD:-0}" = 1 ]; then cp "ref-$name.json" "$REC/$name.json"; fi
    prev="ref-$name.json"
  else
    ref="$REC/$name.json"
  fi
  $T wait "$I" "$ref" 30 || { tail -5 im.log; fail "$name: infermon's targets differ from Prometheus 2.42's"; }
  echo "ok $name ($($PY -c "import json,sys; d=json.load(open(sys.argv[1])); print(len(d['active']), 'active,', len(d['dropped']), 'dropped')" "$ref"))"
}
step() { curl -sfk -XPOST "$A/_control/step" >/dev/null || fail "step"; }
check initial
step; check step1-pods-scale-up
step; check step2-endpoints-follow
step; check step3-delete-and-relabel
step; check step4-pod-only-change
curl -sfk -XPOST "$A/_control/gone?mode=event" >/dev/null
check relist-event
step; check step5-deletions
curl -sfk -XPOST "$A/_control/gone?mode=http" >/dev/null
if [ $live = 1 ]; then sleep 2; fi
prev=""
check relist-http

# ---- infermon alone: the request shapes, token rotation, failures ----
curl -sfk "$A/_control/requests" >requests.json
$PY - requests.json <<'PY' || fail "list/watch requests"
import json, sys
reqs = json.load(open(sys.argv[1]))
lists = [r for r in reqs if "limit=500" in r]
watches = [r for r in reqs if "watch=true" in r and "allowWatchBookmarks=true" in r]
assert any(r.startswith("/api/v1/namespaces/llm/pods?fieldSelector=status.phase%3DRunning&limit=500&resourceVersion=") for r in lists), lists
assert any("/apis/discovery.k8s.io/v1/endpointslices?" in r for r in watches), watches
assert any("labelSelector=control-plane%3Dcontroller-manager" in r and "/namespaces/kueue-system/services" in r for r in lists), lists
PY
[ $live = 1 ] && { kill "$PROMPID"; wait "$PROMPID" 2>/dev/null || true; }
if [ $live = 1 ]; then ref=ref-relist-http.json; else ref="$REC/relist-http.json"; fi
# rotate the service-account token (and the kubeconfig's tokenFile): the API
# accepts only the new one from now on; every informer re-lists with it (twice)
nreq() { curl -sfk "$A/_control/requests" | $PY -c 'import json,sys; print(sum("limit=500" in r for r in json.load(sys.stdin)))'; }
# (as a cluster does, both tokens are valid while the clients' files change)
printf 'sd-token-1\nsd-token-2\n' >api-tokens.new && mv api-tokens.new api-tokens
echo "sd-token-2" >token.new && mv token.new token
echo "sd-token-2" >sa/token.new && mv sa/token.new sa/token
echo "sd-token-2" >api-tokens.new && mv api-tokens.new api-tokens
# every informer re-lists after a 410; requests prepared before the rotation may
# still reach the (busy) server late and be refused, so the check is the second
# round: each request prepared after the files changed carries the new token
relist_all() {
  local n0; n0=$(nreq)
  curl -sfk -XPOST "$A/_control/gone?mode=event" >/dev/null
  for i in $(seq 150); do [ "$(nreq)" -ge $((n0 + 19)) ] && break; sleep 0.2; done
  [ "$(nreq)" -ge $((n0 + 19)) ] || fail "not every informer re-listed after the 410"
  $T wait "$I" "$ref" 30 || fail "targets after the token rotation differ"
}
n401s() { curl -sfk -H "Authorization: Bearer sd-token-2" "$A/_control/stats" | $PY -c 'import json,sys; print(json.load(sys.stdin)["unauthorized"])'; }
relist_all
# refusals of requests prepared before the rotation can still arrive from the
# busy server after the first round: count from when the figure has settled
# (unchanged over 8 polls, 30 s at most), then every request of the second round
# was prepared after the files changed
n401=$(n401s); same=0
for i in $(seq 100); do
  sleep 0.3; m=$(n401s)
  if [ "$m" = "$n401" ]; then same=$((same + 1)); else same=0; n401=$m; fi
  [ $same -ge 8 ] && break
done
relist_all
n401b=$(n401s)
[ "$n401b" = "$n401" ] || fail "$((n401b - n401)) requests used the old token after the rotation"
echo "ok token rotation"
# failures: 500 on services of all namespaces, 403 on nodes, a malformed list of
# ingresses, a hanging endpointslice list; then a re-list of everything
curl -sfk -XPOST "$A/_control/fail?path=/api/v1/services&mode=500&count=2" >/dev/null
curl -sfk -XPOST "$A/_control/fail?path=/api/v1/nodes&mode=403&count=2" >/dev/null
curl -sfk -XPOST "$A/_control/fail?path=/apis/networking.k8s.io/v1/ingresses&mode=malformed&count=2" >/dev/null
curl -sfk -XPOST "$A/_control/fail?path=/apis/discovery.k8s.io/v1/endpointslices&mode=hang&count=1" >/dev/null
curl -sfk -XPOST "$A/_control/gone?mode=event" >/dev/null
for i in $(seq 100); do
  grep -q 'resource=service namespace=(all) err=".*HTTP 500' im.log &&
    grep -q 'resource=node .*HTTP 403' im.log &&
    grep -q 'role=ingress resource=ingress namespace=(all) err=".*malformed list' im.log && break
  sleep 0.2
done
grep 'Kubernetes discovery failed' im.log | tail -4
grep -q 'resource=service namespace=(all) err=".*HTTP 500: injected failure' im.log || fail "no log line for the 500"
grep -q 'resource=node namespace=(all) err=".*HTTP 403' im.log || fail "no log line for the 403"
grep -q 'role=ingress resource=ingress namespace=(all) err=".*malformed list' im.log || fail "no log line for the malformed list"
# everything recovers (backoff) and no target was lost meanwhile; the hanging list
# keeps its endpointslice targets
$T wait "$I" "$ref" 40 || fail "targets after the failures differ"
curl -sf "$I/api/v1/targets" | $PY -c '
import json, sys
d = json.load(sys.stdin)["data"]["activeTargets"]
pools = {t["scrapePool"] for t in d}
assert {"k8s-pods", "k8s-endpoints", "k8s-endpointslice", "k8s-nodes", "k8s-ingress"} <= pools, pools
' || fail "a discovery lost its targets"
echo "ok failures logged per role and namespace, targets kept"

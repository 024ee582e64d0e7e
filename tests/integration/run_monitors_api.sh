#!/bin/bash
# run_monitors_api.sh — kubernetes_monitors: against a test API server that serves
# the fixture monitors (tests/fixtures/k8s/monitors/*.json) as Lists and their
# Secrets: `infermon check config --kubernetes-monitors` must list both kinds with
# the labelSelector and the section's bearer token, read each referenced Secret,
# print one job per endpoint (the operator's names, the secret values resolved,
# api_server added to every discovery entry), and skip — with a warning naming
# it — a monitor whose Secret is missing, keeping the others.
# Then `infermon run` against the list+watch fixture server (k8s_api.py): a
# ServiceMonitor added, changed and deleted through its control endpoint shows
# up, changes and goes away in /api/v1/targets without SIGHUP; a watch broken by
# 410 Gone and failing re-lists keeps the jobs and does not reload; a Secret a
# monitor's basicAuth names is rotated and the new password reaches the scrapes.
# Last, an API server unreachable when infermon starts: the start is not fatal
# (the failed List is logged naming resource and namespace), the static jobs are
# scraped, and the monitors' jobs appear once the API answers.
. "$IM_SOURCE_DIR/tests/lib/common.sh"
FX=$IM_SOURCE_DIR/tests/fixtures/k8s/monitors
$PY - "$FX" "$IM_TMP" <<'PYEOF'
import base64, glob, json, os, sys
fx, tmp = sys.argv[1], sys.argv[2]
lists = {"ServiceMonitor": [], "PodMonitor": []}
for f in sorted(glob.glob(fx + "/*.json")):
    o = json.load(open(f))
    lists[o["kind"]].append(o)
# One more monitor whose Secret does not exist: skipped, the rest kept.
lists["PodMonitor"].append({"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor",
    "metadata": {"name": "broken", "namespace": "serving"},
    "spec": {"podMetricsEndpoints": [{"port": "m", "bearerTokenSecret": {"name": "absent", "key": "t"}}]}})
for kind, res in (("ServiceMonitor", "servicemonitors"), ("PodMonitor", "podmonitors")):
    json.dump({"apiVersion": "monitoring.coreos.com/v1", "kind": kind + "List",
               "metadata": {"resourceVersion": "777"}, "items": lists[kind]},
              open(os.path.join(tmp, res + ".json"), "w"))
def secret(name, data):
    json.dump({"kind": "Secret", "apiVersion": "v1", "metadata": {"name": name, "namespace": "serving"},
               "type": "Opaque", "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}},
              open(os.path.join(tmp, "secret-" + name + ".json"), "w"))
secret("gw-metrics", {"user": "scraper", "pass": "s3cr\"et\\pw"})
secret("gw-token", {"token": "tok-123"})
secret("router-auth", {"token": "router-tok"})
PYEOF
API=$(free_port)
S=/api/v1/namespaces/serving/secrets
K8S_API_LOG=$IM_TMP/requests.log bg $PY "$IM_SOURCE_DIR/tests/integration/k8s_list_api.py" "$API" \
  "/apis/monitoring.coreos.com/v1/servicemonitors=$IM_TMP/servicemonitors.json" \
  "/apis/monitoring.coreos.com/v1/podmonitors=$IM_TMP/podmonitors.json" \
  "/apis/monitoring.coreos.com/v1/namespaces/llm/servicemonitors=$IM_TMP/servicemonitors.json" \
  "/apis/monitoring.coreos.com/v1/namespaces/serving/servicemonitors=$IM_TMP/servicemonitors.json" \
  "$S/gw-metrics=$IM_TMP/secret-gw-metrics.json" "$S/gw-token=$IM_TMP/secret-gw-token.json" \
  "$S/router-auth=$IM_TMP/secret-router-auth.json"
wait_http "http://127.0.0.1:$API/version" 10
cat > "$IM_TMP/infermon.yml" <<YML
global:
  scrape_interval: 30s
kubernetes_monitors:
  api_server: http://127.0.0.1:$API
  selector: "app.kubernetes.io/part-of in (llm),tier!=dev"
  authorization:
    credentials: test-token
YML
"$IM_BINARY" check config --kubernetes-monitors "$IM_TMP/infermon.yml" > "$IM_TMP/out.yml" \
  2> "$IM_TMP/err.txt" || true
grep -q "6 monitors read" "$IM_TMP/out.yml" || { cat "$IM_TMP/out.yml" "$IM_TMP/err.txt"; fail "not 6 monitors"; }
grep -q 'Sanitizer' "$IM_TMP/err.txt" && { cat "$IM_TMP/err.txt"; fail "sanitizer report from check config"; }
grep -q 'broken' "$IM_TMP/err.txt" || fail "the broken monitor was not reported"
grep -q 'absent' "$IM_TMP/err.txt" || fail "the missing Secret was not named"
grep -q 'podMonitor/serving/broken' "$IM_TMP/out.yml" && fail "the broken monitor left a job"
want=$(cat "$FX"/*.expected.yml | grep -c '^- job_name:')
got=$(grep -c '^  - job_name:' "$IM_TMP/out.yml")
[ "$got" = "$want" ] || fail "$got jobs, want $want"
# Every job is the fixture's expected job, plus the api_server line(s) in its discovery entry.
$PY - "$FX" "$IM_TMP/out.yml" "$API" <<'PYEOF' || fail "generated jobs differ from the expected files"
import glob, sys
fx, out, port = sys.argv[1], sys.argv[2], sys.argv[3]
want = "".join(open(f).read() for f in sorted(glob.glob(fx + "/*.expected.yml")))
got = [l[2:] for l in open(out).read().splitlines(True)[2:]]
extra = '      api_server: http://127.0.0.1:%s\n      authorization:\n        type: Bearer\n        credentials: test-token\n' % port
norm = "".join(l for l in got)
if norm.count(extra) != want.count("- job_name:"): print(norm[:1500]); sys.exit(1)
norm = norm.replace(extra, "")
def jobs(t):
    return sorted(t.split("- job_name: ")[1:])
if jobs(norm) != jobs(want):
    for a, b in zip(jobs(norm), jobs(want)):
        if a != b: print("GOT\n" + a + "\nWANT\n" + b); break
    sys.exit(1)
PYEOF
grep -q '^/apis/monitoring.coreos.com/v1/servicemonitors?labelSelector=app.kubernetes.io%2Fpart-of%20in%20%28llm%29%2Ctier%21%3Ddev Bearer test-token$' \
  "$IM_TMP/requests.log" || { cat "$IM_TMP/requests.log"; fail "ServiceMonitor List request"; }
grep -q '^/apis/monitoring.coreos.com/v1/podmonitors?labelSelector=' "$IM_TMP/requests.log" || fail "no PodMonitor List"
grep -q '^/api/v1/namespaces/serving/secrets/gw-metrics Bearer test-token$' "$IM_TMP/requests.log" || fail "Secret not read"
# Namespaced Lists when namespaces.names is given.
cat >> "$IM_TMP/infermon.yml" <<YML
  namespaces:
    names: [llm, serving]
  pod_monitors: false
YML
: > "$IM_TMP/requests.log"
"$IM_BINARY" check config --kubernetes-monitors "$IM_TMP/infermon.yml" > /dev/null 2>&1 || true
grep -q '^/apis/monitoring.coreos.com/v1/namespaces/llm/servicemonitors?' "$IM_TMP/requests.log" || fail "no namespaced List"
grep -q '^/apis/monitoring.coreos.com/v1/namespaces/serving/servicemonitors?' "$IM_TMP/requests.log" || fail "no namespaced List (2)"
grep -q 'podmonitors' "$IM_TMP/requests.log" && fail "pod_monitors: false still listed PodMonitors"
# A List the API server refuses is an error naming the URL (and the RBAC to check).
sed -i 's/names: \[llm, serving\]/names: [llm, forbidden]/' "$IM_TMP/infermon.yml"
"$IM_BINARY" check config --kubernetes-monitors "$IM_TMP/infermon.yml" > /dev/null 2> "$IM_TMP/err2.txt" \
  && fail "a failed List was not an error"
grep -q 'namespaces/forbidden/servicemonitors?.*HTTP 404 (the ClusterRole needs list on servicemonitors)' \
  "$IM_TMP/err2.txt" || { cat "$IM_TMP/err2.txt"; fail "failed List not explained"; }
# An unknown key in the section is refused with its position.
printf 'kubernetes_monitors:\n  api_server: http://127.0.0.1:1\n  selectr: x\n' > "$IM_TMP/bad.yml"
"$IM_BINARY" check config "$IM_TMP/bad.yml" > "$IM_TMP/bad.out" && fail "unknown key accepted"
grep -q 'bad.yml:3:3: field selectr not found in kubernetes_monitors' "$IM_TMP/bad.out" \
  || { cat "$IM_TMP/bad.out"; fail "unknown key not refused with its position"; }
# ---- watched: infermon run follows the monitors as they change ----
W=$IM_TMP/watch
mkdir -p "$W"
WAPI=$(free_port)
IMP=$(free_port)
AUTHP=$(free_port)
$PY - "$W" "$IMP" "$AUTHP" <<'PYEOF'
import base64, json, sys
w, imp = sys.argv[1], int(sys.argv[2])
lab = {"app": "vllm"}
svc = {"apiVersion": "v1", "kind": "Service",
       "metadata": {"name": "vllm", "namespace": "llm", "labels": lab, "uid": "s-1"},
       "spec": {"ports": [{"name": "http", "port": 8000, "targetPort": imp, "protocol": "TCP"}]}}
ep = {"apiVersion": "v1", "kind": "Endpoints",
      "metadata": {"name": "vllm", "namespace": "llm", "labels": lab},
      "subsets": [{"addresses": [{"ip": "127.0.0.1"}],
                   "ports": [{"name": "http", "port": imp, "protocol": "TCP"}]}]}
def sm(name, path, labels):
    # each monitor's series carry monitor=<name> (the targets are the same address)
    return {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
            "metadata": {"name": name, "namespace": "llm", "labels": labels},
            "spec": {"selector": {"matchLabels": lab},
                     "endpoints": [{"port": "http", "path": path, "interval": "1s",
                                    "relabelings": [{"targetLabel": "monitor",
                                                     "replacement": name}]}]}}
sel = {"app.kubernetes.io/part-of": "llm"}
# A second Service in front of auth_target.py, scraped with basicAuth from a Secret.
authp = int(sys.argv[3])
alab = {"app": "auth"}
asvc = {"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "auth", "namespace": "llm", "labels": alab, "uid": "s-2"},
        "spec": {"ports": [{"name": "http", "port": 80, "targetPort": authp, "protocol": "TCP"}]}}
aep = {"apiVersion": "v1", "kind": "Endpoints",
       "metadata": {"name": "auth", "namespace": "llm", "labels": alab},
       "subsets": [{"addresses": [{"ip": "127.0.0.1"}],
                    "ports": [{"name": "http", "port": authp, "protocol": "TCP"}]}]}
amon = {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
        "metadata": {"name": "auth", "namespace": "llm", "labels": sel},
        "spec": {"selector": {"matchLabels": alab},
                 "endpoints": [{"port": "http", "interval": "1s",
                                "basicAuth": {"username": {"name": "scrape-auth", "key": "user"},
                                              "password": {"name": "scrape-auth", "key": "pass"}}}]}}
def secret(pw):
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": "scrape-auth", "namespace": "llm"},
            "data": {"user": base64.b64encode(b"scraper").decode(),
                     "pass": base64.b64encode(pw.encode()).decode()}}
json.dump([svc, ep, sm("base", "/metrics", sel), asvc, aep, amon, secret("first-pw")],
          open(w + "/cluster.json", "w"))
json.dump([
    [{"op": "add", "object": sm("vllm", "/federate", sel)},
     {"op": "add", "object": sm("dev-only", "/metrics", {"tier": "dev"})}],
    [{"op": "update", "object": sm("vllm", "/v2/metrics", sel)}],
    [{"op": "delete", "object": sm("vllm", "/v2/metrics", sel)}],
    [{"op": "update", "object": secret("rotated-pw")}],
], open(w + "/script.json", "w"))
PYEOF
bg $PY "$IM_SOURCE_DIR/tests/integration/k8s_api.py" --port "$WAPI" --token watch-token \
  --fixture "$W/cluster.json" --script "$W/script.json"
# The basicAuth target: answers /metrics, logs each request's Authorization header.
cat > "$W/auth_target.py" <<'PYEOF'
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        with open(sys.argv[2], "a") as f:
            f.write((self.headers.get("Authorization") or "-") + "\n")
        b = b"auth_target_up 1\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PYEOF
bg $PY "$W/auth_target.py" "$AUTHP" "$W/auth.log"
WA=http://127.0.0.1:$WAPI
for i in $(seq 100); do curl -fs -o /dev/null -H "Authorization: Bearer watch-token" "$WA/version" && break; sleep 0.1; done
cat > "$W/infermon.yml" <<YML
global:
  scrape_interval: 1s
kubernetes_monitors:
  api_server: $WA
  selector: "app.kubernetes.io/part-of=llm"
  authorization:
    credentials: watch-token
YML
"$IM_BINARY" run --config.file="$W/infermon.yml" --storage.tsdb.path="$W/data" \
  --web.listen-address="127.0.0.1:$IMP" --storage.tsdb.wal-fsync=never > "$W/im.log" 2>&1 &
IMPID=$!
IM_PIDS+=($IMPID)
wait_http "http://127.0.0.1:$IMP/-/ready" 30
I=http://127.0.0.1:$IMP
# pools: "pool=scrapeUrl" of every active target, sorted
pools() {
  curl -fsS "$I/api/v1/targets" | $PY -c 'import json,sys
d = json.load(sys.stdin)["data"]["activeTargets"]
print(" ".join(sorted("%s=%s" % (t["scrapePool"], t["scrapeUrl"]) for t in d)))'
}
# wait_pools WANT WHAT: waits (20 s at most) until pools prints WANT
wait_pools() {
  local i got=""
  for i in $(seq 200); do
    got=$(pools 2>/dev/null || true)
    [ "$got" = "$1" ] && return 0
    sleep 0.1
  done
  cat "$W/im.log" >&2
  curl -fsS "$I/api/v1/targets?state=any" >&2 || true
  curl -fsS "$WA/_control/requests" -H "Authorization: Bearer watch-token" | tail -c 3000 >&2 || true
  fail "$2: targets are [$got], want [$1]"
}
reloads() { grep -c 'monitors changed: reloading' "$W/im.log" || true; }
step() { curl -fsS -XPOST "$WA/_control/step" > /dev/null || fail "fixture step"; }
BASE="serviceMonitor/llm/auth/0=http://127.0.0.1:$AUTHP/metrics serviceMonitor/llm/base/0=http://127.0.0.1:$IMP/metrics"
VLLM="serviceMonitor/llm/vllm/0=http://127.0.0.1:$IMP"
wait_pools "$BASE" "the monitor listed at start"
step # vllm added (and dev-only, which the selector leaves out)
wait_pools "$BASE $VLLM/federate" "an added ServiceMonitor"
[ "$(reloads)" = 1 ] || fail "$(reloads) reloads for one change"
relists() {
  curl -fsS "$WA/_control/requests" | $PY -c 'import json,sys
print(sum(r.startswith("/apis/monitoring.coreos.com/v1/servicemonitors?") and "watch=true" not in r
          for r in json.load(sys.stdin)))'
}
n0=$(relists)
# A 410 Gone on the watches, then failing re-lists: jobs kept, no reload.
curl -fsS -XPOST "$WA/_control/fail?path=/apis/monitoring.coreos.com/v1/servicemonitors&mode=500&count=3" > /dev/null
curl -fsS -XPOST "$WA/_control/gone?mode=event" > /dev/null
for i in $(seq 200); do [ "$(relists)" -ge $((n0 + 4)) ] && break; sleep 0.1; done
[ "$(relists)" -ge $((n0 + 4)) ] || fail "no re-list after 410 and the failures"
grep -q 'Kubernetes discovery failed.*job=kubernetes_monitors.*resource=servicemonitors.*HTTP 500' \
  "$W/im.log" || fail "the failing re-list was not logged naming the monitors"
[ "$(pools)" = "$BASE $VLLM/federate" ] || fail "jobs changed during the watch errors: $(pools)"
step # vllm's path changed
wait_pools "$BASE $VLLM/v2/metrics" "a changed ServiceMonitor"
[ "$(reloads)" = 2 ] || fail "$(reloads) reloads after the second change (a re-list reloaded?)"
# nvllm: how many series up{monitor="vllm"} has now (5 min lookback: only a
# staleness marker empties it at once)
nvllm() {
  curl -fsS -G "$I/api/v1/query" --data-urlencode 'query=up{monitor="vllm"}' \
    | $PY -c 'import json,sys; print(len(json.load(sys.stdin)["data"]["result"]))'
}
for i in $(seq 200); do [ "$(nvllm)" = 1 ] && break; sleep 0.1; done
[ "$(nvllm)" = 1 ] || fail "the changed monitor's target was not scraped"
step # vllm deleted
wait_pools "$BASE" "a deleted ServiceMonitor"
for i in $(seq 200); do [ "$(nvllm)" = 0 ] && break; sleep 0.1; done
[ "$(nvllm)" = 0 ] || fail "the deleted monitor's series were not marked stale"
# The basicAuth Secret rotates: the scrapes use the new password (no SIGHUP).
b64() { printf '%s' "$1" | base64; }
for i in $(seq 200); do grep -q "^Basic $(b64 scraper:first-pw)$" "$W/auth.log" 2>/dev/null && break; sleep 0.1; done
grep -q "^Basic $(b64 scraper:first-pw)$" "$W/auth.log" || fail "the Secret's password was not used"
grep -q 'secrets=1 ' "$W/im.log" || fail "the monitors' load did not count the Secret"
r0=$(reloads)
step # scrape-auth rotated
for i in $(seq 200); do grep -q "^Basic $(b64 scraper:rotated-pw)$" "$W/auth.log" && break; sleep 0.1; done
grep -q "^Basic $(b64 scraper:rotated-pw)$" "$W/auth.log" || { cat "$W/im.log" >&2; fail "the rotated Secret did not reach the scrapes"; }
[ "$(reloads)" = $((r0 + 1)) ] || fail "$(reloads) reloads after the Secret rotation, want $((r0 + 1))"
curl -fsS "$WA/_control/requests" | grep -q '/api/v1/namespaces/llm/secrets?fieldSelector=metadata.name%3Dscrape-auth' \
  || fail "the Secret was not watched by name"
grep -q 'Received' "$W/im.log" && fail "a signal was received before the end"
# Shutdown with the watch running is clean (and, in sanitizer builds, leak-free).
kill -TERM "$IMPID"
wait "$IMPID" || fail "infermon exited with status $? at SIGTERM"
grep -q 'See you next time' "$W/im.log" || fail "no clean shutdown"
grep -q 'Sanitizer' "$W/im.log" && { cat "$W/im.log"; fail "sanitizer report"; }
# ---- an API server unreachable at start ----
U=$IM_TMP/unreachable
mkdir -p "$U"
UAPI=$(free_port)
UIMP=$(free_port)
cat > "$U/infermon.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: self
    static_configs: [{targets: ["127.0.0.1:$UIMP"]}]
kubernetes_monitors:
  api_server: http://127.0.0.1:$UAPI
  selector: "app.kubernetes.io/part-of=llm"
  namespaces:
    names: [llm]
  authorization:
    credentials: watch-token
YML
"$IM_BINARY" run --config.file="$U/infermon.yml" --storage.tsdb.path="$U/data" \
  --web.listen-address="127.0.0.1:$UIMP" --storage.tsdb.wal-fsync=never > "$U/im.log" 2>&1 &
UPID=$!
IM_PIDS+=($UPID)
wait_http "http://127.0.0.1:$UIMP/-/ready" 30
grep -q 'Cannot read the prometheus-operator monitors.*listing servicemonitors in namespace llm' "$U/im.log" \
  || { cat "$U/im.log"; fail "the unreachable API was not logged naming resource and namespace"; }
I=http://127.0.0.1:$UIMP
W=$U
wait_pools "self=http://127.0.0.1:$UIMP/metrics" "the static job while the API is unreachable"
up_self() {
  curl -fsS -G "$I/api/v1/query" --data-urlencode 'query=up{job="self"}' \
    | $PY -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
for i in $(seq 200); do [ "$(up_self)" = 1 ] && break; sleep 0.1; done
[ "$(up_self)" = 1 ] || fail "the static job was not scraped while the API is unreachable"
# The API comes up (the watch retries with backoff): the monitors' jobs appear.
bg $PY "$IM_SOURCE_DIR/tests/integration/k8s_api.py" --port "$UAPI" --token watch-token \
  --fixture "$IM_TMP/watch/cluster.json"
AUTHP_U="serviceMonitor/llm/auth/0=http://127.0.0.1:$AUTHP/metrics"
wait_pools "self=http://127.0.0.1:$UIMP/metrics $AUTHP_U serviceMonitor/llm/base/0=http://127.0.0.1:$IMP/metrics" \
  "the monitors once the API answers"
# the generated job scrapes (with the Secret's password) before the stop
for i in $(seq 200); do
  [ "$(curl -fsS -G "$I/api/v1/query" --data-urlencode 'query=up{job="auth"}' | $PY -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")')" = 1 ] && break
  sleep 0.1
done
grep -q 'Received' "$U/im.log" && fail "a signal was received"
kill -TERM "$UPID"
wait "$UPID" || fail "infermon exited with status $? at SIGTERM"
grep -q 'Sanitizer' "$U/im.log" && { cat "$U/im.log"; fail "sanitizer report"; }
echo "PASS: kubernetes_monitors lists, resolves Secrets and generates the expected jobs; watched monitors added, changed and deleted reach the targets; a rotated Secret reaches the scrapes; an API unreachable at start is retried"

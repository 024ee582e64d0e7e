#!/usr/bin/env bash
# `infermon run` end to end: a prometheus_client exporter, node_exporter and a set
# of broken targets (404, garbage, one byte per second, an endless body, 2 GB,
# too many samples), the daemon itself scraped over TLS with basic auth (bcrypt),
# file_sd live reload,
# config reload by SIGHUP (bad config kept out) and POST /-/reload, clean
# shutdown on SIGTERM and the data still there after a restart.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
EXP="$IM_SOURCE_DIR/tests/integration/exporter.py"
gport=$(free_port); bport=$(free_port); nport=$(free_port); iport=$(free_port)
bg $PY "$EXP" "$gport" good
bg $PY "$EXP" "$bport" bad
bg prometheus-node-exporter --web.listen-address="127.0.0.1:$nport" --collector.disable-defaults \
  --collector.cpu --collector.meminfo --collector.loadavg >/dev/null 2>&1

# TLS + basic auth for the daemon
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$IM_TMP/key.pem" -out "$IM_TMP/cert.pem" \
  -days 1 -subj "/CN=127.0.0.1" >/dev/null 2>&1
HASH=$($PY -c 'import crypt; print(crypt.crypt("pw", "$2b$05$" + "abcdefghijklmnopqrstuu"))' 2>/dev/null)
[ -n "$HASH" ] || fail "could not make a bcrypt hash"
cat >"$IM_TMP/web.yml" <<YML
tls_server_config:
  cert_file: $IM_TMP/cert.pem
  key_file: $IM_TMP/key.pem
basic_auth_users:
  admin: '$HASH'
YML
mkdir -p "$IM_TMP/sd"
write_cfg() { # $1 = extra job yaml
  cat >"$IM_TMP/cfg.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s, external_labels: {site: t}}
scrape_configs:
  - job_name: py
    static_configs: [{targets: ['127.0.0.1:$gport'], labels: {env: test}}]
  - job_name: node
    static_configs: [{targets: ['127.0.0.1:$nport']}]
  - job_name: self
    scheme: https
    tls_config: {insecure_skip_verify: true}
    basic_auth: {username: admin, password: pw}
    static_configs: [{targets: ['127.0.0.1:$iport']}]
  - job_name: b404
    metrics_path: /404
    static_configs: [{targets: ['127.0.0.1:$bport']}]
  - job_name: bgarbage
    metrics_path: /garbage
    static_configs: [{targets: ['127.0.0.1:$bport']}]
  - job_name: bslow
    metrics_path: /slow
    static_configs: [{targets: ['127.0.0.1:$bport']}]
  - job_name: bendless
    metrics_path: /endless
    static_configs: [{targets: ['127.0.0.1:$bport']}]
  - job_name: bbig
    metrics_path: /big
    # the limit must be reached before the timeout however loaded the machine
    # (ASan, parallel tests): 1 MB to read within 10 s
    body_size_limit: 1MB
    scrape_interval: 10s
    scrape_timeout: 10s
    static_configs: [{targets: ['127.0.0.1:$bport']}]
  - job_name: blimit
    metrics_path: /many
    sample_limit: 50
    static_configs: [{targets: ['127.0.0.1:$bport']}]
  - job_name: fsd
    file_sd_configs: [{files: ['$IM_TMP/sd/*.json']}]
$1
YML
}
write_cfg ""
B="https://127.0.0.1:$iport"
C=(curl -fsS -k -u admin:pw)
start_daemon() {
  "$IM_BINARY" run --promql.compat=2 --config.file="$IM_TMP/cfg.yml" --storage.tsdb.path="$IM_TMP/data" \
    --web.listen-address="127.0.0.1:$iport" --web.config.file="$IM_TMP/web.yml" \
    --web.enable-lifecycle >>"$IM_TMP/im.log" 2>&1 &
  IPID=$!
  IM_PIDS+=($IPID)
  for i in $(seq 100); do "${C[@]}" -o /dev/null "$B/-/ready" 2>/dev/null && return 0; sleep 0.1; done
  cat "$IM_TMP/im.log"; fail "daemon did not become ready"
}
start_daemon
q() { "${C[@]}" --data-urlencode "query=$1" "$B/api/v1/query" | $PY -c '
import json,sys; d=json.load(sys.stdin); r=d["data"]["result"]
print(" ".join(sorted(x["value"][1] for x in r)) if isinstance(r, list) and r and isinstance(r[0], dict) else "")'; }
wait_q() { # query expected [seconds]
  for i in $(seq $((${3:-15} * 5))); do [ "$(q "$1")" = "$2" ] && return 0; sleep 0.2; done
  fail "query $1: expected '$2', got '$(q "$1")'"
}

# unauthenticated access is refused
code=$(curl -s -k -o /dev/null -w '%{http_code}' "$B/api/v1/labels")
[ "$code" = 401 ] || fail "no auth: expected 401, got $code"

wait_q 'up{job="py"}' 1
wait_q 'up{job="node"}' 1
wait_q 'up{job="self"}' 1
for j in b404 bgarbage bslow bendless bbig blimit; do wait_q "up{job=\"$j\"}" 0 20; done
wait_q 'count(demo_requests_total{env="test",site=""})' 2
# a healthy target stays fast while the broken ones misbehave
sleep 3
d=$(q 'max_over_time(scrape_duration_seconds{job="py"}[3s])')
$PY -c "import sys; sys.exit(0 if float('$d') < 0.9 else 1)" || fail "good target slowed down: $d s"
wait_q 'up{job="py"}' 1

# lastError texts: waited for (each target's first failed scrape may still be
# under way), then checked once more with the assertions
targets_ok() {
  "${C[@]}" "$B/api/v1/targets" >"$IM_TMP/targets.json" || return 1
  $PY - "$IM_TMP/targets.json" <<'PY'
import json, sys
t = {x["scrapePool"]: x for x in json.load(open(sys.argv[1]))["data"]["activeTargets"]}
def has(job, s):
    e = t[job]["lastError"]
    if s not in e:
        print(job, "lastError:", repr(e)); sys.exit(1)
has("b404", "server returned HTTP status 404 Not Found")
has("blimit", "sample limit exceeded")
has("bbig", "body size limit exceeded")
has("bslow", "context deadline exceeded")
assert t["bgarbage"]["lastError"] != "" and t["bgarbage"]["health"] == "down"
assert t["py"]["health"] == "up" and t["py"]["lastError"] == ""
assert t["py"]["labels"] == {"env": "test", "instance": "127.0.0.1:%s" % t["py"]["scrapeUrl"].split(":")[2].split("/")[0], "job": "py"}, t["py"]["labels"]
assert t["py"]["discoveredLabels"]["__scrape_interval__"] == "1s"
PY
}
for i in $(seq 150); do targets_ok >/dev/null 2>&1 && break; sleep 0.2; done
targets_ok || fail "targets"
# nothing partial from a limited scrape
[ "$(q 'count(many_metric)')" = "" ] || fail "partial scrape stored"

# file_sd: a target appears when the file is written, changes when it changes
echo '[{"targets": ["127.0.0.1:'"$gport"'"], "labels": {"from": "sd1"}}]' >"$IM_TMP/sd/a.json"
wait_q 'up{job="fsd",from="sd1"}' 1
echo '[{"targets": ["127.0.0.1:'"$gport"'"], "labels": {"from": "sd2"}}]' >"$IM_TMP/sd/a.json"
wait_q 'up{job="fsd",from="sd2"}' 1
wait_q 'count(up{job="fsd"})' 1

# reload: an invalid file is refused and the old config kept; a valid one is applied
echo 'scrape_configs: [{job_name: x, scrape_intervall: 1s}]' >"$IM_TMP/cfg.yml"
kill -HUP "$IPID"
sleep 1.5
rt=$("${C[@]}" "$B/api/v1/status/runtimeinfo")
[[ $rt == *'"reloadConfigSuccess":false'* ]] || fail "bad reload not reported"
wait_q 'up{job="py"}' 1
grep -q 'Error reloading config' "$IM_TMP/im.log" || fail "bad reload not logged"
code=$(curl -s -k -u admin:pw -o "$IM_TMP/reload.txt" -w '%{http_code}' -X POST "$B/-/reload")
[ "$code" = 500 ] || fail "/-/reload with a bad file: expected 500, got $code"
write_cfg "  - job_name: py2
    static_configs: [{targets: ['127.0.0.1:$gport']}]"
kill -HUP "$IPID"
wait_q 'up{job="py2"}' 1
"${C[@]}" -X POST "$B/-/reload" >/dev/null || fail "/-/reload"
rt=$("${C[@]}" "$B/api/v1/status/runtimeinfo")
[[ $rt == *'"reloadConfigSuccess":true'* ]] || fail "reload status"
cfg=$("${C[@]}" "$B/api/v1/status/config")
grep -q 'job_name: py2' <<<"$cfg" || fail "status/config"
metrics=$("${C[@]}" "$B/metrics") # not piped into grep -q: an early exit would fail curl (pipefail)
grep -q '^infermon_scrapes_failed_total [1-9]' <<<"$metrics" || fail "/metrics"

# clean shutdown, data kept
before=$(date +%s)
kill -TERM "$IPID"
for i in $(seq 100); do kill -0 "$IPID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$IPID" 2>/dev/null && fail "daemon did not stop on SIGTERM"
wait "$IPID" && rc=0 || rc=$?
[ "$rc" = 0 ] || fail "exit status $rc after SIGTERM"
grep -q 'See you next time' "$IM_TMP/im.log" || fail "no clean shutdown message"
start_daemon
v=$("${C[@]}" --data-urlencode 'query=up{job="py"}' --data-urlencode "time=$((before - 1))" \
  "$B/api/v1/query" | $PY -c 'import json,sys; print(json.load(sys.stdin)["data"]["result"][0]["value"][1])')
[ "$v" = 1 ] || fail "data lost across restart: $v"
echo "run_daemon: all passed"

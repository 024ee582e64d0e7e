#!/usr/bin/env bash
# Alerts from `infermon run` reach a real Alertmanager (Debian's 0.25) started
# here behind a route prefix, TLS and basic auth (so path_prefix, scheme,
# tls_config and basic_auth are exercised): labels (rule labels, templated labels, external labels,
# alert_relabel_configs) and annotations arrive as rendered; a resolved alert
# reaches Alertmanager with endsAt in the past; an Alertmanager that is stopped
# loses nothing that fits the queue: an alert that fires while it is down
# arrives once it is back, well before the 1-minute resend would resend it.
# The alert conditions are flipped through a small metrics file the daemon scrapes.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
command -v prometheus-alertmanager >/dev/null || { echo "SKIP: prometheus-alertmanager not installed"; exit 0; }
aport=$(free_port); mport=$(free_port); iport=$(free_port)
mkdir -p "$IM_TMP/www" "$IM_TMP/am1"
printf 'toggle_a 1\ntoggle_b 0\n' >"$IM_TMP/www/metrics"
bg $PY "$IM_SOURCE_DIR/tests/lib/serve_dir.py" "$mport" --bind 127.0.0.1 --directory "$IM_TMP/www" >/dev/null 2>&1
cat >"$IM_TMP/am.yml" <<YML
route: {receiver: 'null', group_wait: 1s, group_interval: 1s}
receivers: [{name: 'null'}]
YML
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$IM_TMP/key.pem" -out "$IM_TMP/cert.pem" \
  -days 1 -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1
HASH=$($PY -c 'import crypt; print(crypt.crypt("s3cret", "$2b$05$" + "abcdefghijklmnopqrstuu"))' 2>/dev/null)
[ -n "$HASH" ] || fail "could not make a bcrypt hash"
cat >"$IM_TMP/amweb.yml" <<YML
tls_server_config: {cert_file: $IM_TMP/cert.pem, key_file: $IM_TMP/key.pem}
basic_auth_users: {infermon: '$HASH'}
YML
AM="https://127.0.0.1:$aport/am"
CURL_AM=(curl -fsS --cacert "$IM_TMP/cert.pem" -u infermon:s3cret)
start_am() {
  prometheus-alertmanager --config.file="$IM_TMP/am.yml" --web.listen-address="127.0.0.1:$aport" \
    --web.route-prefix=/am --web.config.file="$IM_TMP/amweb.yml" \
    --storage.path="$IM_TMP/am$1" --cluster.listen-address= >"$IM_TMP/am.log" 2>&1 &
  AM_PID=$!
  IM_PIDS+=($AM_PID)
  local i=0
  until "${CURL_AM[@]}" -o /dev/null "$AM/-/ready" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 300 ] || { cat "$IM_TMP/am.log"; fail "alertmanager did not start"; }
    sleep 0.1
  done
}
start_am 1
cat >"$IM_TMP/rules.yml" <<'YML'
groups:
  - name: am-test
    interval: 1s
    rules:
      - alert: ToggleA
        expr: toggle_a == 1
        labels:
          severity: page
          kind: '{{ $labels.job }}-kind'
        annotations:
          summary: 'toggle A is {{ $value }} on {{ $labels.instance }}'
      - alert: ToggleB
        expr: toggle_b == 1
        labels: {severity: ticket}
        annotations: {summary: 'B fired'}
YML
cat >"$IM_TMP/cfg.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s, external_labels: {cluster: c1, severity: overridden-not}}
rule_files: [rules.yml]
alerting:
  alert_relabel_configs:
    - target_label: relabelled
      replacement: 'yes'
  alertmanagers:
    - static_configs: [{targets: ['127.0.0.1:$aport']}]
      scheme: https
      path_prefix: /am
      tls_config: {ca_file: $IM_TMP/cert.pem}
      basic_auth: {username: infermon, password: s3cret}
      timeout: 2s
scrape_configs:
  - job_name: toggles
    static_configs: [{targets: ['127.0.0.1:$mport']}]
YML
bg "$IM_BINARY" run --promql.compat=2 --config.file="$IM_TMP/cfg.yml" --storage.memory-only \
  --web.listen-address="127.0.0.1:$iport" --log.level=warn >"$IM_TMP/infermon.log" 2>&1
wait_http "http://127.0.0.1:$iport/-/ready" 30 || { cat "$IM_TMP/infermon.log"; fail "infermon did not start"; }

am_alerts() { "${CURL_AM[@]}" "$AM/api/v2/alerts?active=true&silenced=true&inhibited=true&unprocessed=true"; }
# wait_for PYTHON-PREDICATE SECONDS: polls Alertmanager's alert list.
wait_for() {
  local pred=$1 secs=$2 i=0
  while [ $i -lt $((secs * 5)) ]; do
    if am_alerts 2>/dev/null | $PY -c "import json,sys,datetime; a=json.load(sys.stdin); sys.exit(0 if ($pred) else 1)"; then return 0; fi
    sleep 0.2; i=$((i + 1))
  done
  return 1
}
# 1. ToggleA arrives with its labels and annotations.
wait_for 'any(x["labels"].get("alertname")=="ToggleA" for x in a)' 20 || { am_alerts; cat "$IM_TMP/infermon.log"; fail "ToggleA never arrived"; }
am_alerts | $PY -c '
import json, sys
a = [x for x in json.load(sys.stdin) if x["labels"]["alertname"] == "ToggleA"][0]
want = {"alertname": "ToggleA", "severity": "page", "kind": "toggles-kind", "cluster": "c1",
        "relabelled": "yes", "job": "toggles", "instance": a["labels"].get("instance", "?")}
assert a["labels"] == want, a["labels"]
assert a["labels"]["instance"].startswith("127.0.0.1:"), a["labels"]
assert a["annotations"] == {"summary": "toggle A is 1 on " + a["labels"]["instance"]}, a["annotations"]
assert "/graph?g0.expr=toggle_a+%3D%3D+1&g0.tab=1" in a["generatorURL"], a["generatorURL"]
assert a["status"]["state"] == "active", a["status"]
' || fail "ToggleA labels/annotations wrong"
echo "ok: ToggleA delivered with the right labels and annotations"
# 2. Resolution: flip A off; Alertmanager must see endsAt in the past (gone from active).
printf 'toggle_a 0\ntoggle_b 0\n' >"$IM_TMP/www/metrics"
wait_for 'not any(x["labels"].get("alertname")=="ToggleA" and datetime.datetime.fromisoformat(x["endsAt"].replace("Z","+00:00")) > datetime.datetime.now(datetime.timezone.utc) for x in a)' 30 \
  || { am_alerts; fail "ToggleA resolution never arrived"; }
echo "ok: ToggleA resolution delivered"
# 3. Stop Alertmanager, fire B while it is down, restart: B must arrive from the queue.
kill $AM_PID; wait $AM_PID 2>/dev/null || true
printf 'toggle_a 0\ntoggle_b 1\n' >"$IM_TMP/www/metrics"
sleep 4 # B fires and its first sends fail
down_sent=$(curl -fsS "http://127.0.0.1:$iport/metrics" | awk '/^prometheus_notifications_errors_total/ {print $2}')
[ "${down_sent:-0}" != 0 ] || fail "expected failed sends while Alertmanager was down"
t0=$(date +%s)
start_am 2
wait_for 'any(x["labels"].get("alertname")=="ToggleB" for x in a)' 20 || { cat "$IM_TMP/infermon.log"; fail "ToggleB lost while Alertmanager was down"; }
t1=$(date +%s)
[ $((t1 - t0)) -lt 30 ] || fail "ToggleB arrived only after $((t1 - t0))s (resend, not the queue)"
dropped=$(curl -fsS "http://127.0.0.1:$iport/metrics" | awk '/^prometheus_notifications_dropped_total/ {print $2}')
[ "${dropped:-x}" = 0 ] || fail "alerts dropped: $dropped"
echo "ok: ToggleB delivered $((t1 - t0))s after Alertmanager came back; nothing dropped"
# 4. The API answers with the rules and alerts.
curl -fsS "http://127.0.0.1:$iport/api/v1/rules" | $PY -c '
import json, sys
d = json.load(sys.stdin)["data"]["groups"][0]
assert d["name"] == "am-test" and d["interval"] == 1, d
assert [r["name"] for r in d["rules"]] == ["ToggleA", "ToggleB"], d
assert d["rules"][1]["state"] == "firing", d["rules"][1]
' || fail "/api/v1/rules wrong"
curl -fsS "http://127.0.0.1:$iport/api/v1/alerts" | $PY -c '
import json, sys
a = json.load(sys.stdin)["data"]["alerts"]
assert [x["labels"]["alertname"] for x in a] == ["ToggleB"], a
' || fail "/api/v1/alerts wrong"
echo "ok: /api/v1/rules and /api/v1/alerts"

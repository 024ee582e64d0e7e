#!/usr/bin/env bash
# `for` state survives a restart of `infermon run` (Prometheus'
# --rules.alert.for-outage-tolerance/--for-grace-period behaviour): an alert
# pending with a 30m `for` keeps its active-since time, shifted by the downtime,
# instead of starting over; ALERTS_FOR_STATE is what it is restored from.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
port=$(free_port)
cat >"$IM_TMP/rules.yml" <<'YML'
groups:
  - name: restore
    interval: 1s
    rules:
      - alert: SlowBurn
        expr: vector(1)
        for: 30m
        labels: {severity: ticket}
YML
cat >"$IM_TMP/cfg.yml" <<YML
global: {evaluation_interval: 1s}
rule_files: [rules.yml]
scrape_configs: []
YML
start() {
  "$IM_BINARY" run --config.file="$IM_TMP/cfg.yml" --storage.tsdb.path="$IM_TMP/data" \
    --web.listen-address="127.0.0.1:$port" --log.level=warn >>"$IM_TMP/log" 2>&1 &
  PID=$!
  IM_PIDS+=($PID)
  wait_http "http://127.0.0.1:$port/-/ready" 30 || { cat "$IM_TMP/log"; fail "infermon did not start"; }
}
active_at() { # prints activeAt of SlowBurn as unix seconds, or nothing
  curl -fsS "http://127.0.0.1:$port/api/v1/alerts" | $PY -c '
import json, sys, datetime
for a in json.load(sys.stdin)["data"]["alerts"]:
    if a["labels"]["alertname"] == "SlowBurn":
        print(datetime.datetime.fromisoformat(a["activeAt"].replace("Z", "+00:00")).timestamp())'
}
start
a1=""
for _ in $(seq 50); do a1=$(active_at); [ -n "$a1" ] && break; sleep 0.2; done
[ -n "$a1" ] || fail "SlowBurn never became pending"
sleep 6
kill -TERM $PID; wait $PID 2>/dev/null || true
sleep 2
t_restart=$(date +%s)
start
a2=""
for _ in $(seq 50); do
  a2=$(active_at)
  # the first evaluation after start creates the alert, the restore follows it
  [ -n "$a2" ] && $PY -c "import sys; sys.exit(0 if $a2 < $t_restart else 1)" && break
  sleep 0.2
done
[ -n "$a2" ] || fail "SlowBurn missing after restart"
$PY -c "
a1, a2, tr = $a1, $a2, $t_restart
assert a2 < tr, 'activeAt %s not restored (restart at %s)' % (a2, tr)
assert a1 <= a2 <= a1 + 10, 'activeAt %s should be %s shifted by the short downtime' % (a2, a1)
" || fail "for state not restored"
echo "ok: activeAt $a1 restored as $a2 after a restart at $t_restart"

#!/usr/bin/env bash
# The rule/notification flags of `infermon run` (Prometheus' names): accepted,
# validated with a message naming the flag, and shown in /api/v1/status/flags.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
for bad in "--rules.alert.resend-delay=5" "--rules.alert.for-grace-period=-1m" \
  "--rules.alert.for-outage-tolerance=x" "--alertmanager.notification-queue-capacity=0"; do
  set +e
  out=$("$IM_BINARY" run --storage.memory-only "$bad" 2>&1)
  rc=$?
  set -e
  [ $rc = 2 ] || fail "$bad: exit $rc, want 2"
  flag=${bad%%=*}
  grep -q -- "$flag" <<<"$out" || fail "$bad: message does not name the flag: $out"
done
port=$(free_port)
cat >"$IM_TMP/cfg.yml" <<'YML'
global: {scrape_interval: 15s, evaluation_interval: 1s}
scrape_configs: []
YML
bg "$IM_BINARY" run --config.file "$IM_TMP/cfg.yml" --storage.memory-only \
  --web.listen-address "127.0.0.1:$port" --web.external-url http://infermon.example:9470/ \
  --rules.alert.for-outage-tolerance 2h --rules.alert.for-grace-period 5m \
  --rules.alert.resend-delay 30s --alertmanager.notification-queue-capacity 500 \
  >"$IM_TMP/run.log" 2>&1
wait_http "http://127.0.0.1:$port/-/ready" 30
flags=$(curl -fsS "http://127.0.0.1:$port/api/v1/status/flags")
for kv in '"web.external-url":"http://infermon.example:9470/"' '"rules.alert.for-outage-tolerance":"2h"' \
  '"rules.alert.for-grace-period":"5m"' '"rules.alert.resend-delay":"30s"' \
  '"alertmanager.notification-queue-capacity":"500"'; do
  grep -qF "$kv" <<<"$flags" || fail "status/flags lacks $kv: $flags"
done
grep -q 'external_url=http://infermon.example:9470/' "$IM_TMP/run.log" || fail "external URL not used: $(cat "$IM_TMP/run.log")"
echo "rule flags: validated and applied"

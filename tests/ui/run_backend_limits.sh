#!/usr/bin/env bash
# Requests relayed to a query backend (--query.backend-url) obey
# --query.max-concurrency as local evaluations do: past the limit they queue,
# and one that cannot get a slot within --query.timeout gets the local engine's
# answer (503, errorType timeout, "query timed out in query queue") without
# reaching the backend; a client that hangs up cancels its backend request
# (the store sees the connection close), which frees its slot.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
fport=$(free_port); port=$(free_port)
bg $PY "$IM_SOURCE_DIR/tests/ui/fake_backend.py" "$fport"
echo 'global: {scrape_interval: 1s}' >"$IM_TMP/backend.yml"
bg "$IM_BINARY" run --config.file "$IM_TMP/backend.yml" --query.backend-url "http://127.0.0.1:$fport/hang" \
  --query.backend-timeout 60s --query.max-concurrency 2 --query.timeout 3s \
  --web.listen-address "127.0.0.1:$port" >"$IM_TMP/im.log" 2>&1
wait_http "http://127.0.0.1:$port/-/ready" 30 || fail "infermon not ready"
wait_http "http://127.0.0.1:$fport/-/state" 30 || fail "fake backend not ready"
state() { curl -fsS "http://127.0.0.1:$fport/-/state" | $PY -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
wait_state() { # key value seconds
  local i=0
  until [ "$(state "$1")" = "$2" ]; do
    i=$((i + 1)); [ $i -lt $(($3 * 20)) ] || fail "backend $1 is $(state "$1"), want $2"
    sleep 0.05
  done
}
# two requests hold both slots (one GET query, one series: every relayed request counts)
curl -sS -o /dev/null "http://127.0.0.1:$port/api/v1/query?query=up" & c1=$!
curl -sS -o /dev/null "http://127.0.0.1:$port/api/v1/series?match[]=up" & c2=$!
wait_state inflight 2 30
# a third queues, and past --query.timeout gets the local engine's answer
code=$(curl -sS -o "$IM_TMP/third.json" -w '%{http_code}' "http://127.0.0.1:$port/api/v1/query?query=up")
$PY - "$code" "$IM_TMP/third.json" <<'PY' || fail "queued request: $code $(cat "$IM_TMP/third.json")"
import json, sys
b = json.load(open(sys.argv[2]))
want = {"status": "error", "errorType": "timeout", "error": "query timed out in query queue"}
sys.exit(0 if sys.argv[1] == "503" and b == want else "got %s %s, want 503 %s" % (sys.argv[1], b, want))
PY
[ "$(state requests)" = 2 ] || fail "the queued request reached the backend: $(state requests) requests"
curl -fsS "http://127.0.0.1:$port/metrics" >"$IM_TMP/metrics.txt"
grep -q '^infermon_engine_queries_concurrent_max 2$' "$IM_TMP/metrics.txt" ||
  fail "max concurrency not reported"
# the clients hang up: both backend requests are canceled, the slots free
kill "$c1" "$c2"; wait "$c1" "$c2" 2>/dev/null || true
wait_state gone 2 10
wait_state inflight 0 5
code=$(curl -sS -o "$IM_TMP/after.json" -w '%{http_code}' "http://127.0.0.1:$port/api/v1/query?query=quick")
[ "$code" = 200 ] || fail "after the cancellations: $code $(cat "$IM_TMP/after.json")"
grep -q 'Client went away: canceling its query' "$IM_TMP/im.log" || fail "no cancellation logged"
echo "backend limits: queue timeout as the local engine's, hang-ups cancel the backend requests"

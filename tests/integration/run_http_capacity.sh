#!/usr/bin/env bash
# HTTP request lifecycle and query admission of `infermon run` (basic auth with a
# bcrypt hash, remote write on, --query.max-concurrency=4): authentication before
# the body, body caps by Content-Length, /-/ready and remote write beside heavy
# queries, the query queue and its timeout, cancellation when the client hangs
# up, count_values bounded by --query.max-samples. The checks are in
# http_capacity.py; this starts the daemon and stops it.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
port=$(free_port)
HASH=$($PY -c 'import crypt; print(crypt.crypt("pw", "$2b$05$" + "abcdefghijklmnopqrstuu"))' 2>/dev/null)
[ -n "$HASH" ] || fail "could not make a bcrypt hash"
cat >"$IM_TMP/web.yml" <<YML
basic_auth_users:
  admin: '$HASH'
YML
echo 'scrape_configs: []' >"$IM_TMP/cfg.yml"
"$IM_BINARY" run --config.file="$IM_TMP/cfg.yml" --storage.memory-only \
  --web.listen-address="127.0.0.1:$port" --web.config.file="$IM_TMP/web.yml" \
  --web.enable-remote-write-receiver --query.max-concurrency=4 \
  --query.max-samples=5000000 >"$IM_TMP/im.log" 2>&1 &
pid=$!
IM_PIDS+=($pid)
for i in $(seq 300); do
  code=$(curl -s -o /dev/null -w '%{http_code}' -u admin:pw "http://127.0.0.1:$port/-/ready" || true)
  [ "$code" = 200 ] && break
  kill -0 $pid 2>/dev/null || { cat "$IM_TMP/im.log"; fail "daemon exited"; }
  sleep 0.1
done
[ "$code" = 200 ] || fail "daemon not ready"
$PY "$IM_SOURCE_DIR/tests/integration/http_capacity.py" "$port" "$pid" admin pw ||
  { tail -20 "$IM_TMP/im.log"; fail "http capacity checks"; }
grep -q 'Client went away: canceling its query' "$IM_TMP/im.log" || fail "no client-gone log line"
kill -TERM $pid
wait $pid || fail "daemon exit status $?"
echo "run_http_capacity: ok"

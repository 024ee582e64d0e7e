# lib.sh — for tests/export: a simulated fleet (`infermon simulate`) scraped by
# an infermon daemon every second (file_sd from the simulator's /targets).
source "$IM_SOURCE_DIR/tests/lib/common.sh"
B=$IM_BINARY
X=$IM_SOURCE_DIR/tests/export
pass=0
nfail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
finish() {
  echo "$pass passed, $nfail failed"
  [ "$nfail" -eq 0 ]
}

# start_fleet NAME SIM-ARGS...: simulator on a free port (URL in $SIM), daemon
# scraping it (URL in $IMU).
start_fleet() {
  local name=$1; shift
  local sp ip
  sp=$(free_port)
  bg "$B" simulate --listen "127.0.0.1:$sp" --speed 10 "$@"
  SIM=http://127.0.0.1:$sp
  wait_http "$SIM/targets" 30
  # labelled histograms appear with the first observation
  local deadline=$((SECONDS + 30))
  until curl -fsS "$SIM/pods/0/metrics" | grep -q 'inter_token_latency_seconds_bucket'; do
    [ $SECONDS -lt $deadline ] || fail "$name: no inter-token latency histogram in 30 s"
    sleep 0.2
  done
  curl -fsS "$SIM/targets" >"$IM_TMP/$name-targets.json"
  cat >"$IM_TMP/$name.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: sim
    file_sd_configs: [{files: ["$IM_TMP/$name-targets.json"]}]
${FLEET_EXTRA_CONFIG:-}
YML
  ip=$(free_port)
  bg "$B" run --config.file "$IM_TMP/$name.yml" --storage.memory-only \
    --web.listen-address "127.0.0.1:$ip" >"$IM_TMP/$name-run.log" 2>&1
  IMU=http://127.0.0.1:$ip
  wait_http "$IMU/-/ready" 30
}

# wait_query URL EXPR SECONDS: until EXPR returns a non-empty result.
wait_query() {
  local deadline=$((SECONDS + $3))
  until curl -fsS "$1/api/v1/query" --data-urlencode "query=$2" | grep -q '"result":\[{'; do
    [ $SECONDS -lt $deadline ] || { echo "timeout waiting for $2" >&2; return 1; }
    sleep 0.3
  done
}

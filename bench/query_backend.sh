#!/usr/bin/env bash
# query_backend.sh — the dashboard's first render over the local store, over
# Prometheus and over VictoriaMetrics (infermon run --query.backend-url), for a
# 100-pod simulated fleet that all three scrape, in the same run, interleaved
# (ROUNDS rounds of local, Prometheus, VictoriaMetrics). By hand, not in ctest:
#
#   bash bench/query_backend.sh build/release/infermon [PODS] [ROUNDS]
#
# Prints each render and the medians; headless Chromium as tests/ui.
set -euo pipefail
BIN=$(realpath "${1:?usage: query_backend.sh INFERMON [PODS] [ROUNDS]}")
PODS=${2:-100}
ROUNDS=${3:-5}
SRC=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ready() { for _ in $(seq 600); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.1; done; echo "not ready: $1" >&2; exit 1; }
sp=$(port); pp=$(port); vp=$(port); lp=$(port); ip=$(port); iv=$(port)
"$BIN" simulate --listen "127.0.0.1:$sp" --pods "$PODS" >"$TMP/sim.log" 2>&1 & PIDS+=($!)
ready "http://127.0.0.1:$sp/targets"
curl -fsS "http://127.0.0.1:$sp/targets" >"$TMP/targets.json"
cat >"$TMP/scrape.yml" <<YML
global: {scrape_interval: 5s, scrape_timeout: 5s}
scrape_configs:
  - job_name: fleet
    file_sd_configs: [{files: ['$TMP/targets.json']}]
YML
echo 'global: {scrape_interval: 5s}' >"$TMP/backend.yml"
prometheus --config.file="$TMP/scrape.yml" --storage.tsdb.path="$TMP/pdata" \
  --web.listen-address="127.0.0.1:$pp" >"$TMP/prom.log" 2>&1 & PIDS+=($!)
victoria-metrics -httpListenAddr="127.0.0.1:$vp" -storageDataPath="$TMP/vdata" \
  -promscrape.config="$TMP/scrape.yml" -search.latencyOffset=0s >"$TMP/vm.log" 2>&1 & PIDS+=($!)
"$BIN" run --config.file "$TMP/scrape.yml" --storage.memory-only \
  --web.listen-address "127.0.0.1:$lp" >"$TMP/local.log" 2>&1 & PIDS+=($!)
"$BIN" run --config.file "$TMP/backend.yml" --query.backend-url "http://127.0.0.1:$pp" \
  --web.listen-address "127.0.0.1:$ip" >"$TMP/ip.log" 2>&1 & PIDS+=($!)
"$BIN" run --config.file "$TMP/backend.yml" --query.backend-url "http://127.0.0.1:$vp" \
  --web.listen-address "127.0.0.1:$iv" >"$TMP/iv.log" 2>&1 & PIDS+=($!)
for u in "$pp/-/ready" "$vp/health" "$lp/-/ready" "$ip/-/ready" "$iv/-/ready"; do ready "http://127.0.0.1:$u"; done
echo "waiting 90 s for data (load: $(cut -d' ' -f1-3 /proc/loadavg))"
sleep 90
series=$(curl -fsS "http://127.0.0.1:$lp/api/v1/query?query=count(%7B__name__%3D~%22.%2B%22%7D)" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["result"][0]["value"][1])')
echo "fleet: $PODS pods, $series series in the local store"
for r in $(seq "$ROUNDS"); do
  to=$(($(date +%s) - 5)); from=$((to - 80))
  IM_SOURCE_DIR=$SRC node "$SRC/tests/ui/backend_test.mjs" "#/overview?from=$from&to=$to" "$TMP/shots" \
    local="http://127.0.0.1:$lp" prometheus="http://127.0.0.1:$ip" victoriametrics="http://127.0.0.1:$iv" |
    grep -E '^(metric|FAIL|error)' || true
done | tee "$TMP/metrics.txt"
python3 - "$TMP/metrics.txt" <<'PY'
import re, statistics, sys
v = {}
for line in open(sys.argv[1]):
    m = re.match(r"metric (\w+)_first_render_ms=(\d+)", line)
    if m: v.setdefault(m.group(1), []).append(int(m.group(2)))
loc = statistics.median(v.get("local", [0])) or 1
for k, xs in v.items():
    med = statistics.median(xs)
    print("%-16s median %5.0f ms  (%s)  x%.2f of local" % (k, med, " ".join(map(str, xs)), med / loc))
PY
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

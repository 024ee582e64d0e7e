#!/usr/bin/env bash
# query_backend.sh — the dashboard's first render over the local store, over
# Prometheus and over VictoriaMetrics (infermon run --query.backend-url), for a
# 100-pod simulated fleet, in the same run, interleaved (ROUNDS rounds of local,
# Prometheus, VictoriaMetrics). By hand, not in ctest:
#
#   bash bench/query_backend.sh build/release/infermon [PODS] [ROUNDS]
#
# Default: the fleet's last HISTORY (10m) at a 5 s step, written by
# `infermon simulate --history`, loaded into all three stores (infermon tsdb import,
# promtool tsdb create-blocks-from openmetrics, VictoriaMetrics' import + flush),
# which then only answer queries: the overview of the history's last 5 minutes is
# rendered over each. MODE=live instead has all three scrape the running simulator
# and renders the last 80 s (the stores ingest beside the renders: on a shared
# machine that measures CPU contention as much as queries).
# VictoriaMetrics runs with -search.disableCache (every round a first render).
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
MODE=${MODE:-history}
HISTORY=${HISTORY:-10m}
sp=$(port); pp=$(port); vp=$(port); lp=$(port); ip=$(port); iv=$(port)
echo 'global: {scrape_interval: 5s}' >"$TMP/backend.yml"
echo "== bench/query_backend.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, mode $MODE, load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$MODE" = live ]; then
  "$BIN" simulate --listen "127.0.0.1:$sp" --pods "$PODS" >"$TMP/sim.log" 2>&1 & PIDS+=($!)
  ready "http://127.0.0.1:$sp/targets"
  curl -fsS "http://127.0.0.1:$sp/targets" >"$TMP/targets.json"
  cat >"$TMP/scrape.yml" <<YML
global: {scrape_interval: 5s, scrape_timeout: 5s}
scrape_configs:
  - job_name: fleet
    file_sd_configs: [{files: ['$TMP/targets.json']}]
YML
  prometheus --config.file="$TMP/scrape.yml" --storage.tsdb.path="$TMP/pdata" \
    --web.listen-address="127.0.0.1:$pp" >"$TMP/prom.log" 2>&1 & PIDS+=($!)
  victoria-metrics -httpListenAddr="127.0.0.1:$vp" -storageDataPath="$TMP/vdata" -search.disableCache \
    -promscrape.config="$TMP/scrape.yml" -search.latencyOffset=0s >"$TMP/vm.log" 2>&1 & PIDS+=($!)
  "$BIN" run --config.file "$TMP/scrape.yml" --storage.memory-only \
    --web.listen-address "127.0.0.1:$lp" >"$TMP/local.log" 2>&1 & PIDS+=($!)
else
  # the history ends on a whole minute at least a minute ago (samples on whole seconds)
  hend=$(( ($(date +%s) - 60) / 60 * 60 ))
  t0=$(date +%s)
  "$BIN" simulate --pods "$PODS" --history "$HISTORY" --step 5s --end "$hend" --out "$TMP/past.om" 2>"$TMP/past.log"
  echo "history: $HISTORY at 5 s, $(du -m "$TMP/past.om" | cut -f1) MB of OpenMetrics in $(($(date +%s) - t0)) s"
  t0=$(date +%s); "$BIN" tsdb import "$TMP/past.om" "$TMP/ldata" >"$TMP/import.log" 2>&1
  echo "infermon tsdb import: $(($(date +%s) - t0)) s"
  t0=$(date +%s); promtool tsdb create-blocks-from openmetrics "$TMP/past.om" "$TMP/pdata" >"$TMP/promtool.log" 2>&1
  echo "promtool backfill: $(($(date +%s) - t0)) s"
  grep -v '^#' "$TMP/past.om" | sed -E 's/ ([0-9]+)$/ \1000/' >"$TMP/past.prom"
  rm -f "$TMP/past.om"
  echo 'scrape_configs: []' >"$TMP/none.yml"
  prometheus --config.file="$TMP/none.yml" --storage.tsdb.path="$TMP/pdata" \
    --web.listen-address="127.0.0.1:$pp" >"$TMP/prom.log" 2>&1 & PIDS+=($!)
  victoria-metrics -httpListenAddr="127.0.0.1:$vp" -storageDataPath="$TMP/vdata" -search.disableCache \
    -search.latencyOffset=0s -retentionPeriod=100y >"$TMP/vm.log" 2>&1 & PIDS+=($!)
  "$BIN" run --config.file "$TMP/backend.yml" --storage.tsdb.path "$TMP/ldata" \
    --web.listen-address "127.0.0.1:$lp" >"$TMP/local.log" 2>&1 & PIDS+=($!)
  ready "http://127.0.0.1:$vp/health"
  t0=$(date +%s)
  curl -fsS -T "$TMP/past.prom" "http://127.0.0.1:$vp/api/v1/import/prometheus"
  curl -fsS "http://127.0.0.1:$vp/internal/force_flush" >/dev/null
  echo "VictoriaMetrics import + flush: $(($(date +%s) - t0)) s"
  rm -f "$TMP/past.prom"
fi
"$BIN" run --config.file "$TMP/backend.yml" --query.backend-url "http://127.0.0.1:$pp" \
  --web.listen-address "127.0.0.1:$ip" >"$TMP/ip.log" 2>&1 & PIDS+=($!)
"$BIN" run --config.file "$TMP/backend.yml" --query.backend-url "http://127.0.0.1:$vp" \
  --web.listen-address "127.0.0.1:$iv" >"$TMP/iv.log" 2>&1 & PIDS+=($!)
for u in "$pp/-/ready" "$vp/health" "$lp/-/ready" "$ip/-/ready" "$iv/-/ready"; do ready "http://127.0.0.1:$u"; done
if [ "$MODE" = live ]; then
  echo "waiting 90 s for data (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  sleep 90
  qt=$(date +%s)
else
  qt=$hend
  # VictoriaMetrics makes flushed rows searchable within a few seconds
  for _ in $(seq 300); do
    curl -fsS "http://127.0.0.1:$vp/api/v1/query?query=count(up)&time=$hend" | grep -q '"result":\[{' && break
    sleep 0.2
  done
fi
series=$(curl -fsS "http://127.0.0.1:$lp/api/v1/query?query=count(%7B__name__%3D~%22.%2B%22%7D)&time=$qt" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["result"][0]["value"][1])')
echo "fleet: $PODS pods, $series series in the local store (load: $(cut -d' ' -f1-3 /proc/loadavg))"
for r in $(seq "$ROUNDS"); do
  if [ "$MODE" = live ]; then to=$(($(date +%s) - 5)); from=$((to - 80)); else to=$hend; from=$((hend - 300)); fi
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

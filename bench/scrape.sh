#!/usr/bin/env bash
# Scrape/ingest benchmark: the same simulated fleet (bench/scrape_fleet.py: vLLM-
# and dcgm-shaped series with moving values) scraped in turn by infermon,
# Prometheus 2.42 and VictoriaMetrics 1.79 for the same period. For each: CPU
# seconds per million samples ingested (process CPU during the run / samples the
# system itself reports having scraped), peak RSS, and RSS per active series
# (RSS after the run minus RSS before the targets were added, over the series).
# usage: bench/scrape.sh [TARGETS] [SERIES_PER_TARGET] [SECONDS]   (env IM_BINARY)
set -euo pipefail
T=${1:-20}; S=${2:-1000}; D=${3:-40}
HERE=$(cd "$(dirname "$0")" && pwd)
IM_BINARY=${IM_BINARY:-$HERE/../build/release/infermon}
PY=/usr/bin/python3
TMP=$(mktemp -d); PIDS=()
cleanup() { for p in "${PIDS[@]:-}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
fport=$(port)
$PY "$HERE/scrape_fleet.py" "$fport" "$T" "$S" & PIDS+=($!)
for i in $(seq 100); do curl -fs -o /dev/null "http://127.0.0.1:$fport/t0" && break; sleep 0.2; done
targets=$(for t in $(seq 0 $((T - 1))); do printf "'127.0.0.1:%s', " "$fport"; done)
cfg() { # $1 = with targets (1/0)
  echo "global: {scrape_interval: 1s, scrape_timeout: 1s}"
  echo "scrape_configs:"
  if [ "$1" = 1 ]; then
    for t in $(seq 0 $((T - 1))); do
      echo "  - job_name: t$t"
      echo "    metrics_path: /t$t"
      echo "    static_configs: [{targets: ['127.0.0.1:$fport']}]"
    done
  else
    echo "  []"
  fi
}
cpu_s() { awk '{print ($14 + $15) / 100}' "/proc/$1/stat"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }
q() { curl -fsS --data-urlencode "query=$2" "$1/api/v1/query" | $PY -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)'; }

run_one() { # name start-cmd... ; uses $CFG, $URL
  local name=$1; shift
  cfg 0 >"$TMP/cfg.yml"
  "$@" >"$TMP/$name.log" 2>&1 & local pid=$!; PIDS+=($pid)
  for i in $(seq 300); do curl -fs -o /dev/null "$URL/-/ready" 2>/dev/null && break; curl -fs -o /dev/null "$URL/health" 2>/dev/null && break; sleep 0.2; done
  sleep 3
  local rss0 c0 c1 rss1 hwm samples series
  rss0=$(rss_kb $pid)
  cfg 1 >"$TMP/cfg.yml"
  kill -HUP $pid
  sleep 3 # let the first scrapes create the series
  c0=$(cpu_s $pid); local t0; t0=$(date +%s)
  sleep "$D"
  c1=$(cpu_s $pid); local t1; t1=$(date +%s)
  rss1=$(rss_kb $pid); hwm=$(hwm_kb $pid)
  samples=$(q "$URL" "sum(sum_over_time(scrape_samples_scraped[$((t1 - t0))s]))")
  series=$(q "$URL" "sum(scrape_samples_scraped)")
  kill $pid; wait $pid 2>/dev/null || true
  $PY - "$name" "$c0" "$c1" "$samples" "$rss0" "$rss1" "$hwm" "$series" <<'PY'
import sys
n, c0, c1, smp, r0, r1, hwm, ser = sys.argv[1], *map(float, sys.argv[2:])
cpu = c1 - c0
print("%-16s cpu=%6.2fs samples=%9d  cpu_s_per_M=%6.2f  rss=%7.1fMB peak=%7.1fMB  rss_per_series=%6.0fB  series=%d"
      % (n, cpu, smp, cpu / (smp / 1e6) if smp else float("nan"), r1 / 1024, hwm / 1024,
         (r1 - r0) * 1024 / ser if ser else float("nan"), ser))
PY
}
echo "fleet: $T targets x $S series, 1s interval, ${D}s measured per system"
p=$(port); URL="http://127.0.0.1:$p"
run_one infermon "$IM_BINARY" run --config.file="$TMP/cfg.yml" --storage.tsdb.path="$TMP/im" \
  --web.listen-address="127.0.0.1:$p"
p=$(port); URL="http://127.0.0.1:$p"
run_one prometheus prometheus --config.file="$TMP/cfg.yml" --storage.tsdb.path="$TMP/prom" \
  --web.listen-address="127.0.0.1:$p"
p=$(port); URL="http://127.0.0.1:$p"
run_one victoriametrics victoria-metrics -promscrape.config="$TMP/cfg.yml" -storageDataPath="$TMP/vm" \
  -httpListenAddr="127.0.0.1:$p" -promscrape.config.strictParse=false -search.latencyOffset=0s

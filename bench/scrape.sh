#!/usr/bin/env bash
# Scrape/ingest benchmark (docs/performance.md, section "Scraping").
#
# A simulated fleet from `infermon simulate --pods P` (vLLM pods, one
# dcgm-exporter per 8 GPUs, Kueue; values evolve every second; all targets on one
# port under /pods/<i>/metrics, /nodes/<j>/metrics, /kueue/metrics) is scraped in
# turn by infermon, Prometheus 2.42 and VictoriaMetrics 1.79 with the same
# file_sd targets (the simulator's /targets JSON), the same interval and the same
# measured window. For each system:
#   - CPU seconds per million samples: utime+stime from /proc/<pid>/stat over the
#     window / samples appended over the window by the system's own counter
#     (infermon_tsdb_samples_appended_total, prometheus_tsdb_head_samples_appended_total,
#     vm_rows_inserted_total{type="promscrape"});
#   - peak RSS (VmHWM) and marginal RSS per active series: (VmRSS after the window
#     - VmRSS of the idle process before any target) / sum(scrape_samples_scraped);
#   - scrape punctuality from the raw `up` timestamps (scrape_query.py lag);
#   - API latency of the DOMAIN.md queries afterwards (scrape_query.py latency:
#     median of N, /api/v1/query at the end, /api/v1/query_range over the window);
#   - the simulator's own CPU over the window (it must not be the bottleneck).
# Then the ratios infermon/Prometheus and infermon/VictoriaMetrics.
#
# usage: bench/scrape.sh [PODS [SECONDS [INTERVAL]]]      default 120 pods (136 targets), 60 s, 1 s
#        bench/scrape.sh --scale [PODS [SECONDS]]          infermon alone, default 2000 pods
#                                                          (2,251 targets, ~0.94 M series), 15 s, 120 s
# env: IM_BUILD_DIR (default build/release), SCRAPE_SYSTEMS (default
#      "infermon prometheus victoriametrics"; --scale: "infermon"), SCRAPE_QUERY_N (5)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${IM_SOURCE_DIR:-$HERE/..}
B=${IM_BUILD_DIR:-$SRC/build/release}
BIN=${IM_BINARY:-$B/infermon}
PY=/usr/bin/python3
QPY="$PY $HERE/scrape_query.py"
SCALE=0
if [ "${1:-}" = --scale ]; then SCALE=1; shift; fi
if [ $SCALE = 1 ]; then
  PODS=${1:-2000}; D=${2:-120}; IV=${3:-15}; WARM=$((2 * IV + 10))
  SYSTEMS=${SCRAPE_SYSTEMS:-infermon}
else
  PODS=${1:-120}; D=${2:-60}; IV=${3:-1}; WARM=5
  SYSTEMS=${SCRAPE_SYSTEMS:-infermon prometheus victoriametrics}
fi
QN=${SCRAPE_QUERY_N:-5}
TO=$IV; [ "$TO" -gt 10 ] && TO=10

TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do
    if [ -n "$p" ]; then kill "$p" 2>/dev/null || true; fi
  done
  wait 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT
port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f\n", ($14 + $15) / hz}' "/proc/$1/stat"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }
counter() { # URL metric [label-filter]: sum of the metric's lines in /metrics
  curl -fsS "$1/metrics" | awk -v m="$2" -v f="${3:-}" '
    index($0, m) == 1 && (substr($0, length(m) + 1, 1) == " " || substr($0, length(m) + 1, 1) == "{") \
      && (f == "" || index($0, f) > 0) { s += $NF } END { printf "%.0f\n", s }'
}

# ---- the fleet ----
"$BIN" simulate --pods "$PODS" --listen 127.0.0.1:0 >"$TMP/sim.out" 2>&1 &
SIM=$!
PIDS+=("$SIM")
for _ in $(seq 200); do grep -q 'listening on' "$TMP/sim.out" && break; sleep 0.1; done
sport=$(grep -o 'listening on [0-9.]*:[0-9]*' "$TMP/sim.out" | sed 's/.*://')
curl -fsS "http://127.0.0.1:$sport/targets" >"$TMP/targets.json"
NT=$($PY -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$TMP/targets.json")
NS=$($PY - "$TMP/targets.json" <<'PY'
import json, sys, urllib.request
n = 0
for g in json.load(open(sys.argv[1])):
    u = "http://%s%s" % (g["targets"][0], g["labels"]["__metrics_path__"])
    n += sum(1 for l in urllib.request.urlopen(u).read().decode().splitlines() if l and l[0] != "#")
print(n)
PY
)
cfg() { # $1 = 1: with the fleet's targets; 0: none
  echo "global: {scrape_interval: ${IV}s, scrape_timeout: ${TO}s, evaluation_interval: 1m}"
  if [ "$1" = 1 ]; then
    echo "scrape_configs:"
    echo "  - job_name: fleet"
    echo "    file_sd_configs: [{files: ['$TMP/targets.json']}]"
  else
    echo "scrape_configs: []"
  fi
}

echo "== bench/scrape.sh$([ $SCALE = 1 ] && echo ' --scale'): $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "fleet: infermon simulate --pods $PODS: $NT targets, $NS series (exposed lines), ${IV}s interval, ${D}s measured per system after ${WARM}s warm-up"
: >"$TMP/results"

run_one() { # name url start-cmd...
  local name=$1 url=$2
  shift 2
  cfg 0 >"$TMP/cfg.yml"
  "$@" >"$TMP/$name.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  for _ in $(seq 600); do
    curl -fs -o /dev/null "$url/-/ready" 2>/dev/null && break
    curl -fs -o /dev/null "$url/health" 2>/dev/null && break
    kill -0 $pid 2>/dev/null || { cat "$TMP/$name.log"; echo "$name exited"; return 1; }
    sleep 0.2
  done
  sleep 3
  local rss0 c0 c1 s0 s1 sc0 sc1 t0 t1 rss1 hwm series metric filter vm=0
  case $name in
    infermon) metric=infermon_tsdb_samples_appended_total; filter= ;;
    prometheus) metric=prometheus_tsdb_head_samples_appended_total; filter= ;;
    victoriametrics) metric=vm_rows_inserted_total; filter='type="promscrape"'; vm=1 ;;
  esac
  rss0=$(rss_kb $pid)
  cfg 1 >"$TMP/cfg.yml"
  kill -HUP $pid
  sleep "$WARM" # the first scrapes create the series
  t0=$(date +%s); c0=$(cpu_s $pid); sc0=$(cpu_s $SIM); s0=$(counter "$url" $metric "$filter")
  sleep "$D"
  t1=$(date +%s); c1=$(cpu_s $pid); sc1=$(cpu_s $SIM); s1=$(counter "$url" $metric "$filter")
  rss1=$(rss_kb $pid); hwm=$(hwm_kb $pid)
  [ $vm = 1 ] && sleep 2 # VictoriaMetrics makes fresh rows searchable after ~1 s
  series=$($QPY value "$url" 'sum(scrape_samples_scraped)' "$t1")
  local up; up=$($QPY value "$url" 'count(up == 1)' "$t1")
  local lagline; lagline=$($QPY lag "$url" "$t1" "$D" "$IV")
  local lat; lat=$($QPY latency "$url" "$t0" "$t1" "$IV" "$QN" $vm)
  echo "-- $name: $(printf '%s\n' "$lat" | tail -1 | awk '{printf "DOMAIN queries (median of '"$QN"', sum over %d queries): instant %.1f ms, range %.1f ms", 12, $2, $3}')"
  printf '%s\n' "$lat" | sed '$d'
  echo "   $lagline (up targets $up)"
  echo "   simulator CPU over the window: $(awk -v a="$sc0" -v b="$sc1" -v d="$D" 'BEGIN{printf "%.2f s = %.1f%% of one core", b - a, (b - a) / d * 100}')"
  echo "$name $c0 $c1 $s0 $s1 $rss0 $rss1 $hwm $series $(printf '%s\n' "$lat" | tail -1 | cut -d' ' -f2-3) $(echo "$lagline" | tr ' ' '\n' | grep -E '^(p50_ms|p99_ms|missed)=' | cut -d= -f2 | tr '\n' ' ')$sc0 $sc1 $D" >>"$TMP/results"
  kill $pid
  wait $pid 2>/dev/null || true
}

for s in $SYSTEMS; do
  p=$(port)
  u="http://127.0.0.1:$p"
  case $s in
    infermon)
      run_one infermon "$u" "$BIN" run --config.file="$TMP/cfg.yml" --storage.tsdb.path="$TMP/im" \
        --web.listen-address="127.0.0.1:$p" --log.level=warn ;;
    prometheus)
      run_one prometheus "$u" prometheus --config.file="$TMP/cfg.yml" --storage.tsdb.path="$TMP/prom" \
        --web.listen-address="127.0.0.1:$p" --log.level=warn ;;
    victoriametrics)
      run_one victoriametrics "$u" victoria-metrics -promscrape.config="$TMP/cfg.yml" \
        -storageDataPath="$TMP/vm" -httpListenAddr="127.0.0.1:$p" -promscrape.config.strictParse=false \
        -search.latencyOffset=0s -loggerLevel=WARN ;;
  esac
done

$PY - "$TMP/results" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    n = f[0]
    c0, c1, s0, s1, r0, r1, hwm, ser, qi, qr, l50, l99, miss, sc0, sc1, d = map(float, f[1:])
    cpu, smp = c1 - c0, s1 - s0
    rows[n] = dict(cpu=cpu, smp=smp, cpm=cpu / (smp / 1e6) if smp else float("nan"),
                   rss=r1 / 1024, hwm=hwm / 1024, per=(r1 - r0) * 1024 / ser if ser else float("nan"),
                   ser=ser, qi=qi, qr=qr, l50=l50, l99=l99, miss=miss, sim=(sc1 - sc0) / d * 100)
print()
print("| system | CPU s | samples | CPU s / M samples | RSS MB | peak RSS MB | series | RSS / series | instant ms | range ms | lag p50/p99 ms | missed | sim CPU |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for n, r in rows.items():
    print("| %s | %.2f | %d | %.2f | %.1f | %.1f | %d | %.0f B | %.1f | %.1f | %d / %d | %d | %.1f %% |"
          % (n, r["cpu"], r["smp"], r["cpm"], r["rss"], r["hwm"], r["ser"], r["per"], r["qi"],
             r["qr"], r["l50"], r["l99"], r["miss"], r["sim"]))
im = rows.get("infermon")
for peer in ("prometheus", "victoriametrics"):
    p = rows.get(peer)
    if not im or not p:
        continue
    print("| **infermon / %s** | | | **%.2f×** | %.2f× | %.2f× | | **%.2f×** | %.2f× | %.2f× | | | |"
          % (peer, im["cpm"] / p["cpm"], im["rss"] / p["rss"], im["hwm"] / p["hwm"],
             im["per"] / p["per"], im["qi"] / p["qi"], im["qr"] / p["qr"]))
PY

#!/usr/bin/env bash
# Simulator benchmarks (docs/performance.md, section "Simulator"):
#  1. bench_sim: model + render + gzip for 1,000 pods per 15 s scrape interval,
#     and --history samples/s, each with a baseline (memcpy / fwrite of the same
#     bytes) measured in the same run.
#  2. End to end over HTTP: `infermon simulate --pods 1000` scraped once (every
#     target from /targets, gzip, one curl with 4 parallel transfers) inside a
#     15 s window; the server's CPU time over the window (from /proc) is its
#     cost per scrape interval. Baseline: `cat` of the same bodies from disk.
set -euo pipefail
B=${IM_BUILD_DIR:-build/release}
BIN=$B/infermon
PODS=${SIM_BENCH_PODS:-1000}
"$B/bench_sim" "$PODS" 16
uptime

work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
"$BIN" simulate --pods "$PODS" --listen 127.0.0.1:0 > "$work/out" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q 'listening on' "$work/out" && break; sleep 0.1; done
port=$(grep -o 'listening on [0-9.]*:[0-9]*' "$work/out" | sed 's/.*://')
curl -sf "http://127.0.0.1:$port/targets" > "$work/targets.json"
/usr/bin/python3 -c '
import json, sys
for t in json.load(open(sys.argv[1])):
    print("http://" + t["targets"][0] + t["labels"]["__metrics_path__"])' "$work/targets.json" > "$work/urls"
n=$(wc -l < "$work/urls")
sleep 2
ticks=$(getconf CLK_TCK)
cpu() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
c0=$(cpu); t0=$(date +%s.%N)
mkdir -p "$work/bodies"
awk '{ printf "url = \"%s\"\noutput = \"%s/bodies/%d\"\n", $0, "'"$work"'", NR }' "$work/urls" > "$work/curl.cfg"
curl -sf --no-progress-meter --compressed --parallel --parallel-max 4 -K "$work/curl.cfg"
t1=$(date +%s.%N)
scrape=$(echo "$t1 - $t0" | bc -l)
rest=$(echo "15 - $scrape" | bc -l)
if [ "$(echo "$rest > 0" | bc -l)" = 1 ]; then sleep "$rest"; fi
c1=$(cpu)
bytes=$(cat "$work"/bodies/* | wc -c)
b0=$(date +%s.%N); cat "$work"/bodies/* > /dev/null; b1=$(date +%s.%N)
awk -v c0="$c0" -v c1="$c1" -v hz="$ticks" -v n="$n" -v bytes="$bytes" -v s="$scrape" \
    -v cat0="$b0" -v cat1="$b1" 'BEGIN {
  cpu = (c1 - c0) / hz;
  printf "http: infermon simulate --pods %d: %d targets scraped (gzip) in %.2f s, %.1f MB uncompressed\n", '"$PODS"', n, s, bytes / 1e6;
  w = s > 15 ? s : 15;
  printf "  server CPU over a %.1f s window with one scrape round: %.2f s = %.1f%% of one core\n", w, cpu, cpu / w * 100;
  printf "  baseline cat of the same bodies:   %.3f s wall\n", cat1 - cat0;
}'

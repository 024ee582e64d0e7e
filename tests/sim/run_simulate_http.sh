#!/usr/bin/env bash
# Script test for `infermon simulate` over HTTP: starts the simulator on a free
# port (V1 current and V0 0.6.6 profiles, one port per pod for the first), scrapes
# every target listed by /targets, and checks that each exposition parses with
# python3-prometheus-client's parser and passes `promtool check metrics` with no
# lint finding that the real servers' own output (catalog samples) does not also
# produce. Also checks content type, gzip, 404s, the file-SD JSON, and the 503s
# of the target-down scenario.
set -euo pipefail
BIN=${IM_BINARY:?IM_BINARY not set}
SRC=${IM_SOURCE_DIR:?IM_SOURCE_DIR not set}
PY=/usr/bin/python3
command -v promtool >/dev/null || { echo "promtool not installed"; exit 1; }
. "$SRC/tests/lib/common.sh" # cleanup on exit, free_port
work=$IM_TMP
# start() runs in a command substitution (a subshell): it records its pids in a
# file, since IM_PIDS there would not reach this shell's cleanup.
sim_cleanup() {
  if [ -f "$work/sim.pids" ]; then
    while read -r p; do kill "$p" 2>/dev/null || true; done < "$work/sim.pids"
  fi
  im_cleanup
}
trap sim_cleanup EXIT

# Lint kinds (message without the metric name) that promtool reports on the
# real servers' output; ours may show these and no others.
lint_kinds() { promtool check metrics 2>&1 | sed -E 's/^[^ ]+ //' | sort -u; }
for k in vllm dcgm kueue; do lint_kinds < "$SRC/catalog/$k-sample.prom" > "$work/allowed-$k" || true; done
# The catalog's vLLM sample is V1; real V0 output also had
# vllm:avg_{prompt,generation}_throughput_toks_per_s, which promtool flags.
echo "metric names should not contain abbreviated units" >> "$work/allowed-vllm"
sort -u -o "$work/allowed-vllm" "$work/allowed-vllm"


start() { # name, args...
  local name=$1; shift
  "$BIN" simulate --listen 127.0.0.1:0 "$@" > "$work/$name.out" 2> "$work/$name.err" &
  echo $! >> "$work/sim.pids"
  for _ in $(seq 100); do
    grep -q 'listening on' "$work/$name.out" 2>/dev/null && break
    sleep 0.1
  done
  grep -o 'listening on [0-9.]*:[0-9]*' "$work/$name.out" | sed 's/.*://' || true
}

check_expo() { # file kind label
  local f=$1 kind=$2 what=$3
  "$PY" - "$f" <<'EOF' || { echo "FAIL: python parser on $what"; exit 1; }
import sys
from prometheus_client.parser import text_string_to_metric_families
n = sum(len(f.samples) for f in text_string_to_metric_families(open(sys.argv[1]).read()))
assert n > 0, "no samples"
EOF
  set +e
  promtool check metrics < "$f" > "$work/lint.txt" 2>&1
  rc=$?
  set -e
  if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then echo "FAIL: promtool check metrics ($rc) on $what"; cat "$work/lint.txt"; exit 1; fi
  sed -E 's/^[^ ]+ //' "$work/lint.txt" | sort -u > "$work/kinds.txt"
  extra=$(comm -23 "$work/kinds.txt" "$work/allowed-$kind")
  if [ -n "$extra" ]; then echo "FAIL: lint findings the real $kind output does not have on $what:"; echo "$extra"; exit 1; fi
}

# one port per pod: retry with another base if one of the three ports is taken
port=
for _ in 1 2 3 4 5; do
  ppbase=$(( ( $(free_port) % 20000 ) + 30000 ))
  port=$(start v1 --pods 3 --speed 120 --seed 4 --port-per-pod "$ppbase" --scenario errors)
  [ -n "$port" ] && break
done
port0=$(start v0 --pods 2 --speed 120 --vllm-version 0.6.6 --scenario kv-pressure --dcgm-profiling \
  --dcgm-violations --mig-nodes 1)
[ -n "$port" ] && [ -n "$port0" ] || { echo "FAIL: simulator did not start"; cat "$work"/*.err; exit 1; }
sleep 2

n=0
for p in $port $port0; do
  curl -sf "http://127.0.0.1:$p/targets" > "$work/targets.json"
  "$PY" -c 'import json,sys; t=json.load(open(sys.argv[1])); print(len(t))' "$work/targets.json" > /dev/null
  while IFS=$'\t' read -r target path job; do
    curl -sf -D "$work/h.txt" "http://$target$path" > "$work/e.prom"
    grep -qi '^Content-Type: text/plain; version=0.0.4; charset=utf-8' "$work/h.txt" || { echo "FAIL: content type"; cat "$work/h.txt"; exit 1; }
    check_expo "$work/e.prom" "$job" "$target$path"
    n=$((n + 1))
  done < <("$PY" -c '
import json, sys
for t in json.load(open(sys.argv[1])):
    l = t["labels"]
    print(t["targets"][0], l["__metrics_path__"], l["job"], sep="\t")' "$work/targets.json")
done
# 3 pods (one port each) + 1 node + kueue, then 2 pods + 1 node + 1 MIG node + kueue
[ "$n" -eq 10 ] || { echo "FAIL: scraped $n targets, want 10"; exit 1; }
# the MIG node: instances with GPU_I_PROFILE/GPU_I_ID and their pods
curl -sf "http://127.0.0.1:$port0/nodes/1/metrics" > "$work/mig.prom"
grep -q 'GPU_I_PROFILE="1g.10gb",GPU_I_ID="7",Hostname="gpu-node-h100-mig-01",DCGM_FI_DRIVER_VERSION="580.95.05",container="notebook",namespace="' "$work/mig.prom" \
  || { echo "FAIL: MIG instance labels"; grep -m1 GPU_I_PROFILE "$work/mig.prom"; exit 1; }
# /ground-truth: JSON whose counters match the exposition served at the same time
# (the clock runs: read it twice around the scrape and require the same totals)
"$PY" - "http://127.0.0.1:$port0" <<'EOF' || { echo "FAIL: /ground-truth"; exit 1; }
import json, sys, urllib.request
base = sys.argv[1]
for attempt in range(50):
    a = json.load(urllib.request.urlopen(base + "/ground-truth"))
    text = urllib.request.urlopen(base + "/pods/0/metrics").read().decode()
    b = json.load(urllib.request.urlopen(base + "/ground-truth"))
    if a["time_ms"] == b["time_ms"]:
        break
else:
    sys.exit("the clock never held still for one scrape")
pod = a["pods"][0]
got = sum(float(l.rsplit(" ", 1)[1]) for l in text.splitlines()
          if l.startswith("vllm:prompt_tokens_total{"))
assert got == pod["prompt_tokens"], (got, pod["prompt_tokens"])
assert {t["team"] for t in a["teams"]} == {"llm-serving", "research"}
flavors = {f["flavor"] for t in a["teams"] for f in t["flavors"]}
assert flavors == {"h100-80gb", "1g.10gb"}, flavors
assert a["models"][0]["ttft_seconds"][-1]["le"] == "+Inf"
EOF

# the per-pod port and the path serve the same pod
curl -sf "http://127.0.0.1:$((ppbase + 1))/metrics" > "$work/pp.prom"
grep -q '^vllm:num_requests_running{engine="0"' "$work/pp.prom" || { echo "FAIL: per-pod port"; exit 1; }
# V0 names and no engine label
curl -sf "http://127.0.0.1:$port0/pods/1/metrics" > "$work/v0.prom"
grep -q '^# TYPE vllm:gpu_cache_usage_perc gauge' "$work/v0.prom" || { echo "FAIL: V0 gpu_cache_usage_perc"; exit 1; }
grep -q '^# TYPE vllm:num_requests_swapped gauge' "$work/v0.prom" || { echo "FAIL: V0 num_requests_swapped"; exit 1; }
if grep -q 'engine="' "$work/v0.prom"; then echo "FAIL: V0 has an engine label"; exit 1; fi
# gzip when accepted
curl -sf -H 'Accept-Encoding: gzip' -D "$work/h.txt" "http://127.0.0.1:$port/pods/0/metrics" -o "$work/z.gz"
grep -qi '^Content-Encoding: gzip' "$work/h.txt" || { echo "FAIL: no gzip"; exit 1; }
gzip -dc "$work/z.gz" > "$work/z.prom"
grep -q '^# TYPE vllm:kv_cache_usage_perc gauge' "$work/z.prom" || { echo "FAIL: gzip body"; exit 1; }
# errors scenario: engine errors counted
curl -sf "http://127.0.0.1:$port/pods/0/metrics" > "$work/err.prom"
grep -q 'status="5xx"' "$work/err.prom" || { echo "FAIL: errors scenario shows no 5xx"; exit 1; }
# 404s
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/pods/99/metrics")
[ "$code" = 404 ] || { echo "FAIL: /pods/99 gave $code"; exit 1; }
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/nope")
[ "$code" = 404 ] || { echo "FAIL: /nope gave $code"; exit 1; }
# target-down: pod 0 answers 503 from 2 to 7 simulated minutes (at 200x: 0.6 s
# to 2.1 s), node 0's exporter from 3 to 6; the other pod keeps answering
portd=$(start down --pods 2 --speed 200 --scenario target-down)
[ -n "$portd" ] || { echo "FAIL: simulator (target-down) did not start"; cat "$work/down.err"; exit 1; }
poll_code() { # url code: waits (20 s at most) until url answers code
  for _ in $(seq 200); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$1")" = "$2" ] && return 0
    sleep 0.1
  done
  echo "FAIL: $1 never answered $2"; exit 1
}
poll_code "http://127.0.0.1:$portd/pods/0/metrics" 503
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$portd/pods/1/metrics")
[ "$code" = 200 ] || { echo "FAIL: pod 1 gave $code while pod 0 is down"; exit 1; }
poll_code "http://127.0.0.1:$portd/nodes/0/metrics" 503
poll_code "http://127.0.0.1:$portd/pods/0/metrics" 200
# bad flags are usage errors
set +e
"$BIN" simulate --pods -1 > /dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL: --pods -1"; exit 1; }
"$BIN" simulate --scenario no-such-thing --duration 1s > /dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL: bad scenario"; exit 1; }
set -e
echo "ok: $n expositions parsed and linted"

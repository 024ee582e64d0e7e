#!/usr/bin/env bash
# bench/fleet.sh — the dashboard's and the built-in rules' queries on a fleet-sized
# history, infermon vs Prometheus 2.42 vs VictoriaMetrics 1.79 in the same run.
#
# One command: `infermon simulate --history` writes the fleet's past (PODS vLLM pods
# of 5 models, 8-GPU dcgm-exporter nodes with the profiling fields, Kueue; HOURS at
# STEP), which is loaded into each store and compacted (infermon tsdb import;
# promtool tsdb create-blocks-from openmetrics; VictoriaMetrics /api/v1/import/
# prometheus streamed with curl -T, then force merge); then every query of
# bench/fleet_bench.py runs on the three servers over HTTP in the same rounds —
# range over the whole history at 60 s steps and instant at its end, cold (first
# run after start) and warm (median of REPEAT) — and infermon's answers are
# compared with Prometheus' (relative 1e-9).
#
#   PODS=20 HOURS=1 bench/fleet.sh        # a quick run
#   bench/fleet.sh                        # 100 pods x 6 h (~16 M samples, ~4 GB of text)
#
# Environment: PODS (100), HOURS (6), STEP (15s), TP (2: tensor-parallel size of
# every pod; the simulator takes one per fleet), REPEAT (5), ROUNDS (1),
# IM_BINARY (build/release/infermon), IM_BASELINE (an older infermon binary,
# timed over the same store in the same rounds), KEEP (a directory: keep the
# data there), FRAME_CACHE (--storage.frame-cache-size for infermon),
# ONLY_QUERIED=1 (keep only the families the queries read, and up: the full
# fleet's 6 h are ~67 M samples of 47 k series, 23 GB of text, too much to load
# three times on a small machine; the queried families are ~1/4 of it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=$(realpath "${IM_BINARY:-build/release/infermon}")
PODS=${PODS:-100}
HOURS=${HOURS:-6}
STEP=${STEP:-15s}
TP=${TP:-2}
MODELS=${MODELS:-meta-llama/Llama-3.1-8B-Instruct,meta-llama/Llama-3.1-70B-Instruct,Qwen/Qwen2.5-32B-Instruct,mistralai/Mistral-7B-Instruct-v0.3,Qwen/Qwen2.5-14B-Instruct}
if [ -n "${KEEP:-}" ]; then
  work=$KEEP
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
end=$(( $(date +%s) / 3600 * 3600 ))
echo "fleet: $PODS pods, 5 models, TP $TP, ${HOURS}h at $STEP, end $end ($(date -u -d @$end +%FT%TZ))"
if [ ! -s "$work/h.om" ]; then
  "$BIN" simulate --history "${HOURS}h" --step "$STEP" --tick "$STEP" --pods "$PODS" \
    --models "$MODELS" --gpus-per-pod "$TP" --dcgm-profiling --end "$end" \
    --out "$work/full.om" 2>"$work/sim.txt"
  cat "$work/sim.txt"
  if [ -n "${ONLY_QUERIED:-}" ]; then
    grep -E "$(/usr/bin/python3 "$here/fleet_bench.py" --pattern)" "$work/full.om" >"$work/h.om"
    rm -f "$work/full.om"
    echo "kept $(grep -vc '^#' "$work/h.om") samples of the queried families" | tee -a "$work/sim.txt"
  else
    mv "$work/full.om" "$work/h.om"
  fi
fi
exec /usr/bin/python3 "$here/fleet_bench.py" "$BIN" "$work" "${REPEAT:-5}" "${ROUNDS:-1}"

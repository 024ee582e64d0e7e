#!/usr/bin/env bash
# bench/doctor.sh — one `infermon doctor` run over PODS pods (default 100) x 1 h of
# simulated history (kv-pressure), on the local store and over a real Prometheus
# 2.42 holding the same samples; the baseline in the same run is the time
# Prometheus takes to answer every query doctor sends (the JSON's query_log, plus
# its three __name__ listings) by curl one after another, so the ratio is
# doctor's cost over its own queries (below 1: doctor sends llm.doctor.parallel
# at once). Prints one line per figure.
set -euo pipefail
BIN=${IM_BINARY:-build/release/infermon}
PODS=${PODS:-100}
STEP=${STEP:-60s}
END=2026-08-25T12:00:00Z
work=$(mktemp -d)
ppid=""
trap '[ -n "$ppid" ] && kill $ppid 2>/dev/null; rm -rf "$work"' EXIT
now() { date +%s.%N; }
"$BIN" simulate --history 1h10m --step "$STEP" --pods "$PODS" --scenario kv-pressure \
  --end "$END" --out "$work/h.om" 2>/dev/null
"$BIN" tsdb import --format openmetrics "$work/h.om" "$work/ours" >/dev/null 2>&1
promtool tsdb create-blocks-from openmetrics "$work/h.om" "$work/prom" >/dev/null 2>&1
rm -f "$work/h.om"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
echo 'global: {scrape_interval: 15s}' >"$work/p.yml"
prometheus --config.file="$work/p.yml" --storage.tsdb.path="$work/prom" \
  --storage.tsdb.retention.time=100y --web.listen-address="127.0.0.1:$port" >"$work/p.log" 2>&1 &
ppid=$!
for _ in $(seq 600); do curl -fs "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1 && break; sleep 0.1; done
run() { # label cmd...
  local best=""
  for _ in 1 2 3; do
    local t0 t1
    t0=$(now); "$@" >"$work/out.json" 2>"$work/err.txt" || [ $? = 1 ]; t1=$(now)
    best=$(python3 -c "b='$best'; d=$t1-$t0; print(d if not b or d < float(b) else b)")
  done
  echo "$best"
}
local_s=$(run "$BIN" doctor --storage.tsdb.path "$work/ours" --at "$END" --window 1h --output json)
first=$(python3 -c 'import json; f=json.load(open("'"$work/out.json"'"))["findings"]; print(f[0]["cause"] if f else "-")')
remote_s=$(run "$BIN" doctor --prometheus "http://127.0.0.1:$port" --at "$END" --window 1h --output json)
python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["query_log"]))' \
  "$work/out.json" >"$work/queries.txt"
nq=$(wc -l <"$work/queries.txt")
t0=$(now)
for w in "$(( $(date -d "$END" +%s) - 3600 ))" "$(( $(date -d "$END" +%s) - 900 ))"; do # the 3 name listings
  curl -fsS "http://127.0.0.1:$port/api/v1/label/__name__/values?start=$w&end=$(date -d "$END" +%s)" >/dev/null
done
curl -fsS "http://127.0.0.1:$port/api/v1/label/__name__/values?start=$(( $(date -d "$END" +%s) - 3600 ))&end=$(( $(date -d "$END" +%s) - 2700 ))" >/dev/null
while IFS= read -r q; do
  curl -fsS "http://127.0.0.1:$port/api/v1/query_range" --data-urlencode "query=$q" \
    --data-urlencode "start=$(( $(date -d "$END" +%s) - 3600 ))" --data-urlencode "end=$(date -d "$END" +%s)" \
    --data-urlencode "step=60" >/dev/null
done <"$work/queries.txt"
t1=$(now)
curl_s=$(python3 -c "print($t1-$t0)")
nq_doc=$(python3 -c 'import json; print(json.load(open("'"$work/out.json"'"))["queries"])')
printf 'doctor %s pods x 1h (step %s), first finding %s\n' "$PODS" "$STEP" "$first"
printf 'local store:            %.3f s (%s queries)\n' "$local_s" "$nq_doc"
printf 'over Prometheus 2.42:   %.3f s\n' "$remote_s"
printf 'baseline: all %d range queries + 3 name listings by curl to Prometheus, one after another: %.3f s (doctor/baseline %.2f)\n' \
  "$nq" "$curl_s" "$(python3 -c "print($remote_s/$curl_s)")"

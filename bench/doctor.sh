#!/usr/bin/env bash
# bench/doctor.sh — one `infermon doctor` run over PODS pods (default 100) x 1 h of
# simulated history (kv-pressure), on the local store and over a real Prometheus
# 2.42 holding the same samples; the baseline in the same run is the time
# Prometheus takes to answer doctor's own range queries sent by curl one after
# another (taken from the JSON's evidence), so the ratio is doctor's overhead
# over its queries. Prints one line per figure.
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
python3 - "$work/out.json" >"$work/queries.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
seen = []
for f in d["findings"]:
    for e in f["evidence"]:
        for q in e["query"].split(" / ") if " / sum" in e["query"] else [e["query"]]:
            if q and q not in seen:
                seen.append(q)
print("\n".join(seen))
PY
nq=$(wc -l <"$work/queries.txt")
t0=$(now)
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
printf 'baseline: %d of its range queries by curl to Prometheus: %.3f s (doctor/baseline %.2f)\n' \
  "$nq" "$curl_s" "$(python3 -c "print($remote_s/$curl_s)")"

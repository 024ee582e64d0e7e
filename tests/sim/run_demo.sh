#!/usr/bin/env bash
# Script test for `infermon demo`: the simulator and the daemon in one process.
# Starts it on a free port, waits until the daemon has scraped every simulated
# target (3 vLLM pods, 1 dcgm node, Kueue) and answers PromQL over them, checks
# the default backfill (the fleet's last hour, imported before serving): right
# after start a 30m range holds many points per series, the backfilled and the
# live samples are the same series, and counters do not reset at the seam; then
# stops it with SIGTERM and checks it exits cleanly.
set -euo pipefail
BIN=${IM_BINARY:?IM_BINARY not set}
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
"$BIN" demo --web.listen-address 127.0.0.1:0 --pods 3 --speed 20 --scrape-interval 1s \
  > "$work/out" 2> "$work/err" &
pid=$!
for _ in $(seq 600); do grep -q 'open http' "$work/out" 2>/dev/null && break; sleep 0.1; done
url=$(grep -o 'open http://[^/]*/' "$work/out" | sed 's/^open //')
[ -n "$url" ] || { echo "FAIL: demo did not print its URL"; cat "$work/out" "$work/err"; exit 1; }
q() { curl -sfG "${url}api/v1/query" --data-urlencode "query=$1"; }
ok=
for _ in $(seq 60); do
  if q 'count(up == 1) by (job)' > "$work/up.json" 2>/dev/null &&
     /usr/bin/python3 - "$work/up.json" <<'PY'
import json, sys
r = {x["metric"]["job"]: x["value"][1] for x in json.load(open(sys.argv[1]))["data"]["result"]}
sys.exit(0 if r == {"vllm": "3", "dcgm": "1", "kueue": "1"} else 1)
PY
  then ok=1; break; fi
  sleep 0.5
done
[ -n "$ok" ] || { echo "FAIL: targets not all up"; cat "$work/up.json"; tail "$work/err"; exit 1; }
[[ "$(q 'count(vllm:kv_cache_usage_perc)')" == *'"3"'* ]] || { echo "FAIL: vllm series"; exit 1; }
[[ "$(q 'count(DCGM_FI_DEV_GPU_UTIL)')" == *'"8"'* ]] || { echo "FAIL: dcgm series"; exit 1; }
[[ "$(q 'count(kueue_build_info)')" == *'"1"'* ]] || { echo "FAIL: kueue series"; exit 1; }
# Live samples (1s scrapes; the history has one per 15s) in every series first.
ok=
for _ in $(seq 60); do
  [[ "$(q 'min(count_over_time(vllm:prompt_tokens_total[5s])) >= 3')" == *'"value"'* ]] && { ok=1; break; }
  sleep 0.5
done
[ -n "$ok" ] || { echo "FAIL: no live samples after the backfill"; tail "$work/err"; exit 1; }
# Backfill: many points per series over the last 30 minutes (one per 15s).
q 'count_over_time(vllm:prompt_tokens_total[30m])' > "$work/cot.json"
q 'resets(vllm:prompt_tokens_total[40m])' > "$work/resets.json"
q 'count(vllm:prompt_tokens_total)' > "$work/live.json"
/usr/bin/python3 - "$work" <<'PY' || { tail "$work/err"; exit 1; }
import json, sys
w = sys.argv[1]
def res(f): return json.load(open(f"{w}/{f}"))["data"]["result"]
cot = res("cot.json")
live = int(res("live.json")[0]["value"][1])
pts = sorted(int(x["value"][1]) for x in cot)
if len(cot) != live or live < 3:
    sys.exit(f"FAIL: {len(cot)} series over 30m, {live} live: backfill and live series differ")
if pts[0] < 100:
    sys.exit(f"FAIL: too few points over 30m right after start: {pts}")
rs = [float(x["value"][1]) for x in res("resets.json")]
if len(rs) != live or any(r != 0 for r in rs):
    sys.exit(f"FAIL: counter resets at the backfill seam: {rs}")
print(f"ok: backfill: {len(cot)} series, {pts[0]}..{pts[-1]} points over 30m, no resets")
PY
kill -TERM "$pid"
set +e
wait "$pid"
rc=$?
set -e
pid=
[ "$rc" -eq 0 ] || { echo "FAIL: demo exited with $rc"; tail "$work/err"; exit 1; }
echo "ok: demo scraped the simulated fleet and answered PromQL"

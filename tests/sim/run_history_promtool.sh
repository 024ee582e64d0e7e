#!/usr/bin/env bash
# Script test for `infermon simulate --history`: the output is OpenMetrics that
# the real `promtool tsdb create-blocks-from openmetrics` turns into blocks
# holding every sample (V1 and V0 profiles); the same options give the same
# bytes (determinism); `infermon tsdb import` takes every sample as well.
set -euo pipefail
BIN=${IM_BINARY:?IM_BINARY not set}
PY=/usr/bin/python3
command -v promtool >/dev/null || { echo "promtool not installed"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

args=(simulate --history 1h --step 30s --pods 2 --seed 3 --scenario traffic-spike
      --end 2026-08-25T12:00:00Z)
"$BIN" "${args[@]}" --out "$work/a.om" 2> "$work/a.err"
"$BIN" "${args[@]}" --out "$work/b.om" 2> /dev/null
cmp -s "$work/a.om" "$work/b.om" || { echo "FAIL: --history is not deterministic"; exit 1; }
[ "$(tail -n 1 "$work/a.om")" = "# EOF" ] || { echo "FAIL: no # EOF"; exit 1; }
samples=$(sed -nE 's/.*wrote ([0-9]+) samples.*/\1/p' "$work/a.err")
[ -n "$samples" ] && [ "$samples" -gt 50000 ] || { echo "FAIL: samples=$samples"; cat "$work/a.err"; exit 1; }

# V0 profile too (different names, lazily created series)
# (with a MIG node, the throttling counters and a scenario that takes targets
# down: up == 0 and gaps) and its ground truth
"$BIN" simulate --history 30m --step 15s --pods 1 --vllm-version 0.6.6 --mig-nodes 1 \
  --dcgm-violations --scenario target-down \
  --end 2026-08-25T12:00:00Z --out "$work/v0.om" --ground-truth "$work/truth.json" 2> /dev/null
"$PY" -c 'import json,sys; t=json.load(open(sys.argv[1])); assert t["seconds"] == 1800, t["seconds"]' "$work/truth.json" \
  || { echo "FAIL: --ground-truth"; exit 1; }
grep -q '^up{job="vllm",.*} 0 ' "$work/v0.om" || { echo "FAIL: no up 0 in the target-down history"; exit 1; }

# (python3-prometheus-client's OpenMetrics parser is not used: the Debian
# version rejects any histogram with more than one timestamp per series, a bug
# in its _check_histogram; promtool is the reference here.)
# a mixed fleet (vLLM and SGLang pods, engines cycled over the models): each
# engine's pods with their own families, every family once, both engines present
"$BIN" simulate --history 10m --step 15s --pods 4 --engine vllm,sglang --models m-a,m-b \
  --end 2026-08-25T12:00:00Z --out "$work/mixed.om" 2> "$work/mixed.err" \
  || { echo "FAIL: --history of a mixed fleet"; cat "$work/mixed.err"; exit 1; }
dup=$(grep '^# TYPE ' "$work/mixed.om" | sort | uniq -d)
[ -z "$dup" ] || { echo "FAIL: families written twice: $dup"; exit 1; }
grep -q '^vllm:num_requests_running{.*model_name="m-a"' "$work/mixed.om" &&
  grep -q '^sglang:num_running_reqs{.*model_name="m-b"' "$work/mixed.om" \
  || { echo "FAIL: the mixed history lacks an engine"; exit 1; }
for f in a v0 mixed; do
  promtool tsdb create-blocks-from openmetrics "$work/$f.om" "$work/data-$f" > "$work/blocks-$f.txt" 2>&1 \
    || { echo "FAIL: promtool create-blocks-from openmetrics ($f)"; cat "$work/blocks-$f.txt"; exit 1; }
done
got=$(promtool tsdb list "$work/data-a" | awk 'NR > 1 { s += $5 } END { print s }')
[ "$got" = "$samples" ] || { echo "FAIL: blocks hold $got samples, wrote $samples"; exit 1; }
# and our own importer takes every sample too
"$BIN" tsdb import --format openmetrics "$work/a.om" "$work/ours" > "$work/import.txt" 2>&1 \
  || { echo "FAIL: infermon tsdb import"; cat "$work/import.txt"; exit 1; }
grep -q "^imported $samples samples (0 rejected" "$work/import.txt" \
  || { echo "FAIL: infermon tsdb import did not take all $samples samples"; tail -3 "$work/import.txt"; exit 1; }
echo "ok: $samples samples backfilled by promtool and by infermon tsdb import"

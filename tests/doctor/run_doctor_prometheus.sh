#!/usr/bin/env bash
# The same diagnosis over a real Prometheus 2.42 (the remote query backend):
# histories backfilled with promtool give the same findings, in the same order,
# as the local store. One of them combines causes: two models, one after
# another on one of them (traffic-spike on model B from minute 5, then
# kv-pressure from minute 20): B's current cause ranks first, A stays healthy.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
cat >"$IM_TMP/combo.yml" <<'YML'
base: healthy
events:
  - at: 5m
    scenario: traffic-spike
    model: Qwen/Qwen3-32B
  - at: 20m
    scenario: kv-pressure
    model: Qwen/Qwen3-32B
YML
PODS=4 doc_store combo --scenario "$IM_TMP/combo.yml" \
  --models meta-llama/Llama-3.1-8B-Instruct,Qwen/Qwen3-32B
doc_run combo
doc_check "$IM_TMP/combo.json" kv-saturation kv_usage preemptions
$PY - "$IM_TMP/combo.json" <<'PYEOF' || exit 1
import json, sys
fs = json.load(open(sys.argv[1]))["findings"]
assert fs[0]["model"] == "Qwen/Qwen3-32B", fs[0]["model"]
bad = [f["cause"] for f in fs if f["model"] == "meta-llama/Llama-3.1-8B-Instruct" and f["severity"] != "info"]
assert not bad, bad
PYEOF
doc_prom combo
"$IM_BINARY" doctor --prometheus "$PROM_URL" --at "$DOC_END" --output json >"$IM_TMP/combo.remote.json" 2>"$IM_TMP/r.err" || [ $? = 1 ] || { cat "$IM_TMP/r.err"; fail "doctor --prometheus"; }
doc_same "$IM_TMP/combo.json" "$IM_TMP/combo.remote.json"
grep -q "\"backend\":\"$PROM_URL\"" "$IM_TMP/combo.remote.json" || fail "backend not named"
echo "ok: same findings over Prometheus 2.42"

#!/usr/bin/env bash
# doctor names kv-saturation first on the kv-pressure scenario, with the KV
# use, preemptions and TTFT as evidence; on vLLM and on SGLang (same cause id,
# each engine's names), and client-timeouts ranks after it.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
doc_store kv --scenario kv-pressure
doc_run kv
[ "$DOC_RC" = 1 ] || fail "exit code $DOC_RC, expected 1 (findings)"
doc_check "$IM_TMP/kv.json" kv-saturation kv_usage preemptions ttft waiting
grep -q '"metric":"vllm:kv_cache_usage_perc"' "$IM_TMP/kv.json" || fail "vLLM KV name not used"
grep -q '"flag":"--gpu-memory-utilization"' "$IM_TMP/kv.json" || fail "no vLLM flag"
$PY - "$IM_TMP/kv.json" <<'PYEOF' || exit 1
import json, sys
c = [f["cause"] for f in json.load(open(sys.argv[1]))["findings"]]
assert "client-timeouts" in c and c.index("client-timeouts") > c.index("kv-saturation"), c
PYEOF
doc_store kvs --scenario kv-pressure --engine sglang
doc_run kvs
doc_check "$IM_TMP/kvs.json" kv-saturation kv_usage preemptions ttft
grep -q '"metric":"sglang:token_usage"' "$IM_TMP/kvs.json" || fail "SGLang KV name not used"
grep -q '"flag":"--mem-fraction-static"' "$IM_TMP/kvs.json" || fail "no SGLang flag"
if grep -q '"flag":"--gpu-memory-utilization"' "$IM_TMP/kvs.json"; then fail "vLLM flag on SGLang"; fi
# text and markdown say the same
"$IM_BINARY" doctor --storage.tsdb.path "$IM_TMP/kv" --at "$DOC_END" >"$IM_TMP/kv.txt" 2>/dev/null || true
grep -q "1. CRITICAL kv-saturation" "$IM_TMP/kv.txt" || { cat "$IM_TMP/kv.txt"; fail "text output"; }
"$IM_BINARY" doctor --storage.tsdb.path "$IM_TMP/kv" --at "$DOC_END" --output markdown >"$IM_TMP/kv.md" 2>/dev/null || true
grep -q '^## 1. `kv-saturation` (critical)' "$IM_TMP/kv.md" || { head -20 "$IM_TMP/kv.md"; fail "markdown output"; }
echo "ok: kv-saturation"

#!/usr/bin/env bash
# A healthy fleet: nothing above info (exit code 0), on vLLM and on SGLang, and
# the text output says so.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
for eng in vllm sglang; do
  doc_store h-$eng --scenario healthy --engine $eng
  doc_run h-$eng
  [ "$DOC_RC" = 0 ] || { cat "$IM_TMP/h-$eng.json"; fail "$eng: exit code $DOC_RC on a healthy fleet"; }
  $PY - "$IM_TMP/h-$eng.json" <<'PYEOF' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
bad = [f["cause"] for f in d["findings"] if f["severity"] != "info"]
assert not bad, bad
assert d["models"] == ["meta-llama/Llama-3.1-8B-Instruct"], d["models"]
assert d["engines"], d
PYEOF
done
"$IM_BINARY" doctor --storage.tsdb.path "$IM_TMP/h-vllm" --at "$DOC_END" >"$IM_TMP/h.txt" 2>/dev/null \
  || fail "text run exited non-zero"
grep -q "No problem found" "$IM_TMP/h.txt" || { cat "$IM_TMP/h.txt"; fail "no 'No problem found'"; }
echo "ok: healthy fleets give nothing above info"

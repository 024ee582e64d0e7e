#!/usr/bin/env bash
# stale-names: the fleet moves from vLLM 0.10 to 0.27 in the window; names that
# dashboards and rules of the old version use are gone (vllm:gpu_cache_usage_perc
# -> vllm:kv_cache_usage_perc): doctor says so and points to infermon lint.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
"$IM_BINARY" simulate --history 30m --step 30s --pods 2 --vllm-version 0.10.0 \
  --end 2026-08-25T11:45:00Z --out "$IM_TMP/old.om" 2>/dev/null
"$IM_BINARY" simulate --history 14m --step 30s --pods 2 --end "$DOC_END" --out "$IM_TMP/new.om" 2>/dev/null
"$IM_BINARY" tsdb import --format openmetrics "$IM_TMP/old.om" "$IM_TMP/s" >/dev/null 2>&1
"$IM_BINARY" tsdb import --format openmetrics "$IM_TMP/new.om" "$IM_TMP/s" >/dev/null 2>&1
doc_run s
doc_check "$IM_TMP/s.json" stale-names names
grep -q 'vllm:gpu_cache_usage_perc is gone; the targets now expose vllm:kv_cache_usage_perc' "$IM_TMP/s.json" \
  || fail "rename not named"
grep -q 'infermon lint --prometheus' "$IM_TMP/s.json" || fail "does not point to lint"
echo "ok: stale-names"

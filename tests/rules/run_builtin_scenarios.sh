#!/usr/bin/env bash
# The built-in LLM alerts against the simulator: 45 minutes of each scenario's
# history (`infermon simulate --history`, 2 pods, fixed seed and end time) become
# a rule unit test of tests/rules/unit/builtin_rules.yml (sim_to_ruletest.py) that
# checks which alerts fire at the end: each alert fires in its scenario and
# nothing fires in `healthy`. The same generated tests run under promtool too.
set -euo pipefail
: "${IM_BINARY:?}" "${IM_SOURCE_DIR:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp "$IM_SOURCE_DIR/tests/rules/unit/builtin_rules.yml" "$tmp/"
fail=0
check() { # scenario expected-alerts...
  local s=$1; shift
  "$IM_BINARY" simulate --scenario "$s" --pods 2 --seed 1 --history 45m --step 30s \
    --end 1700000000 --out "$tmp/$s.om" >/dev/null 2>&1
  /usr/bin/python3 "$IM_SOURCE_DIR/tests/rules/sim_to_ruletest.py" "$tmp/$s.om" 30 \
    builtin_rules.yml "$tmp/$s.test.yml" "$@"
  rm -f "$tmp/$s.om"
  if ! (cd "$tmp" && "$IM_BINARY" test rules --promql.compat=2 "$s.test.yml" >"$tmp/out" 2>&1); then
    echo "FAIL $s: expected firing: ${*:-none}"; cat "$tmp/out"; fail=1
  else
    echo "ok: $s fires ${*:-nothing}"
  fi
  if command -v promtool >/dev/null && ! (cd "$tmp" && promtool test rules "$s.test.yml" >"$tmp/pout" 2>&1); then
    echo "FAIL $s under promtool"; cat "$tmp/pout"; fail=1
  fi
}
check healthy
check errors VLLMRequestFailures
check traffic-spike VLLMHighTTFT VLLMRequestFailures
# Clients give up in kv-pressure, so its queue plateaus at a high level instead of
# growing without bound: VLLMQueueGrowing must tolerate the plateau and fire.
check kv-pressure VLLMHighTTFT VLLMKVCachePinned VLLMQueueGrowing VLLMRequestFailures
exit $fail

#!/usr/bin/env bash
# The built-in rules follow the engines the targets expose: an SGLang pod from
# `infermon simulate --engine sglang` scraped by `infermon run` (no rule files)
# makes the generator add the SGLang groups (recording rules over sglang:*
# names, SGLangHighTTFT & co.), next to vLLM's unchanged rules, and their
# expressions find the simulator's series.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
sport=$(free_port); iport=$(free_port)
bg "$IM_BINARY" simulate --listen "127.0.0.1:$sport" --pods 1 --engine sglang \
  --models Qwen/Qwen3-8B --speed 20 >"$IM_TMP/sim.log" 2>&1
wait_http "http://127.0.0.1:$sport/targets" 30 || { cat "$IM_TMP/sim.log"; fail "simulator did not start"; }
cat >"$IM_TMP/cfg.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: sglang
    metrics_path: /pods/0/metrics
    static_configs: [{targets: ['127.0.0.1:$sport']}]
YML
bg "$IM_BINARY" run --config.file="$IM_TMP/cfg.yml" --storage.memory-only \
  --web.listen-address="127.0.0.1:$iport" --log.level=warn >"$IM_TMP/log" 2>&1
wait_http "http://127.0.0.1:$iport/-/ready" 30 || { cat "$IM_TMP/log"; fail "infermon did not start"; }
groups() {
  curl -fsS "http://127.0.0.1:$iport/api/v1/rules" | $PY -c '
import json, sys
print(" ".join(g["name"] for g in json.load(sys.stdin)["data"]["groups"]))'
}
for _ in $(seq 120); do
  g=$(groups)
  case "$g" in *infermon.llm.sglang.alerts*) break;; esac
  sleep 0.5
done
for want in infermon.llm.recording infermon.llm.alerts infermon.llm.sglang.recording infermon.llm.sglang.alerts; do
  case " $g " in *" $want "*) ;; *) cat "$IM_TMP/log"; fail "group $want missing: $g";; esac
done
curl -fsS "http://127.0.0.1:$iport/api/v1/rules?type=alert" | $PY -c '
import json, sys
q = {r["name"]: r["query"] for g in json.load(sys.stdin)["data"]["groups"] for r in g["rules"]}
assert q["SGLangHighTTFT"] == "model_name:sglang_ttft_seconds:p95_5m > 2", q.get("SGLangHighTTFT")
assert "SGLangKVCachePinned" in q and "VLLMHighTTFT" in q' || fail "alerts not as expected"
# the generated expressions run over the scraped SGLang series
q=$(curl -fsS "http://127.0.0.1:$iport/api/v1/rules?type=record" | $PY -c '
import json, sys
print({r["name"]: r["query"] for g in json.load(sys.stdin)["data"]["groups"] for r in g["rules"]}["model_name:sglang_requests_running:sum"])')
v=$(curl -fsS --data-urlencode "query=$q" "http://127.0.0.1:$iport/api/v1/query" |
  $PY -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["metric"].get("model_name","") if r else "")')
[ "$v" = "Qwen/Qwen3-8B" ] || fail "$q has no series for the SGLang model: $v"
echo "ok: SGLang built-in rules generated for the SGLang target ($g)"

#!/usr/bin/env bash
# `infermon run` without rule_files loads the built-in LLM rules; with
# vllm_names auto it reads the KV-cache metric under both vLLM names until the
# scraped targets show which one they expose, then regenerates the rules for
# that name (here an old vLLM exposing vllm:gpu_cache_usage_perc), keeping the
# thresholds from the llm: section.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
mport=$(free_port); iport=$(free_port)
mkdir -p "$IM_TMP/www"
printf '# TYPE vllm:gpu_cache_usage_perc gauge\nvllm:gpu_cache_usage_perc{model_name="m"} 0.5\n' >"$IM_TMP/www/metrics"
bg $PY "$IM_SOURCE_DIR/tests/lib/serve_dir.py" "$mport" --bind 127.0.0.1 --directory "$IM_TMP/www" >/dev/null 2>&1
cat >"$IM_TMP/cfg.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: vllm
    static_configs: [{targets: ['127.0.0.1:$mport']}]
llm:
  ttft_p95_target_seconds: 1.5
YML
bg "$IM_BINARY" run --config.file="$IM_TMP/cfg.yml" --storage.memory-only \
  --web.listen-address="127.0.0.1:$iport" --log.level=warn >"$IM_TMP/log" 2>&1
wait_http "http://127.0.0.1:$iport/-/ready" 30 || { cat "$IM_TMP/log"; fail "infermon did not start"; }
kvq() {
  curl -fsS "http://127.0.0.1:$iport/api/v1/rules?type=record" | $PY -c '
import json, sys
for g in json.load(sys.stdin)["data"]["groups"]:
    for r in g["rules"]:
        if r["name"] == "model_name:vllm_kv_cache_usage:max": print(r["query"])'
}
first=$(kvq)
case "$first" in *kv_cache_usage_perc*gpu_cache_usage_perc*) ;; *) fail "built-ins not loaded with both names: $first";; esac
curl -fsS "http://127.0.0.1:$iport/api/v1/rules?type=alert" | $PY -c '
import json, sys
q = [r["query"] for g in json.load(sys.stdin)["data"]["groups"] for r in g["rules"]]
sys.exit(0 if "model_name:vllm_ttft_seconds:p95_5m > 1.5" in q else 1)' || fail "llm.ttft_p95_target_seconds not applied"
for _ in $(seq 60); do
  q=$(kvq)
  [ "$q" = 'max by (model_name) (vllm:gpu_cache_usage_perc)' ] && break
  sleep 0.5
done
[ "$q" = 'max by (model_name) (vllm:gpu_cache_usage_perc)' ] || { cat "$IM_TMP/log"; fail "names not detected: $q"; }
echo "ok: built-in rules loaded, KV-cache rule now reads the name the target exposes ($q)"

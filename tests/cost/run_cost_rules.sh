#!/usr/bin/env bash
# llm.cost.rules: true loads the cost recording rules (group infermon.llm.cost)
# into `infermon run`, next to the built-in ones; false/absent loads none; the
# group as served is a rule file promtool 2.42 accepts.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
command -v promtool >/dev/null || fail "promtool is missing (scripts/install-deps.sh)"
start() { # name rules-value port
  local port=$3
  cat >"$IM_TMP/$1.yml" <<YML
global: {scrape_interval: 15s, evaluation_interval: 1s}
scrape_configs: []
llm:
  cost:
    prices:
      - flavor: h100-80gb
        on_demand: 4
    rules: $2
YML
  bg "$IM_BINARY" run --config.file "$IM_TMP/$1.yml" --storage.memory-only \
    --web.listen-address "127.0.0.1:$port" >"$IM_TMP/$1.log" 2>&1
  wait_http "http://127.0.0.1:$port/-/ready" 30
}
on=$(free_port)
off=$(free_port)
start on true "$on"
start off false "$off"
rules_of() { curl -fsS "http://127.0.0.1:$1/api/v1/rules"; }
deadline=$((SECONDS + 30))
until curl -fsS "http://127.0.0.1:$on/api/v1/rules" | grep -q '"name":"infermon.llm.cost"'; do
  [ $SECONDS -lt $deadline ] || fail "cost group not loaded in 30 s: $(cat "$IM_TMP/on.log")"
  sleep 0.2
done
rules_of "$on" >"$IM_TMP/on.json"
rules_of "$off" >"$IM_TMP/off.json"
grep -q '"name":"infermon.llm.cost"' "$IM_TMP/off.json" && fail "rules: false still loads the cost group"
python3 - "$IM_TMP/on.json" "$IM_TMP/rules.yml" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["data"]["groups"]
g = [x for x in d if x["name"] == "infermon.llm.cost"]
assert g, "no cost group"
rules = g[0]["rules"]
assert rules and all(r["type"] == "recording" for r in rules), rules
assert any(r["name"] == "namespace:infermon_gpu_cost_per_hour:sum" for r in rules), [r["name"] for r in rules]
with open(sys.argv[2], "w") as f:
    f.write("groups:\n  - name: infermon.llm.cost\n    rules:\n")
    for r in rules:
        f.write("      - record: %s\n        expr: %s\n" % (r["name"], json.dumps(r["query"])))
PY
promtool check rules "$IM_TMP/rules.yml" >"$IM_TMP/promtool.out" 2>&1 || fail "promtool rejects the cost rules: $(cat "$IM_TMP/promtool.out")"
# fractional GPUs counted as fractions (promtool test rules over the served rules):
# a Kueue MIG reservation of 7 x 1g.10gb is one GPU, 2 x 3g.40gb 6/7; a GPU
# time-sliced between two namespaces' pods is half of one to each, a 3g.40gb
# instance 3/7; busy is shared the same way.
cat >"$IM_TMP/frac_test.yml" <<'YML'
rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'kueue_local_queue_resource_reservation{job="kueue",namespace="kueue-system",exported_namespace="a",flavor="h100-80gb",resource="nvidia.com/gpu"}'
        values: '2x5'
      - series: 'kueue_local_queue_resource_reservation{job="kueue",namespace="kueue-system",exported_namespace="a",flavor="h100-80gb",resource="cpu"}'
        values: '96x5'
      - series: 'kueue_local_queue_resource_reservation{job="kueue",namespace="kueue-system",exported_namespace="b",flavor="mig",resource="nvidia.com/mig-1g.10gb"}'
        values: '7x5'
      - series: 'kueue_local_queue_resource_reservation{job="kueue",namespace="kueue-system",exported_namespace="c",flavor="mig",resource="nvidia.com/mig-3g.40gb"}'
        values: '2x5'
      - series: 'DCGM_FI_DEV_FB_USED{job="dcgm",namespace="gpu-operator",pod="dcgm-x",UUID="G1",exported_namespace="a",exported_pod="a0"}'
        values: '1000x5'
      - series: 'DCGM_FI_DEV_FB_USED{job="dcgm",namespace="gpu-operator",pod="dcgm-x",UUID="G2",exported_namespace="a",exported_pod="a1"}'
        values: '10x5'
      - series: 'DCGM_FI_DEV_FB_USED{job="dcgm",namespace="gpu-operator",pod="dcgm-x",UUID="G2",exported_namespace="b",exported_pod="b0"}'
        values: '10x5'
      - series: 'DCGM_FI_DEV_FB_USED{job="dcgm",namespace="gpu-operator",pod="dcgm-x",UUID="G3",GPU_I_ID="1",GPU_I_PROFILE="3g.40gb",exported_namespace="c",exported_pod="c0"}'
        values: '10x5'
      - series: 'DCGM_FI_PROF_GR_ENGINE_ACTIVE{job="dcgm",namespace="gpu-operator",pod="dcgm-x",UUID="G1",exported_namespace="a",exported_pod="a0"}'
        values: '0.5x5'
      - series: 'DCGM_FI_PROF_GR_ENGINE_ACTIVE{job="dcgm",namespace="gpu-operator",pod="dcgm-x",UUID="G2",exported_namespace="a",exported_pod="a1"}'
        values: '0.8x5'
      - series: 'DCGM_FI_PROF_GR_ENGINE_ACTIVE{job="dcgm",namespace="gpu-operator",pod="dcgm-x",UUID="G2",exported_namespace="b",exported_pod="b0"}'
        values: '0.8x5'
      - series: 'DCGM_FI_PROF_GR_ENGINE_ACTIVE{job="dcgm",namespace="gpu-operator",pod="dcgm-x",UUID="G3",GPU_I_ID="1",GPU_I_PROFILE="3g.40gb",exported_namespace="c",exported_pod="c0"}'
        values: '1x5'
    promql_expr_test:
      - expr: namespace_flavor:infermon_gpu_reserved:sum
        eval_time: 2m
        exp_samples:
          - {labels: 'namespace_flavor:infermon_gpu_reserved:sum{namespace="a",flavor="h100-80gb"}', value: 2}
          - {labels: 'namespace_flavor:infermon_gpu_reserved:sum{namespace="b",flavor="mig"}', value: 1}
          - {labels: 'namespace_flavor:infermon_gpu_reserved:sum{namespace="c",flavor="mig"}', value: 0.8571428571428571}
      - expr: namespace:infermon_gpu_allocated:sum
        eval_time: 2m
        exp_samples:
          - {labels: 'namespace:infermon_gpu_allocated:sum{namespace="a"}', value: 1.5}
          - {labels: 'namespace:infermon_gpu_allocated:sum{namespace="b"}', value: 0.5}
          - {labels: 'namespace:infermon_gpu_allocated:sum{namespace="c"}', value: 0.42857142857142855}
      - expr: namespace:infermon_gpu_busy:sum
        eval_time: 2m
        exp_samples:
          - {labels: 'namespace:infermon_gpu_busy:sum{namespace="a"}', value: 0.9}
          - {labels: 'namespace:infermon_gpu_busy:sum{namespace="b"}', value: 0.4}
          - {labels: 'namespace:infermon_gpu_busy:sum{namespace="c"}', value: 0.42857142857142855}
      - expr: namespace:infermon_gpu_cost_per_hour:sum
        eval_time: 2m
        exp_samples:
          - {labels: 'namespace:infermon_gpu_cost_per_hour:sum{namespace="a"}', value: 8}
YML
(cd "$IM_TMP" && promtool test rules frac_test.yml) >"$IM_TMP/ptest.out" 2>&1 \
  || fail "promtool test rules (fractional GPUs): $(cat "$IM_TMP/ptest.out")"
echo "cost rules: loaded with llm.cost.rules true, absent with false, promtool-clean, fractions counted as fractions"

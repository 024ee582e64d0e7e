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
echo "cost rules: loaded with llm.cost.rules true, absent with false, promtool-clean"

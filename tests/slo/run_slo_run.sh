#!/usr/bin/env bash
# infermon run evaluates llm.slos: the SLO groups are loaded next to the
# built-in rules and record series, and GET /api/v1/llm/slos answers the
# documented schema (docs/slo.md, docs/api.md) over a simulated vLLM pod.
source "$IM_SOURCE_DIR/tests/slo/lib.sh"
sim=$(free_port)
port=$(free_port)
bg "$IM_BINARY" simulate --listen "127.0.0.1:$sim" --pods 1 --speed 5 --scenario errors \
  >"$IM_TMP/sim.log" 2>&1
wait_http "http://127.0.0.1:$sim/pods/0/metrics" 30
cat >"$IM_TMP/c.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: vllm
    metrics_path: /pods/0/metrics
    static_configs: [{targets: ['127.0.0.1:$sim']}]
llm:
  slos:
    - name: chat-ttft
      model: meta-llama/Llama-3.1-8B-Instruct
      signal: ttft
      objective: "p99 < 2.5s"
      window: 7d
    - name: chat-avail
      model: meta-llama/Llama-3.1-8B-Instruct
      sli: availability
      objective: 99.5
      window: {calendar: month}
YML
bg "$IM_BINARY" run --config.file "$IM_TMP/c.yml" --storage.tsdb.path "$IM_TMP/data" \
  --storage.tsdb.retention.time 40d --web.listen-address "127.0.0.1:$port" >"$IM_TMP/run.log" 2>&1
IMPID=${IM_PIDS[-1]}
wait_http "http://127.0.0.1:$port/-/ready" 30
deadline=$((SECONDS + 60))
until curl -fsS "http://127.0.0.1:$port/api/v1/query?query=infermon_slo:sli_error:ratio_rate5m" \
  | grep -q '"slo":"chat-avail"' && curl -fsS "http://127.0.0.1:$port/api/v1/llm/slos" \
  | grep -q '"attainment":[0-9]'; do
  [ $SECONDS -lt $deadline ] || fail "no recorded SLI in 60 s: $(tail -5 "$IM_TMP/run.log")"
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$port/api/v1/rules" >"$IM_TMP/rules.json"
curl -fsS "http://127.0.0.1:$port/api/v1/llm/slos" >"$IM_TMP/slos.json"
$PY - "$IM_TMP/rules.json" "$IM_TMP/slos.json" <<'PYEOF'
import json, sys
groups = {g["name"] for g in json.load(open(sys.argv[1]))["data"]["groups"]}
for g in ("infermon.slo.chat-ttft", "infermon.slo.chat-avail", "infermon.slo.goodput"):
    assert g in groups, (g, groups)
bad = [r for g in json.load(open(sys.argv[1]))["data"]["groups"] if g["name"].startswith("infermon.slo")
       for r in g["rules"] if r.get("health") == "err"]
assert not bad, bad
d = json.load(open(sys.argv[2]))
assert d["status"] == "success", d
s = {x["name"]: x for x in d["data"]["slos"]}
keys = {"name", "model", "sli", "signal", "metric", "threshold_seconds", "objective", "window",
        "attainment", "error_budget_remaining", "burn_rates", "alerts"}
for x in s.values():
    assert keys <= set(x), set(x) ^ keys
t, a = s["chat-ttft"], s["chat-avail"]
assert t["sli"] == "latency" and t["signal"] == "ttft" and t["threshold_seconds"] == 2.5, t
assert t["objective"] == 0.99 and t["window"] == "1w", t
assert a["window"] == "calendar month" and a["signal"] is None, a
assert any(x["attainment"] is not None for x in s.values()), s
assert a["attainment"] is None or 0 <= a["attainment"] <= 1, a
assert [(x["severity"], type(x["firing"])) for x in a["alerts"]] == [("page", bool), ("ticket", bool)], a
assert d["data"]["goodput"][0]["model"] == "meta-llama/Llama-3.1-8B-Instruct", d["data"]["goodput"]
print("ok: groups", sorted(g for g in groups if g.startswith("infermon.slo")), "chat-avail", a["attainment"], a["alerts"])
PYEOF
# the rolling window's attainment is recorded (the calendar month's needs a
# half-hour step of history: month_test.yml checks it)
deadline=$((SECONDS + 30))
until curl -fsS "http://127.0.0.1:$port/api/v1/query?query=infermon_slo:attainment:ratio" \
  | grep -q '"window":"1w"'; do
  [ $SECONDS -lt $deadline ] || fail "no rolling attainment recorded"
  sleep 0.5
done
echo "ok: attainment recorded"
stop_daemon "$IMPID" "$IM_TMP/run.log"
echo "ok: no sanitizer report in the daemon's log"

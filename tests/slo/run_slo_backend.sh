#!/usr/bin/env bash
# llm.slos in --query.backend-url mode (docs/slo.md): a real Prometheus 2.42
# scrapes a vLLM-named exporter; infermon run over it as backend warns at
# startup that SLO alerts are not evaluated there (and how to get them), and
# GET /api/v1/llm/slos measures the SLOs over the backend from the raw series:
# attainment and burn rates equal what Prometheus' own queries give at the
# same time, and the "alerts" say what the burn-rate rules would. The rules of
# `infermon export rules --config` loaded into Prometheus' ruler then record
# the same attainment and fire the page alert. The daemon's log must hold no
# sanitizer report.
source "$IM_SOURCE_DIR/tests/slo/lib.sh"
command -v prometheus >/dev/null || fail "prometheus (2.42) is not installed"
exp=$(free_port)
pp=$(free_port)
port=$(free_port)
cat >"$IM_TMP/exporter.py" <<'PYEOF'
import sys, time
from prometheus_client import Histogram, Counter, start_http_server
h = Histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
              ["model_name"], buckets=(0.25, 0.5, 1.0, 2.5, 5.0))
c = Counter("vllm:request_success", "Count of finished requests.", ["model_name", "finished_reason"])
start_http_server(int(sys.argv[1]), addr="127.0.0.1")
# in exact shares, cycled, so that any prefix of the requests so far is within
# one request of them: 3/4 under 1s, 1/5 errors
while True:
    for i in range(20):
        h.labels("m1").observe((0.1, 0.4, 0.8, 2.0)[i % 4])
        c.labels("m1", ("stop", "stop", "stop", "length", "error")[i % 5]).inc()
    time.sleep(0.2)
PYEOF
bg "$PY" "$IM_TMP/exporter.py" "$exp"
wait_http "http://127.0.0.1:$exp/metrics" 30
cat >"$IM_TMP/im.yml" <<'YML'
global: {scrape_interval: 1s, evaluation_interval: 1s}
llm:
  slos:
    - {name: ttft, model: m1, signal: ttft, threshold: 1s, objective: 99.9, window: 7d}
    - {name: avail, model: m1, sli: availability, objective: 99, window: 3d}
YML
write_prom() {
  cat >"$IM_TMP/prom.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: vllm
    static_configs: [{targets: ['127.0.0.1:$exp']}]
$1
YML
}
write_prom ""
bg prometheus --config.file "$IM_TMP/prom.yml" --storage.tsdb.path "$IM_TMP/prom" \
  --web.listen-address "127.0.0.1:$pp" --web.enable-lifecycle >"$IM_TMP/prom.log" 2>&1
P="http://127.0.0.1:$pp"
wait_http "$P/-/ready" 60
# wait until Prometheus has a few scrapes of both families (rates need two samples)
pq() { curl -fsS "$P/api/v1/query" --data-urlencode "query=$1" ${2:+--data-urlencode "time=$2"}; }
deadline=$((SECONDS + 60))
until pq 'count_over_time(vllm:request_success_total{finished_reason="error"}[1m]) > 5 and on() count_over_time(vllm:time_to_first_token_seconds_count[1m]) > 5' | grep -q '"value"'; do
  [ $SECONDS -lt $deadline ] || fail "Prometheus has no scrapes in 60 s: $(tail -3 "$IM_TMP/prom.log")"
  sleep 0.3
done

bg "$IM_BINARY" run --config.file "$IM_TMP/im.yml" --query.backend-url "$P" \
  --web.listen-address "127.0.0.1:$port" >"$IM_TMP/run.log" 2>&1
IMPID=${IM_PIDS[-1]}
U="http://127.0.0.1:$port"
wait_http "$U/-/ready" 30
grep -q 'level=warn msg="SLO alerts are not evaluated in query backend mode.*infermon export rules --config FILE' "$IM_TMP/run.log" ||
  fail "no backend-mode warning: $(grep -i slo "$IM_TMP/run.log")"
echo "ok: the backend-mode warning names infermon export rules --config"

# compare AT: /api/v1/llm/slos?at=AT against Prometheus' own answers at AT
compare() {
  curl -fsS "$U/api/v1/llm/slos?at=$1" >"$IM_TMP/slos.json" || return 1
  for w in 5m 1h 3d 7d; do
    pq "sum(rate(vllm:time_to_first_token_seconds_bucket{model_name=\"m1\",le=\"1.0\"}[$w])) / sum(rate(vllm:time_to_first_token_seconds_count{model_name=\"m1\"}[$w]))" "$1" >"$IM_TMP/p-ttft-$w.json" || return 1
    pq "sum(rate(vllm:request_success_total{model_name=\"m1\",finished_reason=~\"error|abort\"}[$w])) / sum(rate(vllm:request_success_total{model_name=\"m1\"}[$w]))" "$1" >"$IM_TMP/p-avail-$w.json" || return 1
  done
  $PY - "$IM_TMP" <<'PYEOF'
import json, math, sys
t = sys.argv[1]
d = json.load(open(t + "/slos.json"))
assert d["status"] == "success", d
s = {x["name"]: x for x in d["data"]["slos"]}
def prom(name, w):
    r = json.load(open("%s/p-%s-%s.json" % (t, name, w)))["data"]["result"]
    assert r, (name, w)
    return float(r[0]["value"][1])
def close(a, b, what):
    assert a is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (what, a, b)
ttft, avail = s["ttft"], s["avail"]
for x in (ttft, avail):
    assert x["bounds"] == "live" and "error" not in x, x
close(ttft["attainment"], prom("ttft", "7d"), "ttft attainment")
close(avail["attainment"], 1 - prom("avail", "3d"), "avail attainment")
for w in ("5m", "1h"):
    close(ttft["burn_rates"][w], (1 - prom("ttft", w)) / 0.001, "ttft burn " + w)
    close(avail["burn_rates"][w], prom("avail", w) / 0.01, "avail burn " + w)
# 1/4 of requests over 1s (budget 0.1 %) and 1/5 failing (budget 1 %): far
# over 14.4x on every window, so both severities would fire
for x in (ttft, avail):
    f = {a["severity"]: a["firing"] for a in x["alerts"]}
    assert f == {"page": True, "ticket": True}, x["alerts"]
print("attainment ttft %.4f avail %.4f; burn 1h ttft %.1f avail %.1f" % (
    ttft["attainment"], avail["attainment"], ttft["burn_rates"]["1h"], avail["burn_rates"]["1h"]))
PYEOF
}
at=$(($(date +%s) - 2))
deadline=$((SECONDS + 60))
until compare "$at" 2>"$IM_TMP/cmp.err" >"$IM_TMP/cmp.out"; do
  [ $SECONDS -lt $deadline ] || fail "backend status: $(tail -3 "$IM_TMP/cmp.err"); $(cat "$IM_TMP/slos.json")"
  sleep 0.5
  at=$(($(date +%s) - 2))
done
echo "ok: /api/v1/llm/slos over the backend equals Prometheus' own answers: $(cat "$IM_TMP/cmp.out")"
curl -fsS "$U/api/v1/rules" | grep -q '"groups":\[\]' || fail "infermon evaluates rules in backend mode"

# the documented way to get the alerts: the exported rules in the store's ruler
"$IM_BINARY" export rules --prometheus "$P" --config "$IM_TMP/im.yml" -o "$IM_TMP/exported.yml" 2>"$IM_TMP/export.err" ||
  fail "export rules: $(cat "$IM_TMP/export.err")"
promtool check rules "$IM_TMP/exported.yml" >/dev/null 2>&1 || fail "promtool check rules: $(promtool check rules "$IM_TMP/exported.yml" 2>&1 | tail -3)"
write_prom "rule_files: ['$IM_TMP/exported.yml']"
curl -fsS -X POST "$P/-/reload" >/dev/null || fail "Prometheus reload"
deadline=$((SECONDS + 60))
until pq 'ALERTS{alertname="SLOErrorBudgetBurn",severity="page",alertstate="firing",slo="ttft"} and on() ALERTS{alertname="SLOErrorBudgetBurn",severity="page",alertstate="firing",slo="avail"}' | grep -q '"value"'; do
  [ $SECONDS -lt $deadline ] || fail "Prometheus' ruler fires no SLO page alert in 60 s: $(pq 'ALERTS')"
  sleep 0.5
done
echo "ok: Prometheus' ruler fires the exported SLO page alerts"
# with the recording rules in the store: its recorded attainment at its own
# evaluation time is what /api/v1/llm/slos answers for that time
deadline=$((SECONDS + 60))
until pq 'timestamp(infermon_slo:attainment:ratio{slo="ttft"})' >"$IM_TMP/ts.json" && grep -q '"value"' "$IM_TMP/ts.json"; do
  [ $SECONDS -lt $deadline ] || fail "no recorded attainment in Prometheus"
  sleep 0.5
done
ts=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["data"]["result"][0]["value"][1])' "$IM_TMP/ts.json")
pq "infermon_slo:attainment:ratio{slo=\"ttft\"}" "$ts" >"$IM_TMP/rec.json"
curl -fsS "$U/api/v1/llm/slos?at=$ts" >"$IM_TMP/slos.json"
$PY - "$IM_TMP/rec.json" "$IM_TMP/slos.json" <<'PYEOF' || fail "recorded attainment differs"
import json, sys
rec = float(json.load(open(sys.argv[1]))["data"]["result"][0]["value"][1])
s = {x["name"]: x for x in json.load(open(sys.argv[2]))["data"]["slos"]}
a = s["ttft"]["attainment"]
# the rule saw the samples committed by its evaluation; a scrape stamped
# before it but committed after can differ by a scrape, which moves the
# ratio of the exact shares by about a request in the thousands so far
assert abs(a - rec) < 0.003, (a, rec)
assert abs(a - 0.75) < 0.01, a
print("ok: recorded attainment %.5f, /api/v1/llm/slos %.5f" % (rec, a))
PYEOF

stop_daemon "$IMPID" "$IM_TMP/run.log"
echo "ok: no sanitizer report in the daemon's log"

#!/usr/bin/env bash
# infermon run checks latency thresholds against the `le` bounds as scraped
# (docs/slo.md): a vLLM-named TTFT histogram with custom buckets (0.2 0.3 1.0
# 1.7 3.0 6.0, not the catalog's) appears after the daemon started. Before it
# is scraped the SLOs are on the catalog's bounds (a 1.7s threshold is refused
# then, a 2.5s one makes rules); once scraped they go "live": 1.7s and 1s
# (spelled le="1.0" by the client) make rules, 2.5s is refused with the live
# neighbours 1.7s and 3s, logged and reported in "error", and its rules go
# away. A reload re-resolves at once.
source "$IM_SOURCE_DIR/tests/slo/lib.sh"
exp=$(free_port)
port=$(free_port)
cat >"$IM_TMP/exporter.py" <<'PYEOF'
import random, sys, time
from prometheus_client import Histogram, Counter, start_http_server
h = Histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
              ["model_name", "engine"], buckets=(0.2, 0.3, 1.0, 1.7, 3.0, 6.0))
start_http_server(int(sys.argv[1]), addr="127.0.0.1")
rnd = random.Random(1)
while True:
    for _ in range(20):
        h.labels("m1", "0").observe(rnd.choice((0.1, 0.25, 0.8, 1.2, 2.0, 4.0)))
    time.sleep(0.2)
PYEOF
write_config() {
  cat >"$IM_TMP/c.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: vllm
    static_configs: [{targets: ['127.0.0.1:$exp']}]
llm:
  builtin_rules: false
  slos:
    - {name: ttft-custom, model: m1, signal: ttft, threshold: 1.7s, objective: 90, window: 7d}
    - {name: ttft-one, model: m1, signal: ttft, threshold: 1s, objective: 90, window: 7d}
    - {name: ttft-catalog, model: m1, signal: ttft, threshold: 2.5s, objective: 90, window: 7d}
$1
YML
}
write_config ""
bg "$IM_BINARY" run --config.file "$IM_TMP/c.yml" --storage.tsdb.path "$IM_TMP/data" \
  --web.listen-address "127.0.0.1:$port" --web.enable-lifecycle >"$IM_TMP/run.log" 2>&1
IMPID=${IM_PIDS[-1]}
wait_http "http://127.0.0.1:$port/-/ready" 30
U="http://127.0.0.1:$port"

# check NAME PYTHON-ASSERTIONS: runs them over slos (name -> entry) and groups
# (the rule group names); exit 0 when they hold.
check() {
  curl -fsS "$U/api/v1/llm/slos" >"$IM_TMP/slos.json" || return 1
  curl -fsS "$U/api/v1/rules" >"$IM_TMP/rules.json" || return 1
  $PY - "$IM_TMP/slos.json" "$IM_TMP/rules.json" "$1" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "success", d
slos = {x["name"]: x for x in d["data"]["slos"]}
rg = json.load(open(sys.argv[2]))["data"]["groups"]
groups = {g["name"]: g for g in rg}
exec(sys.argv[3])
PYEOF
}

# 1. nothing scraped yet: the catalog's bounds
check '
for n in ("ttft-custom", "ttft-one", "ttft-catalog"):
    assert slos[n]["bounds"] == "catalog", slos[n]
e = slos["ttft-custom"]["error"]
assert "1.7s is not a bucket bound of vllm:time_to_first_token_seconds (catalog layout" in e, e
assert "error" not in slos["ttft-one"] and "error" not in slos["ttft-catalog"], slos
assert "infermon.slo.ttft-catalog" in groups and "infermon.slo.ttft-one" in groups, groups.keys()
assert "infermon.slo.ttft-custom" not in groups, groups.keys()
' 2>"$IM_TMP/check.err" || fail "before the scrape: $(cat "$IM_TMP/check.err")"
echo "ok: catalog bounds before the histogram is scraped"

# 2. the exporter appears: live within a re-resolution (15 s) after the scrape
bg "$PY" "$IM_TMP/exporter.py" "$exp"
wait_http "http://127.0.0.1:$exp/metrics" 30
deadline=$((SECONDS + 60))
until check 'assert slos["ttft-custom"]["bounds"] == "live" and "infermon.slo.ttft-custom" in groups and "infermon.slo.ttft-catalog" not in groups' 2>/dev/null; do
  [ $SECONDS -lt $deadline ] || fail "not live in 60 s: $(cat "$IM_TMP/slos.json"; tail -5 "$IM_TMP/run.log")"
  sleep 0.5
done
check '
for n in ("ttft-custom", "ttft-one", "ttft-catalog"):
    assert slos[n]["bounds"] == "live", slos[n]
assert "error" not in slos["ttft-custom"] and "error" not in slos["ttft-one"], slos
e = slos["ttft-catalog"]["error"]
assert "llm.slos[2].threshold (ttft-catalog): 2.5s is not a bucket bound of vllm:time_to_first_token_seconds (as scraped; neighbours 1.7s and 3s)" in e, e
assert "use threshold: 3s (or 1.7s)" in e, e
assert slos["ttft-catalog"]["attainment"] is None, slos["ttft-catalog"]
assert "infermon.slo.ttft-catalog" not in groups, groups.keys()
def good(g):
    return [r["query"] for r in groups[g]["rules"] if "sli_error:ratio_rate5m" in r["name"]][0]
q = good("infermon.slo.ttft-one")
assert "le=~\"1|1\\\\.0\"" in q, q
q = good("infermon.slo.ttft-custom")
assert "le=~\"1\\\\.7\"" in q, q
for g in ("infermon.slo.ttft-custom", "infermon.slo.ttft-one", "infermon.slo.goodput"):
    assert g in groups, (g, groups.keys())
    bad = [r for r in groups[g]["rules"] if r.get("health") == "err"]
    assert not bad, bad
' 2>"$IM_TMP/check.err" || fail "live: $(cat "$IM_TMP/check.err")"
grep -q 'SLO refused: it makes no rules.*slo=ttft-catalog.*bounds=live.*neighbours 1.7s and 3s' "$IM_TMP/run.log" ||
  fail "no error log line for ttft-catalog: $(grep -i slo "$IM_TMP/run.log" | tail -5)"
echo "ok: live bounds; 2.5s refused with the neighbours 1.7s and 3s"

# 3. the SLI is measured on the live bounds
deadline=$((SECONDS + 60))
until check 'assert slos["ttft-custom"]["attainment"] is not None and slos["ttft-one"]["attainment"] is not None' 2>/dev/null &&
  curl -fsS "$U/api/v1/query?query=infermon_slo:sli_error:ratio_rate5m" | grep -q '"slo":"ttft-one"'; do
  [ $SECONDS -lt $deadline ] || fail "no attainment in 60 s: $(cat "$IM_TMP/slos.json")"
  sleep 0.5
done
$PY - "$IM_TMP/slos.json" <<'PYEOF'
import json, sys
s = {x["name"]: x for x in json.load(open(sys.argv[1]))["data"]["slos"]}
# observations 0.1 0.25 0.8 1.2 2.0 4.0 in equal shares: 4/6 under 1.7s, 3/6 under 1s
a, b = s["ttft-custom"]["attainment"], s["ttft-one"]["attainment"]
assert 0.55 < a < 0.78 and 0.4 < b < 0.6, (a, b)
print("ok: attainment", round(a, 3), round(b, 3))
PYEOF

# 4. a reload re-resolves at once: a new SLO on the live 3s bound
write_config '    - {name: ttft-three, model: m1, signal: ttft, threshold: 3s, objective: 90, window: 7d}'
curl -fsS -X POST "$U/-/reload" >/dev/null || fail "reload: $(tail -3 "$IM_TMP/run.log")"
check '
assert slos["ttft-three"]["bounds"] == "live" and "error" not in slos["ttft-three"], slos["ttft-three"]
' 2>"$IM_TMP/check.err" || fail "after the reload: $(cat "$IM_TMP/check.err")"
deadline=$((SECONDS + 30))
until check 'assert "infermon.slo.ttft-three" in groups' 2>/dev/null; do
  [ $SECONDS -lt $deadline ] || fail "no rules for ttft-three after the reload"
  sleep 0.5
done
echo "ok: reload re-resolved against the live bounds"
stop_daemon "$IMPID" "$IM_TMP/run.log"
echo "ok: no sanitizer report in the daemon's log"

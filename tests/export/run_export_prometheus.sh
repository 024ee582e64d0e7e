#!/usr/bin/env bash
# infermon export against a real Prometheus 2.42 scraping the simulator: the
# dashboard made from --prometheus has the same queries as the one made from
# the targets, lints clean (ours, the dashboard-linter checks) and every panel
# query returns data from that Prometheus; the exported rules load into it
# (promtool check, then Prometheus' own /api/v1/rules reports them healthy).
source "$IM_SOURCE_DIR/tests/export/lib.sh"
command -v prometheus >/dev/null || fail "prometheus is missing (scripts/install-deps.sh)"
sp=$(free_port)
bg "$B" simulate --listen "127.0.0.1:$sp" --pods 2 --speed 10
SIM=http://127.0.0.1:$sp
wait_http "$SIM/targets" 30
deadline=$((SECONDS + 30))
until curl -fsS "$SIM/pods/0/metrics" | grep -q 'inter_token_latency_seconds_bucket'; do
  [ $SECONDS -lt $deadline ] || fail "no ITL histogram in 30 s"
  sleep 0.2
done
curl -fsS "$SIM/targets" >"$IM_TMP/targets.json"
TG=(--target "$SIM/pods/0/metrics" --target "$SIM/nodes/0/metrics" --target "$SIM/kueue/metrics")
"$B" export rules "${TG[@]}" -o "$IM_TMP/rules.yml" 2>/dev/null
promtool check rules "$IM_TMP/rules.yml" >/dev/null && ok || bad "promtool check rules"
pp=$(free_port)
cat >"$IM_TMP/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ['$IM_TMP/rules.yml']
scrape_configs:
  - job_name: sim
    file_sd_configs: [{files: ['$IM_TMP/targets.json']}]
YML
bg prometheus --config.file="$IM_TMP/prometheus.yml" --storage.tsdb.path="$IM_TMP/pdata" \
  --web.listen-address="127.0.0.1:$pp" --web.enable-lifecycle >"$IM_TMP/prometheus.log" 2>&1
P=http://127.0.0.1:$pp
wait_http "$P/-/ready" 60 || fail "prometheus did not start: $(tail -5 "$IM_TMP/prometheus.log")"
wait_query "$P" 'count(count_over_time(up{job="vllm"}[1m]) > 5)' 60
"$B" export dashboard --prometheus "$P" -o "$IM_TMP/p.json" 2>"$IM_TMP/p.err" && ok || bad "export --prometheus: $(cat "$IM_TMP/p.err")"
"$B" export dashboard "${TG[@]}" -o "$IM_TMP/t.json"
python3 - "$IM_TMP/t.json" "$IM_TMP/p.json" <<'PY' && ok || bad "--target and --prometheus dashboards differ"
import json, sys
q = lambda p: [t["expr"] for x in json.load(open(p))["panels"] for t in x.get("targets", [])]
a, b = q(sys.argv[1]), q(sys.argv[2])
assert a == b and len(a) >= 20, (set(a) ^ set(b))
PY
set +e
"$B" lint --prometheus "$P" "$IM_TMP/p.json" >"$IM_TMP/lint.txt" 2>&1
set -e
grep -q '^0 errors, 0 warnings' "$IM_TMP/lint.txt" && ok || bad "lint --prometheus: $(tail -5 "$IM_TMP/lint.txt")"
python3 "$X/dashboard_rules.py" "$B" "$IM_TMP/p.json" >"$IM_TMP/rules.txt" && ok || bad "dashboard-linter rules: $(cat "$IM_TMP/rules.txt")"
deadline=$((SECONDS + 60))
until python3 "$X/query_panels.py" "$IM_TMP/p.json" "$P" 10s >"$IM_TMP/q.txt"; do
  [ $SECONDS -lt $deadline ] || break
  sleep 1
done
python3 "$X/query_panels.py" "$IM_TMP/p.json" "$P" 10s >"$IM_TMP/q.txt" && ok || bad "panels without data on Prometheus: $(cat "$IM_TMP/q.txt")"
tail -1 "$IM_TMP/q.txt"
# Prometheus evaluates the exported rules without error
rules_healthy() { # min-rules [group]
  curl -fsS "$P/api/v1/rules" | python3 -c '
import json, sys
g = json.load(sys.stdin)["data"]["groups"]
want = sys.argv[2] if len(sys.argv) > 2 else None
assert want is None or want in [y["name"] for y in g], [y["name"] for y in g]
r = [x for y in g for x in y["rules"]]
assert len(r) >= int(sys.argv[1]), len(r)
bad = [(x["name"], x.get("health"), x.get("lastError")) for x in r if x.get("health") != "ok"]
assert not bad, bad
' "$@" 2>"$IM_TMP/health.txt"
}
deadline=$((SECONDS + 30))
until rules_healthy 15; do
  [ $SECONDS -lt $deadline ] || break
  sleep 1
done
rules_healthy 15 && ok || bad "Prometheus rule health: $(tail -3 "$IM_TMP/health.txt")"
# the SLO rules, checked against the live le bounds Prometheus stores, run there too
cat >"$IM_TMP/slo.yml" <<'YML'
llm:
  ttft_p95_target_seconds: 2.5
  slos:
    - name: chat-ttft
      sli: latency
      signal: ttft
      threshold: 2.5s
      objective: 99
      window: 30d
YML
"$B" export rules --prometheus "$P" --config "$IM_TMP/slo.yml" -o "$IM_TMP/rules.yml" 2>"$IM_TMP/slo.err" && ok || bad "export rules --prometheus with SLOs: $(cat "$IM_TMP/slo.err")"
# live: only the engines the store has (no catalog-only notes about others)
! grep -q "not in the catalog" "$IM_TMP/slo.err" && ok || bad "SLO resolution used the catalog: $(cat "$IM_TMP/slo.err")"
promtool check rules "$IM_TMP/rules.yml" >/dev/null && ok || bad "promtool: SLO rules"
curl -fsS -X POST "$P/-/reload" >/dev/null && ok || bad "prometheus reload"
deadline=$((SECONDS + 30))
until rules_healthy 25 infermon.slo.chat-ttft; do
  [ $SECONDS -lt $deadline ] || break
  sleep 1
done
rules_healthy 25 infermon.slo.chat-ttft && ok || bad "Prometheus SLO rule health: $(cat "$IM_TMP/health.txt" | cut -c1-1500)"
finish

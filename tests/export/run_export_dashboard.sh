#!/usr/bin/env bash
# infermon export dashboard for a vLLM fleet and an SGLang fleet of the
# simulator: the dashboard uses the names the targets expose, lints clean with
# `infermon lint` against the same targets (0 findings above info) and with the
# Grafana dashboard-linter rule checks (dashboard_rules.py, which a selftest
# shows fire on broken dashboards), and every panel query returns data from an
# infermon scraping the fleet. The same names come out from --url, --target and
# --storage... sources; bad input gives a clear error.
source "$IM_SOURCE_DIR/tests/export/lib.sh"

check_fleet() { # name engine: export from the targets and from the daemon, lint, query
  local n=$1 eng=$2
  local tg=(--target "$SIM/pods/0/metrics" --target "$SIM/nodes/0/metrics" --target "$SIM/kueue/metrics")
  "$B" export dashboard "${tg[@]}" -o "$IM_TMP/$n-t.json" 2>"$IM_TMP/$n.err" && ok || { bad "$n: export from targets: $(cat "$IM_TMP/$n.err")"; return; }
  wait_query "$IMU" 'up{job="sglang"} or up{job="vllm"}' 30
  wait_query "$IMU" "count(count_over_time(up{job=\"$eng\"}[1m]) > 5)" 60
  "$B" export dashboard --url "$IMU" -o "$IM_TMP/$n-u.json" 2>"$IM_TMP/$n.err" && ok || bad "$n: export from --url: $(cat "$IM_TMP/$n.err")"
  # the same queries from either source
  python3 - "$IM_TMP/$n-t.json" "$IM_TMP/$n-u.json" <<'PY' && ok || bad "$n: --target and --url dashboards differ"
import json, sys
q = lambda p: [t["expr"] for x in json.load(open(p))["panels"] for t in x.get("targets", [])]
a, b = q(sys.argv[1]), q(sys.argv[2])
assert a == b, (set(a) ^ set(b))
PY
  # lint: 0 findings above info against the same targets
  set +e
  "$B" lint "${tg[@]}" --output json "$IM_TMP/$n-t.json" >"$IM_TMP/$n-lint.json"
  local rc=$?
  set -e
  [ $rc -eq 0 ] && ok || bad "$n: lint exit $rc"
  python3 - "$IM_TMP/$n-lint.json" <<'PY' && ok || bad "$n: lint findings: $(cat "$IM_TMP/$n-lint.json")"
import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["findings"] if x["severity"] != "info"]
assert not f, f
assert d["queries"] >= 20, d["queries"]
PY
  python3 "$X/dashboard_rules.py" "$B" "$IM_TMP/$n-t.json" >"$IM_TMP/$n-rules.txt" && ok || bad "$n: dashboard-linter rules: $(cat "$IM_TMP/$n-rules.txt")"
  python3 "$X/dashboard_rules.py" --selftest "$B" "$IM_TMP/$n-t.json" >"$IM_TMP/$n-self.txt" && ok || bad "$n: selftest: $(cat "$IM_TMP/$n-self.txt")"
  # every panel query returns data ($__rate_interval: 4 scrapes and more)
  local deadline=$((SECONDS + 60))
  until python3 "$X/query_panels.py" "$IM_TMP/$n-t.json" "$IMU" 10s >"$IM_TMP/$n-q.txt"; do
    [ $SECONDS -lt $deadline ] || break
    sleep 1
  done
  python3 "$X/query_panels.py" "$IM_TMP/$n-t.json" "$IMU" 10s >"$IM_TMP/$n-q.txt" && ok || bad "$n: panels without data: $(cat "$IM_TMP/$n-q.txt")"
  tail -1 "$IM_TMP/$n-q.txt"
}

# ---- vLLM V1 fleet (with dcgm-exporter and Kueue) ----
start_fleet vllm --pods 2 --models meta-llama/Llama-3.1-8B-Instruct,Qwen/Qwen2.5-32B-Instruct
check_fleet vllm vllm
VSIM=$SIM
python3 - "$IM_TMP/vllm-t.json" <<'PY' && ok || bad "vllm: names"
import json, sys
d = json.load(open(sys.argv[1]))
e = " ".join(t["expr"] for p in d["panels"] for t in p.get("targets", []))
for n in ("vllm:kv_cache_usage_perc", "vllm:num_requests_waiting_by_reason", "vllm:inter_token_latency_seconds_bucket",
          "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_FREE", "kueue_pending_workloads", "histogram_quantile(0.99, sum by (le, model_name)"):
    assert n in e, n
for n in ("vllm:gpu_cache_usage_perc", "sglang:", "vllm:time_per_output_token_seconds"):
    assert n not in e, n
v = {t["name"]: t for t in d["templating"]["list"]}
assert v["instance"]["query"] == 'label_values(up{job=~"$job"}, instance)'
assert v["datasource"]["type"] == "datasource" and v["datasource"]["query"] == "prometheus"
assert all(p.get("fieldConfig", {}).get("defaults", {}).get("unit") for p in d["panels"] if p["type"] != "row")
PY

# ---- vLLM V0 (0.6.4): the V0 names ----
sp=$(free_port)
bg "$B" simulate --listen "127.0.0.1:$sp" --vllm-version 0.6.4 --pods 1
wait_http "http://127.0.0.1:$sp/pods/0/metrics" 30
# labelled histograms appear with the first observation
deadline=$((SECONDS + 30))
until curl -fsS "http://127.0.0.1:$sp/pods/0/metrics" | grep -q '^vllm:time_per_output_token_seconds_bucket'; do
  [ $SECONDS -lt $deadline ] || fail "vLLM V0 simulator: no time_per_output_token histogram in 30 s"
  sleep 0.2
done
"$B" export dashboard --target "http://127.0.0.1:$sp/pods/0/metrics" -o "$IM_TMP/v0.json"
python3 - "$IM_TMP/v0.json" <<'PY' && ok || bad "vLLM V0: names"
import json, sys
d = json.load(open(sys.argv[1]))
e = " ".join(t["expr"] for p in d["panels"] for t in p.get("targets", []))
assert "vllm:gpu_cache_usage_perc" in e and "vllm:kv_cache_usage_perc" not in e, e
assert "vllm:time_per_output_token_seconds_bucket" in e and "inter_token_latency" not in e
assert "waiting_by_reason" not in e and "DCGM" not in e
PY
set +e
"$B" lint --target "http://127.0.0.1:$sp/pods/0/metrics" "$IM_TMP/v0.json" >"$IM_TMP/v0-lint.txt"
set -e
grep -q '^0 errors, 0 warnings' "$IM_TMP/v0-lint.txt" && ok || bad "vLLM V0 lint: $(cat "$IM_TMP/v0-lint.txt")"
python3 "$X/dashboard_rules.py" "$B" "$IM_TMP/v0.json" >/dev/null && ok || bad "vLLM V0: dashboard-linter rules"

# ---- SGLang fleet ----
start_fleet sglang --pods 2 --engine sglang
check_fleet sglang sglang
python3 - "$IM_TMP/sglang-t.json" <<'PY' && ok || bad "sglang: names"
import json, sys
d = json.load(open(sys.argv[1]))
e = " ".join(t["expr"] for p in d["panels"] for t in p.get("targets", []))
for n in ("sglang:num_queue_reqs", "sglang:token_usage", "sglang:time_to_first_token_seconds_bucket", "sglang:num_aborted_requests_total"):
    assert n in e, n
assert "vllm:" not in e
PY

# ---- a mixed fleet: one query per engine in each chain panel, tagged ----
MX=(--target "$VSIM/pods/0/metrics" --target "$SIM/pods/0/metrics" --target "$SIM/nodes/0/metrics")
"$B" export dashboard "${MX[@]}" -o "$IM_TMP/mx.json" && ok || bad "mixed: export"
set +e
"$B" lint "${MX[@]}" "$IM_TMP/mx.json" >"$IM_TMP/mx-lint.txt"
set -e
grep -q '^0 errors, 0 warnings' "$IM_TMP/mx-lint.txt" && ok || bad "mixed lint: $(tail -3 "$IM_TMP/mx-lint.txt")"
python3 "$X/dashboard_rules.py" "$B" "$IM_TMP/mx.json" >/dev/null && ok || bad "mixed: dashboard-linter rules"
python3 - "$IM_TMP/mx.json" <<'PY' && ok || bad "mixed: per-engine queries"
import json, sys
d = json.load(open(sys.argv[1]))
p = next(x for x in d["panels"] if x["title"] == "Time to first token")
legends = [t["legendFormat"] for t in p["targets"]]
assert "{{model_name}} p95 · vLLM" in legends and "{{model_name}} p95 · SGLang" in legends, legends
assert "(engines: vLLM" in d["description"] and "SGLang (" in d["description"], d["description"]
PY

# ---- the local store as the source (a history imported with tsdb import) ----
"$B" simulate --engine sglang --pods 1 --history 20m --step 15s --out "$IM_TMP/h.om" >/dev/null 2>&1
"$B" tsdb import --format openmetrics "$IM_TMP/h.om" "$IM_TMP/hdata" >"$IM_TMP/import.log" 2>&1 || fail "tsdb import: $(tail -3 "$IM_TMP/import.log")"
"$B" export dashboard --storage.tsdb.path "$IM_TMP/hdata" -o "$IM_TMP/st.json" 2>"$IM_TMP/st.err" && ok || bad "--storage.tsdb.path: $(cat "$IM_TMP/st.err")"
grep -q 'sglang:num_queue_reqs' "$IM_TMP/st.json" && ! grep -q 'vllm:' "$IM_TMP/st.json" && grep -q 'DCGM_FI_DEV_GPU_UTIL' "$IM_TMP/st.json" && ok || bad "--storage.tsdb.path: names"
python3 "$X/dashboard_rules.py" "$B" "$IM_TMP/st.json" >/dev/null && ok || bad "--storage.tsdb.path: dashboard-linter rules"
# no source, --engine: the engine's newest names
"$B" export dashboard --engine sglang -o "$IM_TMP/cat.json" && ok || bad "catalog mode (--engine, no source)"
grep -q 'sglang:num_running_reqs' "$IM_TMP/cat.json" && ok || bad "catalog mode: SGLang names"

# ---- bad input ----
dead=$(free_port)
set +e
"$B" export dashboard --prometheus "http://127.0.0.1:$dead" >/dev/null 2>"$IM_TMP/e1"; r1=$?
"$B" export dashboard --target "$SIM/kueue/metrics" >/dev/null 2>"$IM_TMP/e2"; r2=$?
"$B" export dashboard --target "$SIM/pods/0/metrics" --engine vllm >/dev/null 2>"$IM_TMP/e3"; r3=$?
"$B" export dashboard >/dev/null 2>"$IM_TMP/e4"; r4=$?
"$B" export dashboard --engine tgi >/dev/null 2>"$IM_TMP/e5"; r5=$?
set -e
[ $r1 -eq 2 ] && grep -q "^infermon export: --prometheus http://127.0.0.1:$dead: " "$IM_TMP/e1" && ok || bad "unreachable --prometheus: $r1 $(cat "$IM_TMP/e1")"
[ $r2 -eq 2 ] && grep -q "no serving engine found" "$IM_TMP/e2" && ok || bad "no engine: $r2 $(cat "$IM_TMP/e2")"
[ $r3 -eq 2 ] && grep -q -- "--engine vllm: the sources expose none of vLLM's metrics" "$IM_TMP/e3" && ok || bad "absent --engine: $r3 $(cat "$IM_TMP/e3")"
[ $r4 -eq 2 ] && grep -q "no source to find the engines in" "$IM_TMP/e4" && ok || bad "no source: $r4 $(cat "$IM_TMP/e4")"
[ $r5 -eq 2 ] && grep -q -- "--engine tgi: not a serving engine" "$IM_TMP/e5" && ok || bad "unknown engine: $r5 $(cat "$IM_TMP/e5")"
finish

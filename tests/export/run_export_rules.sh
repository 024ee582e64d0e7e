#!/usr/bin/env bash
# infermon export rules: the built-in alert and recording rules for the
# engines the targets expose (vLLM, SGLang), the cost rules with
# llm.cost.rules, as a rule file and as a PrometheusRule; promtool 2.42 checks
# both (the PrometheusRule's spec.groups extracted), `infermon lint` accepts
# the PrometheusRule with the same findings as the rule file, and bad input
# gives a clear error.
source "$IM_SOURCE_DIR/tests/export/lib.sh"
command -v promtool >/dev/null || fail "promtool is missing (scripts/install-deps.sh)"

sv=$(free_port)
ss=$(free_port)
bg "$B" simulate --listen "127.0.0.1:$sv" --pods 2
bg "$B" simulate --listen "127.0.0.1:$ss" --pods 2 --engine sglang
V=http://127.0.0.1:$sv
S=http://127.0.0.1:$ss
for u in "$V" "$S"; do
  wait_http "$u/kueue/metrics" 30
  deadline=$((SECONDS + 30))
  until curl -fsS "$u/pods/0/metrics" | grep -q 'time_to_first_token_seconds_bucket'; do
    [ $SECONDS -lt $deadline ] || fail "$u: no TTFT histogram in 30 s"
    sleep 0.2
  done
done
TV=(--target "$V/pods/0/metrics" --target "$V/nodes/0/metrics" --target "$V/kueue/metrics")
TS=(--target "$S/pods/0/metrics" --target "$S/nodes/0/metrics" --target "$S/kueue/metrics")
cat >"$IM_TMP/cfg.yml" <<'YML'
llm:
  ttft_p95_target_seconds: 2.5
  failure_ratio: 0.02
  cost:
    prices:
      - flavor: h100-80gb
        on_demand: 4
    rules: true
YML
cat >"$IM_TMP/cfg-nocost.yml" <<'YML'
llm:
  ttft_p95_target_seconds: 2.5
YML

promtool_ok() { # name file
  promtool check rules "$2" >"$IM_TMP/$1.promtool" 2>&1 && ok || bad "$1: promtool: $(cat "$IM_TMP/$1.promtool")"
}
lint_json() { # out args...
  local out=$1; shift
  set +e; "$B" lint --output json "$@" >"$out"; local rc=$?; set -e
  [ $rc -le 1 ] || bad "lint could not run: $*"
}

# ---- vLLM fleet: rule file ----
"$B" export rules "${TV[@]}" -o "$IM_TMP/v.yml" 2>"$IM_TMP/v.err" && ok || bad "vllm: export rules: $(cat "$IM_TMP/v.err")"
promtool_ok vllm "$IM_TMP/v.yml"
grep -q 'alert: VLLMHighTTFT' "$IM_TMP/v.yml" && grep -q 'vllm:kv_cache_usage_perc)' "$IM_TMP/v.yml" &&
  ! grep -q 'gpu_cache_usage_perc' "$IM_TMP/v.yml" && ! grep -q 'SGLang' "$IM_TMP/v.yml" && ok || bad "vllm: rule contents"
# the default TTFT target (2 s) lies between vLLM's buckets 1 and 2.5: a note says so
grep -q 'llm.ttft_p95_target_seconds 2 is not a bucket bound of vllm:time_to_first_token_seconds (it lies between 1 and 2.5)' "$IM_TMP/v.err" && ok || bad "vllm: no bucket note: $(cat "$IM_TMP/v.err")"
"$B" check rules "$IM_TMP/v.yml" >/dev/null 2>&1 && ok || bad "vllm: infermon check rules"

# with the configuration: thresholds and the cost rules
"$B" export rules "${TV[@]}" --config "$IM_TMP/cfg.yml" -o "$IM_TMP/vc.yml" 2>"$IM_TMP/vc.err" && ok || bad "vllm: --config: $(cat "$IM_TMP/vc.err")"
[ ! -s "$IM_TMP/vc.err" ] && ok || bad "vllm: --config with a bucket-bound target still notes: $(cat "$IM_TMP/vc.err")"
promtool_ok vllm-cost "$IM_TMP/vc.yml"
grep -q 'name: infermon.llm.cost' "$IM_TMP/vc.yml" && grep -q 'model_name:vllm_ttft_seconds:p95_5m > 2.5' "$IM_TMP/vc.yml" &&
  grep -q 'model_name:vllm_request_failure:ratio_5m > 0.02' "$IM_TMP/vc.yml" && ok || bad "vllm: --config thresholds/cost group"

# llm.builtin_rules: false leaves the built-in rules out (as `run` does); the cost rules stay
printf 'llm:\n  builtin_rules: false\n  cost:\n    prices:\n      - flavor: h100-80gb\n        on_demand: 4\n    rules: true\n' >"$IM_TMP/cfg-nobuiltin.yml"
"$B" export rules "${TV[@]}" --config "$IM_TMP/cfg-nobuiltin.yml" -o "$IM_TMP/vb.yml" 2>"$IM_TMP/vb.err" && ok || bad "builtin_rules false: $(cat "$IM_TMP/vb.err")"
promtool_ok vllm-nobuiltin "$IM_TMP/vb.yml"
grep -q 'name: infermon.llm.cost' "$IM_TMP/vb.yml" && ! grep -q 'VLLMHighTTFT\|vllm_ttft_seconds:p95_5m' "$IM_TMP/vb.yml" && ok ||
  bad "builtin_rules false: built-in rules still exported or cost rules missing"
printf 'llm:\n  builtin_rules: false\n' >"$IM_TMP/cfg-empty.yml"
set +e
"$B" export rules "${TV[@]}" --config "$IM_TMP/cfg-empty.yml" >"$IM_TMP/ve.yml" 2>"$IM_TMP/ve.err"; re=$?
set -e
[ $re -eq 2 ] && [ ! -s "$IM_TMP/ve.yml" ] && grep -q "no rules to export: --config .*llm.builtin_rules: false" "$IM_TMP/ve.err" && ok ||
  bad "builtin_rules false and nothing else: $re $(cat "$IM_TMP/ve.err")"

# built-in rules with a bucket-bound threshold lint clean against the targets
"$B" export rules "${TV[@]}" --config "$IM_TMP/cfg-nocost.yml" -o "$IM_TMP/vn.yml"
lint_json "$IM_TMP/vn-lint.json" "${TV[@]}" "$IM_TMP/vn.yml"
python3 - "$IM_TMP/vn-lint.json" <<'PY' && ok || bad "vllm: lint findings above info: $(cat "$IM_TMP/vn-lint.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["queries"] >= 15, d["queries"]
assert not [f for f in d["findings"] if f["severity"] != "info"], d["findings"]
PY

# ---- PrometheusRule ----
"$B" export rules "${TV[@]}" --config "$IM_TMP/cfg.yml" --format prometheusrule --name llm-rules \
  --namespace monitoring --label release=kube-prometheus-stack -o "$IM_TMP/pr.yml" 2>/dev/null && ok || bad "prometheusrule export"
python3 - "$IM_TMP/pr.yml" "$IM_TMP/vc.yml" "$IM_TMP/pr-groups.yml" <<'PY' && ok || bad "prometheusrule shape"
import sys, yaml
pr = yaml.safe_load(open(sys.argv[1]))
rf = yaml.safe_load(open(sys.argv[2]))
assert pr["apiVersion"] == "monitoring.coreos.com/v1" and pr["kind"] == "PrometheusRule", pr.keys()
md = pr["metadata"]
assert md["name"] == "llm-rules" and md["namespace"] == "monitoring", md
assert md["labels"]["release"] == "kube-prometheus-stack", md
assert pr["spec"]["groups"] == rf["groups"], "spec.groups differ from the rule file's groups"
yaml.safe_dump({"groups": pr["spec"]["groups"]}, open(sys.argv[3], "w"))
PY
promtool_ok prometheusrule "$IM_TMP/pr-groups.yml"
# lint reads the PrometheusRule: the same queries and findings as the rule file
lint_json "$IM_TMP/pr-lint.json" "${TV[@]}" "$IM_TMP/pr.yml"
lint_json "$IM_TMP/vc-lint.json" "${TV[@]}" "$IM_TMP/vc.yml"
python3 - "$IM_TMP/pr-lint.json" "$IM_TMP/vc-lint.json" <<'PY' && ok || bad "prometheusrule lint round trip"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["queries"] == b["queries"] and a["queries"] >= 20, (a["queries"], b["queries"])
key = lambda d: sorted((f["check"], f["severity"], f["expr"]) for f in d["findings"])
assert key(a) == key(b), (key(a), key(b))
assert a["summary"]["error"] == 0, a["summary"]
PY

# ---- SLO rules: llm.slos of --config and an --slo file (Sloth's format) ----
cat >"$IM_TMP/cfg-slo.yml" <<'YML'
llm:
  ttft_p95_target_seconds: 2.5
  slos:
    - name: chat-ttft
      sli: latency
      signal: ttft
      engine: vllm
      threshold: 2.5s
      objective: 99
      window: 30d
      description: Chat answers start within 2.5 s
YML
cat >"$IM_TMP/sloth.yml" <<'YML'
version: prometheus/v1
service: chat
labels:
  owner: ml-platform
  tier: "1"
  slo: not-this
slos:
  - name: requests-availability
    objective: 99.9
    description: Chat requests finish without an error
    labels:
      tier: "2"
    sli:
      events:
        error_query: sum(rate(vllm:request_success_total{finished_reason=~"abort|error"}[{{.window}}]))
        total_query: sum(rate(vllm:request_success_total[{{.window}}]))
    alerting:
      name: ChatAvailability
      labels:
        category: availability
      annotations:
        runbook: https://runbooks.example/chat
        summary: Chat requests fail
      page_alert:
        labels:
          severity: critical
      ticket_alert:
        labels:
          severity: warning
        annotations:
          summary: Chat requests fail (slow burn)
YML
"$B" export rules "${TV[@]}" --config "$IM_TMP/cfg-slo.yml" --slo "$IM_TMP/sloth.yml" -o "$IM_TMP/slo.yml" 2>"$IM_TMP/slo.err" && ok || bad "slo: export: $(cat "$IM_TMP/slo.err")"
promtool_ok slo "$IM_TMP/slo.yml"
python3 - "$IM_TMP/slo.yml" <<'PY' && ok || bad "slo: groups"
import sys, yaml
g = {x["name"]: x for x in yaml.safe_load(open(sys.argv[1]))["groups"]}
assert "infermon.llm.alerts" in g and "infermon.slo.chat-ttft" in g, list(g)
assert any(n.startswith("infermon.slo.") and "requests-availability" in n for n in g), list(g)
rules = [r for x in g.values() for r in x["rules"]]
rec = {r.get("record") for r in rules}
assert "infermon_slo:sli_error:ratio_rate1h" in rec and "infermon_slo:error_budget_remaining:ratio" in rec, rec
sev = {r["labels"].get("severity") for r in rules if r.get("alert")}
assert {"page", "ticket"} <= sev, sev
# bucket-aware: the TTFT SLO reads the 2.5 s bucket (by a regex of its spellings)
assert any('vllm:time_to_first_token_seconds_bucket{le=~"2\\\\.5' in r.get("expr", "") for r in rules), "no le matcher for 2.5"
# Sloth's labels and annotations: the spec's and the SLO's on every rule (the SLO's win, slo stays
# ours), alerting.labels/annotations on both alerts, page_alert/ticket_alert's win over them
sl = [r for n, x in g.items() if "requests-availability" in n for r in x["rules"]]
assert sl and all(r["labels"]["owner"] == "ml-platform" and r["labels"]["tier"] == "2" and
                  r["labels"]["slo"] == "chat-requests-availability" for r in sl if "labels" in r), sl
al = {r["labels"]["severity"]: r for r in sl if r.get("alert")}
assert set(al) == {"critical", "warning"}, list(al)
assert all(a["alert"] == "ChatAvailability" and a["labels"]["category"] == "availability" and
           a["annotations"]["runbook"] == "https://runbooks.example/chat" and
           "burn-rate factor" in a["annotations"]["description"] for a in al.values()), al
assert al["critical"]["annotations"]["summary"] == "Chat requests fail", al["critical"]
assert al["warning"]["annotations"]["summary"] == "Chat requests fail (slow burn)", al["warning"]
ct = [r for n, x in g.items() if "chat-ttft" in n for r in x["rules"]]
assert ct and not any("owner" in r.get("labels", {}) for r in ct), "Sloth labels leaked into another SLO"
# the SLOs' descriptions are the alerts' slo_description annotation (ours and Sloth's)
assert all(a["annotations"]["slo_description"] == "Chat requests finish without an error" for a in al.values()), al
ca = [r for r in ct if r.get("alert")]
assert ca and all(a["annotations"]["slo_description"] == "Chat answers start within 2.5 s" for a in ca), ca
PY
"$B" export rules "${TV[@]}" --config "$IM_TMP/cfg-slo.yml" --slo "$IM_TMP/sloth.yml" --format prometheusrule -o "$IM_TMP/slo-pr.yml" 2>/dev/null
python3 - "$IM_TMP/slo-pr.yml" "$IM_TMP/slo-pr-groups.yml" <<'PY' && ok || bad "slo: prometheusrule"
import sys, yaml
pr = yaml.safe_load(open(sys.argv[1]))
assert pr["kind"] == "PrometheusRule"
yaml.safe_dump({"groups": pr["spec"]["groups"]}, open(sys.argv[2], "w"))
PY
promtool_ok slo-prometheusrule "$IM_TMP/slo-pr-groups.yml"
lint_json "$IM_TMP/slo-lint.json" "${TV[@]}" "$IM_TMP/slo-pr.yml"
python3 - "$IM_TMP/slo-lint.json" <<'PY' && ok || bad "slo: lint of the PrometheusRule: $(cat "$IM_TMP/slo-lint.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["queries"] >= 30, d["queries"]
assert not [f for f in d["findings"] if f["severity"] != "info"], [f for f in d["findings"] if f["severity"] != "info"]
PY
# a threshold between two buckets is refused, naming the field and the neighbours
sed 's/threshold: 2.5s/threshold: 2s/' "$IM_TMP/cfg-slo.yml" >"$IM_TMP/cfg-slo-bad.yml"
set +e
"$B" export rules "${TV[@]}" --config "$IM_TMP/cfg-slo-bad.yml" >/dev/null 2>"$IM_TMP/slo-bad.err"; rb=$?
printf 'slos:\n  - name: x\n    sli: latency\n' >"$IM_TMP/slo-broken.yml"
"$B" export rules "${TV[@]}" --slo "$IM_TMP/slo-broken.yml" >/dev/null 2>"$IM_TMP/slo-broken.err"; rk=$?
set -e
[ $rb -eq 2 ] && grep -q "threshold" "$IM_TMP/slo-bad.err" && grep -q "2.5s" "$IM_TMP/slo-bad.err" && ok || bad "slo: off-bucket threshold: $rb $(cat "$IM_TMP/slo-bad.err")"
[ $rk -eq 2 ] && grep -q "^infermon export: --slo $IM_TMP/slo-broken.yml: " "$IM_TMP/slo-broken.err" && ok || bad "slo: broken file: $rk $(cat "$IM_TMP/slo-broken.err")"

# ---- SGLang fleet: SGLang's rules, no vLLM rules ----
"$B" export rules "${TS[@]}" -o "$IM_TMP/s.yml" 2>/dev/null && ok || bad "sglang: export rules"
promtool_ok sglang "$IM_TMP/s.yml"
grep -q 'alert: SGLangHighTTFT' "$IM_TMP/s.yml" && ! grep -q 'vllm' "$IM_TMP/s.yml" && ok || bad "sglang: rule contents: $(grep -c vllm "$IM_TMP/s.yml") vllm lines"
lint_json "$IM_TMP/s-lint.json" "${TS[@]}" "$IM_TMP/s.yml"
python3 - "$IM_TMP/s-lint.json" <<'PY' && ok || bad "sglang: lint: $(cat "$IM_TMP/s-lint.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["queries"] >= 10 and d["summary"]["error"] == 0, d
PY
# a mixed fleet: both
"$B" export rules "${TV[@]}" --target "$S/pods/0/metrics" -o "$IM_TMP/m.yml" 2>/dev/null
grep -q 'alert: SGLangHighTTFT' "$IM_TMP/m.yml" && grep -q 'alert: VLLMHighTTFT' "$IM_TMP/m.yml" && ok || bad "mixed fleet"
promtool_ok mixed "$IM_TMP/m.yml"

# ---- bad input ----
dead=$(free_port)
set +e
"$B" export rules --prometheus "http://127.0.0.1:$dead" >/dev/null 2>"$IM_TMP/e1"; r1=$?
"$B" export rules "${TV[@]}" --format helm >/dev/null 2>"$IM_TMP/e2"; r2=$?
"$B" export rules "${TV[@]}" --name x >/dev/null 2>"$IM_TMP/e3"; r3=$?
printf 'llm:\n  ttft_p95_target_seconds: fast\n' >"$IM_TMP/bad.yml"
"$B" export rules "${TV[@]}" --config "$IM_TMP/bad.yml" >/dev/null 2>"$IM_TMP/e4"; r4=$?
"$B" export rules --target "$V/kueue/metrics" >/dev/null 2>"$IM_TMP/e5"; r5=$?
set -e
[ $r1 -eq 2 ] && grep -q "^infermon export: --prometheus http://127.0.0.1:$dead: " "$IM_TMP/e1" && ok || bad "unreachable: $r1 $(cat "$IM_TMP/e1")"
[ $r2 -eq 2 ] && grep -q -- "--format must be rulefile or prometheusrule" "$IM_TMP/e2" && ok || bad "--format: $(cat "$IM_TMP/e2")"
[ $r3 -eq 2 ] && grep -q -- "need --format prometheusrule" "$IM_TMP/e3" && ok || bad "--name: $(cat "$IM_TMP/e3")"
[ $r4 -eq 2 ] && grep -q "ttft_p95_target_seconds" "$IM_TMP/e4" && ok || bad "bad config: $(cat "$IM_TMP/e4")"
[ $r5 -eq 2 ] && grep -q "no serving engine found" "$IM_TMP/e5" && ok || bad "no engine: $(cat "$IM_TMP/e5")"
finish

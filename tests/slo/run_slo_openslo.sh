#!/usr/bin/env bash
# OpenSLO import (docs/slo.md): every OpenSLO key is honoured or refused with
# the field named. metadata.labels (strings or lists of strings) and
# spec.service go on every generated rule, as Sloth's labels do;
# metadata.annotations and the documentation strings (displayName,
# description, the indicator's name) on the alerts; promtool checks the rules.
source "$IM_SOURCE_DIR/tests/slo/lib.sh"
w() { cat >"$IM_TMP/$1.yml"; }
w oslo <<'YML'
- apiVersion: openslo/v1
  kind: Service
  metadata: {name: chat, displayName: Chat}
  spec: {description: the chat service}
- apiVersion: openslo/v1
  kind: SLO
  metadata:
    name: chat-ok
    displayName: Chat requests succeed
    labels: {team: chat, tier: [gold, prod], service: chat-api}
    annotations: {runbook_url: "https://runbooks.example/chat"}
  spec:
    description: 99.5 % of chat requests finish without error
    service: chat
    budgetingMethod: Occurrences
    timeWindow: [{duration: 28d, isRolling: true}]
    objectives: [{displayName: few errors, target: 0.995}]
    indicator:
      metadata: {name: ok-ratio, displayName: OK ratio}
      spec:
        description: finished reasons other than error or abort
        ratioMetric:
          counter: true
          bad: {metricSource: {type: Prometheus, spec: {query: 'vllm:request_success_total{finished_reason=~"abort|error"}'}}}
          total: {metricSource: {type: Prometheus, spec: {query: 'vllm:request_success_total'}}}
- apiVersion: openslo/v1
  kind: SLO
  metadata: {name: chat-ttft, labels: {team: chat}}
  spec:
    service: chat
    budgetingMethod: Occurrences
    timeWindow: [{duration: 1M, isRolling: false, calendar: {startTime: "2026-01-01 00:00:00", timeZone: UTC}}]
    objectives: [{op: lte, value: 2.5, target: 0.99}]
    indicator:
      spec:
        thresholdMetric:
          metricSource: {type: Prometheus, spec: {query: 'vllm:time_to_first_token_seconds_bucket'}}
YML
for fmt in rulefile prometheusrule; do
  "$IM_BINARY" slo generate "$IM_TMP/oslo.yml" --format $fmt >"$IM_TMP/oslo-$fmt.yml" 2>"$IM_TMP/oslo.err" ||
    fail "generate ($fmt): $(cat "$IM_TMP/oslo.err")"
done
promtool check rules "$IM_TMP/oslo-rulefile.yml" >"$IM_TMP/promtool.out" 2>&1 ||
  fail "promtool check rules: $(cat "$IM_TMP/promtool.out")"
grep -q "SUCCESS" "$IM_TMP/promtool.out" || fail "promtool: $(cat "$IM_TMP/promtool.out")"
$PY - "$IM_TMP/oslo-rulefile.yml" <<'PYEOF' || fail "labels/annotations of the OpenSLO rules"
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
groups = {g["name"]: g["rules"] for g in doc["groups"]}
ok, ttft = groups["infermon.slo.chat-ok"], groups["infermon.slo.chat-ttft"]
assert len(ok) > 10 and len(ttft) > 10, (len(ok), len(ttft))
for r in ok:
    l = r.get("labels", {})
    # metadata.labels win over spec.service; a list is joined with ","
    assert l.get("team") == "chat" and l.get("tier") == "gold,prod" and l.get("service") == "chat-api", r
    assert l.get("slo") == "chat-ok", r
for r in ttft:
    l = r.get("labels", {})
    assert l.get("team") == "chat" and l.get("service") == "chat" and l.get("slo") == "chat-ttft", r
alerts = [r for r in ok if "alert" in r]
assert len(alerts) == 2, alerts
for a in alerts:
    an = a["annotations"]
    want = {"runbook_url": "https://runbooks.example/chat",
            "openslo_display_name": "Chat requests succeed",
            "openslo_description": "99.5 % of chat requests finish without error",
            "openslo_objective_display_name": "few errors",
            "openslo_indicator": "ok-ratio",
            "openslo_indicator_display_name": "OK ratio",
            "openslo_indicator_description": "finished reasons other than error or abort"}
    for k, v in want.items():
        assert an.get(k) == v, (k, an)
    assert an.get("summary") and an.get("description"), an  # ours stay
for a in [r for r in ttft if "alert" in r]:
    assert not any(k.startswith("openslo_") for k in a["annotations"]), a
print("ok: labels on", len(ok) + len(ttft), "rules, annotations on the alerts")
PYEOF
grep -q "kind: PrometheusRule" "$IM_TMP/oslo-prometheusrule.yml" || fail "no PrometheusRule"
grep -q "tier: 'gold,prod'" "$IM_TMP/oslo-prometheusrule.yml" || fail "labels not in the PrometheusRule"
echo "ok: OpenSLO rules are promtool-clean and carry the labels"

# refused: SPEC-PATCH (python over the chat-ok document) and the expected error
refuse() {
  local what=$1 patch=$2 want=$3
  $PY - "$IM_TMP/oslo.yml" "$IM_TMP/bad.yml" "$patch" <<'PYEOF'
import sys, yaml
docs = yaml.safe_load(open(sys.argv[1]))
d = docs[1]
exec(sys.argv[3])
yaml.safe_dump([d], open(sys.argv[2], "w"), sort_keys=False)
PYEOF
  if "$IM_BINARY" slo check "$IM_TMP/bad.yml" >"$IM_TMP/bad.out" 2>&1; then
    fail "$what accepted"
  fi
  grep -qF -- "$want" "$IM_TMP/bad.out" || fail "$what: want '$want', got: $(cat "$IM_TMP/bad.out")"
  grep -q "bad.yml:[0-9]*:[0-9]*:" "$IM_TMP/bad.out" || fail "$what: no file:line:column: $(cat "$IM_TMP/bad.out")"
}
refuse alertPolicies 'd["spec"]["alertPolicies"] = [{"alertPolicyRef": "p"}]' "OpenSLO spec.alertPolicies: alert policies do not map"
refuse metricSourceRef 'd["spec"]["indicator"]["spec"]["ratioMetric"]["total"]["metricSource"]["metricSourceRef"] = "prom"' "OpenSLO ratioMetric.total.metricSourceRef: DataSource objects do not map"
refuse spec-key 'd["spec"]["indicator"]["spec"]["ratioMetric"]["total"]["metricSource"]["spec"]["step"] = 60' "field step not found in OpenSLO ratioMetric.total.metricSource.spec"
refuse timeslices 'd["spec"]["objectives"][0]["timeSliceTarget"] = 0.9' "OpenSLO spec.objectives[0].timeSliceTarget does not map"
refuse composite 'd["spec"]["objectives"][0]["compositeWeight"] = 1' "OpenSLO spec.objectives[0].compositeWeight does not map"
refuse objective-key 'd["spec"]["objectives"][0]["targetRatio"] = 1' "field targetRatio not found in OpenSLO spec.objectives[0]"
refuse target-twice 'd["spec"]["objectives"][0]["targetPercent"] = 99' "target or targetPercent, not both"
refuse op-on-ratio 'd["spec"]["objectives"][0]["op"] = "lte"' "OpenSLO spec.objectives[0].op is for a thresholdMetric"
refuse raw 'd["spec"]["indicator"]["spec"]["ratioMetric"]["raw"] = {"metricSource": {"type": "Prometheus", "spec": {"query": "x"}}}' "OpenSLO ratioMetric.raw: a precomputed ratio does not map"
refuse counter-false 'd["spec"]["indicator"]["spec"]["ratioMetric"]["counter"] = False' "OpenSLO ratioMetric.counter: false does not map"
refuse label-name 'd["metadata"]["labels"]["app.kubernetes.io/name"] = "x"' 'OpenSLO metadata.labels: "app.kubernetes.io/name" is not a Prometheus label name'
refuse annotation-name 'd["metadata"]["annotations"]["example.com/dash"] = "x"' 'OpenSLO metadata.annotations: "example.com/dash" is not a label name'
refuse metadata-key 'd["metadata"]["namespace"] = "prod"' "field namespace not found in OpenSLO metadata"
refuse indicator-key 'd["spec"]["indicator"]["kind"] = "SLI"' "field kind not found in OpenSLO spec.indicator"
refuse timezone 'd["spec"]["timeWindow"] = [{"duration": "1M", "calendar": {"startTime": "2026-01-01 00:00:00", "timeZone": "America/New_York"}}]' "calendar.timeZone: infermon's calendar months are UTC"
refuse start-time 'd["spec"]["timeWindow"] = [{"duration": "1M", "calendar": {"startTime": "2026-01-15 12:30:00", "timeZone": "UTC"}}]' "calendar.startTime: the window is the calendar month"
refuse rolling-calendar 'd["spec"]["timeWindow"] = [{"duration": "1M", "isRolling": True, "calendar": {"timeZone": "UTC"}}]' "isRolling: true with a calendar"
refuse rolling-month 'd["spec"]["timeWindow"] = [{"duration": "1M", "isRolling": True}]' "a rolling 1M has no fixed length"
refuse calendar-quarter 'd["spec"]["timeWindow"] = [{"duration": "1Q", "calendar": {"timeZone": "UTC"}}]' "a calendar window maps only as 1M"
refuse service-labels 'd.clear(); d.update({"apiVersion": "openslo/v1", "kind": "Service", "metadata": {"name": "chat", "labels": {"team": "chat"}}, "spec": {}})' "OpenSLO Service metadata.labels: a Service makes no rules"
refuse window-key 'd["spec"]["timeWindow"] = [{"duration": "28d", "rolling": True}]' "field rolling not found in OpenSLO spec.timeWindow[0]"
echo "ok: OpenSLO keys that do not map are refused, naming the field"

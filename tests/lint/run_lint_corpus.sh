#!/usr/bin/env bash
# lint corpus: our own dashboards, rule files, PrometheusRule objects and Helm
# values written after the shapes of public ones (tests/lint/corpus), and
# excerpts of public ones (tests/lint/public, Apache-2.0, see its README), linted with
# the sources each was written for; every finding is scored against the verdicts
# in corpus/EXPECT (precision >= 0.98, recall >= 0.95, printed), every fix hint
# that is a query must parse; then --fix on a PrometheusRule, Helm values, a
# multi-document file and a dashboard with a template variable keeps the wrapper
# and the layout and leaves nothing mechanical to fix.
set -euo pipefail
B=${IM_BINARY:?IM_BINARY not set}
S=${IM_SOURCE_DIR:?IM_SOURCE_DIR not set}
L=$S/tests/lint
C=$S/catalog
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# 1. Precision and recall on the corpus, and on the excerpts of public files.
if /usr/bin/python3 "$L/corpus_score.py" "$B" "$S" "$T"; then ok; else bad "corpus score"; fi
if /usr/bin/python3 "$L/corpus_score.py" "$B" "$S" "$T" public; then ok; else bad "public score"; fi

# 2. --fix keeps the wrapper of a PrometheusRule, Helm values and a multi-document file.
for f in vllm-prometheusrule.yaml vllm-helm-values.yaml multi-doc.yaml dcgm-rules.yaml; do
    cp "$L/corpus/$f" "$T/$f"
done
cp "$L/corpus/vllm-v0-overview.json" "$L/corpus/dcgm-legacy.json" "$T/"
set +e
"$B" lint --fix --target "$C/vllm-sample.prom" "$T/vllm-prometheusrule.yaml" "$T/vllm-helm-values.yaml" \
    "$T/multi-doc.yaml" "$T/vllm-v0-overview.json" >"$T/fix1.txt" 2>&1
"$B" lint --fix --target "$C/dcgm-sample.prom" "$T/dcgm-rules.yaml" "$T/dcgm-legacy.json" >"$T/fix2.txt" 2>&1
set -e
for f in vllm-prometheusrule.yaml vllm-helm-values.yaml multi-doc.yaml dcgm-rules.yaml vllm-v0-overview.json dcgm-legacy.json; do
    a=$(wc -l <"$L/corpus/$f"); b=$(wc -l <"$T/$f")
    [ "$a" -eq "$b" ] && ok || bad "$f: --fix changed the number of lines ($a -> $b)"
done
grep -q '^kind: PrometheusRule$' "$T/vllm-prometheusrule.yaml" && grep -q '^  name: vllm-alerts$' "$T/vllm-prometheusrule.yaml" && ok || bad "PrometheusRule wrapper lost"
grep -q 'max by (model_name) (vllm:kv_cache_usage_perc) > 0.95' "$T/vllm-prometheusrule.yaml" && ok || bad "PrometheusRule rename not applied"
grep -q 'rate(vllm:num_preemptions_total\[10m\])' "$T/vllm-prometheusrule.yaml" && ok || bad "PrometheusRule _total not applied"
grep -q 'vllm:inter_token_latency_seconds_bucket' "$T/vllm-helm-values.yaml" && grep -q '^additionalPrometheusRulesMap:$' "$T/vllm-helm-values.yaml" && ok || bad "Helm values fix"
grep -q '^kind: Service$' "$T/multi-doc.yaml" && [ "$(grep -c '^---$' "$T/multi-doc.yaml")" -eq 2 ] && ok || bad "multi-document file: documents lost"
if grep -q 'label_values(vllm:kv_cache_usage_perc, model_name)' "$T/vllm-v0-overview.json" && ! grep -q 'gpu_cache_usage_perc' "$T/vllm-v0-overview.json"; then ok; else bad "template variable (query and definition) not fixed"; fi
if grep -q 'DCGM_FI_DEV_GPU_UTIL' "$T/dcgm-legacy.json" && grep -q 'DCGM_FI_DEV_GPU_TEMP' "$T/dcgm-rules.yaml" && ! grep -q 'dcgm_fb_used\|dcgm_fi_dev' "$T/dcgm-legacy.json"; then ok; else bad "dcgm 1.x / lower-case names not fixed"; fi
/usr/bin/python3 -c 'import json,sys; [json.load(open(p)) for p in sys.argv[1:]]' "$T/vllm-v0-overview.json" "$T/dcgm-legacy.json" && ok || bad "fixed dashboards are not JSON"
# What is left after --fix: only findings without a mechanical fix.
set +e
"$B" lint --output json --target "$C/vllm-sample.prom" "$T/vllm-prometheusrule.yaml" "$T/vllm-helm-values.yaml" "$T/multi-doc.yaml" "$T/vllm-v0-overview.json" >"$T/left.json"
set -e
left=$(/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(1 for f in d["findings"] if f["fixed_expr"]) + sum(1 for f in d["findings"] if f["check"] == "input"))' "$T/left.json")
[ "$left" -eq 0 ] && ok || bad "after --fix, $left mechanical fixes or input errors remain"

# 3. A file with no rule groups anywhere is still an input error; an empty document is not.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n' >"$T/cm.yaml"
set +e; "$B" lint "$T/cm.yaml" >"$T/cm.txt" 2>&1; rc=$?; set -e
[ "$rc" -eq 1 ] && grep -q 'error\[input\]: not a rule file' "$T/cm.txt" && ok || bad "ConfigMap without rules: exit $rc"
printf -- '---\ngroups: []\n---\n' >"$T/empty.yaml"
set +e; "$B" lint "$T/empty.yaml" >"$T/empty.txt" 2>&1; rc=$?; set -e
[ "$rc" -eq 0 ] && ok || { bad "empty groups file: exit $rc"; cat "$T/empty.txt"; }
printf 'spec:\n  groups:\n    - name: g\n      rules:\n        - alert: A\n          expr: sum(\n' >"$T/syn.yaml"
set +e; "$B" lint --output json "$T/syn.yaml" >"$T/syn.json" 2>&1; rc=$?; set -e
[ "$rc" -eq 1 ] && grep -q '"check": "syntax"' "$T/syn.json" && grep -q '"line": 6' "$T/syn.json" && ok || { bad "PrometheusRule-like syntax error: exit $rc"; cat "$T/syn.json"; }

# A leading (or trailing) "---" does not make a rule file multi-document.
printf -- '---\ngroups:\n  - name: g\n    rules:\n      - alert: A\n        expr: max(vllm:gpu_cache_usage_perc) > 0.9\n---\n' >"$T/lead.yml"
set +e; "$B" lint --target "$C/vllm-sample.prom" "$T/lead.yml" >"$T/lead.txt" 2>&1; set -e
grep -q 'lead.yml:6:15: groups\[0\] "g" rules\[0\] alert A: error\[removed-metric\]' "$T/lead.txt" && ok || { bad "leading ---"; cat "$T/lead.txt"; }

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

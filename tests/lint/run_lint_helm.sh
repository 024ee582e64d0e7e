#!/usr/bin/env bash
# lint on Helm-templated files and dashboards embedded in Kubernetes objects:
# a chart's templates/ (rules and a dashboard) and a rule file with Helm
# actions are linted with the actions replaced by same-length placeholders
# (positions are the file's), with a `template` info finding; Prometheus'
# own alert templates do not make a file a template; a template that cannot be
# read even so is an input error suggesting `helm template`; a ConfigMap
# (grafana sidecar) and a GrafanaDashboard (spec.json) have their dashboards
# linted at the expression's line, spec.url is an info finding; --fix edits
# the original text (actions and wrappers kept).
set -euo pipefail
B=${IM_BINARY:?IM_BINARY not set}
S=${IM_SOURCE_DIR:?IM_SOURCE_DIR not set}
F=$S/tests/lint/fixtures
V=$S/catalog/vllm-sample.prom
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
lintj() { # FILE... -> $T/out.json, rc in $rc
    set +e
    (cd "$F" && "$B" lint --output json --target "$V" "$@") >"$T/out.json" 2>"$T/err.txt"
    rc=$?
    set -e
}
q() { /usr/bin/python3 -c "import json,sys; d=json.load(open('$T/out.json')); f=d['findings']; $1"; }

# 1. A chart's templated PrometheusRule: the rename at the file's line:column of
#    the expression, the range placeholder parsed as a duration (bucket gap
#    found), no short-for on a templated for:, one template note.
lintj helm/templates/prometheusrule.yaml
[ "$rc" -eq 1 ] && ok || bad "chart rules: exit $rc"
q "sys.exit(0 if any(x['check']=='removed-metric' and x['line']==13 and x['column']==17 for x in f) else 1)" && ok || { bad "chart rules: removed-metric at 13:17"; cat "$T/out.json"; }
q "sys.exit(0 if any(x['check']=='bucket-gap-threshold' and 'VLLMWindow' in x['location'] for x in f) else 1)" && ok || bad "chart rules: the [{{ .Values.window }}] rule not linted"
q "sys.exit(0 if [x['check'] for x in f if x['check']=='template']==['template'] and not any(x['check'] in ('syntax','short-for','input','unknown-metric') for x in f) else 1)" && ok || { bad "chart rules: template note / noise"; cat "$T/out.json"; }
q "sys.exit(0 if any(x['check']=='template' and 'Chart.yaml' in x['message'] and 'helm template' in x['message'] for x in f) else 1)" && ok || bad "chart rules: template note text"

# 2. Helm actions without a chart; names built by an action are not judged.
lintj helm-values-template.yaml
q "sys.exit(0 if sorted(x['check'] for x in f)==['missing-total','template'] else 1)" && ok || { bad "helm actions without a chart"; cat "$T/out.json"; }
q "sys.exit(0 if any(x['check']=='missing-total' and x['line']==6 and x['column']==15 and '{{…}}' in x['location'] for x in f) else 1)" && ok || bad "helm actions: position / location"

# 3. Prometheus' own templates ({{ \$labels.x }}, {{ if }}) are not Helm.
lintj prometheus-annotations.yaml
[ "$rc" -eq 0 ] && q "sys.exit(0 if not f else 1)" && ok || { bad "plain rule file with annotations: findings"; cat "$T/out.json"; }

# 4. Unreadable even with the actions replaced: input error naming helm template.
lintj helm-broken.yaml
[ "$rc" -eq 1 ] && q "sys.exit(0 if any(x['check']=='input' and 'helm template' in x['message'] and x['line']==6 for x in f) else 1)" && ok || { bad "broken template"; cat "$T/out.json"; }

# 5. A templated dashboard in a chart: JSON with actions outside strings.
lintj helm/templates/dashboard.json
q "sys.exit(0 if sorted(x['check'] for x in f)==['removed-metric','template'] else 1)" && ok || { bad "templated dashboard"; cat "$T/out.json"; }

# 6. ConfigMap (sidecar) and GrafanaDashboard (spec.json, spec.url).
lintj dashboards-k8s.yaml
q "sys.exit(0 if any(x['check']=='removed-metric' and x['line']==13 and x['column']==32 and x['location'].startswith('doc[0].data[\"vllm.json\"] panels[0]') for x in f) else 1)" && ok || { bad "ConfigMap dashboard"; cat "$T/out.json"; }
q "sys.exit(0 if any(x['check']=='missing-total' and x['line']==23 and 'spec.json' in x['location'] for x in f) else 1)" && ok || bad "GrafanaDashboard spec.json"
q "sys.exit(0 if any(x['check']=='external-dashboard' and 'spec.url' in x['location'] for x in f) and any(x['check']=='hardcoded-datasource' for x in f) else 1)" && ok || bad "spec.url note / datasource uid"

# 7. --fix on the templated chart file and the ConfigMap: original text kept.
mkdir -p "$T/c/templates"
cp "$F/helm/Chart.yaml" "$T/c/"
cp "$F/helm/templates/prometheusrule.yaml" "$T/c/templates/"
cp "$F/dashboards-k8s.yaml" "$T/"
set +e
"$B" lint --fix --target "$V" "$T/c/templates/prometheusrule.yaml" "$T/dashboards-k8s.yaml" >"$T/fix.txt" 2>&1
set -e
grep -q 'vllm:kv_cache_usage_perc{namespace="{{ .Release.Namespace }}"}' "$T/c/templates/prometheusrule.yaml" && grep -q '{{- toYaml . | nindent 8 }}' "$T/c/templates/prometheusrule.yaml" && ok || { bad "--fix on a template"; cat "$T/fix.txt"; }
grep -q '"max(vllm:kv_cache_usage_perc)"' "$T/dashboards-k8s.yaml" && grep -q 'vllm:num_preemptions_total\[5m\]' "$T/dashboards-k8s.yaml" && grep -q 'grafana_dashboard: "1"' "$T/dashboards-k8s.yaml" && ok || { bad "--fix on embedded dashboards"; cat "$T/fix.txt"; }
[ "$(wc -l <"$T/dashboards-k8s.yaml")" -eq "$(wc -l <"$F/dashboards-k8s.yaml")" ] && ok || bad "--fix changed the line count"

# 8. A ConfigMap with neither rules nor dashboards is still not a rule file.
printf 'apiVersion: v1\nkind: ConfigMap\ndata:\n  app.json: |\n    {"port": 8080}\n' >"$T/cm.yaml"
set +e; "$B" lint "$T/cm.yaml" >"$T/cm.txt" 2>&1; rc=$?; set -e
[ "$rc" -eq 1 ] && grep -q 'not a rule file' "$T/cm.txt" && ok || bad "ConfigMap without dashboards: exit $rc"

# 9. An empty YAML file is no rule file and no error (it used to loop forever).
: >"$T/empty.yaml"
set +e; timeout 20 "$B" lint "$T/empty.yaml" >"$T/empty.txt" 2>&1; rc=$?; set -e
[ "$rc" -eq 0 ] && ok || bad "empty YAML: exit $rc"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

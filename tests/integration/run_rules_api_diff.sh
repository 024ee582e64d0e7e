#!/usr/bin/env bash
# /api/v1/rules and /api/v1/alerts of `infermon run` against a real Prometheus
# (Debian's 2.42) loading the same rule file: after both have evaluated, the
# answers are the same JSON once the times (evaluationTime, lastEvaluation,
# activeAt) are set aside; the series the rules write (the recording rule,
# ALERTS, ALERTS_FOR_STATE) have the same labels and values.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
command -v prometheus >/dev/null || { echo "SKIP: prometheus not installed"; exit 0; }
pport=$(free_port); iport=$(free_port)
cat >"$IM_TMP/rules.yml" <<'YML'
groups:
  - name: rec
    interval: 1s
    rules:
      - record: job:one:sum
        expr: sum by (job) (label_replace(vector(1), "job", "x", "", ""))
        labels: {team: infra}
  - name: alerts
    interval: 1s
    limit: 0
    rules:
      - alert: Always
        expr: job:one:sum > 0
        labels: {severity: page, where: '{{ $labels.job }}'}
        annotations:
          summary: 'value {{ $value | printf "%.1f" }} for {{ $labels.job }}'
      - alert: Waiting
        expr: vector(2)
        for: 1h
        keep_firing_for: 5m
      - alert: Never
        expr: vector(1) == 2
YML
cat >"$IM_TMP/cfg.yml" <<'YML'
global: {evaluation_interval: 1s}
rule_files: [rules.yml]
YML
bg prometheus --config.file="$IM_TMP/cfg.yml" --storage.tsdb.path="$IM_TMP/prom" \
  --web.listen-address="127.0.0.1:$pport" --log.level=warn >"$IM_TMP/prom.log" 2>&1
bg "$IM_BINARY" run --promql.compat=2 --config.file="$IM_TMP/cfg.yml" --storage.memory-only \
  --web.listen-address="127.0.0.1:$iport" --log.level=warn >"$IM_TMP/infermon.log" 2>&1
wait_http "http://127.0.0.1:$pport/-/ready" 60 || { cat "$IM_TMP/prom.log"; fail "prometheus did not start"; }
wait_http "http://127.0.0.1:$iport/-/ready" 30 || { cat "$IM_TMP/infermon.log"; fail "infermon did not start"; }
sleep 4 # a few evaluations on both sides
norm() { # drop times; keep everything else
  $PY -c '
import json, sys
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items()
                if k not in ("evaluationTime", "lastEvaluation", "activeAt")}
    if isinstance(o, list):
        return [strip(x) for x in o]
    return o
d = json.load(sys.stdin)
if "groups" in d.get("data", {}):
    for g in d["data"]["groups"]:
        g["file"] = g["file"].rsplit("/", 1)[-1]
print(json.dumps(strip(d), indent=1, sort_keys=True))'
}
fail=0
for path in "api/v1/rules" "api/v1/rules?type=alert" "api/v1/rules?type=record" "api/v1/alerts"; do
  curl -fsS "http://127.0.0.1:$pport/$path" | norm >"$IM_TMP/p.json"
  curl -fsS "http://127.0.0.1:$iport/$path" | norm >"$IM_TMP/i.json"
  if ! diff -u "$IM_TMP/p.json" "$IM_TMP/i.json"; then echo "DIFF /$path"; fail=1; else echo "ok: /$path"; fi
done
qnorm() { # instant query result: sorted (labels, value), values of ALERTS_FOR_STATE dropped
  $PY -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
out = []
for x in r:
    v = x["value"][1] if x["metric"].get("__name__") != "ALERTS_FOR_STATE" else "<time>"
    out.append((sorted(x["metric"].items()), v))
print(json.dumps(sorted(out), indent=1))'
}
for q in 'job:one:sum' 'ALERTS' 'ALERTS_FOR_STATE'; do
  curl -fsS "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$q" | qnorm >"$IM_TMP/p.json"
  curl -fsS "http://127.0.0.1:$iport/api/v1/query" --data-urlencode "query=$q" | qnorm >"$IM_TMP/i.json"
  if ! diff -u "$IM_TMP/p.json" "$IM_TMP/i.json"; then echo "DIFF query $q"; fail=1; else echo "ok: query $q"; fi
done
# Group phase: both evaluate each group at the same offset within its interval
# (Prometheus derives it from a hash of the group's file and name).
phase() {
  curl -fsS "http://127.0.0.1:$1/api/v1/rules" | $PY -c '
import json, sys, datetime
for g in json.load(sys.stdin)["data"]["groups"]:
    t = g["lastEvaluation"].rstrip("Z")
    sec, _, frac = t.partition(".")
    print(g["name"], int((frac + "000")[:3]))'
}
phase "$pport" >"$IM_TMP/p.phase"; phase "$iport" >"$IM_TMP/i.phase"
$PY - "$IM_TMP/p.phase" "$IM_TMP/i.phase" <<'PYEND' || fail=1
import sys
p = dict(l.split() for l in open(sys.argv[1]))
i = dict(l.split() for l in open(sys.argv[2]))
for g in p:
    d = abs(int(p[g]) - int(i[g])) % 1000
    d = min(d, 1000 - d)
    ok = d <= 50  # Prometheus reports the wall time it started at
    print("%s: group %s evaluated at +%s ms (Prometheus) / +%s ms (infermon)" % ("ok" if ok else "DIFF", g, p[g], i[g]))
    if not ok:
        sys.exit(1)
PYEND
[ $fail = 0 ]

#!/usr/bin/env bash
# lint: the golden findings of an old-style vLLM dashboard and rule file against a
# V1 exposition (catalog/vllm-sample.prom); the correct-queries corpus, a correct
# dashboard and DOMAIN.md's rules against matching expositions (no false
# positives); JSON and GitHub outputs; exit codes; --fix (in place, diff, layout
# kept, still parses, re-lint has nothing left to fix); the catalog-only mode.
set -euo pipefail
B=${IM_BINARY:?IM_BINARY not set}
S=${IM_SOURCE_DIR:?IM_SOURCE_DIR not set}
F=$S/tests/lint/fixtures
C=$S/catalog
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
run() { # run <outfile> <args...>: captures stdout, returns the exit code in $rc
    local out=$1; shift
    set +e; "$B" "$@" >"$out" 2>"$out.err"; rc=$?; set -e
}
MATCH=(--target "$C/vllm-sample.prom" --target "$C/dcgm-sample.prom" --target "$C/kueue-sample.prom" --target "$F/join-sample.prom")

cd "$F"

# 1. Golden: old-style dashboard and rules against a V1 exposition.
run "$T/golden.txt" lint --target "$C/vllm-sample.prom" old-vllm-dashboard.json old-vllm-rules.yml
[ "$rc" -eq 1 ] && ok || bad "golden: exit $rc, want 1"
if diff -u "$S/tests/lint/golden/old-vllm-v1.txt" "$T/golden.txt"; then ok; else bad "golden text differs"; fi

# 2. No false positives: correct corpus, correct dashboard, DOMAIN.md rules.
run "$T/clean.txt" lint "${MATCH[@]}" correct-queries.txt correct-dashboard.json
[ "$rc" -eq 0 ] && ok || bad "correct corpus: exit $rc"
if tail -1 "$T/clean.txt" | grep -q '^0 errors, 0 warnings, 0 info in'; then ok; else bad "correct corpus not clean:"; cat "$T/clean.txt"; fi
n=$(grep -cv '^\s*\(#\|$\)' correct-queries.txt)
if tail -1 "$T/clean.txt" | grep -q "in $((n + 11)) queries"; then ok; else bad "query count: $(tail -1 "$T/clean.txt") (corpus has $n + 11 dashboard targets)"; fi
run "$T/domain.txt" lint "${MATCH[@]}" domain-rules.yml
[ "$rc" -eq 0 ] && ok || bad "domain rules: exit $rc"
if [ "$(grep -c '^domain-rules.yml' "$T/domain.txt")" -eq 1 ] && grep -q 'warning\[bucket-gap-threshold\]: threshold 2 lies between the buckets 1 and 2.5' "$T/domain.txt"; then ok; else bad "domain rules: want exactly one bucket-gap-threshold"; cat "$T/domain.txt"; fi

# 3. JSON: valid, stable schema, same findings as the text.
run "$T/out.json" lint --output json --target "$C/vllm-sample.prom" old-vllm-dashboard.json old-vllm-rules.yml
[ "$rc" -eq 1 ] && ok || bad "json exit $rc"
if "$PY" - "$T/out.json" "$T/golden.txt" <<'PYEOF'
import json, sys, re
d = json.load(open(sys.argv[1]))
assert d["schema"] == "infermon-lint/v1"
assert d["sources"]["kind"] == "exposition"
assert d["sources"]["vllm_version"] == "~v0.20.0", d["sources"]
keys = ["check", "severity", "file", "line", "column", "location", "expr", "start", "end", "message", "fix", "fixed_expr"]
for f in d["findings"]:
    assert list(f.keys()) == keys, f.keys()
    assert f["severity"] in ("error", "warning", "info")
text = open(sys.argv[2]).read()
want = re.findall(r": (error|warning|info)\[([a-z-]+)\]: ", text)
got = [(f["severity"], f["check"]) for f in d["findings"]]
assert want == got, (want, got)
s = d["summary"]
assert s["error"] == sum(1 for f in got if f[0] == "error")
PYEOF
then ok; else bad "json schema"; fi

# 4. GitHub annotations.
run "$T/gh.txt" lint --output github --target "$C/vllm-sample.prom" old-vllm-rules.yml
if grep -q '^::error file=old-vllm-rules.yml,line=13,col=15,title=infermon lint removed-metric::' "$T/gh.txt" &&
   grep -q '^::warning file=old-vllm-rules.yml,line=8,col=15,title=infermon lint bucket-gap-threshold::' "$T/gh.txt"; then ok; else bad "github output"; cat "$T/gh.txt"; fi

# 5. Exit codes: 2 when lint cannot run.
run "$T/e.txt" lint --target "$T/does-not-exist.prom" old-vllm-rules.yml
[ "$rc" -eq 2 ] && ok || bad "missing target: exit $rc"
run "$T/e.txt" lint --output yaml old-vllm-rules.yml
[ "$rc" -eq 2 ] && ok || bad "bad --output: exit $rc"
run "$T/e.txt" lint
[ "$rc" -eq 2 ] && ok || bad "no file: exit $rc"
run "$T/e.txt" lint "$T/nope.yml"
[ "$rc" -eq 2 ] && ok || bad "unreadable file: exit $rc"
run "$T/e.txt" lint --prometheus http://127.0.0.1:1 old-vllm-rules.yml
[ "$rc" -eq 2 ] && ok || bad "unreachable prometheus: exit $rc"

# 6. Catalog mode says so; versions matter.
run "$T/cat.txt" lint correct-queries.txt
[ "$rc" -eq 0 ] && ok || bad "catalog mode exit $rc"
if head -1 "$T/cat.txt" | grep -q '^note: no --target or --prometheus given: names checked against the catalog for vLLM v0.27.1'; then ok; else bad "catalog note"; fi
printf 'max(vllm:gpu_cache_usage_perc)\n' >"$T/q.txt"
run "$T/v.txt" lint --vllm-version 0.10.0 "$T/q.txt"
grep -q 'warning\[deprecated-metric\]' "$T/v.txt" && [ "$rc" -eq 0 ] && ok || bad "deprecated at 0.10.0"
run "$T/v.txt" lint --vllm-version 0.8.5 "$T/q.txt"
[ "$(tail -1 "$T/v.txt")" = "0 errors, 0 warnings, 0 info in 1 query" ] && ok || bad "current at 0.8.5: $(tail -1 "$T/v.txt")"
run "$T/v.txt" lint --vllm-version 0.12.0 "$T/q.txt"
grep -q 'error\[removed-metric\]: vllm:gpu_cache_usage_perc is not exposed by vLLM v0.12.0' "$T/v.txt" && [ "$rc" -eq 1 ] && ok || bad "removed at 0.12.0"

# 7. --fix: in place, a diff, comments and key order kept, still parses, nothing fixable left.
cp old-vllm-dashboard.json old-vllm-rules.yml "$T/"
( cd "$T" && set +e; "$B" lint --fix --target "$C/vllm-sample.prom" old-vllm-dashboard.json old-vllm-rules.yml >fix.txt 2>&1; echo $? >fix.rc )
grep -q '^fixed 8 names$' "$T/fix.txt" && ok || bad "fix count: $(grep fixed "$T/fix.txt")"
[ "$(grep -c '^-        expr: max by (model_name) (vllm:gpu_cache_usage_perc) > 0.9   # V0 name$' "$T/fix.txt")" -eq 1 ] && ok || bad "diff of the rule file"
grep -q '^        expr: max by (model_name) (vllm:kv_cache_usage_perc) > 0.9   # V0 name$' "$T/old-vllm-rules.yml" && ok || bad "rule comment kept"
if [ "$(diff old-vllm-rules.yml "$T/old-vllm-rules.yml" | grep -c '^<')" -eq 3 ]; then ok; else bad "rule file: only 3 lines may change"; fi
if [ "$(diff old-vllm-dashboard.json "$T/old-vllm-dashboard.json" | grep -c '^<')" -eq 5 ]; then ok; else bad "dashboard: only 5 lines may change"; fi
if "$PY" - old-vllm-dashboard.json "$T/old-vllm-dashboard.json" <<'PYEOF'
import json, sys
def keys(o, acc):
    if isinstance(o, list):
        for x in o: keys(x, acc)
    elif isinstance(o, dict):
        acc.append(list(o.keys()))
        for v in o.values(): keys(v, acc)
    return acc
a = json.load(open(sys.argv[1]), object_pairs_hook=dict)
b = json.load(open(sys.argv[2]), object_pairs_hook=dict)
assert keys(a, []) == keys(b, []), "key order changed"
PYEOF
then ok; else bad "fixed dashboard does not parse or key order changed"; fi
if command -v promtool >/dev/null; then
    if promtool check rules "$T/old-vllm-rules.yml" >/dev/null 2>&1; then ok; else bad "promtool rejects the fixed rules"; promtool check rules "$T/old-vllm-rules.yml" || true; fi
fi
run "$T/refix.json" lint --output json --target "$C/vllm-sample.prom" "$T/old-vllm-dashboard.json" "$T/old-vllm-rules.yml"
if "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
left = [f for f in d["findings"] if f["fixed_expr"] or f["check"] in ("missing-total", "syntax")]
assert not left, left
' "$T/refix.json"; then ok; else bad "re-lint after --fix still has fixable findings"; fi

# 8. range-too-short from a prometheus.yml (--config) and from --scrape-interval.
printf 'global:\n  scrape_interval: 1m\nscrape_configs:\n  - job_name: vllm\n    static_configs: [{targets: [\x27localhost:8000\x27]}]\n' >"$T/prometheus.yml"
printf '%s\n' 'rate(vllm:num_preemptions_total[1m])' 'rate(vllm:num_preemptions_total[2m])' >"$T/r.txt"
run "$T/r.out" lint --config "$T/prometheus.yml" --target "$C/vllm-sample.prom" "$T/r.txt"
if [ "$rc" -eq 0 ] && [ "$(grep -c 'warning\[range-too-short\]' "$T/r.out")" -eq 1 ] &&
   grep -q 'r.txt:1:1: warning\[range-too-short\]: the range \[1m\] holds fewer than two samples at a 1m scrape interval' "$T/r.out"; then ok; else bad "--config range-too-short"; cat "$T/r.out"; fi
run "$T/r2.out" lint --scrape-interval 15s --target "$C/vllm-sample.prom" "$T/r.txt"
[ "$(tail -1 "$T/r2.out")" = "0 errors, 0 warnings, 0 info in 2 queries" ] && ok || bad "--scrape-interval 15s: $(tail -1 "$T/r2.out")"
printf 'global: [\n' >"$T/bad.yml"
run "$T/r3.out" lint --config "$T/bad.yml" "$T/r.txt"
[ "$rc" -eq 2 ] && ok || bad "bad --config: exit $rc"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

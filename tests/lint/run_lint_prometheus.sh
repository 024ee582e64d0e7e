#!/usr/bin/env bash
# lint --prometheus against a real Prometheus 2.42 (started here on 127.0.0.1)
# scraping a /usr/bin/python3 prometheus_client target that serves the families of
# catalog/vllm-sample.prom: names, series labels, metadata and the scrape interval
# come from Prometheus' HTTP API.
set -euo pipefail
B=${IM_BINARY:?IM_BINARY not set}
S=${IM_SOURCE_DIR:?IM_SOURCE_DIR not set}
F=$S/tests/lint/fixtures
PY=/usr/bin/python3
if ! command -v prometheus >/dev/null || ! "$PY" -c 'import prometheus_client' 2>/dev/null; then
    echo "SKIP: prometheus or python3-prometheus-client missing (scripts/install-deps.sh installs them)"
    echo "0 passed, 0 failed"
    exit 0
fi
. "$S/tests/lib/common.sh" # cleanup on exit, free_port
T=$IM_TMP
PT=$(free_port)
PP=$(free_port)

cat >"$T/target.py" <<'PYEOF'
import sys, time
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[2]).read()
class Sample:
    def collect(self):
        return list(text_string_to_metric_families(text))
reg = CollectorRegistry()
reg.register(Sample())
start_http_server(int(sys.argv[1]), addr="127.0.0.1", registry=reg)
time.sleep(float(sys.argv[3]))
PYEOF
"$PY" "$T/target.py" "$PT" "$S/catalog/vllm-sample.prom" 120 &
IM_PIDS+=($!)
cat >"$T/prometheus.yml" <<EOF2
global:
  scrape_interval: 15s
scrape_configs:
  - job_name: vllm
    scrape_interval: 1s
    static_configs:
      - targets: ['127.0.0.1:$PT']
EOF2
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/data" \
    --web.listen-address="127.0.0.1:$PP" --log.level=warn >"$T/prom.log" 2>&1 &
IM_PIDS+=($!)
URL="http://127.0.0.1:$PP"
for _ in $(seq 1 60); do
    # capture first: under pipefail, grep -q exiting early makes curl fail with SIGPIPE
    ser=$(curl -sf "$URL/api/v1/series?match%5B%5D=vllm:num_requests_running" 2>/dev/null || true)
    meta=$(curl -sf "$URL/api/v1/metadata" 2>/dev/null || true)
    if [[ $ser == *model_name* && $meta == *vllm:num_preemptions* ]]; then
        break
    fi
    sleep 0.5
done

pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

cd "$F"
# The vLLM part of the correct corpus, plus queries that need Prometheus' labels.
grep -v 'DCGM\|kueue\|kube_\|node_\|^up\|^\s*#\|^\s*$' correct-queries.txt >"$T/vllm-correct.txt"
printf '%s\n' 'sum by (job, instance) (vllm:num_requests_running)' \
    'count by (job) (up)' >>"$T/vllm-correct.txt"
set +e
"$B" lint --prometheus "$URL" "$T/vllm-correct.txt" >"$T/clean.txt" 2>&1
rc=$?
set -e
[ "$rc" -eq 0 ] && ok || bad "correct vLLM queries: exit $rc"
if tail -1 "$T/clean.txt" | grep -q '^0 errors, 0 warnings, 0 info in'; then ok; else bad "correct vLLM queries not clean"; cat "$T/clean.txt"; fi

set +e
"$B" lint --output json --prometheus "$URL" old-vllm-dashboard.json old-vllm-rules.yml >"$T/old.json" 2>"$T/old.err"
rc=$?
set -e
[ "$rc" -eq 1 ] && ok || bad "old dashboard: exit $rc"; cat "$T/old.err"
if "$PY" - "$T/old.json" <<'PYEOF'
import json, sys, collections
d = json.load(open(sys.argv[1]))
assert d["sources"]["kind"] == "prometheus", d["sources"]
c = collections.Counter(f["check"] for f in d["findings"])
assert c["removed-metric"] == 10, c
assert c["missing-total"] == 2, c
assert c["rate-on-gauge"] == 1, c
assert c["unknown-label"] == 1, c
assert c["bucket-gap-threshold"] == 1, c
assert c["top-bucket"] == 1, c
msgs = [f["message"] for f in d["findings"] if f["check"] == "removed-metric"]
assert any("vllm:gpu_cache_usage_perc is not exposed by the sources (vLLM ~v0.20.0 or newer)" in m for m in msgs), msgs
PYEOF
then ok; else bad "old dashboard findings via Prometheus"; cat "$T/old.json" | grep -E "\"(check|message)\"" | head -80; fi

# range-too-short from the job's scrape interval (1s) read from /api/v1/status/config.
printf '%s\n' 'rate(vllm:num_preemptions_total[1s])' 'rate(vllm:num_preemptions_total[5s])' >"$T/range.txt"
set +e
"$B" lint --prometheus "$URL" "$T/range.txt" >"$T/range.out" 2>&1
set -e
if grep -q 'line 1\|range.txt:1:1: warning\[range-too-short\]: the range \[1s\] holds fewer than two samples at a 1s scrape interval' "$T/range.out" &&
   [ "$(grep -c 'range-too-short' "$T/range.out")" -eq 1 ]; then ok; else bad "range-too-short"; cat "$T/range.out"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

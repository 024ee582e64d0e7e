#!/usr/bin/env bash
# lint against the simulator's live endpoints (`infermon simulate`): the V1
# profile (vLLM 0.27.1 with dcgm-exporter and Kueue) keeps the correct corpus,
# dashboard and DOMAIN.md rules free of false positives and flags the old
# dashboard's names; the V0 profile (vLLM 0.6.4) accepts the V0 names and says
# that the V1 names came later, with the old name to use.
set -euo pipefail
B=${IM_BINARY:?IM_BINARY not set}
S=${IM_SOURCE_DIR:?IM_SOURCE_DIR not set}
F=$S/tests/lint/fixtures
PY=/usr/bin/python3
if ! "$B" simulate --help >/dev/null 2>&1; then
    echo "SKIP: this build has no 'infermon simulate'"
    echo "0 passed, 0 failed"
    exit 0
fi
. "$S/tests/lib/common.sh" # cleanup on exit, free_port
T=$IM_TMP
P1=$(free_port)
P0=$(free_port)
"$B" simulate --listen "127.0.0.1:$P1" --vllm-version 0.27.1 --duration 120s >"$T/sim1.log" 2>&1 &
IM_PIDS+=($!)
"$B" simulate --listen "127.0.0.1:$P0" --vllm-version 0.6.4 --duration 120s >"$T/sim0.log" 2>&1 &
IM_PIDS+=($!)
for _ in $(seq 1 50); do
    curl -sf "http://127.0.0.1:$P1/kueue/metrics" >/dev/null 2>&1 && curl -sf "http://127.0.0.1:$P0/pods/0/metrics" >/dev/null 2>&1 && break
    sleep 0.2
done
U1=http://127.0.0.1:$P1
U0=http://127.0.0.1:$P0
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
lint() { # lint <out> args...
    local out=$1; shift
    set +e; "$B" lint "$@" >"$out" 2>&1; rc=$?; set -e
}
cd "$F"

# V1 profile: the correct corpus and dashboard are clean, DOMAIN.md's rules give one warning.
V1=(--target "$U1/pods/0/metrics" --target "$U1/nodes/0/metrics" --target "$U1/kueue/metrics" --target join-sample.prom)
lint "$T/v1.txt" "${V1[@]}" correct-queries.txt correct-dashboard.json
[ "$rc" -eq 0 ] && ok || bad "V1 correct corpus: exit $rc"
if tail -1 "$T/v1.txt" | grep -q '^0 errors, 0 warnings, 0 info'; then ok; else bad "V1 correct corpus not clean"; cat "$T/v1.txt"; fi
lint "$T/v1d.txt" "${V1[@]}" domain-rules.yml
[ "$(tail -1 "$T/v1d.txt")" = "0 errors, 1 warning, 0 info in 2 queries" ] && ok || bad "V1 domain rules: $(tail -1 "$T/v1d.txt")"
lint "$T/v1o.txt" --target "$U1/pods/0/metrics" old-vllm-rules.yml
[ "$rc" -eq 1 ] && ok || bad "V1 old rules: exit $rc"
[ "$(grep -c 'error\[removed-metric\]' "$T/v1o.txt")" -eq 3 ] && ok || bad "V1 old rules: want 3 removed-metric"; 
grep -q 'error\[removed-metric\]: vllm:gpu_cache_usage_perc is not exposed by the sources (vLLM' "$T/v1o.txt" && ok || bad "V1: gpu_cache_usage_perc"

# V0 profile: V0 names are fine, V1 names are "added later" with the old name to use.
printf '%s\n' 'max by (model_name) (vllm:gpu_cache_usage_perc)' 'sum(vllm:num_requests_swapped)' \
    'max by (model_name) (vllm:kv_cache_usage_perc)' >"$T/v0.txt"
lint "$T/v0.out" --target "$U0/pods/0/metrics" "$T/v0.txt"
[ "$rc" -eq 1 ] && ok || bad "V0: exit $rc"
[ "$(grep -c '^[^ ].*\(error\|warning\|info\)\[' "$T/v0.out")" -eq 1 ] && ok || bad "V0: want exactly one finding"; 
grep -q 'error\[unknown-metric\]: vllm:kv_cache_usage_perc was added in vLLM v0.9.2; the sources run an older vLLM' "$T/v0.out" &&
    grep -q 'fix: use vllm:gpu_cache_usage_perc on this version' "$T/v0.out" && ok || { bad "V0: kv_cache_usage_perc"; cat "$T/v0.out"; }

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# client-timeouts first, at the default thresholds: bursts over a small batch
# limit make requests wait longer than impatient clients allow, and no queue
# cause holds now; raised thresholds of llm.doctor: from --config.file
# (abort_ratio, timeout_queue_seconds) make it no finding, and their errors name
# the key. kv-pressure's aborts after its long queue are found at the defaults
# too (after kv-saturation, the queue's cause).
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
cat >"$IM_TMP/impatient.yml" <<'YML'
base: healthy
set: {rate: 20, max_num_seqs: 64, patience_s: 10, patience_sigma: 1}
YML
cat >"$IM_TMP/infermon.yml" <<'YML'
llm:
  doctor:
    abort_ratio: 0.05
    timeout_queue_seconds: 5
YML
doc_store s --scenario "$IM_TMP/impatient.yml"
doc_run s
doc_check "$IM_TMP/s.json" client-timeouts requests_failed queue_time
# with raised thresholds (5 % aborts, 5 s queue) it is not a finding
doc_run s --config.file "$IM_TMP/infermon.yml"
if grep -q '"cause":"client-timeouts","severity":"\(warning\|critical\)"' "$IM_TMP/s.json"; then
  fail "client-timeouts with abort_ratio 0.05 and timeout_queue_seconds 5"
fi
doc_store kv --scenario kv-pressure
doc_run kv
$PY - "$IM_TMP/kv.json" <<'PYEOF' || fail "kv-pressure: client-timeouts at the defaults"
import json, sys
fs = [(f["cause"], f["severity"]) for f in json.load(open(sys.argv[1]))["findings"]]
print(fs)
assert fs[0][0] == "kv-saturation", fs
assert ("client-timeouts", "warning") in fs or ("client-timeouts", "critical") in fs, fs
PYEOF
printf 'llm:\n  doctor:\n    abort_ratio: 2\n' >"$IM_TMP/bad.yml"
set +e
"$IM_BINARY" doctor --storage.tsdb.path "$IM_TMP/s" --config.file "$IM_TMP/bad.yml" 2>"$IM_TMP/bad.err"
rc=$?
set -e
[ $rc = 2 ] && grep -q "llm.doctor.abort_ratio must be a number in (0, 1]" "$IM_TMP/bad.err" \
  || { cat "$IM_TMP/bad.err"; fail "bad llm.doctor value: rc $rc"; }
grep -q ":4:" "$IM_TMP/bad.err" || grep -q "3:" "$IM_TMP/bad.err" || { cat "$IM_TMP/bad.err"; fail "no position"; }
echo "ok: client-timeouts"

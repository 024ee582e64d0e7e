#!/usr/bin/env bash
# Scenario files that combine causes rank them correctly (the one-after-another
# and one-of-two-models cases are in run_doctor_prometheus.sh, over both
# backends): a cause on some pods only (pod 2 of 4 admits one request a second
# under four times the traffic) is load-imbalance naming that pod; a cause that
# ended before the window's recent part (kv-pressure, then healthy again) is
# reported resolved (info, not current), below anything current.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
cat >"$IM_TMP/some.yml" <<'YML'
base: healthy
events:
  - at: 0s
    pods: "2"
    set: {rate: 20, admit_per_s: 1}
YML
PODS=4 doc_store some --scenario "$IM_TMP/some.yml"
doc_run some
doc_check "$IM_TMP/some.json" load-imbalance
$PY - "$IM_TMP/some.json" <<'PYEOF' || fail "some pods only"
import json, sys
d = json.load(open(sys.argv[1]))
f = d["findings"][0]
assert len(f["pods"]) == 1, f["pods"]
print("ok: load-imbalance on", f["pods"])
PYEOF
cat >"$IM_TMP/over.yml" <<'YML'
base: kv-pressure
events:
  - at: 10m
    scenario: healthy
YML
doc_store over --scenario "$IM_TMP/over.yml"
doc_run over
$PY - "$IM_TMP/over.json" <<'PYEOF' || fail "a cause that ended"
import json, sys
fs = [(f["cause"], f["severity"], f["current"]) for f in json.load(open(sys.argv[1]))["findings"]]
print(fs)
kv = [f for f in fs if f[0] == "kv-saturation"]
assert kv and kv[0][1] == "info" and not kv[0][2], fs
i = fs.index(kv[0])
assert all(f[1] == "info" for f in fs[i:]), fs
PYEOF
echo "ok: combined scenarios"

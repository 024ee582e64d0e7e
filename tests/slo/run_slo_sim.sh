#!/usr/bin/env bash
# SLO attainment on the simulator (errors scenario: aborts, engine errors and
# slow first tokens) equals the simulator's own ground truth: TTFT requests
# within the threshold / all (the truth's per-bound counts), and requests
# finished without abort or error / all; `slo status` reports the alerts that
# fire and goodput; `slo check` against the store reads le from the series.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
END=2026-08-25T12:00:00Z
"$IM_BINARY" simulate --history 2h --step 15s --tick 15s --pods 2 --end "$END" --seed 3 \
  --scenario errors --out "$IM_TMP/past.om" --ground-truth "$IM_TMP/truth.json" 2>"$IM_TMP/sim.err" \
  || { cat "$IM_TMP/sim.err"; fail "simulate"; }
"$IM_BINARY" tsdb import --format openmetrics "$IM_TMP/past.om" "$IM_TMP/st" >"$IM_TMP/imp" 2>&1 \
  || { tail -5 "$IM_TMP/imp"; fail "tsdb import"; }
cat >"$IM_TMP/slos.yml" <<'YML'
slos:
  - name: ttft
    model: meta-llama/Llama-3.1-8B-Instruct
    sli: latency
    signal: ttft
    threshold: 1s
    objective: 99
    window: 3d
  - name: e2e
    model: meta-llama/Llama-3.1-8B-Instruct
    signal: e2e
    objective: "p90 < 20s"
    window: 7d
  - name: avail
    model: meta-llama/Llama-3.1-8B-Instruct
    sli: availability
    objective: 99.5
    window: 3d
YML
"$IM_BINARY" slo check "$IM_TMP/slos.yml" --storage.tsdb.path "$IM_TMP/st" >"$IM_TMP/check.out" \
  2>&1 || { cat "$IM_TMP/check.out"; fail "slo check against the store"; }
grep -q "SUCCESS: 3 SLOs checked against local" "$IM_TMP/check.out" || fail "$(cat "$IM_TMP/check.out")"
set +e
"$IM_BINARY" slo status "$IM_TMP/slos.yml" --storage.tsdb.path "$IM_TMP/st" --at "$END" \
  --output json >"$IM_TMP/status.json" 2>"$IM_TMP/status.err"
rc=$?
set -e
[ "$rc" = 0 ] || { cat "$IM_TMP/status.err"; fail "slo status exited $rc"; }
$PY - "$IM_TMP/status.json" "$IM_TMP/truth.json" <<'PYEOF'
import json, sys
st = json.load(open(sys.argv[1]))["data"] if "data" in json.load(open(sys.argv[1])) else json.load(open(sys.argv[1]))
truth = json.load(open(sys.argv[2]))
m = [x for x in truth["models"] if x["model"] == "meta-llama/Llama-3.1-8B-Instruct"][0]
def within(hist, thr):
    c = {str(float(b["le"])) if b["le"] != "+Inf" else "+Inf": b["count"] for b in m[hist]}
    return c[str(float(thr))] / c["+Inf"]
pods = [p for p in truth["pods"] if p["model"] == m["model"]]
req = sum(sum(p["requests"].values()) for p in pods)
bad = sum(p["requests"]["abort"] + p["requests"]["error"] for p in pods)
want = {"ttft": within("ttft_seconds", 1), "e2e": within("e2e_seconds", 20), "avail": 1 - bad / req}
got = {s["name"]: s for s in st["slos"]}
for name, w in want.items():
    a = got[name]["attainment"]
    if a is None or abs(a - w) > 1e-9:
        sys.exit("FAIL: %s attainment %s, ground truth %s" % (name, a, w))
    obj = got[name]["objective"]
    b = got[name]["error_budget_remaining"]
    if abs(b - (1 - (1 - w) / (1 - obj))) > 1e-6:
        sys.exit("FAIL: %s budget %s" % (name, b))
    print("ok: %s attainment %.6f = ground truth %.6f" % (name, a, w))
s = got["avail"]
assert s["sli"] == "availability" and s["signal"] is None and s["threshold_seconds"] is None, s
assert set(s["burn_rates"]) == {"5m", "30m", "1h", "2h", "6h", "1d", "3d"}, s["burn_rates"]
# errors scenario: ~28 % of requests fail, far above a 0.5 % budget: both alerts fire
assert {(a["severity"], a["firing"]) for a in s["alerts"]} == {("page", True), ("ticket", True)}, s["alerts"]
assert got["ttft"]["threshold_seconds"] == 1 and got["e2e"]["objective"] == 0.9, got["e2e"]
gp = st["goodput"]
assert len(gp) == 1 and gp[0]["model"] == m["model"] and gp[0]["requests_per_second"] > 0, gp
print("ok: alerts", s["alerts"], "goodput", gp)
PYEOF

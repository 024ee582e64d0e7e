#!/usr/bin/env bash
# One model served by both vLLM and SGLang is two groups in `infermon top`
# (the issue: one row per engine/replica, grouped by model, on vLLM and SGLang):
# the simulator serves model-a on vLLM (pods 0, 3) and on SGLang (pods 1, 4)
# and model-b on vLLM (pods 2, 5) (`--models model-a,model-a,model-b --engine
# vllm,sglang,vllm`: engines cycle over the models list). `top --once --output
# json` must give model-a twice, kind vllm and kind sglang, each with only its
# own two replicas, its merged queue the sum of its replicas' (not the other
# engine's), and its percentiles histogram_quantile over its own engine's
# buckets (check_top_quantiles.py per kind); the screen shows both groups with
# their kind.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
sport=$(free_port)
bg "$IM_BINARY" simulate --listen "127.0.0.1:$sport" --pods 6 --models model-a,model-a,model-b \
  --engine vllm,sglang,vllm --speed 5 >"$IM_TMP/sim.log" 2>&1
wait_http "http://127.0.0.1:$sport/targets" 30 || fail "simulator did not start"
S=127.0.0.1:$sport
pods=$(for p in 0 1 2 3 4 5; do printf '%s ' "$S/pods/$p/metrics"; done)
"$IM_BINARY" top --once --output json --interval 1s --short-window 3s --long-window 10s \
  --record "$IM_TMP/rec.om" $pods >"$IM_TMP/top.json" 2>"$IM_TMP/top.err" ||
  { cat "$IM_TMP/top.err"; fail "top --once failed"; }
$PY - "$IM_TMP/top.json" "$S" <<'PY' || fail "two engines of one model"
import json, sys
top, S = json.load(open(sys.argv[1])), sys.argv[2]
def want(cond, what):
    if not cond:
        print("FAIL", what); print(json.dumps(top)[:4000]); sys.exit(1)
    print("ok  ", what)
kind_of = {e["target"]: e["kind"] for e in top["endpoints"]}
want([kind_of[S + "/pods/%d" % p] for p in range(6)] == ["vllm", "sglang", "vllm"] * 2,
     "pods 0-5: vllm, sglang, vllm, ... (%s)" % kind_of)
groups = sorted((m["model"], m["kind"]) for m in top["models"])
want(groups == [("model-a", "sglang"), ("model-a", "vllm"), ("model-b", "vllm")],
     "model-a is two groups, one per engine kind: %s" % groups)
pods_of = {("model-a", "vllm"): [0, 3], ("model-a", "sglang"): [1, 4], ("model-b", "vllm"): [2, 5]}
for m in top["models"]:
    g = (m["model"], m["kind"])
    reps = m["replica_rows"]
    want(m["replicas"] == 2 and sorted(r["instance"] for r in reps) == [S + "/pods/%d" % p for p in pods_of[g]],
         "%s: its own two replicas %s" % (g, [r["instance"] for r in reps]))
    want(all(r["kind"] == m["kind"] == kind_of[r["instance"]] for r in reps), "%s: every replica of the group's kind" % (g,))
    for col in ("waiting", "running"):
        tot = sum(r[col] for r in reps)
        want(m[col] is not None and abs(m[col] - tot) < 1e-9, "%s: merged %s %s = the sum of its replicas' %s" % (g, col, m[col], tot))
    want(m["ttft_seconds"]["long"]["p50"] is not None and m["itl_seconds"]["long"]["p50"] is not None, "%s: TTFT and ITL" % (g,))
PY
chk() { # KIND TTFT ITL
  $PY "$IM_SOURCE_DIR/tests/top/check_top_quantiles.py" "$IM_TMP/top.json" "$IM_TMP/rec.om" "$IM_BINARY" \
    "$2" "$3" model_name "$1" | tee "$IM_TMP/q-$1.txt" | tail -1
}
n=$(chk vllm vllm:time_to_first_token_seconds vllm:inter_token_latency_seconds) || { cat "$IM_TMP/q-vllm.txt"; fail "vLLM percentiles"; }
[ "$n" = 24 ] || { cat "$IM_TMP/q-vllm.txt"; fail "checked $n vLLM merged percentiles, want 24 (model-a and model-b)"; }
n=$(chk sglang sglang:time_to_first_token_seconds sglang:inter_token_latency_seconds) || { cat "$IM_TMP/q-sglang.txt"; fail "SGLang percentiles"; }
[ "$n" = 12 ] || { cat "$IM_TMP/q-sglang.txt"; fail "checked $n SGLang merged percentiles, want 12 (model-a)"; }
echo "ok   percentiles of each group from its own engine's buckets"
# the screen: both groups of model-a, each with its kind
"$IM_BINARY" top --once --interval 1s --short-window 2s $pods >"$IM_TMP/top.txt" 2>&1 || fail "top --once (text)"
for g in 'model-a \[vllm\] \(2\) ' 'model-a \[sglang\] \(2\) ' 'model-b \[vllm\] \(2\) '; do
  grep -Eq "^$g" "$IM_TMP/top.txt" || { cat "$IM_TMP/top.txt"; fail "no group /$g/ on the screen"; }
done
echo "top with two engines of one model: ok"

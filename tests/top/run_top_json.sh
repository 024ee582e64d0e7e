#!/usr/bin/env bash
# `infermon top --once --output json` against the simulator: the endpoints'
# states (engine, GPU, not an engine, down), one merged row per model over its
# replicas, and the numbers: every TTFT/ITL percentile (short and long window,
# merged and per replica) equals histogram_quantile over the same samples — the
# ones top recorded (--record) — evaluated by `infermon promql-eval`, and the
# merged ones equal a quantile computed here from the summed bucket increases
# (merged buckets, not averaged percentiles; tests/top/check_top_quantiles.py).
source "$IM_SOURCE_DIR/tests/lib/common.sh"
sport=$(free_port); dead=$(free_port)
bg "$IM_BINARY" simulate --listen "127.0.0.1:$sport" --pods 3 --models model-a,model-b --speed 5 \
  >"$IM_TMP/sim.log" 2>&1
wait_http "http://127.0.0.1:$sport/targets" 30 || fail "simulator did not start"
S=127.0.0.1:$sport
set +e
"$IM_BINARY" top --once --output json --interval 1s --short-window 3s --long-window 10s \
  --record "$IM_TMP/rec.om" "$S/pods/0/metrics" "$S/pods/1/metrics" "$S/pods/2/metrics" \
  "$S/nodes/0/metrics" "http://$S/kueue/metrics" "127.0.0.1:$dead" >"$IM_TMP/top.json" 2>"$IM_TMP/top.err"
rc=$?
set -e
[ $rc = 0 ] || { cat "$IM_TMP/top.err"; fail "top --once exited $rc"; }

$PY - "$IM_TMP/top.json" "$IM_TMP/rec.om" "$IM_BINARY" <<'PY' || fail "top --once --output json"
import json, math, re, subprocess, sys
top = json.load(open(sys.argv[1]))
rec, binary = sys.argv[2], sys.argv[3]
st = {e["target"]: e for e in top["endpoints"]}
def want(cond, what):
    if not cond:
        print("FAIL", what); sys.exit(1)
    print("ok  ", what)
pods = [t for t in st if "/pods/" in t]
want(len(pods) == 3 and all(st[p]["state"] == "engine" and st[p]["kind"] == "vllm" for p in pods), "three vLLM engines")
want([e["state"] for t, e in st.items() if "/nodes/" in t] == ["gpu"], "dcgm-exporter is a GPU source")
k = [e for t, e in st.items() if "kueue" in t][0]
want(k["state"] == "not_engine" and "not an inference engine" in k["error"], "Kueue: not an inference engine: " + k["error"])
d = [e for t, e in st.items() if e["state"] == "down"]
want(len(d) == 1 and d[0]["error"], "the dead port is down: " + (d[0]["error"] if d else ""))
models = {m["model"]: m for m in top["models"]}
want(sorted(models) == ["model-a", "model-b"], "one group per model: %s" % sorted(models))
want(models["model-a"]["replicas"] == 2 and len(models["model-a"]["replica_rows"]) == 2, "model-a: two replicas (round-robin)")
want(models["model-b"]["replicas"] == 1, "model-b: one replica")
want(len(top["gpus"]) > 0 and all(0 <= g["util_percent"] <= 100 for g in top["gpus"]), "GPU rows")
# GPU fields in base units: DCGM's FB_USED/FB_FREE are MiB, the JSON says bytes
for g in top["gpus"]:
    u, tot = g["memory_used_bytes"], g["memory_total_bytes"]
    want(u is not None and tot is not None and u % 1048576 == 0 and tot % 1048576 == 0 and 0 <= u < tot
         and tot >= 1 << 30, "GPU memory in bytes: %r" % g)
    want(abs(g["memory_used_ratio"] - u / tot) < 1e-9, "memory_used_ratio = used / total: %r" % g)
    want(g["power_watts"] > 0 and 0 < g["temperature_celsius"] < 120, "power_watts, temperature_celsius: %r" % g)
    want(not {"fb_used", "power_w", "temp_c"} & set(g), "no unit-less GPU keys: %r" % sorted(g))
for m in models.values():
    want(m["running"] >= 0 and 0 <= m["kv_usage"] <= 1 and m["generation_tokens_per_s"] > 0, m["model"] + ": running, KV, tokens/s")
want(all("outlier" in r and r["outlier"] is None for m in models.values() for r in m["replica_rows"]),
     "no replica marked as an outlier (fewer than three peers)")
want(all("outlier" not in m for m in models.values()), "merged rows have no outlier key")

PY
n=$($PY "$IM_SOURCE_DIR/tests/top/check_top_quantiles.py" "$IM_TMP/top.json" "$IM_TMP/rec.om" "$IM_BINARY" \
  vllm:time_to_first_token_seconds vllm:inter_token_latency_seconds | tee "$IM_TMP/q.txt" | tail -1) \
  || { cat "$IM_TMP/q.txt"; fail "percentiles"; }
[ "$n" = 24 ] || { cat "$IM_TMP/q.txt"; fail "checked $n merged percentiles, want 24"; }
echo "top json: ok"

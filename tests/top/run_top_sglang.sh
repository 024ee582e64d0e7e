#!/usr/bin/env bash
# `infermon top --once --output json` against an SGLang fleet (`simulate --engine
# sglang`, 6 pods, two models; pod 2 admits one request a second under four
# times the traffic): every pod is an SGLang engine, found and read through the
# serving model like vLLM (same code path), every column filled from SGLang's
# names (sglang:num_queue_reqs, token_usage, cache_hit_rate, …), the TTFT/ITL
# percentiles equal histogram_quantile over the recorded samples
# (check_top_quantiles.py), and pod 2 is marked as the replica far from its
# peers (every mark in the JSON is top's rule applied to the numbers printed),
# in the JSON as on the screen.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
sport=$(free_port)
bg "$IM_BINARY" simulate --engine sglang --listen "127.0.0.1:$sport" --pods 6 \
  --models model-a,model-b --speed 5 --scenario "$IM_SOURCE_DIR/tests/top/slow-pod2.yml" >"$IM_TMP/sim.log" 2>&1
wait_http "http://127.0.0.1:$sport/targets" 30 || fail "simulator did not start"
S=127.0.0.1:$sport
# top --once: until pod 2's queue stands out (its queue grows from the start;
# a deadline, not a fixed wait)
for i in $(seq 20); do
  "$IM_BINARY" top --once --output json --interval 1s --short-window 3s --long-window 10s \
    --record "$IM_TMP/rec.om" $(for p in 0 1 2 3 4 5; do printf '%s ' "$S/pods/$p/metrics"; done) \
    >"$IM_TMP/top.json" 2>"$IM_TMP/top.err" || { cat "$IM_TMP/top.err"; fail "top --once failed"; }
  grep -q '"outlier":"' "$IM_TMP/top.json" && break
done
$PY - "$IM_TMP/top.json" "$S" <<'PY' || fail "top --once --output json on SGLang"
import json, sys
top, S = json.load(open(sys.argv[1])), sys.argv[2]
def want(cond, what):
    if not cond:
        print("FAIL", what); print(json.dumps(top)[:3000]); sys.exit(1)
    print("ok  ", what)
eps = top["endpoints"]
want(len(eps) == 6 and all(e["state"] == "engine" and e["kind"] == "sglang" for e in eps), "six SGLang engines")
models = {m["model"]: m for m in top["models"]}
want(sorted(models) == ["model-a", "model-b"], "one group per model: %s" % sorted(models))
for m in models.values():
    want(m["kind"] == "sglang" and m["replicas"] == 3 and len(m["replica_rows"]) == 3, m["model"] + ": three SGLang replicas")
    for r in [m] + m["replica_rows"]:
        who = "%s %s" % (m["model"], r.get("instance", "merged"))
        want(r["running"] >= 0 and r["waiting"] >= 0, who + ": running and waiting (num_running_reqs, num_queue_reqs)")
        want(0 <= r["kv_usage"] <= 1, who + ": KV use (token_usage)")
        want(r["generation_tokens_per_s"] > 0 and r["prompt_tokens_per_s"] > 0, who + ": tokens/s in and out")
        want(r["prefix_hit_rate"] is not None and 0 <= r["prefix_hit_rate"] <= 1, who + ": prefix-hit rate (cache_hit_rate)")
        want(r["preemptions_per_s"] is not None and r["failed_per_s"] is not None, who + ": retractions/s and aborts/s")
        want(r["ttft_seconds"]["long"]["p95"] is not None and r["itl_seconds"]["long"]["p95"] is not None, who + ": TTFT and ITL")
# The marks are top's rule (src/top/top.c top_outlier) applied to the numbers
# printed: TTFT p95 (long window) over twice the peers' median and 0.2 s above
# it, waiting over twice the median + 10, KV use 0.3 above; the first that holds.
def median(a):
    a = sorted(a); n = len(a)
    return a[n // 2] if n % 2 else (a[n // 2 - 1] + a[n // 2]) / 2
rules = (("TTFT p95", lambda r: r["ttft_seconds"]["long"]["p95"], lambda me, md: me > 2 * md and me - md > 0.2),
         ("waiting", lambda r: r["waiting"], lambda me, md: me > 2 * md + 10),
         ("KV use", lambda r: r["kv_usage"], lambda me, md: me - md > 0.3))
for m in models.values():
    rs = m["replica_rows"]
    for r in rs:
        why = None
        for name, get, far in rules:
            peers = [get(o) for o in rs if o is not r and get(o) is not None]
            if why is None and len(peers) >= 2 and get(r) is not None and far(get(r), median(peers)):
                why = name
        got = r["outlier"]
        want((why is None and got is None) or (why is not None and got is not None and got.startswith(why + " ")),
             "%s: marked %r, the rule says %r" % (r["instance"], got, why))
p2 = [r for m in models.values() for r in m["replica_rows"] if r["instance"] == S + "/pods/2"][0]
want(p2["outlier"] is not None, "pod 2 (its queue) is marked: " + str(p2["outlier"]))
PY
n=$($PY "$IM_SOURCE_DIR/tests/top/check_top_quantiles.py" "$IM_TMP/top.json" "$IM_TMP/rec.om" "$IM_BINARY" \
  sglang:time_to_first_token_seconds sglang:inter_token_latency_seconds | tee "$IM_TMP/q.txt" | tail -1) \
  || { cat "$IM_TMP/q.txt"; fail "percentiles"; }
[ "$n" = 24 ] || { cat "$IM_TMP/q.txt"; fail "checked $n merged percentiles, want 24"; }
# The screen of --once names the engine and marks the same replica.
"$IM_BINARY" top --once --interval 1s --short-window 3s $(for p in 0 1 2 3 4 5; do printf '%s ' "$S/pods/$p/metrics"; done) \
  >"$IM_TMP/top.txt" 2>&1 || fail "top --once (text)"
grep -Eq "^ ! $S/pods/2" "$IM_TMP/top.txt" || { cat "$IM_TMP/top.txt"; fail "pod 2 not marked on the screen"; }
echo "top on SGLang: ok"

#!/usr/bin/env bash
# `infermon top --once --output json` against the simulator: the endpoints'
# states (engine, GPU, not an engine, down), one merged row per model over its
# replicas, and the numbers: every TTFT/ITL percentile (short and long window,
# merged and per replica) equals histogram_quantile over the same samples — the
# ones top recorded (--record) — evaluated by `infermon promql-eval`, and the
# merged ones equal a quantile computed here from the summed bucket increases
# (merged buckets, not averaged percentiles).
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
for m in models.values():
    want(m["running"] >= 0 and 0 <= m["kv_usage"] <= 1 and m["generation_tokens_per_s"] > 0, m["model"] + ": running, KV, tokens/s")

# the recorded samples: name{labels} value ts
samples = []
line_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+) (\S+)$')
lab_re = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
for ln in open(rec):
    if ln.startswith("#"): continue
    mm = line_re.match(ln.rstrip("\n"))
    if not mm: continue
    samples.append((mm.group(1), dict(lab_re.findall(mm.group(3) or "")), float(mm.group(4)), float(mm.group(5))))
T = top["time_ms"] / 1000.0
windows = {"short": top["windows"]["short_s"], "long": top["windows"]["long_s"]}

FAMS = (("vllm:time_to_first_token_seconds", "ttft_seconds"), ("vllm:inter_token_latency_seconds", "itl_seconds"))
BY = ("model_name", "model_name, instance, engine")
queries = ["histogram_quantile(%s, sum by (le, %s) (rate(%s_bucket[%ds])))" % (q, by, fam, w)
           for fam, _ in FAMS for w in windows.values() for q in (0.5, 0.95, 0.99) for by in BY]
qfile = rec + ".queries"
open(qfile, "w").write("\n".join(queries) + "\n")
out = subprocess.run([binary, "promql-eval", "--data", rec, "--time", repr(T), "--queries", qfile],
                     capture_output=True, text=True, check=True).stdout.splitlines()
answers = dict(zip(queries, (json.loads(l)["data"]["result"] for l in out if l.strip())))
want(len(answers) == len(queries), "promql-eval answered %d queries" % len(answers))
def evalq(q):
    return answers[q]

def same(a, b, tol=1e-9):
    if a is None or b is None or (isinstance(b, float) and math.isnan(b)):
        return (a is None) == (b is None or math.isnan(b))
    return abs(a - b) <= tol * max(1.0, abs(b))

def my_rate(pts, w):
    # Prometheus' extrapolated rate over (T - w, T] of one counter series
    first_t, first_v = pts[0]
    last_t, last_v = pts[-1]
    delta = last_v - first_v
    sampled = last_t - first_t
    if len(pts) < 2 or sampled <= 0: return None
    to_start, to_end = first_t - (T - w), T - last_t
    avg = sampled / (len(pts) - 1)
    if delta > 0 and first_v >= 0:
        to_zero = sampled * (first_v / delta)
        if to_zero < to_start: to_start = to_zero
    thr = avg * 1.1
    ext = sampled + (to_start if to_start < thr else avg / 2) + (to_end if to_end < thr else avg / 2)
    return delta * (ext / sampled) / w

def my_quantile(q, fam, model, w):
    # rates of the buckets summed over the model's replicas, then one quantile
    inc = {}
    series = {}
    for name, lab, v, ts in samples:
        if name != fam + "_bucket" or lab.get("model_name") != model or not (T - w <= ts <= T): continue
        key = tuple(sorted((a, b) for a, b in lab.items()))
        series.setdefault(key, []).append((ts, v))
    for key, pts in series.items():
        pts.sort()
        le = dict(key)["le"]
        r = my_rate(pts, w)
        if r is not None: inc[le] = inc.get(le, 0.0) + r
    bs = sorted(((float("inf") if le == "+Inf" else float(le)), c) for le, c in inc.items())
    total = bs[-1][1]
    if total == 0: return None
    rank = q * total
    for i, (ub, c) in enumerate(bs):
        if c >= rank:
            if math.isinf(ub): return bs[-2][0]
            lo, below = (0.0, 0.0) if i == 0 else bs[i - 1]
            if i == 0 and ub <= 0: return ub
            return lo + (ub - lo) * (rank - below) / (c - below)

n = 0
for fam, key in FAMS:
    for wn, w in windows.items():
        for q, pk in ((0.5, "p50"), (0.95, "p95"), (0.99, "p99")):
            merged = {r["metric"]["model_name"]: float(r["value"][1]) for r in evalq(
                "histogram_quantile(%s, sum by (le, model_name) (rate(%s_bucket[%ds])))" % (q, fam, w))}
            per = {(r["metric"]["model_name"], r["metric"]["instance"], r["metric"].get("engine", "")): float(r["value"][1]) for r in evalq(
                "histogram_quantile(%s, sum by (le, model_name, instance, engine) (rate(%s_bucket[%ds])))" % (q, fam, w))}
            for m in models.values():
                got = m[key][wn][pk]
                want(same(got, merged.get(m["model"])), "%s %s %s %s: top %s = promql-eval %s" % (m["model"], key, wn, pk, got, merged.get(m["model"])))
                mine = my_quantile(q, fam, m["model"], w)
                want(same(got, mine, 1e-6), "%s %s %s %s: top %s = quantile of the merged buckets %s" % (m["model"], key, wn, pk, got, mine))
                for r in m["replica_rows"]:
                    pv = per.get((r["model"], r["instance"], r["engine"]))
                    want(same(r[key][wn][pk], pv), "  replica %s: %s = %s" % (r["instance"], r[key][wn][pk], pv))
                n += 1
want(n == 24, "checked %d merged percentiles" % n)
PY
echo "top json: ok"

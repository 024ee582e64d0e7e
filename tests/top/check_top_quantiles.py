#!/usr/bin/env python3
"""check_top_quantiles.py TOP_JSON RECORD BINARY TTFT_FAMILY ITL_FAMILY [MODEL_LABEL]

Shared by the `infermon top --once --output json` tests: every TTFT/ITL
percentile top printed (short and long window, merged and per replica) must
equal histogram_quantile over the samples top recorded (--record), evaluated by
`infermon promql-eval`, and each merged one must equal a quantile computed here
from the bucket rates summed over the model's replicas (merged buckets, never
averaged percentiles). Prints one line per check; the last line is the number
of merged percentiles checked. Exit status 1 on the first difference."""
import json, math, re, subprocess, sys

top = json.load(open(sys.argv[1]))
rec, binary = sys.argv[2], sys.argv[3]
FAMS = ((sys.argv[4], "ttft_seconds"), (sys.argv[5], "itl_seconds"))
ML = sys.argv[6] if len(sys.argv) > 6 else "model_name"
models = {m["model"]: m for m in top["models"]}


def want(cond, what):
    if not cond:
        print("FAIL", what)
        sys.exit(1)
    print("ok  ", what)


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

BY = (ML, ML + ", instance, engine")
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

def my_quantile(q, fam, model, w, eps=0.0):
    # rates of the buckets summed over the model's replicas, then one quantile
    inc = {}
    series = {}
    for name, lab, v, ts in samples:
        if name != fam + "_bucket" or lab.get(ML) != model or not (T - w <= ts <= T): continue
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
    rank = q * total * (1.0 + eps)
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
            merged = {r["metric"][ML]: float(r["value"][1]) for r in evalq(
                "histogram_quantile(%s, sum by (le, %s) (rate(%s_bucket[%ds])))" % (q, BY[0], fam, w))}
            per = {(r["metric"][ML], r["metric"]["instance"], r["metric"].get("engine", "")): float(r["value"][1]) for r in evalq(
                "histogram_quantile(%s, sum by (le, %s) (rate(%s_bucket[%ds])))" % (q, BY[1], fam, w))}
            for m in models.values():
                got = m[key][wn][pk]
                want(same(got, merged.get(m["model"])), "%s %s %s %s: top %s = promql-eval %s" % (m["model"], key, wn, pk, got, merged.get(m["model"])))
                # a rank on a bucket's cumulative count (small integer counts: often)
                # lands on either side of it by the summation order's last bit: below
                # it the answer is that bucket's bound, above it the next non-empty
                # bucket's lower bound; both are right, so either is accepted
                mine = my_quantile(q, fam, m["model"], w)
                if mine is not None and not same(got, mine, 1e-6):
                    for eps in (-1e-9, 1e-9):
                        alt = my_quantile(q, fam, m["model"], w, eps)
                        if same(got, alt, 1e-6):
                            mine = alt
                want(same(got, mine, 1e-6), "%s %s %s %s: top %s = quantile of the merged buckets %s" % (m["model"], key, wn, pk, got, mine))
                for r in m["replica_rows"]:
                    pv = per.get((r["model"], r["instance"], r["engine"]))
                    want(same(r[key][wn][pk], pv), "  replica %s: %s = %s" % (r["instance"], r[key][wn][pk], pv))
                n += 1
print(n)

#!/usr/bin/env python3
"""check_top_quantiles.py TOP_JSON RECORD BINARY TTFT_FAMILY ITL_FAMILY [MODEL_LABEL [KIND]]

Shared by the `infermon top --once --output json` tests: every TTFT/ITL
percentile top printed (short and long window, merged and per replica) must
equal histogram_quantile over the samples top recorded (--record), evaluated by
`infermon promql-eval`, and each merged one must equal a quantile computed here
from the bucket rates summed over the model's replicas (merged buckets, never
averaged percentiles). With KIND, only the model groups of that engine kind
are checked (a model served by two engines is two groups, each with its own
families). Prints one line per check; the last line is the number
of merged percentiles checked. Exit status 1 on the first difference.

The reference follows the engine's language (Prometheus 3 by default; see
COMPAT below) in integer milliseconds. An earlier version selected samples
with a closed window in float seconds and extrapolated rates in 2.x order, so
it disagreed with top and promql-eval (which agreed) whenever a scrape sat
exactly on a window's start (regular 1 s fetches, 3 s window), or a bucket
counter that started near zero in the long window put its zero point between
half an interval and 1.1 intervals from its first sample."""
import json, math, re, subprocess, sys

top = json.load(open(sys.argv[1]))
rec, binary = sys.argv[2], sys.argv[3]
FAMS = ((sys.argv[4], "ttft_seconds"), (sys.argv[5], "itl_seconds"))
ML = sys.argv[6] if len(sys.argv) > 6 else "model_name"
KIND = sys.argv[7] if len(sys.argv) > 7 else None
models = {m["model"]: m for m in top["models"] if KIND is None or m["kind"] == KIND}
want_one = [m["model"] for m in top["models"] if KIND is None or m["kind"] == KIND]
if len(want_one) != len(models):
    print("FAIL two groups of one model and kind:", want_one)
    sys.exit(1)


def want(cond, what):
    if not cond:
        print("FAIL", what)
        sys.exit(1)
    print("ok  ", what)


# The recorded samples: name{labels} value ts, the timestamp as written (seconds
# with three decimals) read as integer milliseconds, as the store holds it. Every
# time below is an integer in ms: top's evaluation time is time_ms, the windows
# are whole milliseconds, so a sample exactly on a window's boundary is in or out
# by integer comparison, as in the engine (never float seconds, where
# T/1000 - w and a parsed timestamp can round to different sides).
samples = []
line_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+) (\S+)$')
lab_re = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def ts_ms(s):
    # "1764768230.123" -> 1764768230123 exactly (top writes seconds.milliseconds)
    sec, _, frac = s.partition(".")
    return int(sec) * 1000 + int((frac + "000")[:3])


for ln in open(rec):
    if ln.startswith("#"): continue
    mm = line_re.match(ln.rstrip("\n"))
    if not mm: continue
    samples.append((mm.group(1), dict(lab_re.findall(mm.group(3) or "")), float(mm.group(4)), ts_ms(mm.group(5))))
T = int(top["time_ms"])
windows = {"short": int(round(top["windows"]["short_s"] * 1000)), "long": int(round(top["windows"]["long_s"] * 1000))}
# top's engine speaks the process default language, Prometheus 3 (compat 3):
# range windows are left-open, (T - w, T], and rate() first limits a long gap at
# the start to half an interval, then caps at the counter's zero point. The
# reference below is written for that; COMPAT=2 selects 2.x (closed window
# [T - w, T], zero point first) for checking the reference itself
# (run_top_quantile_boundary.sh; on that case Prometheus 2.42 gives the COMPAT=2
# values, and promql-eval --promql.compat 2 too).
COMPAT = int(__import__("os").environ.get("IM_TOP_CHECK_COMPAT", "3"))

BY = (ML, ML + ", instance, engine")
queries = ["histogram_quantile(%s, sum by (le, %s) (rate(%s_bucket[%dms])))" % (q, by, fam, w)
           for fam, _ in FAMS for w in windows.values() for q in (0.5, 0.95, 0.99) for by in BY]
qfile = rec + ".queries"
open(qfile, "w").write("\n".join(queries) + "\n")
out = subprocess.run([binary, "promql-eval", "--data", rec, "--time", "%d.%03d" % divmod(T, 1000),
                      "--promql.compat", str(COMPAT), "--queries", qfile],
                     capture_output=True, text=True, check=True).stdout.splitlines()
answers = dict(zip(queries, (json.loads(l)["data"]["result"] for l in out if l.strip())))
want(len(answers) == len(queries), "promql-eval answered %d queries" % len(answers))
def evalq(q):
    return answers[q]

def same(a, b, tol=1e-9):
    if a is None or b is None or (isinstance(b, float) and math.isnan(b)):
        return (a is None) == (b is None or math.isnan(b))
    return abs(a - b) <= tol * max(1.0, abs(b))

def in_window(ts, w):
    return (T - w < ts if COMPAT >= 3 else T - w <= ts) and ts <= T

def my_rate(pts, w):
    # Prometheus' extrapolated rate of one counter series over the window ending
    # at T; pts: (t_ms, value) in the window, sorted. None with fewer than two.
    if len(pts) < 2: return None
    first_t, first_v = pts[0]
    last_t, last_v = pts[-1]
    delta = last_v - first_v
    for (_, a), (_, b) in zip(pts, pts[1:]):
        if b < a: delta += a  # a counter reset: the value before it was counted
    sampled = (last_t - first_t) / 1000.0
    if sampled <= 0: return None
    to_start, to_end = (first_t - (T - w)) / 1000.0, (T - last_t) / 1000.0
    avg = sampled / (len(pts) - 1)
    thr = avg * 1.1
    if COMPAT >= 3:  # a long gap becomes half an interval, then the zero point caps it
        if to_start >= thr: to_start = avg / 2
        if to_end >= thr: to_end = avg / 2
    if delta > 0 and first_v >= 0:
        to_zero = sampled * (first_v / delta)
        if to_zero < to_start: to_start = to_zero
    ext = sampled + (to_start if to_start < thr else avg / 2) + (to_end if to_end < thr else avg / 2)
    return delta * (ext / sampled) / (w / 1000.0)

def my_quantile(q, fam, model, w, eps=0.0):
    # rates of the buckets summed over the model's replicas, then one quantile
    inc = {}
    series = {}
    for name, lab, v, ts in samples:
        if name != fam + "_bucket" or lab.get(ML) != model or not in_window(ts, w): continue
        key = tuple(sorted((a, b) for a, b in lab.items()))
        series.setdefault(key, []).append((ts, v))
    for key, pts in series.items():
        pts.sort()
        le = dict(key)["le"]
        r = my_rate(pts, w)
        if r is not None: inc[le] = inc.get(le, 0.0) + r
    if not inc: return None
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
                "histogram_quantile(%s, sum by (le, %s) (rate(%s_bucket[%dms])))" % (q, BY[0], fam, w))}
            per = {(r["metric"][ML], r["metric"]["instance"], r["metric"].get("engine", "")): float(r["value"][1]) for r in evalq(
                "histogram_quantile(%s, sum by (le, %s) (rate(%s_bucket[%dms])))" % (q, BY[1], fam, w))}
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

#!/usr/bin/env bash
# The reference of check_top_quantiles.py on the two cases that made it
# disagree with top and promql-eval (a6b5ea1's failed CI run): scrapes exactly
# 1000 ms apart, so the short window's (3 s) first sample sits exactly on its
# start T - 3000 (in under Prometheus 2.x, out under 3.x: integer ms decide), and
# bucket counters starting near zero in the long window (10 s) with the first
# sample far from its start (2.x caps at the zero point first, 3.x limits the
# gap to half an interval first). A top JSON whose numbers are promql-eval's at
# T, per language; the reference must agree with it in both (COMPAT 3 is top's).
source "$IM_SOURCE_DIR/tests/lib/common.sh"
for compat in 3 2; do
  mkdir -p "$IM_TMP/c$compat"
  (cd "$IM_TMP/c$compat" && $PY - "$IM_BINARY" "$compat" <<'PY') || fail "building the case (compat $compat)"
import json, subprocess, sys
B, compat = sys.argv[1], sys.argv[2]
T = 1764768230123
fams = ["vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds"]
les = ["0.01", "0.05", "0.1", "+Inf"]
# per instance and le: the counter at T-3000, T-2000, T-1000, T
vals = {"a": {"0.01": [1, 1, 2, 3], "0.05": [3, 9, 12, 14], "0.1": [4, 14, 18, 21], "+Inf": [4, 16, 21, 25]},
        "b": {"0.01": [0, 2, 3, 3], "0.05": [2, 5, 9, 13], "0.1": [3, 8, 13, 18], "+Inf": [3, 9, 15, 20]}}
with open("rec.om", "w") as f:
    for k in range(4):
        t = T - 3000 + 1000 * k
        for fam in fams:
            for inst, bs in vals.items():
                for le in les:
                    f.write('%s_bucket{instance="%s",le="%s",model_name="m"} %d %d.%03d\n' % (fam, inst, le, bs[le][k], t // 1000, t % 1000))
    f.write("# EOF\n")
BY = ("model_name", "model_name, instance, engine")
qs = ["histogram_quantile(%s, sum by (le, %s) (rate(%s_bucket[%ds])))" % (q, by, fam, w)
      for fam in fams for w in (3, 10) for q in ("0.5", "0.95", "0.99") for by in BY]
open("q.txt", "w").write("\n".join(qs) + "\n")
out = subprocess.run([B, "promql-eval", "--data", "rec.om", "--time", "%d.%03d" % divmod(T, 1000), "--queries", "q.txt",
                      "--promql.compat", compat], capture_output=True, text=True, check=True).stdout.split("\n")
ans = dict(zip(qs, (json.loads(l)["data"]["result"] for l in out if l.strip())))
def pct(fam, w, by, inst):
    r = {}
    for q, k in (("0.5", "p50"), ("0.95", "p95"), ("0.99", "p99")):
        res = ans["histogram_quantile(%s, sum by (le, %s) (rate(%s_bucket[%ds])))" % (q, by, fam, w)]
        v = [float(x["value"][1]) for x in res if inst is None or x["metric"]["instance"] == inst]
        r[k] = v[0] if v else None
    return r
def row(inst=None):
    by = BY[0] if inst is None else BY[1]
    d = {"model": "m", "kind": "vllm"}
    for fam, key in zip(fams, ("ttft_seconds", "itl_seconds")):
        d[key] = {"short": pct(fam, 3, by, inst), "long": pct(fam, 10, by, inst)}
    if inst: d.update(instance=inst, engine="")
    return d
m = row(); m["replica_rows"] = [row("a"), row("b")]
json.dump({"time_ms": T, "windows": {"short_s": 3.0, "long_s": 10.0}, "models": [m]}, open("top.json", "w"))
PY
  n=$(cd "$IM_TMP/c$compat" && IM_TOP_CHECK_COMPAT=$compat $PY "$IM_SOURCE_DIR/tests/top/check_top_quantiles.py" top.json rec.om \
    "$IM_BINARY" vllm:time_to_first_token_seconds vllm:inter_token_latency_seconds | tee q.txt | tail -1) ||
    { cat "$IM_TMP/c$compat/q.txt"; fail "the reference disagrees with promql-eval --promql.compat $compat"; }
  [ "$n" = 12 ] || fail "checked $n merged percentiles, want 12"
  echo "ok   compat $compat: the reference agrees with promql-eval on the boundary sample and the near-zero counters"
done
# the case is one where the languages differ (else it would test nothing)
cmp -s <(grep -o '"p50": [0-9.e-]*' "$IM_TMP/c3/top.json") <(grep -o '"p50": [0-9.e-]*' "$IM_TMP/c2/top.json") &&
  fail "compat 2 and 3 give the same percentiles: the case does not exercise the difference"
echo "top quantile reference: ok"

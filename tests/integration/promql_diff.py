#!/usr/bin/python3
"""promql_diff.py — differential test of infermon's PromQL engine against Prometheus.

Generates a deterministic data set (vLLM-like histograms, counters with resets,
gauges, Kueue/kube-state-metrics series, series that start and stop), writes it as
OpenMetrics, backfills it into Prometheus (`promtool tsdb create-blocks-from
openmetrics`), starts `prometheus` on 127.0.0.1:<free port>, and runs a corpus of
queries — the DOMAIN.md queries, every function and operator, and N randomly
generated well-typed expressions — at several instants and over ranges, through
Prometheus' HTTP API and through `infermon promql-eval` on the same data.
Results must agree: same series and labels, values equal within 1e-9 relative
(NaN = NaN), errors on both sides or neither.

Known differences between Prometheus 2.42 (the peer) and 2.53 (our reference) are
skipped by rule (see SKIP_RULES and docs/promql.md, "Differences from Prometheus
2.42"); the skipped queries are counted and listed.

usage: promql_diff.py INFERMON_BINARY WORKDIR [--random N] [--seed S] [--verbose] [--check-skips]
IM_PROMQL_DIFF_STORE=tsdb evaluates over infermon's real store (memory mode)
instead of the in-memory array store; IM_PROMQL_DIFF_EVAL_ARGS adds options to
promql-eval (e.g. "--threads 3 --parallel-min-work 1": every range function on
the parallel path).
"""
import http.client
import json
import math
import os
import random
import re
import socket
import subprocess
import sys
import time
import urllib.parse

T0 = 1700000000  # data start (seconds); deterministic
DURATION = 3600  # one hour of data
SCRAPE = 15

TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5,
                5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0]
ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5]


def fmt_le(b):
    s = repr(float(b))
    return s


# ---------------------------------------------------------------- data

def gen_data(rng):
    """Returns {labels_tuple: [(t_s, v), ...]} (labels sorted, __name__ included)."""
    series = {}

    def add(name, labels, t, v):
        key = tuple(sorted([("__name__", name)] + list(labels.items())))
        series.setdefault(key, []).append((t, v))

    models = ["llama-3-8b", "mistral-7b"]
    for m in models:
        for p in range(3):
            pod = "%s-%d" % (m.split("-")[0], p)
            base = {"model_name": m, "engine": "0", "pod": pod, "namespace": "serving"}
            # pods come and go: pod 2 of mistral starts late, pod 1 of llama stops early
            start = T0 + (1200 if (m.startswith("mistral") and p == 2) else 0)
            stop = T0 + DURATION - (1500 if (m.startswith("llama") and p == 1) else 0)
            cnt = {"prompt": 0.0, "gen": 0.0, "pre": 0.0, "pq": 0.0, "ph": 0.0, "ok": 0.0,
                   "len": 0.0, "qs": 0.0, "es": 0.0}
            ttft = [0.0] * (len(TTFT_BUCKETS) + 1)
            itl = [0.0] * (len(ITL_BUCKETS) + 1)
            ttft_sum = itl_sum = 0.0
            t = start
            reset_at = start + rng.randrange(900, 2400) if p == 0 else None
            while t <= stop:
                if reset_at is not None and t >= reset_at:
                    # process restart: every counter starts again from zero
                    for k in cnt:
                        cnt[k] = 0.0
                    ttft = [0.0] * len(ttft)
                    itl = [0.0] * len(itl)
                    ttft_sum = itl_sum = 0.0
                    reset_at = None
                reqs = rng.randrange(0, 40)
                cnt["prompt"] += reqs * rng.randrange(100, 900)
                cnt["gen"] += reqs * rng.randrange(50, 400)
                if rng.random() < 0.2:
                    cnt["pre"] += rng.randrange(1, 5)
                q = reqs * rng.randrange(200, 800)
                cnt["pq"] += q
                cnt["ph"] += int(q * rng.random() * 0.7)
                cnt["ok"] += reqs
                cnt["len"] += rng.randrange(0, 3)
                for _ in range(reqs):
                    x = rng.lognormvariate(-1.0, 1.2)
                    ttft_sum += x
                    for i, b in enumerate(TTFT_BUCKETS):
                        if x <= b:
                            ttft[i] += 1
                    ttft[-1] += 1
                    y = rng.lognormvariate(-3.0, 0.6)
                    itl_sum += y
                    for i, b in enumerate(ITL_BUCKETS):
                        if y <= b:
                            itl[i] += 1
                    itl[-1] += 1
                    cnt["qs"] += rng.random() * 0.5
                    cnt["es"] += x + rng.random() * 3
                add("vllm:prompt_tokens_total", base, t, cnt["prompt"])
                add("vllm:generation_tokens_total", base, t, cnt["gen"])
                add("vllm:num_preemptions_total", base, t, cnt["pre"])
                add("vllm:prefix_cache_queries_total", base, t, cnt["pq"])
                add("vllm:prefix_cache_hits_total", base, t, cnt["ph"])
                add("vllm:request_success_total", dict(base, finished_reason="stop"), t, cnt["ok"])
                add("vllm:request_success_total", dict(base, finished_reason="length"), t, cnt["len"])
                add("vllm:num_requests_running", base, t, float(rng.randrange(0, 64)))
                add("vllm:num_requests_waiting", base, t, float(rng.randrange(0, 80)))
                add("vllm:num_requests_waiting_by_reason", dict(base, reason="capacity"), t,
                    float(rng.randrange(0, 50)))
                add("vllm:num_requests_waiting_by_reason", dict(base, reason="deferred"), t,
                    float(rng.randrange(0, 5)))
                add("vllm:kv_cache_usage_perc", base, t, round(rng.random(), 4))
                for i, b in enumerate(TTFT_BUCKETS):
                    add("vllm:time_to_first_token_seconds_bucket", dict(base, le=fmt_le(b)), t, ttft[i])
                add("vllm:time_to_first_token_seconds_bucket", dict(base, le="+Inf"), t, ttft[-1])
                add("vllm:time_to_first_token_seconds_sum", base, t, ttft_sum)
                add("vllm:time_to_first_token_seconds_count", base, t, ttft[-1])
                for i, b in enumerate(ITL_BUCKETS):
                    add("vllm:inter_token_latency_seconds_bucket", dict(base, le=fmt_le(b)), t, itl[i])
                add("vllm:inter_token_latency_seconds_bucket", dict(base, le="+Inf"), t, itl[-1])
                add("vllm:request_queue_time_seconds_sum", base, t, cnt["qs"])
                add("vllm:e2e_request_latency_seconds_sum", base, t, cnt["es"])
                t += SCRAPE
    # Kueue and kube-state-metrics for the cost query
    for ns, team in [("serving", "ml"), ("research", "science"), ("batch", "")]:
        for t in range(T0, T0 + DURATION + 1, 30):
            add("kueue_local_queue_resource_reservation",
                {"name": "lq-" + ns, "namespace": ns, "flavor": "a100", "resource": "nvidia.com/gpu"},
                t, float(rng.randrange(0, 16)))
            add("kueue_local_queue_resource_reservation",
                {"name": "lq-" + ns, "namespace": ns, "flavor": "a100", "resource": "cpu"},
                t, float(rng.randrange(0, 64)))
            lab = {"namespace": ns}
            if team:
                lab["label_team"] = team
            add("kube_namespace_labels", lab, t, 1.0)
    # generic series for functions: gauges with negatives, NaN, irregular spacing
    for i in range(4):
        t = T0 + i * 7
        v = rng.uniform(-50, 50)
        while t <= T0 + DURATION:
            if rng.random() < 0.02:
                add("test_gauge", {"instance": str(i), "job": "t"}, t, float("nan"))
            else:
                v += rng.uniform(-3, 3)
                add("test_gauge", {"instance": str(i), "job": "t"}, t, round(v, 3))
            t += rng.choice([10, 15, 20, 30])
    for i in range(3):
        c = 0.0
        for t in range(T0 + i, T0 + DURATION + 1, 10):
            c += rng.randrange(0, 10)
            if rng.random() < 0.01:
                c = rng.randrange(0, 5)
            add("test_counter_total", {"instance": str(i), "job": "t", "mode": ["a", "b", "c"][i]}, t, c)
    # a series with only a few samples and a gap larger than the lookback
    for t in [T0 + 100, T0 + 115, T0 + 130, T0 + 1000, T0 + 1015]:
        add("test_sparse", {"job": "t"}, t, float(t % 97))
    return series


def om_escape(v):
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def fmt_val(v):
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(v)


def write_om(series, path):
    # families contiguous, series contiguous, samples in time order
    by_name = {}
    for key in series:
        by_name.setdefault(dict(key)["__name__"], []).append(key)
    with open(path, "w") as f:
        for name in sorted(by_name):
            for key in sorted(by_name[name]):
                lab = ",".join('%s="%s"' % (k, om_escape(v)) for k, v in key if k != "__name__")
                sel = name + ("{" + lab + "}" if lab else "")
                for t, v in series[key]:
                    f.write("%s %s %d\n" % (sel, fmt_val(v), t))
        f.write("# EOF\n")


# ---------------------------------------------------------------- queries

DOMAIN = [
    'sum by (model_name) (vllm:num_requests_running)',
    'sum by (model_name) (vllm:num_requests_waiting)',
    'sum by (model_name, reason) (vllm:num_requests_waiting_by_reason)',
    'sum by (model_name) (rate(vllm:num_preemptions_total[5m]))',
    'max by (model_name) (vllm:kv_cache_usage_perc)',
    'sum by (model_name) (rate(vllm:prefix_cache_hits_total[10m])) / sum by (model_name) (rate(vllm:prefix_cache_queries_total[10m]))',
    'sum by (model_name) (rate(vllm:generation_tokens_total[5m]))',
    'histogram_quantile(0.95, sum by (le, model_name) (rate(vllm:time_to_first_token_seconds_bucket[5m])))',
    'histogram_quantile(0.99, sum by (le, model_name) (rate(vllm:inter_token_latency_seconds_bucket[5m])))',
    'sum by (model_name) (rate(vllm:request_queue_time_seconds_sum[5m])) / sum by (model_name) (rate(vllm:e2e_request_latency_seconds_sum[5m]))',
    'histogram_quantile(0.95, sum by (le, model_name) (rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 2',
    'sum by (model_name) (vllm:num_requests_waiting) > 50 and sum by (model_name) (rate(vllm:num_preemptions_total[5m])) > 0',
    'sum by (namespace) (kueue_local_queue_resource_reservation{resource="nvidia.com/gpu"}) * on(namespace) group_left(label_team) kube_namespace_labels{label_team!=""}',
    'histogram_quantile(0.5, rate(vllm:time_to_first_token_seconds_bucket[5m]))',
    'histogram_quantile(0.9, sum by (le) (increase(vllm:time_to_first_token_seconds_bucket[15m])))',
    'sum(rate(vllm:request_success_total{finished_reason="length"}[5m])) / sum(rate(vllm:request_success_total[5m]))',
]

FUNCS_INSTANT = ["abs", "ceil", "floor", "exp", "sqrt", "ln", "log2", "log10", "sin", "cos", "tan",
                 "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "deg",
                 "rad", "sgn", "timestamp", "sort", "sort_desc", "absent"]
FUNCS_RANGE = ["rate", "increase", "delta", "irate", "idelta", "avg_over_time", "min_over_time",
               "max_over_time", "sum_over_time", "count_over_time", "last_over_time",
               "stddev_over_time", "stdvar_over_time", "changes", "resets", "deriv",
               "absent_over_time", "present_over_time"]
AGGS = ["sum", "avg", "count", "min", "max", "group", "stddev", "stdvar"]

GAUGES = ["test_gauge", "vllm:num_requests_running", "vllm:kv_cache_usage_perc",
          "vllm:num_requests_waiting", "test_sparse"]
COUNTERS = ["test_counter_total", "vllm:prompt_tokens_total", "vllm:num_preemptions_total",
            "vllm:prefix_cache_hits_total", "vllm:request_success_total"]
LABELS = {"test_gauge": ["instance", "job"], "test_counter_total": ["instance", "mode", "job"],
          "test_sparse": ["job"]}
VLLM_LABELS = ["model_name", "pod", "engine", "namespace"]


def labels_of(metric):
    return LABELS.get(metric, VLLM_LABELS)


def fixed_corpus():
    q = list(DOMAIN)
    for f in FUNCS_INSTANT:
        q.append("%s(test_gauge)" % f)
        q.append("%s(vllm:kv_cache_usage_perc{model_name=\"llama-3-8b\"})" % f)
    q += ["absent(nonexistent_metric{job=\"x\",a=~\"b\"})", "absent(test_gauge{job=\"t\"})",
          "absent_over_time(nonexistent{job=\"y\"}[5m])", "vector(1)", "vector(time())", "time()",
          "pi()", "scalar(test_sparse)", "scalar(test_gauge)", "round(test_gauge)",
          "round(test_gauge, 0.3)", "clamp(test_gauge, -10, 10)", "clamp(test_gauge, 10, -10)",
          "clamp_min(test_gauge, 0)", "clamp_max(test_gauge, 0)",
          "label_replace(test_gauge, \"inst\", \"i-$1\", \"instance\", \"(.*)\")",
          "label_replace(test_gauge, \"job\", \"\", \"job\", \".*\")",
          "label_replace(test_gauge, \"x\", \"${1}y$2\", \"instance\", \"([0-9])(.*)\")",
          "label_join(test_counter_total, \"j\", \"-\", \"instance\", \"mode\", \"job\")",
          "hour()", "minute()", "month()", "year()", "day_of_month()", "day_of_week()",
          "day_of_year()", "days_in_month()", "hour(test_counter_total)",
          "day_of_week(vector(1700000000))", "days_in_month(vector(1709251200))",
          "quantile_over_time(0.9, test_gauge[10m])", "quantile_over_time(0, test_gauge[10m])",
          "quantile_over_time(1.5, test_gauge[10m])", "predict_linear(test_gauge[15m], 600)",
          "predict_linear(test_counter_total[10m], 3600)",
          "holt_winters(test_gauge[10m], 0.5, 0.3)", "holt_winters(test_counter_total[5m], 0.1, 0.9)",
          "count_values(\"v\", ceil(test_gauge / 10))", "topk(2, test_gauge)", "bottomk(2, test_gauge)",
          "topk by (model_name) (1, vllm:num_requests_running)",
          "quantile(0.5, test_gauge)", "quantile by (model_name) (0.9, vllm:kv_cache_usage_perc)",
          "stddev by (model_name) (vllm:kv_cache_usage_perc)",
          "sum without (pod) (rate(vllm:generation_tokens_total[5m]))",
          "test_gauge offset 10m", "rate(test_counter_total[5m] offset 7m)",
          "test_gauge @ %d" % (T0 + 1800), "rate(test_counter_total[5m] @ %d)" % (T0 + 2000),
          "test_gauge @ %d offset 5m" % (T0 + 1800),
          "max_over_time(test_gauge[10m:1m])", "rate(test_counter_total[5m:30s])",
          "sum_over_time(sum(test_gauge)[7m:45s] offset 2m)",
          "avg_over_time(rate(test_counter_total[1m])[10m:])",
          "test_gauge > 0", "test_gauge > bool 0", "0 < test_gauge", "1 - test_gauge",
          "test_gauge % 7", "test_gauge ^ 2", "2 ^ test_gauge", "test_gauge atan2 10",
          "test_counter_total / on(instance) test_gauge",
          "test_counter_total + ignoring(mode) test_gauge",
          "test_counter_total / on(instance, job) group_left(mode) test_gauge",
          "test_gauge / on(instance) group_right(mode) test_counter_total",
          "test_gauge and test_counter_total", "test_gauge and on(instance) test_counter_total",
          "test_gauge or test_counter_total", "test_gauge unless on(instance) test_counter_total",
          "test_gauge or on(job) vector(1)", "test_gauge == test_gauge", "test_gauge != bool test_gauge",
          "sum(test_gauge) == bool 3", "-test_gauge", "+test_gauge", "test_gauge + test_gauge",
          "vllm:num_requests_running + vllm:num_requests_waiting",
          "vllm:num_requests_running * on(pod) group_left vllm:num_requests_waiting",
          "test_counter_total * on() group_left test_sparse",
          "sum by (model_name) (vllm:num_requests_running) / on() group_left sum(vllm:num_requests_running)",
          "count(vllm:num_requests_running) by (model_name) > 2",
          "{__name__=~\"test_.*\", job=\"t\"}", "{__name__=~\"vllm:num_requests_.*\", pod=~\"llama.*\"}",
          "test_gauge{instance=~\"0|1\"}", "test_gauge{instance!~\"0|1\"}", "test_gauge{instance!=\"2\"}",
          "count(test_gauge{nonexistent=\"\"})", "sum(test_gauge) by (nonexistent)",
          "1 + 2 * 3 ^ 2 ^ 0.5 % 4", "(1 > bool 2) + (2 >= bool 2)", "-(-1)", "NaN", "Inf", "-Inf",
          "changes(test_gauge[1h])", "resets(test_counter_total[1h])", "irate(test_counter_total[1m])",
          "idelta(test_gauge[1m])", "deriv(test_gauge[10m])", "deriv(kube_namespace_labels[10m])",
          "predict_linear(kube_namespace_labels[10m], 100)", "delta(test_gauge[7m])",
          "increase(vllm:num_preemptions_total[1h])", "rate(test_sparse[20m])",
          "last_over_time(test_sparse[30m])", "count_over_time(test_sparse[30m])",
          "stdvar_over_time(test_gauge[5m])", "absent_over_time(test_sparse[5m])",
          "present_over_time(test_sparse[10m])", "timestamp(test_gauge offset 3m)",
          "timestamp(sum(test_gauge))", "sort(sum by (instance) (test_gauge))",
          "histogram_quantile(0.5, vllm:time_to_first_token_seconds_bucket)",
          "histogram_quantile(-1, vllm:time_to_first_token_seconds_bucket)",
          "histogram_quantile(2, vllm:time_to_first_token_seconds_bucket)",
          "histogram_quantile(0.5, test_counter_total)",
          "histogram_quantile(0.99, sum by (le) (rate(vllm:inter_token_latency_seconds_bucket[5m])))",
          "test_gauge[5m]", "rate(test_counter_total[5m])[10m:1m]", "\"a string\"",
          "sum(test_gauge) - sum(test_gauge offset 1m)",
          "test_gauge @ start()", "test_gauge @ end()", "rate(test_counter_total[5m] @ end())",
          "sum_over_time(test_gauge[10m:1m] @ start())", "max_over_time(test_gauge[10m:1m] @ %d offset 1m)" % (T0 + 900),
          "timestamp(test_gauge @ %d)" % (T0 + 1000),
          "min_over_time(rate(test_counter_total[2m])[10m:30s])",
          "max_over_time(deriv(rate(test_counter_total[2m])[5m:1m])[10m:2m])",
          "count_values by (model_name) (\"n\", vllm:num_requests_running % 3)",
          "topk(2, rate(test_counter_total[5m]))", "bottomk by (model_name) (2, vllm:kv_cache_usage_perc)",
          "topk(scalar(test_sparse), test_gauge)", "quantile(scalar(test_sparse) / 100, test_gauge)",
          "label_replace(rate(test_counter_total[5m]), \"instance\", \"x\", \"mode\", \"a\")",
          "sort_by_label(test_gauge, \"instance\")", "sort_by_label_desc(test_gauge, \"instance\")",
          "mad_over_time(test_gauge[10m])",
          "sum(test_gauge) / count(test_gauge)", "avg(test_gauge) - sum(test_gauge) / count(test_gauge)",
          "vllm:num_requests_running / ignoring(pod) group_left sum without(pod) (vllm:num_requests_running)",
          "sum by (pod) (vllm:num_requests_running) * on(pod) group_right sum by (pod, model_name) (vllm:num_requests_waiting)",
          "vllm:num_requests_running > on(pod) group_left vllm:num_requests_waiting",
          "histogram_quantile(0.75, sum by (le, pod) (rate(vllm:time_to_first_token_seconds_bucket[1m])))",
          "histogram_quantile(scalar(test_sparse) / 100, sum by (le) (rate(vllm:inter_token_latency_seconds_bucket[2m])))"]
    for f in FUNCS_RANGE:
        q.append("%s(test_gauge[5m])" % f)
        q.append("%s(test_counter_total[3m])" % f)
        q.append("sum by (model_name) (%s(vllm:prompt_tokens_total[5m]))" % f)
    for a in AGGS:
        q.append("%s(test_gauge)" % a)
        q.append("%s by (model_name) (vllm:num_requests_running)" % a)
        q.append("%s without (pod, engine) (rate(vllm:prompt_tokens_total[5m]))" % a)
    return q


def gen_random(rng, n):
    out = []

    def sel(metric):
        labs = labels_of(metric)
        if rng.random() < 0.3:
            l = rng.choice(labs)
            op = rng.choice(["=~", "!~", "!="])
            val = rng.choice([".*", "0|1", "llama.*", "2", "t", "serving"])
            return '%s{%s%s"%s"}' % (metric, l, op, val)
        return metric

    def rng_dur():
        return rng.choice(["1m", "2m", "5m", "7m", "10m", "30s"])

    def vec(depth):
        r = rng.random()
        if depth <= 0 or r < 0.25:
            m = rng.choice(GAUGES + COUNTERS)
            s = sel(m)
            if rng.random() < 0.1:
                s += " offset " + rng.choice(["1m", "5m", "90s"])
            return s, labels_of(m)
        if r < 0.45:
            f = rng.choice(FUNCS_RANGE[:-2])
            m = rng.choice(COUNTERS + GAUGES)
            if rng.random() < 0.15:
                inner, labs = vec(depth - 1)
                return "%s((%s)[%s:%s])" % (f, inner, rng_dur(), rng.choice(["30s", "1m", "45s"])), labs
            return "%s(%s[%s])" % (f, sel(m), rng_dur()), labels_of(m)
        if r < 0.6:
            a = rng.choice(AGGS)
            inner, labs = vec(depth - 1)
            g = rng.sample(labs, rng.randrange(0, min(2, len(labs)) + 1))
            kw = rng.choice(["by", "without"])
            newlabs = g if kw == "by" else [l for l in labs if l not in g]
            return "%s %s (%s) (%s)" % (a, kw, ", ".join(g), inner), newlabs
        if r < 0.7:
            f = rng.choice(["abs", "ceil", "floor", "sqrt", "ln", "exp", "sgn", "round", "deg"])
            inner, labs = vec(depth - 1)
            return "%s(%s)" % (f, inner), labs
        if r < 0.85:
            inner, labs = vec(depth - 1)
            op = rng.choice(["+", "-", "*", "/", "%", "^", ">", "<", ">=", "<=", "==", "!=", "> bool", "< bool"])
            num = rng.choice(["0", "1", "2", "0.5", "10", "-3", "100"])
            if rng.random() < 0.5:
                return "%s %s %s" % (inner, op, num), labs
            return "%s %s %s" % (num, op, inner), labs
        # vector-vector on the same metric (matching labels equal)
        m = rng.choice(GAUGES + COUNTERS)
        a = sel(m)
        b = m + " offset " + rng.choice(["1m", "2m", "5m"])
        op = rng.choice(["+", "-", "/", "*", ">", "and", "or", "unless"])
        return "%s %s %s" % (a, op, b), labels_of(m)

    for _ in range(n):
        q, labs = vec(rng.randrange(1, 4))
        r = rng.random()
        if r < 0.08:
            q = "scalar(sum(%s))" % q
        elif r < 0.14:
            q = "%s(%d, %s)" % (rng.choice(["topk", "bottomk"]), rng.randrange(1, 4), q)
        elif r < 0.18:
            q = "quantile(%s, %s)" % (rng.choice(["0", "0.25", "0.5", "0.99", "1"]), q)
        elif r < 0.22:
            q = "count_values(\"val\", round(%s))" % q
        elif r < 0.26:
            q = "%s(%s, %s)" % (rng.choice(["clamp_min", "clamp_max"]), q, rng.choice(["0", "1", "-5"]))
        elif r < 0.30:
            q = "histogram_quantile(%s, sum by (le%s) (rate(%s[%s])))" % (
                rng.choice(["0.1", "0.5", "0.9", "0.999"]), rng.choice(["", ", model_name", ", pod"]),
                rng.choice(["vllm:time_to_first_token_seconds_bucket", "vllm:inter_token_latency_seconds_bucket"]),
                rng.choice(["1m", "5m", "10m"]))
        elif r < 0.33:
            q = "%s(%s[%s:%s])" % (rng.choice(["max_over_time", "avg_over_time", "rate", "deriv", "stddev_over_time"]),
                                  q, rng.choice(["5m", "10m"]), rng.choice(["1m", "20s", "90s"]))
        elif r < 0.36:
            q = "%s @ %d" % (q if " " not in q else "(" + q + ")", T0 + rng.randrange(0, DURATION))
            q = "sum(%s)" % q if rng.random() < 0.5 else q
            if "@" in q and "(" == q[0]:
                q = "sum" + q
        out.append(q)
    return out


# ---------------------------------------------------------------- skips

# Each rule: (regex over the query, reason). Prometheus 2.42 and 2.53 differ there.
SKIP_RULES = [
    (r"\batan2\b", "2.53 drops the metric name on atan2, 2.42 keeps it"),
    (r"\bsort_by_label", "experimental in 2.53, absent in 2.42"),
    (r"\bmad_over_time\b", "experimental in 2.53, absent in 2.42"),
]


def skip_reason(q):
    for rx, why in SKIP_RULES:
        if re.search(rx, q):
            return why
    return None


# ---------------------------------------------------------------- running

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Prom:
    def __init__(self, workdir, om):
        self.dir = os.path.join(workdir, "prom")
        os.makedirs(self.dir, exist_ok=True)
        subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", om, self.dir],
                       check=True, stdout=subprocess.DEVNULL)
        cfg = os.path.join(workdir, "prom.yml")
        with open(cfg, "w") as f:
            f.write("global: {scrape_interval: 15s}\n")
        self.port = free_port()
        self.log = open(os.path.join(workdir, "prom.log"), "w")
        self.proc = subprocess.Popen(
            ["prometheus", "--config.file=" + cfg, "--storage.tsdb.path=" + self.dir,
             "--storage.tsdb.retention.time=100y", "--web.listen-address=127.0.0.1:%d" % self.port,
             "--query.max-samples=50000000"],
            stdout=self.log, stderr=self.log)
        deadline = time.time() + 60
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                c.request("GET", "/-/ready")
                if c.getresponse().status == 200:
                    break
            except OSError:
                pass
            if time.time() > deadline or self.proc.poll() is not None:
                raise SystemExit("prometheus did not start (see prom.log)")
            time.sleep(0.2)
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def query(self, params):
        body = urllib.parse.urlencode(params)
        path = "/api/v1/query_range" if "step" in params else "/api/v1/query"
        for _ in range(3):
            try:
                self.conn.request("POST", path, body, {"Content-Type": "application/x-www-form-urlencoded"})
                return json.loads(self.conn.getresponse().read())
            except (OSError, http.client.HTTPException):
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        raise SystemExit("prometheus query failed")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def run_infermon(binary, om, qfile, params):
    args = [binary, "promql-eval", "--promql.compat", "2", "--data", om, "--queries", qfile,
            "--store", os.environ.get("IM_PROMQL_DIFF_STORE", "mem")]
    args += os.environ.get("IM_PROMQL_DIFF_EVAL_ARGS", "").split()  # e.g. --threads 3
    if "step" in params:
        args += ["--start", str(params["start"]), "--end", str(params["end"]), "--step", str(params["step"])]
    else:
        args += ["--time", str(params["time"])]
    out = subprocess.run(args, check=True, stdout=subprocess.PIPE).stdout.decode()
    return [json.loads(l) for l in out.splitlines() if l.strip()]


def close(a, b):
    if a == b:
        return True
    if math.isnan(a) and math.isnan(b):
        return True
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
        return False
    diff = abs(a - b)
    return diff <= 1e-9 * max(abs(a), abs(b)) or diff < 1e-12


def round_label(v):
    try:
        f = float(v)
    except ValueError:
        return v
    return "%.9g" % f


def norm(res, numeric_labels=False):
    """-> (kind, payload) comparable structure. numeric_labels: label values that
    are numbers (count_values' output) compare to 9 significant digits, since the
    C library's exp/pow/… may differ from Go's math package in the last bit."""
    if res.get("status") != "success":
        # the HTTP API prefixes parse errors with the parameter's name
        return ("error", (res.get("error") or "").replace('invalid parameter "query": ', "", 1))
    d = res["data"]
    t = d["resultType"]
    if t == "scalar":
        return ("scalar", (d["result"][0], float(d["result"][1])))
    if t == "string":
        return ("string", (d["result"][0], d["result"][1]))
    out = {}
    for s in d["result"]:
        key = tuple(sorted((k, round_label(v) if numeric_labels else v) for k, v in s["metric"].items()))
        if t == "vector":
            pts = [(s["value"][0], float(s["value"][1]))]
        else:
            pts = [(p[0], float(p[1])) for p in s["values"]]
        if key in out and numeric_labels:
            key = key + (("#", str(len(out))),)
        if key in out:
            return ("dup", key)
        out[key] = pts
    return (t, out)


def diff(a, b, numeric_labels=False):
    """None when equal, else a sentence."""
    ka, pa = norm(a, numeric_labels)
    kb, pb = norm(b, numeric_labels)
    if ka != kb:
        return "result kinds differ: infermon %s, prometheus %s" % (ka, kb)
    if ka == "error":
        if pa != pb:
            return "error texts differ:\n    infermon:   %s\n    prometheus: %s" % (pa, pb)
        return None
    if ka in ("scalar", "string"):
        if abs(pa[0] - pb[0]) > 1e-6:
            return "time differs"
        if ka == "scalar" and not close(pa[1], pb[1]):
            return "scalar %r vs %r" % (pa[1], pb[1])
        if ka == "string" and pa[1] != pb[1]:
            return "string differs"
        return None
    if set(pa) != set(pb):
        only_a = [dict(k) for k in set(pa) - set(pb)][:3]
        only_b = [dict(k) for k in set(pb) - set(pa)][:3]
        return "series differ: only infermon %s; only prometheus %s" % (only_a, only_b)
    for k in pa:
        x, y = pa[k], pb[k]
        if len(x) != len(y):
            return "series %s: %d vs %d points" % (dict(k), len(x), len(y))
        for (t1, v1), (t2, v2) in zip(x, y):
            if abs(t1 - t2) > 1e-6:
                return "series %s: timestamps differ %s vs %s" % (dict(k), t1, t2)
            if not close(v1, v2):
                return "series %s at %s: %r vs %r" % (dict(k), t1, v1, v2)
    return None


def values_by_time(res):
    k, pl = norm(res)
    out = {}
    if k not in ("matrix", "vector"):
        return None
    for pts in pl.values():
        for t, v in pts:
            out.setdefault(round(t, 3), []).append(v)
    return {t: sorted(vs, key=lambda x: (math.isnan(x), x)) for t, vs in out.items()}


def tie_equal(a, b):
    """topk/bottomk: among equal values, 2.53 keeps the earlier series (a heap whose
    root is replaced only by a strictly better element), 2.42 the later one (pop and
    push); over a range, 2.x also feeds a computed input in Go map order. Accept the
    result when every step has the same multiset of values."""
    x, y = values_by_time(a), values_by_time(b)
    if x is None or y is None or set(x) != set(y):
        return False
    return all(len(x[t]) == len(y[t]) and all(close(p, q) for p, q in zip(x[t], y[t])) for t in x)


def main():
    binary, workdir = sys.argv[1], sys.argv[2]
    nrandom, seed, verbose, check_skips = 1000, 42, False, False
    args = sys.argv[3:]
    while args:
        a = args.pop(0)
        if a == "--random":
            nrandom = int(args.pop(0))
        elif a == "--seed":
            seed = int(args.pop(0))
        elif a == "--verbose":
            verbose = True
        elif a == "--check-skips":
            check_skips = True
    rng = random.Random(seed)
    os.makedirs(workdir, exist_ok=True)
    series = gen_data(rng)
    om = os.path.join(workdir, "data.om")
    write_om(series, om)
    nsamples = sum(len(v) for v in series.values())
    queries = fixed_corpus() + gen_random(rng, nrandom)
    run, skipped = [], {}
    for q in queries:
        why = skip_reason(q)
        if why:
            skipped.setdefault(why, []).append(q)
        else:
            run.append(q)
    qfile = os.path.join(workdir, "queries.txt")
    with open(qfile, "w") as f:
        for q in run:
            f.write(q + "\n")
    print("data: %d series, %d samples; queries: %d run, %d skipped" %
          (len(series), nsamples, len(run), sum(len(v) for v in skipped.values())))
    for why, qs in skipped.items():
        print("  skipped %d (%s), e.g. %s" % (len(qs), why, qs[0]))
    evals = [{"time": T0 + 600}, {"time": T0 + 1805}, {"time": T0 + DURATION - 1},
             {"time": T0 + DURATION + 200}, {"time": T0 + 1234.567},
             {"start": T0, "end": T0 + DURATION, "step": 60},
             {"start": T0 + 97, "end": T0 + 2500, "step": 37}]
    prom = Prom(workdir, om)
    failures = 0
    compared = nonempty = errors = ties = 0
    try:
        for p in evals:
            ours = run_infermon(binary, om, qfile, p)
            if len(ours) != len(run):
                print("FAIL: infermon printed %d results for %d queries" % (len(ours), len(run)))
                return 1
            for q, o in zip(run, ours):
                params = dict(p)
                params["query"] = q
                theirs = prom.query(params)
                d = diff(o, theirs, "count_values" in q)
                if d and re.match(r"\s*(topk|bottomk)\b", q) and tie_equal(o, theirs):
                    ties += 1
                    d = None
                compared += 1
                k, pl = norm(theirs)
                if k == "error":
                    errors += 1
                elif k in ("scalar", "string") or pl:
                    nonempty += 1
                if d:
                    failures += 1
                    if failures <= 40 or verbose:
                        print("MISMATCH %s\n  query: %s\n  %s" % (json.dumps(p), q, d))
                        if verbose:
                            print("  infermon:   %s\n  prometheus: %s" % (json.dumps(o)[:800], json.dumps(theirs)[:800]))
    finally:
        prom.stop()
    if check_skips:
        # Show that every skip rule is needed: the skipped queries do differ.
        sq = [q for qs in skipped.values() for q in qs]
        sfile = os.path.join(workdir, "skipped.txt")
        with open(sfile, "w") as f:
            f.write("".join(q + "\n" for q in sq))
        prom = Prom(workdir + "/again", om)
        try:
            ours = run_infermon(binary, om, sfile, evals[1])
            for q, o in zip(sq, ours):
                params = dict(evals[1])
                params["query"] = q
                print("skipped query %s: %s" % (q, diff(o, prom.query(params)) or "no difference"))
        finally:
            prom.stop()
    print("%d comparisons (%d non-empty results, %d errors on both sides, %d topk/bottomk "
          "results equal up to ties), %d mismatches" % (compared, nonempty, errors, ties, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""promql_data.py — the LLM-serving data set for bench/promql.sh.

PODS pods (10 models) scraped every 15 s for HOURS hours: the vLLM families the
DOMAIN.md queries read — TTFT histogram (vLLM's 22 buckets + +Inf), inter-token
latency histogram (13 + +Inf), request queue/e2e latency sums, preemptions,
prefix-cache hits/queries (tokens), generated tokens, running/waiting gauges,
waiting by reason, KV-cache use — about 51 series per pod.

Writes OUT.om (OpenMetrics, timestamps in seconds: promtool and infermon) and
OUT.prom (text format, timestamps in ms: VictoriaMetrics' /api/v1/import/prometheus).
usage: promql_data.py OUT PODS HOURS
"""
import random
import sys

TTFT = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
        10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0]
ITL = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5]
T0 = 1700000000


def main():
    out, pods, hours = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    rng = random.Random(1)
    steps = int(hours * 3600 / 15) + 1
    # per series: list of values; written series by series
    om = open(out + ".om", "w")
    vm = open(out + ".prom", "w")
    nseries = 0
    for p in range(pods):
        model = "model-%d" % (p % 10)
        base = 'model_name="%s",pod="p%d"' % (model, p)
        cols = {}  # name -> (labels, values list)

        def col(key, lab):
            if key not in cols:
                cols[key] = (lab, [])
            return cols[key][1]
        c = dict(pre=0.0, pq=0.0, ph=0.0, gen=0.0, qs=0.0, es=0.0)
        tb = [0.0] * (len(TTFT) + 1)
        ib = [0.0] * (len(ITL) + 1)
        load = rng.uniform(2, 20)
        for k in range(steps):
            reqs = max(0, int(rng.gauss(load, load / 3)))
            if rng.random() < 0.1:
                c["pre"] += rng.randrange(1, 4)
            q = reqs * rng.randrange(200, 800)
            c["pq"] += q
            c["ph"] += int(q * rng.random() * 0.6)
            c["gen"] += reqs * rng.randrange(50, 300)
            # bucket increments: a few observations with cheap sampling
            for _ in range(min(reqs, 6)):
                x = rng.lognormvariate(-1.0, 1.2)
                y = rng.lognormvariate(-3.0, 0.6)
                c["qs"] += rng.random() * 0.3
                c["es"] += x + rng.random() * 2
                for i, b in enumerate(TTFT):
                    if x <= b:
                        tb[i] += 1
                tb[-1] += 1
                for i, b in enumerate(ITL):
                    if y <= b:
                        ib[i] += 1
                ib[-1] += 1
            col("run", "vllm:num_requests_running{%s}" % base).append(float(min(64, reqs * 2)))
            col("wait", "vllm:num_requests_waiting{%s}" % base).append(float(max(0, reqs - 10)))
            col("wr_c", 'vllm:num_requests_waiting_by_reason{%s,reason="capacity"}' % base).append(float(max(0, reqs - 12)))
            col("wr_d", 'vllm:num_requests_waiting_by_reason{%s,reason="deferred"}' % base).append(float(reqs % 3))
            col("pre", "vllm:num_preemptions_total{%s}" % base).append(c["pre"])
            col("kv", "vllm:kv_cache_usage_perc{%s}" % base).append(round(min(1.0, reqs / 25.0), 3))
            col("pq", "vllm:prefix_cache_queries_total{%s}" % base).append(c["pq"])
            col("ph", "vllm:prefix_cache_hits_total{%s}" % base).append(c["ph"])
            col("gen", "vllm:generation_tokens_total{%s}" % base).append(c["gen"])
            col("qs", "vllm:request_queue_time_seconds_sum{%s}" % base).append(round(c["qs"], 3))
            col("es", "vllm:e2e_request_latency_seconds_sum{%s}" % base).append(round(c["es"], 3))
            for i, b in enumerate(TTFT + ["+Inf"]):
                col("t%d" % i, 'vllm:time_to_first_token_seconds_bucket{%s,le="%s"}' % (base, b)).append(tb[i])
            for i, b in enumerate(ITL + ["+Inf"]):
                col("i%d" % i, 'vllm:inter_token_latency_seconds_bucket{%s,le="%s"}' % (base, b)).append(ib[i])
        for lab, vals in cols.values():
            nseries += 1
            om.write("".join("%s %r %d\n" % (lab, v, T0 + 15 * k) for k, v in enumerate(vals)))
            vm.write("".join("%s %r %d\n" % (lab, v, (T0 + 15 * k) * 1000) for k, v in enumerate(vals)))
    om.write("# EOF\n")
    om.close()
    vm.close()
    print("%d series, %d samples, %d..%d" % (nseries, nseries * steps, T0, T0 + (steps - 1) * 15))


if __name__ == "__main__":
    main()

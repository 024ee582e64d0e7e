#!/usr/bin/python3
"""promql_bench.py — PromQL latency: infermon vs Prometheus 2.42 vs VictoriaMetrics 1.79
on the same data in the same run (driven by bench/promql.sh).

The DOMAIN.md queries run as range queries (the whole data set, step 60 s) and as
instant queries (at the end of the data); each query N times per system, median
reported. Prometheus and VictoriaMetrics answer over HTTP on 127.0.0.1 (keep-alive
connection; the HTTP floor, a `vector(1)` query, is printed too); infermon is timed
in-process by `infermon promql-eval --repeat N` (evaluation plus JSON encoding),
once over its real store (tsdb, memory mode: Gorilla chunks, postings) and once
over the plain in-memory array store (engine cost alone).

usage: promql_bench.py INFERMON DATA_PREFIX WORKDIR REPEAT
"""
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse

QUERIES = [
    ("running", "sum by (model_name) (vllm:num_requests_running)"),
    ("waiting", "sum by (model_name) (vllm:num_requests_waiting)"),
    ("waiting_reason", "sum by (model_name, reason) (vllm:num_requests_waiting_by_reason)"),
    ("preempt_rate", "sum by (model_name) (rate(vllm:num_preemptions_total[5m]))"),
    ("kv_max", "max by (model_name) (vllm:kv_cache_usage_perc)"),
    ("prefix_hit", "sum by (model_name) (rate(vllm:prefix_cache_hits_total[10m])) / sum by (model_name) (rate(vllm:prefix_cache_queries_total[10m]))"),
    ("gen_tokens", "sum by (model_name) (rate(vllm:generation_tokens_total[5m]))"),
    ("ttft_p95", "histogram_quantile(0.95, sum by (le, model_name) (rate(vllm:time_to_first_token_seconds_bucket[5m])))"),
    ("itl_p99", "histogram_quantile(0.99, sum by (le, model_name) (rate(vllm:inter_token_latency_seconds_bucket[5m])))"),
    ("queue_share", "sum by (model_name) (rate(vllm:request_queue_time_seconds_sum[5m])) / sum by (model_name) (rate(vllm:e2e_request_latency_seconds_sum[5m]))"),
]
T0 = 1700000000


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_ready(port, path, proc, secs=120):
    deadline = time.time() + secs
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit("server exited")
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", path)
            if c.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("server not ready")


class Client:
    def __init__(self, port):
        self.port = port
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)

    def query(self, params):
        return json.loads(self.raw(params))

    def raw(self, params):
        """The response body; timing stops when it is received (not parsed)."""
        path = "/api/v1/query_range" if "step" in params else "/api/v1/query"
        body = urllib.parse.urlencode(params)
        for attempt in range(2):
            try:
                self.c.request("POST", path, body, {"Content-Type": "application/x-www-form-urlencoded"})
                return self.c.getresponse().read()
            except (OSError, http.client.HTTPException):
                if attempt:
                    raise
                self.c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)

    def timed(self, params, n):
        self.query(params)  # warm the connection (a peer may have closed an idle one)
        return self._timed(params, n)

    def _timed(self, params, n):
        lat = []
        res = None
        for _ in range(n):
            a = time.perf_counter()
            res = self.raw(params)
            lat.append(time.perf_counter() - a)
        return statistics.median(lat) * 1000, json.loads(res)


def nseries(res):
    if res.get("status") != "success":
        return "ERR " + str(res.get("error"))[:60]
    return len(res["data"]["result"])


def run_infermon(binary, om, qfile, params, n, store):
    args = [binary, "promql-eval", "--data", om, "--queries", qfile, "--repeat", str(n), "--store", store]
    if "step" in params:
        args += ["--start", str(params["start"]), "--end", str(params["end"]), "--step", str(params["step"])]
    else:
        args += ["--time", str(params["time"])]
    out = subprocess.run(args, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sys.stderr.write(out.stderr.decode())
    return [json.loads(l) for l in out.stdout.decode().splitlines() if l.strip()]


def main():
    binary, prefix, work, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    om, prom_txt = prefix + ".om", prefix + ".prom"
    end = T0
    with open(om, "rb") as f:  # last timestamp of the data
        f.seek(-4096, os.SEEK_END)
        for line in f.read().decode().splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[2].isdigit():
                end = max(end, int(parts[2]))
    qfile = os.path.join(work, "queries.txt")
    with open(qfile, "w") as f:
        f.write("".join(q + "\n" for _, q in QUERIES))

    # Prometheus 2.42 over the backfilled blocks.
    pdir = os.path.join(work, "prom")
    os.makedirs(pdir, exist_ok=True)
    a = time.time()
    subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", om, pdir], check=True,
                   stdout=subprocess.DEVNULL)
    print("promtool backfill: %.1f s" % (time.time() - a))
    cfg = os.path.join(work, "prom.yml")
    open(cfg, "w").write("global: {}\n")
    pport = free_port()
    plog = open(os.path.join(work, "prom.log"), "w")
    prom = subprocess.Popen(["prometheus", "--config.file=" + cfg, "--storage.tsdb.path=" + pdir,
                             "--storage.tsdb.retention.time=100y", "--web.listen-address=127.0.0.1:%d" % pport],
                            stdout=plog, stderr=plog)
    # VictoriaMetrics 1.79, data imported over HTTP.
    vport = free_port()
    vlog = open(os.path.join(work, "vm.log"), "w")
    vm = subprocess.Popen(["victoria-metrics", "-storageDataPath=" + os.path.join(work, "vm"),
                           "-httpListenAddr=127.0.0.1:%d" % vport, "-retentionPeriod=100y",
                           "-search.disableCache", "-search.latencyOffset=0s"],
                          stdout=vlog, stderr=vlog)
    try:
        wait_ready(pport, "/-/ready", prom)
        wait_ready(vport, "/health", vm)
        a = time.time()
        subprocess.run(["curl", "-fsS", "--data-binary", "@" + prom_txt,
                        "http://127.0.0.1:%d/api/v1/import/prometheus" % vport], check=True)
        c = http.client.HTTPConnection("127.0.0.1", vport, timeout=600)
        c.request("GET", "/internal/force_flush")
        c.getresponse().read()
        print("victoria-metrics import: %.1f s" % (time.time() - a))
        pc, vc = Client(pport), Client(vport)
        # wait until VM sees every series
        want = nseries(pc.query({"query": "count({__name__=~\"vllm:.*\"})", "time": end}))
        for _ in range(120):
            r = vc.query({"query": "count({__name__=~\"vllm:.*\"})", "time": end})
            if r.get("status") == "success" and r["data"]["result"] and \
                    r["data"]["result"][0]["value"][1] == pc.query({"query": "count({__name__=~\"vllm:.*\"})", "time": end})["data"]["result"][0]["value"][1]:
                break
            time.sleep(1)
        floor_p, _ = pc.timed({"query": "vector(1)", "time": end}, 20)
        floor_v, _ = vc.timed({"query": "vector(1)", "time": end}, 20)
        print("HTTP floor (vector(1)): prometheus %.2f ms, victoria-metrics %.2f ms" % (floor_p, floor_v))
        modes = [("range", {"start": T0, "end": end, "step": 60}), ("instant", {"time": end})]
        # IM_BENCH_PROMQL_BASELINE: an older infermon binary, timed (real store) in
        # the same rounds right after this one; IM_BENCH_PROMQL_ROUNDS: rounds, each
        # timing every system once per query (figures: median over the rounds).
        base = os.environ.get("IM_BENCH_PROMQL_BASELINE")
        rounds = int(os.environ.get("IM_BENCH_PROMQL_ROUNDS", "1"))
        res = {}  # (mode, name, system) -> [ms per round]

        def add(mode, name, system, ms):
            res.setdefault((mode, name, system), []).append(ms)
        for rnd in range(rounds):
            for mode, params in modes:
                ours_t = run_infermon(binary, om, qfile, params, n, "tsdb")
                ours_b = run_infermon(base, om, qfile, params, n, "tsdb") if base else None
                ours_m = run_infermon(binary, om, qfile, params, n, "mem")
                for qi, ((name, q), ot, om_) in enumerate(zip(QUERIES, ours_t, ours_m)):
                    p = dict(params, query=q)
                    pt, pr = pc.timed(p, n)
                    vt, vr = vc.timed(p, n)
                    add(mode, name, "im-tsdb", ot["median_ns"] / 1e6)
                    add(mode, name, "im-mem", om_["median_ns"] / 1e6)
                    add(mode, name, "prom", pt)
                    add(mode, name, "vm", vt)
                    if base:
                        add(mode, name, "im-old", ours_b[qi]["median_ns"] / 1e6)
                    if rnd == 0:
                        print("series %-8s %-15s im %s prom %s vm %s" % (mode, name, nseries(ot), nseries(pr),
                                                                     nseries(vr)))
            print("round %d done" % (rnd + 1))
        systems = ["im-tsdb"] + (["im-old"] if base else []) + ["im-mem", "prom", "vm"]
        print("%-8s %-15s" % ("mode", "query") + "".join("%10s" % x for x in systems) +
              "%9s %9s" % ("prom/im", "vm/im") + ("%9s" % "old/new" if base else "") + "   vm/im per round")
        for mode, _ in modes:
            for name, _ in QUERIES:
                med = {x: statistics.median(res[(mode, name, x)]) for x in systems}
                it = med["im-tsdb"]
                per = [v / i for v, i in zip(res[(mode, name, "vm")], res[(mode, name, "im-tsdb")])]
                line = "%-8s %-15s" % (mode, name) + "".join("%10.2f" % med[x] for x in systems)
                line += "%8.2fx %8.2fx" % (med["prom"] / it, med["vm"] / it)
                if base:
                    line += "%8.2fx" % (med["im-old"] / it)
                line += "   " + " ".join("%.2f" % x for x in per)
                print(line)
        print("(ms, median of %d per round, median over %d round(s); ratios = peer time / infermon-tsdb "
              "time, > 1 means infermon is faster)" % (n, rounds))
    finally:
        prom.terminate()
        vm.terminate()
        prom.wait()
        vm.wait()


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""fleet_bench.py — driven by bench/fleet.sh: loads WORK/h.om (the simulator's
history) into infermon, Prometheus 2.42 and VictoriaMetrics 1.79, then times the
dashboard's and the built-in rules' queries on the three servers over HTTP in the
same rounds and checks infermon's answers against Prometheus'.

usage: fleet_bench.py INFERMON WORK REPEAT ROUNDS
"""
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from promql_bench import Client, free_port, wait_ready  # noqa: E402

# The queries every dashboard refresh (web/app.js: the causal-chain panels at the
# default $__rate_interval of 5m, and the stat boxes, instant) and every built-in
# rule evaluation (src/llm/builtin.c: the recording rules) run.
ML = "model_name"
QUERIES = [
    # built-in recording rules (src/llm/builtin.c)
    ("ttft_p95", "histogram_quantile(0.95, sum by (le, model_name) (rate(vllm:time_to_first_token_seconds_bucket[5m])))"),
    ("ttft_p50", "histogram_quantile(0.5, sum by (le, model_name) (rate(vllm:time_to_first_token_seconds_bucket[5m])))"),
    ("e2e_p95", "histogram_quantile(0.95, sum by (le, model_name) (rate(vllm:e2e_request_latency_seconds_bucket[5m])))"),
    ("finished", "sum by (model_name, finished_reason) (rate(vllm:request_success_total[5m]))"),
    ("fail_ratio", "sum by (model_name) (rate(vllm:request_success_total{finished_reason=~\"abort|error\"}[5m])) / sum by (model_name) (rate(vllm:request_success_total[5m]))"),
    ("gen_tokens", "sum by (model_name) (rate(vllm:generation_tokens_total[5m]))"),
    ("prompt_tokens", "sum by (model_name) (rate(vllm:prompt_tokens_total[5m]))"),
    ("preempt", "sum by (model_name) (rate(vllm:num_preemptions_total[5m]))"),
    ("waiting", "sum by (model_name) (vllm:num_requests_waiting)"),
    ("running", "sum by (model_name) (vllm:num_requests_running)"),
    ("kv_max", "max by (model_name) (vllm:kv_cache_usage_perc)"),
    # dashboard panels (web/app.js)
    ("ttft_p99", "histogram_quantile(0.99, sum by (le, model_name) (rate(vllm:time_to_first_token_seconds_bucket[5m])))"),
    ("itl_p99", "histogram_quantile(0.99, sum by (le, model_name) (rate(vllm:inter_token_latency_seconds_bucket[5m])))"),
    ("e2e_p50", "histogram_quantile(0.5, sum by (le, model_name) (rate(vllm:e2e_request_latency_seconds_bucket[5m])))"),
    ("waiting_reason", "sum by (model_name, reason) (vllm:num_requests_waiting_by_reason)"),
    ("failures", "sum by (model_name, finished_reason) (rate(vllm:request_success_total{finished_reason=~\"abort|error\"}[5m]))"),
    ("prefix_hit", "sum by (model_name) (rate(vllm:prefix_cache_hits_total[5m])) / sum by (model_name) (rate(vllm:prefix_cache_queries_total[5m]))"),
    ("kv_avg", "avg by (model_name) (vllm:kv_cache_usage_perc)"),
    ("queue_share", "sum by (model_name) (rate(vllm:request_queue_time_seconds_sum[5m])) / sum by (model_name) (rate(vllm:e2e_request_latency_seconds_sum[5m]))"),
    ("gpu_util", "avg(DCGM_FI_DEV_GPU_UTIL)"),
    ("sm_active", "avg(DCGM_FI_PROF_SM_ACTIVE)"),
    ("mem_copy", "avg(DCGM_FI_DEV_MEM_COPY_UTIL)"),
    ("fb_used", "sum(DCGM_FI_DEV_FB_USED) / (sum(DCGM_FI_DEV_FB_USED) + sum(DCGM_FI_DEV_FB_FREE))"),
    ("power", "sum(DCGM_FI_DEV_POWER_USAGE)"),
    # dashboard stat boxes (web/app.js)
    ("stat_ttft", "histogram_quantile(0.95, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[5m])))"),
    ("stat_fail", "(sum(rate(vllm:request_success_total{finished_reason=~\"abort|error\"}[5m])) or vector(0)) / sum(rate(vllm:request_success_total[5m]))"),
    ("stat_busy", "count(DCGM_FI_DEV_GPU_UTIL > 10) or vector(0)"),
]
REL = 1e-9


def cpu_of(pid):
    """user + system CPU seconds of a running process."""
    with open("/proc/%d/stat" % pid) as f:
        st = f.read().rsplit(")", 1)[1].split()
    return (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")


def timed_run(args, **kw):
    """(wall s, CPU s) of a child process run to completion."""
    r0 = os.times()
    a = time.perf_counter()
    subprocess.run(args, check=True, **kw)
    w = time.perf_counter() - a
    r1 = os.times()
    return w, (r1.children_user - r0.children_user) + (r1.children_system - r0.children_system)


def du(path, skip=()):
    tot = 0
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if d not in skip]
        for f in files:
            try:
                tot += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return tot


def get(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=3600) as r:
        return r.read().decode()


def metric(text, name):
    tot, seen = 0.0, False
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            tot += float(line.rsplit(" ", 1)[1])
            seen = True
    return tot if seen else None


def series_map(res):
    """labels -> [(t, value string)] of a query answer (None if it failed)."""
    if res.get("status") != "success":
        return None
    out = {}
    for s in res["data"]["result"]:
        key = json.dumps(s["metric"], sort_keys=True)
        out[key] = s["values"] if "values" in s else [s["value"]]
    return out


def close(a, b):
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return abs(x - y) <= REL * max(1.0, abs(x), abs(y))


def diff(ours, ref):
    """'' when the answers agree, else a short description."""
    a, b = series_map(ours), series_map(ref)
    if a is None or b is None:
        return "error: %s / %s" % (str(ours.get("error"))[:60], str(ref.get("error"))[:60])
    if set(a) != set(b):
        return "series differ: %d vs %d (only ours: %s)" % (len(a), len(b), list(set(a) - set(b))[:1])
    bad, tot = 0, 0
    first = ""
    for k in a:
        pa, pb = dict((p[0], p[1]) for p in a[k]), dict((p[0], p[1]) for p in b[k])
        for t in set(pa) | set(pb):
            tot += 1
            if t not in pa or t not in pb or not close(pa[t], pb[t]):
                bad += 1
                if not first:
                    first = "%s at %s: %s vs %s" % (k, t, pa.get(t), pb.get(t))
    return "" if not bad else "%d of %d points differ (%s)" % (bad, tot, first)


def families_pattern():
    """A grep -E pattern for the lines of the families the queries read (with
    their # TYPE/HELP/UNIT lines), up, and # EOF."""
    names = set()
    for _, q in QUERIES:
        names |= set(re.findall(r"(vllm:[a-z0-9_:]+|DCGM_[A-Z0-9_]+)", q))
    base = sorted(set(re.sub(r"_(bucket|sum|count|total)$", "", x) for x in names) | {"up"})
    return "^(# EOF|(# [A-Z]+ )?(%s)[{ _])" % "|".join(re.escape(b) for b in base)


def main():
    if sys.argv[1:] == ["--pattern"]:
        print(families_pattern())
        return
    binary, work, n, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    base = os.environ.get("IM_BASELINE")
    om = os.path.join(work, "h.om")
    m = re.search(r"wrote (\d+) samples of (\d+) series", open(os.path.join(work, "sim.txt")).read())
    nsamples, nseries = int(m.group(1)), int(m.group(2))
    kept = re.search(r"kept (\d+) samples", open(os.path.join(work, "sim.txt")).read())
    if kept:  # ONLY_QUERIED
        nsamples, nseries = int(kept.group(1)), 0
    end = start = None
    with open(om, "rb") as f:  # first and last timestamps
        for line in f.read(1 << 20).decode(errors="replace").splitlines():
            p = line.split()
            if len(p) >= 3 and not line.startswith("#") and p[-1].isdigit():
                start = int(p[-1]) if start is None else min(start, int(p[-1]))
        f.seek(-(1 << 20), os.SEEK_END)
        for line in f.read().decode(errors="replace").splitlines():
            p = line.split()
            if len(p) >= 3 and not line.startswith("#") and p[-1].isdigit():
                end = int(p[-1]) if end is None else max(end, int(p[-1]))
    print("history: %s series, %d samples (%.1f M), %.2f GB of OpenMetrics, %d .. %d" %
          (nseries or "(queried families of the fleet's)", nsamples, nsamples / 1e6, os.path.getsize(om) / 1e9,
           start, end))

    # ---- load ----
    ours = os.path.join(work, "ours")
    prom_dir = os.path.join(work, "prom")
    vm_dir = os.path.join(work, "vm")
    load = {}
    if not os.path.isdir(ours):
        load["infermon"] = timed_run([binary, "tsdb", "import", "--format", "openmetrics", om, ours],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not os.path.isdir(prom_dir):
        load["prometheus"] = timed_run(["promtool", "tsdb", "create-blocks-from", "openmetrics", om,
                                        prom_dir], stdout=subprocess.DEVNULL)
    procs = []
    logs = []

    def spawn(args, name):
        lg = open(os.path.join(work, name + ".log"), "w")
        logs.append(lg)
        p = subprocess.Popen(args, stdout=lg, stderr=lg)
        procs.append(p)
        return p

    cfg = os.path.join(work, "im.yml")
    open(cfg, "w").write("scrape_configs: []\nllm:\n  builtin_rules: false\n")
    open(os.path.join(work, "prom.yml"), "w").write("global: {}\n")

    def spawn_im(b, d, name):
        port = free_port()
        # compat 2: Prometheus 2.x semantics (closed range windows), as the peer's
        args = [b, "run", "--promql.compat=2", "--config.file=" + cfg, "--storage.tsdb.path=" + d,
                "--storage.tsdb.retention.time=100y", "--web.listen-address=127.0.0.1:%d" % port]
        if os.environ.get("FRAME_CACHE") and b == binary:
            args.append("--storage.frame-cache-size=" + os.environ["FRAME_CACHE"])
        return spawn(args, name), port

    try:
        pport, vport = free_port(), free_port()
        prom = spawn(["prometheus", "--config.file=" + os.path.join(work, "prom.yml"),
                      "--storage.tsdb.path=" + prom_dir, "--storage.tsdb.retention.time=100y",
                      "--web.listen-address=127.0.0.1:%d" % pport], "prom")
        vm = spawn(["victoria-metrics", "-storageDataPath=" + vm_dir, "-httpListenAddr=127.0.0.1:%d" % vport,
                    "-retentionPeriod=100y", "-search.disableCache", "-search.latencyOffset=0s"], "vm")
        wait_ready(vport, "/health", vm)
        if not os.path.exists(os.path.join(work, "vm.loaded")):
            # VictoriaMetrics' Prometheus-text import takes milliseconds: the
            # OpenMetrics seconds get three zeros, streamed (the file is GBs).
            c0 = cpu_of(vm.pid)
            a = time.perf_counter()
            subprocess.run("sed '/^#/!s/$/000/' %s | curl -fsS -T - http://127.0.0.1:%d/api/v1/import/prometheus"
                           % (om, vport), shell=True, check=True)
            get(vport, "/internal/force_flush")
            get(vport, "/internal/force_merge")
            for _ in range(36000):  # the merge runs in the background
                t = get(vport, "/metrics")
                if not metric(t, "vm_active_merges") and not metric(t, "vm_pending_rows"):
                    break
                time.sleep(0.1)
            load["victoria-metrics"] = (time.perf_counter() - a, cpu_of(vm.pid) - c0)
            open(os.path.join(work, "vm.loaded"), "w").close()
        im, iport = spawn_im(binary, ours, "im")
        old = None
        if base:
            od = os.path.join(work, "ours-old")
            shutil.rmtree(od, ignore_errors=True)
            shutil.copytree(ours, od)
            old, oport = spawn_im(base, od, "im-old")
        wait_ready(pport, "/-/ready", prom, 600)
        wait_ready(iport, "/-/ready", im, 600)
        if base:
            wait_ready(oport, "/-/ready", old, 600)
        for k, (w, c) in load.items():
            print("load %-17s %7.1f s wall %7.1f s CPU  (%.2f CPU s per M samples)" % (k, w, c, c / nsamples * 1e6))
        sizes = {"infermon": du(ours, ("wal",)), "prometheus": du(prom_dir, ("wal", "chunks_head")),
                 "victoria-metrics": du(vm_dir)}
        for k, v in sizes.items():
            print("disk %-17s %10d B  %.3f B/sample" % (k, v, v / nsamples))

        clients = {"im": Client(iport), "prom": Client(pport), "vm": Client(vport)}
        if base:
            clients["im-old"] = Client(oport)
        cnt = 'count({__name__=~"vllm:.*"})'
        want = clients["prom"].query({"query": cnt, "time": end})["data"]["result"][0]["value"][1]
        for _ in range(600):
            r = clients["vm"].query({"query": cnt, "time": end})
            if r.get("status") == "success" and r["data"]["result"] and r["data"]["result"][0]["value"][1] == want:
                break
            time.sleep(1)
        else:
            print("warning: victoria-metrics sees %s vllm series, prometheus %s" % (r, want))
        for k, c in clients.items():
            print("HTTP floor (vector(1)) %-6s %.2f ms" % (k, c.timed({"query": "vector(1)", "time": end}, 20)[0]))

        modes = [("range", {"start": start, "end": end, "step": 60}), ("instant", {"time": end})]
        systems = list(clients)
        cold, warm, answers = {}, {}, {}
        for mode, params in modes:  # cold: each query's first run after the servers started
            for name, q in QUERIES:
                for s in systems:
                    p = dict(params, query=q)
                    a = time.perf_counter()
                    raw = clients[s].raw(p)
                    cold[(mode, name, s)] = (time.perf_counter() - a) * 1000
                    answers[(mode, name, s)] = json.loads(raw)
        for rnd in range(rounds):
            for mode, params in modes:
                for name, q in QUERIES:
                    for s in systems:
                        ms, _ = clients[s]._timed(dict(params, query=q), n)
                        warm.setdefault((mode, name, s), []).append(ms)
            print("round %d done" % (rnd + 1))
        head = "%-8s %-15s" % ("mode", "query")
        head += "".join("%9s" % ("c." + s) for s in systems) + "".join("%9s" % ("w." + s) for s in systems)
        head += "  vm/im cold warm  prom/im warm" + ("  old/new warm" if base else "")
        print(head)
        bad = 0
        worst = []
        for mode, _ in modes:
            for name, _ in QUERIES:
                c = {s: cold[(mode, name, s)] for s in systems}
                w = {s: statistics.median(warm[(mode, name, s)]) for s in systems}
                line = "%-8s %-15s" % (mode, name) + "".join("%9.2f" % c[s] for s in systems)
                line += "".join("%9.2f" % w[s] for s in systems)
                line += "   %5.2fx %5.2fx    %5.2fx" % (c["vm"] / c["im"], w["vm"] / w["im"], w["prom"] / w["im"])
                if base:
                    line += "     %5.2fx" % (w["im-old"] / w["im"])
                print(line)
                worst.append((min(c["vm"] / c["im"], w["vm"] / w["im"]), mode, name))
        print("(ms; c. = cold: the first run after start, w. = warm: median of %d per round, median of %d "
              "round(s); ratios = peer time / infermon time, > 1: infermon faster; goal vm/im >= 2)" % (n, rounds))
        worst.sort()
        print("goal (infermon <= half of VictoriaMetrics' time, cold and warm): met by %d of %d; worst: %s" %
              (sum(1 for x in worst if x[0] >= 2), len(worst),
               ", ".join("%s %s %.2fx" % (m_, q_, r_) for r_, m_, q_ in worst[:5])))
        for mode, _ in modes:
            for name, _ in QUERIES:
                d = diff(answers[(mode, name, "im")], answers[(mode, name, "prom")])
                if d:
                    bad += 1
                    print("DIFF %s %s: %s" % (mode, name, d))
        print("answers: %d of %d queries agree with Prometheus within %g (relative)" %
              (2 * len(QUERIES) - bad, 2 * len(QUERIES), REL))
        fc = get(iport, "/metrics")
        print("infermon frame cache: %s hits, %s misses, %s evictions, %s bytes (limit %s)" % tuple(
            "%.0f" % (metric(fc, "infermon_tsdb_frame_cache_" + k) or 0)
            for k in ("hits_total", "misses_total", "evictions_total", "bytes", "limit_bytes")))
        for k, p in (("infermon", im), ("prometheus", prom), ("victoria-metrics", vm)):
            with open("/proc/%d/status" % p.pid) as f:
                rss = [l for l in f if l.startswith("VmRSS")][0].split()[1]
            print("RSS after the queries %-17s %6.0f MB" % (k, int(rss) / 1024))
        sys.exit(1 if bad else 0)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait()
        for lg in logs:
            lg.close()


if __name__ == "__main__":
    main()

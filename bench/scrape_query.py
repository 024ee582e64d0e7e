#!/usr/bin/python3
"""scrape_query.py — helpers for bench/scrape.sh (docs/performance.md, "Scraping").

  scrape_query.py latency URL T0 T1 STEP N [VM]
      The DOMAIN.md queries against one system's HTTP API after a scrape run:
      /api/v1/query at T1 and /api/v1/query_range over [T0, T1] at STEP, each N
      times over one keep-alive connection; prints one line per query (median ms)
      and a final line "total instant_ms range_ms" (sums of the medians). VM=1
      adds nocache=1 so VictoriaMetrics' rollup cache does not answer repeats.

  scrape_query.py lag URL T1 WINDOW INTERVAL
      Scrape punctuality from the raw `up` samples of the last WINDOW seconds
      (their timestamps are the scrape start times in all three systems). Per
      target the slot offset is estimated as the phase (timestamp mod INTERVAL)
      that starts the largest circular gap between phases, so lag = (phase -
      offset) mod INTERVAL is a lower bound of the true lag (exact when the
      target's earliest scrape in the window was on time). Missed slots: gaps
      between consecutive scrapes longer than 1.5 INTERVAL. Prints
      "lag targets=.. scrapes=.. p50_ms=.. p90_ms=.. p99_ms=.. max_ms=.. missed=..".

  scrape_query.py value URL QUERY [T]
      The first value of an instant query (0 if empty).
"""
import http.client
import json
import statistics
import sys
import time
import urllib.parse

QUERIES = [
    "sum by (model_name) (vllm:num_requests_running)",
    "sum by (model_name) (vllm:num_requests_waiting)",
    "sum by (model_name, reason) (vllm:num_requests_waiting_by_reason)",
    "sum by (model_name) (rate(vllm:num_preemptions_total[5m]))",
    "max by (model_name) (vllm:kv_cache_usage_perc)",
    "sum by (model_name) (rate(vllm:prefix_cache_hits_total[10m])) / sum by (model_name) (rate(vllm:prefix_cache_queries_total[10m]))",
    "sum by (model_name) (rate(vllm:generation_tokens_total[5m]))",
    "histogram_quantile(0.95, sum by (le, model_name) (rate(vllm:time_to_first_token_seconds_bucket[5m])))",
    "histogram_quantile(0.99, sum by (le, model_name) (rate(vllm:inter_token_latency_seconds_bucket[5m])))",
    "sum by (model_name) (rate(vllm:request_queue_time_seconds_sum[5m])) / sum by (model_name) (rate(vllm:e2e_request_latency_seconds_sum[5m]))",
    "avg by (Hostname) (DCGM_FI_DEV_GPU_UTIL)",
    'sum by (namespace) (kueue_local_queue_resource_reservation{resource="nvidia.com/gpu"})',
]


class Conn:
    def __init__(self, url):
        u = urllib.parse.urlparse(url)
        self.host, self.port = u.hostname, u.port
        self.c = http.client.HTTPConnection(self.host, self.port, timeout=600)

    def post(self, path, params):
        body = urllib.parse.urlencode(params)
        hdr = {"Content-Type": "application/x-www-form-urlencoded"}
        for attempt in range(2):
            try:
                self.c.request("POST", path, body, hdr)
                r = self.c.getresponse()
                data = r.read()
                if r.status != 200:
                    raise SystemExit("%s %s: HTTP %d %s" % (path, params, r.status, data[:200]))
                return data
            except (OSError, http.client.HTTPException):
                if attempt:
                    raise
                self.c = http.client.HTTPConnection(self.host, self.port, timeout=600)
        return b""


def latency(url, t0, t1, step, n, vm):
    c = Conn(url)
    extra = {"nocache": "1"} if vm else {}
    tot_i = tot_r = 0.0
    for q in QUERIES:
        ti, tr = [], []
        res = None
        for _ in range(n):
            s = time.perf_counter()
            body = c.post("/api/v1/query", dict(query=q, time=t1, **extra))
            ti.append(time.perf_counter() - s)
            s = time.perf_counter()
            c.post("/api/v1/query_range", dict(query=q, start=t0, end=t1, step=step, **extra))
            tr.append(time.perf_counter() - s)
            res = body
        nres = len(json.loads(res)["data"]["result"])
        mi, mr = statistics.median(ti) * 1e3, statistics.median(tr) * 1e3
        tot_i += mi
        tot_r += mr
        print("  %8.2f ms %8.2f ms  %3d series  %s" % (mi, mr, nres, q[:90]))
    print("total %.2f %.2f" % (tot_i, tot_r))


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, int(round(p / 100 * (len(xs) - 1)))))
    return xs[k]


def lag(url, t1, window, interval):
    c = Conn(url)
    d = json.loads(c.post("/api/v1/query", {"query": "up[%ds]" % window, "time": t1}))
    iv = int(round(interval * 1000))
    lags, missed, n = [], 0, 0
    for s in d["data"]["result"]:
        ts = sorted(int(round(float(v[0]) * 1000)) for v in s["values"])
        if not ts:
            continue
        n += 1
        for a, b in zip(ts, ts[1:]):
            if b - a > 1.5 * iv:
                missed += int(round((b - a) / iv)) - 1
        ph = sorted(t % iv for t in ts)
        # offset = the phase after the largest circular gap
        best, off = -1, ph[0]
        for i, p in enumerate(ph):
            prev = ph[i - 1] if i else ph[-1] - iv
            if p - prev > best:
                best, off = p - prev, p
        lags += [((p - off) % iv) for p in ph]
    print("lag targets=%d scrapes=%d p50_ms=%d p90_ms=%d p99_ms=%d max_ms=%d missed=%d"
          % (n, len(lags), pct(lags, 50), pct(lags, 90), pct(lags, 99),
             max(lags) if lags else -1, missed))


def value(url, q, t=None):
    c = Conn(url)
    p = {"query": q}
    if t:
        p["time"] = t
    r = json.loads(c.post("/api/v1/query", p))["data"]["result"]
    print(r[0]["value"][1] if r else 0)


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "latency":
        latency(a[1], a[2], a[3], a[4], int(a[5]), len(a) > 6 and a[6] == "1")
    elif a[0] == "lag":
        lag(a[1], a[2], int(a[3]), float(a[4]))
    elif a[0] == "value":
        value(a[1], a[2], a[3] if len(a) > 3 else None)
    else:
        raise SystemExit(__doc__)

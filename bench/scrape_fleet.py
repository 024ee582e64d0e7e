#!/usr/bin/python3
"""A simulated fleet for bench/scrape.sh: T targets on one port (/t0 .. /tT-1),
each exposing S series shaped like vLLM and dcgm-exporter metrics, with values
that move between scrapes (counters grow, gauges wander). Bodies are pre-rendered
(V variants per target, served in turn) so the fleet costs little CPU."""
import http.server
import random
import socketserver
import sys

port, targets, series = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
VARIANTS = 20
random.seed(7)
names = ["vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:gpu_cache_usage_perc",
         "vllm:prompt_tokens_total", "vllm:generation_tokens_total", "DCGM_FI_DEV_GPU_UTIL",
         "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_SM_CLOCK",
         "vllm:time_to_first_token_seconds_bucket"]
bodies = []
for t in range(targets):
    per = []
    base = [random.random() * 1000 for _ in range(series)]
    for v in range(VARIANTS):
        lines = []
        for s in range(series):
            n = names[s % len(names)]
            val = base[s] + v * (s % 7 + 1) if n.endswith("total") or n.endswith("bucket") else \
                round(base[s] * (1 + 0.01 * ((v * (s + 3)) % 11)), 3)
            lines.append('%s{model_name="llama-3-8b",pod="pod-%d",gpu="%d",UUID="GPU-%04d-%04d"} %s\n'
                         % (n, t, s // len(names), t, s, repr(val)))
        per.append("".join(lines).encode())
    bodies.append(per)
counts = [0] * targets

class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        try:
            t = int(self.path.strip("/").lstrip("t").split("?")[0])
        except ValueError:
            self.send_error(404); return
        b = bodies[t][counts[t] % VARIANTS]
        counts[t] += 1
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def log_message(self, *a):
        pass

class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    def handle_error(self, request, client_address):
        pass  # scrapers that time out or shut down reset connections
S(("127.0.0.1", port), H).serve_forever()

#!/usr/bin/env python3
"""A pass-through proxy in front of an infermon daemon that answers
GET /api/v1/llm/slos from a JSON file (re-read at every request), so the SLO
page can be driven through states the daemon's own SLOs do not reach on
demand (no data, exhausted budgets, firing alerts).

usage: slo_proxy.py LISTEN_PORT UPSTREAM_URL SLOS_JSON_FILE"""
import sys
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, UP, FIXTURE = int(sys.argv[1]), sys.argv[2].rstrip("/"), sys.argv[3]


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def _send(self, code, ctype, body):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _forward(self, method):
        if self.path.split("?")[0] == "/api/v1/llm/slos":
            with open(FIXTURE, "rb") as f:
                return self._send(200, "application/json", f.read())
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        req = urllib.request.Request(UP + self.path, data=body, method=method)
        if self.headers.get("Content-Type"):
            req.add_header("Content-Type", self.headers["Content-Type"])
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                self._send(r.status, r.headers.get("Content-Type", "text/plain"), r.read())
        except urllib.error.HTTPError as e:
            self._send(e.code, e.headers.get("Content-Type", "text/plain"), e.read())

    def do_GET(self):
        self._forward("GET")

    def do_POST(self):
        self._forward("POST")


ThreadingHTTPServer(("127.0.0.1", PORT), H).serve_forever()

#!/usr/bin/env python3
"""k8s_list_api.py — a minimal Kubernetes API server for reference runs: serves
fixed List objects and watches that stay open without events.

usage: k8s_list_api.py PORT PATH=FILE...
  e.g. k8s_list_api.py 8080 /api/v1/pods=pods.json

GET PATH returns FILE (a List, as `kubectl get --raw PATH` shows it); GET
PATH?watch=true answers 200 and then sends nothing until timeoutSeconds (or the
client leaves), as an API server does when nothing changes. /version answers
like a 1.29 server. Everything else is 404 with a Status object. It prints
"ready" once listening. With K8S_API_LOG=FILE each request line (path and
Authorization header) is appended to FILE."""
import json
import os
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROUTES = {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *a):
        pass

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if os.environ.get("K8S_API_LOG"):
            with open(os.environ["K8S_API_LOG"], "a") as f:
                f.write("%s %s\n" % (self.path, self.headers.get("Authorization", "")))
        u = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(u.query)
        if u.path == "/version":
            return self.send_json(200, {"major": "1", "minor": "29", "gitVersion": "v1.29.0",
                                        "platform": "linux/amd64"})
        if u.path not in ROUTES:
            return self.send_json(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                        "reason": "NotFound", "code": 404,
                                        "message": "the server could not find the requested resource"})
        if q.get("watch", ["false"])[0] in ("true", "1"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.flush()
            deadline = time.time() + float(q.get("timeoutSeconds", ["300"])[0])
            while time.time() < deadline:
                time.sleep(0.2)
            return
        with open(ROUTES[u.path], "rb") as f:
            return self.send_json(200, json.load(f))


def main():
    port = int(sys.argv[1])
    for a in sys.argv[2:]:
        p, f = a.split("=", 1)
        ROUTES[p] = f
    srv = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    srv.daemon_threads = True
    print("ready", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""fake_backend.py — a failing Prometheus-compatible query API for the query
backend test (run_query_backend.sh).

usage: fake_backend.py PORT

Every request /<mode>/api/v1/... fails in that mode (so one fake serves several
infermons, each with --query.backend-url http://127.0.0.1:PORT/<mode>):
  slow       answers after 5 s (the client's timeout is shorter)
  http500    500 with a text body, as a broken proxy in front of a store
  http400    400 with an HTML body
  prometheus 422 with a Prometheus error answer (errorType execution)
  malformed  200 with a body that is not JSON
  shape      200 with JSON whose data is not a query answer
  hang       holds the request until the client hangs up (counted as gone),
             60 s at most; a request whose query has "quick" in it is answered
             at once with an empty vector
GET /-/requests answers how many API requests arrived; GET /-/state
{"requests":N,"inflight":N,"gone":N} (hang mode: held now, hung up on).
"""
import json
import select
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

state = {"requests": 0, "inflight": 0, "gone": 0}
lock = threading.Lock()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, code, ctype, body):
        b = body.encode()
        try:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (slow mode): what the test wants

    def answer(self):
        if self.path == "/-/requests":
            return self.send(200, "text/plain", "%d\n" % state["requests"])
        if self.path == "/-/state":
            with lock:
                return self.send(200, "application/json", json.dumps(state))
        n = int(self.headers.get("Content-Length") or 0)
        form = self.rfile.read(n).decode(errors="replace") if n else ""
        with lock:
            state["requests"] += 1
        mode = self.path.split("/")[1] if self.path.count("/") > 1 else ""
        if mode == "slow":
            time.sleep(5)
            return self.send(200, "application/json", '{"status":"success","data":[]}')
        if mode == "hang":
            if "quick" in self.path or "quick" in form:
                return self.send(200, "application/json", '{"status":"success","data":{"resultType":"vector","result":[]}}')
            with lock:
                state["inflight"] += 1
            gone = False
            deadline = time.time() + 60
            while time.time() < deadline and not gone:
                r, _, _ = select.select([self.connection], [], [], 0.05)
                if r:
                    try:
                        gone = self.connection.recv(1, 2) == b""  # MSG_PEEK: EOF = hung up
                    except OSError:
                        gone = True
            with lock:
                state["inflight"] -= 1
                state["gone"] += gone
            if gone:
                self.close_connection = True
                return None
            return self.send(200, "application/json", '{"status":"success","data":{"resultType":"vector","result":[]}}')
        if mode == "http500":
            return self.send(500, "text/plain", "upstream store exploded\n")
        if mode == "http400":
            return self.send(400, "text/html", "<html><body>400 Bad Request</body></html>")
        if mode == "prometheus":
            return self.send(422, "application/json",
                             '{"status":"error","errorType":"execution","error":"query processing would load too many samples into memory"}')
        if mode == "malformed":
            return self.send(200, "application/json", '{"status":"success","data":[1,2')
        if mode == "shape":
            return self.send(200, "application/json", '{"status":"success","data":{"resultType":"vector"}}')
        return self.send(500, "text/plain", "unknown mode\n")

    do_GET = answer
    do_POST = answer


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()

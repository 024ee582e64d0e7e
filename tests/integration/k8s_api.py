#!/usr/bin/env python3
"""k8s_api.py — a Kubernetes API server for tests (python3 stdlib only).

Serves list and watch of the objects in a fixture file the way a cluster's API
server answers them (and GET of one namespaced object by name): `GET <collection>?limit=N&continue=T&resourceVersion=0`
returns a List with metadata.resourceVersion and continue tokens; `?watch=true&
resourceVersion=N` streams chunked JSON lines (ADDED/MODIFIED/DELETED, BOOKMARK
when allowWatchBookmarks=true, ERROR with a 410 Status once the requested
resourceVersion was compacted away). labelSelector and fieldSelector are
applied. TLS (--cert/--key) and a bearer token (--token) are checked when given.

Changes over time come from a script file (a JSON list of steps, each a list of
{"op": "add"|"update"|"delete", "object": {...}}); the test drives it:
  POST /_control/step          apply the next step, answers {"step": i, "rv": N}
  POST /_control/gone?mode=event|http
                               compact history: open watches get an ERROR 410
                               event (mode=event) or the next watch request an
                               HTTP 410 (mode=http)
  POST /_control/fail?path=P&mode=500|403|hang|malformed&count=N
                               the next N requests whose path starts with P fail
  POST /_control/churn?rate=R  starts updating R pods a second (benchmarks)
  GET  /_control/requests      the request log (paths with query)
  GET  /_control/stats         {"unauthorized": N, "requests": N}
Synthetic load (benchmarks): --pods N creates N pods, --events-per-sec R updates
R of them a second (a label changes).
"""
import argparse
import copy
import json
import random
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PLURAL = {"Pod": "pods", "Service": "services", "Endpoints": "endpoints", "Node": "nodes",
          "EndpointSlice": "endpointslices", "Ingress": "ingresses", "Namespace": "namespaces"}
CLUSTER_SCOPED = {"Node", "Namespace"}


def plural(kind):
    return PLURAL.get(kind, kind.lower() + "s")


def prefix_of(api_version):
    return "/api/" + api_version if "/" not in api_version else "/apis/" + api_version


class Store:
    def __init__(self):
        self.mu = threading.Condition()
        self.rv = 1000
        self.objs = {}  # (prefix, plural) -> {(ns, name): obj}
        self.events = []  # (rv, (prefix, plural), type, obj)
        self.compacted = 0  # watches from an rv below this get 410
        self.gone_epoch = 0
        self.http_gone = 0
        self.fail = []  # [path prefix, mode, count]
        self.log = []
        self.unauthorized = 0

    def res_key(self, obj):
        return (prefix_of(obj["apiVersion"]), plural(obj["kind"]))

    def apply(self, op, obj):
        obj = copy.deepcopy(obj)
        rk = self.res_key(obj)
        md = obj.setdefault("metadata", {})
        key = (md.get("namespace", ""), md["name"])
        coll = self.objs.setdefault(rk, {})
        self.rv += 1
        if op == "delete":
            old = coll.pop(key, None)
            if old is None:
                return
            obj = copy.deepcopy(old)
            obj["metadata"]["resourceVersion"] = str(self.rv)
            self.events.append((self.rv, rk, "DELETED", obj))
        else:
            md.setdefault("uid", "uid-%s-%s-%s" % (obj["kind"].lower(), key[0], key[1]))
            md.setdefault("creationTimestamp", "2024-05-01T10:00:00Z")
            md["resourceVersion"] = str(self.rv)
            typ = "MODIFIED" if key in coll else "ADDED"
            coll[key] = obj
            self.events.append((self.rv, rk, typ, obj))
        if len(self.events) > 100000:
            del self.events[:50000]
            self.compacted = max(self.compacted, self.events[0][0] - 1)


def parse_label_selector(s):
    reqs = []
    for part in split_top(s):
        part = part.strip()
        if not part:
            continue
        if " notin " in part or " in " in part:
            neg = " notin " in part
            k, vs = part.split(" notin " if neg else " in ", 1)
            vals = [v.strip() for v in vs.strip().strip("()").split(",")]
            reqs.append(("notin" if neg else "in", k.strip(), vals))
        elif "!=" in part:
            k, v = part.split("!=", 1)
            reqs.append(("!=", k.strip(), v.strip()))
        elif "==" in part or "=" in part:
            k, v = part.split("==", 1) if "==" in part else part.split("=", 1)
            reqs.append(("=", k.strip(), v.strip()))
        elif part.startswith("!"):
            reqs.append(("!exists", part[1:].strip(), None))
        else:
            reqs.append(("exists", part, None))
    return reqs


def split_top(s):
    out, depth, cur = [], 0, ""
    for c in s:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
    out.append(cur)
    return out


def label_match(reqs, labels):
    for op, k, v in reqs:
        have = k in labels
        val = labels.get(k)
        if op == "=" and val != v:
            return False
        if op == "!=" and val == v:
            return False
        if op == "exists" and not have:
            return False
        if op == "!exists" and have:
            return False
        if op == "in" and val not in v:
            return False
        if op == "notin" and val in v:
            return False
    return True


def field_value(obj, path):
    cur = obj
    for p in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(p, "")
    return cur if isinstance(cur, str) else ""


def field_match(sel, obj):
    for part in sel.split(","):
        part = part.strip()
        if not part:
            continue
        if "!=" in part:
            k, v = part.split("!=", 1)
            if field_value(obj, k.strip()) == v.strip():
                return False
        else:
            k, v = part.split("==", 1) if "==" in part else part.split("=", 1)
            if field_value(obj, k.strip()) != v.strip():
                return False
    return True


STORE = Store()
ARGS = None
STEPS = []
STEP_I = [0]


def parse_path(path):
    """-> (prefix, namespace, plural, name) or None; name "" for a collection."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        pre, rest = "/api/" + parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        pre, rest = "/apis/" + parts[1] + "/" + parts[2], parts[3:]
    else:
        return None
    ns = ""
    if len(rest) in (3, 4) and rest[0] == "namespaces":
        ns, rest = rest[1], rest[2:]
    if len(rest) == 2 and ns:  # one object: GET .../namespaces/NS/PLURAL/NAME
        return pre, ns, rest[0], rest[1]
    if len(rest) != 1:
        return None
    return pre, ns, rest[0], ""


def list_kind(pl):
    for k, v in PLURAL.items():
        if v == pl:
            return k
    return pl[:-1].capitalize()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def status(self, code, reason, msg):
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": msg, "reason": reason, "code": code}

    def do_POST(self):
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        with STORE.mu:
            if u.path == "/_control/step":
                if STEP_I[0] >= len(STEPS):
                    return self.send_json(400, {"error": "no more steps"})
                for a in STEPS[STEP_I[0]]:
                    STORE.apply(a["op"], a["object"])
                STEP_I[0] += 1
                STORE.mu.notify_all()
                return self.send_json(200, {"step": STEP_I[0], "rv": STORE.rv})
            if u.path == "/_control/gone":
                STORE.compacted = STORE.rv
                if q.get("mode", "event") == "http":
                    STORE.http_gone = STORE.rv
                STORE.gone_epoch += 1
                STORE.mu.notify_all()
                return self.send_json(200, {"compacted": STORE.rv})
            if u.path == "/_control/churn":
                threading.Thread(target=churn, args=(int(q.get("rate", "10")), 0),
                                 daemon=True).start()
                return self.send_json(200, {})
            if u.path == "/_control/fail":
                STORE.fail.append([q.get("path", "/"), q.get("mode", "500"),
                                   int(q.get("count", "1"))])
                return self.send_json(200, {})
        self.send_json(404, {})

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        with STORE.mu:
            STORE.log.append(self.path)
        if u.path == "/_control/requests":
            with STORE.mu:
                return self.send_json(200, list(STORE.log))
        if u.path == "/_control/stats":
            with STORE.mu:
                return self.send_json(200, {"unauthorized": STORE.unauthorized,
                                            "requests": len(STORE.log)})
        tokens = [ARGS.token] if ARGS.token else []
        if ARGS.token_file:  # re-read: tests rotate it; one accepted token a line
            with open(ARGS.token_file) as f:
                tokens = [t.strip() for t in f if t.strip()]
        if tokens and self.headers.get("Authorization") not in ["Bearer " + t for t in tokens]:
            with STORE.mu:
                STORE.unauthorized += 1
            return self.send_json(401, self.status(401, "Unauthorized", "Unauthorized"))
        with STORE.mu:
            for f in STORE.fail:
                if f[2] > 0 and u.path.startswith(f[0]):
                    f[2] -= 1
                    mode = f[1]
                    break
            else:
                mode = None
        if mode == "hang":
            time.sleep(3600)
            return
        if mode in ("500", "403"):
            c = int(mode)
            return self.send_json(c, self.status(c, "InternalError" if c == 500 else "Forbidden",
                                                 "injected failure"))
        if u.path == "/version":
            return self.send_json(200, {"major": "1", "minor": "26", "gitVersion": "v1.26.1",
                                        "gitCommit": "8f94681cd294aa8cfd3407b8191f6c70214973a4",
                                        "gitTreeState": "clean", "buildDate": "2023-01-18T15:51:25Z",
                                        "goVersion": "go1.19.5", "compiler": "gc",
                                        "platform": "linux/amd64"})
        pp = parse_path(u.path)
        if not pp:
            return self.send_json(404, self.status(404, "NotFound", "the server could not find "
                                                   "the requested resource"))
        pre, ns, pl, name = pp
        if name:
            with STORE.mu:
                o = STORE.objs.get((pre, pl), {}).get((ns, name))
                o = copy.deepcopy(o) if o else None
            if not o:
                return self.send_json(404, self.status(404, "NotFound", '%s "%s" not found'
                                                       % (pl, name)))
            return self.send_json(200, o)
        if mode == "malformed":
            body = b'{"kind":"List","items":[{"metadata":{"name":'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        lsel = parse_label_selector(q.get("labelSelector", ""))
        fsel = q.get("fieldSelector", "")

        def visible(obj):
            md = obj.get("metadata", {})
            if ns and md.get("namespace", "") != ns:
                return False
            return label_match(lsel, md.get("labels") or {}) and field_match(fsel, obj)

        if q.get("watch") in ("true", "1"):
            return self.watch(pre, pl, q, visible)
        with STORE.mu:
            coll = STORE.objs.get((pre, pl), {})
            items = [o for _, o in sorted(coll.items()) if visible(o)]
            rv = STORE.rv
        start = int(q.get("continue") or 0)
        limit = int(q.get("limit") or 0)
        page = items[start:start + limit] if limit else items[start:]
        nxt = start + len(page)
        meta = {"resourceVersion": str(rv)}
        if limit and nxt < len(items):
            meta["continue"] = str(nxt)
            meta["remainingItemCount"] = len(items) - nxt
        out = []
        for o in page:
            o = dict(o)
            o.pop("kind", None)
            o.pop("apiVersion", None)
            out.append(o)
        self.send_json(200, {"kind": list_kind(pl) + "List",
                             "apiVersion": pre.split("/", 2)[2], "metadata": meta,
                             "items": out})

    def chunk(self, obj):
        data = (json.dumps(obj) + "\n").encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def watch(self, pre, pl, q, visible):
        rv = int(q.get("resourceVersion") or 0)
        timeout = int(q.get("timeoutSeconds") or 300)
        bookmarks = q.get("allowWatchBookmarks") == "true"
        with STORE.mu:
            if STORE.http_gone and rv <= STORE.http_gone:
                STORE.http_gone = 0
                gone_http = True
            else:
                gone_http = False
            epoch = STORE.gone_epoch
            too_old = rv < STORE.compacted
        if gone_http:
            return self.send_json(410, self.status(410, "Expired", "too old resource version"))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        kind = list_kind(pl)
        api_version = pre.split("/", 2)[2]
        try:
            if too_old:
                self.chunk({"type": "ERROR", "object": self.status(
                    410, "Expired", "too old resource version: %d (%d)" % (rv, STORE.compacted))})
                self.wfile.write(b"0\r\n\r\n")
                return
            deadline = time.time() + timeout
            last_bm = time.time()
            while time.time() < deadline:
                with STORE.mu:
                    if STORE.gone_epoch != epoch:
                        evs = None
                    else:
                        evs = [e for e in STORE.events if e[0] > rv and e[1] == (pre, pl)]
                        if not evs:
                            STORE.mu.wait(0.2)
                            evs = [e for e in STORE.events if e[0] > rv and e[1] == (pre, pl)]
                        cur = STORE.rv
                if evs is None:
                    self.chunk({"type": "ERROR", "object": self.status(
                        410, "Expired", "too old resource version: %d" % rv)})
                    break
                for erv, _, typ, obj in evs:
                    rv = erv
                    if visible(obj):
                        self.chunk({"type": typ, "object": obj})
                if bookmarks and time.time() - last_bm >= ARGS.bookmark_interval:
                    last_bm = time.time()
                    rv = max(rv, cur)
                    self.chunk({"type": "BOOKMARK", "object": {
                        "kind": kind, "apiVersion": api_version,
                        "metadata": {"resourceVersion": str(rv), "creationTimestamp": None}}})
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            pass


def synthetic(n):
    nodes = ["gpu-node-%d" % i for i in range(max(1, n // 100))]
    for i in range(n):
        STORE.apply("add", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "vllm-%05d" % i, "namespace": "bench",
                         "labels": {"app": "vllm", "shard": str(i % 10)},
                         "annotations": {"prometheus.io/scrape": "true",
                                         "prometheus.io/port": "8000"}},
            "spec": {"nodeName": nodes[i % len(nodes)],
                     "containers": [{"name": "vllm", "image": "vllm/vllm-openai:v0.6.3",
                                     "ports": [{"name": "http", "containerPort": 8000,
                                                "protocol": "TCP"}]}]},
            "status": {"phase": "Running", "podIP": "10.%d.%d.%d" % (i >> 16, (i >> 8) & 255,
                                                                       i & 255),
                       "hostIP": "192.168.0.%d" % (i % 250),
                       "conditions": [{"type": "Ready", "status": "True"}]}})


def churn(rate, n):
    gen = 0
    while True:
        time.sleep(1.0)
        gen += 1
        with STORE.mu:
            coll = STORE.objs.get(("/api/v1", "pods"), {})
            keys = sorted(coll)
            for _ in range(rate):
                k = random.choice(keys)
                obj = copy.deepcopy(coll[k])
                obj["metadata"]["labels"]["gen"] = str(gen)
                STORE.apply("update", obj)
            STORE.mu.notify_all()


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--fixture", help="JSON list of initial objects")
    ap.add_argument("--script", help="JSON list of steps")
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--token")
    ap.add_argument("--token-file", help="the accepted bearer tokens (one a line), re-read per request")
    ap.add_argument("--bookmark-interval", type=float, default=1.0)
    ap.add_argument("--pods", type=int, default=0)
    ap.add_argument("--events-per-sec", type=int, default=0)
    ARGS = ap.parse_args()
    if ARGS.fixture:
        with open(ARGS.fixture) as f:
            for obj in json.load(f):
                STORE.apply("add", obj)
    if ARGS.script:
        with open(ARGS.script) as f:
            STEPS.extend(json.load(f))
    if ARGS.pods:
        synthetic(ARGS.pods)
    if ARGS.events_per_sec:
        threading.Thread(target=churn, args=(ARGS.events_per_sec, ARGS.pods),
                         daemon=True).start()
    srv = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    srv.daemon_threads = True
    if ARGS.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(ARGS.cert, ARGS.key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print("ready", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())

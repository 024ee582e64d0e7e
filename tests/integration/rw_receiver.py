#!/usr/bin/env python3
"""A remote-write 1.0 receiver that misbehaves on purpose, for the sender's tests.

usage: rw_receiver.py PORT OUTDIR PLAN [THEN]
PLAN is a comma-separated list of answers, one per request, then THEN (default
ok) forever:
  ok         answer 200
  500        answer 500
  429        answer 429 with Retry-After: 1 (429:N: Retry-After: N)
  400        answer 400 (the sender must drop the batch)
  slow       wait 3 s, then 200 (longer than the sender's remote_timeout)
  delay:MS   wait MS milliseconds, then 200
  close      close the connection without an answer
Each request is appended to OUTDIR/arrived.jsonl when it arrives ({"t", "n":
samples}) and to OUTDIR/requests.jsonl when answered as {"t": arrival, "t_out":
answer sent (unix seconds), "act": the answer, "n": samples, "rows": its samples
sorted, as in accepted.jsonl}.
Every request is decoded (snappy block format, WriteRequest protobuf); the samples
of requests answered 2xx are appended to OUTDIR/accepted.jsonl, those answered
400 to OUTDIR/refused.jsonl: one JSON line [labels, t_ms, value-as-hex-bits].
"""
import http.server
import json
import os
import socket
import struct
import sys
import threading
import time

PORT, OUT, PLAN = int(sys.argv[1]), sys.argv[2], [p for p in sys.argv[3].split(",") if p]
THEN = sys.argv[4] if len(sys.argv) > 4 else "ok"
lock = threading.Lock()


def uvarint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def unsnappy(b):
    n, i = uvarint(b, 0)
    out = bytearray()
    while i < len(b):
        tag = b[i]
        i += 1
        t = tag & 3
        if t == 0:
            ln = tag >> 2
            if ln >= 60:
                k = ln - 59
                ln = int.from_bytes(b[i:i + k], "little")
                i += k
            ln += 1
            out += b[i:i + ln]
            i += ln
            continue
        if t == 1:
            ln = ((tag >> 2) & 7) + 4
            off = ((tag >> 5) << 8) | b[i]
            i += 1
        elif t == 2:
            ln = (tag >> 2) + 1
            off = int.from_bytes(b[i:i + 2], "little")
            i += 2
        else:
            ln = (tag >> 2) + 1
            off = int.from_bytes(b[i:i + 4], "little")
            i += 4
        for _ in range(ln):
            out.append(out[-off])
    assert len(out) == n, "snappy length mismatch"
    return bytes(out)


def fields(b):
    i = 0
    while i < len(b):
        key, i = uvarint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = uvarint(b, i)
        elif wt == 1:
            v = b[i:i + 8]
            i += 8
        elif wt == 2:
            ln, i = uvarint(b, i)
            v = b[i:i + ln]
            i += ln
        elif wt == 5:
            v = b[i:i + 4]
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
        yield f, v


def decode(body):
    rows = []
    for f, ts in fields(unsnappy(body)):
        if f != 1:
            continue
        labels, samples = {}, []
        for g, v in fields(ts):
            if g == 1:
                kv = dict(fields(v))
                labels[kv.get(1, b"").decode()] = kv.get(2, b"").decode()
            elif g == 2:
                sm = dict(fields(v))
                t = sm.get(2, 0)
                if t >= 1 << 63:
                    t -= 1 << 64
                samples.append((t, sm.get(1, b"\0" * 8)[::-1].hex()))
        key = json.dumps(labels, sort_keys=True)
        rows += [[key, t, bits] for t, bits in samples]
    return rows


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        assert self.headers.get("Content-Encoding") == "snappy"
        assert self.headers.get("Content-Type") == "application/x-protobuf"
        assert self.headers.get("X-Prometheus-Remote-Write-Version") == "0.1.0"
        t_in = time.time()
        with lock:
            act = PLAN.pop(0) if PLAN else THEN
        rows = decode(body)
        with lock, open(os.path.join(OUT, "arrived.jsonl"), "a") as f:
            f.write(json.dumps({"t": t_in, "n": len(rows)}) + "\n")
        if act == "close":
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        if act == "slow":
            time.sleep(3)
        if act.startswith("delay:"):
            time.sleep(int(act[6:]) / 1000)
        code = {"500": 500, "400": 400}.get(act, 429 if act.split(":")[0] == "429" else 200)
        if code in (200, 400):
            name = "accepted.jsonl" if code == 200 else "refused.jsonl"
            with lock, open(os.path.join(OUT, name), "a") as f:
                for r in rows:
                    f.write(json.dumps(r) + "\n")
        with lock, open(os.path.join(OUT, "requests.jsonl"), "a") as f:
            f.write(json.dumps({"t": t_in, "t_out": time.time(), "act": act, "n": len(rows),
                                "rows": sorted(rows)}) + "\n")
        self.send_response(code)
        if code == 429:
            self.send_header("Retry-After", act[4:] if ":" in act else "1")
        self.send_header("Content-Length", "0")
        self.end_headers()


class S(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # a connection the sender gave up on (timeout) or we closed


S(("127.0.0.1", PORT), H).serve_forever()

#!/usr/bin/python3
"""Test exporters for infermon's integration tests.

usage: exporter.py PORT good|bad
  good: a prometheus_client registry (counter with labels, gauge, histogram,
        summary) updated every 0.2 s, served with prometheus_client's own server.
  bad:  misbehaving endpoints on one port: /404, /garbage, /slow (one byte per
        second), /endless (a body that never ends), /big (2 GB announced and
        streamed), /many (many series, for limits).
"""
import socket
import sys
import threading
import time

port = int(sys.argv[1])
mode = sys.argv[2]

if mode == "good":
    from prometheus_client import Counter, Gauge, Histogram, Summary, start_http_server
    c = Counter("demo_requests", "Requests served.", ["path"])
    g = Gauge("demo_temperature_celsius", "Temperature.")
    h = Histogram("demo_latency_seconds", "Latency.")
    s = Summary("demo_size_bytes", "Sizes.")
    start_http_server(port, addr="127.0.0.1")
    i = 0
    while True:
        c.labels("/a").inc()
        c.labels("/b").inc(2)
        g.set(20 + i % 5)
        h.observe(0.1 * (i % 7))
        s.observe(i % 100)
        i += 1
        time.sleep(0.2)

def handle(conn):
    try:
        conn.settimeout(30)
        req = b""
        while b"\r\n\r\n" not in req:
            d = conn.recv(4096)
            if not d:
                return
            req += d
        path = req.split(b" ")[1].decode()
        head = "HTTP/1.1 %s\r\nContent-Type: text/plain; version=0.0.4\r\nConnection: close\r\n"
        if path == "/404":
            conn.sendall((head % "404 Not Found" + "Content-Length: 4\r\n\r\nnope").encode())
        elif path == "/garbage":
            body = b"this is { not an exposition\n"
            conn.sendall((head % "200 OK" + "Content-Length: %d\r\n\r\n" % len(body)).encode() + body)
        elif path == "/slow":
            body = b"slow_metric 1\n" * 10
            conn.sendall((head % "200 OK" + "Content-Length: %d\r\n\r\n" % len(body)).encode())
            for b in body:
                conn.sendall(bytes([b]))
                time.sleep(1)
        elif path == "/endless":
            conn.sendall((head % "200 OK" + "\r\n").encode())
            line = b"endless_metric 1\n" * 1000
            while True:
                conn.sendall(line)
                time.sleep(0.01)
        elif path == "/big":
            conn.sendall((head % "200 OK" + "Content-Length: %d\r\n\r\n" % (2 << 30)).encode())
            chunk = b"# " + b"x" * 65533 + b"\n"
            while True:
                conn.sendall(chunk)
        elif path == "/many":
            body = "".join("many_metric{i=\"%d\"} %d\n" % (i, i) for i in range(100)).encode()
            conn.sendall((head % "200 OK" + "Content-Length: %d\r\n\r\n" % len(body)).encode() + body)
        else:
            conn.sendall((head % "404 Not Found" + "Content-Length: 0\r\n\r\n").encode())
    except OSError:
        pass
    finally:
        conn.close()

srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(64)
while True:
    c, _ = srv.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()

"""otlp_encode.py — a hand-written encoder of OTLP ExportMetricsServiceRequest
messages (protobuf wire format, from the field numbers of the public
opentelemetry-proto schema; no .proto compiler, no SDK), for the OTLP receiver
tests and the fuzz seeds.

Metrics are given as dicts:
  {"name": .., "unit": .., "type": "gauge"|"sum"|"histogram"|"exphist"|"summary",
   "monotonic": bool, "temporality": 1 delta | 2 cumulative, "points": [point...]}
  number point: {"t_ms", "value" (float) or "int", "attrs": {}, "flags"}
  histogram point: {"t_ms", "count", "sum", "bounds": [], "counts": [], "attrs"}
  exphist point: {"t_ms", "count", "sum", "scale", "zero_count", "pos": (offset, [counts])}
  summary point: {"t_ms", "count", "sum", "quantiles": [(q, v)], "attrs"}
A resource is {"attrs": {...}, "metrics": [...]}.

`python3 otlp_encode.py seeds DIR` writes fuzz seeds into DIR."""
import struct
import sys


def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def key(f, wt):
    return varint(f << 3 | wt)


def ld(f, b):
    return key(f, 2) + varint(len(b)) + b


def fixed64(f, v):
    return key(f, 1) + struct.pack("<Q", v & ((1 << 64) - 1))


def dbl(f, v):
    return key(f, 1) + struct.pack("<d", v)


def vint(f, v):
    return key(f, 0) + varint(v)


def sint(f, v):
    return key(f, 0) + varint((v << 1) ^ (v >> 63))


def any_value(v):
    if isinstance(v, bool):
        return vint(2, 1 if v else 0)
    if isinstance(v, int):
        return vint(3, v)
    if isinstance(v, float):
        return dbl(4, v)
    if isinstance(v, bytes):
        return ld(7, v)
    if isinstance(v, list):
        return ld(5, b"".join(ld(1, any_value(x)) for x in v))
    if isinstance(v, dict):
        return ld(6, b"".join(ld(1, kv(k, x)) for k, x in v.items()))
    return ld(1, v.encode())


def kv(k, v):
    return ld(1, k.encode()) + ld(2, any_value(v))


def attrs(f, d):
    return b"".join(ld(f, kv(k, v)) for k, v in (d or {}).items())


def ns(p):
    return p["t_ms"] * 1000000


def number_point(p):
    b = fixed64(2, ns(p) - 1000000) + fixed64(3, ns(p))
    b += fixed64(6, p["int"]) if "int" in p else dbl(4, p.get("value", 0.0))
    b += attrs(7, p.get("attrs"))
    if p.get("flags"):
        b += vint(8, p["flags"])
    return b


def hist_point(p):
    b = fixed64(3, ns(p)) + fixed64(4, p["count"])
    if "sum" in p:
        b += dbl(5, p["sum"])
    if p.get("unpacked"):  # repeated fields one by one (proto2 style, valid in proto3)
        b += b"".join(fixed64(6, c) for c in p.get("counts") or [])
        b += b"".join(dbl(7, x) for x in p.get("bounds") or [])
    else:
        if p.get("counts") is not None:
            b += ld(6, b"".join(struct.pack("<Q", c) for c in p["counts"]))
        if p.get("bounds"):
            b += ld(7, b"".join(struct.pack("<d", x) for x in p["bounds"]))
    b += attrs(9, p.get("attrs"))
    if p.get("flags"):
        b += vint(10, p["flags"])
    return b


def exphist_point(p):
    b = attrs(1, p.get("attrs")) + fixed64(3, ns(p)) + fixed64(4, p["count"])
    b += dbl(5, p.get("sum", 0.0)) + sint(6, p.get("scale", 0)) + fixed64(7, p.get("zero_count", 0))
    off, counts = p.get("pos", (0, []))
    b += ld(8, sint(1, off) + ld(2, b"".join(varint(c) for c in counts)))
    return b


def summary_point(p):
    b = fixed64(3, ns(p)) + fixed64(4, p["count"]) + dbl(5, p["sum"])
    for q, v in p.get("quantiles", []):
        b += ld(6, dbl(1, q) + dbl(2, v))
    b += attrs(7, p.get("attrs"))
    if p.get("flags"):
        b += vint(8, p["flags"])
    return b


def metric(m):
    b = ld(1, m["name"].encode())
    if m.get("unit"):
        b += ld(3, m["unit"].encode())
    t = m["type"]
    temp = vint(2, m.get("temporality", 2))
    if t == "gauge":
        b += ld(5, b"".join(ld(1, number_point(p)) for p in m["points"]))
    elif t == "sum":
        body = b"".join(ld(1, number_point(p)) for p in m["points"]) + temp
        if m.get("monotonic"):
            body += vint(3, 1)
        b += ld(7, body)
    elif t == "histogram":
        b += ld(9, b"".join(ld(1, hist_point(p)) for p in m["points"]) + temp)
    elif t == "exphist":
        b += ld(10, b"".join(ld(1, exphist_point(p)) for p in m["points"]) + temp)
    elif t == "summary":
        b += ld(11, b"".join(ld(1, summary_point(p)) for p in m["points"]))
    return b


def request(resources):
    out = b""
    for r in resources:
        body = b""
        if r.get("attrs") is not None:
            body += ld(1, attrs(1, r["attrs"]))
        scope = ld(1, ld(1, b"test-scope") + ld(2, b"1.0"))
        scope += b"".join(ld(2, metric(m)) for m in r["metrics"])
        body += ld(2, scope)
        out += ld(1, body)
    return out


def decode_response(b):
    """(rejected_data_points, error_message) of an ExportMetricsServiceResponse."""
    rej, msg, i = 0, "", 0

    def rv(b, i):
        v = s = 0
        while True:
            c = b[i]
            i += 1
            v |= (c & 0x7F) << s
            s += 7
            if not c & 0x80:
                return v, i

    while i < len(b):
        k, i = rv(b, i)
        n, i = rv(b, i)
        if k == (1 << 3 | 2):
            ps, j = b[i : i + n], 0
            while j < len(ps):
                kk, j = rv(ps, j)
                if kk == (1 << 3 | 0):
                    rej, j = rv(ps, j)
                else:
                    ln, j = rv(ps, j)
                    msg = ps[j : j + ln].decode()
                    j += ln
        i += n
    return rej, msg


def sample_request(t_ms):
    res = {"service.name": "checkout", "service.namespace": "shop",
           "service.instance.id": "pod-1", "host.name": "node-a", "k8s.pod.name": "p1"}
    return request([{"attrs": res, "metrics": [
        {"name": "queue.depth", "type": "gauge", "points": [{"t_ms": t_ms, "int": 7, "attrs": {"queue": "q1"}}]},
        {"name": "http.server.requests", "type": "sum", "monotonic": True,
         "points": [{"t_ms": t_ms, "value": 42.0, "attrs": {"http.method": "GET"}}]},
        {"name": "http.server.duration", "unit": "s", "type": "histogram",
         "points": [{"t_ms": t_ms, "count": 10, "sum": 3.5, "bounds": [0.1, 1.0],
                     "counts": [4, 5, 1]}]},
        {"name": "rpc.latency", "unit": "ms", "type": "summary",
         "points": [{"t_ms": t_ms, "count": 3, "sum": 30.0, "quantiles": [(0.5, 9.0), (0.99, 15.0)]}]},
        {"name": "cache.hit", "unit": "1", "type": "gauge", "points": [{"t_ms": t_ms, "value": 0.5}]},
        {"name": "lat.exp", "unit": "s", "type": "exphist",
         "points": [{"t_ms": t_ms, "count": 3, "sum": 1.0, "scale": 3, "pos": (1, [1, 2])}]},
        {"name": "delta.c", "type": "sum", "monotonic": True, "temporality": 1,
         "points": [{"t_ms": t_ms, "value": 1.0}]},
    ]}])


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "seeds":
    import os
    d = sys.argv[2]
    os.makedirs(d, exist_ok=True)
    t = 1700000000000
    seeds = {
        "all_types": sample_request(t),
        "stale": request([{"attrs": {"service.name": "a"}, "metrics": [
            {"name": "g", "type": "gauge", "points": [{"t_ms": t, "value": 1.0, "flags": 1}]}]}]),
        "anyvalues": request([{"attrs": {"service.name": "a", "arr": [1, "x", 2.5], "kv": {"a": True},
                                         "b": b"\x00\x01", "9lives": "c"}, "metrics": [
            {"name": "9.to_5", "unit": "By/s", "type": "gauge", "points": [{"t_ms": t, "value": 1.0}]}]}]),
        "no_resource": request([{"metrics": [
            {"name": "x", "type": "sum", "points": [{"t_ms": t, "value": 1.0}]}]}]),
        "empty": b"",
    }
    for name, b in seeds.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(b)

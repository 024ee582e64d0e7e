"""remote_write.py — the remote-write encoders of the integration tests.

Protobuf written by hand (varints, length-delimited fields, little-endian
doubles) and snappy's block format with literals only, so no protobuf or
snappy package is needed. Remote write 1.0 (prometheus.WriteRequest) and 2.0
(io.prometheus.write.v2.Request, with its symbol table), and a sender that
returns the status, the body and the answer's headers.

Use from a test: sys.path.insert(0, os.environ["IM_SOURCE_DIR"] + "/tests/lib").
"""
import struct
import urllib.error
import urllib.request

CT_V1 = "application/x-protobuf"
CT_V2 = "application/x-protobuf;proto=io.prometheus.write.v2.Request"


def varint(v):
    v &= (1 << 64) - 1  # negative int64 as two's complement, ten bytes
    out = b""
    while v >= 0x80:
        out += bytes([(v & 0x7f) | 0x80])
        v >>= 7
    return out + bytes([v])


def key(n, wire_type):
    return varint(n << 3 | wire_type)


def field(n, data):  # length-delimited (wire type 2)
    return key(n, 2) + varint(len(data)) + data


def double(n, v):  # wire type 1
    return key(n, 1) + struct.pack("<d", v)


def vfield(n, v):  # varint (wire type 0)
    return key(n, 0) + varint(v)


def snappy_literal(b):  # snappy block format, literals only
    out = varint(len(b))
    i = 0
    while i < len(b):
        n = min(65536, len(b) - i)
        out += bytes([61 << 2]) + struct.pack("<H", n - 1) + b[i:i + n]
        i += n
    return out


# ---- 1.0: WriteRequest{timeseries = 1 {labels = 1 {name = 1, value = 2}, samples = 2}} ----

def label(k, v):
    return field(1, field(1, k.encode()) + field(2, v.encode()))


def sample(v, t):
    return field(2, double(1, v) + vfield(2, t))


def v1_series(labels, samples):
    """labels: [(name, value)] in the order given; samples: [(t_ms, value)]."""
    return field(1, b"".join(label(k, v) for k, v in labels) +
                 b"".join(sample(v, t) for t, v in samples))


def v1_request(series):
    """series: [(labels, samples)] as v1_series takes them."""
    return b"".join(v1_series(ls, smp) for ls, smp in series)


# ---- 2.0: Request{symbols = 4, timeseries = 5} ----

METRIC_TYPES = {"unknown": 0, "counter": 1, "gauge": 2, "histogram": 3, "gaugehistogram": 4,
                "summary": 5, "info": 6, "stateset": 7}


class V2:
    """Builds a 2.0 request: sym() interns a string (symbols[0] is "")."""

    def __init__(self):
        self.symbols = [""]
        self.index = {"": 0}
        self.series = []

    def sym(self, s):
        if s not in self.index:
            self.index[s] = len(self.symbols)
            self.symbols.append(s)
        return self.index[s]

    def refs(self, labels):
        out = []
        for k, v in labels:
            out += [self.sym(k), self.sym(v)]
        return out

    def add(self, labels, samples=(), metric_type=None, help="", unit="", created=0,
            exemplars=(), histograms=0, refs=None, raw=b""):
        """labels: [(name, value)] (or refs: the raw labels_refs); samples:
        [(t_ms, value)]; exemplars: [(labels, value, t_ms)]; histograms: how
        many (empty) histogram messages; raw: bytes appended to the series."""
        ts = field(1, b"".join(varint(r) for r in (self.refs(labels) if refs is None else refs)))
        for t, v in samples:
            ts += field(2, double(1, v) + vfield(2, t))
        for _ in range(histograms):
            ts += field(3, vfield(1, 1))
        for els, ev, et in exemplars:
            ts += field(4, field(1, b"".join(varint(r) for r in self.refs(els))) +
                        double(2, ev) + vfield(3, et))
        if metric_type is not None or help or unit:
            md = vfield(1, METRIC_TYPES[metric_type or "unknown"])
            if help:
                md += vfield(3, self.sym(help))
            if unit:
                md += vfield(4, self.sym(unit))
            ts += field(5, md)
        if created:
            ts += vfield(6, created)
        self.series.append(ts + raw)
        return self

    def encode(self):
        return (b"".join(field(4, s.encode()) for s in self.symbols) +
                b"".join(field(5, ts) for ts in self.series))


def post(base, body, content_type=CT_V1, encoding="snappy", compress=True, timeout=30):
    """POSTs to base + /api/v1/write; returns (status, body text, headers dict)."""
    headers = {}
    if content_type is not None:
        headers["Content-Type"] = content_type
    if encoding is not None:
        headers["Content-Encoding"] = encoding
    data = snappy_literal(body) if compress else body
    rq = urllib.request.Request(base + "/api/v1/write", data=data, headers=headers)
    try:
        with urllib.request.urlopen(rq, timeout=timeout) as r:
            return r.status, r.read().decode(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), dict(e.headers)

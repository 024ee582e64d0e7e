#!/usr/bin/python3
"""Peer side of tests/expo/run_expo_peers.sh (run with /usr/bin/python3, which has
python3-prometheus-client).

  peers.py gen OUTDIR SEED   writes expositions made by prometheus_client (text and
                             OpenMetrics generators) and random valid expositions
  peers.py dump FILE FORMAT  parses FILE with prometheus_client's parser (FORMAT
                             text|openmetrics) and prints every sample in the
                             canonical form `infermon check metrics --dump` prints:
                             name{sorted labels} value [ts_ms] [# {labels} value [ts_ms]]
"""
import math
import os
import random
import sys

from prometheus_client import (CollectorRegistry, Counter, Enum, Gauge, Histogram, Info,
                               Summary, generate_latest)
from prometheus_client.openmetrics import exposition as om_exposition
from prometheus_client.openmetrics import parser as om_parser
from prometheus_client import parser as text_parser
from prometheus_client.samples import Timestamp


def fmt_value(v):
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == 0:
        return "0"  # prometheus_client's OpenMetrics parser reads -0 as 0
    return "%.17g" % v


def esc(s):
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def fmt_labels(labels):
    return "{" + ",".join('%s="%s"' % (k, esc(labels[k])) for k in sorted(labels)) + "}"


def ts_ms(ts, text):
    if ts is None:
        return None
    if isinstance(ts, Timestamp):
        return ts.sec * 1000 + int(ts.nsec / 1000000)
    if text:
        return int(round(ts * 1000))
    return int(ts * 1000)


def dump(path, fmt):
    with open(path, encoding="utf-8") as f:
        data = f.read()
    text = fmt == "text"
    fams = (text_parser.text_string_to_metric_families(data) if text
            else om_parser.text_string_to_metric_families(data))
    # prometheus_client's text parser renames the samples of a counter declared
    # without _total (TYPE x counter; x 1) to x_total; undo that to compare.
    bare_counters = set()
    if text:
        for l in data.split("\n"):
            p = l.split()
            if len(p) == 4 and p[:2] == ["#", "TYPE"] and p[3] == "counter" \
                    and not p[2].endswith("_total"):
                bare_counters.add(p[2])
    out = []
    for fam in fams:
        for s in fam.samples:
            name = s.name
            if name.endswith("_total") and name[:-6] in bare_counters:
                name = name[:-6]
            line = name + fmt_labels(s.labels) + " " + fmt_value(s.value)
            t = ts_ms(s.timestamp, text)
            if t is not None:
                line += " %d" % t
            ex = getattr(s, "exemplar", None)
            if ex is not None:
                line += " # " + fmt_labels(ex.labels) + " " + fmt_value(ex.value)
                et = ts_ms(ex.timestamp, False)
                if et is not None:
                    line += " %d" % et
            out.append(line)
    sys.stdout.write("".join(l + "\n" for l in out))


def client_registry():
    reg = CollectorRegistry()
    c = Counter("requests", 'Requests "quoted" \\ back\nslash', ["method", "path"], registry=reg)
    c.labels("GET", '/a"b\\c\nd').inc(3)
    c.labels("POST", "\u00e9\u20ac \U0001F600").inc(1.5)
    c.labels("PUT", "").inc(0.1, exemplar={"trace_id": "t-1"})
    g = Gauge("temperature_celsius", "Temperature", registry=reg)
    g.set(-12.75)
    g2 = Gauge("special_values", "Special values", ["k"], registry=reg)
    for k, v in (("nan", float("nan")), ("inf", float("inf")), ("ninf", float("-inf")),
                 ("tiny", 1e-300), ("big", 1.7976931348623157e308), ("third", 1 / 3),
                 ("neg0", -0.0), ("int", 123456789012345678), ("small", 5e-324)):
        g2.labels(k).set(v)
    h = Histogram("latency_seconds", "Latency", ["route"],
                  buckets=(0.005, 0.1, 1, 2.5, float("inf")), registry=reg)
    for v in (0.001, 0.05, 0.2, 3, 7.5):
        h.labels("/x").observe(v)
    h.labels("/y").observe(0.5, exemplar={"trace_id": "abc123"})
    s = Summary("payload_bytes", "Payload size", registry=reg)
    s.observe(100)
    s.observe(250.5)
    i = Info("build", "Build information", registry=reg)
    i.info({"version": "1.2.3", "commit": 'abc"def'})
    e = Enum("state", "Current state", states=["starting", "running", "stopped"], registry=reg)
    e.state("running")
    return reg


NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789"
VALUE_CHARS = ['a', 'b', 'Z', ' ', '"', '\\', '\n', '{', '}', '=', ',', '#', '\u00e9', '\u20ac',
               '\U0001F600', '\t', '0']


def rand_name(r, first="abcdefghijklmnopqrstuvwxyz_"):
    return r.choice(first) + "".join(r.choice(NAME_CHARS) for _ in range(r.randint(0, 12)))


def rand_value(r):
    k = r.randint(0, 9)
    if k == 0:
        return "NaN"
    if k == 1:
        return r.choice(["+Inf", "-Inf", "Inf", "inf", "-inf"])
    if k == 2:
        return str(r.randint(-10 ** 6, 10 ** 6))
    if k == 3:
        return "%.*e" % (r.randint(0, 17), r.uniform(-1e300, 1e300))
    if k == 4:
        return repr(r.uniform(-1, 1) * 10 ** r.randint(-320, 300))
    if k == 5:
        return r.choice(["0", "-0", "0.0", "1e-310", "4.9e-324", "1.7976931348623157e308",
                         "0.1", "00012", "1E5", "1.5e+3", ".5", "5."])
    return repr(r.random() * 10 ** r.randint(-10, 20))


def rand_exposition(r, om):
    out = []
    used = set()
    for _ in range(r.randint(1, 15)):
        name = rand_name(r)
        while name in used or name.startswith("__"):
            name = rand_name(r)
        used.add(name)
        if r.random() < 0.7:
            out.append("# HELP %s %s" % (name, "".join(r.choice("ab \\n") for _ in range(r.randint(0, 10)))
                                         .replace("\\", "\\\\")))
        out.append("# TYPE %s %s" % (name, "gauge" if r.random() < 0.5 else ("unknown" if om else "untyped")))
        series = set()
        for _ in range(r.randint(1, 6)):
            labels = {}
            for _ in range(r.randint(0, 4)):
                ln = rand_name(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
                labels[ln] = "".join(r.choice(VALUE_CHARS) for _ in range(r.randint(1, 8)))
            key = tuple(sorted(labels.items()))
            if key in series:
                continue
            series.add(key)
            items = list(labels.items())
            r.shuffle(items)
            lab = ",".join('%s="%s"' % (k, esc(v)) for k, v in items)
            line = name + ("{" + lab + "}" if items or r.random() < 0.2 else "") + " " + rand_value(r)
            if r.random() < 0.3:
                if om:
                    line += " %d.%03d" % (r.randint(0, 2 * 10 ** 9), r.randint(0, 999))
                else:
                    line += " %d" % r.randint(0, 4 * 10 ** 12)
            out.append(line)
    text = "\n".join(out) + "\n"
    if om:
        text += "# EOF\n"
    return text


def gen(outdir, seed):
    reg = client_registry()
    with open(os.path.join(outdir, "client.text"), "wb") as f:
        f.write(generate_latest(reg))
    with open(os.path.join(outdir, "client.openmetrics"), "wb") as f:
        f.write(om_exposition.generate_latest(reg))
    r = random.Random(seed)
    for i in range(40):
        om = i % 2 == 1
        with open(os.path.join(outdir, "random%02d.%s" % (i, "openmetrics" if om else "text")),
                  "w", encoding="utf-8") as f:
            f.write(rand_exposition(r, om))


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "dump":
        dump(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: peers.py gen OUTDIR SEED | dump FILE text|openmetrics")

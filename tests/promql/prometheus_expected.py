#!/usr/bin/python3
"""prometheus_expected.py — checks (or fills in) the expected results of our PromQL
test scripts against the real Prometheus (Debian's 2.42).

For every `clear`-separated segment of a script, the loaded series are written as
OpenMetrics, backfilled with `promtool tsdb create-blocks-from openmetrics`, and
served by `prometheus` on 127.0.0.1:<free port>; each `eval instant` is asked
through /api/v1/query and compared with the script's expected lines (Prometheus'
test tolerance: 1e-6 relative, NaN = NaN). Evals preceded by a comment line
containing "2.53:" follow Prometheus 2.53 where 2.42 differs and are not checked
(docs/promql.md lists those differences). Staleness markers cannot be backfilled:
scripts checked here do not use `stale`.

usage: prometheus_expected.py [--fill] FILE.test...
  --fill   rewrite the expected lines of every checked eval with Prometheus' answer
"""
import http.client
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

UNITS = [("ms", 0.001), ("y", 365 * 86400), ("w", 7 * 86400), ("d", 86400), ("h", 3600),
         ("m", 60), ("s", 1)]


def dur(s):
    total, rest = 0.0, s
    while rest:
        m = re.match(r"(\d+)(ms|y|w|d|h|m|s)", rest)
        if not m:
            raise ValueError("bad duration " + s)
        total += int(m.group(1)) * dict(UNITS)[m.group(2)]
        rest = rest[m.end():]
    return total


def parse_metric(s):
    m = re.match(r"\s*([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*(\{[^}]*\})?\s*(.*)$", s)
    name, labs, rest = m.group(1), m.group(2), m.group(3)
    lab = {}
    if name:
        lab["__name__"] = name
    if labs:
        for k, v in re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"', labs):
            lab[k] = v.encode().decode("unicode_escape")
    return lab, rest


def parse_num(t):
    tl = t.lower()
    if tl in ("inf", "+inf"):
        return math.inf
    if tl == "-inf":
        return -math.inf
    if tl == "nan":
        return math.nan
    return float(t)


def expand(rest):
    out = []
    for tok in rest.split():
        m = re.match(r"^(.*?)x(\d+)$", tok)
        times = None
        if m and not tok.lower().endswith("inf"):
            tok, times = m.group(1), int(m.group(2))
        if tok == "_":
            out += [None] * (times if times is not None else 1)
            continue
        if tok == "stale":
            raise SystemExit("stale cannot be backfilled")
        m2 = re.match(r"^([-+]?[0-9.eE]+|[-+]?[Ii]nf|NaN)([-+])([0-9.eE]+)$", tok)
        if m2 and times is not None:
            start, step = parse_num(m2.group(1)), float(m2.group(3))
            if m2.group(2) == "-":
                step = -step
        else:
            start, step = parse_num(tok), 0.0
        n = (times + 1) if times is not None else 1
        out += [start + step * i if i else start for i in range(n)]
    return out


def fmt(v):
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(v)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Prom:
    def __init__(self, series, tmp):
        om = os.path.join(tmp, "d.om")
        with open(om, "w") as f:
            for lab, pts in series.items():
                d = dict(lab)
                name = d.pop("__name__")
                sel = name + ("{" + ",".join('%s="%s"' % (k, v.replace("\\", "\\\\").replace('"', '\\"'))
                                             for k, v in sorted(d.items())) + "}" if d else "")
                for t, v in sorted(pts.items()):
                    f.write("%s %s %s\n" % (sel, fmt(v), repr(t)))
            f.write("# EOF\n")
        self.dir = os.path.join(tmp, "tsdb")
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        if series:
            subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", om, self.dir],
                           check=True, stdout=subprocess.DEVNULL)
        cfg = os.path.join(tmp, "p.yml")
        open(cfg, "w").write("global: {}\n")
        self.port = free_port()
        self.proc = subprocess.Popen(["prometheus", "--config.file=" + cfg, "--storage.tsdb.path=" + self.dir,
                                      "--storage.tsdb.retention.time=100y",
                                      "--web.listen-address=127.0.0.1:%d" % self.port],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                c.request("GET", "/-/ready")
                if c.getresponse().status == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise SystemExit("prometheus did not start")

    def query(self, q, t):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request("POST", "/api/v1/query", urllib.parse.urlencode({"query": q, "time": repr(t)}),
                  {"Content-Type": "application/x-www-form-urlencoded"})
        return json.loads(c.getresponse().read())

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def almost(a, b):
    if math.isnan(a) and math.isnan(b):
        return True
    if a == b:
        return True
    s, d = abs(a) + abs(b), abs(a - b)
    if a == 0 or b == 0:
        return d < 1e-6 * 2.2250738585072014e-308
    return d / s < 1e-6


def fmt_labels(lab):
    d = dict(lab)
    name = d.pop("__name__", "")
    return name + "{" + ", ".join('%s="%s"' % (k, v.replace("\\", "\\\\").replace('"', '\\"'))
                                  for k, v in sorted(d.items())) + "}"


def process(path, fill):
    lines = open(path).read().split("\n")
    out_lines = list(lines)
    replacements = []  # (start, end, new_lines)
    segments = []  # list of (series, evals)
    series, evals = {}, []
    i = 0
    problems = 0
    checked = skipped = 0
    while i < len(lines):
        l = lines[i].strip()
        if l.startswith("load "):
            step = dur(l.split()[1])
            i += 1
            while i < len(lines) and lines[i].strip() and not lines[i].strip().startswith("#"):
                lab, rest = parse_metric(lines[i].strip())
                key = tuple(sorted(lab.items()))
                for k, v in enumerate(expand(rest)):
                    if v is not None:
                        series.setdefault(key, {})[k * step] = v
                i += 1
            continue
        if l == "clear":
            segments.append((series, evals))
            series, evals = {}, []
        elif l.startswith("eval"):
            prev = lines[i - 1].strip() if i else ""
            m = re.match(r"(eval\w*)\s+instant\s+at\s+(\S+)\s+(.*)$", l)
            j = i + 1
            while j < len(lines) and lines[j].strip() and not lines[j].strip().startswith("#"):
                j += 1
            if m and "2.53:" not in prev and m.group(1) != "eval_fail":
                evals.append((i, j, m.group(1), dur(m.group(2)), m.group(3), lines[i + 1:j]))
            else:
                skipped += 1
            i = j
            continue
        i += 1
    segments.append((series, evals))
    tmp = tempfile.mkdtemp()
    try:
        for series, evs in segments:
            if not evs:
                continue
            prom = Prom(series, tmp)
            try:
                for (i, j, kind, t, q, exp) in evs:
                    checked += 1
                    r = prom.query(q, t)
                    if r["status"] != "success":
                        print("%s:%d: prometheus error: %s" % (path, i + 1, r.get("error")))
                        problems += 1
                        continue
                    d = r["data"]
                    if d["resultType"] == "scalar":
                        got = [(None, float(d["result"][1]), d["result"][1])]
                    else:
                        got = [(tuple(sorted(s["metric"].items())), float(s["value"][1]), s["value"][1])
                               for s in d["result"]]
                        if kind != "eval_ordered":
                            got.sort(key=lambda g: g[0])
                    if fill:
                        new = []
                        for lab, v, vs in got:
                            new.append("  " + (vs if lab is None else fmt_labels(lab) + " " + vs))
                        replacements.append((i + 1, j, new))
                        continue
                    # compare
                    want = []
                    for e in exp:
                        e = e.strip()
                        try:
                            want.append((None, parse_num(e)))
                            continue
                        except ValueError:
                            pass
                        lab, rest = parse_metric(e)
                        want.append((tuple(sorted(lab.items())), expand(rest)[0]))
                    ok = len(want) == len(got)
                    if ok:
                        gm = {g[0]: g[1] for g in got}
                        for k, (lab, v) in enumerate(want):
                            if lab not in gm or not almost(v, gm[lab]):
                                ok = False
                            if kind == "eval_ordered" and got[k][0] != lab:
                                ok = False
                    if not ok:
                        problems += 1
                        print("%s:%d: differs from Prometheus: %s\n  expected %s\n  prometheus %s" %
                              (path, i + 1, q, want, [(g[0], g[2]) for g in got]))
            finally:
                prom.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if fill:
        for start, end, new in sorted(replacements, reverse=True):
            out_lines[start:end] = new
        open(path, "w").write("\n".join(out_lines))
    print("%s: %d evals checked against Prometheus, %d not checked (2.53-only or eval_fail), %d problems" %
          (path, checked, skipped, problems))
    return problems


def main():
    args = sys.argv[1:]
    fill = "--fill" in args
    files = [a for a in args if a != "--fill"]
    bad = sum(process(f, fill) for f in files)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

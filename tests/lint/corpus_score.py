#!/usr/bin/python3
"""Scores `infermon lint` on tests/lint/corpus against corpus/EXPECT.

usage: corpus_score.py INFERMON SOURCE_DIR WORKDIR [DIR]
DIR is tests/lint/corpus (our own files, the default) or tests/lint/public
(excerpts of public files, see public/README.md); its EXPECT holds the verdicts.
Prints one line per false positive / false negative, then
`DIR: F files, N findings, TP, FP, FN, precision P, recall R`; exits 1 when
precision < 0.98 or recall < 0.95, or when a fix hint is not a valid query.
"""
import json
import os
import subprocess
import sys

B, S, T = (os.path.abspath(a) for a in sys.argv[1:4])
NAME = sys.argv[4] if len(sys.argv) > 4 else "corpus"
CORPUS = os.path.join(S, "tests", "lint", NAME)
SOURCES = {
    "vllm": os.path.join(S, "catalog", "vllm-sample.prom"),
    "dcgm": os.path.join(S, "catalog", "dcgm-sample.prom"),
    "kueue": os.path.join(S, "catalog", "kueue-sample.prom"),
    "join": os.path.join(S, "tests", "lint", "fixtures", "join-sample.prom"),
    "neighbours": os.path.join(S, "tests", "lint", "corpus", "neighbours.prom"),
}


def runs():
    cur = None
    with open(os.path.join(CORPUS, "EXPECT")) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            kind, rest = line[0], line[2:].strip()
            if kind == "@":
                if cur:
                    yield cur
                parts = rest.split()
                cur = {"file": parts[0], "sources": parts[1:], "want": [], "not": []}
            else:
                check, _, loc = rest.partition(" ")
                (cur["want"] if kind == "+" else cur["not"]).append((check, loc.strip()))
    if cur:
        yield cur


def location(f):
    if f.get("location"):
        return f["location"]
    return "line %d" % f["line"] if f.get("line") else ""


tp = fp = fn = 0
nfind = 0
files = set()
hints = []
bad = []
for r in runs():
    files.add(r["file"])
    args = [B, "lint", "--output", "json"]
    for s in r["sources"]:
        if s != "catalog":
            args += ["--target", SOURCES[s]]
    args.append(r["file"])
    p = subprocess.run(args, cwd=CORPUS, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        print("FAIL: %s: exit %d: %s" % (" ".join(args[1:]), p.returncode, p.stderr.strip()))
        sys.exit(1)
    doc = json.loads(p.stdout)
    found = doc["findings"]
    nfind += len(found)
    want = list(r["want"])
    tag = "%s [%s]" % (r["file"], " ".join(r["sources"]))
    for f in found:
        loc = location(f)
        hit = next((w for w in want if w[0] == f["check"] and w[1] in loc), None)
        if hit:
            want.remove(hit)
            tp += 1
        else:
            fp += 1
            why = [n for n in r["not"] if n[0] in ("*", f["check"]) and n[1] in loc]
            print("FP: %s: %s: %s[%s]: %s%s" % (tag, loc, f["severity"], f["check"], f["message"],
                                               " (expected no finding here)" if why else ""))
        if f.get("fixed_expr"):
            hints.append((tag, loc, f["fixed_expr"]))
        fx = f.get("fix") or ""
        if fx.startswith("use ") and "(" in fx:
            hints.append((tag, loc, fx[4:]))
    for w in want:
        fn += 1
        print("FN: %s: expected %s at %s" % (tag, w[0], w[1]))

# Every fix hint that is a query must parse: lint them as a query list.
qf = os.path.join(T, NAME + "-hints.txt")
with open(qf, "w") as f:
    for h in hints:
        f.write(h[2].replace("\n", " ") + "\n")
p = subprocess.run([B, "lint", "--output", "json", qf], capture_output=True, text=True)
for f in json.loads(p.stdout)["findings"]:
    if f["check"] in ("syntax", "rate-of-sum") and f["severity"] == "error":
        h = hints[f["line"] - 1]
        bad.append(h)
        print("BAD HINT: %s: %s: %s (%s)" % (h[0], h[1], h[2], f["message"]))

prec = tp / (tp + fp) if tp + fp else 1.0
rec = tp / (tp + fn) if tp + fn else 1.0
print("%s: %d files, %d findings, TP %d, FP %d, FN %d, precision %.3f, recall %.3f, "
      "fix hints checked %d" % (NAME, len(files), nfind, tp, fp, fn, prec, rec, len(hints)))
sys.exit(0 if prec >= 0.98 and rec >= 0.95 and not bad else 1)

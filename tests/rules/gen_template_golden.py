#!/usr/bin/python3
"""Regenerates template_golden.json: expands every template of
template_corpus.txt with the real promtool (`promtool test rules`, whose failure
output shows the alerts' annotations as Prometheus rendered them).
Usage: /usr/bin/python3 gen_template_golden.py [promtool]"""
import json, os, re, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
promtool = sys.argv[1] if len(sys.argv) > 1 else "promtool"
cases = []
with open(os.path.join(here, "template_corpus.txt")) as f:
    for line in f:
        line = line.rstrip("\n")
        if line.startswith("#"):
            continue
        cases.append(line)
bad = [c[1:] for c in cases if c.startswith("!")]
cases = [c for c in cases if not c.startswith("!")]


def yq(s):
    return "'" + s.replace("'", "''") + "'"


def go_unquote(s, i):
    """Decodes a Go-quoted string starting at s[i] == '"'; returns (str, next_index)."""
    assert s[i] == '"'
    i += 1
    out = bytearray()
    while s[i] != '"':
        c = s[i]
        if c == "\\":
            n = s[i + 1]
            simple = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, '"': 34, "'": 39}
            if n in simple:
                out.append(simple[n]); i += 2
            elif n == "x":
                out.append(int(s[i + 2:i + 4], 16)); i += 4
            elif n == "u":
                out += chr(int(s[i + 2:i + 6], 16)).encode(); i += 6
            elif n == "U":
                out += chr(int(s[i + 2:i + 10], 16)).encode(); i += 10
            else:
                out.append(int(s[i + 1:i + 4], 8)); i += 4
        else:
            out += c.encode(); i += 1
    return out.decode("utf-8", "replace"), i + 1


golden = []
with tempfile.TemporaryDirectory() as d:
    ann = "\n".join("      a%03d: %s" % (k, yq(t)) for k, t in enumerate(cases))
    with open(os.path.join(d, "r.yml"), "w") as f:
        f.write("groups:\n- name: g\n  rules:\n  - alert: T\n    expr: test_metric\n"
                "    labels: {severity: page}\n    annotations:\n" + ann + "\n")
    with open(os.path.join(d, "t.yml"), "w") as f:
        f.write("rule_files: [r.yml]\nevaluation_interval: 1m\n"
                "tests:\n- interval: 1m\n"
                "  external_labels: {cluster: eu1}\n  external_url: http://infermon.example:9470/\n"
                "  input_series:\n"
                "  - series: 'test_metric{job=\"node\", instance=\"host1.example.com:9100\", path=\"/var/lib\"}'\n"
                "    values: '1234.5678'\n  alert_rule_test:\n  - eval_time: 0m\n    alertname: T\n"
                "    exp_alerts: []\n")
    out = subprocess.run([promtool, "test", "rules", "t.yml"], cwd=d, capture_output=True, text=True)
    text = out.stdout + out.stderr
    m = text.find("Annotations:{")
    if m < 0:
        sys.exit("no annotations in promtool output:\n" + text)
    i = m + len("Annotations:{")
    got = {}
    while text[i] != "}":
        j = text.index("=", i)
        key = text[i:j]
        val, i = go_unquote(text, j + 1)
        got[key] = val
        if text[i:i + 2] == ", ":
            i += 2
    for k, t in enumerate(cases):
        golden.append({"template": t, "expected": got.get("a%03d" % k, "")})
    # Parse errors: promtool check rules lists one error per bad annotation.
    ann = "\n".join("      a%03d: %s" % (k, yq(t)) for k, t in enumerate(bad))
    with open(os.path.join(d, "bad.yml"), "w") as f:
        f.write("groups:\n- name: g\n  rules:\n  - alert: T\n    expr: test_metric\n"
                "    annotations:\n" + ann + "\n")
    out = subprocess.run([promtool, "check", "rules", "bad.yml"], cwd=d, capture_output=True, text=True)
    errs = {}
    for line in (out.stdout + out.stderr).splitlines():
        mm = re.search(r'annotation "(a\d+)": (.*)$', line)
        if mm:
            errs[mm.group(1)] = mm.group(2)
    for k, t in enumerate(bad):
        golden.append({"template": t, "parse_error": errs.get("a%03d" % k, "")})
with open(os.path.join(here, "template_golden.json"), "w") as f:
    json.dump(golden, f, indent=1, ensure_ascii=False)
    f.write("\n")
print("%d cases" % len(golden))

#!/usr/bin/env python3
"""The Grafana dashboard-linter rules (github.com/grafana/dashboard-linter,
docs/rules/*.md) as we read their documented meaning, plus the export's own
requirements (no hard-coded UIDs, model/namespace variables, a recent
schemaVersion). Written for infermon's tests, not a port of the linter.

usage: dashboard_rules.py INFERMON_BINARY DASHBOARD.json
       dashboard_rules.py --selftest INFERMON_BINARY CLEAN_DASHBOARD.json
Prints one line per violation ("rule: where: what") and exits 1 when there is
any, 0 when the dashboard is clean."""
import json
import re
import subprocess
import sys

# Grafana's unit ids (packages/grafana-data/src/valueFormats/categories.ts),
# the categories a serving dashboard uses.
UNITS = set("""none string short percent percentunit humidity dB hex0x hex sci locale pixel
ns µs ms s m h d dtdurationms dtdurations dthms dtdhms timeticks clockms clocks hertz
cps ops reqps rps wps iops cpm opm rpm wpm
bytes decbytes bits decbits kbytes deckbytes mbytes decmbytes gbytes decgbytes tbytes dectbytes
bps Bps binbps binBps KBs Kbits MBs Mbits GBs Gbits
watt kwatt mwatt Wh kWh mWh joule ev amp kamp mamp volt kvolt mvolt
celsius fahrenheit kelvin currencyUSD currencyEUR""".split())
PANEL_TYPES_DS = {"singlestat", "graph", "table", "timeseries"}
PANEL_TYPES_UNITS = {"stat", "singlestat", "graph", "table", "timeseries", "gauge"}
TEMPLATED_DS = {"$datasource", "${datasource}"}
KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left",
            "group_right", "offset", "bool", "start", "end", "inf", "nan"}
AGGREGATORS = {"sum", "avg", "min", "max", "count", "group", "stddev", "stdvar", "topk",
               "bottomk", "quantile", "count_values", "limitk", "limit_ratio"}
GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}

# Values a variable takes for parsing (what Grafana interpolates to).
SUBST = {"__rate_interval": "5m", "__interval": "1m", "__range": "1h", "job": ".+",
         "instance": ".+", "namespace": ".*", "model": ".*", "datasource": "prometheus"}


def subst(expr, values=SUBST):
    def rep(m):
        name = m.group(1) or m.group(2) or m.group(3)
        return values.get(name, "templated")
    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]", rep, expr)


def promql_ok(binary, expr):
    r = subprocess.run([binary, "promql-parse", "--check", subst(expr)], capture_output=True,
                       text=True)
    return r.returncode == 0, (r.stdout + r.stderr).strip()


def skip_string(s, i):
    q = s[i]
    i += 1
    while i < len(s) and s[i] != q:
        i += 2 if s[i] == "\\" else 1
    return i + 1


def matching(s, i, open_c, close_c):
    """index after the bracket closing the one at s[i]"""
    depth = 0
    while i < len(s):
        c = s[i]
        if c in "\"'`":
            i = skip_string(s, i)
            continue
        if c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(s)


def parse_matchers(body):
    out = []
    for m in re.finditer(r'([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"', body):
        out.append((m.group(1), m.group(2), m.group(3)))
    return out


def selectors(expr):
    """[(metric name or None, [(label, op, value)])] of the expression's vector
    selectors, found lexically (strings, ranges and grouping lists skipped)."""
    out = []
    i, n = 0, len(expr)
    while i < n:
        c = expr[i]
        if c in "\"'`":
            i = skip_string(expr, i)
            continue
        if c == "[":
            i = matching(expr, i, "[", "]")
            continue
        if c == "{":
            j = matching(expr, i, "{", "}")
            out.append((None, parse_matchers(expr[i + 1:j - 1])))
            i = j
            continue
        if c.isalpha() or c in "_:":
            j = i
            while j < n and (expr[j].isalnum() or expr[j] in "_:"):
                j += 1
            word = expr[i:j]
            k = j
            while k < n and expr[k] == " ":
                k += 1
            if word in GROUPING:
                if k < n and expr[k] == "(":
                    k = matching(expr, k, "(", ")")
                i = k
                continue
            if word.lower() in KEYWORDS or word in AGGREGATORS or (k < n and expr[k] == "("):
                i = j
                continue
            # a number like 1e3 or a duration's unit is not a name
            if i > 0 and (expr[i - 1].isdigit() or expr[i - 1] == "."):
                i = j
                continue
            if k < n and expr[k] == "{":
                e = matching(expr, k, "{", "}")
                out.append((word, parse_matchers(expr[k + 1:e - 1])))
                i = e
            else:
                out.append((word, []))
                i = j
            continue
        i += 1
    return out


def rate_ranges(expr):
    """the range of every rate/irate/increase call"""
    out = []
    for m in re.finditer(r"\b(rate|irate|increase)\s*\(", expr):
        start = m.end() - 1
        end = matching(expr, start, "(", ")")
        arg = expr[start + 1:end - 1]
        ranges = re.findall(r"\[([^\]]*)\]", arg)
        out.append((m.group(1), ranges[-1] if ranges else None))
    return out


def walk_panels(panels, path="panels"):
    for i, p in enumerate(panels or []):
        where = '%s[%d] "%s"' % (path, i, p.get("title", ""))
        yield where, p
        if p.get("type") == "row":
            yield from walk_panels(p.get("panels"), where + " panels")


def ds_uid(ds):
    if isinstance(ds, dict):
        return ds.get("uid")
    return ds


def check(binary, d):
    v = []
    add = lambda rule, where, what: v.append("%s: %s: %s" % (rule, where, what))
    tl = (d.get("templating") or {}).get("list") or []
    by_name = {t.get("name"): t for t in tl}

    # template-datasource-rule
    dss = [t for t in tl if t.get("type") == "datasource"]
    if len(dss) != 1:
        add("template-datasource-rule", "templating", "want exactly one datasource variable, got %d" % len(dss))
    for t in dss:
        if t.get("name") != "datasource":
            add("template-datasource-rule", "templating", "datasource variable named %r, want datasource" % t.get("name"))
        # the docs say "Data Source"; the linter accepts "Data source" (one
        # datasource variable) or "<Type> data source"
        if t.get("label") not in ("Data source", "%s data source" % str(t.get("query")).title()):
            add("template-datasource-rule", "templating", "datasource variable labelled %r, want Data source" % t.get("label"))
        if t.get("query") not in ("prometheus", "loki"):
            add("template-datasource-rule", "templating", "datasource variable of type %r" % t.get("query"))

    # template-job-rule, template-instance-rule
    for name in ("job", "instance"):
        rule = "template-%s-rule" % name
        t = by_name.get(name)
        if not t:
            add(rule, "templating", "no %s variable" % name)
            continue
        # the docs say labelled `job`; the linter warns unless it is title-cased
        if t.get("label") != name.title():
            add(rule, "templating." + name, "label %r, want %s" % (t.get("label"), name.title()))
        if ds_uid(t.get("datasource")) not in TEMPLATED_DS:
            add(rule, "templating." + name, "datasource %r is not $datasource" % (t.get("datasource"),))
        if t.get("type") != "query":
            add(rule, "templating." + name, "type %r, want query" % t.get("type"))
        if not t.get("multi"):
            add(rule, "templating." + name, "not multi-select")
        if t.get("allValue") != ".+":
            add(rule, "templating." + name, "allValue %r, want .+" % t.get("allValue"))
    inst = by_name.get("instance") or {}
    q = inst.get("query")
    q = q.get("query") if isinstance(q, dict) else q
    if q != 'label_values(up{job=~"$job"}, instance)':
        add("template-instance-rule", "templating.instance", "query %r, want label_values(up{job=~\"$job\"}, instance)" % q)

    # template-label-promql-rule (and the export's model/namespace variables)
    for name in ("model", "namespace"):
        if name not in by_name:
            add("export-variables", "templating", "no %s variable" % name)
    for t in tl:
        if t.get("type") != "query":
            continue
        q = t.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        m = re.fullmatch(r"\s*label_values\((.*)\)\s*", q or "", re.S)
        if not m:
            ok, msg = promql_ok(binary, q or "")
        else:
            args = m.group(1)
            # label_values(label) or label_values(selector, label)
            cut = args.rfind(",")
            sel = args[:cut].strip() if cut >= 0 else None
            label = args[cut + 1:].strip() if cut >= 0 else args.strip()
            ok = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", label) is not None
            msg = "label %r" % label
            if ok and sel:
                ok, msg = promql_ok(binary, sel)
        if not ok:
            add("template-label-promql-rule", "templating." + str(t.get("name")), "invalid PromQL: %s" % msg)

    # the panels and their targets
    for where, p in walk_panels(d.get("panels")):
        ptype = p.get("type")
        if ptype == "row":
            continue
        if ptype in PANEL_TYPES_DS and ds_uid(p.get("datasource")) not in TEMPLATED_DS:
            add("panel-datasource-rule", where, "datasource %r is not $datasource" % (p.get("datasource"),))
        if ptype in PANEL_TYPES_UNITS:
            unit = ((p.get("fieldConfig") or {}).get("defaults") or {}).get("unit")
            if not unit or unit not in UNITS:
                add("panel-units-rule", where, "unit %r is not a Grafana unit" % unit)
            if not (p.get("title") or "").strip() or not (p.get("description") or "").strip():
                add("panel-title-description-rule", where, "missing title or description")
        for ti, t in enumerate(p.get("targets") or []):
            tw = "%s targets[%d]" % (where, ti)
            if "datasource" in t and ds_uid(t["datasource"]) not in TEMPLATED_DS:
                add("panel-datasource-rule", tw, "target datasource %r" % (t["datasource"],))
            expr = t.get("expr") or ""
            ok, msg = promql_ok(binary, expr)
            if not ok:
                add("target-promql-rule", tw, "invalid PromQL: %s" % msg)
                continue
            for fn, rng in rate_ranges(expr):
                if rng != "$__rate_interval":
                    add("target-rate-interval-rule", tw, "%s over [%s], want [$__rate_interval]" % (fn, rng))
            sels = selectors(expr)
            if not sels:
                add("target-job-rule", tw, "no vector selector found in %s" % expr)
            for name, ms in sels:
                for label, rule in (("job", "target-job-rule"), ("instance", "target-instance-rule")):
                    if not any(l == label and op == "=~" and val == "$" + label for l, op, val in ms):
                        add(rule, tw, "%s has no %s=~\"$%s\" matcher" % (name or "{...}", label, label))

    # no hard-coded UIDs anywhere
    def uids(o, path):
        if isinstance(o, dict):
            for k, x in o.items():
                if k == "uid" and not (isinstance(x, str) and x.startswith("$")):
                    add("export-no-uid", path, "hard-coded uid %r" % (x,))
                uids(x, path + "." + k)
        elif isinstance(o, list):
            for i, x in enumerate(o):
                uids(x, "%s[%d]" % (path, i))
    uids(d, "dashboard")
    if not isinstance(d.get("schemaVersion"), int) or d["schemaVersion"] < 36:
        add("export-schema-version", "schemaVersion", "%r is older than 36" % d.get("schemaVersion"))
    return v


def main():
    if sys.argv[1] == "--selftest":
        selftest(sys.argv[2], sys.argv[3])
    binary, path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        d = json.load(f)
    v = check(binary, d)
    for line in v:
        print(line)
    sys.exit(1 if v else 0)


def selftest(binary, path):
    """Each rule fires on a dashboard broken for it (so the checks can fail)."""
    import copy
    with open(path) as f:
        good = json.load(f)
    assert not check(binary, good), "the dashboard under test is not clean"

    def first_panel(d):
        return next(p for _, p in walk_panels(d["panels"]) if p.get("type") != "row")

    def var(d, name):
        return next(t for t in d["templating"]["list"] if t["name"] == name)

    def set_expr(d, e):
        first_panel(d)["targets"][0]["expr"] = e

    cases = {
        "template-datasource-rule": lambda d: var(d, "datasource").update(name="ds"),
        "template-job-rule": lambda d: var(d, "job").update(allValue=".*"),
        "template-instance-rule": lambda d: var(d, "instance").update(query="label_values(instance)"),
        "template-label-promql-rule": lambda d: var(d, "model").update(query="label_values(up{job=~\"$job\", model_name)"),
        "panel-datasource-rule": lambda d: first_panel(d).update(datasource={"type": "prometheus", "uid": "P1809F7CD0C75ACF3"}),
        "target-promql-rule": lambda d: set_expr(d, "sum(rate(x{job=~\"$job\", instance=~\"$instance\"}[$__rate_interval])"),
        "target-rate-interval-rule": lambda d: set_expr(d, "sum(rate(x{job=~\"$job\", instance=~\"$instance\"}[5m]))"),
        "target-job-rule": lambda d: set_expr(d, "sum(rate(x{instance=~\"$instance\"}[$__rate_interval]))"),
        "target-instance-rule": lambda d: set_expr(d, "sum(x{job=~\"$job\"}) / sum(y{job=~\"$job\", instance=~\"$instance\"})"),
        "panel-units-rule": lambda d: first_panel(d)["fieldConfig"]["defaults"].update(unit="tokens"),
        "panel-title-description-rule": lambda d: first_panel(d).update(description=""),
        "export-no-uid": lambda d: d.update(uid="abc123"),
        "export-variables": lambda d: d["templating"].update(list=[t for t in d["templating"]["list"] if t["name"] != "model"]),
        "export-schema-version": lambda d: d.update(schemaVersion=16),
    }
    bad = 0
    for rule, mutate in cases.items():
        d = copy.deepcopy(good)
        mutate(d)
        got = check(binary, d)
        if not any(line.startswith(rule + ":") for line in got):
            print("selftest: %s did not fire (got %s)" % (rule, got))
            bad += 1
    print("selftest: %d of %d rules fire on their broken dashboard" % (len(cases) - bad, len(cases)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

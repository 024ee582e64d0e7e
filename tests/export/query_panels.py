#!/usr/bin/env python3
"""Runs every target expression of a Grafana dashboard through a Prometheus
API (/api/v1/query) with the variables substituted as "All" (job, instance:
.+; namespace, model: .*; $__rate_interval: RATE) and reports the targets that
return no series.

usage: query_panels.py DASHBOARD.json BASE_URL RATE_INTERVAL
Exit 0 when every target returns data, 1 otherwise (the empty ones listed)."""
import json
import sys
import urllib.parse
import urllib.request

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from dashboard_rules import subst, SUBST, walk_panels  # noqa: E402


def main():
    path, base, rate = sys.argv[1], sys.argv[2].rstrip("/"), sys.argv[3]
    d = json.load(open(path))
    values = dict(SUBST, __rate_interval=rate)
    empty, n = [], 0
    for where, p in walk_panels(d["panels"]):
        for i, t in enumerate(p.get("targets") or []):
            n += 1
            q = subst(t["expr"], values)
            url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
            with urllib.request.urlopen(url, timeout=30) as r:
                res = json.load(r)
            if res.get("status") != "success" or not res["data"]["result"]:
                empty.append("%s targets[%d]: %s -> %s" % (where, i, q, json.dumps(res)[:300]))
    for e in empty:
        print("no data: " + e)
    print("%d of %d targets return data" % (n - len(empty), n))
    sys.exit(1 if empty else 0)


if __name__ == "__main__":
    main()

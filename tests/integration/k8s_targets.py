#!/usr/bin/env python3
"""k8s_targets.py — /api/v1/targets in a comparable form for run_k8s_sd.sh.

  k8s_targets.py get URL            prints the normalised answer (JSON)
  k8s_targets.py settle URL OUT [PREV]
                                    waits until URL's answer differs from the file
                                    PREV (when given) and then stays the same for 6 s
                                    (Prometheus publishes discovery every 5 s);
                                    writes it to OUT
  k8s_targets.py wait URL REF [S]   waits up to S seconds (default 30) until URL's
                                    answer equals REF (a URL or a JSON file);
                                    prints the differences and exits 1 if never

Normalised: active targets as (scrapePool, discoveredLabels, labels) and dropped
targets as discoveredLabels, each sorted; health, lastScrape, scrapeUrl and the
other per-scrape fields are left out. Only pools whose name starts with "k8s-"
are kept (the embedded jobs of infermon have no Prometheus counterpart).
"""
import json
import sys
import time
import urllib.request


def fetch(src):
    if src.startswith("http"):
        with urllib.request.urlopen(src + "/api/v1/targets", timeout=10) as r:
            return normalise(json.loads(r.read())["data"])
    with open(src) as f:
        return json.load(f)


def normalise(d):
    act = sorted((json.dumps({"pool": t["scrapePool"], "discoveredLabels": t["discoveredLabels"],
                              "labels": t["labels"]}, sort_keys=True)
                  for t in d.get("activeTargets", []) if t["scrapePool"].startswith("k8s-")))
    drop = sorted(json.dumps(t["discoveredLabels"], sort_keys=True)
                  for t in d.get("droppedTargets", [])
                  if t["discoveredLabels"].get("job", "").startswith("k8s-"))
    return {"active": [json.loads(x) for x in act], "dropped": [json.loads(x) for x in drop]}


def diff(a, b):
    out = []
    for k in ("active", "dropped"):
        sa = {json.dumps(x, sort_keys=True) for x in a[k]}
        sb = {json.dumps(x, sort_keys=True) for x in b[k]}
        for x in sorted(sa - sb)[:5]:
            out.append("%s only in infermon: %s" % (k, x[:1500]))
        for x in sorted(sb - sa)[:5]:
            out.append("%s only in reference: %s" % (k, x[:1500]))
        if len(a[k]) != len(b[k]):
            out.append("%s: %d in infermon, %d in reference" % (k, len(a[k]), len(b[k])))
    return out


def main():
    if sys.argv[1] == "get":
        print(json.dumps(fetch(sys.argv[2]), indent=1, sort_keys=True))
        return 0
    if sys.argv[1] == "settle":
        url, out = sys.argv[2], sys.argv[3]
        prev = fetch(sys.argv[4]) if len(sys.argv) > 4 else None
        deadline = time.time() + 60
        last, since = None, time.time()
        while time.time() < deadline:
            try:
                cur = fetch(url)
            except Exception:
                time.sleep(0.3)
                continue
            if prev is not None and cur == prev:
                since = time.time()
            elif cur != last:
                last, since = cur, time.time()
            elif time.time() - since >= 6:
                with open(out, "w") as f:
                    json.dump(cur, f, indent=1, sort_keys=True)
                    f.write("\n")
                return 0
            time.sleep(0.3)
        print("the reference never settled", file=sys.stderr)
        return 1
    url, ref = sys.argv[2], sys.argv[3]
    secs = float(sys.argv[4]) if len(sys.argv) > 4 else 30
    deadline = time.time() + secs
    d = ["no answer"]
    while time.time() < deadline:
        try:
            d = diff(fetch(url), fetch(ref))
        except Exception as e:  # a server still starting
            d = [str(e)]
        if not d:
            return 0
        time.sleep(0.3)
    print("\n".join(d))
    return 1


if __name__ == "__main__":
    sys.exit(main())

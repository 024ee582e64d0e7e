#!/usr/bin/env bash
# GET /api/v1/openapi.yaml: an OpenAPI 3.1 document (parsed with python3-yaml)
# generated from the route table (src/http/routes.c). Both directions are
# checked, so the document cannot drift from the router: every path it lists
# answers something other than the router's "404 page not found" (with each
# method it lists; path parameters filled in), and every /api/v1 path the
# router in src/http compares a request against is in the document.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
port=$(free_port)
printf 'global: {scrape_interval: 1s}\nscrape_configs: []\n' >"$IM_TMP/cfg.yml"
bg "$IM_BINARY" run --config.file="$IM_TMP/cfg.yml" --storage.memory-only \
  --web.listen-address="127.0.0.1:$port" --web.enable-remote-write-receiver --web.enable-otlp-receiver \
  --enable-feature=search-api >"$IM_TMP/im.log" 2>&1
wait_http "http://127.0.0.1:$port/-/ready" 30
curl -fsS -D "$IM_TMP/h" "http://127.0.0.1:$port/api/v1/openapi.yaml" -o "$IM_TMP/openapi.yaml"
grep -qi '^content-type: application/yaml' "$IM_TMP/h" || fail "content type: $(grep -i content-type "$IM_TMP/h")"
$PY - "$IM_TMP/openapi.yaml" "http://127.0.0.1:$port" "$IM_SOURCE_DIR/src/http" <<'PY'
import glob, re, sys, urllib.error, urllib.request
import yaml
doc = yaml.safe_load(open(sys.argv[1]))
base, src = sys.argv[2], sys.argv[3]
def fail(m):
    print("FAIL: " + m, file=sys.stderr); sys.exit(1)
if doc.get("openapi") != "3.1.0": fail("openapi version %r" % doc.get("openapi"))
if doc["servers"][0]["url"] != "/api/v1": fail("servers %r" % doc["servers"])
if not doc["info"]["version"]: fail("no info.version")
paths = doc["paths"]
if len(paths) < 30: fail("only %d paths" % len(paths))
ops = 0
for p, item in paths.items():
    if not p.startswith("/"): fail("path %r" % p)
    for m, op in item.items():
        if m not in ("get", "post"): fail("%s: method %s" % (p, m))
        ids = [x["name"] for x in op["parameters"]]
        if len(ids) != len(set(ids)): fail("%s %s: duplicate parameters" % (m, p))
        for x in op["parameters"]:
            if x["in"] == "path" and "{%s}" % x["name"] not in p: fail("%s: path parameter %s" % (p, x["name"]))
        if "200" not in op["responses"]: fail("%s %s: no 200" % (m, p))
        url = base + "/api/v1" + re.sub(r"\{[^}]*\}", "job", p)
        req = urllib.request.Request(url, method=m.upper(), data=b"" if m == "post" else None)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                code, body = r.status, r.read()
        except urllib.error.HTTPError as e:
            code, body = e.code, e.read()
        if code == 404 and b"404 page not found" in body: fail("%s %s: the router does not know it" % (m.upper(), p))
        if code == 405: fail("%s %s: listed but 405" % (m.upper(), p))
        ops += 1
ids = [op["operationId"] for it in paths.values() for op in it.values()]
if len(ids) != len(set(ids)): fail("duplicate operationId")
# every /api/v1 path the router compares against is listed
def listed(p):
    return any(re.fullmatch(re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(q)), p) for q in paths)
seen = set()
for f in glob.glob(src + "/*.c"):
    t = open(f).read()
    name = f.rsplit("/", 1)[1]
    for m in re.finditer(r'str(n?)cmp\((u|path|what), "(/?[^"]*)"', t):
        prefix, var, lit = m.group(1), m.group(2), m.group(3)
        if var == "u":
            if not lit.startswith("/api/v1/") or lit == "/api/v1/": continue
            p = lit[7:]
        elif name.startswith("api"):
            p = ("/status/" + lit) if var == "what" else lit
        else:
            continue
        if p == "/status/": continue  # the prefix do_status dispatches on
        if p == "/label/": p = "/label/job/values"
        seen.add(p)
for p in sorted(seen):
    if not listed(p): fail("the router answers /api/v1%s but the document does not list it" % p)
print("openapi: %d paths, %d operations, %d router literals checked" % (len(paths), ops, len(seen)))
PY

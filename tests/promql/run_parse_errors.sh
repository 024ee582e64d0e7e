#!/usr/bin/env bash
# Parser differential test against the real Prometheus 2.42 (Debian package):
#  1. every query of tests/promql/parse_errors.txt goes to Prometheus'
#     /api/v1/query and to `infermon promql-parse --check`; both must either
#     accept it or reject it with the same text ("1:14: parse error: ...");
#  2. every accepted query shorter than 100 bytes goes to /api/v1/format_query
#     and to `infermon promql-parse`; the canonical texts must be equal.
# Queries listed in parse_errors_known_diffs.txt (documented 2.42 vs 2.53 /
# RE2 vs PCRE2 differences, see docs/promql.md) are skipped and listed.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
command -v prometheus >/dev/null || fail "prometheus (Debian package) is not installed"

port=$(free_port)
mkdir -p "$IM_TMP/prom"
printf 'global:\n  scrape_interval: 1h\n' >"$IM_TMP/prom/prometheus.yml"
bg prometheus --config.file="$IM_TMP/prom/prometheus.yml" \
  --storage.tsdb.path="$IM_TMP/prom/data" --web.listen-address="127.0.0.1:$port" \
  --log.level=warn >"$IM_TMP/prom/log" 2>&1
wait_http "http://127.0.0.1:$port/-/ready" 60 || { cat "$IM_TMP/prom/log"; fail "prometheus did not start"; }

$PY - "$IM_BINARY" "http://127.0.0.1:$port" "$IM_SOURCE_DIR/tests/promql" <<'EOF'
import json, subprocess, sys, urllib.error, urllib.parse, urllib.request

binary, base, d = sys.argv[1], sys.argv[2], sys.argv[3]
queries = [l.rstrip("\n") for l in open(d + "/parse_errors.txt", encoding="utf-8") if l.strip()]
known = {}
for l in open(d + "/parse_errors_known_diffs.txt", encoding="utf-8"):
    if l.strip():
        q, why = l.rstrip("\n").split("\t", 1)
        known[q] = why

def prom(path, q):
    url = base + path + "?" + urllib.parse.urlencode({"query": q, "time": "1000"})
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        return json.load(e)

def ours(args, q):
    r = subprocess.run([binary, "promql-parse", "--promql.compat=2"] + args + ["--", q], capture_output=True,
                       text=True, timeout=30)
    return r.returncode, r.stdout.rstrip("\n"), r.stderr.strip()

failed = passed = skipped = formatted = 0
accepted = []
for q in queries:
    if q in known:
        skipped += 1
        print("skip (documented difference): %r: %s" % (q, known[q]))
        continue
    res = prom("/api/v1/query", q)
    want = "OK"
    if res.get("status") == "error" and res.get("errorType") == "bad_data":
        want = res["error"].replace('invalid parameter "query": ', "", 1)
    rc, _, err = ours(["--check"], q)
    got = "OK" if rc == 0 else err
    if rc not in (0, 2):
        got = "exit code %d: %s" % (rc, err)
    if got == want:
        passed += 1
        if want == "OK" and len(q.encode()) < 100:
            accepted.append(q)
    else:
        failed += 1
        print("FAIL %r\n  prometheus: %s\n  infermon:   %s" % (q, want, got))

for q in accepted:
    res = prom("/api/v1/format_query", q)
    if res.get("status") != "success":
        continue
    want = res["data"]
    if "\n" in want:
        continue  # Prometheus' prettifier split the line: not String()'s form
    rc, out, err = ours([], q)
    if out == want:
        formatted += 1
    else:
        failed += 1
        print("FAIL format %r\n  prometheus: %s\n  infermon:   %s" % (q, want, out))

print("%d passed, %d failed, %d skipped (documented), %d canonical forms equal"
      % (passed, failed, skipped, formatted))
sys.exit(1 if failed else 0)
EOF

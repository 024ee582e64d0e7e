#!/usr/bin/env bash
# JSON of query results against the real Prometheus 2.42, byte for byte: label
# values with control bytes, \n \t \r, quotes and backslashes, < > &, U+2028 and
# U+2029, other non-ASCII, invalid UTF-8 (scraped from a text exposition served
# by python's http.server, by both); string results and label_replace values with
# the same bytes from PromQL string literals; timestamps with a millisecond part.
# The answers of /api/v1/query and /api/v1/query_range must be the same bytes,
# including the two time forms: 1000.500 for vector and matrix points, the
# shortest decimal (1000.5) for the time of a scalar or string result.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
command -v prometheus >/dev/null || fail "prometheus (Debian package) is not installed"
wport=$(free_port); pport=$(free_port); iport=$(free_port)
mkdir -p "$IM_TMP/www"
$PY - "$IM_TMP/www" <<'PY'
import sys
lines = [
    b'# TYPE esc gauge',
    b'esc{v="ctl\x01\x02\x1f end"} 1',
    b'esc{v="nl\\n tab\t cr\r"} 2',
    b'esc{v="<a href=\'x\'>&amp;</a>"} 3',
    'esc{v="ls\u2028ps\u2029 end"} 4'.encode(),
    b'esc{v="q\\"b\\\\s"} 5',
    'esc{v="\u00e9\u20ac\U0001F600 \ufffd"} 6'.encode(),
    b'esc{v="\x7f del \x08 bs \x0c ff"} 7',
    b'esc{v="\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x80\xa8"} 8',
]
open(sys.argv[1] + "/metrics", "wb").write(b"\n".join(lines) + b"\n")
# invalid UTF-8 in a label value fails the whole scrape (in both): its own target
open(sys.argv[1] + "/bad", "wb").write(b'# TYPE badutf gauge\nbadutf{v="bad\xff\xfe \xc3( end"} 1\n')
PY
cat >"$IM_TMP/cfg.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: esc
    static_configs: [{targets: ['127.0.0.1:$wport']}]
  - job_name: bad
    metrics_path: /bad
    static_configs: [{targets: ['127.0.0.1:$wport']}]
YML
bg $PY "$IM_SOURCE_DIR/tests/lib/serve_dir.py" "$wport" --bind 127.0.0.1 --directory "$IM_TMP/www" >/dev/null 2>&1
bg prometheus --config.file="$IM_TMP/cfg.yml" --storage.tsdb.path="$IM_TMP/pdata" \
  --web.listen-address="127.0.0.1:$pport" >"$IM_TMP/prom.log" 2>&1
bg "$IM_BINARY" run --promql.compat=2 --config.file="$IM_TMP/cfg.yml" --storage.tsdb.path="$IM_TMP/idata" \
  --web.listen-address="127.0.0.1:$iport" >"$IM_TMP/im.log" 2>&1
wait_http "http://127.0.0.1:$pport/-/ready" 60
wait_http "http://127.0.0.1:$iport/-/ready" 30
P="http://127.0.0.1:$pport"
I="http://127.0.0.1:$iport"
# both have scraped both targets at least seven times (the queries look back 5 s)
for base in "$P" "$I"; do
  for _ in $(seq 300); do
    n=$(curl -fsS "$base/api/v1/query?query=min(count_over_time(up%5B1m%5D))" |
      $PY -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
    [ "$n" -ge 7 ] && break
    sleep 0.2
  done
  [ "$n" -ge 7 ] || fail "$base did not scrape the targets"
done
$PY - "$P" "$I" <<'PY' || fail "query answers differ from Prometheus"
import re, sys, time, urllib.parse, urllib.request
P, I = sys.argv[1], sys.argv[2]
now = int(time.time()) - 1
def get(base, path, **params):
    url = base + path + "?" + urllib.parse.urlencode(params)
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
lit = r'"c\x01\x1f nl\n t\t <>& \u2028\u2029 bad\xff\xfe\xc3( \"\\ \u00e9"'
cases = [
    ("/api/v1/query", dict(query="sort(esc)", time="%d.5" % now)),
    ("/api/v1/query", dict(query="sort(esc)", time="%d.05" % now)),
    ("/api/v1/query", dict(query="sort(esc)", time="%d.125" % now)),
    ("/api/v1/query", dict(query="esc", time=str(now))),
    ("/api/v1/query", dict(query="count(esc)", time="%d.999" % now)),
    ("/api/v1/query", dict(query="esc{v=~\"ls.*\"}[4s:1s]", time=str(now))),
    ("/api/v1/query", dict(query=lit, time="%d.5" % now)),
    ("/api/v1/query", dict(query=lit, time=str(now))),
    ("/api/v1/query", dict(query="scalar(count(esc))", time="%d.25" % now)),
    ("/api/v1/query", dict(query="scalar(count(esc))", time=str(now))),
    ("/api/v1/query", dict(query='label_replace(vector(1), "x", %s, "", "")' % lit, time=str(now))),
    ("/api/v1/query", dict(query='label_join(sort(esc), "w", %s, "v", "v")' % lit, time=str(now))),
    ("/api/v1/query_range", dict(query="sort(esc) * 2", start="%d.25" % (now - 4), end=str(now), step="1.5")),
    ("/api/v1/query", dict(query='sort(up)', time=str(now))),
    ("/api/v1/query", dict(query='sort(count_over_time(badutf[1m]))', time=str(now))),
    ("/api/v1/query_range", dict(query="time()", start="%d.1" % (now - 2), end=str(now), step="0.5")),
]
bad = 0
for path, params in cases:
    a, b = get(P, path, **params), get(I, path, **params)
    if a != b:
        bad += 1
        print("DIFF %s %s\n  prometheus: %r\n  infermon:   %r" % (path, params, a, b))
# not vacuous: every series arrived, escapes included
first = get(P, *cases[0][:1], **cases[0][1])[1]
for want in [rb'\u0001\u0002\u001f', rb'nl\n tab\t cr\r', rb'\u003ca href=', rb'ls\u2028ps\u2029',
             rb'q\"b\\s', b'\x7f del \\u0008 bs \\u000c ff',
             rb'\u0026amp;', '\u00e9 \U0001F600 '.encode() + rb'\u2028"']:
    if want not in first:
        bad += 1
        print("prometheus' answer lacks %r: %r" % (want, first))
# not vacuous either: both time forms are among the answers compared
for want in [b'"resultType":"scalar","result":[%d.25,' % now, b'.500,"']:
    if not any(want in get(P, p, **q)[1] for p, q in cases):
        bad += 1
        print("no answer of prometheus holds %r" % want)
print("%d query answers compared byte for byte, %d differ" % (len(cases), bad))
sys.exit(1 if bad else 0)
PY

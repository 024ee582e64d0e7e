#!/usr/bin/env bash
# infermon run re-resolves its SLOs when the live bucket bounds change
# (docs/slo.md, --llm.slo-resolve-interval): a vLLM-named TTFT histogram with
# layout A (0.5 1.0 2.5 5.0) makes rules for a 2.5s and a 1s SLO; the exporter
# restarted on the same port with layout B (0.5 1.0 2.0 4.0) takes the 2.5s
# SLO's rules away within the interval, with an error naming the live
# neighbours 2s and 4s, while the 1s SLO keeps its rules; back to A, they
# return. Layout C (A plus 1.5 and 3.0) keeps the bound: the rules stay the
# same text. The daemon's log must hold no sanitizer report.
source "$IM_SOURCE_DIR/tests/slo/lib.sh"
exp=$(free_port)
port=$(free_port)
cat >"$IM_TMP/exporter.py" <<'PYEOF'
import random, sys, time
from prometheus_client import Histogram, start_http_server
layouts = {"A": (0.5, 1.0, 2.5, 5.0), "B": (0.5, 1.0, 2.0, 4.0), "C": (0.5, 1.0, 1.5, 2.5, 3.0, 5.0)}
h = Histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
              ["model_name"], buckets=layouts[sys.argv[2]])
start_http_server(int(sys.argv[1]), addr="127.0.0.1")
rnd = random.Random(1)
while True:
    for _ in range(20):
        h.labels("m1").observe(rnd.choice((0.3, 0.8, 1.8, 3.5)))
    time.sleep(0.2)
PYEOF
EXPID=
# exporter LAYOUT: (re)starts the exporter on $exp with that bucket layout and
# waits until it serves it.
exporter() {
  if [ -n "$EXPID" ]; then
    kill "$EXPID" 2>/dev/null || true
    wait "$EXPID" 2>/dev/null || true
  fi
  local deadline=$((SECONDS + 30))
  until "$PY" -c 'import socket,sys; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", int(sys.argv[1]))); s.close()' "$exp" 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || fail "port $exp still taken"
    sleep 0.1
  done
  bg "$PY" "$IM_TMP/exporter.py" "$exp" "$1"
  EXPID=${IM_PIDS[-1]}
  deadline=$((SECONDS + 30))
  until curl -fsS "http://127.0.0.1:$exp/metrics" 2>/dev/null | grep -q '_bucket{.*model_name="m1"'; do
    [ $SECONDS -lt $deadline ] || fail "exporter $1 not serving in 30 s"
    sleep 0.1
  done
}
exporter A
cat >"$IM_TMP/c.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: vllm
    static_configs: [{targets: ['127.0.0.1:$exp']}]
llm:
  builtin_rules: false
  slos:
    - {name: ttft-mid, model: m1, signal: ttft, threshold: 2.5s, objective: 90, window: 7d}
    - {name: ttft-one, model: m1, signal: ttft, threshold: 1s, objective: 90, window: 7d}
YML
"$IM_BINARY" run --help 2>&1 | grep -q -- '--llm.slo-resolve-interval' || fail "no --llm.slo-resolve-interval in run --help"
bg "$IM_BINARY" run --config.file "$IM_TMP/c.yml" --storage.tsdb.path "$IM_TMP/data" \
  --web.listen-address "127.0.0.1:$port" --llm.slo-resolve-interval 2s >"$IM_TMP/run.log" 2>&1
IMPID=${IM_PIDS[-1]}
wait_http "http://127.0.0.1:$port/-/ready" 30
U="http://127.0.0.1:$port"

# check PYTHON-ASSERTIONS: runs them over slos (name -> entry), groups (rule
# group name -> group) and rules (group name -> {rule name: query}).
check() {
  curl -fsS "$U/api/v1/llm/slos" >"$IM_TMP/slos.json" || return 1
  curl -fsS "$U/api/v1/rules" >"$IM_TMP/rules.json" || return 1
  $PY - "$IM_TMP/slos.json" "$IM_TMP/rules.json" "$1" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "success", d
slos = {x["name"]: x for x in d["data"]["slos"]}
groups = {g["name"]: g for g in json.load(open(sys.argv[2]))["data"]["groups"]}
rules = {g: {r["name"] + "/" + r.get("labels", {}).get("severity", ""): r["query"] for r in groups[g]["rules"]} for g in groups}
exec(sys.argv[3])
PYEOF
}
# until_check WHAT SECONDS ASSERTIONS: polls check until the assertions hold.
until_check() {
  local deadline=$((SECONDS + $2))
  until check "$3" 2>"$IM_TMP/check.err"; do
    [ $SECONDS -lt $deadline ] || fail "$1 in $2 s: $(tail -3 "$IM_TMP/check.err"); $(cat "$IM_TMP/slos.json"); $(grep -i slo "$IM_TMP/run.log" | tail -5)"
    sleep 0.3
  done
}
LIVE_BOTH='
for n in ("ttft-mid", "ttft-one"):
    assert slos[n]["bounds"] == "live" and "error" not in slos[n], slos[n]
    assert "infermon.slo." + n in groups, groups.keys()
# the rules loaded are those of the live resolution: the vLLM names only
# (the catalog also has Ray names), with the le regex of each threshold
q = rules["infermon.slo.ttft-mid"]["infermon_slo:sli_error:ratio_rate5m/"]
assert "le=~\"2\\\\.5\"" in q and "ray_vllm" not in q, q
q = rules["infermon.slo.ttft-one"]["infermon_slo:sli_error:ratio_rate5m/"]
assert "le=~\"1|1\\\\.0\"" in q and "ray_vllm" not in q, q
'
# 1. layout A: both SLOs live with rules
until_check "not live on layout A" 60 "$LIVE_BOTH"
cp "$IM_TMP/rules.json" "$IM_TMP/rules-A.json"
echo "ok: layout A: both SLOs live, rules loaded"

# 2. layout B lacks 2.5: ttft-mid refused with the live neighbours, its rules gone
exporter B
t0=$SECONDS
until_check "2.5s not refused on layout B" 30 '
e = slos["ttft-mid"].get("error", "")
assert slos["ttft-mid"]["bounds"] == "live", slos["ttft-mid"]
assert "2.5s is not a bucket bound of vllm:time_to_first_token_seconds (as scraped; neighbours 2s and 4s)" in e, e
assert "use threshold: 2s (or 4s)" in e or "use threshold: 4s (or 2s)" in e, e
assert slos["ttft-mid"]["attainment"] is None, slos["ttft-mid"]
assert "infermon.slo.ttft-mid" not in groups, groups.keys()
assert "infermon.slo.ttft-one" in groups and "error" not in slos["ttft-one"], (groups.keys(), slos["ttft-one"])
'
echo "ok: layout B: ttft-mid refused (neighbours 2s and 4s) $((SECONDS - t0)) s after the exporter came back; ttft-one kept its rules"
grep -q 'SLO refused: it makes no rules.*slo=ttft-mid.*bounds=live.*neighbours 2s and 4s' "$IM_TMP/run.log" ||
  fail "no error log line for ttft-mid: $(grep -i slo "$IM_TMP/run.log" | tail -5)"

# 3. back to A: the rules return
exporter A
until_check "ttft-mid's rules not back on layout A" 30 "$LIVE_BOTH"
echo "ok: layout A again: ttft-mid's rules are back"

# 4. layout C keeps 2.5 and 1 and adds buckets: once a re-resolution has read
# its bounds ("resolved_at" after 1.5 is in the store), the rules are the
# same text as on A and were not reloaded.
exporter C
deadline=$((SECONDS + 30))
until curl -fsS "$U/api/v1/query" --data-urlencode 'query=count(vllm:time_to_first_token_seconds_bucket{le="1.5"})' |
  grep -q '"value"'; do
  [ $SECONDS -lt $deadline ] || fail "layout C not scraped in 30 s"
  sleep 0.3
done
tC=$(date +%s.%N)
nchanged=$(grep -c 'The SLO rules changed' "$IM_TMP/run.log" || true)
until_check "no re-resolution on layout C" 30 "
assert d['data']['resolved_at'] > $tC, (d['data']['resolved_at'], $tC)
$LIVE_BOTH"
$PY - "$IM_TMP/rules-A.json" "$IM_TMP/rules.json" <<'PYEOF' || fail "layout C changed the rules"
import json, sys
def qs(f):
    g = json.load(open(f))["data"]["groups"]
    return {(x["name"], r["name"], r.get("labels", {}).get("severity", "")): r["query"] for x in g for r in x["rules"]}
a, c = qs(sys.argv[1]), qs(sys.argv[2])
assert a == c, [(k, a.get(k), c.get(k)) for k in set(a) | set(c) if a.get(k) != c.get(k)][:2]
PYEOF
[ "$(grep -c 'The SLO rules changed' "$IM_TMP/run.log" || true)" = "$nchanged" ] ||
  fail "layout C reloaded the rules: $(grep 'SLO' "$IM_TMP/run.log" | tail -3)"
echo "ok: layout C (more buckets, same bounds): rules unchanged"

stop_daemon "$IMPID" "$IM_TMP/run.log"
echo "ok: no sanitizer report in the daemon's log"

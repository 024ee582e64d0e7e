# lib.sh — helpers for the doctor script tests (source it after tests/lib/common.sh):
# a simulated history (infermon simulate --history) imported into a local store,
# `infermon doctor` over it, and checks of its JSON findings.
DOC_END=2026-08-25T12:00:00Z

# doc_store NAME SIMULATE-ARGS...: 35 minutes of 2 pods (PODS=...) at a 30 s step,
# imported into $IM_TMP/NAME (and left as $IM_TMP/NAME.om for promtool).
doc_store() {
  local n=$1
  shift
  "$IM_BINARY" simulate --history "${DOC_HISTORY:-35m}" --step 30s --pods "${PODS:-2}" \
    --end "$DOC_END" --seed "${SEED:-1}" --out "$IM_TMP/$n.om" "$@" 2>"$IM_TMP/$n.sim.err" \
    || { cat "$IM_TMP/$n.sim.err"; fail "simulate $*"; }
  "$IM_BINARY" tsdb import --format openmetrics "$IM_TMP/$n.om" "$IM_TMP/$n" \
    >"$IM_TMP/$n.import" 2>&1 || { tail -5 "$IM_TMP/$n.import"; fail "tsdb import $n"; }
}

# doc_run NAME [DOCTOR-ARGS...]: doctor --output json over the store NAME into
# $IM_TMP/NAME.json; DOC_RC is its exit code.
doc_run() {
  local n=$1
  shift
  set +e
  "$IM_BINARY" doctor --storage.tsdb.path "$IM_TMP/$n" --at "$DOC_END" --output json "$@" \
    >"$IM_TMP/$n.json" 2>"$IM_TMP/$n.err"
  DOC_RC=$?
  set -e
  [ "$DOC_RC" -le 1 ] || { cat "$IM_TMP/$n.err"; fail "doctor $n exited $DOC_RC"; }
}

# doc_check FILE.json CAUSE SIGNAL... : the first finding is CAUSE (warning or
# critical), with evidence for every SIGNAL (each with its query, values and
# time range), alternatives with reasons and an action with flags.
doc_check() {
  $PY - "$@" <<'PYEOF'
import json, sys
path, cause, signals = sys.argv[1], sys.argv[2], sys.argv[3:]
d = json.load(open(path))
fs = d["findings"]
def die(msg):
    print("FAIL: %s\n%s" % (msg, "\n".join("  %s %s: %s" % (f["severity"], f["cause"], f["summary"]) for f in fs)))
    sys.exit(1)
if not fs:
    die("no findings, expected %s" % cause)
f = fs[0]
if f["cause"] != cause:
    die("first finding is %s, expected %s" % (f["cause"], cause))
if f["severity"] not in ("warning", "critical"):
    die("%s is only %s" % (cause, f["severity"]))
for k in ("cause", "severity", "confidence", "model", "pods", "nodes", "since", "evidence",
          "alternatives", "action"):
    if k not in f:
        die("key %s missing" % k)
if not 0 < f["confidence"] <= 1:
    die("confidence %s" % f["confidence"])
got = {e["signal"]: e for e in f["evidence"]}
for s in signals:
    if s not in got:
        die("no evidence for %s (have %s)" % (s, sorted(got)))
    e = got[s]
    for k in ("query", "values", "start", "end", "step"):
        if k not in e:
            die("evidence %s lacks %s" % (s, k))
    if e["signal"] not in ("names",) and not e["query"]:
        die("evidence %s has no query" % s)
if cause not in ("stale-names", "quota-starved", "gpu-fault", "gpu-throttle", "target-down") and not f["alternatives"]:
    die("no alternatives")
for a in f["alternatives"]:
    if not a["why"]:
        die("alternative %s without a reason" % a["cause"])
if not f["action"]["text"] or not f["action"]["flags"]:
    die("no action or flags")
print("ok: %s first (%s, confidence %s): %s" % (cause, f["severity"], f["confidence"], f["summary"][:120]))
PYEOF
}

# doc_prom NAME: the same history in a real Prometheus (promtool create-blocks-from
# openmetrics, then prometheus on a free port); sets PROM_URL.
doc_prom() {
  local n=$1
  command -v promtool >/dev/null && command -v prometheus >/dev/null || fail "prometheus not installed"
  promtool tsdb create-blocks-from openmetrics "$IM_TMP/$n.om" "$IM_TMP/$n.prom" \
    >"$IM_TMP/$n.blocks" 2>&1 || { cat "$IM_TMP/$n.blocks"; fail "promtool create-blocks"; }
  echo 'global: {scrape_interval: 15s}' >"$IM_TMP/prom.yml"
  local port
  port=$(free_port)
  bg prometheus --config.file="$IM_TMP/prom.yml" --storage.tsdb.path="$IM_TMP/$n.prom" \
    --storage.tsdb.retention.time=100y --web.listen-address="127.0.0.1:$port" \
    >"$IM_TMP/$n.prom.log" 2>&1
  PROM_URL="http://127.0.0.1:$port"
  wait_http "$PROM_URL/-/ready" 60
}

# doc_same A.json B.json: the same causes in the same order (local vs remote).
doc_same() {
  $PY - "$1" "$2" <<'PYEOF'
import json, sys
a = [(f["cause"], f["severity"], f["model"]) for f in json.load(open(sys.argv[1]))["findings"]]
b = [(f["cause"], f["severity"], f["model"]) for f in json.load(open(sys.argv[2]))["findings"]]
if a != b:
    print("FAIL: local %s\n      remote %s" % (a, b))
    sys.exit(1)
print("ok: same findings over both backends: %s" % [c for c, _, _ in a])
PYEOF
}

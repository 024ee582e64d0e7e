#!/usr/bin/env bash
# GET /api/v1/llm/doctor on `infermon run`: the same findings as the command,
# in the API envelope; bad parameters are bad_data (400); `infermon doctor
# --url` against the daemon gives the same findings too.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
doc_store s --scenario cpu-bound
doc_run s
cp "$IM_TMP/s.json" "$IM_TMP/local.json"
printf 'global: {scrape_interval: 15s}\nllm:\n  doctor:\n    window: 30m\n' >"$IM_TMP/im.yml"
port=$(free_port)
bg "$IM_BINARY" run --config.file "$IM_TMP/im.yml" --storage.tsdb.path "$IM_TMP/s" \
  --storage.tsdb.retention.time=100y --web.listen-address "127.0.0.1:$port" >"$IM_TMP/run.log" 2>&1
wait_http "http://127.0.0.1:$port/-/ready" 30
base="http://127.0.0.1:$port/api/v1/llm/doctor"
curl -fsS "$base?at=$DOC_END" >"$IM_TMP/http.json" || fail "GET $base"
$PY - "$IM_TMP/http.json" "$IM_TMP/local.json" <<'PYEOF' || exit 1
import json, sys
h = json.load(open(sys.argv[1]))
assert h["status"] == "success", h
l = json.load(open(sys.argv[2]))
a = [(f["cause"], f["severity"]) for f in h["data"]["findings"]]
b = [(f["cause"], f["severity"]) for f in l["findings"]]
assert a == b and a[0][0] == "host-bound", (a, b)
f = h["data"]["findings"][0]
assert f["link"].startswith("#/overview?panel=gpu_vs_wait"), f["link"]
PYEOF
code=$(curl -s -o "$IM_TMP/bad.json" -w '%{http_code}' "$base?at=yesterday")
[ "$code" = 400 ] && grep -q '"errorType":"bad_data"' "$IM_TMP/bad.json" || { cat "$IM_TMP/bad.json"; fail "bad at: $code"; }
code=$(curl -s -o "$IM_TMP/bad.json" -w '%{http_code}' "$base?window=-5m")
[ "$code" = 400 ] || fail "bad window: $code"
curl -fsS "$base?at=$DOC_END&model=no-such" | grep -q '"cause":"no-data"' || fail "unknown model"
set +e
"$IM_BINARY" doctor --url "http://127.0.0.1:$port" --at "$DOC_END" --output json >"$IM_TMP/url.json" 2>"$IM_TMP/url.err"
rc=$?
set -e
[ $rc = 1 ] || { cat "$IM_TMP/url.err"; fail "doctor --url: exit $rc"; }
doc_same "$IM_TMP/local.json" "$IM_TMP/url.json"
echo "ok: doctor over HTTP"

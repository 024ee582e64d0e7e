#!/usr/bin/env bash
# The dashboard's diagnosis strip (web/doctor.js) in headless Chromium: a
# daemon over a simulated hour with a known cause (cpu-bound: host-bound) shows
# that finding first and its link moves to the right panel over its time range;
# a daemon over a healthy fleet shows no finding above info; an endpoint error
# is shown in the strip (doctor_test.mjs).
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
command -v node >/dev/null || fail "node is required"
[ -x /usr/bin/chromium ] || fail "chromium is required (scripts/install-deps.sh installs it)"
[ -d "$IM_SOURCE_DIR/web/node_modules/playwright-core" ] || fail "web/node_modules missing (scripts/web-deps.sh)"
SHOTS=${IM_UI_SHOTS:-$PWD/ui-screenshots}
mkdir -p "$SHOTS"
doc_store bad --scenario cpu-bound
doc_store ok --scenario healthy
printf 'global: {scrape_interval: 15s}\n' >"$IM_TMP/im.yml"
pb=$(free_port); po=$(free_port)
for s in bad:$pb ok:$po; do
  bg "$IM_BINARY" run --config.file "$IM_TMP/im.yml" --storage.tsdb.path "$IM_TMP/${s%%:*}" \
    --storage.tsdb.retention.time=100y --web.listen-address "127.0.0.1:${s##*:}" \
    >"$IM_TMP/run-${s%%:*}.log" 2>&1
done
wait_http "http://127.0.0.1:$pb/-/ready" 60 || { cat "$IM_TMP/run-bad.log"; fail "run (cpu-bound) did not start"; }
wait_http "http://127.0.0.1:$po/-/ready" 60 || { cat "$IM_TMP/run-ok.log"; fail "run (healthy) did not start"; }
end=$(date -d "$DOC_END" +%s)
# what the endpoint says over the same range, for the comparison in the browser
curl -fsS "http://127.0.0.1:$pb/api/v1/llm/doctor?at=$end&window=1800s" >"$IM_TMP/api-bad.json"
rc=0
node "$IM_SOURCE_DIR/tests/ui/doctor_test.mjs" cause "http://127.0.0.1:$pb" "$SHOTS" $((end - 1800)) "$end" \
  host-bound gpu_vs_wait "$IM_TMP/api-bad.json" || rc=1
node "$IM_SOURCE_DIR/tests/ui/doctor_test.mjs" healthy "http://127.0.0.1:$po" "$SHOTS" $((end - 1800)) "$end" || rc=1
if [ $rc != 0 ]; then
  tail -20 "$IM_TMP/run-bad.log" "$IM_TMP/run-ok.log"
  fail "diagnosis strip test failed (screenshots in $SHOTS)"
fi
echo "ok: diagnosis strip in the browser"

#!/usr/bin/env bash
# Bad input gives a clear answer, never a confident diagnosis: an unknown model,
# a window with no data (info "no-data", exit 0), a backend that fails (exit 2,
# the error names the backend), bad flags (exit 2).
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
doc_store s --scenario kv-pressure
doc_run s --model no/such-model
[ "$DOC_RC" = 0 ] || fail "unknown model: exit $DOC_RC"
$PY - "$IM_TMP/s.json" <<'PYEOF' || exit 1
import json, sys
f = json.load(open(sys.argv[1]))["findings"]
assert [x["cause"] for x in f] == ["no-data"], f
assert f[0]["severity"] == "info" and "no/such-model" in f[0]["summary"], f[0]
PYEOF
# the right model narrows to it
doc_run s --model meta-llama/Llama-3.1-8B-Instruct
doc_check "$IM_TMP/s.json" kv-saturation kv_usage
grep -q 'model_name=\\"meta-llama/Llama-3.1-8B-Instruct\\"' "$IM_TMP/s.json" || fail "model matcher not in the queries"
# a window without data
doc_run s --at 2026-08-20T00:00:00Z
[ "$DOC_RC" = 0 ] || fail "empty window: exit $DOC_RC"
grep -q '"cause":"no-data","severity":"info"' "$IM_TMP/s.json" || { cat "$IM_TMP/s.json"; fail "empty window"; }
grep -q 'not enough data' "$IM_TMP/s.json" || fail "no 'not enough data'"
# a backend that fails: nothing listens there
port=$(free_port)
set +e
"$IM_BINARY" doctor --prometheus "http://127.0.0.1:$port" --output json >"$IM_TMP/down.json" 2>"$IM_TMP/down.err"
rc=$?
set -e
[ $rc = 2 ] || fail "failing backend: exit $rc"
grep -q "127.0.0.1:$port" "$IM_TMP/down.err" || { cat "$IM_TMP/down.err"; fail "error does not name the backend"; }
[ ! -s "$IM_TMP/down.json" ] || fail "findings printed for a failing backend"
for bad in "--output yaml" "--window -1m" "--at yesterday" "--bogus"; do
  set +e
  # shellcheck disable=SC2086
  "$IM_BINARY" doctor --storage.tsdb.path "$IM_TMP/s" $bad >/dev/null 2>&1
  rc=$?
  set -e
  [ $rc = 2 ] || fail "doctor $bad: exit $rc"
done
echo "ok: bad input"

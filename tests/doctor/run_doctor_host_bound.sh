#!/usr/bin/env bash
# doctor names host-bound first on the cpu-bound scenario, with waiting gpu_util gpu_mem_copy as evidence.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
doc_store s --scenario cpu-bound
doc_run s
[ "$DOC_RC" = 1 ] || fail "exit code $DOC_RC, expected 1 (findings)"
doc_check "$IM_TMP/s.json" host-bound waiting gpu_util gpu_mem_copy
# the aborts that follow the long queue rank after the cause
$PY - "$IM_TMP/s.json" <<'PYEOF' || exit 1
import json, sys
c = [f["cause"] for f in json.load(open(sys.argv[1]))["findings"]]
assert c[1:2] == ["client-timeouts"], c
PYEOF

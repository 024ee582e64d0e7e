#!/usr/bin/env bash
# doctor names deferred-admission first on the deferred scenario, with waiting_by_reason waiting gpu_util as evidence.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
doc_store s --scenario deferred
doc_run s
[ "$DOC_RC" = 1 ] || fail "exit code $DOC_RC, expected 1 (findings)"
doc_check "$IM_TMP/s.json" deferred-admission waiting_by_reason waiting gpu_util

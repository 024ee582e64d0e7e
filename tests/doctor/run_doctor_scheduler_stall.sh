#!/usr/bin/env bash
# doctor names scheduler-stall first on the scheduler-stall scenario, with waiting running generation_tokens kv_usage as evidence.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
doc_store s --scenario scheduler-stall 
doc_run s 
[ "$DOC_RC" = 1 ] || fail "exit code $DOC_RC, expected 1 (findings)"
doc_check "$IM_TMP/s.json" scheduler-stall waiting running generation_tokens kv_usage

#!/usr/bin/env bash
# doctor names engine-errors first on the errors scenario, with requests_failed requests_finished as evidence.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
doc_store s --scenario errors
doc_run s
[ "$DOC_RC" = 1 ] || fail "exit code $DOC_RC, expected 1 (findings)"
doc_check "$IM_TMP/s.json" engine-errors requests_failed requests_finished

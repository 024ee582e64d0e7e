#!/usr/bin/env bash
# doctor names target-down first on the target-down scenario, with up as evidence.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
doc_store s --scenario target-down --pods 4
doc_run s --at 2026-08-25T11:33:00Z --window 7m
[ "$DOC_RC" = 1 ] || fail "exit code $DOC_RC, expected 1 (findings)"
doc_check "$IM_TMP/s.json" target-down up

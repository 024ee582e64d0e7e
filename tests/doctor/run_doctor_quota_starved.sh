#!/usr/bin/env bash
# doctor names quota-starved first on the quota-starved scenario, with quota_pending quota_evicted as evidence.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
doc_store s --scenario quota-starved 
doc_run s 
[ "$DOC_RC" = 1 ] || fail "exit code $DOC_RC, expected 1 (findings)"
doc_check "$IM_TMP/s.json" quota-starved quota_pending quota_evicted

#!/usr/bin/env bash
# doctor names load-imbalance first on the slow-replica scenario, with ttft itl as evidence.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
doc_store s --scenario slow-replica --pods 4
doc_run s 
[ "$DOC_RC" = 1 ] || fail "exit code $DOC_RC, expected 1 (findings)"
doc_check "$IM_TMP/s.json" load-imbalance ttft itl

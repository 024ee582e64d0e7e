#!/usr/bin/env bash
# doctor names overprovisioned first on the overprovisioned scenario, with gpu_util running waiting as evidence.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
doc_store s --scenario overprovisioned
doc_run s
[ "$DOC_RC" = 1 ] || fail "exit code $DOC_RC, expected 1 (findings)"
doc_check "$IM_TMP/s.json" overprovisioned gpu_util running waiting

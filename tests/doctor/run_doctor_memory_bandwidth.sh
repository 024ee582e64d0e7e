#!/usr/bin/env bash
# doctor names memory-bandwidth-bound first on the memory-bound scenario, with gpu_mem_copy gpu_util running as evidence.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
doc_store s --scenario memory-bound
doc_run s
[ "$DOC_RC" = 1 ] || fail "exit code $DOC_RC, expected 1 (findings)"
doc_check "$IM_TMP/s.json" memory-bandwidth-bound gpu_mem_copy gpu_util running

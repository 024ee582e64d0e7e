#!/usr/bin/env bash
# doctor names compute-bound-prefill first on the prefill-heavy scenario, with prompt_tokens waiting kv_usage gpu_util as evidence.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
doc_store s --scenario prefill-heavy 
doc_run s 
[ "$DOC_RC" = 1 ] || fail "exit code $DOC_RC, expected 1 (findings)"
doc_check "$IM_TMP/s.json" compute-bound-prefill prompt_tokens waiting kv_usage gpu_util

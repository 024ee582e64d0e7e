#!/usr/bin/env bash
# doctor names gpu-throttle first on the gpu-throttle scenario, with gpu_thermal_violation gpu_sm_clock as evidence.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
doc_store s --scenario gpu-throttle --pods 4 --dcgm-violations
doc_run s 
[ "$DOC_RC" = 1 ] || fail "exit code $DOC_RC, expected 1 (findings)"
doc_check "$IM_TMP/s.json" gpu-throttle gpu_thermal_violation gpu_sm_clock

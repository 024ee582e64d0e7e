#!/usr/bin/env bash
# doctor names traffic-surge first on the traffic-spike scenario, with running waiting arrivals ttft as evidence.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
doc_store s --scenario traffic-spike
doc_run s
[ "$DOC_RC" = 1 ] || fail "exit code $DOC_RC, expected 1 (findings)"
doc_check "$IM_TMP/s.json" traffic-surge running waiting arrivals ttft

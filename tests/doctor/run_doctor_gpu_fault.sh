#!/usr/bin/env bash
# doctor names gpu-fault first on the xid-errors scenario, with gpu_xid gpu_row_remap_failure as evidence.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
source "$IM_SOURCE_DIR/tests/doctor/lib.sh"
doc_store s --scenario xid-errors --pods 4
doc_run s --at 2026-08-25T11:33:00Z --window 7m
[ "$DOC_RC" = 1 ] || fail "exit code $DOC_RC, expected 1 (findings)"
doc_check "$IM_TMP/s.json" gpu-fault gpu_xid gpu_row_remap_failure
# the default window (30 m to the end) starts after the XID was raised: the
# gauge still holds the code, so the fault is reported as in force
doc_run s
doc_check "$IM_TMP/s.json" gpu-fault gpu_xid
grep -q 'from before the window' "$IM_TMP/s.json" || fail "an XID raised before the window is not reported as in force"
echo "ok: gpu-fault"

# lib.sh — for tests/slo scripts that start `infermon run`: stop the daemon
# and fail when its log holds a sanitizer report (ASan, UBSan, LeakSanitizer:
# the ASan build writes them to stderr, leaks only at exit).
source "$IM_SOURCE_DIR/tests/lib/common.sh"

# check_sanitizer_log LOG...: fails when a log holds a sanitizer report.
check_sanitizer_log() {
  local f
  for f in "$@"; do
    if grep -En 'ERROR: AddressSanitizer|runtime error:|LeakSanitizer' "$f" >"$IM_TMP/sanitizer.txt"; then
      fail "sanitizer report in $(basename "$f"): $(head -20 "$IM_TMP/sanitizer.txt")"
    fi
  done
}

# stop_daemon PID LOG...: SIGTERM to PID, waits for it to exit (a leak report
# is written then), then check_sanitizer_log LOG...
stop_daemon() {
  local pid=$1
  shift
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  check_sanitizer_log "$@"
}

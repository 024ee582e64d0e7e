# common.sh — helpers for script tests (source it). Servers are started on
# 127.0.0.1 on free ports and killed on exit.
set -euo pipefail
: "${IM_BINARY:?IM_BINARY must point at the infermon binary}"
: "${IM_SOURCE_DIR:?IM_SOURCE_DIR must point at the repository}"
PY=/usr/bin/python3
IM_TMP=$(mktemp -d)
IM_PIDS=()
im_cleanup() {
  for p in "${IM_PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  for p in "${IM_PIDS[@]:-}"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
  rm -rf "$IM_TMP"
}
trap im_cleanup EXIT

# free_port: prints a TCP port nobody listens on right now.
free_port() {
  $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_http URL [SECONDS]: waits until URL answers 2xx.
wait_http() {
  local url=$1 secs=${2:-30} i=0
  while [ $i -lt $((secs * 10)) ]; do
    if curl -fsS -o /dev/null "$url" 2>/dev/null; then return 0; fi
    sleep 0.1; i=$((i + 1))
  done
  echo "timeout waiting for $url" >&2
  return 1
}

# bg CMD...: starts CMD in the background, remembers it for cleanup.
bg() {
  "$@" &
  IM_PIDS+=($!)
}

fail() { echo "FAIL: $*" >&2; exit 1; }

# start_receiver PORT: infermon with the remote-write receiver on 127.0.0.1:PORT,
# config $IM_TMP/im.yml, store $IM_TMP/idata (WAL fsync off), log $IM_TMP/im.log;
# waits until ready and sets IPID.
start_receiver() {
  "$IM_BINARY" run --config.file="$IM_TMP/im.yml" --storage.tsdb.path="$IM_TMP/idata" \
    --web.listen-address="127.0.0.1:$1" --web.enable-remote-write-receiver --promql.compat=2 \
    --storage.tsdb.wal-fsync=never >>"$IM_TMP/im.log" 2>&1 &
  IPID=$!
  IM_PIDS+=($IPID)
  wait_http "http://127.0.0.1:$1/-/ready" 30
}

#!/usr/bin/env bash
# `infermon run` and `infermon demo` raise the open-files soft limit to the hard
# limit at start (a soft limit of 256 or 1024 is soon used up by WAL segments,
# blocks and scrape connections), log both limits (fd_limits, as Prometheus),
# and the process runs with the raised limit (/proc/<pid>/limits).
source "$IM_SOURCE_DIR/tests/lib/common.sh"
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] || [ "$hard" -gt 256 ] || { echo "SKIP: hard open-files limit $hard"; exit 0; }
want_soft=$hard
[ "$hard" = unlimited ] && want_soft=unlimited

check() { # name pid log
  local name=$1 pid=$2 log=$3
  grep -q "msg=\"File descriptor limits\" fd_limits=\"(soft=$want_soft, hard=$hard)\" raised_from=256" "$log" ||
    { cat "$log"; fail "$name: no fd_limits line with soft=$want_soft hard=$hard raised_from=256"; }
  local lim; lim=$(awk '/^Max open files/ {print $4, $5}' "/proc/$pid/limits")
  [ "$lim" = "$want_soft $hard" ] || fail "$name: /proc/$pid/limits shows \"$lim\", want \"$want_soft $hard\""
  echo "$name: open files soft/hard $lim (started with soft 256)"
}

cat >"$IM_TMP/cfg.yml" <<YML
scrape_configs: []
YML
p=$(free_port)
prlimit --nofile=256:"$hard" "$IM_BINARY" run --config.file="$IM_TMP/cfg.yml" --storage.tsdb.path="$IM_TMP/data" \
  --web.listen-address="127.0.0.1:$p" >"$IM_TMP/run.log" 2>&1 &
pid=$!
IM_PIDS+=("$pid")
wait_http "http://127.0.0.1:$p/-/ready" 30
check run "$pid" "$IM_TMP/run.log"
kill "$pid"
wait "$pid" || fail "run did not exit cleanly"

p=$(free_port)
prlimit --nofile=256:"$hard" "$IM_BINARY" demo --pods 1 --backfill 0 \
  --web.listen-address="127.0.0.1:$p" >"$IM_TMP/demo.log" 2>&1 &
pid=$!
IM_PIDS+=("$pid")
wait_http "http://127.0.0.1:$p/-/ready" 30
check demo "$pid" "$IM_TMP/demo.log"
echo PASS

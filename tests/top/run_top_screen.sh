#!/usr/bin/env bash
# `infermon top` on a terminal: driven in tmux (send-keys, capture-pane) against
# the simulator (6 pods, two models; pod 2 admits one request a second under
# four times the traffic) plus a dead port: the rows per model and replica, pod 2
# marked as the replica far from its peers (its queue), the down endpoint, `s` cycles the sort (groups and
# replicas ordered by the key shown), `/` filters by model, `p` pauses (the
# clock stops) and resumes, `q` quits with status 0.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
command -v tmux >/dev/null || fail "tmux is required"
sport=$(free_port); dead=$(free_port)
bg "$IM_BINARY" simulate --listen "127.0.0.1:$sport" --pods 6 --models model-a,model-b --speed 5 \
  --scenario "$IM_SOURCE_DIR/tests/top/slow-pod2.yml" >"$IM_TMP/sim.log" 2>&1
wait_http "http://127.0.0.1:$sport/targets" 30 || fail "simulator did not start"
S=127.0.0.1:$sport
T=(tmux -S "$IM_TMP/tmux.sock" -f /dev/null)
"${T[@]}" new-session -d -s top -x 200 -y 40 \
  "$IM_BINARY top --interval 1s $(for p in 0 1 2 3 4 5; do printf '%s ' "$S/pods/$p/metrics"; done)$S/nodes/0/metrics 127.0.0.1:$dead; echo TOP-EXITED rc=\$?; sleep 60"
IM_PIDS+=("$("${T[@]}" display-message -p '#{pid}')")
screen() { "${T[@]}" capture-pane -p -t top >"$IM_TMP/screen.txt"; }
wait_screen() { # ERE [SECONDS]
  for i in $(seq $((${2:-15} * 10))); do
    screen
    grep -Eq -- "$1" "$IM_TMP/screen.txt" && return 0
    sleep 0.1
  done
  cat "$IM_TMP/screen.txt"; fail "the screen never showed /$1/"
}
wait_screen 'MODEL / REPLICA'
wait_screen '^model-a \[vllm\] \(3\) '
wait_screen '^model-b \[vllm\] \(3\) '
for p in 0 1 2 3 4 5; do wait_screen "pods/$p#0 "; done
# the slow pod is marked, with its reason, and no healthy one: a p95 from the first second of
# data can put a healthy replica far from its peers for a refresh or two, so this waits for
# the screen where only pods/2 is marked (30 s)
for i in $(seq 300); do
  screen
  grep -Eq '^ ! 127\.0\.0\.1:[0-9]+/pods/2#0 ' "$IM_TMP/screen.txt" &&
    grep -Eq "^   ! 127\.0\.0\.1:$sport/pods/2: (TTFT p95|waiting|KV use) [0-9.e+]+ vs peers' median" "$IM_TMP/screen.txt" &&
    ! grep -Eq '^ ! .*pods/[013-5]#' "$IM_TMP/screen.txt" && break
  [ "$i" -lt 300 ] || { cat "$IM_TMP/screen.txt"; fail "pods/2 never marked alone (a healthy replica marked, or the slow one not)"; }
  sleep 0.1
done
echo "ok   the replica far from its peers is marked, with why"
wait_screen "^DOWN +127\.0\.0\.1:$dead: .*(onnect|refused)"
wait_screen 'GPU \(dcgm-exporter\)'
# TTFT percentiles appear once two fetches are in the short window
wait_screen '^model-a \[vllm\] \(3\) +[0-9]+ +[0-9]+ +[0-9]+% .* [0-9.]+(us|ms|s|m)/'
echo "ok   rows per model and replica, the down endpoint, GPUs"

# column N (1-based, after the name) of the group rows / replica rows in one frame
ordered() { # COLUMN ROWS(groups|replicas) -> fails unless descending
  $PY - "$IM_TMP/screen.txt" "$1" "$2" <<'PY'
import re, sys
col, kind = int(sys.argv[2]), sys.argv[3]
rows = []
for ln in open(sys.argv[1]):
    m = re.match(r'^(\S.*?) \((\d+)\) (.*)$' if kind == "groups" else r'^ [ !] (\S+#\S*) (.*)$', ln)
    if not m: continue
    f = m.group(m.lastindex).split()
    v = f[col - 1].rstrip("%")
    rows.append(-1.0 if v == "-" else float(v.replace("k", "e3").replace("M", "e6")))
if len(rows) < 2 or any(a < b for a, b in zip(rows, rows[1:])):
    print("not descending:", kind, rows); sys.exit(1)
print("ok   %s ordered by column %d: %s" % (kind, col, rows))
PY
}
"${T[@]}" send-keys -t top s
wait_screen 'sort: waiting'
screen; ordered 2 groups || fail "groups not sorted by waiting"
"${T[@]}" send-keys -t top s
wait_screen 'sort: kv'
screen; ordered 3 groups || fail "groups not sorted by KV"
grep -A3 '^model-b \[vllm\] (3)' "$IM_TMP/screen.txt" >"$IM_TMP/a.txt"
cp "$IM_TMP/a.txt" "$IM_TMP/screen.txt"; ordered 3 replicas || fail "replicas not sorted by KV"

# filter by model
"${T[@]}" send-keys -t top /
wait_screen 'filter by model: _'
"${T[@]}" send-keys -t top model-b Enter
wait_screen 'model filter: model-b'
screen
grep -q '^model-b \[vllm\] (3)' "$IM_TMP/screen.txt" || fail "model-b missing after the filter"
! grep -q "^model-a \[" "$IM_TMP/screen.txt" || { cat "$IM_TMP/screen.txt"; fail "model-a still shown with the filter model-b"; }
echo "ok   / filters by model"
"${T[@]}" send-keys -t top / Enter
wait_screen '^model-a \[vllm\] \(3\) '

# pause: the header's clock stops; resume: it moves again
"${T[@]}" send-keys -t top p
wait_screen '\[PAUSED\]'
clock=$(grep -Eo '[0-9]{2}:[0-9]{2}:[0-9]{2} UTC' "$IM_TMP/screen.txt")
"${T[@]}" send-keys -t top s # a key redraws: still the paused frame's data
wait_screen 'sort: ttft'
grep -q "$clock" "$IM_TMP/screen.txt" || fail "the clock moved while paused"
"${T[@]}" send-keys -t top p
for i in $(seq 50); do screen; grep -q "$clock" "$IM_TMP/screen.txt" || break; sleep 0.1; done
! grep -q "$clock" "$IM_TMP/screen.txt" || fail "the clock did not move after resuming"
! grep -q 'PAUSED' "$IM_TMP/screen.txt" || fail "still paused"
echo "ok   p pauses and resumes"

"${T[@]}" send-keys -t top q
wait_screen 'TOP-EXITED rc=0' 10
echo "ok   q quits"
"${T[@]}" kill-server 2>/dev/null || true
echo "top screen: ok"

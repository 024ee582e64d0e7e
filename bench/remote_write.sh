#!/usr/bin/env bash
# Remote-write forwarding benchmark (docs/performance.md, "Remote write").
#
# One simulated fleet (`infermon simulate --pods P`, file_sd from its /targets)
# is scraped at the same time by three agents, each forwarding everything into
# one VictoriaMetrics 1.79 (/api/v1/write; each adds external label agent=<name>
# so their series stay apart):
#   infermon run --agent, Prometheus 2.42 --enable-feature=agent, vmagent.
# Over the same window, for each:
#   - CPU seconds per million samples forwarded (utime+stime from /proc/<pid>/stat
#     / samples sent: prometheus_remote_storage_samples_total for infermon and
#     Prometheus, vmagent_remotewrite_... rows for vmagent);
#   - RSS per active series: VmRSS at the end / the fleet's series (exposed
#     samples + 5 per target);
#   - bytes on the wire per sample (prometheus_remote_storage_bytes_total,
#     vmagent_remotewrite_bytes_sent_total / samples);
# then VictoriaMetrics is stopped for OUTAGE seconds and restarted, and each
# agent's catch-up time is measured from the restart (the first answer of
# /health), two ways:
#   - sender: until the newest sample it has had acknowledged is within one
#     scrape interval of now (infermon, Prometheus:
#     prometheus_remote_storage_queue_highest_sent_timestamp_seconds); vmagent
#     exposes no such timestamp: until its queue holds nothing
#     (vmagent_remotewrite_pending_data_bytes and _pending_inmemory_blocks 0);
#   - receiver, the same rule for all three: until VictoriaMetrics holds the
#     agent's `up` samples (one per target and scrape) up to within one interval
#     plus VictoriaMetrics' own 1 s ingestion flush of now
#     (-search.latencyOffset=0s, queried with nocache=1).
# Ratios infermon/peer are printed at the end.
#
# usage: bench/remote_write.sh [PODS [SECONDS [OUTAGE]]]   default 60 pods, 60 s, 120 s
# env: IM_BUILD_DIR (default build/release)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${IM_SOURCE_DIR:-$HERE/..}
B=${IM_BUILD_DIR:-$SRC/build/release}
BIN=${IM_BINARY:-$B/infermon}
PY=/usr/bin/python3
PODS=${1:-60}; D=${2:-60}; OUTAGE=${3:-120}; IV=1
TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do
    if [ -n "$p" ]; then kill "$p" 2>/dev/null || true; fi
  done
  wait 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT
port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f\n", ($14 + $15) / hz}' "/proc/$1/stat"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
counter() { # URL metric [label-filter]: sum of the metric's lines in /metrics
  curl -fsS "$1/metrics" | awk -v m="$2" -v f="${3:-}" '
    index($0, m) == 1 && (substr($0, length(m) + 1, 1) == " " || substr($0, length(m) + 1, 1) == "{") \
      && (f == "" || index($0, f) > 0) { s += $NF } END { printf "%.0f\n", s }'
}
wait_up() { for _ in $(seq 600); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }

"$BIN" simulate --pods "$PODS" --listen 127.0.0.1:0 >"$TMP/sim.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 200); do grep -q 'listening on' "$TMP/sim.out" && break; sleep 0.1; done
sport=$(grep -o 'listening on [0-9.]*:[0-9]*' "$TMP/sim.out" | sed 's/.*://')
curl -fsS "http://127.0.0.1:$sport/targets" >"$TMP/targets.json"
# Active series: the fleet's exposed samples plus the 5 a scrape adds per target
# (up, scrape_*), the same for all three agents.
NS=$($PY - "$TMP/targets.json" <<'PY'
import json, sys, urllib.request
groups = json.load(open(sys.argv[1]))
n = 5 * len(groups)
for g in groups:
    u = "http://%s%s" % (g["targets"][0], g["labels"]["__metrics_path__"])
    n += sum(1 for l in urllib.request.urlopen(u).read().decode().splitlines() if l and l[0] != "#")
print(n)
PY
)
vport=$(port); iport=$(port); pport=$(port); aport=$(port)
V="http://127.0.0.1:$vport"
start_vm() {
  victoria-metrics -httpListenAddr="127.0.0.1:$vport" -storageDataPath="$TMP/vm" \
    -retentionPeriod=100y -maxLabelsPerTimeseries=100 -search.latencyOffset=0s \
    >>"$TMP/vm.log" 2>&1 &
  VMPID=$!
  PIDS+=($VMPID)
  wait_up "$V/health"
}
start_vm
cfg() { # agent-name
  cat <<YML
global: {scrape_interval: ${IV}s, scrape_timeout: ${IV}s, external_labels: {agent: $1}}
scrape_configs:
  - job_name: fleet
    file_sd_configs: [{files: ['$TMP/targets.json']}]
remote_write:
  - url: $V/api/v1/write
YML
}
cfg infermon >"$TMP/im.yml"
cfg prometheus >"$TMP/prom.yml"
cfg vmagent | sed '/^remote_write:/,$d' >"$TMP/vma.yml"
"$BIN" run --agent --config.file="$TMP/im.yml" --storage.tsdb.path="$TMP/idata" \
  --web.listen-address="127.0.0.1:$iport" >"$TMP/im.log" 2>&1 &
IPID=$!; PIDS+=($IPID)
prometheus --enable-feature=agent --config.file="$TMP/prom.yml" --storage.agent.path="$TMP/pdata" \
  --web.listen-address="127.0.0.1:$pport" >"$TMP/prom.log" 2>&1 &
PPID_=$!; PIDS+=($PPID_)
vmagent -promscrape.config="$TMP/vma.yml" -remoteWrite.url="$V/api/v1/write" \
  -remoteWrite.label=agent=vmagent -remoteWrite.tmpDataPath="$TMP/vmadata" \
  -httpListenAddr="127.0.0.1:$aport" -remoteWrite.maxDiskUsagePerURL=0 >"$TMP/vma.log" 2>&1 &
APID=$!; PIDS+=($APID)
wait_up "http://127.0.0.1:$iport/-/ready"; wait_up "http://127.0.0.1:$pport/-/ready"
wait_up "http://127.0.0.1:$aport/metrics"
sleep 10 # warm-up: every target scraped a few times
sent() { # name
  case $1 in
    infermon) counter "http://127.0.0.1:$iport" prometheus_remote_storage_samples_total ;;
    prometheus) counter "http://127.0.0.1:$pport" prometheus_remote_storage_samples_total ;;
    vmagent) counter "http://127.0.0.1:$aport" vmagent_remotewrite_block_size_rows_sum ;;
  esac
}
bytes() {
  case $1 in
    infermon) counter "http://127.0.0.1:$iport" prometheus_remote_storage_bytes_total ;;
    prometheus) counter "http://127.0.0.1:$pport" prometheus_remote_storage_bytes_total ;;
    vmagent) counter "http://127.0.0.1:$aport" vmagent_remotewrite_bytes_sent_total ;;
  esac
}
pid_of() { case $1 in infermon) echo $IPID ;; prometheus) echo $PPID_ ;; vmagent) echo $APID ;; esac; }
NAMES="infermon prometheus vmagent"
declare -A c0 s0 b0
for n in $NAMES; do c0[$n]=$(cpu_s "$(pid_of $n)"); s0[$n]=$(sent $n); b0[$n]=$(bytes $n); done
sleep "$D"
echo "== bench/remote_write.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "fleet: infermon simulate --pods $PODS ($(
  $PY -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$TMP/targets.json") targets), ${IV}s interval, ${D}s window, outage ${OUTAGE}s"
: >"$TMP/res"
for n in $NAMES; do
  c=$(cpu_s "$(pid_of $n)"); s=$(sent $n); b=$(bytes $n); r=$(rss_kb "$(pid_of $n)")
  series=$NS
  $PY - "$n" "${c0[$n]}" "$c" "${s0[$n]}" "$s" "${b0[$n]}" "$b" "$r" "$series" <<'PY' | tee -a "$TMP/res"
import sys
n, c0, c1, s0, s1, b0, b1, rss, series = sys.argv[1], *map(float, sys.argv[2:])
ds = max(s1 - s0, 1)
print("%-10s cpu %.2f s/M samples  rss %.0f B/series  %.2f B/sample on the wire  (%d samples, %d series)"
      % (n, (c1 - c0) / ds * 1e6, rss * 1024 / max(series, 1), (b1 - b0) / ds, ds, series))
PY
done
# Outage: the store goes away; how long until each agent has caught up?
kill "$VMPID"; wait "$VMPID" 2>/dev/null || true
sleep "$OUTAGE"
start_vm
t0=$(date +%s.%N)
# Caught up at the sender (see the header).
caught() {
  local hs
  if [ "$1" = vmagent ]; then
    [ "$(counter "http://127.0.0.1:$aport" vmagent_remotewrite_pending_data_bytes)" = 0 ] &&
      [ "$(counter "http://127.0.0.1:$aport" vmagent_remotewrite_pending_inmemory_blocks)" = 0 ]
    return
  fi
  local u="http://127.0.0.1:$iport"
  [ "$1" = prometheus ] && u="http://127.0.0.1:$pport"
  hs=$(curl -fsS "$u/metrics" | awk '/^prometheus_remote_storage_queue_highest_sent_timestamp_seconds/ {
    if ($NF > m) m = $NF } END { printf "%.3f\n", m }')
  $PY -c "import sys, time; sys.exit(0 if $hs >= time.time() - $IV else 1)"
}
# Caught up at the receiver: the agent's newest `up` sample in VictoriaMetrics.
caught_rx() {
  local t
  t=$(curl -fsS "$V/api/v1/query" --data-urlencode "query=max(timestamp(up{agent=\"$1\"}))" \
    --data-urlencode nocache=1 2>/dev/null | $PY -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else 0)' 2>/dev/null || echo 0)
  $PY -c "import sys, time; sys.exit(0 if $t >= time.time() - $IV - 1 else 1)"
}
declare -A done_at=() rx_at=()
while [ ${#done_at[@]} -lt 3 ] || [ ${#rx_at[@]} -lt 3 ]; do
  for n in $NAMES; do
    if [ -z "${done_at[$n]:-}" ] && caught $n; then
      done_at[$n]=$($PY -c "import time; print('%.1f' % (time.time() - $t0))")
    fi
    if [ -z "${rx_at[$n]:-}" ] && caught_rx $n; then
      rx_at[$n]=$($PY -c "import time; print('%.1f' % (time.time() - $t0))")
    fi
  done
  el=$($PY -c "import time; print(int(time.time() - $t0))")
  [ "$el" -gt 900 ] && break
  sleep 0.2
done
for n in $NAMES; do
  printf '%-10s catch-up after the outage: sender %s s, receiver %s s\n' "$n" \
    "${done_at[$n]:->900}" "${rx_at[$n]:->900}" | tee -a "$TMP/res"
done
$PY - "$TMP/res" <<'PY'
import re, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\S+)\s+cpu ([\d.]+) s/M samples\s+rss ([\d.]+) B/series\s+([\d.]+) B/sample", line)
    if m: rows[m.group(1)] = tuple(map(float, m.groups()[1:]))
for peer in ("prometheus", "vmagent"):
    if "infermon" in rows and peer in rows:
        a, b = rows["infermon"], rows[peer]
        print("infermon/%s: cpu %.2f  rss/series %.2f  bytes/sample %.2f" % (
            peer, a[0] / b[0] if b[0] else 0, a[1] / b[1] if b[1] else 0, a[2] / b[2] if b[2] else 0))
PY

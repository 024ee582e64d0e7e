#!/usr/bin/env bash
# Kubernetes discovery benchmark (issue 12): the fixture API server
# (tests/integration/k8s_api.py) serves PODS pods (list) and updates EVENTS of
# them a second (a label changes: a MODIFIED watch event each); infermon and the
# reference Prometheus 2.42 with Kubernetes SD (../shared/tools/
# prometheus-2.42.0-k8s.xz) discover them in the same run with the same
# kubernetes_sd_configs (role pod; scrape_interval 1h so almost nothing is
# scraped). For each:
#   - time until all PODS targets are active in /api/v1/targets;
#   - CPU seconds (utime+stime from /proc/<pid>/stat) over the SECONDS window of
#     churn, per 1,000 discovered targets;
#   - RSS per discovered target: (VmRSS after the window - VmRSS of the process
#     started with no target) / PODS.
# Then the ratios infermon/Prometheus.
#
# usage: bench/k8s_sd.sh [PODS [SECONDS [EVENTS]]]     default 5000 pods, 60 s, 10 events/s
# env: IM_BUILD_DIR (default build/release)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${IM_SOURCE_DIR:-$HERE/..}
B=${IM_BUILD_DIR:-$SRC/build/release}
BIN=${IM_BINARY:-$B/infermon}
PY=/usr/bin/python3
PODS=${1:-5000}; D=${2:-60}; EV=${3:-10}
TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
XZ=""
for c in "$SRC/../shared/tools" "$SRC/../../shared/tools"; do
  [ -f "$c/prometheus-2.42.0-k8s.xz" ] && XZ="$c/prometheus-2.42.0-k8s.xz" && break
done
[ -n "$XZ" ] || { echo "prometheus-2.42.0-k8s.xz not found next to the repository" >&2; exit 1; }
xz -dc "$XZ" >"$TMP/prometheus-k8s" && chmod +x "$TMP/prometheus-k8s"
aport=$(port); iport=$(port); pport=$(port)
$PY "$SRC/tests/integration/k8s_api.py" --port "$aport" --pods "$PODS" >"$TMP/api.log" 2>&1 &
PIDS+=($!)
for i in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$aport/version" && break; sleep 0.1; done
cat >"$TMP/sd.yml" <<EOF
global: {scrape_interval: 1h, scrape_timeout: 1s}
scrape_configs:
  - job_name: k8s-pods
    kubernetes_sd_configs: [{role: pod, api_server: "http://127.0.0.1:$aport"}]
    relabel_configs:
      - {source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_scrape], action: keep, regex: "true"}
      - {action: labelmap, regex: __meta_kubernetes_pod_label_(.+)}
EOF
echo 'scrape_configs: []' >"$TMP/empty.yml"
rss() { awk '/^VmRSS/ {print $2 * 1024}' "/proc/$1/status"; }
cpu() { awk -v t="$(getconf CLK_TCK)" '{print ($14 + $15) / t}' "/proc/$1/stat"; }
active() { curl -sf "$1/api/v1/targets?state=active" | $PY -c 'import json,sys; print(sum(t["scrapePool"]=="k8s-pods" for t in json.load(sys.stdin)["data"]["activeTargets"]))' 2>/dev/null || echo 0; }
start() { # start NAME: the process with the empty config, its idle RSS, then the SD config
  case $1 in
  infermon)
    "$BIN" run --config.file="$TMP/sd.yml" --storage.tsdb.path="$TMP/idata" \
      --web.listen-address="127.0.0.1:$iport" --storage.tsdb.wal-fsync=never >"$TMP/im.log" 2>&1 &
    ;;
  prometheus)
    "$TMP/prometheus-k8s" --config.file="$TMP/sd.yml" --storage.tsdb.path="$TMP/pdata" \
      --web.listen-address="127.0.0.1:$pport" >"$TMP/prom.log" 2>&1 &
    ;;
  esac
  PIDS+=($!)
  eval "PID_$1=$!"
}
# idle RSS: each process with no scrape config
"$BIN" run --config.file="$TMP/empty.yml" --storage.tsdb.path="$TMP/i0" \
  --web.listen-address="127.0.0.1:$iport" --storage.tsdb.wal-fsync=never >/dev/null 2>&1 &
p=$!; for i in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$iport/-/ready" && break; sleep 0.1; done
sleep 2; IDLE_infermon=$(rss $p); kill $p; wait $p 2>/dev/null || true
"$TMP/prometheus-k8s" --config.file="$TMP/empty.yml" --storage.tsdb.path="$TMP/p0" \
  --web.listen-address="127.0.0.1:$pport" >/dev/null 2>&1 &
p=$!; for i in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$pport/-/ready" && break; sleep 0.1; done
sleep 2; IDLE_prometheus=$(rss $p); kill $p; wait $p 2>/dev/null || true
T0=$(date +%s.%N)
start infermon
start prometheus
declare -A DISC
for i in $(seq 1200); do
  for s in infermon prometheus; do
    [ -n "${DISC[$s]:-}" ] && continue
    u="http://127.0.0.1:$iport"; [ $s = prometheus ] && u="http://127.0.0.1:$pport"
    if [ "$(active "$u")" -ge "$PODS" ]; then DISC[$s]=$($PY -c "import time; print('%.1f' % (time.time() - $T0))"); fi
  done
  [ -n "${DISC[infermon]:-}" ] && [ -n "${DISC[prometheus]:-}" ] && break
  sleep 0.5
done
[ -n "${DISC[infermon]:-}" ] && [ -n "${DISC[prometheus]:-}" ] || { echo "not all $PODS targets discovered" >&2; exit 1; }
# churn: EV label changes a second for D seconds, from now on
curl -sf -XPOST "http://127.0.0.1:$aport/_control/churn?rate=$EV" >/dev/null
c0i=$(cpu $PID_infermon); c0p=$(cpu $PID_prometheus)
sleep "$D"
c1i=$(cpu $PID_infermon); c1p=$(cpu $PID_prometheus)
ri=$(rss $PID_infermon); rp=$(rss $PID_prometheus)
$PY - "$PODS" "$D" "$EV" "${DISC[infermon]}" "${DISC[prometheus]}" "$c0i" "$c1i" "$c0p" "$c1p" \
  "$ri" "$rp" "$IDLE_infermon" "$IDLE_prometheus" <<'PY'
import sys
pods, d, ev = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
ti, tp = float(sys.argv[4]), float(sys.argv[5])
ci = float(sys.argv[7]) - float(sys.argv[6]); cp = float(sys.argv[9]) - float(sys.argv[8])
ri, rp, ii, ip = (int(x) for x in sys.argv[10:14])
print("Kubernetes SD: %d pods listed, %d watch events/s for %.0f s (same run, same API server)" % (pods, ev, d))
print("%-12s %14s %22s %20s %14s" % ("", "discovered in", "CPU s / 1k targets", "RSS/target (bytes)", "RSS (MiB)"))
for n, t, c, r, i in (("infermon", ti, ci, ri, ii), ("prometheus", tp, cp, rp, ip)):
    print("%-12s %13.1fs %22.3f %20.0f %14.1f" % (n, t, c / pods * 1000, (r - i) / pods, r / 2**20))
print("ratios infermon/prometheus: discovery time %.2f, CPU %.2f, RSS per target %.2f" % (
    ti / tp if tp else 0, ci / cp if cp else 0, ((ri - ii) / pods) / ((rp - ip) / pods) if rp != ip else 0))
PY

#!/usr/bin/env bash
# tsdb.sh — storage benchmark: the same realistic LLM-serving history (vLLM +
# dcgm-exporter series from catalog/, PODS pods x HOURS hours at 15 s, built by
# bench_tsdb) loaded into infermon, Prometheus 2.42 (promtool tsdb
# create-blocks-from openmetrics) and VictoriaMetrics 1.79 (import API, force
# merge), in one run. Prints per store: bytes per sample on disk, ingest
# samples per CPU second, memory per active series, time to read every sample
# back (each store's own dump/export, written to /dev/null); then the ratios.
#
#   PODS=20 HOURS=2 bash bench/tsdb.sh        (defaults; IM_BUILD_DIR = release build)
#
# Memory per active series: infermon = RSS growth of the loader after 25 scrapes
# (and with the whole history in the head), divided by series; Prometheus = RSS growth of a
# server scraping a target that exposes every series (25 scrapes at 1 s) over
# the same server with an empty target; VictoriaMetrics = RSS growth over import.
set -euo pipefail
src=${IM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
bld=${IM_BUILD_DIR:-$src/build/release}
PODS=${PODS:-20}
HOURS=${HOURS:-2}
PY=/usr/bin/python3
for t in promtool prometheus victoria-metrics curl; do
  command -v "$t" > /dev/null || { echo "tsdb.sh: $t is not installed (scripts/install-deps.sh)"; exit 2; }
done
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
free_port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }
# cpu and max RSS of a command: "user+sys maxrss_kb"
timed() { local log=$1; shift; /usr/bin/time -f '%U %S %M' -o "$work/time.out" "$@" > "$log" 2>&1; awk '{print $1 + $2, $3}' "$work/time.out"; }
now() { date +%s.%N; }

echo "tsdb bench: $PODS pods x $HOURS h at 15 s (work dir $work)"
"$bld/bench_tsdb" gen "$src/catalog" "$PODS" "$HOURS" "$work/data.om" "$work/data.txt" > "$work/gen.out"
series=$(sed -n 's/.*series=\([0-9]*\).*/\1/p' "$work/gen.out")
samples=$(sed -n 's/.*samples=\([0-9]*\).*/\1/p' "$work/gen.out")
echo "  $series series, $samples samples, OpenMetrics input $(du -m "$work/data.om" | cut -f1) MiB"

# ---- infermon ----
"$bld/bench_tsdb" load "$src/catalog" "$PODS" "$HOURS" "$work/im" > "$work/im.out"
kv() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" "$2" | head -1; }
im_cpu=$(kv ingest_cpu_s "$work/im.out")
im_mem=$(kv rss_delta_per_series "$work/im.out")
im_mem25=$(kv rss_delta_per_series_25 "$work/im.out")
im_native_read=$(kv read_all_s "$work/im.out")
im_bytes=$(du -sb "$work/im" | cut -f1)
[ "$(kv exact_mismatches "$work/im.out")" = 0 ] || { echo "infermon read back inexact values"; cat "$work/im.out"; exit 1; }
read -r im_imp_cpu _ < <(timed "$work/import.log" "$bld/infermon" tsdb import "$work/data.om" "$work/im2")
im_imp_bytes=$(du -sb "$work/im2" | cut -f1)
t0=$(now)
read -r im_read_cpu _ < <(timed /dev/null "$bld/infermon" tsdb dump "$work/im")
im_read=$(echo "$(now) - $t0" | bc)

# ---- Prometheus ----
read -r pr_cpu _ < <(timed "$work/promtool.log" promtool tsdb create-blocks-from openmetrics "$work/data.om" "$work/prom")
pr_bytes=$(du -sb "$work/prom" | cut -f1)
mkdir -p "$work/prom/wal" # promtool dump wants a WAL directory
t0=$(now)
read -r pr_read_cpu _ < <(timed /dev/null promtool tsdb dump "$work/prom")
pr_read=$(echo "$(now) - $t0" | bc)
# memory per active series: a server scraping every series
mkdir -p "$work/target"
: > "$work/target/metrics"
tport=$(free_port)
$PY "$src/tests/lib/serve_dir.py" "$tport" --bind 127.0.0.1 --directory "$work/target" > /dev/null 2>&1 &
pids+=($!)
pport=$(free_port)
cat > "$work/prom.yml" <<EOF
global: {scrape_interval: 1s}
scrape_configs:
  - job_name: bench
    honor_labels: true
    static_configs: [{targets: ['127.0.0.1:$tport']}]
EOF
prometheus --config.file="$work/prom.yml" --storage.tsdb.path="$work/promsrv" \
  --web.listen-address="127.0.0.1:$pport" > "$work/prom.log" 2>&1 &
ppid=$!; pids+=($ppid)
sleep 12
pr_rss0=$(rss_kb $ppid)
# the newest value of every series, without timestamps
awk '{ k = $0; sub(/ [^ ]+ [^ ]+$/, "", k); last[k] = $(NF - 1) }
  END { for (k in last) print k, last[k] }' "$work/data.txt" > "$work/target/metrics.tmp"
mv "$work/target/metrics.tmp" "$work/target/metrics"
sleep 25
pr_rss1=$(rss_kb $ppid)
pr_head=$(curl -s "http://127.0.0.1:$pport/api/v1/query?query=count(%7B__name__%21%3D%22%22%7D)" |
  sed -n 's/.*"value":\[[^,]*,"\([0-9]*\)".*/\1/p')
pr_mem=$(echo "($pr_rss1 - $pr_rss0) * 1024 / $series" | bc)
kill $ppid; wait $ppid 2>/dev/null || true

# ---- VictoriaMetrics ----
vport=$(free_port)
victoria-metrics -storageDataPath="$work/vm" -httpListenAddr="127.0.0.1:$vport" \
  -retentionPeriod=100y -loggerLevel=ERROR > "$work/vm.log" 2>&1 &
vpid=$!; pids+=($vpid)
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$vport/health" > /dev/null && break; sleep 0.2; done
sleep 2
vm_rss0=$(rss_kb $vpid); vm_c0=$(cpu_s $vpid)
curl -sf -X POST -T "$work/data.txt" "http://127.0.0.1:$vport/api/v1/import/prometheus"
curl -sf "http://127.0.0.1:$vport/internal/force_flush" > /dev/null
vm_cpu=$(echo "$(cpu_s $vpid) - $vm_c0" | bc)
vm_rss1=$(rss_kb $vpid)
vm_mem=$(echo "($vm_rss1 - $vm_rss0) * 1024 / $series" | bc)
curl -sf "http://127.0.0.1:$vport/internal/force_merge" > /dev/null
prev=0
for _ in $(seq 60); do
  sleep 2
  cur=$(du -sb "$work/vm" | cut -f1)
  [ "$cur" = "$prev" ] && break
  prev=$cur
done
vm_bytes=$(du -sb "$work/vm" | cut -f1)
t0=$(now); vm_c0=$(cpu_s $vpid)
vm_got=$(curl -sf "http://127.0.0.1:$vport/api/v1/export" --data-urlencode 'match[]={__name__!=""}' |
  $PY -c 'import sys, json; print(sum(len(json.loads(l)["values"]) for l in sys.stdin))')
vm_read=$(echo "$(now) - $t0" | bc)
vm_read_cpu=$(echo "$(cpu_s $vpid) - $vm_c0" | bc)
kill $vpid; wait $vpid 2>/dev/null || true

# ---- report ----
f() { printf '%.3f' "$1"; }
r() { echo "scale=6; $1 / $2" | bc; }
bps() { r "$1" "$samples"; }
rate() { echo "scale=0; $samples / $1" | bc; }
cat <<EOF

                              infermon      Prometheus 2.42  VictoriaMetrics 1.79
bytes/sample on disk          $(f "$(bps "$im_bytes")")         $(f "$(bps "$pr_bytes")")            $(f "$(bps "$vm_bytes")")
ingest samples/CPU-s          $(rate "$im_imp_cpu")       $(rate "$pr_cpu")           $(rate "$vm_cpu")
memory/active series (bytes)  $(printf '%.0f' "$im_mem25")           $(printf '%.0f' "$pr_mem")             $(printf '%.0f' "$vm_mem")
read all back: CPU s          $(f "$im_read_cpu")         $(f "$pr_read_cpu")           $(f "$vm_read_cpu")
read all back: wall s         $(f "$im_read")         $(f "$pr_read")           $(f "$vm_read")
samples read back             $samples       $samples         $vm_got

ratios (infermon / peer)      vs Prometheus   vs VictoriaMetrics
bytes/sample                  $(f "$(r "$im_bytes" "$pr_bytes")")           $(f "$(r "$im_bytes" "$vm_bytes")")
ingest CPU per sample         $(f "$(r "$im_imp_cpu" "$pr_cpu")")           $(f "$(r "$im_imp_cpu" "$vm_cpu")")
memory per active series      $(f "$(r "$im_mem25" "$pr_mem")")           $(f "$(r "$im_mem25" "$vm_mem")")
read-back CPU                 $(f "$(r "$im_read_cpu" "$pr_read_cpu")")           $(f "$(r "$im_read_cpu" "$vm_read_cpu")")

notes: ingest = infermon tsdb import / promtool create-blocks-from openmetrics (both parse the
same OpenMetrics file and write blocks) / VictoriaMetrics server CPU over the text import.
infermon's in-process appender (scrape path, no parsing): $(rate "$im_cpu") samples/CPU-s.
memory: infermon and Prometheus after 25 scrapes of every series; infermon with the whole
${HOURS} h in its head: $(printf '%.0f' "$im_mem") bytes/series. read back = each store's bulk reader
(tsdb dump as text / dump / /api/v1/export JSON); infermon's native iteration over every
sample: ${im_native_read} s. Prometheus head series in the memory test: $pr_head.
infermon import of the same file: $(f "$(bps "$im_imp_bytes")") bytes/sample.
EOF

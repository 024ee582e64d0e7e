#!/usr/bin/env bash
# Bad SLO input is refused with an error naming the field (and line:column for
# the YAML): an objective of 100 % or 0, an unknown key, a latency SLO without
# a threshold, a window longer than the retention (slo check and infermon run),
# an unsupported Sloth plugin and an unmappable OpenSLO indicator; while Sloth
# and OpenSLO specs that map are read.
source "$IM_SOURCE_DIR/tests/slo/lib.sh"
refused() { # name want [args]
  local n=$1 want=$2
  shift 2
  set +e
  "$IM_BINARY" slo check "$IM_TMP/$n.yml" "$@" >"$IM_TMP/$n.out" 2>&1
  local rc=$?
  set -e
  [ "$rc" = 1 ] || fail "$n: exit $rc, expected 1: $(cat "$IM_TMP/$n.out")"
  grep -qF -- "$want" "$IM_TMP/$n.out" || fail "$n: wanted \"$want\", got: $(cat "$IM_TMP/$n.out")"
  echo "ok: $n: $(cat "$IM_TMP/$n.out")"
}
w() { cat >"$IM_TMP/$1.yml"; }
w obj100 <<'YML'
slos:
  - {name: a, sli: availability, objective: 100}
YML
refused obj100 "obj100.yml:2:45: slos[0].objective must be a percent above 0 and below 100"
w obj0 <<'YML'
slos:
  - {name: a, sli: availability, objective: 0}
YML
refused obj0 "slos[0].objective must be a percent above 0 and below 100"
w unknown <<'YML'
slos:
  - name: a
    sli: availability
    objectiv: 99
YML
refused unknown "unknown.yml:4:5: field objectiv not found in slos[0]"
w nothr <<'YML'
slos:
  - {name: a, sli: latency, signal: ttft, objective: 99}
YML
refused nothr "slos[0].threshold is required for a latency SLO"
w badsig <<'YML'
slos:
  - {name: a, sli: latency, signal: tpot, threshold: 1s, objective: 99}
YML
refused badsig "slos[0].signal must be ttft, itl or e2e, not \"tpot\""
w badburn <<'YML'
slos:
  - name: a
    sli: availability
    objective: 99
    burn_rates:
      page: [{factor: 10, long: 4h, short: 5m}]
YML
refused badburn "slos[0].burn_rates.page[0].long must be one of the recorded windows 5m, 30m, 1h, 2h, 6h, 1d, 3d, not 4h"
w long <<'YML'
slos:
  - {name: a, sli: availability, objective: 99, window: 30d}
YML
refused long "slos[0].window (a): 30d is longer than the storage retention 15d (--storage.tsdb.retention.time)" \
  --storage.tsdb.retention.time 15d
w plugin <<'YML'
version: prometheus/v1
service: chat
slos:
  - name: avail
    objective: 99
    sli:
      plugin: {id: sloth-common/kubernetes/apiserver/availability}
YML
refused plugin "Sloth slos[0].sli.plugin: Sloth SLI plugins are not supported"
w oslo_bad <<'YML'
apiVersion: openslo/v1
kind: SLO
metadata: {name: x}
spec:
  budgetingMethod: Timeslices
  objectives: [{target: 0.99}]
  indicator: {spec: {ratioMetric: {}}}
YML
refused oslo_bad "OpenSLO spec.budgetingMethod: only Occurrences maps"
# what maps: Sloth events and OpenSLO ratio / threshold metrics
w sloth <<'YML'
version: prometheus/v1
service: chat
slos:
  - name: requests-availability
    objective: 99.9
    sli:
      events:
        error_query: sum(rate(vllm:request_success_total{finished_reason=~"abort|error"}[{{.window}}]))
        total_query: sum(rate(vllm:request_success_total[{{.window}}]))
    alerting:
      name: ChatAvailability
      page_alert: {labels: {team: chat}}
      ticket_alert: {disable: true}
YML
"$IM_BINARY" slo generate "$IM_TMP/sloth.yml" >"$IM_TMP/sloth.rules" || fail "sloth generate"
grep -q "alert: ChatAvailability" "$IM_TMP/sloth.rules" || fail "sloth alert name"
grep -q "severity: 'ticket'" "$IM_TMP/sloth.rules" && fail "disabled ticket alert generated"
grep -qF '[1h]' "$IM_TMP/sloth.rules" || fail "window not substituted"
w oslo <<'YML'
- apiVersion: openslo/v1
  kind: Service
  metadata: {name: chat}
  spec: {}
- apiVersion: openslo/v1
  kind: SLO
  metadata: {name: chat-ok}
  spec:
    service: chat
    budgetingMethod: Occurrences
    timeWindow: [{duration: 28d, isRolling: true}]
    objectives: [{target: 0.995}]
    indicator:
      metadata: {name: ok}
      spec:
        ratioMetric:
          counter: true
          good: {metricSource: {type: Prometheus, spec: {query: 'vllm:request_success_total{finished_reason=~"stop|length"}'}}}
          total: {metricSource: {type: Prometheus, spec: {query: 'vllm:request_success_total'}}}
- apiVersion: openslo/v1
  kind: SLO
  metadata: {name: chat-ttft}
  spec:
    budgetingMethod: Occurrences
    timeWindow: [{duration: 1M, calendar: {startTime: "2026-01-01 00:00:00", timeZone: UTC}}]
    objectives: [{op: lte, value: 2.5, target: 0.99}]
    indicator:
      spec:
        thresholdMetric:
          metricSource: {type: Prometheus, spec: {query: 'vllm:time_to_first_token_seconds_bucket'}}
YML
"$IM_BINARY" slo generate "$IM_TMP/oslo.yml" >"$IM_TMP/oslo.rules" 2>"$IM_TMP/oslo.err" \
  || fail "openslo generate: $(cat "$IM_TMP/oslo.err")"
command -v promtool >/dev/null && { promtool check rules "$IM_TMP/oslo.rules" >/dev/null \
  || fail "promtool: openslo rules"; promtool check rules "$IM_TMP/sloth.rules" >/dev/null \
  || fail "promtool: sloth rules"; }
grep -q "name: infermon.slo.chat-ttft" "$IM_TMP/oslo.rules" || fail "thresholdMetric SLO missing"
grep -qF 'le=~"2\\.5"' "$IM_TMP/oslo.rules" || fail "thresholdMetric le matcher"
grep -qF "window: 'month'" "$IM_TMP/oslo.rules" || fail "calendar window"
grep -qF "window: '4w'" "$IM_TMP/oslo.rules" || fail "rolling window (28d = 4w)"
echo "ok: Sloth and OpenSLO specs read"
# infermon run refuses a window longer than its retention, naming the field
cat >"$IM_TMP/run.yml" <<'YML'
scrape_configs: []
llm:
  slos:
    - {name: a, sli: availability, objective: 99, window: 30d}
YML
set +e
timeout 20 "$IM_BINARY" run --config.file "$IM_TMP/run.yml" --storage.tsdb.path "$IM_TMP/data" \
  --storage.tsdb.retention.time 5d --web.listen-address "127.0.0.1:$(free_port)" >"$IM_TMP/run.log" 2>&1
rc=$?
set -e
[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "run started (rc $rc): $(tail -3 "$IM_TMP/run.log")"
grep -qF "llm.slos[0].window (a): 30d is longer than the storage retention 5d" "$IM_TMP/run.log" \
  || fail "run: $(tail -3 "$IM_TMP/run.log")"
check_sanitizer_log "$IM_TMP/run.log"
echo "ok: infermon run refused the window"

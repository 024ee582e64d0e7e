#!/usr/bin/env bash
# Bad input to `infermon cost`: a missing price (exit 1, the cost and what
# follows from it null, the other figures there, a note naming the flavor and
# where to add it), no price table, no energy price, a period with no data and
# an unknown team (exit 2, a message that says so, nothing printed on stdout),
# bad flags (named). No figure is invented: a null is never a 0.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
END=2026-08-25T12:00:00Z
"$IM_BINARY" simulate --history 20m --step 30s --tick 30s --pods 2 --teams llm-serving,research \
  --end "$END" --seed 7 --out "$IM_TMP/h.om" 2>"$IM_TMP/sim.err" || { cat "$IM_TMP/sim.err"; fail "simulate"; }
"$IM_BINARY" tsdb import --format openmetrics "$IM_TMP/h.om" "$IM_TMP/db" >"$IM_TMP/import" 2>&1 \
  || { tail -5 "$IM_TMP/import"; fail "tsdb import"; }
cat >"$IM_TMP/gpu-only.yml" <<'YML'
llm:
  cost:
    prices:
      - gpu_model: NVIDIA A100-SXM4-80GB
        on_demand: 2
YML
cat >"$IM_TMP/spot.yml" <<'YML'
llm:
  cost:
    pricing: spot
    prices:
      - flavor: h100-80gb
        on_demand: 4
YML
run() { # want-rc args... -> $IM_TMP/out, $IM_TMP/err
  local want=$1
  shift
  set +e
  "$IM_BINARY" cost --storage.tsdb.path "$IM_TMP/db" "$@" >"$IM_TMP/out" 2>"$IM_TMP/err"
  local rc=$?
  set -e
  [ $rc = "$want" ] || { cat "$IM_TMP/err"; fail "cost $* exited $rc, expected $want"; }
}
nulls() { # file what: costs null, GPU-hours and tokens present
  $PY - "$1" "$2" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["rows"], "no rows"
for r in d["rows"] + [d["total"]]:
    for k in ("cost", "idle_cost", "cost_per_million_output_tokens"):
        assert r[k] is None, "%s %s = %r, expected null (%s)" % (r["group"], k, r[k], sys.argv[2])
    for k in ("gpu_hours_reserved", "gpu_hours_allocated", "gpu_hours_busy", "output_tokens", "energy_kwh"):
        assert isinstance(r[k], (int, float)) and r[k] > 0, "%s %s = %r" % (r["group"], k, r[k])
    assert r["energy_cost"] is None, "energy_cost without a price per kWh: %r" % r["energy_cost"]
print("ok: %s: costs null, the other figures there" % sys.argv[2])
PYEOF
}
P=(--from 2026-08-25T11:40:00Z --to "$END")
run 1 "${P[@]}" --config.file "$IM_TMP/gpu-only.yml" --output json
nulls "$IM_TMP/out" "a missing flavor price"
grep -q 'note: no on_demand price for flavor "h100-80gb": add it to llm.cost.prices (flavor: ...)' "$IM_TMP/err" \
  || fail "no note naming the missing price: $(cat "$IM_TMP/err")"
run 1 "${P[@]}" --config.file "$IM_TMP/spot.yml" --output json
nulls "$IM_TMP/out" "no spot price"
grep -q 'no spot price for flavor "h100-80gb"' "$IM_TMP/err" || fail "spot: $(cat "$IM_TMP/err")"
run 1 "${P[@]}" --output json
nulls "$IM_TMP/out" "no price table"
grep -q 'no price table: costs are null (llm.cost.prices in --config.file)' "$IM_TMP/err" || fail "no table: $(cat "$IM_TMP/err")"
run 1 "${P[@]}" # the text report says it too, and prints - for a null
grep -q '^note: no price table' "$IM_TMP/out" || fail "text report lacks the note"
grep -Eq '^llm-serving +[0-9.]+ +[0-9.]+ +[0-9.]+ +- +- ' "$IM_TMP/out" || fail "text report: null cost is not -: $(cat "$IM_TMP/out")"
run 1 "${P[@]}" --output csv
$PY - "$IM_TMP/out" <<'PYEOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and all(r["BilledCost"] == "" and r["x_GpuHoursReserved"] != "" for r in rows), rows
print("ok: CSV: BilledCost empty, not 0")
PYEOF
# a period with no data
run 2 --from 2020-01-01T00:00:00Z --to 2020-01-02T00:00:00Z --output json
[ ! -s "$IM_TMP/out" ] || fail "no-data period printed a report"
grep -q 'no data between 2020-01-01T00:00:00Z and 2020-01-02T00:00:00Z in local: no Kueue, dcgm-exporter or engine series (is the period right?)' "$IM_TMP/err" \
  || fail "no-data message: $(cat "$IM_TMP/err")"
echo "ok: a period with no data: exit 2, said so"
# an unknown team
run 2 "${P[@]}" --team gamma
[ ! -s "$IM_TMP/out" ] || fail "unknown team printed a report"
grep -q 'no team "gamma" in the period (the period has: llm-serving, research)' "$IM_TMP/err" \
  || fail "unknown-team message: $(cat "$IM_TMP/err")"
echo "ok: an unknown team: exit 2, the teams named"
# bad flags name themselves
for a in "--by teams|--by must be team" "--month 2026-13|--month: \"2026-13\" is not a month" \
  "--range 0s|--range: \"0s\" is not a positive duration" "--step -1s|--step" \
  "--from 2026-08-25T11:40:00Z|--from needs --to" "--output yaml|--output must be text, json or csv"; do
  args=${a%%|*}
  msg=${a#*|}
  # shellcheck disable=SC2086
  run 2 $args
  grep -qF -- "$msg" "$IM_TMP/err" || fail "$args: $(cat "$IM_TMP/err")"
  echo "ok: $args -> $(head -1 "$IM_TMP/err")"
done
echo "cost: bad input gives a clear message and no invented figure"

#!/usr/bin/env bash
# GET /api/v1/llm/cost on `infermon run` over a simulated history: its data is
# what `infermon cost --output json` prints over the same store (for each
# grouping and the three ways to give a period); a bad parameter is a 400
# naming it; a period with no data and an unknown team are 404s that say so;
# POST is refused.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
END=2026-08-25T12:00:00Z
"$IM_BINARY" simulate --history 20m --step 30s --tick 30s --pods 2 --teams llm-serving,research \
  --mig-nodes 1 --end "$END" --seed 5 --out "$IM_TMP/h.om" 2>"$IM_TMP/sim.err" \
  || { cat "$IM_TMP/sim.err"; fail "simulate"; }
"$IM_BINARY" tsdb import --format openmetrics "$IM_TMP/h.om" "$IM_TMP/db" >"$IM_TMP/import" 2>&1 \
  || { tail -5 "$IM_TMP/import"; fail "tsdb import"; }
cp -r "$IM_TMP/db" "$IM_TMP/db.cli"
cat >"$IM_TMP/cfg.yml" <<'YML'
global: {scrape_interval: 15s}
scrape_configs: []
llm:
  cost:
    prices:
      - flavor: h100-80gb
        gpu_model: NVIDIA H100 80GB HBM3
        on_demand: 4.1
        spot: 1.4
    energy_price_per_kwh: 0.12
    teams:
      llm-serving: search
YML
port=$(free_port)
bg "$IM_BINARY" run --config.file "$IM_TMP/cfg.yml" --storage.tsdb.path "$IM_TMP/db" \
  --web.listen-address "127.0.0.1:$port" >"$IM_TMP/run.log" 2>&1
wait_http "http://127.0.0.1:$port/-/ready" 60 || { tail "$IM_TMP/run.log"; fail "run"; }
api() { # query-string -> body in $IM_TMP/api.json, code in CODE
  CODE=$(curl -sS -o "$IM_TMP/api.json" -w '%{http_code}' "http://127.0.0.1:$port/api/v1/llm/cost?$1")
}
same() { # query-string cli-args...
  local q=$1
  shift
  api "$q"
  [ "$CODE" = 200 ] || fail "GET ?$q: $CODE $(cat "$IM_TMP/api.json")"
  set +e
  "$IM_BINARY" cost --storage.tsdb.path "$IM_TMP/db.cli" --config.file "$IM_TMP/cfg.yml" \
    --output json "$@" >"$IM_TMP/cli.json" 2>"$IM_TMP/cli.err"
  local rc=$?
  set -e
  [ $rc -le 1 ] || { cat "$IM_TMP/cli.err"; fail "cost $*"; }
  $PY - "$IM_TMP/api.json" "$IM_TMP/cli.json" "$q" <<'PYEOF'
import json, sys
a = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))
assert a["status"] == "success", a
d = a["data"]
assert d == c, "API and CLI differ for ?%s:\n%s\n%s" % (sys.argv[3], json.dumps(d)[:800], json.dumps(c)[:800])
assert d["rows"], "no rows"
print("ok: ?%s = infermon cost --output json (%d rows)" % (sys.argv[3], len(d["rows"])))
PYEOF
}
same "from=2026-08-25T11:40:00Z&to=$END" --from 2026-08-25T11:40:00Z --to "$END"
same "from=2026-08-25T11:40:00Z&to=$END&by=flavor&step=30s" --from 2026-08-25T11:40:00Z --to "$END" --by flavor --step 30s
same "from=2026-08-25T11:40:00Z&to=$END&by=cluster_queue" --from 2026-08-25T11:40:00Z --to "$END" --by cluster_queue
same "range=10m&to=$END&by=namespace" --range 10m --to "$END" --by namespace
same "range=10m&to=$END&by=model" --range 10m --to "$END" --by model
same "range=10m&to=$END&team=search" --range 10m --to "$END" --team search
same "month=2026-08&step=1h" --month 2026-08 --step 1h

bad() { # query-string want-code needle
  api "$1"
  [ "$CODE" = "$2" ] || fail "GET ?$1: $CODE, expected $2: $(cat "$IM_TMP/api.json")"
  grep -q "$3" "$IM_TMP/api.json" || fail "GET ?$1: no '$3' in $(cat "$IM_TMP/api.json")"
  echo "ok: ?$1 -> $2 ($(head -c 160 "$IM_TMP/api.json"))"
}
bad "by=teams" 400 'parameter \\"by\\"'
bad "from=yesterday&to=$END" 400 'parameter \\"from\\"'
bad "from=2026-08-25T11:40:00Z" 400 'parameter \\"from\\" needs parameter \\"to\\"'
bad "range=-5m" 400 'parameter \\"range\\"'
bad "month=2026-13" 400 'parameter \\"month\\"'
bad "step=0s&range=1h&to=$END" 400 'parameter \\"step\\"'
bad "month=2026-08&range=1d" 400 'give from and to, range'
bad "from=$END&to=2026-08-25T11:00:00Z" 400 'the period is empty'
bad "from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z" 404 'no data between 2020-01-01T00:00:00Z'
bad "range=10m&to=$END&team=gamma" 404 'no team \\"gamma\\" in the period (the period has: search)'
code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/api/v1/llm/cost")
[ "$code" = 405 ] || fail "POST: $code"
echo "cost API: same JSON as the CLI, bad parameters named"

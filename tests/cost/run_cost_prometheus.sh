#!/usr/bin/env bash
# The same cost report over Prometheus 2.42 scraping the simulator live and over
# infermon scraping it at the same time (1 s scrapes of the same targets: Kueue
# with borrowing and lending, dcgm-exporter with a MIG node, vLLM pods): the same
# rows, every figure within the scrapes' resolution (one step of the report's
# 5 s step for GPU-hours; for token counters the counter's steps at the
# report's edges, plus 2 %), for --by team and
# --by cluster_queue. Waits for 75 s of samples in both stores, no fixed sleep.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
command -v prometheus >/dev/null || fail "prometheus not installed"
cat >"$IM_TMP/sc.yml" <<'YML'
base: healthy
events:
  - at: 0s
    team: llm-serving
    set: {quota_gpus: 2, batch_jobs_per_h: 600}
  - at: 0s
    team: research
    set: {quota_gpus: 10, lending_limit: 6, batch_jobs_per_h: 2}
YML
sport=$(free_port)
bg "$IM_BINARY" simulate --listen "127.0.0.1:$sport" --pods 2 --teams llm-serving,research \
  --mig-nodes 1 --scenario "$IM_TMP/sc.yml" --seed 11 >"$IM_TMP/sim.log" 2>&1
wait_http "http://127.0.0.1:$sport/targets" 30 || { cat "$IM_TMP/sim.log"; fail "simulate"; }
curl -fsS "http://127.0.0.1:$sport/targets" >"$IM_TMP/targets.json"
cat >"$IM_TMP/scrape.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: sim
    file_sd_configs: [{files: ['$IM_TMP/targets.json']}]
YML
cat >"$IM_TMP/cost.yml" <<'YML'
llm:
  cost:
    prices:
      - flavor: h100-80gb
        gpu_model: NVIDIA H100 80GB HBM3
        on_demand: 4
    energy_price_per_kwh: 0.2
YML
pport=$(free_port)
iport=$(free_port)
bg prometheus --config.file="$IM_TMP/scrape.yml" --storage.tsdb.path="$IM_TMP/prom" \
  --web.listen-address="127.0.0.1:$pport" >"$IM_TMP/prom.log" 2>&1
bg "$IM_BINARY" run --config.file "$IM_TMP/scrape.yml" --storage.memory-only \
  --web.listen-address "127.0.0.1:$iport" >"$IM_TMP/run.log" 2>&1
wait_http "http://127.0.0.1:$pport/-/ready" 60 || { tail "$IM_TMP/prom.log"; fail "prometheus"; }
wait_http "http://127.0.0.1:$iport/-/ready" 60 || { tail "$IM_TMP/run.log"; fail "infermon run"; }
# both stores hold 75 s of every target (a sample a second)
for url in "http://127.0.0.1:$pport" "http://127.0.0.1:$iport"; do
  deadline=$((SECONDS + 240))
  until curl -fsS -G "$url/api/v1/query" --data-urlencode 'query=min(count_over_time(up[75s])) >= 74' 2>/dev/null \
    | grep -q '"result":\[{'; do
    [ $SECONDS -lt $deadline ] || fail "$url: no 75 s of samples after 240 s"
    sleep 0.5
  done
done
to=$(( $(date +%s) / 5 * 5 - 5 ))
from=$((to - 60))
for by in team cluster_queue; do
  for be in "--prometheus http://127.0.0.1:$pport" "--url http://127.0.0.1:$iport"; do
    n=${be%% *}
    # shellcheck disable=SC2086
    "$IM_BINARY" cost $be --from $from --to $to --step 5s --by $by --config.file "$IM_TMP/cost.yml" \
      --output json >"$IM_TMP/$by${n//-/}.json" 2>"$IM_TMP/err" || { cat "$IM_TMP/err"; fail "cost $be --by $by"; }
  done
  $PY - "$IM_TMP/${by}prometheus.json" "$IM_TMP/${by}url.json" "$by" "http://127.0.0.1:$pport" $from $to <<'PYEOF'
import json, sys, urllib.parse, urllib.request
p, i = (json.load(open(f)) for f in sys.argv[1:3])
by = sys.argv[3]
prom, t0, t1 = sys.argv[4], int(sys.argv[5]), int(sys.argv[6])

def edge_jumps(metric):
    """The counter's largest one-scrape steps where the report's window starts and
    ends, summed over every series (Prometheus' raw samples): the two stores scrape
    at different phases, so at each edge one store may count a step the other
    leaves outside. A team with few, large batch jobs moves in big steps."""
    total = 0.0
    for edge in (t0, t1):
        q = urllib.parse.urlencode({"query": "%s[8s]" % metric, "time": edge + 4})
        with urllib.request.urlopen(prom + "/api/v1/query?" + q) as r:
            res = json.load(r)["data"]["result"]
        for s in res:
            pts = [(float(t), float(v)) for t, v in s["values"]]
            best = 0.0
            for (ta, va), (tb, vb) in zip(pts, pts[1:]):
                if tb >= edge - 2 and ta <= edge + 2 and vb >= va:
                    best = max(best, vb - va)
            total += best
    return total

jumps = {k: edge_jumps(m) for k, m in (("input_tokens", "vllm:prompt_tokens_total"),
                                       ("output_tokens", "vllm:generation_tokens_total"),
                                       ("cached_tokens", "vllm:prompt_tokens_cached_total"))}
rp = {r["group"]: r for r in p["rows"]}
ri = {r["group"]: r for r in i["rows"]}
assert sorted(rp) == sorted(ri) and rp, "rows: Prometheus %s, infermon %s" % (sorted(rp), sorted(ri))
step_gpuh = 24 * 5 / 3600.0  # one 5 s step of every GPU of the fleet
bad, n = [], 0
for g in rp:
    for k, v in rp[g].items():
        w = ri[g][k]
        if k in ("group", "cost_basis"):
            if v != w: bad.append("%s %s: %r vs %r" % (g, k, v, w))
            continue
        n += 1
        if v is None or w is None:
            if v != w: bad.append("%s %s: %r vs %r" % (g, k, v, w))
            continue
        if k.startswith("gpu_hours"):
            tol = step_gpuh
        elif k in ("cost", "idle_cost"):
            tol = step_gpuh * 4
        elif k in jumps:
            # counters: the steps at the edges (above), plus 2 % for extrapolation
            # (2.42 answers with 2.x's increase(), infermon with 3.x's)
            tol = 1.5 * jumps[k] + 0.02 * max(abs(v), abs(w)) + 1e-6
        else:
            # ratios over output tokens (tokens per GPU-hour, cost per million output
            # tokens): the tokens' relative tolerance plus 5 % for the GPU-hours/cost
            o = max(abs(rp[g]["output_tokens"] or 0), abs(ri[g]["output_tokens"] or 0))
            rel = (1.5 * jumps["output_tokens"] + 0.02 * o) / o if o > 0 else 0.1
            tol = (rel + 0.05) * max(abs(v), abs(w)) + 1e-6
        if abs(v - w) > tol:
            bad.append("%s %s: Prometheus %r, infermon %r (tolerance %g)" % (g, k, v, w, tol))
assert not bad, "\n".join(bad)
assert p["backend"] != i["backend"]
if by == "cluster_queue":
    assert any(r["gpu_hours_borrowed"] > 0 for r in p["rows"]), "nobody borrowed"
print("ok: --by %s: the same %d rows over Prometheus 2.42 and infermon, %d figures within the scrape's resolution (token steps at the edges: %s)" % (by, len(rp), n, jumps))
for g in rp:
    print("  %s: input_tokens %r / %r, output_tokens %r / %r" % (g, rp[g]["input_tokens"], ri[g]["input_tokens"], rp[g]["output_tokens"], ri[g]["output_tokens"]))
PYEOF
done
echo "cost: the same report over Prometheus 2.42 scraping the simulator"

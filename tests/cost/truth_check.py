#!/usr/bin/env python3
"""truth_check.py TRUTH.json BY REPORT.json [CSV]: every figure of every row of an
`infermon cost --output json` report over the simulator's whole history, checked
against a hand calculation from the simulator's ground truth (docs/simulator.md)
with the prices of tests/cost/run_cost_truth.sh (4 per GPU-hour for flavor
h100-80gb / gpu_model "NVIDIA H100 80GB HBM3", 0.2 per kWh) and its team mapping
(llm-serving -> search, research -> research, sandbox: no team).

Tolerances: reserved, borrowed, lent and tokens exact (1e-9 relative: float
sums); allocated exact; busy and energy within the exposition's rounding
(1e-6 relative)."""
import csv, io, json, math, sys

PRICE, KWH_PRICE = 4.0, 0.2
TEAMS = {"llm-serving": "search", "research": "research"}
truth_path, by, rep_path = sys.argv[1:4]
csv_path = sys.argv[4] if len(sys.argv) > 4 else None
t = json.load(open(truth_path))
rep = json.load(open(rep_path))
errors = []


def close(what, got, want, rel):
    if want is None:
        if got is not None:
            errors.append("%s: %r, expected null" % (what, got))
        return
    if got is None:
        errors.append("%s: null, expected %r" % (what, want))
        return
    if abs(got - want) > rel * max(1.0, abs(want)):
        errors.append("%s: %r, expected %r (diff %g)" % (what, got, want, got - want))


H = 3600.0
KWH = 3.6e6
FIELDS = ["gpu_hours_reserved", "gpu_hours_allocated", "gpu_hours_busy", "gpu_hours_idle",
          "gpu_hours_borrowed", "gpu_hours_lent", "cost", "idle_cost", "energy_kwh",
          "energy_cost", "input_tokens", "output_tokens", "cached_tokens",
          "tokens_per_gpu_hour", "cost_per_million_output_tokens"]
TOL = {"gpu_hours_reserved": 1e-9, "gpu_hours_allocated": 1e-9, "gpu_hours_borrowed": 1e-9,
       "gpu_hours_lent": 1e-9, "input_tokens": 0, "output_tokens": 0, "cached_tokens": 0}


def empty():
    return {k: 0.0 for k in ("res", "alloc", "busy", "kwh", "borrowed", "lent", "in", "out",
                             "cached", "alloc_whole", "res_mig")}


def derive(a, tokens, cohort):
    """The report's figures from the hand sums (docs/cost.md)."""
    r = {}
    r["gpu_hours_reserved"] = a["res"] if a.get("has_res", True) else None
    r["gpu_hours_allocated"] = a["alloc"]
    r["gpu_hours_busy"] = a["busy"]
    r["energy_kwh"] = a["kwh"]
    r["energy_cost"] = a["kwh"] * KWH_PRICE
    r["gpu_hours_borrowed"] = a["borrowed"] if cohort else None
    r["gpu_hours_lent"] = a["lent"] if cohort else None
    for k, f in (("in", "input_tokens"), ("out", "output_tokens"), ("cached", "cached_tokens")):
        r[f] = a[k] if tokens else None
    res = r["gpu_hours_reserved"]
    basis = res if res else a["alloc"]
    cost = basis * PRICE
    r["cost"] = cost
    r["gpu_hours_idle"] = max(0.0, basis - a["busy"])
    r["idle_cost"] = cost * r["gpu_hours_idle"] / basis if basis > 0 else 0.0
    out = r["output_tokens"]
    r["tokens_per_gpu_hour"] = out / basis if out is not None and basis > 0 else None
    r["cost_per_million_output_tokens"] = cost / out * 1e6 if out else None
    return r


groups = {}
un = {"gpu_hours_no_pod": 0.0, "gpu_hours_busy_no_pod": 0.0, "energy_kwh_no_pod": 0.0,
      "gpu_hours_reserved_no_group": 0.0, "gpu_hours_allocated_no_group": 0.0,
      "output_tokens_no_group": 0.0}
for f in t["unattributed"]:
    un["gpu_hours_no_pod"] += f["allocated_gpu_seconds"] / H
    un["gpu_hours_busy_no_pod"] += f["busy_gpu_seconds"] / H
    un["energy_kwh_no_pod"] += f["energy_joules"] / KWH
tokens_of = {}
for p in t["pods"]:
    d = tokens_of.setdefault(p["namespace"], [0, 0, 0])
    d[0] += p["prompt_tokens"]
    d[1] += p["generation_tokens"]
    d[2] += p["cached_tokens"]

if by in ("team", "namespace"):
    for tm in t["teams"]:
        ns = tm["team"]
        g = ns if by == "namespace" else TEAMS.get(ns)
        a = empty()
        for f in tm["flavors"]:
            a["res"] += f.get("reserved_gpu_seconds", 0) / H
            a["alloc"] += f["allocated_gpu_seconds"] / H
            a["busy"] += f["busy_gpu_seconds"] / H
            a["kwh"] += f["energy_joules"] / KWH
        a["in"], a["out"], a["cached"] = tokens_of.get(ns, [0, 0, 0])
        if g is None:
            un["gpu_hours_reserved_no_group"] += a["res"]
            un["gpu_hours_allocated_no_group"] += a["alloc"]
            un["output_tokens_no_group"] += a["out"]
            continue
        groups[g] = derive(a, True, False)
    if by == "namespace":
        for k in ("gpu_hours_reserved_no_group", "gpu_hours_allocated_no_group",
                  "output_tokens_no_group"):
            un[k] = None  # nothing is left without a group
elif by == "cluster_queue":
    for tm in t["teams"]:
        f = tm["flavors"][0]
        a = empty()
        a["res"] = f["reserved_gpu_seconds"] / H
        a["borrowed"] = f["borrowed_gpu_seconds"] / H
        a["lent"] = f["lent_gpu_seconds"] / H
        r = derive(a, False, True)
        for k in ("gpu_hours_allocated", "gpu_hours_busy", "gpu_hours_idle", "idle_cost",
                  "energy_kwh", "energy_cost", "tokens_per_gpu_hour"):
            r[k] = None  # pods are not attributed to ClusterQueues
        groups[tm["cluster_queue"]] = r
    un = {k: (v if k in ("gpu_hours_no_pod", "gpu_hours_busy_no_pod", "energy_kwh_no_pod") else None)
          for k, v in un.items()}
elif by == "flavor":
    for tm in t["teams"]:
        for f in tm["flavors"]:
            a = groups.setdefault(f["flavor"], empty())
            a["res"] += f.get("reserved_gpu_seconds", 0) / H
            a["alloc"] += f["allocated_gpu_seconds"] / H
            a["busy"] += f["busy_gpu_seconds"] / H
            a["kwh"] += f["energy_joules"] / KWH
    groups = {g: derive(a, False, False) for g, a in groups.items()}
    un = {k: (v if k in ("gpu_hours_no_pod", "gpu_hours_busy_no_pod", "energy_kwh_no_pod") else None)
          for k, v in un.items()}
else:
    sys.exit("unknown --by " + by)

rows = {r["group"]: r for r in rep["rows"]}
if sorted(rows) != sorted(groups):
    errors.append("groups %s, expected %s" % (sorted(rows), sorted(groups)))
nchecked = 0
for g, want in groups.items():
    got = rows.get(g)
    if not got:
        continue
    for k in FIELDS:
        close("%s %s" % (g, k), got.get(k, "missing"), want[k], TOL.get(k, 1e-6))
        nchecked += 1
# the total row: sums of the rows, cost per token over the sums
tot = rep["total"]
for k in ("gpu_hours_reserved", "gpu_hours_allocated", "gpu_hours_busy", "cost", "idle_cost",
          "energy_kwh", "output_tokens", "gpu_hours_borrowed", "gpu_hours_lent"):
    vals = [groups[g][k] for g in groups]
    want = None if all(v is None for v in vals) else sum(v for v in vals if v is not None)
    close("total %s" % k, tot.get(k), want, TOL.get(k, 1e-6))
    nchecked += 1
u = rep["unattributed"]
for k, want in un.items():
    close("unattributed %s" % k, u.get(k), want, TOL.get(k, 1e-6) if k != "output_tokens_no_group" else 0)
    nchecked += 1
if by == "team" and "namespace with no team: sandbox" not in u["not_attributed"]:
    errors.append("not_attributed lacks sandbox: %s" % u["not_attributed"])
# the period and the price table are printed with the report
if rep["period"]["from"] != "2026-08-25T11:30:00Z" or rep["period"]["to"] != "2026-08-25T12:00:00Z":
    errors.append("period %s" % rep["period"])
tab = rep["prices"]["table"]
if len(tab) != 1 or tab[0]["on_demand"] != PRICE or rep["prices"]["energy_price_per_kwh"] != KWH_PRICE:
    errors.append("price table %s" % rep["prices"])
if rep["busy_source"] != "DCGM_FI_PROF_GR_ENGINE_ACTIVE":
    errors.append("busy_source %s" % rep["busy_source"])
if csv_path:  # FOCUS columns carry the same figures
    rd = list(csv.DictReader(io.open(csv_path)))
    for k in ("BilledCost", "EffectiveCost", "ListCost", "ChargePeriodStart", "ChargePeriodEnd",
              "ConsumedQuantity", "ConsumedUnit", "PricingUnit", "PricingCategory", "ResourceId",
              "BillingCurrency", "Tags"):
        if k not in rd[0]:
            errors.append("CSV lacks FOCUS column %s" % k)
    for line in rd:
        g = line["ResourceName"]
        close("csv %s BilledCost" % g, float(line["BilledCost"]), groups[g]["cost"], 1e-6)
        close("csv %s x_OutputTokens" % g, float(line["x_OutputTokens"]) if line["x_OutputTokens"] else None,
              groups[g]["output_tokens"], 0)
        if line["ChargePeriodStart"] != "2026-08-25T11:30:00Z" or line["PricingCategory"] != "Standard":
            errors.append("csv %s period/category %s %s" % (g, line["ChargePeriodStart"], line["PricingCategory"]))
        nchecked += 2
if errors:
    print("FAIL (--by %s, %s):\n  %s" % (by, rep["backend"], "\n  ".join(errors)))
    sys.exit(1)
print("ok: --by %s over %s: %d figures of %d rows equal the ground truth" % (by, rep["backend"], nchecked, len(groups)))

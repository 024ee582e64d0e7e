#!/usr/bin/python3
"""Generates the embedded metric catalog (one C file) from catalog/ at build time.

Usage: scripts/gen-catalog.py OUT.c [OUT.js]   (CMake runs it; OUT.c is libim_catalog,
OUT.js the dashboard's copy of the serving model, embedded as /static/serving-model.js)

The one embedded copy of the vendored catalog, read by llm and sim alike (see
src/catalog/catalog_data.h):
 - each catalog/<name>.tsv as NUL-terminated bytes, which llm's catalog parser
   reads (src/llm/catalog.c);
 - the exposition tables the simulator renders from (llm_cat_*): names, types,
   help texts, buckets and version windows from vllm-metrics.tsv,
   vllm-renames.tsv, dcgm-metrics.tsv, kueue-metrics.tsv, and the family order of
   vllm-sample.prom / kueue-sample.prom.
Deterministic output; the file is rewritten only when its text changes.
"""
import csv
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAT = os.path.join(ROOT, "catalog")
VRE = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


# The TSVs embedded as bytes, in the order llm's parser wants them (llm__tsv_<name>).
TSV_FILES = ["vllm-metrics", "vllm-renames", "vllm-metric-events", "dcgm-metrics", "kueue-metrics",
             "neighbour-metrics", "dcgm-renames", "sglang-metrics", "serving-signals"]


def embed_bytes(name):
    """catalog/<name>.tsv as a NUL-terminated byte array and its length (NUL not counted)."""
    with open(os.path.join(CAT, name + ".tsv"), "rb") as f:
        data = f.read()
    sym = name.replace("-", "_")
    hexes = ["0x%02x," % b for b in data]
    lines = ["".join(hexes[i:i + 24]) for i in range(0, len(hexes), 24)]
    return ("const unsigned char llm__tsv_%s[] = {\n%s0x00};\n"
            "const size_t llm__tsv_%s_len = %d;\n\n" % (
                sym, "".join(x + "\n" for x in lines), sym, len(data)))


def rows(name):
    with open(os.path.join(CAT, name), newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def ver(s):
    """First version number in a free-text cell -> packed int, or None."""
    m = VRE.search(s or "")
    if not m:
        return None
    return int(m.group(1)) * 1000000 + int(m.group(2)) * 1000 + int(m.group(3) or 0)


def cstr(s):
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        else:
            out.append(ch)
    text = '"' + "".join(out) + '"'
    # scripts/checksrc greps for allocator calls; keep "free (" out of literals
    return re.sub(r"\b(malloc|calloc|realloc|free)(\s*)\(", r'\1" "\2(', text)


def buckets(cell):
    """Leading comma list of numbers (ending at +Inf or the first non-number)."""
    cell = (cell or "").strip()
    if cell.startswith("build_1_2_5_buckets"):
        return "125", []
    if cell.startswith("request_latency_buckets"):
        return "latency", []
    if cell.startswith("build_1_2_3_5_8_buckets(3000)"):
        return "fixed", [1, 2, 3, 5, 8, 10, 20, 30, 50, 80, 100, 200, 300, 500, 800, 1000, 2000, 3000]
    if cell.startswith("2**(10+i)"):
        return "fixed", [2 ** (10 + i) for i in range(1, 24, 2)]
    out = []
    for tok in re.split(r"[,\s]+", cell):
        if not tok:
            continue
        if tok == "+Inf":
            break
        try:
            out.append(float(tok))
        except ValueError:
            break
    return "fixed", out


def fmt_bucket(x):
    r = repr(float(x))
    return r


def emit_family(out, f):
    out.append("    {%s, %s, %s, %s,\n     %s,\n     %s,\n     %s, %d, %s, %s, %s, %s, %d},\n" % (
        cstr(f["name"]), f["type"], f["rule"], " | ".join(f["flags"]) or "0",
        cstr(f["help"]), cstr(f["help_v0"]) if f.get("help_v0") else "NULL",
        f["bname"] or "NULL", len(f["buckets"]),
        vstr(f.get("first")), vstr(f.get("deprecated")), vstr(f.get("hidden"), True),
        vstr(f.get("removed"), True), f.get("field_id", 0)))


def vstr(v, none_is_never=False):
    if v is None:
        return "LLM_V_NONE" if none_is_never else "0"
    return "LLM_V(%d, %d, %d)" % (v // 1000000, v // 1000 % 1000, v % 1000)


TYPES = {"gauge": "LLM_CT_GAUGE", "counter": "LLM_CT_COUNTER", "histogram": "LLM_CT_HISTOGRAM",
         "summary": "LLM_CT_SUMMARY", "info": "LLM_CT_GAUGE"}

# V0 registration order (vllm/engine/metrics.py Metrics.__init__, 0.6.x era), then
# the info metric logged at engine start.
V0_ORDER = """vllm:num_requests_running vllm:num_requests_swapped vllm:num_requests_waiting
vllm:gpu_cache_usage_perc vllm:cpu_cache_usage_perc vllm:cpu_prefix_cache_hit_rate
vllm:gpu_prefix_cache_hit_rate vllm:num_preemptions vllm:prompt_tokens vllm:generation_tokens
vllm:tokens_total vllm:iteration_tokens_total vllm:time_to_first_token_seconds
vllm:time_per_output_token_seconds vllm:e2e_request_latency_seconds vllm:request_queue_time_seconds
vllm:request_inference_time_seconds vllm:request_prefill_time_seconds
vllm:request_decode_time_seconds vllm:time_in_queue_requests vllm:model_forward_time_milliseconds
vllm:model_execute_time_milliseconds vllm:request_prompt_tokens vllm:request_generation_tokens
vllm:request_max_num_generation_tokens vllm:request_params_n vllm:request_params_best_of
vllm:request_params_max_tokens vllm:request_success vllm:avg_prompt_throughput_toks_per_s
vllm:avg_generation_throughput_toks_per_s vllm:cache_config_info""".split()

# Families a V1 engine registered at some version that the current sample lacks,
# and the family they were registered right before.
V1_INSERT_BEFORE = {
    "vllm:gpu_cache_usage_perc": "vllm:kv_cache_usage_perc",
    "vllm:gpu_prefix_cache_queries": "vllm:prefix_cache_queries",
    "vllm:gpu_prefix_cache_hits": "vllm:prefix_cache_queries",
    "vllm:prompt_tokens_recomputed": "vllm:generation_tokens",
    "vllm:time_per_output_token_seconds": "vllm:inter_token_latency_seconds",
}


def sample_families(name):
    fams = []
    with open(os.path.join(CAT, name)) as f:
        for line in f:
            if line.startswith("# TYPE "):
                fams.append(line.split()[2])
    return fams


def family_types():
    """Family name -> (type, labels) over the per-exporter TSVs, for the '=catalog' cells."""
    out = {}
    for name, key, tcol, lcol in (("vllm-metrics.tsv", "name", "type", "labels"),
                                  ("sglang-metrics.tsv", "name", "type", "labels"),
                                  ("kueue-metrics.tsv", "name", "type", "labels"),
                                  ("dcgm-metrics.tsv", "dcgm_field", "prometheus_type", "labels")):
        for r in rows(name):
            t = r[tcol].split()[0]
            out[r[key]] = (t, r[lcol])
            if t == "counter" and not r[key].endswith("_total"):
                out[r[key] + "_total"] = (t, r[lcol])
    return out


def serving_model():
    """catalog/serving-signals.tsv resolved for the dashboard: engines (with the
    derived Ray Serve rows) and one row per signal mapping, in preference order."""
    types = family_types()
    engines, maps = [], []
    for r in rows("serving-signals.tsv"):
        if r["signal"] == "_engine":
            engines.append(dict(id=r["engine"], name=r["name"], model_label=r["labels"],
                                prefixes=r["selector"].split("|"), source=r["source"],
                                notes=r["notes"]))
            continue
        typ, labels = r["type"], r["labels"]
        if typ == "=catalog" or labels == "=catalog":
            if r["name"] not in types:
                sys.exit("serving-signals.tsv: %s is not in its catalog TSV" % r["name"])
            ct, cl = types[r["name"]]
            typ = ct if typ == "=catalog" else typ
            labels = cl if labels == "=catalog" else labels
        maps.append(dict(signal=r["signal"], engine=r["engine"], name=r["name"], type=typ,
                         unit=r["unit"], selector=r["selector"], versions=r["versions"],
                         notes=r["notes"]))
    ray = []
    for m in maps:
        if m["engine"] == "vllm":
            d = dict(m)
            d["engine"] = "ray-vllm"
            d["name"] = "ray_vllm_" + m["name"][len("vllm:"):]
            ray.append(d)
    return dict(engines=engines, maps=maps + ray)


def write_if_changed(outpath, text):
    try:
        with open(outpath) as f:
            if f.read() == text:
                return
    except OSError:
        pass
    os.makedirs(os.path.dirname(os.path.abspath(outpath)), exist_ok=True)
    with open(outpath + ".tmp", "w") as f:
        f.write(text)
    os.replace(outpath + ".tmp", outpath)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: gen-catalog.py OUT.c [OUT.js]")
    if len(sys.argv) == 3:
        import json
        write_if_changed(sys.argv[2], "/* Generated by scripts/gen-catalog.py from "
                         "catalog/serving-signals.tsv: do not edit. */\n"
                         "window.INFERMON_SERVING = " +
                         json.dumps(serving_model(), indent=0, sort_keys=True) + ";\n")
    outpath = sys.argv[1]
    out = ["/* Generated at build time by scripts/gen-catalog.py from catalog/: do not edit.\n"
           " * The embedded metric catalog: the TSVs as bytes (llm's parser) and the\n"
           " * exposition tables (the simulator); see src/catalog/catalog_data.h. */\n"
           "#include \"util/base.h\"\n\n#include \"catalog/catalog_data.h\"\n\n"]
    for name in TSV_FILES:
        out.append(embed_bytes(name))

    hidden = {}
    for r in rows("vllm-renames.tsv"):
        hidden[r["old_exposed_name"].replace("_total", "") if r["old_exposed_name"].endswith("_total")
               and "tokens_total" not in r["old_exposed_name"] else r["old_exposed_name"]] = ver(r["hidden_in"])

    vllm = []
    prev_default = False
    for r in rows("vllm-metrics.tsv"):
        name = r["name"]
        cond = r["condition"]
        flags = []
        if "V0 engine only" in cond:
            flags.append("LLM_CF_V0_ONLY")
        if cond.startswith("V1 only"):
            flags.append("LLM_CF_V1_ONLY")
        default = (cond.startswith("always") or cond.startswith("V0 always") or
                   cond.startswith("registered at engine init") or
                   cond.startswith("registered ALWAYS") or cond.startswith("V1 only") or
                   cond.startswith("prometheus-fastapi-instrumentator") or
                   ("V0 engine only" in cond and "spec decode" not in cond) or
                   (cond.startswith("as above") and prev_default))
        prev_default = default
        if default:
            flags.append("LLM_CF_DEFAULT")
        help_ = r["help"]
        help_v0 = None
        m = re.search(r"\s*\(V0 help: '(.*)'\)\s*$", help_)
        if m:
            help_v0 = m.group(1)
            help_ = help_[:m.start()]
        if name == "vllm:num_requests_running":
            help_v0 = "Number of requests currently running on GPU."
        if name == "vllm:e2e_request_latency_seconds":
            help_v0 = "Histogram of end to end request latency in seconds."
        rule, bl = buckets(r["buckets"])
        first = ver(r["first_version"])
        removed = ver(r["removed_in"])
        if removed is None and r["removed_in"].strip().startswith("main"):
            removed = 0  # never in a release
        dep = ver(r["deprecated_in"])
        hid = hidden.get(name)
        if hid is None and name + "_total" in hidden:
            hid = hidden[name + "_total"]
        typ = r["type"].split()[0]
        vllm.append(dict(name=name, type=TYPES[typ], rule="LLM_CB_125" if rule == "125" else "LLM_CB_FIXED",
                         flags=flags, help=help_, help_v0=help_v0, buckets=bl, latency=(rule == "latency"),
                         first=first, removed=removed, deprecated=dep, hidden=hid))
    byname = {f["name"]: f for f in vllm}
    for f in vllm:
        if f["latency"]:
            f["buckets"] = byname["vllm:e2e_request_latency_seconds"]["buckets"]

    dcgm = []
    for r in rows("dcgm-metrics.tsv"):
        if r["prometheus_type"] == "label" or not r["field_id"]:
            continue
        # the DCP profiling fields commented out in default-counters.csv
        # (SM activity and occupancy, FP pipes) are kept as opt-in
        dcp = r["dcgm_field"].startswith("DCGM_FI_PROF_") and r["default-counters.csv"] == "commented"
        if r["default-counters.csv"] != "enabled" and not dcp:
            continue
        flags = ["LLM_CF_DEFAULT"] if not dcp else []
        if r["value_format"].startswith("int"):
            flags.append("LLM_CF_DCGM_INT")
        dcgm.append(dict(name=r["dcgm_field"], type=TYPES[r["prometheus_type"]], rule="LLM_CB_FIXED",
                         flags=flags, help=r["help"], buckets=[], field_id=int(r["field_id"])))
    dcgm.sort(key=lambda f: f["field_id"])

    in_sample = set(sample_families("kueue-sample.prom"))
    kueue = []
    for r in rows("kueue-metrics.tsv"):
        _, bl = buckets(r["buckets"])
        flags = []
        if r["name"] in in_sample:
            flags.append("LLM_CF_IN_SAMPLE")
        kueue.append(dict(name=r["name"], type=TYPES[r["type"]], rule="LLM_CB_FIXED", flags=flags,
                          help=r["help"], buckets=bl))
    kueue.sort(key=lambda f: f["name"])

    sglang = []
    for r in rows("sglang-metrics.tsv"):
        _, bl = buckets(r["buckets"])
        flags = ["LLM_CF_DEFAULT"] if r["condition"].startswith("always") else []
        sglang.append(dict(name=r["name"], type=TYPES[r["type"]], rule="LLM_CB_FIXED", flags=flags,
                           help=r["help"], buckets=bl, first=ver(r["first_version"]),
                           removed=ver(r["removed_in"])))

    for tab, prefix in ((vllm, "vllm"), (dcgm, "dcgm"), (kueue, "kueue"), (sglang, "sglang")):
        for i, f in enumerate(tab):
            f["bname"] = None
            if f["buckets"]:
                f["bname"] = "%s_b%d" % (prefix, i)
                out.append("static const double %s[] = {%s};\n" % (
                    f["bname"], ", ".join(fmt_bucket(x) for x in f["buckets"])))
        out.append("\nconst llm_cat_family_t llm_cat_%s[] = {\n" % prefix)
        for f in tab:
            emit_family(out, f)
        out.append("};\nconst int llm_cat_%s_len = %d;\n\n" % (prefix, len(tab)))

    # V1 order: the sample's registration order, with older families re-inserted.
    v1 = []
    for fam in sample_families("vllm-sample.prom"):
        if not fam.startswith("vllm:") or fam.endswith("_created"):
            continue
        base = fam[:-6] if fam.endswith("_total") and fam[:-6] in byname and fam not in byname else fam
        if base not in byname:
            sys.exit("sample family %s not in vllm-metrics.tsv" % fam)
        for old, before in V1_INSERT_BEFORE.items():
            if before == base and old not in v1:
                v1.append(old)
        v1.append(base)
    for name in V0_ORDER:
        if name not in byname:
            sys.exit("V0 family %s not in vllm-metrics.tsv" % name)
    for label, lst in (("v1", v1), ("v0", V0_ORDER)):
        out.append("const char *const llm_cat_vllm_order_%s[] = {\n" % label)
        for n in lst:
            out.append("    %s,\n" % cstr(n))
        out.append("    NULL,\n};\n\n")

    write_if_changed(outpath, "".join(out))


if __name__ == "__main__":
    main()

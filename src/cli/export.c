/* export.c — `infermon export dashboard|rules`: a Grafana dashboard of the
 * causal-chain overview and the built-in, cost and SLO rules, written with
 * the metric names the given sources (--target, --prometheus, --url,
 * --storage.tsdb.path) expose, for the Prometheus/Grafana stack a team already
 * runs (docs/export.md). Exit 0, 2 for usage, unreachable sources or no
 * engine found. */
#include "util/base.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "config/config.h"
#include "config/yaml.h"
#include "llm/builtin.h"
#include "llm/cost.h"
#include "llm/export.h"
#include "llm/lint.h"
#include "llm/serving.h"
#include "llm/slo.h"
#include "promql/promql.h"
#include "query/query.h"
#include "tsdb/tsdb.h"
#include "util/log.h"
#include "util/timeutil.h"

#define MAX_TARGETS 64
#define MAX_LABELS  32
#define MAX_CONFIG  (64u << 20)

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: infermon export dashboard [SOURCES] [--engine E] [--title T] [-o FILE]\n"
        "       infermon export rules [SOURCES] [--engine E] [--format rulefile|prometheusrule]\n"
        "                             [--name N] [--namespace NS] [--label K=V]...\n"
        "                             [--config FILE] [--slo FILE] [-o FILE]\n\n"
        "Writes infermon's knowledge for your own Prometheus and Grafana: a Grafana dashboard\n"
        "of the causal-chain overview, or the built-in alert and recording rules (with the\n"
        "cost rules of llm.cost.rules), with the metric names the sources expose.\n\n"
        "SOURCES (any of; the names and engines come from them):\n"
        "  --target URL|FILE     an endpoint scraped once, or a saved exposition (repeatable)\n"
        "  --prometheus URL      a Prometheus-compatible query API (Prometheus, Mimir, ...)\n"
        "  --prometheus.config F its HTTP client: basic_auth, authorization, tls_config,\n"
        "                        headers, tenant (as --query.backend-config of run)\n"
        "  --prometheus.timeout D  per request (default 10s)\n"
        "  --url URL             a running infermon (its Prometheus API)\n"
        "  --storage.tsdb.path DIR the local store (an infermon data directory)\n"
        "Without a source, --engine names the engines and their newest metric names are used.\n\n"
        "  --engine E            vllm, sglang, a comma list, or auto (default: the engines\n"
        "                        the sources expose; dcgm-exporter and Kueue when exposed)\n"
        "  -o, --output FILE     write there instead of standard output\n"
        "  --title T             dashboard title (default \"LLM serving (infermon)\")\n"
        "  --format F            rulefile (default) or prometheusrule (monitoring.coreos.com/v1)\n"
        "  --name N, --namespace NS, --label K=V  the PrometheusRule's metadata\n"
        "  --config FILE         infermon.yml: llm thresholds, llm.cost (rules: true) and\n"
        "                        llm.slos / llm.slo_files (docs/slo.md)\n"
        "  --slo FILE            an SLO file (ours, Sloth prometheus/v1, OpenSLO): its rules\n");
}

/* ---- the names the sources expose ---- */

typedef struct names {
    lint_names_t *ln; /* NULL: catalog mode (the engines' preferred names) */
    uint32_t catalog_engines;
} names_t;

static bool has_name(void *ctx, const char *name, size_t len)
{
    names_t *n = ctx;
    if (n->ln) return lint_names_has(n->ln, name, len);
    /* catalog mode: the first mapping of each signal of the chosen engines */
    const llm_serving_t *s = llm_serving_get();
    if (len == strlen("DCGM_FI_DEV_FB_FREE") && memcmp(name, "DCGM_FI_DEV_FB_FREE", len) == 0)
        return true;
    for (int e = 0; e < llm_serving_engine_count(s) && e < 32; e++) {
        if (!(n->catalog_engines & (1u << e))) continue;
        for (int sig = 0; sig < LLM_SIG_COUNT; sig++) {
            const llm_signal_map_t *m[1];
            if (llm_serving_maps_for(s, e, (llm_signal_t)sig, m, 1) == 0) continue;
            size_t ml = strlen(m[0]->name);
            if (ml == len && memcmp(m[0]->name, name, len) == 0) return true;
            if (m[0]->type == LLM_MTYPE_HISTOGRAM && len == ml + 7 &&
                memcmp(m[0]->name, name, ml) == 0 && memcmp(name + ml, "_bucket", 7) == 0)
                return true;
        }
    }
    return false;
}

typedef struct src_opts {
    const char *targets[MAX_TARGETS];
    size_t ntargets;
    const char *prom, *prom_cfg, *url, *dir, *engine;
    int64_t timeout_ms;
} src_opts_t;

/* The query backend of --prometheus/--url/--storage.tsdb.path, kept for the
 * SLO rules' bucket check (NULL with --target only: the catalog's layouts). */
typedef struct backend {
    query_backend_t *qb; /* owned, or store.backend */
    cli_store_t store;
} backend_t;

static void backend_free(backend_t *b)
{
    if (b->qb != b->store.backend) query_backend_free(b->qb);
    cli_store_close(&b->store);
    memset(b, 0, sizeof *b);
}

static int load_names(const src_opts_t *o, names_t *n, im_buf_t *desc, backend_t *keep)
{
    im_err_t err;
    n->ln = lint_names_new();
    for (size_t i = 0; i < o->ntargets; i++) {
        im_err_clear(&err);
        if (lint_names_add_target(n->ln, o->targets[i], &err) != IM_OK) {
            fprintf(stderr, "infermon export: --target %s: %s\n", o->targets[i], err.msg);
            return -1;
        }
        (void)im_buf_printf(desc, "%s%s", desc->len ? ", " : "", o->targets[i]);
    }
    const char *remote = o->prom ? o->prom : o->url;
    const char *flag = o->prom ? "--prometheus" : "--url";
    if (remote) {
        query_backend_t *qb = NULL;
        query_remote_opts_t qo = {.url = remote,
                                  .timeout_ms = o->timeout_ms,
                                  .max_bytes = 64 << 20,
                                  .timeout_flag = "--prometheus.timeout",
                                  .user_agent = "infermon-export"};
        im_err_clear(&err);
        im_rc rc = cli_remote_open(&qo, o->prom_cfg, &qb, NULL, &err);
        if (rc == IM_OK) rc = lint_names_add_backend(n->ln, qb, &err);
        if (rc == IM_OK && !keep->qb)
            keep->qb = qb;
        else
            query_backend_free(qb);
        if (rc != IM_OK) {
            fprintf(stderr, "infermon export: %s %s: %s\n", flag, remote, err.msg);
            return -1;
        }
        (void)im_buf_printf(desc, "%s%s", desc->len ? ", " : "", remote);
    }
    if (o->dir) {
        struct stat st;
        if (stat(o->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "infermon export: --storage.tsdb.path %s is not a storage directory\n",
                    o->dir);
            return -1;
        }
        im_log_set_level(IM_LOG_WARN); /* not the store's start-up lines */
        cli_store_t store;
        im_err_clear(&err);
        if (cli_store_open(o->dir, &store, &err) != IM_OK) {
            fprintf(stderr, "infermon export: cannot open storage %s: %s\n", o->dir, err.msg);
            return -1;
        }
        im_err_clear(&err);
        im_rc rc = lint_names_add_backend(n->ln, store.backend, &err);
        if (rc == IM_OK && !keep->qb) {
            keep->store = store;
            keep->qb = store.backend;
        } else {
            cli_store_close(&store);
        }
        if (rc != IM_OK) {
            fprintf(stderr, "infermon export: --storage.tsdb.path %s: %s\n", o->dir, err.msg);
            return -1;
        }
        (void)im_buf_printf(desc, "%s%s", desc->len ? ", " : "", o->dir);
    }
    return 0;
}

static bool is_aux(const char *id)
{
    return strcmp(id, "dcgm") == 0 || strcmp(id, "kueue") == 0;
}

/* The engines to export (bit mask over the serving model's engines): from
 * --engine and what the sources expose; appends the engines (with the vLLM
 * version window detected) to desc. -1 and a message on error. */
static int choose_engines(const src_opts_t *o, names_t *n, uint32_t *mask, im_buf_t *desc)
{
    const llm_serving_t *s = llm_serving_get();
    int ne = llm_serving_engine_count(s);
    bool sources = o->ntargets || o->prom || o->url || o->dir;
    bool autosel = !o->engine || strcmp(o->engine, "auto") == 0;
    *mask = 0;
    if (!sources) {
        lint_names_free(n->ln);
        n->ln = NULL;
        if (autosel) {
            fprintf(stderr,
                    "infermon export: no source to find the engines in: give --target, "
                    "--prometheus, --url or --storage.tsdb.path, or name them with --engine "
                    "vllm|sglang\n");
            return -1;
        }
    }
    llm_detected_t det;
    memset(&det, 0, sizeof det);
    if (sources) llm_serving_detect(s, has_name, n, &det);
    if (autosel) {
        for (int e = 0; e < ne && e < 32; e++)
            if (det.present[e]) *mask |= 1u << e;
    } else {
        const char *p = o->engine;
        while (*p) {
            const char *c = strchr(p, ',');
            size_t l = c ? (size_t)(c - p) : strlen(p);
            char id[64];
            snprintf(id, sizeof id, "%.*s", (int)(l < 63 ? l : 63), p);
            int e = llm_serving_engine_find(s, id);
            if (e < 0 || e >= 32 || is_aux(id)) {
                fprintf(stderr,
                        "infermon export: --engine %s: not a serving engine (vllm, sglang, "
                        "ray-vllm, ... or auto; docs/engines.md)\n",
                        id);
                return -1;
            }
            if (sources && !det.present[e]) {
                fprintf(stderr,
                        "infermon export: --engine %s: the sources expose none of %s's "
                        "metrics (%d names seen); check the sources or use --engine auto\n",
                        id, llm_serving_engine(s, e)->name, det.names_seen[e]);
                return -1;
            }
            *mask |= 1u << e;
            p = c ? c + 1 : p + l;
        }
        for (int e = 0; e < ne && e < 32; e++)
            if (is_aux(llm_serving_engine(s, e)->id) && (!sources || det.present[e]))
                *mask |= 1u << e;
    }
    bool serving = false;
    for (int e = 0; e < ne && e < 32; e++)
        if ((*mask & (1u << e)) && !is_aux(llm_serving_engine(s, e)->id)) serving = true;
    if (!serving) {
        fprintf(stderr,
                "infermon export: no serving engine found: the sources expose no metric of "
                "vLLM, SGLang or another engine infermon knows (docs/engines.md); check the "
                "sources or name the engine with --engine\n");
        return -1;
    }
    if (!sources) n->catalog_engines = *mask;
    for (int e = 0; e < ne && e < 32 && desc; e++) {
        if (!(*mask & (1u << e)) || is_aux(llm_serving_engine(s, e)->id)) continue;
        char d[200];
        size_t dl = sources ? llm_detected_describe(s, &det, e, d, sizeof d) : 0;
        (void)im_buf_printf(desc, "%s%s", desc->len ? "; " : "",
                            dl ? d : llm_serving_engine(s, e)->name);
    }
    return 0;
}

/* The TTFT alert compares a histogram_quantile with the threshold: a threshold
 * between two bucket bounds (the catalog's layout of the engine's histogram)
 * compares an interpolation (docs/export.md). Says so on stderr with the
 * neighbouring bounds. */
static void ttft_note(uint32_t mask, names_t *n, double thr)
{
    const llm_serving_t *s = llm_serving_get();
    for (int e = 0; e < llm_serving_engine_count(s) && e < 32; e++) {
        if (!(mask & (1u << e))) continue;
        const llm_signal_map_t *m = llm_serving_pick(s, e, LLM_SIG_TTFT, has_name, n);
        if (!m || !m->family || m->family->nbuckets == 0 || m->family->buckets_vary) continue;
        double lo = -1, hi = -1;
        bool exact = false;
        for (int k = 0; k < m->family->nbuckets; k++) {
            double v = m->family->buckets[k];
            if (v == thr) exact = true;
            if (v < thr) lo = v;
            if (v > thr && hi < 0) hi = v;
        }
        if (exact || lo < 0 || hi < 0) continue;
        fprintf(stderr,
                "infermon export: note: llm.ttft_p95_target_seconds %g is not a bucket bound of "
                "%s (it lies between %g and %g): the alert would compare an interpolated "
                "quantile; set it to %g or %g in --config\n",
                thr, m->name, lo, hi, lo, hi);
    }
}

static int write_out(const char *path, const im_buf_t *b)
{
    if (!path || strcmp(path, "-") == 0) {
        fwrite(b->data ? b->data : "", 1, b->len, stdout);
        return 0;
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "infermon export: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    bool ok = fwrite(b->data ? b->data : "", 1, b->len, f) == b->len;
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
        fprintf(stderr, "infermon export: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

int cli_export(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *what = argv[1];
    bool dash = strcmp(what, "dashboard") == 0;
    if (!dash && strcmp(what, "rules") != 0) {
        fprintf(stderr, "infermon export: unknown kind %s (dashboard or rules)\n", what);
        usage(stderr);
        return 2;
    }
    src_opts_t so;
    memset(&so, 0, sizeof so);
    so.timeout_ms = 10000;
    const char *out_path = NULL, *title = NULL, *format = "rulefile", *name = NULL, *ns = NULL;
    const char *config = NULL;
    const char *labels[2 * MAX_LABELS + 1];
    char *label_mem[MAX_LABELS];
    size_t nlabels = 0;
    int rc = 2;
    names_t names = {0};
    backend_t be = {0};
    const char *slo_path = NULL;
    cfg_llm_slo_t slo_own;
    memset(&slo_own, 0, sizeof slo_own);
    scrape_config_t *cfg = NULL;
    im_buf_t desc, out;
    im_buf_init(&desc, 0);
    im_buf_init(&out, 0);

    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
#define OPT(name) cli_opt(argc, argv, &i, name, &val)
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            rc = 0;
            goto done;
        } else if (OPT("--target")) {
            if (!val) goto bad;
            if (so.ntargets >= MAX_TARGETS) {
                fprintf(stderr, "infermon export: more than %d --target flags\n", MAX_TARGETS);
                goto done;
            }
            so.targets[so.ntargets++] = val;
        } else if (OPT("--prometheus")) {
            if (!val) goto bad;
            so.prom = val;
        } else if (OPT("--prometheus.config")) {
            if (!val) goto bad;
            so.prom_cfg = val;
        } else if (OPT("--prometheus.timeout")) {
            if (!val || im_duration_parse(val, strlen(val), &so.timeout_ms, NULL) != IM_OK ||
                so.timeout_ms <= 0) {
                fprintf(stderr,
                        "infermon export: --prometheus.timeout needs a duration such as 30s\n");
                goto done;
            }
        } else if (OPT("--url")) {
            if (!val) goto bad;
            so.url = val;
        } else if (OPT("--storage.tsdb.path")) {
            if (!val) goto bad;
            so.dir = val;
        } else if (OPT("--engine")) {
            if (!val || !*val) goto bad;
            so.engine = val;
        } else if (OPT("-o") || OPT("--output")) {
            if (!val) goto bad;
            out_path = val;
        } else if (dash && OPT("--title")) {
            if (!val) goto bad;
            title = val;
        } else if (!dash && OPT("--format")) {
            if (!val) goto bad;
            format = val;
        } else if (!dash && OPT("--name")) {
            if (!val || !*val) goto bad;
            name = val;
        } else if (!dash && OPT("--namespace")) {
            if (!val || !*val) goto bad;
            ns = val;
        } else if (!dash && OPT("--label")) {
            const char *eq = val ? strchr(val, '=') : NULL;
            if (!eq || eq == val) {
                fprintf(stderr, "infermon export: --label needs KEY=VALUE\n");
                goto done;
            }
            if (nlabels >= MAX_LABELS) {
                fprintf(stderr, "infermon export: more than %d --label flags\n", MAX_LABELS);
                goto done;
            }
            label_mem[nlabels] = im_strndup(val, (size_t)(eq - val));
            labels[2 * nlabels] = label_mem[nlabels];
            labels[2 * nlabels + 1] = eq + 1;
            nlabels++;
        } else if (!dash && OPT("--config")) {
            if (!val) goto bad;
            config = val;
        } else if (!dash && OPT("--slo")) {
            if (!val) goto bad;
            slo_path = val;
        } else {
            fprintf(stderr, "infermon export %s: unknown flag %s\n", what, a);
            usage(stderr);
            goto done;
        }
#undef OPT
    }
    labels[2 * nlabels] = NULL;
    if (so.prom && so.url) {
        fprintf(stderr, "infermon export: give one of --prometheus and --url\n");
        goto done;
    }
    bool prule = strcmp(format, "prometheusrule") == 0;
    if (!prule && strcmp(format, "rulefile") != 0) {
        fprintf(stderr, "infermon export: --format must be rulefile or prometheusrule\n");
        goto done;
    }
    if (!prule && (name || ns || nlabels)) {
        fprintf(stderr,
                "infermon export: --name, --namespace and --label need --format prometheusrule\n");
        goto done;
    }
    im_err_t err;
    if (config) {
        im_err_clear(&err);
        if (scrape_config_load_file(config, &cfg, &err) != IM_OK) {
            char eb[600];
            fprintf(stderr, "infermon export: --config %s: %s\n", config,
                    im_err_format(&err, eb, sizeof eb));
            goto done;
        }
    }
    if (slo_path) {
        im_buf_t sb;
        im_buf_init(&sb, MAX_CONFIG);
        int se = 0;
        if (cfg_read_file(slo_path, &sb, &se) != IM_OK) {
            fprintf(stderr, "infermon export: --slo %s: cannot read it: %s\n", slo_path,
                    se ? strerror(se) : "read error or larger than 64 MiB");
            im_buf_free(&sb);
            goto done;
        }
        im_err_clear(&err);
        im_rc prc =
            cfg_llm_slo_parse_file(&slo_own, sb.data ? sb.data : "", sb.len, slo_path, &err);
        im_buf_free(&sb);
        if (prc != IM_OK) {
            char eb[1200];
            fprintf(stderr, "infermon export: --slo %s: %s\n", slo_path,
                    im_err_format(&err, eb, sizeof eb));
            goto done;
        }
    }
    if (load_names(&so, &names, &desc, &be) != 0) goto done;
    uint32_t mask = 0;
    im_buf_t edesc;
    im_buf_init(&edesc, 0);
    if (choose_engines(&so, &names, &mask, &edesc) != 0) {
        im_buf_free(&edesc);
        goto done;
    }
    if (!desc.len) (void)im_buf_puts(&desc, "the catalog");
    if (edesc.len) (void)im_buf_printf(&desc, " (engines: %s)", edesc.data);
    im_buf_free(&edesc);

    const llm_serving_t *s = llm_serving_get();
    if (dash) {
        llm_export_dash_opts_t o = {
            .title = title, .engines = mask, .has = has_name, .ctx = &names, .sources = desc.data};
        size_t np = 0;
        im_err_clear(&err);
        if (llm_export_dashboard(&o, &out, &np, &err) != IM_OK) {
            fprintf(stderr, "infermon export: %s\n", err.msg);
            goto done;
        }
    } else {
        const cfg_llm_t *llm = cfg ? &cfg->llm : NULL;
        llm_builtin_opts_t bo = {0};
        if (llm) {
            bo.ttft_p95_target_seconds = llm->ttft_p95_target_seconds;
            bo.failure_ratio = llm->failure_ratio;
            bo.queue_waiting_threshold = llm->queue_waiting_threshold;
            bo.kv_cache_threshold = llm->kv_cache_threshold;
        }
        int ev = llm_serving_engine_find(s, "vllm");
        bo.no_vllm = ev < 0 || !(mask & (1u << ev));
        for (int e = 0; e < llm_serving_engine_count(s) && e < 32; e++)
            if ((mask & (1u << e)) && e != ev && !is_aux(llm_serving_engine(s, e)->id))
                bo.engines |= 1u << e;
        /* the KV-cache name: what the sources expose (llm.vllm_names overrides) */
        bool knew = has_name(&names, "vllm:kv_cache_usage_perc", 24);
        bool kold = has_name(&names, "vllm:gpu_cache_usage_perc", 25);
        bo.names = knew && !kold ? LLM_NAMES_NEW : kold && !knew ? LLM_NAMES_OLD : LLM_NAMES_AUTO;
        if (llm && llm->vllm_names == CFG_LLM_NAMES_OLD) bo.names = LLM_NAMES_OLD;
        if (llm && llm->vllm_names == CFG_LLM_NAMES_NEW) bo.names = LLM_NAMES_NEW;
        if (llm && llm->vllm_names == CFG_LLM_NAMES_BOTH) bo.names = LLM_NAMES_AUTO;
        ttft_note(mask, &names, bo.ttft_p95_target_seconds > 0 ? bo.ttft_p95_target_seconds : 2);
        im_buf_t parts[4];
        const char *pp[4];
        size_t pl[4], np = 0;
        /* llm.builtin_rules: false in --config leaves the built-in rules out, as in run */
        if (!(llm && llm->builtin_rules_set && !llm->builtin_rules)) {
            im_buf_init(&parts[np], 0);
            llm_builtin_yaml(&bo, &parts[np]);
            np++;
        }
        if (llm && llm->cost.rules) {
            im_buf_init(&parts[np], 0);
            llm_cost_rules_yaml(&llm->cost, &parts[np]);
            np++;
        }
        /* the SLO rules: llm.slos of --config, then --slo's */
        const cfg_llm_slo_t *sets[2] = {llm && llm->slo.n ? &llm->slo : NULL,
                                        slo_own.n ? &slo_own : NULL};
        const char *set_from[2] = {config, slo_path};
        for (int k = 0; k < 2; k++) {
            if (!sets[k]) continue;
            im_buf_t notes;
            im_buf_init(&notes, 0);
            im_buf_init(&parts[np], 0);
            im_err_clear(&err);
            im_rc src =
                llm_slo_rules_yaml(sets[k], be.qb, LLM_SLO_RULEFILE, &parts[np], &notes, &err);
            np++;
            if (notes.len) {
                const char *p = notes.data;
                while (*p) {
                    const char *nl = strchr(p, '\n');
                    size_t l = nl ? (size_t)(nl - p) : strlen(p);
                    if (l) fprintf(stderr, "infermon export: note: %.*s\n", (int)l, p);
                    p += l + (nl ? 1 : 0);
                }
            }
            im_buf_free(&notes);
            if (src != IM_OK) {
                fprintf(stderr, "infermon export: %s %s: %s\n", k ? "--slo" : "--config",
                        set_from[k], err.msg);
                for (size_t i = 0; i < np; i++) im_buf_free(&parts[i]);
                goto done;
            }
        }
        if (np == 0) {
            fprintf(stderr,
                    "infermon export: no rules to export: --config %s sets llm.builtin_rules: "
                    "false and has no llm.cost.rules or llm.slos; give --slo FILE, or set "
                    "llm.builtin_rules: true\n",
                    config);
            goto done;
        }
        for (size_t i = 0; i < np; i++) {
            pp[i] = parts[i].data;
            pl[i] = parts[i].len;
        }
        llm_export_rules_opts_t ro = {
            .prometheusrule = prule, .name = name, .namespace_ = ns, .labels = labels};
        im_err_clear(&err);
        im_rc mrc = llm_export_rules_merge(&ro, pp, pl, np, &out, &err);
        for (size_t i = 0; i < np; i++) im_buf_free(&parts[i]);
        if (mrc != IM_OK) {
            fprintf(stderr, "infermon export: %s\n", err.msg);
            goto done;
        }
    }
    rc = write_out(out_path, &out) == 0 ? 0 : 2;
    goto done;
bad:
    fprintf(stderr, "infermon export: bad or missing flag value\n");
    usage(stderr);
    rc = 2;
done:
    for (size_t i = 0; i < nlabels; i++) im_free(label_mem[i]);
    cfg_llm_slo_free(&slo_own);
    backend_free(&be);
    lint_names_free(names.ln);
    scrape_config_free(cfg);
    im_buf_free(&desc);
    im_buf_free(&out);
    return rc;
}

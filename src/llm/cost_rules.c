/* cost_rules.c — the cost recording rules (llm.cost.rules: true): the report's
 * figures per namespace as instant rates, so that Grafana users integrate them
 * over any period (sum_over_time(x[30d:1m]) / 60 gives GPU-hours; docs/cost.md).
 * Fractional GPUs count as fractions: a MIG instance or Kueue MIG resource as
 * its share of a GPU, a GPU time-sliced between N pods 1/N to each.
 * The rule file is made from the configuration (the prices) and the serving
 * model (every model server's token counters), and loaded by the rule manager
 * through a generator that wraps the built-in one. */
#include "util/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "llm/cost.h"
#include "llm/serving.h"
#include "util/log.h"
#include "util/mem.h"

#define LLM_COST_RULES_FILE "<builtin:llm-cost>"

/* X's series attributed to a pod, with namespace/pod the workload's: the
 * exported_* pair when the scrape added its own, else the plain pair for the
 * jobs that have no exported_pod at all; rate: of rate(X[5m]). */
static void sel(im_buf_t *o, const char *s, bool rate)
{
    (void)im_buf_printf(o, rate ? "rate(%s[5m])" : "%s", s);
}

static void attributed(im_buf_t *o, bool rate, const char *metric)
{
    char a[200], b[200], c[200];
    snprintf(a, sizeof a, "%s{exported_pod!=\"\"}", metric);
    snprintf(b, sizeof b, "%s{pod!=\"\",exported_pod=\"\"}", metric);
    snprintf(c, sizeof c, "%s{exported_pod!=\"\"}", metric);
    (void)im_buf_puts(o, "(label_replace(label_replace(");
    sel(o, a, rate);
    (void)im_buf_puts(o, ", \"namespace\", \"$1\", \"exported_namespace\", \"(.+)\"), \"pod\", "
                         "\"$1\", \"exported_pod\", \"(.+)\") or (");
    sel(o, b, rate);
    (void)im_buf_puts(o, " unless on (job) ");
    sel(o, c, rate);
    (void)im_buf_puts(o, "))");
}

/* The MIG profiles the rules know (A30, A100 40/80 GB, H100 80/94 GB, H200,
 * B200), each counted as its share of a GPU (llm_cost_gpu_share); an
 * instance of another profile is left out (the report names it). */
static const char *const mig_profiles[] = {
    "1g.6gb",     "2g.12gb",    "4g.24gb", /* A30 */
    "1g.5gb",     "1g.10gb",    "2g.10gb",    "3g.20gb",    "4g.20gb",
    "7g.40gb",                                                         /* A100 40 */
    "1g.20gb",    "2g.20gb",    "3g.40gb",    "4g.40gb",    "7g.80gb", /* 80 GB */
    "1g.12gb",    "1g.24gb",    "2g.24gb",    "3g.47gb",    "4g.47gb",
    "7g.94gb", /* H100 94 */
    "1g.18gb",    "1g.35gb",    "2g.35gb",    "3g.71gb",    "4g.71gb",
    "7g.141gb", /* H200 */
    "1g.23gb",    "1g.45gb",    "2g.45gb",    "3g.90gb",    "4g.90gb",
    "7g.180gb", /* B200 */
    "1c.2g.20gb", "1c.3g.40gb", "2c.3g.40gb", "1c.4g.40gb", "2c.4g.40gb",
    "4c.4g.40gb", /* compute */
};

/* A vector of one-sample series {LABEL="v"} = the share of a GPU v stands for:
 * "" (no MIG) and whole GPUs 1, each profile (prefixed by prefix) its share.
 * Joined with `* on (LABEL) group_left ()`, it counts fractions. */
static void shares(im_buf_t *o, const char *label, const char *whole, const char *prefix)
{
    (void)im_buf_printf(o, "(label_replace(vector(1), \"%s\", \"%s\", \"\", \"\")", label, whole);
    for (size_t i = 0; i < IM_ARRAY_LEN(mig_profiles); i++)
        (void)im_buf_printf(o, " or label_replace(vector(%.17g), \"%s\", \"%s%s\", \"\", \"\")",
                            llm_cost_gpu_share(mig_profiles[i]), label, prefix, mig_profiles[i]);
    (void)im_buf_putc(o, ')');
}

static void yaml_expr(im_buf_t *o, const char *record, const im_buf_t *expr)
{
    (void)im_buf_printf(o, "      - record: %s\n        expr: '", record);
    for (size_t i = 0; i < expr->len; i++) {
        if (expr->data[i] == '\'') (void)im_buf_putc(o, '\'');
        (void)im_buf_putc(o, expr->data[i]);
    }
    (void)im_buf_puts(o, "'\n");
}

void llm_cost_rules_yaml(const cfg_llm_cost_t *cfg, im_buf_t *o)
{
    im_buf_t e;
    im_buf_init(&e, 0);
    (void)im_buf_puts(o, "groups:\n  - name: infermon.llm.cost\n    rules:\n");
    /* reserved GPUs per namespace and flavor: nvidia.com/gpu whole, a Kueue
     * MIG resource (nvidia.com/mig-1g.10gb) its share of a GPU */
    (void)im_buf_puts(&e, "sum by (namespace, flavor) (label_replace("
                          "kueue_local_queue_resource_reservation{resource=~\"nvidia.com/gpu|"
                          "nvidia.com/mig-.+\"}, \"namespace\", \"$1\", \"exported_namespace\", "
                          "\"(.+)\") * on (resource) group_left () ");
    shares(&e, "resource", "nvidia.com/gpu", "nvidia.com/mig-");
    (void)im_buf_putc(&e, ')');
    yaml_expr(o, "namespace_flavor:infermon_gpu_reserved:sum", &e);
    /* allocated GPUs: a GPU (or MIG instance) shared by N pods counts 1/N, a
     * MIG instance its profile's share */
    im_buf_reset(&e);
    (void)im_buf_puts(&e, "sum by (namespace) (count by (UUID, GPU_I_ID, GPU_I_PROFILE, namespace, "
                          "pod) (");
    attributed(&e, false, "DCGM_FI_DEV_FB_USED");
    (void)im_buf_puts(&e, ") / on (UUID, GPU_I_ID) group_left () count by (UUID, GPU_I_ID) (");
    attributed(&e, false, "DCGM_FI_DEV_FB_USED");
    (void)im_buf_puts(&e, ") * on (GPU_I_PROFILE) group_left () ");
    shares(&e, "GPU_I_PROFILE", "", "");
    (void)im_buf_putc(&e, ')');
    yaml_expr(o, "namespace:infermon_gpu_allocated:sum", &e);
    /* busy GPUs: graphics-engine activity where profiling is on, else util;
     * shared as the allocation is */
    im_buf_reset(&e);
    for (int k = 0; k < 2; k++) {
        const char *m = k ? "DCGM_FI_DEV_GPU_UTIL" : "DCGM_FI_PROF_GR_ENGINE_ACTIVE";
        (void)im_buf_puts(&e, k ? " or sum by (namespace) (" : "sum by (namespace) (");
        attributed(&e, false, m);
        (void)im_buf_puts(&e, " / on (UUID, GPU_I_ID) group_left () count by (UUID, GPU_I_ID) (");
        attributed(&e, false, m);
        (void)im_buf_puts(&e, ") * on (GPU_I_PROFILE) group_left () ");
        shares(&e, "GPU_I_PROFILE", "", "");
        (void)im_buf_puts(&e, k ? ") / 100" : ")");
    }
    yaml_expr(o, "namespace:infermon_gpu_busy:sum", &e);
    /* power from the energy counter (mJ/s -> W) */
    im_buf_reset(&e);
    (void)im_buf_puts(&e, "sum by (namespace) (");
    attributed(&e, true, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION");
    (void)im_buf_puts(&e, ") / 1000");
    yaml_expr(o, "namespace:infermon_gpu_power_watts:rate5m", &e);
    /* tokens per second per namespace and model, every model server */
    const llm_serving_t *sv = llm_serving_get();
    const llm_signal_t sigs[2] = {LLM_SIG_PROMPT_TOKENS, LLM_SIG_GENERATION_TOKENS};
    const char *recs[2] = {"namespace_model:infermon_input_tokens:rate5m",
                           "namespace_model:infermon_output_tokens:rate5m"};
    for (int k = 0; k < 2; k++) {
        im_buf_reset(&e);
        int n = 0;
        for (int i = 0; i < llm_serving_engine_count(sv); i++) {
            const llm_engine_info_t *info = llm_serving_engine(sv, i);
            if (llm_cost_frontend(info->id)) continue;
            const llm_signal_map_t *m[4];
            size_t nm = llm_serving_maps_for(sv, i, sigs[k], m, 4);
            for (size_t j = 0; j < nm; j++) {
                if (m[j]->type != LLM_MTYPE_COUNTER) continue;
                (void)im_buf_printf(
                    &e,
                    "%ssum by (namespace, model) (label_replace(rate(%s%s%s%s[5m]), "
                    "\"model\", \"$1\", \"%s\", \"(.+)\"))",
                    n++ ? " or " : "", m[j]->name, *m[j]->selector ? "{" : "", m[j]->selector,
                    *m[j]->selector ? "}" : "", info->model_label);
            }
        }
        if (n) yaml_expr(o, recs[k], &e);
    }
    /* cost per hour of the reservations, from the price table */
    im_buf_reset(&e);
    int n = 0;
    for (size_t i = 0; cfg && i < cfg->nprices; i++) {
        const cfg_cost_price_t *p = &cfg->prices[i];
        double v = p->price[cfg->pricing];
        if (!p->flavor || isnan(v)) continue;
        (void)im_buf_printf(&e, "%snamespace_flavor:infermon_gpu_reserved:sum{flavor=\"",
                            n++ ? " or " : "");
        for (const char *s = p->flavor; *s; s++) {
            if (*s == '"' || *s == '\\') (void)im_buf_putc(&e, '\\');
            (void)im_buf_putc(&e, *s);
        }
        (void)im_buf_printf(&e, "\"} * %.17g", v);
    }
    if (n) {
        im_buf_t w;
        im_buf_init(&w, 0);
        (void)im_buf_printf(&w, "sum by (namespace) (%s)", e.data);
        yaml_expr(o, "namespace:infermon_gpu_cost_per_hour:sum", &w);
        im_buf_free(&w);
    }
    im_buf_free(&e);
}

/* ---- The generator: the wrapped one's files, then ours ---- */

typedef struct gen {
    rules_generator_t inner; /* .load NULL = none */
    char *yaml;              /* owned: made once from the configuration */
    size_t len;
} gen_t;

static bool gen_load(void *ctx, storage_queryable_t *q, rules_file_t ***files, size_t *n)
{
    gen_t *g = ctx;
    bool ok = g->inner.load ? g->inner.load(g->inner.ctx, q, files, n) : true;
    rules_errs_t errs = {0};
    rules_file_t *f = NULL;
    if (rules_file_parse(LLM_COST_RULES_FILE, g->yaml, g->len, &f, &errs) == IM_OK) {
        *files = im_realloc(*files, (*n + 1) * sizeof **files);
        (*files)[(*n)++] = f;
    } else {
        for (size_t e = 0; e < errs.n; e++)
            IM_ERROR("Cost recording rules failed to load", "err=%s", im_logq(errs.v[e]));
    }
    rules_errs_free(&errs);
    return ok;
}

static bool gen_changed(void *ctx, storage_queryable_t *q)
{
    gen_t *g = ctx;
    return g->inner.changed && g->inner.changed(g->inner.ctx, q);
}

static void gen_free(void *ctx)
{
    gen_t *g = ctx;
    if (g->inner.free) g->inner.free(g->inner.ctx);
    im_free(g->yaml);
    im_free(g);
}

void llm_cost_rules_generator(const cfg_llm_cost_t *cfg, rules_generator_t *gen)
{
    gen_t *g = im_calloc(1, sizeof *g);
    g->inner = *gen;
    im_buf_t b;
    im_buf_init(&b, 0);
    llm_cost_rules_yaml(cfg, &b);
    g->yaml = im_buf_steal(&b, &g->len);
    *gen = (rules_generator_t){gen_load, gen_changed, gen_free, g, g->inner.recheck_ms};
}

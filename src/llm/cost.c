/* cost.c — the cost report (see cost.h): a handful of PromQL queries through
 * the query backend, one per source, each integrating over the period inside
 * the store (sum_over_time of a subquery at the step), then attribution in C:
 * namespace -> team, pod -> model, flavor / GPU model -> price.
 *
 * Query shapes (W = the step, the window a sample counts in; S = the step;
 * D = the period):
 *   gauges   sum by (G) (sum_over_time((E)[D:S])) at to - S: the values at the
 *            step times in (from, to], E over last_over_time(x[W]);
 *   counters the same over ((x - x offset S) >= 0 or (x and x offset S)) at
 *            to: sample differences, a reset restarting from the new value;
 *   shares   a GPU's series divided by the count of series of the same
 *            (UUID, GPU_I_ID) attributed at that step (time-slicing). */
#include "util/base.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "labels/json.h"
#include "llm/cost.h"
#include "llm/serving.h"
#include "util/mem.h"
#include "util/timeutil.h"

/* ---- Names ---- */

static const char *const by_names[LLM_COST_NBY] = {"team", "namespace", "model", "cluster_queue",
                                                   "flavor"};

const char *llm_cost_by_name(llm_cost_by_t by)
{
    return by < LLM_COST_NBY ? by_names[by] : "?";
}

llm_cost_by_t llm_cost_by_parse(const char *s)
{
    for (int i = 0; s && i < LLM_COST_NBY; i++)
        if (strcmp(s, by_names[i]) == 0) return (llm_cost_by_t)i;
    return LLM_COST_NBY;
}

static const char *const field_keys[LLM_COST_NFIELDS] = {
    "gpu_hours_reserved",
    "gpu_hours_allocated",
    "gpu_hours_busy",
    "gpu_hours_idle",
    "gpu_hours_borrowed",
    "gpu_hours_lent",
    "cost",
    "idle_cost",
    "energy_kwh",
    "energy_cost",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "tokens_per_gpu_hour",
    "cost_per_million_output_tokens",
};

const char *llm_cost_field_key(llm_cost_field_t f)
{
    return f < LLM_COST_NFIELDS ? field_keys[f] : "?";
}

#define GPU_RESOURCES "nvidia.com/gpu|nvidia.com/mig-.+"
#define M_LQ_RES      "kueue_local_queue_resource_reservation"
#define M_CQ_RES      "kueue_cluster_queue_resource_reservation"
#define M_CQ_QUOTA    "kueue_cluster_queue_nominal_quota"
#define M_CQ_LEND     "kueue_cluster_queue_lending_limit"
#define M_NS_LABELS   "kube_namespace_labels"
#define M_GR_ACTIVE   "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
#define M_GPU_UTIL    "DCGM_FI_DEV_GPU_UTIL"
#define M_FB_USED     "DCGM_FI_DEV_FB_USED"
#define M_ENERGY      "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"

/* Model servers count tokens; these sit in front of them and see the same
 * tokens again (docs/engines.md). */
static const char *const frontends[] = {"sglang-router", "dynamo", "llm-d-epp", "dcgm", "kueue"};

bool llm_cost_frontend(const char *id)
{
    for (size_t i = 0; i < IM_ARRAY_LEN(frontends); i++)
        if (strcmp(id, frontends[i]) == 0) return true;
    return false;
}

double llm_cost_gpu_share(const char *s)
{
    if (!s || !*s || strcmp(s, "nvidia.com/gpu") == 0) return 1;
    const char *p = s;
    if (strncmp(p, "nvidia.com/mig-", 15) == 0) p += 15;
    /* [Nc.]Ng.MMgb[+me...] */
    char *end;
    long c = 0, g = strtol(p, &end, 10);
    if (end == p || g <= 0) return NAN;
    if (*end == 'c' && end[1] == '.') {
        c = g;
        p = end + 2;
        g = strtol(p, &end, 10);
        if (end == p || g <= 0 || c > g) return NAN;
    }
    if (*end != 'g' || end[1] != '.') return NAN;
    long mem = strtol(end + 2, &end, 10);
    if (mem <= 0 || strncmp(end, "gb", 2) != 0) return NAN;
    /* A30 (24 GB, 4 slices): 1g.6gb, 2g.12gb, 4g.24gb; the others have 7. */
    int slices = (mem == 6 * g && (g == 1 || g == 2 || g == 4)) ? 4 : 7;
    if (g > slices) return NAN;
    return (double)(c ? c : g) / slices;
}

/* ---- Small tables ---- */

typedef struct kv {
    char *key;
    double v;
} kv_t;

typedef struct acc {
    char *key;
    double f[LLM_COST_NFIELDS]; /* NaN until something is added */
    kv_t *res_by_flavor;        /* reserved GPU-hours per flavor */
    size_t nres;
    kv_t *alloc_by_model; /* allocated GPU-hours per dcgm modelName */
    size_t nalloc;
} acc_t;

typedef struct ctx {
    query_backend_t *b;
    const llm_cost_opts_t *o;
    llm_cost_report_t *r;
    im_err_t *err;
    int64_t D, S;      /* ms */
    char d[32], s[32]; /* PromQL durations: the period, the step */
    /* Subquery windows: the step multiples in (from, to], for gauges and
     * counters alike; each evaluated at its last point with a range
     * reaching half a step before its first, so that no window boundary is a
     * step multiple (Prometheus 2 closes ranges, 3 opens them on the left). */
    int64_t g_t, c_t;
    char g_r[32], c_r[32];
    /* x[W] at a step time t: the window (t - S, t] shifted by the offset that
     * puts t on the period's step times to - kS; and the previous step's. */
    char w[96], wp[96];
    char **names; /* __name__ values in the period */
    size_t nnames;
    acc_t *accs;
    size_t naccs;
    kv_t *ns_team; /* from kube_namespace_labels */
    size_t nns_team;
    char **pod_model; /* "ns\x1fpod" -> model (parallel arrays) */
    char **pod_model_v;
    size_t npod_model;
    bool team_mapping;      /* a team_label or teams: map is configured */
    const char *nsl, *podl; /* dcgm attribution labels */
} ctx_t;

static bool has_name(void *vc, const char *name, size_t len)
{
    ctx_t *c = vc;
    size_t lo = 0, hi = c->nnames;
    while (lo < hi) { /* names are sorted */
        size_t mid = (lo + hi) / 2;
        int k = strncmp(c->names[mid], name, len);
        if (k == 0 && c->names[mid][len] != '\0') k = 1;
        if (k == 0) return true;
        if (k < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

static bool has(ctx_t *c, const char *name)
{
    return has_name(c, name, strlen(name));
}

static void problem(ctx_t *c, const char *fmt, ...) IM_PRINTF(2, 3);
static void problem(ctx_t *c, const char *fmt, ...)
{
    char b[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < c->r->nproblems; i++)
        if (strcmp(c->r->problems[i], b) == 0) return;
    c->r->problems = im_realloc(c->r->problems, (c->r->nproblems + 1) * sizeof(char *));
    c->r->problems[c->r->nproblems++] = im_strdup(b);
}

static void kv_add(kv_t **a, size_t *n, const char *key, double v)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*a)[i].key, key) == 0) {
            (*a)[i].v += v;
            return;
        }
    *a = im_realloc(*a, (*n + 1) * sizeof **a);
    (*a)[*n].key = im_strdup(key);
    (*a)[(*n)++].v = v;
}

static void kv_free(kv_t *a, size_t n)
{
    for (size_t i = 0; i < n; i++) im_free(a[i].key);
    im_free(a);
}

static acc_t *acc_get(ctx_t *c, const char *key)
{
    for (size_t i = 0; i < c->naccs; i++)
        if (strcmp(c->accs[i].key, key) == 0) return &c->accs[i];
    c->accs = im_realloc(c->accs, (c->naccs + 1) * sizeof *c->accs);
    acc_t *a = &c->accs[c->naccs++];
    memset(a, 0, sizeof *a);
    a->key = im_strdup(key);
    for (int f = 0; f < LLM_COST_NFIELDS; f++) a->f[f] = NAN;
    return a;
}

static void add(double *x, double v)
{
    *x = isnan(*x) ? v : *x + v;
}

/* ---- Queries ---- */

static void fmt_dur(char *b, size_t cap, int64_t ms)
{
    if (ms % 1000 == 0)
        snprintf(b, cap, "%llds", (long long)(ms / 1000));
    else
        snprintf(b, cap, "%lldms", (long long)ms);
}

static im_rc run(ctx_t *c, const char *expr, int64_t t_ms, promql_result_t *res)
{
    llm_cost_report_t *r = c->r;
    r->queries = im_realloc(r->queries, (r->nqueries + 1) * sizeof *r->queries);
    r->query_ms = im_realloc(r->query_ms, (r->nqueries + 1) * sizeof *r->query_ms);
    r->queries[r->nqueries] = im_strdup(expr);
    r->query_ms[r->nqueries++] = t_ms;
    query_req_t q = {.op = QUERY_INSTANT,
                     .want = QUERY_WANT_RESULT,
                     .expr = expr,
                     .time_ms = t_ms,
                     .timeout_ms = c->o->timeout_ms};
    query_answer_t a;
    im_rc rc = query_backend_do(c->b, &q, &a, c->err);
    if (rc == IM_OK) {
        *res = a.result;
        memset(&a.result, 0, sizeof a.result);
        if (res->type != PROMQL_RESULT_VECTOR) {
            promql_result_free(res);
            rc = im_err_set(c->err, IM_EPARSE, "backend %s: %s is not a vector",
                            query_backend_describe(c->b), expr);
        }
    }
    query_answer_free(&a);
    return rc;
}

static const char *lab(const promql_series_t *s, const char *name)
{
    const im_istr_t *v = im_labels_get(s->labels, name);
    return v ? v->s : "";
}

/* exported_<name> when the scrape renamed it, else <name>. */
static const char *lab_x(const promql_series_t *s, const char *name)
{
    char b[64];
    snprintf(b, sizeof b, "exported_%s", name);
    const char *v = lab(s, b);
    return *v ? v : lab(s, name);
}

/* gauge integral: "sum by (BY) (sum_over_time((INNER)[D:S]))", INNER built
 * with last_over_time(x[W]); evaluated at to - S, result in GPU-hours / value
 * x hours. */
static im_rc gauge(ctx_t *c, const char *by, const char *inner, promql_result_t *res)
{
    im_buf_t q;
    im_buf_init(&q, 0);
    (void)im_buf_printf(&q, "sum by (%s) (sum_over_time((%s)[%s:%s]))", by, inner, c->g_r, c->s);
    im_rc rc = run(c, q.data, c->g_t, res);
    im_buf_free(&q);
    return rc;
}

/* counter total: the sample differences of SEL over the period, at to. */
static im_rc counter(ctx_t *c, const char *by, const char *sel, const char *div,
                     promql_result_t *res)
{
    im_buf_t q;
    im_buf_init(&q, 0);
    (void)im_buf_printf(&q,
                        "sum by (%s) (sum_over_time(((last_over_time(%s%s) - "
                        "last_over_time(%s%s) >= 0) or (last_over_time(%s%s) and "
                        "last_over_time(%s%s))%s)[%s:%s]))",
                        by, sel, c->w, sel, c->wp, sel, c->w, sel, c->wp, div ? div : "", c->c_r,
                        c->s);
    im_rc rc = run(c, q.data, c->c_t, res);
    im_buf_free(&q);
    return rc;
}

static double hours(const ctx_t *c, double v)
{
    return v * (double)c->S / 3600000.0;
}

/* ---- Attribution ---- */

/* The team of namespace ns, or NULL when it has none. */
static const char *team_of(ctx_t *c, const char *ns)
{
    if (!*ns) return NULL;
    if (c->o->by == LLM_COST_BY_NAMESPACE) return ns;
    const char *t = cfg_llm_cost_team(c->o->cfg, ns);
    if (t) return t;
    for (size_t i = 0; i < c->nns_team; i++)
        if (strcmp(c->ns_team[i].key, ns) == 0) return c->ns_team[i].key + strlen(ns) + 1;
    return c->team_mapping ? NULL : ns;
}

static void no_group(ctx_t *c, const char *what, const char *name)
{
    char b[300];
    snprintf(b, sizeof b, "%s %s", what, *name ? name : "(none)");
    for (size_t i = 0; i < c->r->un.nnames; i++)
        if (strcmp(c->r->un.names[i], b) == 0) return;
    c->r->un.names = im_realloc(c->r->un.names, (c->r->un.nnames + 1) * sizeof(char *));
    c->r->un.names[c->r->un.nnames++] = im_strdup(b);
}

/* The group of a (namespace, pod) series for team/namespace/model; NULL when it
 * has none (recorded as unattributed). */
static const char *group_of_pod(ctx_t *c, const char *ns, const char *pod)
{
    if (c->o->by == LLM_COST_BY_MODEL) {
        char k[600];
        snprintf(k, sizeof k, "%s\x1f%s", ns, pod);
        for (size_t i = 0; i < c->npod_model; i++)
            if (strcmp(c->pod_model[i], k) == 0) return c->pod_model_v[i];
        no_group(c, "pod with no model:", pod);
        return NULL;
    }
    const char *t = team_of(c, ns);
    if (!t) no_group(c, "namespace with no team:", ns);
    return t;
}

static im_rc load_teams(ctx_t *c)
{
    const cfg_llm_cost_t *cfg = c->o->cfg;
    c->team_mapping = cfg && (cfg->team_label || cfg->nteams);
    if (!cfg || !cfg->team_label || c->o->by != LLM_COST_BY_TEAM) return IM_OK;
    if (!has(c, M_NS_LABELS)) {
        problem(c,
                "llm.cost.team_label is %s but the store has no kube_namespace_labels "
                "(kube-state-metrics with --metric-labels-allowlist=namespaces=[%s])",
                cfg->team_label, cfg->team_label);
        return IM_OK;
    }
    char q[512];
    snprintf(q, sizeof q,
             "max by (namespace, exported_namespace, label_%s) (last_over_time(%s[%s]))",
             cfg->team_label, M_NS_LABELS, c->d);
    promql_result_t res;
    im_rc rc = run(c, q, c->o->to_ms, &res);
    if (rc) return rc;
    char lb[80];
    snprintf(lb, sizeof lb, "label_%s", cfg->team_label);
    for (size_t i = 0; i < res.nseries; i++) {
        const char *ns = lab_x(&res.series[i], "namespace"), *t = lab(&res.series[i], lb);
        if (!*ns || !*t) continue;
        char *k = im_malloc(strlen(ns) + strlen(t) + 2);
        memcpy(k, ns, strlen(ns) + 1);
        memcpy(k + strlen(ns) + 1, t, strlen(t) + 1);
        c->ns_team = im_realloc(c->ns_team, (c->nns_team + 1) * sizeof *c->ns_team);
        c->ns_team[c->nns_team].key = k;
        c->ns_team[c->nns_team++].v = 0;
    }
    promql_result_free(&res);
    return IM_OK;
}

/* ---- Sources ---- */

static im_rc do_reserved(ctx_t *c, bool *have)
{
    llm_cost_by_t by = c->o->by;
    bool cq = by == LLM_COST_BY_CLUSTER_QUEUE || (by == LLM_COST_BY_FLAVOR && !has(c, M_LQ_RES));
    const char *m = cq ? M_CQ_RES : M_LQ_RES;
    *have = false;
    if (by == LLM_COST_BY_MODEL) return IM_OK;
    if (!has(c, m)) {
        if (has(c, M_CQ_RES))
            problem(c, "no kueue_local_queue_resource_reservation: reservations per team need "
                       "Kueue's LocalQueueMetrics feature gate; --by cluster_queue reports them "
                       "per ClusterQueue");
        else
            problem(c, "no Kueue reservation metrics in the period: gpu_hours_reserved is null "
                       "(Kueue's metrics.enableClusterQueueResources and LocalQueueMetrics)");
        return IM_OK;
    }
    *have = true;
    char inner[256];
    snprintf(inner, sizeof inner, "last_over_time(%s{resource=~\"" GPU_RESOURCES "\"}%s)", m, c->w);
    promql_result_t res;
    im_rc rc = gauge(c,
                     cq ? "cluster_queue, flavor, resource"
                        : "namespace, exported_namespace, "
                          "flavor, resource",
                     inner, &res);
    if (rc) return rc;
    for (size_t i = 0; i < res.nseries; i++) {
        const promql_series_t *s = &res.series[i];
        const char *resource = lab(s, "resource"), *flavor = lab(s, "flavor");
        double share = llm_cost_gpu_share(resource);
        if (isnan(share)) {
            problem(c, "Kueue resource %s: cannot tell its share of a GPU; left out", resource);
            continue;
        }
        double h = hours(c, s->points[0].v) * share;
        const char *g;
        if (by == LLM_COST_BY_CLUSTER_QUEUE)
            g = lab(s, "cluster_queue");
        else if (by == LLM_COST_BY_FLAVOR)
            g = flavor;
        else
            g = team_of(c, lab_x(s, "namespace"));
        if (!g) {
            no_group(c, "namespace with no team:", lab_x(s, "namespace"));
            add(&c->r->un.gpu_hours_reserved_no_group, h);
            continue;
        }
        acc_t *a = acc_get(c, g);
        add(&a->f[LLM_COST_RESERVED], h);
        kv_add(&a->res_by_flavor, &a->nres, flavor, h);
    }
    promql_result_free(&res);
    return IM_OK;
}

/* Borrowed and lent GPU-hours of each ClusterQueue (--by cluster_queue). */
static im_rc do_cohort(ctx_t *c, bool *have)
{
    *have = false;
    if (c->o->by != LLM_COST_BY_CLUSTER_QUEUE) return IM_OK;
    if (!has(c, M_CQ_RES) || !has(c, M_CQ_QUOTA)) {
        problem(c, "no kueue_cluster_queue_nominal_quota: borrowed and lent GPU-hours are null "
                   "(Kueue's metrics.enableClusterQueueResources)");
        return IM_OK;
    }
    *have = true;
    char r[200], n[200], l[200], u[1400], inner[4000];
    snprintf(r, sizeof r, "last_over_time(%s{resource=~\"" GPU_RESOURCES "\"}%s)", M_CQ_RES, c->w);
    snprintf(n, sizeof n, "last_over_time(%s{resource=~\"" GPU_RESOURCES "\"}%s)", M_CQ_QUOTA,
             c->w);
    snprintf(l, sizeof l, "last_over_time(%s{resource=~\"" GPU_RESOURCES "\"}%s)", M_CQ_LEND, c->w);
    /* What a queue can lend: its unused quota, at most its lending limit. */
    if (has(c, M_CQ_LEND))
        snprintf(u, sizeof u, "(clamp_min(%s - %s, 0) < %s or %s or clamp_min(%s - %s, 0))", n, r,
                 l, l, n, r);
    else
        snprintf(u, sizeof u, "clamp_min(%s - %s, 0)", n, r);
    for (int lent = 0; lent < 2; lent++) {
        if (!lent)
            snprintf(inner, sizeof inner, "clamp_min(%s - %s, 0)", r, n);
        else /* lendable quota x (cohort's borrowed / cohort's lendable) */
            snprintf(inner, sizeof inner,
                     "%s * on (cohort, flavor, resource) group_left () "
                     "(sum by (cohort, flavor, resource) (clamp_min(%s - %s, 0)) / (sum by "
                     "(cohort, flavor, resource) (%s) > 0))",
                     u, r, n, u);
        promql_result_t res;
        im_rc rc = gauge(c, "cluster_queue, resource", inner, &res);
        if (rc) return rc;
        for (size_t i = 0; i < res.nseries; i++) {
            const promql_series_t *s = &res.series[i];
            double share = llm_cost_gpu_share(lab(s, "resource"));
            if (isnan(share)) continue;
            acc_t *a = acc_get(c, lab(s, "cluster_queue"));
            add(&a->f[lent ? LLM_COST_LENT : LLM_COST_BORROWED], hours(c, s->points[0].v) * share);
        }
        promql_result_free(&res);
    }
    return IM_OK;
}

/* The group of a dcgm-exporter series with its pod labels: the pod's team,
 * namespace or model, or for --by flavor the MIG profile of an instance and
 * the price table's flavor of a whole GPU's modelName (the modelName when the
 * table has none). */
static const char *group_of_gpu(ctx_t *c, const promql_series_t *s)
{
    if (c->o->by != LLM_COST_BY_FLAVOR) return group_of_pod(c, lab(s, c->nsl), lab(s, c->podl));
    const char *prof = lab(s, "GPU_I_PROFILE"), *model = lab(s, "modelName");
    if (*prof) return prof;
    const cfg_llm_cost_t *cfg = c->o->cfg;
    for (size_t i = 0; cfg && i < cfg->nprices; i++)
        if (cfg->prices[i].flavor && cfg->prices[i].gpu_model &&
            strcmp(cfg->prices[i].gpu_model, model) == 0)
            return cfg->prices[i].flavor;
    if (!*model) no_group(c, "GPU with no modelName:", lab(s, "UUID"));
    return *model ? model : NULL;
}

/* A MIG GPU's energy counter is per physical GPU, with no pod: each instance a
 * pod holds gets its compute share of the GPU's energy (an estimate; the
 * slices no pod holds stay unattributed). The queries above counted all of it
 * as held by no pod; this moves the held share to the pods' groups. */
static im_rc mig_energy(ctx_t *c, bool per_group)
{
    const char *am = c->r->alloc_source;
    char inst[300], held[1400];
    snprintf(inst, sizeof inst, "last_over_time(%s{%s!=\"\",GPU_I_PROFILE!=\"\"}%s)", am, c->podl,
             c->w);
    /* per (GPU, pod, profile): instances held, each shared by the pods on it */
    snprintf(held, sizeof held,
             "sum by (UUID, %s, %s, GPU_I_PROFILE, modelName) (count by (UUID, GPU_I_ID, %s, %s, "
             "GPU_I_PROFILE, modelName) (%s) / on (UUID, GPU_I_ID) group_left () count by "
             "(UUID, GPU_I_ID) (%s))",
             c->nsl, c->podl, c->nsl, c->podl, inst, inst);
    char sel[200];
    snprintf(sel, sizeof sel, "%s{%s=\"\",GPU_I_ID=\"\"}", M_ENERGY, c->podl);
    im_buf_t q;
    im_buf_init(&q, 0);
    (void)im_buf_printf(&q,
                        "sum by (%s, %s, GPU_I_PROFILE, modelName) (sum_over_time((sum by (UUID) "
                        "((last_over_time(%s%s) - last_over_time(%s%s) >= 0) or "
                        "(last_over_time(%s%s) and last_over_time(%s%s))) * on "
                        "(UUID) group_right () %s)[%s:%s]))",
                        c->nsl, c->podl, sel, c->w, sel, c->wp, sel, c->w, sel, c->wp, held, c->c_r,
                        c->s);
    promql_result_t res;
    im_rc rc = run(c, q.data, c->c_t, &res);
    im_buf_free(&q);
    if (rc) return rc;
    for (size_t i = 0; i < res.nseries; i++) {
        const promql_series_t *s = &res.series[i];
        double sh = llm_cost_gpu_share(lab(s, "GPU_I_PROFILE"));
        if (isnan(sh)) continue; /* reported above */
        double v = s->points[0].v * sh / 3.6e9;
        c->r->un.energy_kwh_no_pod -= v;
        if (!per_group) continue;
        const char *g = group_of_gpu(c, s);
        if (g) add(&acc_get(c, g)->f[LLM_COST_ENERGY_KWH], v);
    }
    promql_result_free(&res);
    if (c->r->un.energy_kwh_no_pod < 0) c->r->un.energy_kwh_no_pod = 0; /* rounding */
    return IM_OK;
}

/* dcgm-exporter: allocated, busy and energy per pod, and the GPUs no pod holds. */
static im_rc do_gpus(ctx_t *c, bool *have_alloc, bool *have_busy, bool *have_energy)
{
    *have_alloc = *have_busy = *have_energy = false;
    llm_cost_by_t by = c->o->by;
    const char *cand[] = {M_FB_USED, M_GPU_UTIL, M_GR_ACTIVE};
    const char *am = NULL;
    for (size_t i = 0; i < IM_ARRAY_LEN(cand) && !am; i++)
        if (has(c, cand[i])) am = cand[i];
    if (!am) {
        problem(c, "no dcgm-exporter metrics in the period: allocated, busy and energy are null");
        return IM_OK;
    }
    c->r->alloc_source = am;
    bool gr = has(c, M_GR_ACTIVE);
    c->r->busy_source = gr ? M_GR_ACTIVE : has(c, M_GPU_UTIL) ? M_GPU_UTIL : NULL;
    /* Which labels carry the pod: exported_* when the scrape added its own. */
    char q[1200];
    snprintf(q, sizeof q, "count(last_over_time(%s{exported_pod!=\"\"}[%s]))", am, c->d);
    promql_result_t res;
    im_rc rc = run(c, q, c->o->to_ms, &res);
    if (rc) return rc;
    bool exported = res.nseries > 0;
    promql_result_free(&res);
    c->nsl = exported ? "exported_namespace" : "namespace";
    c->podl = exported ? "exported_pod" : "pod";
    snprintf(q, sizeof q, "count(last_over_time(%s{%s!=\"\"}[%s]))", am, c->podl, c->d);
    if ((rc = run(c, q, c->o->to_ms, &res))) return rc;
    bool attributed = res.nseries > 0;
    promql_result_free(&res);
    if (!attributed)
        problem(c, "dcgm-exporter series carry no pod: allocated GPU-hours need its pod "
                   "attribution (--kubernetes, the default in the GPU operator)");
    bool per_group = by != LLM_COST_BY_CLUSTER_QUEUE;
    if (!per_group)
        problem(c, "--by cluster_queue: allocated, busy and energy are null (Kueue's metrics do "
                   "not say which ClusterQueue a LocalQueue feeds, so pods cannot be "
                   "attributed to one; --by team or --by flavor have them)");
    *have_alloc = per_group && attributed;
    if (!c->r->busy_source)
        problem(c, "neither DCGM_FI_PROF_GR_ENGINE_ACTIVE nor DCGM_FI_DEV_GPU_UTIL: busy is null");
    *have_busy = per_group && attributed && c->r->busy_source;
    *have_energy = per_group && attributed && has(c, M_ENERGY);
    if (!has(c, M_ENERGY))
        problem(c, "no DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION: energy is null (a default counter "
                   "of dcgm-exporter)");
    const char *busy_expr = gr ? M_GR_ACTIVE : M_GPU_UTIL;
    const char *busy_scale = gr ? "" : " / 100";
    c->r->un.gpu_hours_no_pod = 0;
    c->r->un.gpu_hours_busy_no_pod = c->r->busy_source ? 0 : NAN;
    c->r->un.energy_kwh_no_pod = has(c, M_ENERGY) ? 0 : NAN;
    char by_pod[200], key[] = "UUID, GPU_I_ID";
    snprintf(by_pod, sizeof by_pod, "%s, %s, GPU_I_PROFILE, modelName", c->nsl, c->podl);
    for (int kind = 0; kind < 3; kind++) { /* allocated, busy, energy */
        const char *m = kind == 0 ? am : kind == 1 ? busy_expr : M_ENERGY;
        if (kind == 1 && !c->r->busy_source) continue;
        if (kind == 2 && !has(c, M_ENERGY)) continue;
        for (int withpod = 0; withpod < 2; withpod++) {
            if (withpod && !attributed) continue;
            char sel[300], inner[1600];
            snprintf(sel, sizeof sel, "%s{%s%s\"\"}", m, c->podl, withpod ? "!=" : "=");
            const char *by_cols = withpod ? by_pod : "GPU_I_PROFILE, modelName";
            char share[700];
            if (withpod)
                snprintf(share, sizeof share,
                         " / on (%s) group_left () count by (%s) (last_over_time(%s%s))", key, key,
                         sel, c->w);
            else
                share[0] = '\0';
            if (kind == 2) {
                /* sum by (key, cols) of the differences, shared */
                char by2[400], div[800];
                snprintf(by2, sizeof by2, "%s, %s", key, by_cols);
                snprintf(div, sizeof div, "%s", share);
                /* counter() sums by by_cols of (delta / count): build by hand */
                im_buf_t qb;
                im_buf_init(&qb, 0);
                (void)im_buf_printf(
                    &qb,
                    "sum by (%s) (sum_over_time((sum by (%s) ((last_over_time(%s%s) - "
                    "last_over_time(%s%s) >= 0) or (last_over_time(%s%s) and "
                    "last_over_time(%s%s)))%s)[%s:%s]))",
                    by_cols, by2, sel, c->w, sel, c->wp, sel, c->w, sel, c->wp, div, c->c_r, c->s);
                rc = run(c, qb.data, c->c_t, &res);
                im_buf_free(&qb);
            } else {
                if (kind == 0)
                    snprintf(inner, sizeof inner, "count by (%s, %s) (last_over_time(%s%s))%s", key,
                             by_cols, sel, c->w, share);
                else
                    snprintf(inner, sizeof inner, "sum by (%s, %s) (last_over_time(%s%s))%s%s", key,
                             by_cols, sel, c->w, busy_scale, share);
                rc = gauge(c, by_cols, inner, &res);
            }
            if (rc) return rc;
            for (size_t i = 0; i < res.nseries; i++) {
                const promql_series_t *s = &res.series[i];
                const char *prof = lab(s, "GPU_I_PROFILE");
                double sh = llm_cost_gpu_share(prof);
                if (isnan(sh)) {
                    problem(c, "MIG profile %s: cannot tell its share of a GPU; left out", prof);
                    continue;
                }
                double v = s->points[0].v * sh;
                v = kind == 2 ? v / 3.6e9 : hours(c, v); /* mJ -> kWh */
                if (!withpod) {
                    double *t = kind == 0   ? &c->r->un.gpu_hours_no_pod
                                : kind == 1 ? &c->r->un.gpu_hours_busy_no_pod
                                            : &c->r->un.energy_kwh_no_pod;
                    add(t, v);
                    continue;
                }
                if (!per_group) continue;
                const char *g = group_of_gpu(c, s);
                if (!g) {
                    if (kind == 0) add(&c->r->un.gpu_hours_allocated_no_group, v);
                    continue;
                }
                acc_t *a = acc_get(c, g);
                add(&a->f[kind == 0   ? LLM_COST_ALLOCATED
                          : kind == 1 ? LLM_COST_BUSY
                                      : LLM_COST_ENERGY_KWH],
                    v);
                if (kind == 0) kv_add(&a->alloc_by_model, &a->nalloc, lab(s, "modelName"), v);
            }
            promql_result_free(&res);
        }
    }
    if (has(c, M_ENERGY) && attributed) return mig_energy(c, per_group);
    return IM_OK;
}

/* Token counters of every model server present: in, out, cached. Also fills
 * the pod -> model map (before do_gpus, which uses it for --by model). */
static im_rc do_tokens(ctx_t *c, bool have[3])
{
    const llm_serving_t *sv = llm_serving_get();
    const llm_signal_t sigs[3] = {LLM_SIG_PROMPT_TOKENS, LLM_SIG_GENERATION_TOKENS,
                                  LLM_SIG_CACHED_TOKENS};
    const llm_cost_field_t fields[3] = {LLM_COST_INPUT_TOKENS, LLM_COST_OUTPUT_TOKENS,
                                        LLM_COST_CACHED_TOKENS};
    have[0] = have[1] = have[2] = false;
    llm_cost_by_t by = c->o->by;
    bool per_group =
        by == LLM_COST_BY_TEAM || by == LLM_COST_BY_NAMESPACE || by == LLM_COST_BY_MODEL;
    for (int e = 0; e < llm_serving_engine_count(sv); e++) {
        const llm_engine_info_t *info = llm_serving_engine(sv, e);
        if (llm_cost_frontend(info->id)) continue;
        for (int k = 0; k < 3; k++) {
            const llm_signal_map_t *m = llm_serving_pick(sv, e, sigs[k], has_name, c);
            if (!m) continue;
            have[k] = true;
            char sel[400], by_cols[200];
            snprintf(sel, sizeof sel, "%s%s%s%s", m->name, *m->selector ? "{" : "", m->selector,
                     *m->selector ? "}" : "");
            snprintf(by_cols, sizeof by_cols,
                     "namespace, exported_namespace, pod, exported_pod, %s", info->model_label);
            promql_result_t res;
            im_rc rc = counter(c, by_cols, sel, NULL, &res);
            if (rc) return rc;
            for (size_t i = 0; i < res.nseries; i++) {
                const promql_series_t *s = &res.series[i];
                const char *ns = lab_x(s, "namespace"), *pod = lab_x(s, "pod");
                const char *model = lab(s, info->model_label);
                double v = s->points[0].v;
                if (*model && *pod) {
                    char key[600];
                    snprintf(key, sizeof key, "%s\x1f%s", ns, pod);
                    bool found = false;
                    for (size_t j = 0; j < c->npod_model && !found; j++)
                        found = strcmp(c->pod_model[j], key) == 0;
                    if (!found) {
                        c->pod_model =
                            im_realloc(c->pod_model, (c->npod_model + 1) * sizeof(char *));
                        c->pod_model_v =
                            im_realloc(c->pod_model_v, (c->npod_model + 1) * sizeof(char *));
                        c->pod_model[c->npod_model] = im_strdup(key);
                        c->pod_model_v[c->npod_model++] = im_strdup(model);
                    }
                }
                if (!per_group) continue;
                const char *g;
                if (by == LLM_COST_BY_MODEL) {
                    g = *model ? model : NULL;
                    if (!g) no_group(c, "series with no model label:", m->name);
                } else {
                    g = team_of(c, ns);
                    if (!g) no_group(c, "namespace with no team:", ns);
                }
                if (!g) {
                    if (k == 1) add(&c->r->un.output_tokens_no_group, v);
                    continue;
                }
                add(&acc_get(c, g)->f[fields[k]], v);
            }
            promql_result_free(&res);
        }
    }
    if (!have[1]) problem(c, "no engine token counters in the period: tokens are null");
    return IM_OK;
}

/* ---- Figures ---- */

static int row_cmp(const void *x, const void *y)
{
    return strcmp(((const llm_cost_row_t *)x)->group, ((const llm_cost_row_t *)y)->group);
}

static double price_of(ctx_t *c, const char *key, bool flavor)
{
    const cfg_llm_cost_t *cfg = c->o->cfg;
    double p = cfg_llm_cost_price(cfg, key, flavor);
    if (isnan(p)) {
        c->r->missing_price = true;
        problem(c, "no %s price for %s \"%s\": add it to llm.cost.prices (%s: ...) to get its cost",
                cfg_cost_pricing_name(cfg ? cfg->pricing : CFG_COST_ON_DEMAND),
                flavor ? "flavor" : "gpu_model", key, flavor ? "flavor" : "gpu_model");
    }
    return p;
}

static void finish_row(ctx_t *c, acc_t *a, llm_cost_row_t *row, const bool have[LLM_COST_NFIELDS])
{
    double *f = row->f;
    memcpy(f, a->f, sizeof a->f);
    for (int k = 0; k < LLM_COST_NFIELDS; k++)
        if (have[k] && isnan(f[k]))
            f[k] = 0;
        else if (!have[k])
            f[k] = NAN;
    double basis = NAN;
    double cost = NAN;
    if (!isnan(f[LLM_COST_RESERVED]) && f[LLM_COST_RESERVED] > 0) {
        row->basis = "reserved";
        basis = f[LLM_COST_RESERVED];
        cost = 0;
        for (size_t i = 0; i < a->nres; i++)
            cost += a->res_by_flavor[i].v * price_of(c, a->res_by_flavor[i].key, true);
    } else if (!isnan(f[LLM_COST_ALLOCATED]) && f[LLM_COST_ALLOCATED] > 0) {
        row->basis = "allocated";
        basis = f[LLM_COST_ALLOCATED];
        cost = 0;
        for (size_t i = 0; i < a->nalloc; i++)
            cost += a->alloc_by_model[i].v * price_of(c, a->alloc_by_model[i].key, false);
    } else if (!isnan(f[LLM_COST_RESERVED]) || !isnan(f[LLM_COST_ALLOCATED])) {
        basis = 0;
        cost = 0; /* held nothing: costs nothing */
    }
    f[LLM_COST_COST] = cost;
    f[LLM_COST_IDLE] =
        isnan(basis) || isnan(f[LLM_COST_BUSY]) ? NAN : fmax(0, basis - f[LLM_COST_BUSY]);
    f[LLM_COST_IDLE_COST] = isnan(cost) || isnan(f[LLM_COST_IDLE]) || basis <= 0
                                ? (basis == 0 && !isnan(cost) && !isnan(f[LLM_COST_IDLE]) ? 0 : NAN)
                                : cost * f[LLM_COST_IDLE] / basis;
    double ep = c->o->cfg ? c->o->cfg->energy_price_per_kwh : NAN;
    f[LLM_COST_ENERGY_COST] = f[LLM_COST_ENERGY_KWH] * ep;
    double out = f[LLM_COST_OUTPUT_TOKENS];
    f[LLM_COST_TOKENS_PER_GPU_HOUR] = isnan(out) || isnan(basis) || basis <= 0 ? NAN : out / basis;
    f[LLM_COST_PER_M_OUTPUT] = isnan(out) || out <= 0 || isnan(cost) ? NAN : cost / out * 1e6;
}

static void fail_free(ctx_t *c)
{
    for (size_t i = 0; i < c->naccs; i++) {
        im_free(c->accs[i].key);
        kv_free(c->accs[i].res_by_flavor, c->accs[i].nres);
        kv_free(c->accs[i].alloc_by_model, c->accs[i].nalloc);
    }
    im_free(c->accs);
    kv_free(c->ns_team, c->nns_team);
    for (size_t i = 0; i < c->npod_model; i++) {
        im_free(c->pod_model[i]);
        im_free(c->pod_model_v[i]);
    }
    im_free(c->pod_model);
    im_free(c->pod_model_v);
    query_strs_free(c->names, c->nnames);
}

static int str_cmp(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Round steps and scrape intervals, in seconds. */
static const int nice_steps[] = {1,   2,   5,   10,   15,   20,   30,    60,   120,
                                 300, 600, 900, 1800, 3600, 7200, 21600, 86400};

/* The step against the scrape interval (the most samples an `up` series has
 * in the period's last 5 minutes; nothing when the data ends earlier): a step shorter than the
 * interval leaves windows with no sample, so the default step is raised to it, and a --step below
 * it is reported. Then the windows of the period's step times. */
static im_rc pick_step(ctx_t *c)
{
    const llm_cost_opts_t *o = c->o;
    if (has(c, "up")) {
        char q[128];
        /* the last 5 minutes of the period (the whole of a shorter one) */
        int64_t win = c->D < 300000 ? c->D : 300000;
        char wd[32];
        fmt_dur(wd, sizeof wd, win);
        snprintf(q, sizeof q, "max(count_over_time(up[%s]))", wd);
        promql_result_t res;
        im_rc rc = run(c, q, o->to_ms, &res);
        if (rc) return rc;
        double n = res.nseries ? res.series[0].points[0].v : 0;
        promql_result_free(&res);
        if (n >= 2) {
            /* the usual intervals: D / n is a little short of one when the
             * range holds a sample at both ends */
            double est = (double)win / n * 0.95;
            int64_t iv = 3600000;
            for (size_t i = 0; i < IM_ARRAY_LEN(nice_steps); i++)
                if (nice_steps[i] * 1000.0 >= est) {
                    iv = nice_steps[i] * 1000LL;
                    break;
                }
            if (o->step_ms <= 0 && iv > c->S && iv <= c->D)
                c->S = iv;
            else if (o->step_ms > 0 && iv > c->S * 11 / 10)
                problem(c,
                        "--step %llds is shorter than the scrape interval (about %llds): steps "
                        "with no sample count nothing; use --step %llds or more",
                        (long long)(c->S / 1000), (long long)(iv / 1000), (long long)(iv / 1000));
        }
    }
    c->r->step_ms = c->S;
    fmt_dur(c->s, sizeof c->s, c->S);
    {
        /* The period's step times are t_k = to - kS, k = 0..K-1 (K = D / S):
         * each counts the samples in (t_k - S, t_k], so the period is
         * (to - KS, to] = (from, to] when D is a multiple of S, like a
         * Prometheus range (docs/cost.md). Subquery points are multiples of S:
         * they are taken at t_k + phi, the windows shifted back by phi. */
        int64_t S = c->S, K = c->D / S, phi = (S - o->to_ms % S) % S;
        c->g_t = c->c_t = o->to_ms + phi;
        fmt_dur(c->g_r, sizeof c->g_r, (K - 1) * S + S / 2);
        fmt_dur(c->c_r, sizeof c->c_r, (K - 1) * S + S / 2);
        char o1[32], o2[32];
        fmt_dur(o1, sizeof o1, phi);
        fmt_dur(o2, sizeof o2, phi + S);
        snprintf(c->w, sizeof c->w, "[%s]%s%s", c->s, phi ? " offset " : "", phi ? o1 : "");
        snprintf(c->wp, sizeof c->wp, "[%s] offset %s", c->s, o2);
    }
    return IM_OK;
}

im_rc llm_cost_compute(query_backend_t *b, const llm_cost_opts_t *o, llm_cost_report_t *r,
                       im_err_t *err)
{
    memset(r, 0, sizeof *r);
    r->un.gpu_hours_no_pod = r->un.gpu_hours_busy_no_pod = r->un.energy_kwh_no_pod = NAN;
    r->un.gpu_hours_reserved_no_group = r->un.gpu_hours_allocated_no_group = NAN;
    r->un.output_tokens_no_group = NAN;
    r->from_ms = o->from_ms;
    r->to_ms = o->to_ms;
    r->by = o->by;
    r->cfg = o->cfg;
    r->backend = im_strdup(query_backend_describe(b));
    r->total.group = im_strdup("total");
    if (o->by >= LLM_COST_NBY) return im_err_set(err, IM_EINVAL, "unknown grouping");
    if (o->to_ms <= o->from_ms)
        return im_err_set(err, IM_EINVAL, "the period is empty: --to must be after --from");
    ctx_t c = {.b = b, .o = o, .r = r, .err = err};
    c.D = o->to_ms - o->from_ms;
    c.S = o->step_ms;
    if (c.S <= 0) {
        c.S = LLM_COST_DEFAULT_STEP_MS;
        int64_t min = (c.D + LLM_COST_MAX_STEPS - 1) / LLM_COST_MAX_STEPS;
        for (size_t i = 0; c.S < min && i < IM_ARRAY_LEN(nice_steps); i++)
            c.S = nice_steps[i] * 1000LL; /* a round step: 7d -> 2m */
        if (c.S < min) c.S = (min + 999) / 1000 * 1000;
    }
    if (c.S > c.D) c.S = c.D;
    if (c.D / c.S > (int64_t)LLM_COST_MAX_STEPS * 100)
        return im_err_set(err, IM_ELIMIT,
                          "--step %lld ms gives more than %d steps over the period: raise --step",
                          (long long)c.S, LLM_COST_MAX_STEPS * 100);
    if (o->from_ms < 0 || o->to_ms < 0)
        return im_err_set(err, IM_EINVAL, "the period must be after 1970-01-01");
    fmt_dur(c.d, sizeof c.d, c.D);
    im_rc rc =
        query_label_values(b, "__name__", NULL, 0, o->from_ms, o->to_ms, &c.names, &c.nnames, err);
    if (rc) goto done;
    if (c.nnames) qsort(c.names, c.nnames, sizeof *c.names, str_cmp);
    if ((rc = pick_step(&c))) goto done;
    bool tok[3], res_have, coh, alloc, busy, energy;
    if ((rc = load_teams(&c))) goto done;
    if ((rc = do_reserved(&c, &res_have))) goto done;
    if ((rc = do_cohort(&c, &coh))) goto done;
    if ((rc = do_tokens(&c, tok))) goto done;
    if ((rc = do_gpus(&c, &alloc, &busy, &energy))) goto done;
    if (!res_have && !coh && !r->alloc_source && !tok[1] && !tok[0]) {
        char f[40], t[40];
        im_time_format_rfc3339(o->from_ms, f, sizeof f);
        im_time_format_rfc3339(o->to_ms, t, sizeof t);
        rc = im_err_set(err, IM_ENOTFOUND,
                        "no data between %s and %s in %s: no Kueue, dcgm-exporter or engine "
                        "series (is the period right?)",
                        f, t, r->backend);
        goto done;
    }
    bool have[LLM_COST_NFIELDS] = {0};
    have[LLM_COST_RESERVED] = res_have;
    have[LLM_COST_ALLOCATED] = alloc;
    have[LLM_COST_BUSY] = busy;
    have[LLM_COST_BORROWED] = have[LLM_COST_LENT] = coh;
    have[LLM_COST_ENERGY_KWH] = energy;
    bool per_group =
        o->by == LLM_COST_BY_TEAM || o->by == LLM_COST_BY_NAMESPACE || o->by == LLM_COST_BY_MODEL;
    if (!per_group && (tok[0] || tok[1]))
        problem(&c,
                "--by %s: tokens are null (a model server's tokens are not split by "
                "flavor or ClusterQueue; --by team or --by model have them)",
                llm_cost_by_name(o->by));
    have[LLM_COST_INPUT_TOKENS] = per_group && tok[0];
    have[LLM_COST_OUTPUT_TOKENS] = per_group && tok[1];
    have[LLM_COST_CACHED_TOKENS] = per_group && tok[2];
    if (!o->cfg || !o->cfg->nprices)
        problem(&c, "no price table: costs are null (llm.cost.prices in --config.file)");
    r->rows = im_calloc(c.naccs ? c.naccs : 1, sizeof *r->rows);
    for (size_t i = 0; i < c.naccs; i++) {
        if (o->group && strcmp(o->group, c.accs[i].key) != 0) continue;
        llm_cost_row_t *row = &r->rows[r->nrows++];
        row->group = im_strdup(c.accs[i].key);
        finish_row(&c, &c.accs[i], row, have);
    }
    if (o->group && r->nrows == 0) {
        im_buf_t l;
        im_buf_init(&l, 4096);
        for (size_t i = 0; i < c.naccs; i++)
            (void)im_buf_printf(&l, "%s%s", i ? ", " : "", c.accs[i].key);
        rc = im_err_set(err, IM_ENOTFOUND, "no %s \"%s\" in the period (the period has: %s)",
                        llm_cost_by_name(o->by), o->group, l.len ? l.data : "none");
        im_buf_free(&l);
        goto done;
    }
    if (r->nrows) qsort(r->rows, r->nrows, sizeof *r->rows, row_cmp);
    for (int k = 0; k < LLM_COST_NFIELDS; k++) {
        r->total.f[k] = NAN;
        bool any_null = false;
        for (size_t i = 0; i < r->nrows; i++) {
            if (isnan(r->rows[i].f[k]))
                any_null = true;
            else
                add(&r->total.f[k], r->rows[i].f[k]);
        }
        if (any_null && (k == LLM_COST_COST || k == LLM_COST_IDLE_COST)) r->total.f[k] = NAN;
    }
    double tb = !isnan(r->total.f[LLM_COST_RESERVED]) && r->total.f[LLM_COST_RESERVED] > 0
                    ? r->total.f[LLM_COST_RESERVED]
                    : r->total.f[LLM_COST_ALLOCATED];
    r->total.basis = isnan(tb)                             ? NULL
                     : tb == r->total.f[LLM_COST_RESERVED] ? "reserved"
                                                           : "allocated";
    double tout = r->total.f[LLM_COST_OUTPUT_TOKENS];
    r->total.f[LLM_COST_TOKENS_PER_GPU_HOUR] =
        isnan(tb) || tb <= 0 || isnan(tout) ? NAN : tout / tb;
    r->total.f[LLM_COST_PER_M_OUTPUT] = isnan(tout) || tout <= 0 || isnan(r->total.f[LLM_COST_COST])
                                            ? NAN
                                            : r->total.f[LLM_COST_COST] / tout * 1e6;
    rc = IM_OK;
done:
    fail_free(&c);
    return rc;
}

void llm_cost_report_free(llm_cost_report_t *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nrows; i++) im_free(r->rows[i].group);
    im_free(r->rows);
    im_free(r->total.group);
    for (size_t i = 0; i < r->nproblems; i++) im_free(r->problems[i]);
    im_free(r->problems);
    for (size_t i = 0; i < r->un.nnames; i++) im_free(r->un.names[i]);
    im_free(r->un.names);
    im_free(r->backend);
    for (size_t i = 0; i < r->nqueries; i++) im_free(r->queries[i]);
    im_free(r->queries);
    im_free(r->query_ms);
    memset(r, 0, sizeof *r);
}

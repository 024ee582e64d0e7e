/* doctor.c — gathers what a diagnosis needs through a query backend (see
 * doctor.h): the names present, the engines they reveal (llm/serving.h), then
 * one range query per signal and engine grouped by model and pod, the GPU rows
 * of dcgm-exporter, Kueue's queues and the scrape health; it turns the answers
 * into the per-step series of doctor_int.h and hands them to the rules
 * (doctor_rules.c). */
#include "util/base.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "labels/labels.h"
#include "llm/doctor_int.h"
#include "llm/serving.h"
#include "util/timeutil.h"

/* ---- Small helpers ---- */

double *doc_nan_series(size_t n)
{
    double *v = im_malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = NAN;
    return v;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

typedef struct nameset {
    char **v;
    size_t n;
} nameset_t;

static bool set_has(const nameset_t *s, const char *name)
{
    return s->n && bsearch(&name, s->v, s->n, sizeof *s->v, cmp_str) != NULL;
}

static bool set_has_fn(void *ctx, const char *name, size_t len)
{
    char b[512];
    if (len >= sizeof b) return false;
    memcpy(b, name, len);
    b[len] = 0;
    return set_has(ctx, b);
}

/* A family name, or its histogram/counter series names. */
static bool set_has_family(const nameset_t *s, const char *name)
{
    static const char *const suf[] = {"", "_bucket", "_count", "_total"};
    char b[512];
    for (size_t i = 0; i < IM_ARRAY_LEN(suf); i++) {
        snprintf(b, sizeof b, "%s%s", name, suf[i]);
        if (set_has(s, b)) return true;
    }
    return false;
}

static void set_free(nameset_t *s)
{
    query_strs_free(s->v, s->n);
    s->v = NULL;
    s->n = 0;
}

/* ---- Gathering ---- */

/* One range query of the run: the gathering runs twice, first collecting the
 * queries (collect = true: every answer is empty), then, once they have been
 * answered in parallel (llm.doctor.parallel threads), for real, taking each
 * answer from its job. The queries depend only on the names present, never on
 * an earlier answer, so both passes send the same set. */
typedef struct qjob {
    char *expr;
    query_answer_t a;
    im_rc rc;
    im_err_t err;
} qjob_t;

typedef struct gctx {
    const llm_doctor_opts_t *o;
    query_backend_t *b;
    doc_data_t *d;
    llm_doctor_report_t *rep;
    im_err_t *err;
    int64_t end_ms, rate_ms;
    const llm_serving_t *sv;
    nameset_t names;
    bool collect;
    qjob_t *jobs;
    size_t njobs;
    /* the parallel pass */
    pthread_mutex_t mu;
    size_t next;
} gctx_t;

static qjob_t *job_find(gctx_t *g, const char *expr)
{
    for (size_t i = 0; i < g->njobs; i++)
        if (!strcmp(g->jobs[i].expr, expr)) return &g->jobs[i];
    return NULL;
}

static void job_run(gctx_t *g, qjob_t *j)
{
    query_req_t r = {.op = QUERY_RANGE,
                     .want = QUERY_WANT_RESULT,
                     .expr = j->expr,
                     .start_ms = g->d->start_ms,
                     .end_ms = g->end_ms,
                     .step_ms = g->d->step_ms,
                     .cancel = g->o->cancel};
    im_err_clear(&j->err);
    j->rc = query_backend_do(g->b, &r, &j->a, &j->err);
}

static void *job_worker(void *arg)
{
    gctx_t *g = arg;
    for (;;) {
        pthread_mutex_lock(&g->mu);
        size_t i = g->next++;
        pthread_mutex_unlock(&g->mu);
        if (i >= g->njobs) return NULL;
        job_run(g, &g->jobs[i]);
    }
}

/* Answers every collected query, with up to llm.doctor.parallel threads. */
static void jobs_run(gctx_t *g)
{
    size_t nt = (size_t)IM_MAX(g->d->dc.parallel, 1);
    if (nt > g->njobs) nt = g->njobs;
    g->rep->queries += (int)g->njobs;
    g->next = 0;
    pthread_mutex_init(&g->mu, NULL);
    pthread_t th[64];
    size_t started = 0;
    for (size_t i = 1; i < nt && i < IM_ARRAY_LEN(th); i++)
        if (pthread_create(&th[started], NULL, job_worker, g) == 0) started++;
    (void)job_worker(g); /* this thread too (alone when no thread could start) */
    for (size_t i = 0; i < started; i++) pthread_join(th[i], NULL);
    pthread_mutex_destroy(&g->mu);
}

static void jobs_free(gctx_t *g)
{
    for (size_t i = 0; i < g->njobs; i++) {
        im_free(g->jobs[i].expr);
        query_answer_free(&g->jobs[i].a);
    }
    im_free(g->jobs);
    g->jobs = NULL;
    g->njobs = 0;
}

/* A row of a grouped answer. */
typedef struct row {
    const char *model, *pod, *node, *key; /* borrowed from the answer's labels ("" if none) */
    double *v;                            /* owned until taken */
} row_t;

typedef struct answer {
    query_answer_t a;
    row_t *rows;
    size_t nrows;
} answer_t;

static const char *lab(const im_labels_t *ls, const char *name)
{
    if (!name) return "";
    const im_istr_t *s = im_labels_get(ls, name);
    return s ? s->s : "";
}

static void answer_free(answer_t *an)
{
    for (size_t i = 0; i < an->nrows; i++) im_free(an->rows[i].v);
    im_free(an->rows);
    query_answer_free(&an->a);
    memset(an, 0, sizeof *an);
}

/* Runs a range query over the window; rows get model/pod/node/key from the
 * named labels (pod_alt: used when pod_label's value is empty). */
static im_rc range_query(gctx_t *g, const char *expr, const char *model_label,
                         const char *pod_label, const char *pod_alt, const char *node_label,
                         const char *key_label, answer_t *an)
{
    memset(an, 0, sizeof *an);
    doc_data_t *d = g->d;
    qjob_t *j = job_find(g, expr);
    if (g->collect) {
        if (!j) {
            g->jobs = im_realloc(g->jobs, (g->njobs + 1) * sizeof *g->jobs);
            j = &g->jobs[g->njobs++];
            memset(j, 0, sizeof *j);
            j->expr = im_strdup(expr);
        }
        return IM_OK;
    }
    im_rc rc;
    if (j && j->rc == IM_OK && j->a.result.type != PROMQL_RESULT_NONE) {
        an->a = j->a; /* taken: a query asked twice is answered again below */
        memset(&j->a, 0, sizeof j->a);
        rc = IM_OK;
    } else if (j && j->rc != IM_OK) {
        rc = j->rc;
        if (g->err) *g->err = j->err;
    } else {
        query_req_t r = {.op = QUERY_RANGE,
                         .want = QUERY_WANT_RESULT,
                         .expr = expr,
                         .start_ms = d->start_ms,
                         .end_ms = g->end_ms,
                         .step_ms = d->step_ms,
                         .cancel = g->o->cancel};
        g->rep->queries++;
        rc = query_backend_do(g->b, &r, &an->a, g->err);
    }
    if (rc != IM_OK) {
        im_err_prefix(g->err, "doctor query %s", expr);
        return rc;
    }
    const promql_result_t *res = &an->a.result;
    if (res->type != PROMQL_RESULT_MATRIX) return IM_OK;
    if ((int64_t)res->nseries > d->dc.max_series)
        return im_err_set(g->err, IM_ELIMIT,
                          "doctor query %s returned %zu series, over the limit of %lld "
                          "(llm.doctor.max_series; or narrow it with --model)",
                          expr, res->nseries, (long long)d->dc.max_series);
    an->rows = im_calloc(res->nseries ? res->nseries : 1, sizeof *an->rows);
    for (size_t i = 0; i < res->nseries; i++) {
        const promql_series_t *s = &res->series[i];
        row_t *rw = &an->rows[an->nrows++];
        rw->model = lab(s->labels, model_label);
        rw->pod = lab(s->labels, pod_label);
        if (!*rw->pod && pod_alt) rw->pod = lab(s->labels, pod_alt);
        rw->node = lab(s->labels, node_label);
        if (!*rw->node) rw->node = lab(s->labels, "Hostname");
        rw->key = lab(s->labels, key_label);
        rw->v = doc_nan_series(d->nsteps);
        for (size_t k = 0; k < s->npoints; k++) {
            int64_t off = s->points[k].t_ms - d->start_ms;
            if (off < 0 || off % d->step_ms) continue;
            size_t idx = (size_t)(off / d->step_ms);
            if (idx < d->nsteps) rw->v[idx] = s->points[k].v;
        }
    }
    return IM_OK;
}

/* Appends "{selector,model_label="M"}" (or nothing) to b. */
static void put_selector(gctx_t *g, im_buf_t *b, const char *model_label, const char *sel)
{
    bool filt = g->o->model && model_label;
    if (!(sel && *sel) && !filt) return;
    (void)im_buf_putc(b, '{');
    if (sel && *sel) (void)im_buf_puts(b, sel);
    if (filt) {
        if (sel && *sel) (void)im_buf_putc(b, ',');
        (void)im_buf_printf(b, "%s=", model_label);
        (void)im_quote_string(b, g->o->model, strlen(g->o->model));
    }
    (void)im_buf_putc(b, '}');
}

typedef enum qform {
    QF_GAUGE_SUM,  /* sum by (G) (name) */
    QF_GAUGE_MAX,  /* max by (G) (name) */
    QF_RATE,       /* sum by (G) (rate(name[R])) */
    QF_HIST_SUM,   /* sum by (G) (rate(name_sum[R])) */
    QF_HIST_COUNT, /* sum by (G) (rate(name_count[R])) */
    QF_P95,        /* histogram_quantile(0.95, sum by (model, le) (rate(name_bucket[R]))) */
} qform_t;

static char *build_query(gctx_t *g, qform_t f, const char *name, const char *sel,
                         const char *model_label, const char *group)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    char rw[32];
    im_duration_format(g->rate_ms, rw, sizeof rw);
    switch (f) {
    case QF_GAUGE_SUM:
    case QF_GAUGE_MAX:
        (void)im_buf_printf(&b, "%s by (%s) (%s", f == QF_GAUGE_SUM ? "sum" : "max", group, name);
        put_selector(g, &b, model_label, sel);
        (void)im_buf_putc(&b, ')');
        break;
    case QF_RATE:
    case QF_HIST_SUM:
    case QF_HIST_COUNT:
        (void)im_buf_printf(&b, "sum by (%s) (rate(%s%s", group, name,
                            f == QF_HIST_SUM     ? "_sum"
                            : f == QF_HIST_COUNT ? "_count"
                                                 : "");
        put_selector(g, &b, model_label, sel);
        (void)im_buf_printf(&b, "[%s]))", rw);
        break;
    case QF_P95:
        (void)im_buf_printf(&b, "histogram_quantile(0.95, sum by (%s, le) (rate(%s_bucket",
                            model_label, name);
        put_selector(g, &b, model_label, sel);
        (void)im_buf_printf(&b, "[%s])))", rw);
        break;
    }
    return im_buf_steal(&b, NULL);
}

static doc_model_t *model_get(doc_data_t *d, const char *engine, const char *ename,
                              const char *model)
{
    for (size_t i = 0; i < d->nmodels; i++)
        if (!strcmp(d->models[i].model, model) && !strcmp(d->models[i].engine, engine))
            return &d->models[i];
    d->models = im_realloc(d->models, (d->nmodels + 1) * sizeof *d->models);
    doc_model_t *m = &d->models[d->nmodels++];
    memset(m, 0, sizeof *m);
    m->model = im_strdup(model);
    m->engine = engine;
    m->ename = ename;
    return m;
}

static doc_pod_t *pod_get(doc_model_t *m, const char *pod, const char *node)
{
    for (size_t i = 0; i < m->npods; i++)
        if (!strcmp(m->pods[i].name, pod)) {
            if (!*m->pods[i].node && *node) {
                im_free(m->pods[i].node);
                m->pods[i].node = im_strdup(node);
            }
            return &m->pods[i];
        }
    m->pods = im_realloc(m->pods, (m->npods + 1) * sizeof *m->pods);
    doc_pod_t *p = &m->pods[m->npods++];
    memset(p, 0, sizeof *p);
    p->name = im_strdup(pod);
    p->node = im_strdup(node);
    return p;
}

/* v += w, NaN-aware (NaN + x = x). */
static void add_into(double *v, const double *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isnan(w[i])) v[i] = isnan(v[i]) ? w[i] : v[i] + w[i];
}

/* Per-model sum of the rows (model-level signal), and optionally per pod. */
typedef enum podfield { PF_NONE, PF_WAITING, PF_RUNNING, PF_KV, PF_GEN } podfield_t;

static double **pod_slot(doc_pod_t *p, podfield_t f)
{
    switch (f) {
    case PF_WAITING: return &p->waiting;
    case PF_RUNNING: return &p->running;
    case PF_KV: return &p->kv;
    case PF_GEN: return &p->gen;
    case PF_NONE: break;
    }
    return NULL;
}

typedef struct eng {
    int e;
    const llm_engine_info_t *info;
} eng_t;

/* Sums the rows into the models' signal `ds` (creating models and pods). For
 * kv (mean over pods) the sum is divided by the pod count per step later. */
static void take_rows(gctx_t *g, const eng_t *en, answer_t *an, int ds, podfield_t pf,
                      const char *metric, const char *query)
{
    doc_data_t *d = g->d;
    for (size_t i = 0; i < an->nrows; i++) {
        row_t *rw = &an->rows[i];
        if (!*rw->model) continue;
        doc_model_t *m = model_get(d, en->info->id, en->info->name, rw->model);
        doc_sig_t *s = &m->s[ds];
        if (!s->v) {
            s->v = doc_nan_series(d->nsteps);
            s->metric = im_strdup(metric);
            s->query = im_strdup(query);
        }
        add_into(s->v, rw->v, d->nsteps);
        if (pf != PF_NONE && *rw->pod) {
            doc_pod_t *p = pod_get(m, rw->pod, rw->node);
            double **slot = pod_slot(p, pf);
            if (!*slot) *slot = doc_nan_series(d->nsteps);
            add_into(*slot, rw->v, d->nsteps);
        }
    }
}

/* Marks signal ds present (with its query) on every model of the engine, so
 * that "no series" (e.g. no error ever) reads as zero rather than absent. */
static void mark_present(gctx_t *g, const eng_t *en, int ds, const char *metric, const char *query)
{
    doc_data_t *d = g->d;
    for (size_t i = 0; i < d->nmodels; i++) {
        doc_model_t *m = &d->models[i];
        if (strcmp(m->engine, en->info->id) || m->s[ds].v) continue;
        m->s[ds].v = doc_nan_series(d->nsteps);
        m->s[ds].metric = im_strdup(metric);
        m->s[ds].query = im_strdup(query);
        /* zero where the model has any sample of its running/waiting series */
        const double *ref = m->s[DS_RUNNING].v ? m->s[DS_RUNNING].v : m->s[DS_WAITING].v;
        for (size_t k = 0; ref && k < d->nsteps; k++)
            if (!isnan(ref[k])) m->s[ds].v[k] = 0;
    }
}

static im_rc gather_simple(gctx_t *g, const eng_t *en, llm_signal_t sig, qform_t f, int ds,
                           podfield_t pf)
{
    const llm_signal_map_t *mp = llm_serving_pick(g->sv, en->e, sig, set_has_fn, &g->names);
    if (!mp) return IM_OK;
    const char *ml = en->info->model_label;
    char group[256];
    snprintf(group, sizeof group, "%s, pod, node", ml);
    if (f == QF_RATE && mp->type != LLM_MTYPE_COUNTER) f = QF_GAUGE_SUM;
    char *q = build_query(g, f, mp->name, mp->selector, ml, group);
    answer_t an;
    im_rc rc = range_query(g, q, ml, "pod", NULL, "node", NULL, &an);
    if (rc == IM_OK) take_rows(g, en, &an, ds, pf, mp->name, q);
    if (rc == IM_OK && f != QF_GAUGE_MAX && ds != DS_KV) mark_present(g, en, ds, mp->name, q);
    answer_free(&an);
    im_free(q);
    return rc;
}

/* ratio = sum / count per model (and per pod for TTFT). */
static im_rc gather_mean(gctx_t *g, const eng_t *en, llm_signal_t sig, int ds, int per_pod)
{
    const llm_signal_map_t *mp = llm_serving_pick(g->sv, en->e, sig, set_has_fn, &g->names);
    if (!mp || mp->type != LLM_MTYPE_HISTOGRAM) return IM_OK;
    doc_data_t *d = g->d;
    const char *ml = en->info->model_label;
    char group[256];
    snprintf(group, sizeof group, "%s, pod, node", ml);
    char *qs = build_query(g, QF_HIST_SUM, mp->name, mp->selector, ml, group);
    char *qc = build_query(g, QF_HIST_COUNT, mp->name, mp->selector, ml, group);
    answer_t as, ac;
    im_rc rc = range_query(g, qs, ml, "pod", NULL, "node", NULL, &as);
    if (rc == IM_OK)
        rc = range_query(g, qc, ml, "pod", NULL, "node", NULL, &ac);
    else
        memset(&ac, 0, sizeof ac);
    if (rc == IM_OK) {
        char both[2048];
        snprintf(both, sizeof both, "%s / %s", qs, qc);
        /* per model: sum of sums / sum of counts */
        for (size_t pass = 0; pass < 2; pass++) {
            answer_t *an = pass == 0 ? &as : &ac;
            for (size_t i = 0; i < an->nrows; i++) {
                row_t *rw = &an->rows[i];
                if (!*rw->model) continue;
                doc_model_t *m = model_get(d, en->info->id, en->info->name, rw->model);
                (void)m;
            }
        }
        for (size_t mi = 0; mi < d->nmodels; mi++) {
            doc_model_t *m = &d->models[mi];
            if (strcmp(m->engine, en->info->id)) continue;
            double *sum = doc_nan_series(d->nsteps), *cnt = doc_nan_series(d->nsteps);
            for (size_t i = 0; i < as.nrows; i++)
                if (!strcmp(as.rows[i].model, m->model)) add_into(sum, as.rows[i].v, d->nsteps);
            for (size_t i = 0; i < ac.nrows; i++)
                if (!strcmp(ac.rows[i].model, m->model)) add_into(cnt, ac.rows[i].v, d->nsteps);
            doc_sig_t *s = &m->s[ds];
            s->v = doc_nan_series(d->nsteps);
            s->metric = im_strdup(mp->name);
            s->query = im_strdup(both);
            for (size_t k = 0; k < d->nsteps; k++)
                if (cnt[k] > 0 && !isnan(sum[k])) s->v[k] = sum[k] / cnt[k];
            im_free(sum);
            im_free(cnt);
            if (!per_pod) continue;
            for (size_t i = 0; i < as.nrows; i++) {
                if (strcmp(as.rows[i].model, m->model) || !*as.rows[i].pod) continue;
                for (size_t j = 0; j < ac.nrows; j++) {
                    if (strcmp(ac.rows[j].model, m->model) ||
                        strcmp(ac.rows[j].pod, as.rows[i].pod))
                        continue;
                    doc_pod_t *p = pod_get(m, as.rows[i].pod, as.rows[i].node);
                    double **dst = per_pod == 1 ? &p->ttft_mean : &p->itl_mean;
                    if (!*dst) *dst = doc_nan_series(d->nsteps);
                    for (size_t k = 0; k < d->nsteps; k++)
                        if (ac.rows[j].v[k] > 0 && !isnan(as.rows[i].v[k]))
                            (*dst)[k] = as.rows[i].v[k] / ac.rows[j].v[k];
                }
            }
        }
    }
    answer_free(&as);
    answer_free(&ac);
    im_free(qs);
    im_free(qc);
    return rc;
}

static im_rc gather_p95(gctx_t *g, const eng_t *en)
{
    const llm_signal_map_t *mp =
        llm_serving_pick(g->sv, en->e, LLM_SIG_TTFT, set_has_fn, &g->names);
    if (!mp || mp->type != LLM_MTYPE_HISTOGRAM) return IM_OK;
    const char *ml = en->info->model_label;
    char *q = build_query(g, QF_P95, mp->name, mp->selector, ml, ml);
    answer_t an;
    im_rc rc = range_query(g, q, ml, NULL, NULL, NULL, NULL, &an);
    if (rc == IM_OK) take_rows(g, en, &an, DS_TTFT_P95, PF_NONE, mp->name, q);
    answer_free(&an);
    im_free(q);
    return rc;
}

/* Does the mapping's metric carry label `name` (its own list or its catalog family's)? */
static bool map_has_label(const llm_signal_map_t *mp, const char *name)
{
    if (mp->labels && strstr(mp->labels, name)) return true;
    for (size_t i = 0; mp->family && i < mp->family->nlabels; i++)
        if (!strcmp(mp->family->labels[i], name)) return true;
    return false;
}

/* Failed requests split into engine errors and client aborts by the reason
 * label when the engine has one (vLLM's finished_reason); SGLang counts both
 * as aborts (errors_mixed). */
static im_rc gather_failed(gctx_t *g, const eng_t *en)
{
    const llm_signal_map_t *mp =
        llm_serving_pick(g->sv, en->e, LLM_SIG_REQUESTS_FAILED, set_has_fn, &g->names);
    if (!mp) return IM_OK;
    doc_data_t *d = g->d;
    const char *ml = en->info->model_label;
    bool by_reason = map_has_label(mp, "finished_reason");
    char group[256];
    snprintf(group, sizeof group, "%s, pod, node%s", ml, by_reason ? ", finished_reason" : "");
    char *q = build_query(g, QF_RATE, mp->name, mp->selector, ml, group);
    answer_t an;
    im_rc rc =
        range_query(g, q, ml, "pod", NULL, "node", by_reason ? "finished_reason" : NULL, &an);
    if (rc == IM_OK) {
        for (size_t i = 0; i < an.nrows; i++) {
            row_t *rw = &an.rows[i];
            if (!*rw->model) continue;
            doc_model_t *m = model_get(d, en->info->id, en->info->name, rw->model);
            int ds = by_reason && !strcmp(rw->key, "abort") ? DS_ABORTS
                     : by_reason                            ? DS_ERRORS
                                                            : DS_ABORTS;
            m->errors_mixed = !by_reason;
            doc_sig_t *s = &m->s[ds];
            if (!s->v) {
                s->v = doc_nan_series(d->nsteps);
                s->metric = im_strdup(mp->name);
                s->query = im_strdup(q);
            }
            add_into(s->v, rw->v, d->nsteps);
        }
        mark_present(g, en, DS_ABORTS, mp->name, q);
        if (by_reason) mark_present(g, en, DS_ERRORS, mp->name, q);
        for (size_t i = 0; i < d->nmodels; i++)
            if (!strcmp(d->models[i].engine, en->info->id)) d->models[i].errors_mixed = !by_reason;
    }
    answer_free(&an);
    im_free(q);
    return rc;
}

static im_rc gather_deferred(gctx_t *g, const eng_t *en)
{
    const llm_signal_map_t *mp =
        llm_serving_pick(g->sv, en->e, LLM_SIG_WAITING_BY_REASON, set_has_fn, &g->names);
    if (!mp) return IM_OK;
    doc_data_t *d = g->d;
    const char *ml = en->info->model_label;
    char group[256];
    snprintf(group, sizeof group, "%s, reason", ml);
    char *q = build_query(g, QF_GAUGE_SUM, mp->name, mp->selector, ml, group);
    answer_t an;
    im_rc rc = range_query(g, q, ml, NULL, NULL, NULL, "reason", &an);
    if (rc == IM_OK) {
        for (size_t i = 0; i < an.nrows; i++) {
            row_t *rw = &an.rows[i];
            if (!*rw->model || strcmp(rw->key, "deferred")) continue;
            doc_model_t *m = model_get(d, en->info->id, en->info->name, rw->model);
            doc_sig_t *s = &m->s[DS_DEFERRED];
            if (!s->v) {
                s->v = doc_nan_series(d->nsteps);
                s->metric = im_strdup(mp->name);
                s->query = im_strdup(q);
            }
            add_into(s->v, rw->v, d->nsteps);
        }
        mark_present(g, en, DS_DEFERRED, mp->name, q);
    }
    answer_free(&an);
    im_free(q);
    return rc;
}

static im_rc gather_engine(gctx_t *g, const eng_t *en)
{
    im_rc rc;
    /* the gauges first: they create the models and pods */
    if ((rc = gather_simple(g, en, LLM_SIG_RUNNING, QF_GAUGE_SUM, DS_RUNNING, PF_RUNNING)))
        return rc;
    if ((rc = gather_simple(g, en, LLM_SIG_WAITING, QF_GAUGE_SUM, DS_WAITING, PF_WAITING)))
        return rc;
    if ((rc = gather_simple(g, en, LLM_SIG_KV_USAGE, QF_GAUGE_MAX, DS_KV, PF_KV))) return rc;
    if ((rc = gather_simple(g, en, LLM_SIG_PREEMPTIONS, QF_RATE, DS_PREEMPT, PF_NONE))) return rc;
    if ((rc = gather_simple(g, en, LLM_SIG_PROMPT_TOKENS, QF_RATE, DS_PROMPT, PF_NONE))) return rc;
    if ((rc = gather_simple(g, en, LLM_SIG_GENERATION_TOKENS, QF_RATE, DS_GEN, PF_GEN))) return rc;
    if ((rc = gather_simple(g, en, LLM_SIG_REQUESTS_FINISHED, QF_RATE, DS_FINISHED, PF_NONE)))
        return rc;
    if ((rc = gather_failed(g, en))) return rc;
    if ((rc = gather_p95(g, en))) return rc;
    if ((rc = gather_mean(g, en, LLM_SIG_TTFT, DS_TTFT_MEAN, 1))) return rc;
    if ((rc = gather_mean(g, en, LLM_SIG_QUEUE_TIME, DS_QUEUE_MEAN, 0))) return rc;
    if ((rc = gather_mean(g, en, LLM_SIG_PREFILL_TIME, DS_PREFILL_MEAN, 0))) return rc;
    if ((rc = gather_mean(g, en, LLM_SIG_ITL, DS_ITL_MEAN, 2))) return rc;
    return gather_deferred(g, en);
}

/* kv: the per-model series is the mean of the pods' (take_rows summed them). */
static void finish_kv(doc_data_t *d)
{
    for (size_t i = 0; i < d->nmodels; i++) {
        doc_model_t *m = &d->models[i];
        if (!m->s[DS_KV].v) continue;
        for (size_t k = 0; k < d->nsteps; k++) {
            int n = 0;
            for (size_t p = 0; p < m->npods; p++)
                if (m->pods[p].kv && !isnan(m->pods[p].kv[k])) n++;
            if (n > 0 && !isnan(m->s[DS_KV].v[k])) m->s[DS_KV].v[k] /= n;
        }
    }
}

/* ---- GPUs (dcgm-exporter) ---- */

static doc_gpu_t *gpu_get(doc_data_t *d, const row_t *rw)
{
    for (size_t i = 0; i < d->ngpus; i++)
        if (!strcmp(d->gpus[i].node, rw->node) && !strcmp(d->gpus[i].gpu, rw->key) &&
            !strcmp(d->gpus[i].pod, rw->pod))
            return &d->gpus[i];
    d->gpus = im_realloc(d->gpus, (d->ngpus + 1) * sizeof *d->gpus);
    doc_gpu_t *gp = &d->gpus[d->ngpus++];
    memset(gp, 0, sizeof *gp);
    gp->node = im_strdup(rw->node);
    gp->gpu = im_strdup(rw->key);
    gp->pod = im_strdup(rw->pod);
    return gp;
}

static im_rc gather_gpu_sig(gctx_t *g, int dcgm, llm_signal_t sig, bool rate, int slot)
{
    const llm_signal_map_t *mp = llm_serving_pick(g->sv, dcgm, sig, set_has_fn, &g->names);
    if (!mp) return IM_OK;
    doc_data_t *d = g->d;
    im_buf_t b;
    im_buf_init(&b, 0);
    char rw[32];
    im_duration_format(g->rate_ms, rw, sizeof rw);
    /* exported_pod: the workload's pod when the exporter's own pod label won */
    if (rate)
        (void)im_buf_printf(&b, "max by (node, Hostname, gpu, pod, exported_pod) (rate(%s[%s]))",
                            mp->name, rw);
    else
        (void)im_buf_printf(&b, "max by (node, Hostname, gpu, pod, exported_pod) (%s)", mp->name);
    char *q = im_buf_steal(&b, NULL);
    answer_t an;
    im_rc rc = range_query(g, q, NULL, "exported_pod", "pod", "node", "gpu", &an);
    if (rc == IM_OK) {
        g->d->have_gpu = true;
        for (size_t i = 0; i < an.nrows; i++) {
            doc_gpu_t *gp = gpu_get(d, &an.rows[i]);
            double **dst = slot == 0   ? &gp->util
                           : slot == 1 ? &gp->xid
                           : slot == 2 ? &gp->remap
                           : slot == 3 ? &gp->pviol
                           : slot == 4 ? &gp->tviol
                                       : &gp->clock;
            if (!*dst) {
                *dst = an.rows[i].v;
                an.rows[i].v = NULL;
            }
        }
        if (!d->gpu_query[slot]) d->gpu_query[slot] = im_strdup(q);
    }
    answer_free(&an);
    im_free(q);
    return rc;
}

/* The mean util / memory-copy of the GPUs a model's pods hold. */
static im_rc gather_gpu_model(gctx_t *g, int dcgm, llm_signal_t sig, int ds)
{
    const llm_signal_map_t *mp = llm_serving_pick(g->sv, dcgm, sig, set_has_fn, &g->names);
    if (!mp) return IM_OK;
    doc_data_t *d = g->d;
    char *q = NULL;
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_printf(&b, "avg by (node, Hostname, gpu, pod, exported_pod) (%s)", mp->name);
    q = im_buf_steal(&b, NULL);
    answer_t an;
    im_rc rc = range_query(g, q, NULL, "exported_pod", "pod", "node", "gpu", &an);
    if (rc == IM_OK) {
        for (size_t mi = 0; mi < d->nmodels; mi++) {
            doc_model_t *m = &d->models[mi];
            double *sum = doc_nan_series(d->nsteps);
            size_t *cnt = im_calloc(d->nsteps, sizeof *cnt);
            for (size_t i = 0; i < an.nrows; i++) {
                const row_t *rw = &an.rows[i];
                doc_pod_t *p = NULL;
                for (size_t j = 0; j < m->npods && !p; j++)
                    if (*rw->pod && !strcmp(m->pods[j].name, rw->pod)) p = &m->pods[j];
                if (!p) continue;
                for (size_t k = 0; k < d->nsteps; k++)
                    if (!isnan(rw->v[k])) cnt[k]++;
                add_into(sum, rw->v, d->nsteps);
                if (ds == DS_GPU_UTIL) {
                    if (!p->gpu_util) p->gpu_util = doc_nan_series(d->nsteps);
                    for (size_t k = 0; k < d->nsteps; k++)
                        if (!isnan(rw->v[k]))
                            p->gpu_util[k] =
                                isnan(p->gpu_util[k]) ? rw->v[k] : IM_MAX(p->gpu_util[k], rw->v[k]);
                }
            }
            bool any = false;
            for (size_t k = 0; k < d->nsteps; k++) {
                if (cnt[k]) {
                    sum[k] /= (double)cnt[k];
                    any = true;
                }
            }
            if (any) {
                m->s[ds].v = sum;
                m->s[ds].metric = im_strdup(mp->name);
                m->s[ds].query = im_strdup(q);
            } else {
                im_free(sum);
            }
            im_free(cnt);
        }
    }
    answer_free(&an);
    im_free(q);
    return rc;
}

static im_rc gather_gpus(gctx_t *g)
{
    int dcgm = llm_serving_engine_find(g->sv, "dcgm");
    if (dcgm < 0) return IM_OK;
    im_rc rc;
    if ((rc = gather_gpu_model(g, dcgm, LLM_SIG_GPU_UTIL, DS_GPU_UTIL))) return rc;
    if ((rc = gather_gpu_model(g, dcgm, LLM_SIG_GPU_MEM_COPY, DS_MEM_COPY))) return rc;
    if ((rc = gather_gpu_sig(g, dcgm, LLM_SIG_GPU_UTIL, false, 0))) return rc;
    if ((rc = gather_gpu_sig(g, dcgm, LLM_SIG_GPU_XID, false, 1))) return rc;
    if ((rc = gather_gpu_sig(g, dcgm, LLM_SIG_GPU_ROW_REMAP_FAIL, false, 2))) return rc;
    if ((rc = gather_gpu_sig(g, dcgm, LLM_SIG_GPU_POWER_VIOLATION, true, 3))) return rc;
    if ((rc = gather_gpu_sig(g, dcgm, LLM_SIG_GPU_THERMAL_VIOLATION, true, 4))) return rc;
    if ((rc = gather_gpu_sig(g, dcgm, LLM_SIG_GPU_SM_CLOCK, false, 5))) return rc;
    doc_data_t *d = g->d;
    for (size_t i = 0; i < d->ngpus; i++)
        for (size_t mi = 0; mi < d->nmodels && !d->gpus[i].model; mi++)
            for (size_t p = 0; p < d->models[mi].npods; p++)
                if (*d->gpus[i].pod && !strcmp(d->models[mi].pods[p].name, d->gpus[i].pod)) {
                    d->gpus[i].model = d->models[mi].model;
                    break;
                }
    return IM_OK;
}

/* ---- Kueue ---- */

static doc_queue_t *queue_get(doc_data_t *d, const char *name)
{
    for (size_t i = 0; i < d->nqueues; i++)
        if (!strcmp(d->queues[i].name, name)) return &d->queues[i];
    d->queues = im_realloc(d->queues, (d->nqueues + 1) * sizeof *d->queues);
    doc_queue_t *q = &d->queues[d->nqueues++];
    memset(q, 0, sizeof *q);
    q->name = im_strdup(name);
    return q;
}

static im_rc gather_kueue(gctx_t *g)
{
    int ku = llm_serving_engine_find(g->sv, "kueue");
    if (ku < 0) return IM_OK;
    doc_data_t *d = g->d;
    for (int pass = 0; pass < 2; pass++) {
        llm_signal_t sig = pass == 0 ? LLM_SIG_QUOTA_PENDING : LLM_SIG_QUOTA_EVICTED;
        const llm_signal_map_t *mp = llm_serving_pick(g->sv, ku, sig, set_has_fn, &g->names);
        if (!mp) continue;
        char rw[32];
        im_duration_format(g->rate_ms, rw, sizeof rw);
        im_buf_t b;
        im_buf_init(&b, 0);
        if (pass == 0)
            (void)im_buf_printf(&b, "sum by (cluster_queue) (%s)", mp->name);
        else
            (void)im_buf_printf(&b, "sum by (cluster_queue) (rate(%s[%s]))", mp->name, rw);
        char *q = im_buf_steal(&b, NULL);
        answer_t an;
        im_rc rc = range_query(g, q, NULL, NULL, NULL, NULL, "cluster_queue", &an);
        if (rc == IM_OK) {
            d->have_kueue = true;
            for (size_t i = 0; i < an.nrows; i++) {
                if (!*an.rows[i].key) continue;
                doc_queue_t *kq = queue_get(d, an.rows[i].key);
                double **dst = pass == 0 ? &kq->pending : &kq->evicted;
                if (!*dst) {
                    *dst = an.rows[i].v;
                    an.rows[i].v = NULL;
                }
            }
            if (pass == 0 && !d->queue_query) d->queue_query = im_strdup(q);
            if (pass == 1 && !d->evict_query) d->evict_query = im_strdup(q);
        }
        answer_free(&an);
        im_free(q);
        if (rc != IM_OK) return rc;
    }
    return IM_OK;
}

/* ---- Scrape health ---- */

static im_rc gather_up(gctx_t *g)
{
    if (!set_has(&g->names, "up")) return IM_OK;
    doc_data_t *d = g->d;
    const char *q = "min by (job, instance, pod) (up)";
    answer_t an;
    im_rc rc = range_query(g, q, NULL, "pod", NULL, NULL, "instance", &an);
    if (rc == IM_OK) {
        d->have_up = true;
        d->up_query = im_strdup(q);
        d->targets = im_calloc(an.nrows ? an.nrows : 1, sizeof *d->targets);
        for (size_t i = 0; i < an.nrows; i++) {
            doc_target_t *t = &d->targets[d->ntargets++];
            const promql_series_t *s = &an.a.result.series[i];
            t->job = im_strdup(lab(s->labels, "job"));
            t->instance = im_strdup(an.rows[i].key);
            t->pod = im_strdup(an.rows[i].pod);
            t->up = an.rows[i].v;
            an.rows[i].v = NULL;
            for (size_t mi = 0; mi < d->nmodels && !t->model; mi++)
                for (size_t p = 0; p < d->models[mi].npods; p++)
                    if (*t->pod && !strcmp(d->models[mi].pods[p].name, t->pod))
                        t->model = d->models[mi].model;
        }
    }
    answer_free(&an);
    return rc;
}

/* ---- Renamed or vanished names (stale-names) ---- */

static im_rc names_in(gctx_t *g, int64_t start, int64_t end, nameset_t *out)
{
    g->rep->queries++;
    im_rc rc = query_label_values(g->b, "__name__", NULL, 0, start, end, &out->v, &out->n, g->err);
    if (rc != IM_OK) {
        im_err_prefix(g->err, "doctor: listing the metric names");
        return rc;
    }
    if (out->n) qsort(out->v, out->n, sizeof *out->v, cmp_str);
    return IM_OK;
}

static im_rc gather_renames(gctx_t *g, const llm_detected_t *det)
{
    doc_data_t *d = g->d;
    int64_t part = (int64_t)((double)(g->end_ms - d->start_ms) * d->dc.recent_share);
    nameset_t early = {0}, late = {0};
    im_rc rc = names_in(g, d->start_ms, d->start_ms + part, &early);
    if (rc == IM_OK) rc = names_in(g, g->end_ms - part, g->end_ms, &late);
    if (rc != IM_OK || late.n == 0) goto done;
    size_t nm = llm_serving_map_count(g->sv);
    for (size_t i = 0; i < nm; i++) {
        const llm_signal_map_t *mp = llm_serving_map(g->sv, i);
        if (mp->derived || mp->engine < 0 || !det->present[mp->engine]) continue;
        if (!set_has_family(&early, mp->name) || set_has_family(&late, mp->name)) continue;
        bool dup = false;
        for (size_t k = 0; k < d->nrenames; k++)
            if (!strcmp(d->renames[k].old_name, mp->name)) dup = true;
        if (dup) continue;
        const llm_signal_map_t *alts[8];
        size_t na = llm_serving_maps_for(g->sv, mp->engine, mp->signal, alts, 8);
        const char *succ = "";
        for (size_t k = 0; k < na && k < 8; k++)
            if (alts[k] != mp && set_has_family(&late, alts[k]->name)) succ = alts[k]->name;
        d->renames = im_realloc(d->renames, (d->nrenames + 1) * sizeof *d->renames);
        doc_rename_t *r = &d->renames[d->nrenames++];
        r->old_name = im_strdup(mp->name);
        r->new_name = im_strdup(succ);
        r->engine = llm_serving_engine(g->sv, mp->engine)->id;
    }
done:
    set_free(&early);
    set_free(&late);
    return rc;
}

/* ---- The run ---- */

void doc_data_free(doc_data_t *d)
{
    for (size_t i = 0; i < d->nmodels; i++) {
        doc_model_t *m = &d->models[i];
        im_free(m->model);
        for (int s = 0; s < DS_COUNT; s++) {
            im_free(m->s[s].v);
            im_free(m->s[s].metric);
            im_free(m->s[s].query);
        }
        for (size_t p = 0; p < m->npods; p++) {
            doc_pod_t *pp = &m->pods[p];
            im_free(pp->name);
            im_free(pp->node);
            im_free(pp->waiting);
            im_free(pp->running);
            im_free(pp->kv);
            im_free(pp->ttft_mean);
            im_free(pp->itl_mean);
            im_free(pp->gen);
            im_free(pp->gpu_util);
        }
        im_free(m->pods);
    }
    im_free(d->models);
    for (size_t i = 0; i < d->ngpus; i++) {
        doc_gpu_t *gp = &d->gpus[i];
        im_free(gp->node);
        im_free(gp->gpu);
        im_free(gp->pod);
        im_free(gp->xid);
        im_free(gp->remap);
        im_free(gp->pviol);
        im_free(gp->tviol);
        im_free(gp->clock);
        im_free(gp->util);
    }
    im_free(d->gpus);
    for (size_t i = 0; i < IM_ARRAY_LEN(d->gpu_query); i++) im_free(d->gpu_query[i]);
    for (size_t i = 0; i < d->nqueues; i++) {
        im_free(d->queues[i].name);
        im_free(d->queues[i].pending);
        im_free(d->queues[i].evicted);
    }
    im_free(d->queues);
    im_free(d->queue_query);
    im_free(d->evict_query);
    for (size_t i = 0; i < d->ntargets; i++) {
        im_free(d->targets[i].job);
        im_free(d->targets[i].instance);
        im_free(d->targets[i].pod);
        im_free(d->targets[i].up);
    }
    im_free(d->targets);
    im_free(d->up_query);
    for (size_t i = 0; i < d->nrenames; i++) {
        im_free(d->renames[i].old_name);
        im_free(d->renames[i].new_name);
    }
    im_free(d->renames);
    memset(d, 0, sizeof *d);
}

static void rep_add_str(char ***v, size_t *n, const char *s)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*v)[i], s)) return;
    *v = im_realloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = im_strdup(s);
}

/* Every engine's signals, the GPUs, Kueue and the scrape health. */
static im_rc gather_all(gctx_t *g, const llm_detected_t *det, bool report)
{
    im_rc rc;
    int ne = llm_serving_engine_count(g->sv);
    for (int e = 0; e < ne; e++) {
        const llm_engine_info_t *info = llm_serving_engine(g->sv, e);
        if (!det->present[e] || !strcmp(info->id, "dcgm") || !strcmp(info->id, "kueue")) continue;
        if (!info->model_label || !*info->model_label) continue;
        if (report) {
            char desc[256];
            llm_detected_describe(g->sv, det, e, desc, sizeof desc);
            rep_add_str(&g->rep->engines, &g->rep->nengines, desc);
        }
        eng_t en = {e, info};
        if ((rc = gather_engine(g, &en))) return rc;
    }
    finish_kv(g->d);
    if ((rc = gather_gpus(g))) return rc;
    if ((rc = gather_kueue(g))) return rc;
    return gather_up(g);
}

im_rc llm_doctor_run(const llm_doctor_opts_t *o, llm_doctor_report_t *rep, im_err_t *err)
{
    memset(rep, 0, sizeof *rep);
    cfg_llm_t defcfg;
    if (!o->cfg) {
        memset(&defcfg, 0, sizeof defcfg);
        cfg_llm_doctor_defaults(&defcfg.doctor);
    }
    const cfg_llm_t *cfg = o->cfg ? o->cfg : &defcfg;
    doc_data_t d;
    memset(&d, 0, sizeof d);
    d.dc = cfg->doctor;
    d.ttft_target_s = cfg->ttft_p95_target_seconds > 0 ? cfg->ttft_p95_target_seconds : 2;
    d.failure_ratio = cfg->failure_ratio > 0 ? cfg->failure_ratio : 0.05;
    d.kv_threshold = cfg->kv_cache_threshold > 0 ? cfg->kv_cache_threshold : 0.9;
    d.model_filter = o->model;
    int64_t window = o->window_ms > 0 ? o->window_ms : d.dc.window_ms;
    int64_t step = d.dc.step_ms > 0 ? d.dc.step_ms : window / 60;
    if (step < 1000) step = 1000;
    step -= step % 1000;
    size_t nsteps = (size_t)(window / step) + 1;
    if (window <= 0 || nsteps > LLM_DOCTOR_MAX_POINTS)
        return im_err_set(err, IM_EINVAL,
                          "doctor: a window of %lld ms at a %lld ms step is %zu points, over "
                          "%d (raise llm.doctor.step)",
                          (long long)window, (long long)step, nsteps, LLM_DOCTOR_MAX_POINTS);
    d.step_ms = step;
    d.nsteps = nsteps;
    d.start_ms = o->at_ms - (int64_t)(nsteps - 1) * step;
    d.nrecent = (size_t)ceil((double)nsteps * d.dc.recent_share);
    if (d.nrecent < 1) d.nrecent = 1;
    if (d.nrecent > nsteps) d.nrecent = nsteps;
    rep->start_ms = d.start_ms;
    rep->end_ms = o->at_ms;
    rep->step_ms = step;
    rep->backend = im_strdup(query_backend_describe(o->backend));

    gctx_t g = {.o = o,
                .b = o->backend,
                .d = &d,
                .rep = rep,
                .err = err,
                .end_ms = o->at_ms,
                .rate_ms = IM_MAX(d.dc.rate_window_ms, 2 * step),
                .sv = llm_serving_get()};
    im_rc rc = names_in(&g, d.start_ms, o->at_ms, &g.names);
    if (rc != IM_OK) goto fail;
    llm_detected_t det;
    llm_serving_detect(g.sv, set_has_fn, &g.names, &det);
    /* pass 1: collect the queries on a scratch copy of the (still empty) data */
    doc_data_t scratch = d;
    g.d = &scratch;
    g.collect = true;
    rc = gather_all(&g, &det, false);
    doc_data_free(&scratch);
    g.d = &d;
    g.collect = false;
    if (rc != IM_OK) goto fail;
    jobs_run(&g);
    for (size_t i = 0; i < g.njobs; i++)
        rep_add_str(&rep->query_log, &rep->nquery_log, g.jobs[i].expr);
    /* pass 2: the same gathering over the answers */
    if ((rc = gather_all(&g, &det, true))) goto fail;
    if ((rc = gather_renames(&g, &det))) goto fail;
    for (size_t i = 0; i < d.nmodels; i++)
        rep_add_str(&rep->models, &rep->nmodels, d.models[i].model);
    doc_rules_run(&d, rep);
    doc_rank(rep);
    set_free(&g.names);
    jobs_free(&g);
    doc_data_free(&d);
    return IM_OK;
fail:
    jobs_free(&g);
    set_free(&g.names);
    doc_data_free(&d);
    llm_doctor_report_free(rep);
    return rc;
}

static void finding_free(llm_doctor_finding_t *f)
{
    im_free(f->model);
    im_free(f->engine);
    query_strs_free(f->pods, f->npods);
    query_strs_free(f->nodes, f->nnodes);
    im_free(f->summary);
    for (size_t i = 0; i < f->nevidence; i++) {
        llm_doctor_evidence_t *e = &f->evidence[i];
        im_free(e->signal);
        im_free(e->metric);
        im_free(e->query);
        im_free(e->unit);
        im_free(e->text);
        query_strs_free(e->pods, e->npods);
    }
    im_free(f->evidence);
    for (size_t i = 0; i < f->nalts; i++) {
        im_free(f->alts[i].cause);
        im_free(f->alts[i].why);
    }
    im_free(f->alts);
    im_free(f->action);
    im_free(f->expect);
    im_free(f->panel);
    for (size_t i = 0; i < f->nflags; i++) {
        im_free(f->flags[i].engine);
        im_free(f->flags[i].flag);
        im_free(f->flags[i].advice);
    }
    im_free(f->flags);
}

void llm_doctor_report_free(llm_doctor_report_t *r)
{
    if (!r) return;
    im_free(r->backend);
    query_strs_free(r->engines, r->nengines);
    query_strs_free(r->models, r->nmodels);
    query_strs_free(r->query_log, r->nquery_log);
    for (size_t i = 0; i < r->nfindings; i++) finding_free(&r->findings[i]);
    im_free(r->findings);
    memset(r, 0, sizeof *r);
}

llm_doctor_severity_t llm_doctor_worst(const llm_doctor_report_t *r)
{
    llm_doctor_severity_t w = LLM_DOCTOR_INFO;
    for (size_t i = 0; i < r->nfindings; i++)
        if (r->findings[i].severity > w) w = r->findings[i].severity;
    return w;
}

const char *llm_doctor_severity_str(llm_doctor_severity_t s)
{
    return s == LLM_DOCTOR_CRITICAL ? "critical" : s == LLM_DOCTOR_WARNING ? "warning" : "info";
}

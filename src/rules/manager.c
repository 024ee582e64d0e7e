/* manager.c — rule groups at run time: scheduling aligned as Prometheus aligns
 * it, evaluation of recording and alerting rules in order, the alert state
 * machine (with `for`, `keep_firing_for`, restoration of `for` state after a
 * restart), ALERTS / ALERTS_FOR_STATE series, staleness markers for series a
 * rule stopped producing, notification of alerts that need sending, and the
 * /api/v1/rules and /api/v1/alerts JSON.
 *
 * Alert state (per alerting rule, one entry per label set after templating):
 *
 *     (series appears) ──► PENDING ──(active >= for)──► FIRING
 *          ▲                  │ (series gone: deleted)     │ (series gone for
 *          │                  ▼                            ▼  >= keep_firing_for)
 *          └────────────── (dropped) ◄──(15m)── INACTIVE (resolved_at set)
 *
 * Invariants: a pending alert never outlives its series; a resolved alert is
 * kept resolved_retention (15m) so that the notifier can send its end; ALERTS
 * samples are written only after the `for` state was restored (or restoration
 * was not needed), at the evaluation time minus the query offset. */
#include "util/base.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <xxhash.h>

#include "promql/parser.h"
#include "rules/rules.h"
#include "rules/rules_int.h"
#include "template/template.h"
#include "util/fmtfloat.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "labels/json.h"

#define UNSET               INT64_MIN
#define RESOLVED_RETENTION  (15 * IM_MS_PER_MINUTE)
#define DEFAULT_INTERVAL_MS IM_MS_PER_MINUTE

typedef struct alert {
    uint64_t hash;
    const im_labels_t *labels;      /* owned */
    const im_labels_t *annotations; /* owned */
    rules_alert_state_t state;
    double value;
    int64_t active_at, fired_at, resolved_at, last_sent_at, valid_until, keep_firing_since;
} alert_t;

typedef struct rule_rt {
    const rules_rule_t *r;
    alert_t *alerts;
    size_t nalerts, cap;
    bool restored;
    char *last_error; /* owned, NULL = healthy */
    int64_t last_eval_ms;
    double eval_seconds;
    bool evaluated;
    const im_labels_t **prev; /* series written in the previous evaluation (owned refs) */
    size_t nprev;
} rule_rt_t;

typedef struct group_rt {
    rules_group_t *g; /* borrowed from the files */
    int64_t interval_ms;
    int64_t next_eval_ms; /* UNSET = not scheduled yet */
    bool should_restore;
    rule_rt_t *rules;
    int64_t last_eval_ms;
    double eval_seconds;
    bool evaluated;
} group_rt_t;

struct rules_manager {
    rules_opts_t opts;
    rules_file_t **files;
    size_t nfiles;
    group_rt_t *groups;
    size_t ngroups;
    pthread_mutex_t mu;
    rules_stats_t stats;
    rules__run_t *run; /* the evaluation thread (run.c) when started; owned */
};

rules__run_t **rules__run_slot(rules_manager_t *m)
{
    return &m->run;
}

/* ---- helpers ---- */

static int64_t now_wall_ms(void)
{
    return im_now_ms();
}

static void free_alert(alert_t *a)
{
    im_labels_unref(a->labels);
    im_labels_unref(a->annotations);
}

static void rule_rt_free(rule_rt_t *rt)
{
    for (size_t i = 0; i < rt->nalerts; i++) free_alert(&rt->alerts[i]);
    im_free(rt->alerts);
    im_free(rt->last_error);
    for (size_t i = 0; i < rt->nprev; i++) im_labels_unref(rt->prev[i]);
    im_free(rt->prev);
}

static void set_error(rule_rt_t *rt, const char *msg)
{
    im_free(rt->last_error);
    rt->last_error = msg ? im_strdup(msg) : NULL;
}

rules_manager_t *rules_manager_new(const rules_opts_t *opts)
{
    rules_manager_t *m = im_calloc(1, sizeof *m);
    m->opts = *opts;
    if (!m->opts.eval_interval_ms) m->opts.eval_interval_ms = DEFAULT_INTERVAL_MS;
    if (!m->opts.outage_tolerance_ms) m->opts.outage_tolerance_ms = IM_MS_PER_HOUR;
    if (!m->opts.grace_period_ms) m->opts.grace_period_ms = 10 * IM_MS_PER_MINUTE;
    if (!m->opts.resend_delay_ms) m->opts.resend_delay_ms = IM_MS_PER_MINUTE;
    pthread_mutex_init(&m->mu, NULL);
    return m;
}

static void free_groups(group_rt_t *gs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t r = 0; r < gs[i].g->nrules; r++) rule_rt_free(&gs[i].rules[r]);
        im_free(gs[i].rules);
    }
    im_free(gs);
}

void rules_manager_free(rules_manager_t *m)
{
    if (!m) return;
    if (m->run) rules__run_end(m); /* started: stop the thread first */
    free_groups(m->groups, m->ngroups);
    for (size_t i = 0; i < m->nfiles; i++) rules_file_free(m->files[i]);
    im_free(m->files);
    pthread_mutex_destroy(&m->mu);
    im_free(m);
}

static bool same_rule(const rules_rule_t *a, const rules_rule_t *b)
{
    if (a->kind != b->kind || strcmp(a->name, b->name) != 0 || a->nlabels != b->nlabels)
        return false;
    for (size_t i = 0; i < a->nlabels; i++)
        if (strcmp(a->labels[i].name, b->labels[i].name) != 0 ||
            strcmp(a->labels[i].value, b->labels[i].value) != 0)
            return false;
    return true;
}

void rules_manager_set_files(rules_manager_t *m, rules_file_t **files, size_t n)
{
    pthread_mutex_lock(&m->mu);
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) ng += files[i]->ngroups;
    group_rt_t *gs = im_calloc(ng ? ng : 1, sizeof *gs);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < files[i]->ngroups; j++) {
            group_rt_t *g = &gs[k++];
            g->g = &files[i]->groups[j];
            g->interval_ms = g->g->interval_ms ? g->g->interval_ms : m->opts.eval_interval_ms;
            g->next_eval_ms = UNSET;
            g->should_restore = m->opts.restore_for_state;
            g->rules = im_calloc(g->g->nrules ? g->g->nrules : 1, sizeof *g->rules);
            for (size_t r = 0; r < g->g->nrules; r++) {
                g->rules[r].r = &g->g->rules[r];
                g->rules[r].restored = !m->opts.restore_for_state;
            }
            /* keep state of an unchanged rule of the same group (a reload) */
            for (size_t o = 0; o < m->ngroups; o++) {
                group_rt_t *old = &m->groups[o];
                if (strcmp(old->g->name, g->g->name) != 0 || strcmp(old->g->file, g->g->file) != 0)
                    continue;
                g->next_eval_ms = old->interval_ms == g->interval_ms ? old->next_eval_ms : UNSET;
                g->should_restore = old->should_restore;
                for (size_t r = 0; r < g->g->nrules; r++)
                    for (size_t q = 0; q < old->g->nrules; q++) {
                        rule_rt_t *ort = &old->rules[q];
                        if (!ort->r || !same_rule(ort->r, g->rules[r].r)) continue;
                        rule_rt_t *nrt = &g->rules[r];
                        nrt->alerts = ort->alerts;
                        nrt->nalerts = ort->nalerts;
                        nrt->cap = ort->cap;
                        nrt->restored = ort->restored;
                        nrt->prev = ort->prev;
                        nrt->nprev = ort->nprev;
                        ort->alerts = NULL;
                        ort->nalerts = ort->cap = 0;
                        ort->prev = NULL;
                        ort->nprev = 0;
                        ort->r = NULL; /* taken */
                        break;
                    }
            }
        }
    free_groups(m->groups, m->ngroups);
    for (size_t i = 0; i < m->nfiles; i++) rules_file_free(m->files[i]);
    im_free(m->files);
    m->files = im_malloc((n ? n : 1) * sizeof *m->files);
    if (n) memcpy(m->files, files, n * sizeof *files);
    m->nfiles = n;
    m->groups = gs;
    m->ngroups = ng;
    pthread_mutex_unlock(&m->mu);
}

size_t rules_manager_ngroups(const rules_manager_t *m)
{
    return m->ngroups;
}
const rules_group_t *rules_manager_group(const rules_manager_t *m, size_t i)
{
    return m->groups[i].g;
}

/* Prometheus' labels.Hash of {file=F, name=N}: XXH64 over name\xffvalue\xff…
 * in label order (file < name). */
static uint64_t group_hash(const rules_group_t *g)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_puts(&b, "file");
    (void)im_buf_putc(&b, (char)0xff);
    (void)im_buf_puts(&b, g->file);
    (void)im_buf_putc(&b, (char)0xff);
    (void)im_buf_puts(&b, "name");
    (void)im_buf_putc(&b, (char)0xff);
    (void)im_buf_puts(&b, g->name);
    (void)im_buf_putc(&b, (char)0xff);
    uint64_t h = XXH64(b.data, b.len, 0);
    im_buf_free(&b);
    return h;
}

int64_t rules_group_eval_timestamp(const rules_group_t *g, int64_t interval_ms, int64_t start_ms)
{
    /* Prometheus works in nanoseconds: offset = hash % interval_ns. */
    uint64_t interval_ns = (uint64_t)interval_ms * 1000000ULL;
    int64_t offset_ns = (int64_t)(group_hash(g) % interval_ns);
    int64_t start_ns = start_ms * 1000000LL;
    int64_t adj = start_ns - offset_ns;
    int64_t rem = adj % (int64_t)interval_ns;
    if (rem < 0) rem += (int64_t)interval_ns;
    int64_t base = adj - rem;
    int64_t t_ns = base + offset_ns;
    /* round down to milliseconds (model.Time) */
    int64_t t = t_ns / 1000000LL;
    if (t_ns < 0 && t_ns % 1000000LL) t--;
    return t;
}

/* ---- queries ---- */

typedef struct qsample {
    const im_labels_t *labels; /* owned */
    double v;
    int64_t t;
} qsample_t;

static void free_qsamples(qsample_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) im_labels_unref(v[i].labels);
    im_free(v);
}

/* Instant query as Prometheus' EngineQueryFunc: vector, or scalar as one
 * sample without labels; anything else is an error. */
static im_rc query_vector(rules_manager_t *m, const promql_expr_t *ast, int64_t t, qsample_t **out,
                          size_t *n, im_err_t *err)
{
    *out = NULL;
    *n = 0;
    promql_result_t res;
    memset(&res, 0, sizeof res);
    im_rc rc = promql_eval_instant(m->opts.engine, m->opts.storage.queryable, ast, t, &res, err);
    if (rc != IM_OK) return rc;
    if (res.type == PROMQL_RESULT_SCALAR) {
        *out = im_malloc(sizeof **out);
        (*out)[0] = (qsample_t){im_labels_ref(im_labels_empty()), res.scalar.v, t};
        *n = 1;
    } else if (res.type == PROMQL_RESULT_VECTOR) {
        *out = im_malloc((res.nseries ? res.nseries : 1) * sizeof **out);
        for (size_t i = 0; i < res.nseries; i++) {
            (*out)[i].labels = im_labels_ref(res.series[i].labels);
            (*out)[i].v = res.series[i].npoints ? res.series[i].points[0].v : NAN;
            (*out)[i].t = res.series[i].npoints ? res.series[i].points[0].t_ms : t;
        }
        *n = res.nseries;
    } else {
        promql_result_free(&res);
        return im_err_set(err, IM_EEXEC, "rule result is not a vector or scalar");
    }
    promql_result_free(&res);
    return IM_OK;
}

typedef struct tq_ctx {
    rules_manager_t *m;
} tq_ctx_t;

static im_rc template_query(void *ctx, const char *q, size_t qlen, int64_t t_ms,
                            tmpl_sample_t **out, size_t *n, im_err_t *err)
{
    rules_manager_t *m = ctx;
    promql_expr_t *ast = NULL;
    im_rc rc = promql_parse(q, qlen, &ast, err);
    if (rc != IM_OK) return rc;
    qsample_t *qs;
    size_t nq;
    rc = query_vector(m, ast, t_ms, &qs, &nq, err);
    promql_expr_free(ast);
    if (rc != IM_OK) return rc;
    *out = im_malloc((nq ? nq : 1) * sizeof **out);
    for (size_t i = 0; i < nq; i++) {
        (*out)[i].labels = qs[i].labels;
        (*out)[i].v = qs[i].v;
    }
    im_free(qs);
    *n = nq;
    return IM_OK;
}

/* ---- writing ---- */

static void append_sample(rules_manager_t *m, const im_labels_t *ls, int64_t t, double v)
{
    if (m->opts.storage.append) (void)m->opts.storage.append(m->opts.storage.ctx, ls, t, v);
}

static void commit(rules_manager_t *m)
{
    if (m->opts.storage.commit) (void)m->opts.storage.commit(m->opts.storage.ctx);
}

/* Writes the rule's output series, stale markers for series it no longer
 * returns, and remembers the set for the next evaluation. Takes the labels. */
static void write_series(rules_manager_t *m, rule_rt_t *rt, qsample_t *vec, size_t n, int64_t t)
{
    for (size_t i = 0; i < n; i++) append_sample(m, vec[i].labels, vec[i].t, vec[i].v);
    for (size_t i = 0; i < rt->nprev; i++) {
        bool still = false;
        for (size_t j = 0; j < n && !still; j++)
            still = im_labels_equal(rt->prev[i], vec[j].labels);
        if (!still) append_sample(m, rt->prev[i], t, storage_stale_nan());
        im_labels_unref(rt->prev[i]);
    }
    im_free(rt->prev);
    rt->prev = im_malloc((n ? n : 1) * sizeof *rt->prev);
    for (size_t i = 0; i < n; i++) rt->prev[i] = im_labels_ref(vec[i].labels);
    rt->nprev = n;
    commit(m);
}

/* ---- recording rules ---- */

static im_rc eval_recording(rules_manager_t *m, const rules_group_t *g, rule_rt_t *rt, int64_t ts,
                            int64_t offset, qsample_t **out, size_t *nout, im_err_t *err)
{
    const rules_rule_t *r = rt->r;
    qsample_t *vec;
    size_t n;
    im_rc rc = query_vector(m, r->ast, ts - offset, &vec, &n, err);
    if (rc != IM_OK) return rc;
    im_labels_builder_t b;
    im_lb_init(&b);
    for (size_t i = 0; i < n; i++) {
        im_lb_load(&b, vec[i].labels);
        im_lb_set(&b, IM_METRIC_NAME, strlen(IM_METRIC_NAME), r->name, strlen(r->name));
        for (size_t k = 0; k < r->nlabels; k++)
            im_lb_set(&b, r->labels[k].name, strlen(r->labels[k].name), r->labels[k].value,
                      strlen(r->labels[k].value));
        im_labels_unref(vec[i].labels);
        vec[i].labels = im_lb_build(&b);
        vec[i].t = ts - offset;
    }
    im_lb_free(&b);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (im_labels_equal(vec[i].labels, vec[j].labels)) {
                free_qsamples(vec, n);
                return im_err_set(
                    err, IM_EEXEC,
                    "vector contains metrics with the same labelset after applying rule labels");
            }
    if (g->limit > 0 && (int64_t)n > g->limit) {
        free_qsamples(vec, n);
        return im_err_set(err, IM_ELIMIT, "exceeded limit of %" PRId64 " with %zu series", g->limit,
                          n);
    }
    *out = vec;
    *nout = n;
    return IM_OK;
}

/* ---- alerting rules ---- */

static alert_t *find_alert(rule_rt_t *rt, uint64_t h, const im_labels_t *ls)
{
    for (size_t i = 0; i < rt->nalerts; i++)
        if (rt->alerts[i].hash == h && im_labels_equal(rt->alerts[i].labels, ls))
            return &rt->alerts[i];
    return NULL;
}

static const im_labels_t *expand_kvs(rules_manager_t *m, const char *tname, const rules_kv_t *kv,
                                     size_t n, const tmpl_data_t *d, im_labels_builder_t *b)
{
    im_buf_t out;
    im_buf_init(&out, 0);
    for (size_t k = 0; k < n; k++) {
        im_buf_reset(&out);
        if (tmpl_expand_or_error(tname, kv[k].value, strlen(kv[k].value), d, &out) != IM_OK) {
            m->stats.template_failures++;
            IM_WARN("Expanding alert template failed", "name=%s data=%s", im_logq(tname),
                    im_logq(out.data));
        }
        im_lb_set(b, kv[k].name, strlen(kv[k].name), out.data ? out.data : "", out.len);
    }
    im_buf_free(&out);
    return im_lb_build(b);
}

static const im_labels_t *alert_series_labels(const alert_t *a, bool for_state)
{
    im_labels_builder_t b;
    im_lb_init(&b);
    im_lb_load(&b, a->labels);
    const char *name = for_state ? "ALERTS_FOR_STATE" : "ALERTS";
    im_lb_set(&b, IM_METRIC_NAME, strlen(IM_METRIC_NAME), name, strlen(name));
    if (!for_state) {
        const char *st = a->state == RULES_ALERT_FIRING ? "firing" : "pending";
        im_lb_set(&b, "alertstate", 10, st, strlen(st));
    }
    const im_labels_t *ls = im_lb_build(&b);
    im_lb_free(&b);
    return ls;
}

static im_rc eval_alerting(rules_manager_t *m, const rules_group_t *g, rule_rt_t *rt, int64_t ts,
                           int64_t offset, qsample_t **out, size_t *nout, im_err_t *err)
{
    const rules_rule_t *r = rt->r;
    *out = NULL;
    *nout = 0;
    qsample_t *res;
    size_t nres;
    im_rc rc = query_vector(m, r->ast, ts - offset, &res, &nres, err);
    if (rc != IM_OK) return rc;
    char tname[1024];
    snprintf(tname, sizeof tname, "__alert_%s", r->name);
    /* new alerts of this evaluation */
    alert_t *cur = im_calloc(nres ? nres : 1, sizeof *cur);
    size_t ncur = 0;
    im_labels_builder_t b;
    im_lb_init(&b);
    for (size_t i = 0; i < nres; i++) {
        tmpl_data_t d = {.labels = res[i].labels,
                         .external_labels = m->opts.external_labels,
                         .external_url = m->opts.external_url,
                         .value = res[i].v,
                         .t_ms = ts,
                         .query = template_query,
                         .query_ctx = m};
        im_lb_load(&b, res[i].labels);
        im_lb_del(&b, IM_METRIC_NAME);
        /* rule labels, templated */
        im_buf_t o;
        im_buf_init(&o, 0);
        for (size_t k = 0; k < r->nlabels; k++) {
            im_buf_reset(&o);
            if (tmpl_expand_or_error(tname, r->labels[k].value, strlen(r->labels[k].value), &d,
                                     &o) != IM_OK)
                m->stats.template_failures++;
            im_lb_set(&b, r->labels[k].name, strlen(r->labels[k].name), o.data ? o.data : "",
                      o.len);
        }
        im_buf_free(&o);
        im_lb_set(&b, "alertname", 9, r->name, strlen(r->name));
        const im_labels_t *ls = im_lb_build(&b);
        im_labels_builder_t ab;
        im_lb_init(&ab);
        const im_labels_t *ann = expand_kvs(m, tname, r->annotations, r->nannotations, &d, &ab);
        im_lb_free(&ab);
        for (size_t j = 0; j < ncur; j++)
            if (im_labels_equal(cur[j].labels, ls)) {
                im_labels_unref(ls);
                im_labels_unref(ann);
                for (size_t q = 0; q < ncur; q++) free_alert(&cur[q]);
                im_free(cur);
                im_lb_free(&b);
                free_qsamples(res, nres);
                return im_err_set(err, IM_EEXEC,
                                  "vector contains metrics with the same labelset after applying "
                                  "alert labels");
            }
        cur[ncur++] = (alert_t){.hash = ls->hash,
                                .labels = ls,
                                .annotations = ann,
                                .state = RULES_ALERT_PENDING,
                                .value = res[i].v,
                                .active_at = ts,
                                .fired_at = UNSET,
                                .resolved_at = UNSET,
                                .last_sent_at = UNSET,
                                .valid_until = UNSET,
                                .keep_firing_since = UNSET};
    }
    im_lb_free(&b);
    free_qsamples(res, nres);
    /* merge into the active set */
    for (size_t i = 0; i < ncur; i++) {
        alert_t *a = find_alert(rt, cur[i].hash, cur[i].labels);
        if (a && a->state != RULES_ALERT_INACTIVE) {
            a->value = cur[i].value;
            im_labels_unref(a->annotations);
            a->annotations = cur[i].annotations;
            cur[i].annotations = NULL;
            im_labels_unref(cur[i].labels);
            cur[i].labels = NULL;
            continue;
        }
        if (a) {
            free_alert(a);
            *a = cur[i];
        } else {
            if (rt->nalerts == rt->cap) {
                rt->cap = rt->cap ? rt->cap * 2 : 8;
                rt->alerts = im_realloc(rt->alerts, rt->cap * sizeof *rt->alerts);
            }
            rt->alerts[rt->nalerts++] = cur[i];
        }
        cur[i].labels = cur[i].annotations = NULL;
    }
    /* state transitions */
    qsample_t *vec = im_calloc(rt->nalerts * 2 + 1, sizeof *vec);
    size_t nvec = 0;
    size_t active_pending = 0;
    for (size_t i = 0; i < rt->nalerts;) {
        alert_t *a = &rt->alerts[i];
        bool in_result = false;
        for (size_t j = 0; j < ncur && !in_result; j++) in_result = cur[j].hash == a->hash;
        if (!in_result) {
            bool keep = false;
            if (a->state == RULES_ALERT_FIRING && r->keep_firing_for_ms > 0) {
                if (a->keep_firing_since == UNSET) a->keep_firing_since = ts;
                if (ts - a->keep_firing_since < r->keep_firing_for_ms) keep = true;
            }
            if (a->state == RULES_ALERT_PENDING ||
                (a->resolved_at != UNSET && ts - a->resolved_at > RESOLVED_RETENTION)) {
                free_alert(a);
                rt->alerts[i] = rt->alerts[--rt->nalerts];
                continue;
            }
            if (a->state != RULES_ALERT_INACTIVE && !keep) {
                a->state = RULES_ALERT_INACTIVE;
                a->resolved_at = ts;
            }
            if (!keep) {
                i++;
                continue;
            }
        } else {
            a->keep_firing_since = UNSET;
        }
        active_pending++;
        if (a->state == RULES_ALERT_PENDING && ts - a->active_at >= r->for_ms) {
            a->state = RULES_ALERT_FIRING;
            a->fired_at = ts;
        }
        if (rt->restored) {
            vec[nvec++] = (qsample_t){alert_series_labels(a, false), 1.0, ts - offset};
            vec[nvec++] = (qsample_t){
                alert_series_labels(a, true),
                (double)(a->active_at / 1000 - (a->active_at < 0 && a->active_at % 1000 ? 1 : 0)),
                ts - offset};
        }
        i++;
    }
    for (size_t q = 0; q < ncur; q++) free_alert(&cur[q]);
    im_free(cur);
    if (g->limit > 0 && (int64_t)active_pending > g->limit) {
        for (size_t i = 0; i < rt->nalerts; i++) free_alert(&rt->alerts[i]);
        rt->nalerts = 0;
        free_qsamples(vec, nvec);
        return im_err_set(err, IM_ELIMIT, "exceeded limit of %" PRId64 " with %zu alerts", g->limit,
                          active_pending);
    }
    *out = vec;
    *nout = nvec;
    return IM_OK;
}

static void query_escape(im_buf_t *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~')
            (void)im_buf_putc(b, (char)c);
        else if (c == ' ')
            (void)im_buf_putc(b, '+');
        else
            (void)im_buf_printf(b, "%%%02X", c);
    }
}

static void send_alerts(rules_manager_t *m, group_rt_t *g, rule_rt_t *rt, int64_t ts)
{
    if (!m->opts.notify) return;
    rules_notify_alert_t *out = im_calloc(rt->nalerts ? rt->nalerts : 1, sizeof *out);
    size_t n = 0;
    im_buf_t url;
    im_buf_init(&url, 0);
    const char *ext = m->opts.external_url ? m->opts.external_url : "";
    size_t el = strlen(ext);
    (void)im_buf_append(&url, ext, el && ext[el - 1] == '/' ? el - 1 : el);
    (void)im_buf_puts(&url, "/graph?g0.expr=");
    im_buf_t q;
    im_buf_init(&q, 0);
    if (rt->r->ast)
        (void)promql_format(rt->r->ast, &q);
    else
        (void)im_buf_puts(&q, rt->r->expr);
    query_escape(&url, q.data ? q.data : "");
    im_buf_free(&q);
    (void)im_buf_puts(&url, "&g0.tab=1");
    int64_t delta =
        m->opts.resend_delay_ms > g->interval_ms ? m->opts.resend_delay_ms : g->interval_ms;
    for (size_t i = 0; i < rt->nalerts; i++) {
        alert_t *a = &rt->alerts[i];
        if (a->state == RULES_ALERT_PENDING) continue;
        bool need = (a->resolved_at != UNSET &&
                     (a->last_sent_at == UNSET || a->resolved_at > a->last_sent_at)) ||
                    a->last_sent_at == UNSET || a->last_sent_at + m->opts.resend_delay_ms < ts;
        if (!need) continue;
        a->last_sent_at = ts;
        a->valid_until = ts + 4 * delta;
        out[n].labels = a->labels;
        out[n].annotations = a->annotations;
        out[n].starts_at_ms = a->fired_at != UNSET ? a->fired_at : a->active_at;
        out[n].resolved = a->resolved_at != UNSET;
        out[n].ends_at_ms = a->resolved_at != UNSET ? a->resolved_at : a->valid_until;
        out[n].generator_url = url.data;
        n++;
    }
    if (n) m->opts.notify(m->opts.notify_ctx, out, n);
    im_buf_free(&url);
    im_free(out);
}

/* ---- restoring `for` state ---- */

static void restore_for_state(rules_manager_t *m, group_rt_t *g, int64_t ts)
{
    int64_t mint = ts - m->opts.outage_tolerance_ms;
    for (size_t ri = 0; ri < g->g->nrules; ri++) {
        rule_rt_t *rt = &g->rules[ri];
        if (rt->r->kind != RULES_ALERTING) continue;
        if (rt->r->for_ms < m->opts.grace_period_ms) {
            rt->restored = true;
            continue;
        }
        for (size_t i = 0; i < rt->nalerts; i++) {
            alert_t *a = &rt->alerts[i];
            const im_labels_t *want = alert_series_labels(a, true);
            im_matcher_t **ms = im_calloc(want->n, sizeof *ms);
            size_t nms = 0;
            for (uint32_t k = 0; k < want->n; k++) {
                im_err_t err;
                if (im_matcher_new(IM_MATCH_EQ, want->l[k].name->s, want->l[k].name->len,
                                   want->l[k].value->s, want->l[k].value->len, &ms[nms],
                                   &err) == IM_OK)
                    nms++;
            }
            storage_series_set_t *set = NULL;
            im_err_t err;
            storage_queryable_t *q = m->opts.storage.queryable;
            if (q && q->vt->select(q, mint, ts, ms, nms, NULL, &set, &err) == IM_OK && set) {
                for (size_t s = 0; s < set->n; s++) {
                    if (!im_labels_equal(set->series[s].labels, want)) continue;
                    storage_iter_t *it = set->vt->iter(set, s);
                    int64_t t = UNSET;
                    double v = 0;
                    while (it->vt->next(it)) {
                        int64_t tt;
                        double vv;
                        it->vt->at(it, &tt, &vv);
                        if (storage_is_stale(vv)) continue;
                        t = tt;
                        v = vv;
                    }
                    it->vt->free(it);
                    if (t == UNSET || v <= 0) continue;
                    int64_t down_at = t / 1000 * 1000;
                    int64_t restored_active = (int64_t)v * 1000;
                    int64_t spent = down_at - restored_active;
                    int64_t remaining = rt->r->for_ms - spent;
                    if (remaining <= 0) {
                        /* was firing: the next evaluation fires again */
                    } else if (remaining < m->opts.grace_period_ms) {
                        restored_active = ts + m->opts.grace_period_ms - rt->r->for_ms;
                    } else {
                        restored_active += ts - down_at;
                    }
                    a->active_at = restored_active;
                }
                set->vt->free(set);
            }
            for (size_t k = 0; k < nms; k++) im_matcher_free(ms[k]);
            im_free(ms);
            im_labels_unref(want);
        }
        rt->restored = true;
    }
}

/* ---- group evaluation ---- */

static void eval_group(rules_manager_t *m, group_rt_t *g, int64_t ts)
{
    int64_t offset = g->g->query_offset_ms >= 0 ? g->g->query_offset_ms : m->opts.query_offset_ms;
    int64_t gstart = im_mono_ns();
    for (size_t ri = 0; ri < g->g->nrules; ri++) {
        rule_rt_t *rt = &g->rules[ri];
        int64_t rstart = im_mono_ns();
        im_err_t err;
        im_err_clear(&err);
        qsample_t *vec = NULL;
        size_t n = 0;
        im_rc rc;
        m->stats.evaluations++;
        if (!rt->r->ast) {
            rc = im_err_set(&err, IM_EPARSE, "rule expression did not parse");
        } else if (rt->r->kind == RULES_RECORDING) {
            rc = eval_recording(m, g->g, rt, ts, offset, &vec, &n, &err);
        } else {
            rc = eval_alerting(m, g->g, rt, ts, offset, &vec, &n, &err);
        }
        rt->last_eval_ms = ts;
        rt->evaluated = true;
        rt->eval_seconds = (double)(im_mono_ns() - rstart) / 1e9;
        if (rc != IM_OK) {
            m->stats.evaluation_failures++;
            set_error(rt, err.msg);
            IM_WARN("Evaluating rule failed", "group=%s rule=%s err=%s", im_logq(g->g->name),
                    im_logq(rt->r->name), im_logq(err.msg));
            continue;
        }
        set_error(rt, NULL);
        if (rt->r->kind == RULES_ALERTING) send_alerts(m, g, rt, ts);
        write_series(m, rt, vec, n, ts - offset);
        for (size_t i = 0; i < n; i++) im_labels_unref(vec[i].labels);
        im_free(vec);
    }
    g->last_eval_ms = ts;
    g->evaluated = true;
    g->eval_seconds = (double)(im_mono_ns() - gstart) / 1e9;
}

void rules_manager_eval_group(rules_manager_t *m, size_t gi, int64_t t_ms)
{
    pthread_mutex_lock(&m->mu);
    group_rt_t *g = &m->groups[gi];
    eval_group(m, g, t_ms);
    if (g->should_restore) {
        restore_for_state(m, g, t_ms);
        g->should_restore = false;
    }
    pthread_mutex_unlock(&m->mu);
}

size_t rules_manager_tick(rules_manager_t *m, int64_t now_ms)
{
    size_t done = 0;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->ngroups; i++) {
        group_rt_t *g = &m->groups[i];
        if (g->next_eval_ms == UNSET)
            g->next_eval_ms =
                rules_group_eval_timestamp(g->g, g->interval_ms, now_ms) + g->interval_ms;
        if (now_ms < g->next_eval_ms) continue;
        int64_t missed = (now_ms - g->next_eval_ms) / g->interval_ms;
        if (missed > 0) {
            m->stats.iterations_missed += (uint64_t)missed;
            m->stats.iterations_scheduled += (uint64_t)missed;
        }
        g->next_eval_ms += missed * g->interval_ms;
        int64_t ts = g->next_eval_ms;
        m->stats.iterations_scheduled++;
        eval_group(m, g, ts);
        if (g->should_restore) {
            restore_for_state(m, g, now_wall_ms() > ts ? ts : ts);
            g->should_restore = false;
        }
        g->next_eval_ms += g->interval_ms;
        done++;
    }
    pthread_mutex_unlock(&m->mu);
    return done;
}

int64_t rules_manager_next_ms(rules_manager_t *m, int64_t now_ms)
{
    int64_t best = INT64_MAX;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->ngroups; i++) {
        group_rt_t *g = &m->groups[i];
        int64_t next =
            g->next_eval_ms == UNSET
                ? rules_group_eval_timestamp(g->g, g->interval_ms, now_ms) + g->interval_ms
                : g->next_eval_ms;
        if (next < best) best = next;
    }
    pthread_mutex_unlock(&m->mu);
    if (best == INT64_MAX) return 1000;
    return best > now_ms ? best - now_ms : 0;
}

void rules_manager_visit_alerts(rules_manager_t *m, size_t gi, size_t ri, rules_alert_visit_fn fn,
                                void *ctx)
{
    rule_rt_t *rt = &m->groups[gi].rules[ri];
    for (size_t i = 0; i < rt->nalerts; i++) {
        alert_t *a = &rt->alerts[i];
        fn(ctx, a->state, a->labels, a->annotations, a->active_at, a->fired_at, a->value);
    }
}

const char *rules_manager_rule_error(rules_manager_t *m, size_t gi, size_t ri)
{
    const char *e = m->groups[gi].rules[ri].last_error;
    return e ? e : "";
}

void rules_manager_stats(rules_manager_t *m, rules_stats_t *out)
{
    pthread_mutex_lock(&m->mu);
    *out = m->stats;
    pthread_mutex_unlock(&m->mu);
}

/* ---- JSON ---- */

/* JSON strings and label sets: labels/json.h (HTML-safe, as Go encodes API answers). */
static void json_str(im_buf_t *b, const char *s, size_t n)
{
    im_json_string(b, s, n, IM_JSON_HTML);
}

static void json_labels(im_buf_t *b, const im_labels_t *ls)
{
    im_json_labels(b, ls, IM_JSON_HTML);
}

static void json_kvs(im_buf_t *b, const rules_kv_t *kv, size_t n)
{
    (void)im_buf_putc(b, '{');
    for (size_t i = 0; i < n; i++) {
        if (i) (void)im_buf_putc(b, ',');
        json_str(b, kv[i].name, strlen(kv[i].name));
        (void)im_buf_putc(b, ':');
        json_str(b, kv[i].value, strlen(kv[i].value));
    }
    (void)im_buf_putc(b, '}');
}

static void json_time(im_buf_t *b, int64_t ms, bool set)
{
    char tb[64];
    if (!set) {
        (void)im_buf_puts(b, "\"0001-01-01T00:00:00Z\"");
        return;
    }
    im_time_format_rfc3339(ms, tb, sizeof tb);
    (void)im_buf_printf(b, "\"%s\"", tb);
}

static const char *state_str(rules_alert_state_t s)
{
    return s == RULES_ALERT_FIRING ? "firing" : s == RULES_ALERT_PENDING ? "pending" : "inactive";
}

static void json_alert(im_buf_t *b, const alert_t *a)
{
    (void)im_buf_puts(b, "{\"labels\":");
    json_labels(b, a->labels);
    (void)im_buf_puts(b, ",\"annotations\":");
    json_labels(b, a->annotations);
    (void)im_buf_printf(b, ",\"state\":\"%s\",\"activeAt\":", state_str(a->state));
    json_time(b, a->active_at, true);
    if (a->keep_firing_since != UNSET) {
        (void)im_buf_puts(b, ",\"keepFiringSince\":");
        json_time(b, a->keep_firing_since, true);
    }
    char vb[IM_FLOAT_BUF];
    im_fmt_float_go(a->value, 'e', vb, sizeof vb);
    (void)im_buf_printf(b, ",\"value\":\"%s\"}", vb);
}

static void json_query(im_buf_t *b, const rules_rule_t *r)
{
    im_buf_t q;
    im_buf_init(&q, 0);
    if (r->ast)
        (void)promql_format(r->ast, &q);
    else
        (void)im_buf_puts(&q, r->expr);
    json_str(b, q.data ? q.data : "", q.len);
    im_buf_free(&q);
}

im_rc rules_manager_rules_json(rules_manager_t *m, const char *type, im_buf_t *out)
{
    pthread_mutex_lock(&m->mu);
    (void)im_buf_puts(out, "{\"groups\":[");
    bool first_g = true;
    /* Prometheus lists groups sorted by file, then name */
    size_t *order = im_malloc((m->ngroups ? m->ngroups : 1) * sizeof *order);
    for (size_t i = 0; i < m->ngroups; i++) {
        size_t j = i;
        while (j > 0) {
            const rules_group_t *a = m->groups[order[j - 1]].g, *b = m->groups[i].g;
            int c = strcmp(a->file, b->file);
            if (c == 0) c = strcmp(a->name, b->name);
            if (c <= 0) break;
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    for (size_t oi = 0; oi < m->ngroups; oi++) {
        group_rt_t *g = &m->groups[order[oi]];
        if (!first_g) (void)im_buf_putc(out, ',');
        first_g = false;
        (void)im_buf_puts(out, "{\"name\":");
        json_str(out, g->g->name, strlen(g->g->name));
        (void)im_buf_puts(out, ",\"file\":");
        json_str(out, g->g->file, strlen(g->g->file));
        (void)im_buf_puts(out, ",\"rules\":[");
        bool first_r = true;
        for (size_t ri = 0; ri < g->g->nrules; ri++) {
            rule_rt_t *rt = &g->rules[ri];
            const rules_rule_t *r = rt->r;
            bool alerting = r->kind == RULES_ALERTING;
            if (type && ((strcmp(type, "alert") == 0) != alerting)) continue;
            if (!first_r) (void)im_buf_putc(out, ',');
            first_r = false;
            (void)im_buf_putc(out, '{');
            if (alerting) {
                rules_alert_state_t st = RULES_ALERT_INACTIVE;
                for (size_t i = 0; i < rt->nalerts; i++)
                    if (rt->alerts[i].state > st) st = rt->alerts[i].state;
                (void)im_buf_printf(out, "\"state\":\"%s\",", state_str(st));
            }
            (void)im_buf_puts(out, "\"name\":");
            json_str(out, r->name, strlen(r->name));
            (void)im_buf_puts(out, ",\"query\":");
            json_query(out, r);
            if (alerting) {
                (void)im_buf_printf(out, ",\"duration\":%" PRId64 ",\"keepFiringFor\":%" PRId64,
                                    r->for_ms / 1000, r->keep_firing_for_ms / 1000);
                (void)im_buf_puts(out, ",\"labels\":");
                json_kvs(out, r->labels, r->nlabels);
                (void)im_buf_puts(out, ",\"annotations\":");
                json_kvs(out, r->annotations, r->nannotations);
                (void)im_buf_puts(out, ",\"alerts\":[");
                bool fa = true;
                for (size_t i = 0; i < rt->nalerts; i++) {
                    if (rt->alerts[i].state == RULES_ALERT_INACTIVE) continue;
                    if (!fa) (void)im_buf_putc(out, ',');
                    fa = false;
                    json_alert(out, &rt->alerts[i]);
                }
                (void)im_buf_putc(out, ']');
            } else {
                (void)im_buf_puts(out, ",\"labels\":");
                json_kvs(out, r->labels, r->nlabels);
            }
            if (rt->last_error) {
                (void)im_buf_puts(out, ",\"health\":\"err\",\"lastError\":");
                json_str(out, rt->last_error, strlen(rt->last_error));
            } else {
                (void)im_buf_printf(out, ",\"health\":\"%s\"", rt->evaluated ? "ok" : "unknown");
            }
            (void)im_buf_printf(out,
                                ",\"evaluationTime\":%.9g,\"lastEvaluation\":", rt->eval_seconds);
            json_time(out, rt->last_eval_ms, rt->evaluated);
            (void)im_buf_printf(out, ",\"type\":\"%s\"}", alerting ? "alerting" : "recording");
        }
        char iv[64];
        snprintf(iv, sizeof iv, "%.17g", (double)g->interval_ms / 1000.0);
        (void)im_buf_printf(out, "],\"interval\":%s,\"limit\":%" PRId64, iv, g->g->limit);
        (void)im_buf_printf(out, ",\"evaluationTime\":%.9g,\"lastEvaluation\":", g->eval_seconds);
        json_time(out, g->last_eval_ms, g->evaluated);
        (void)im_buf_putc(out, '}');
    }
    im_free(order);
    im_rc rc = im_buf_puts(out, "]}");
    pthread_mutex_unlock(&m->mu);
    return rc;
}

im_rc rules_manager_alerts_json(rules_manager_t *m, im_buf_t *out)
{
    pthread_mutex_lock(&m->mu);
    (void)im_buf_puts(out, "{\"alerts\":[");
    bool first = true;
    for (size_t gi = 0; gi < m->ngroups; gi++)
        for (size_t ri = 0; ri < m->groups[gi].g->nrules; ri++) {
            rule_rt_t *rt = &m->groups[gi].rules[ri];
            for (size_t i = 0; i < rt->nalerts; i++) {
                if (rt->alerts[i].state == RULES_ALERT_INACTIVE) continue;
                if (!first) (void)im_buf_putc(out, ',');
                first = false;
                json_alert(out, &rt->alerts[i]);
            }
        }
    im_rc rc = im_buf_puts(out, "]}");
    pthread_mutex_unlock(&m->mu);
    return rc;
}

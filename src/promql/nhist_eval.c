/* nhist_eval.c — native histograms in the evaluator (promql_int.h).
 *
 * Histogram samples travel as boxed doubles (storage/fhist.h) through the
 * same per-series step arrays as floats. A node keeps them only when its
 * consumer takes them (ev->want_hists, set by the consumer just before
 * evaluating the child): everything else sees them removed, as Prometheus
 * ignores histograms in float-only functions and operators.
 *
 * The histogram-aware nodes run in two passes: the float evaluator first (with
 * histograms dropped, so float answers are exactly today's), then, only when
 * that pass dropped histograms, a histogram pass over the same arguments whose
 * results are merged in by labels. A step where both passes give a value (a mix
 * of floats and histograms) gets none, with Prometheus' warning. */
#include "util/base.h"

#include <math.h>

#include "promql/nhist.h"
#include "promql/promql_int.h"
#include "util/fmtfloat.h"

size_t promql__nh_fix(promql_nh_t *nh, bool hist_boxes, bool want, int64_t *t, double *v, size_t n)
{
    size_t w = 0;
    for (size_t k = 0; k < n; k++) {
        const storage_fh_t *h = storage_fh_unbox(v[k]);
        if (!h) {
            t[w] = t[k];
            v[w++] = v[k];
            continue;
        }
        if (!hist_boxes) {
            t[w] = t[k];
            v[w++] = NAN;
            continue;
        }
        if (!want) {
            __atomic_fetch_add(&nh->dropped, 1, __ATOMIC_RELAXED);
            continue;
        }
        nh->seen = true;
        t[w] = t[k];
        v[w++] = storage_fh_box(promql_fh_copy(&nh->arena, h));
    }
    return w;
}

double promql__nh_repeat(ev_t *ev, double v)
{
    const storage_fh_t *h = storage_fh_unbox(v);
    if (!h || h->hint != STORAGE_FH_RESET) return v;
    storage_fh_t *c = promql_fh_copy(&ev->nh->arena, h);
    c->hint = STORAGE_FH_NOT_RESET;
    return storage_fh_box(c);
}

void promql__nh_strip(ev_t *ev, val_t *v)
{
    if (v->kind != VAL_VECTOR) return;
    bool any = false;
    for (size_t i = 0; i < v->n; i++)
        for (size_t k = 0; k < ev->nsteps; k++)
            if (v->s[i].has[k] && storage_fh_is_box(v->s[i].v[k])) {
                v->s[i].has[k] = 0;
                ev->nh->dropped++;
                any = true;
            }
    if (any) promql__compact(ev, v);
}

/* The histogram pass's mark of a mixed window (a signalling NaN no float
 * computation makes): merge removes the float pass's value there. */
#define MIXED_BITS 0x7ff0000000000003ULL

static double mixed_mark(void)
{
    uint64_t b = MIXED_BITS;
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static bool is_mixed_mark(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b == MIXED_BITS;
}

static double box(storage_fh_t *h)
{
    return h ? storage_fh_box(h) : mixed_mark();
}

static const storage_fh_t *hist_at(const vser_t *s, size_t k)
{
    return s->has[k] ? storage_fh_unbox(s->v[k]) : NULL;
}

/* Evaluates e keeping histograms. */
static im_rc eval_hists(ev_t *ev, const promql_expr_t *e, val_t *out)
{
    ev->want_hists = true;
    return promql__eval(ev, e, out);
}

/* Merges the histogram pass's series (hv, freed) into out by labels: a histogram
 * where the float pass has a float is a mix (no value, a warning), a float of the
 * histogram pass (count_over_time, histogram_quantile, …) replaces the float
 * pass's, the mixed mark removes it. */
static void merge(ev_t *ev, val_t *out, val_t *hv, bool quantile)
{
    u64map_t m; /* out's series by label hash */
    promql__map_init(&m, out->n + hv->n);
    for (size_t j = 0; j < out->n; j++) {
        uint32_t *slot = promql__map_slot(&m, out->s[j].labels->hash);
        if (!*slot) *slot = (uint32_t)j + 1;
    }
    for (size_t i = 0; i < hv->n; i++) {
        vser_t *h = &hv->s[i];
        vser_t *f = NULL;
        uint32_t at = promql__map_get(&m, h->labels->hash);
        if (at && im_labels_equal(out->s[at - 1].labels, h->labels)) f = &out->s[at - 1];
        for (size_t j = 0; at && j < out->n && !f; j++) /* a hash collision */
            if (im_labels_equal(out->s[j].labels, h->labels)) f = &out->s[j];
        if (!f) {
            size_t idx = promql__val_add(ev, out, im_labels_ref(h->labels));
            uint32_t *slot = promql__map_slot(&m, h->labels->hash);
            if (!*slot) *slot = (uint32_t)idx + 1;
            f = &out->s[idx];
            f->drop_name = h->drop_name;
            memset(f->has, 0, ev->nsteps);
        }
        for (size_t k = 0; k < ev->nsteps; k++) {
            if (!h->has[k]) continue;
            if (is_mixed_mark(h->v[k])) { /* a mixed window: warned, no value */
                f->has[k] = 0;
                continue;
            }
            if (f->has[k] && !storage_fh_is_box(f->v[k]) && storage_fh_is_box(h->v[k])) {
                f->has[k] = 0;
                const im_istr_t *nm = im_labels_get_istr(h->labels, ev->name_istr);
                promql__warn(ev,
                             "PromQL warning: encountered a mix of histograms and floats for "
                             "metric name \"%s\"",
                             nm ? nm->s : "");
                continue;
            }
            if (quantile && f->has[k]) { /* classic buckets and a native histogram */
                f->has[k] = 0;
                promql__warn(ev, "PromQL warning: vector contains a mix of classic and native "
                                 "histograms");
                continue;
            }
            f->has[k] = 1;
            f->v[k] = h->v[k];
        }
    }
    promql__map_free(&m);
    promql__val_free(ev, hv);
    promql__compact(ev, out);
}

/* ---- histogram_* functions ---- */

static bool is_fn(const promql_call_t *c, const char *name)
{
    return strcmp(c->func->name, name) == 0;
}

/* histogram_count/sum/avg/stddev/stdvar/fraction and the native half of
 * histogram_quantile: floats of each histogram, name dropped. */
static im_rc eval_hist_fn(ev_t *ev, const promql_call_t *c, val_t *out)
{
    val_t p1, p2, in;
    promql__val_init(&p1, VAL_SCALAR);
    promql__val_init(&p2, VAL_SCALAR);
    promql__val_init(&in, VAL_VECTOR);
    bool quant = is_fn(c, "histogram_quantile"), frac = is_fn(c, "histogram_fraction");
    im_rc rc = IM_OK;
    if (quant) rc = promql__eval_scalar_arg(ev, c->args[0], &p1);
    if (frac && rc == IM_OK) rc = promql__eval_scalar_arg(ev, c->args[0], &p1);
    if (frac && rc == IM_OK) rc = promql__eval_scalar_arg(ev, c->args[1], &p2);
    if (rc == IM_OK) rc = eval_hists(ev, c->args[c->nargs - 1], &in);
    promql__val_init(out, VAL_VECTOR);
    const char *n = c->func->name + strlen("histogram_");
    for (size_t i = 0; rc == IM_OK && i < in.n; i++) {
        vser_t *s = &in.s[i];
        size_t idx = SIZE_MAX;
        for (size_t k = 0; k < ev->nsteps; k++) {
            const storage_fh_t *h = hist_at(s, k);
            if (!h) continue;
            double r;
            if (strcmp(n, "count") == 0)
                r = h->count;
            else if (strcmp(n, "sum") == 0)
                r = h->sum;
            else if (strcmp(n, "avg") == 0)
                r = h->sum / h->count;
            else if (strcmp(n, "stdvar") == 0)
                r = promql_fh_stdvar(h);
            else if (strcmp(n, "stddev") == 0)
                r = sqrt(promql_fh_stdvar(h));
            else if (frac)
                r = promql_fh_fraction(p1.sc[k], p2.sc[k], h);
            else
                r = promql_fh_quantile(p1.sc[k], h);
            /* histogram_quantile: its classic half drops the name now (its
             * groups are by labels without le and __name__), so this half too */
            if (idx == SIZE_MAX && quant)
                idx = promql__val_add(ev, out, promql__drop_name(ev, s->labels));
            else if (idx == SIZE_MAX)
                idx = promql__val_add_named(ev, out, s->labels, true, s->drop_name);
            out->s[idx].has[k] = 1;
            out->s[idx].v[k] = r;
        }
    }
    if (rc == IM_OK && quant)
        for (size_t k = 0; k < ev->nsteps; k++)
            if (p1.sc[k] < 0 || p1.sc[k] > 1) {
                bool any = false;
                for (size_t i = 0; i < out->n && !any; i++) any = out->s[i].has[k];
                if (any) promql__warn_quantile(ev, p1.sc[k]);
            }
    promql__val_free(ev, &p1);
    promql__val_free(ev, &p2);
    promql__val_free(ev, &in);
    if (rc == IM_OK) rc = promql__dedup(ev, out);
    return rc;
}

/* ---- Range functions ---- */

typedef enum rfn {
    RF_RATE,
    RF_INCREASE,
    RF_DELTA,
    RF_LAST,
    RF_SUM,
    RF_AVG,
    RF_IRATE,
    RF_IDELTA,
    RF_COUNT,
    RF_PRESENT,
    RF_NONE
} rfn_t;

static rfn_t range_fn(const promql_call_t *c)
{
    static const char *const names[] = {
        "rate",          "increase", "delta",  "last_over_time",  "sum_over_time",
        "avg_over_time", "irate",    "idelta", "count_over_time", "present_over_time"};
    for (int i = 0; i < (int)IM_ARRAY_LEN(names); i++)
        if (is_fn(c, names[i])) return (rfn_t)i;
    return RF_NONE;
}

/* rate/increase/delta of the histogram samples [a, b) (Prometheus'
 * histogramRate and extrapolatedRate). NULL: none (fewer than two, mixed). */
static storage_fh_t *hist_rate(ev_t *ev, rfn_t fn, const int64_t *t, const double *v, size_t a,
                               size_t b, int64_t lo, int64_t hi, int64_t range, bool *mixed)
{
    if (b - a < 2) return NULL;
    bool counter = fn != RF_DELTA;
    const storage_fh_t *first = storage_fh_unbox(v[a]), *last = storage_fh_unbox(v[b - 1]);
    if (!first || !last) {
        *mixed = true;
        return NULL;
    }
    int32_t schema = IM_MIN(first->schema, last->schema);
    for (size_t k = a + 1; k < b - 1; k++) {
        const storage_fh_t *h = storage_fh_unbox(v[k]);
        if (!h) {
            *mixed = true;
            return NULL;
        }
        if (h->schema < schema) schema = h->schema;
    }
    storage_fh_t *red = promql_fh_reduce(NULL, last, schema);
    storage_fh_t *acc = promql_fh_add(NULL, red, first, -1);
    im_free(red);
    if (!acc) return NULL;
    if (counter) {
        const storage_fh_t *prev = first;
        for (size_t k = a + 1; k < b && acc; k++) {
            const storage_fh_t *cur = storage_fh_unbox(v[k]);
            if (promql_fh_detect_reset(cur, prev)) {
                storage_fh_t *n = promql_fh_add(NULL, acc, prev, 1);
                im_free(acc);
                acc = n;
            }
            prev = cur;
        }
        if (!acc) return NULL;
    }
    double sampled = (double)(t[b - 1] - t[a]) / 1000.0;
    double avg = sampled / (double)(b - a - 1), thr = avg * 1.1;
    double to_start = (double)(t[a] - lo) / 1000.0, to_end = (double)(hi - t[b - 1]) / 1000.0;
    if (to_start >= thr) to_start = avg / 2;
    if (counter && acc->count > 0 && first->count >= 0) {
        double to_zero = sampled * (first->count / acc->count);
        if (to_zero < to_start) to_start = to_zero;
    }
    if (to_end >= thr) to_end = avg / 2;
    double factor = (sampled + to_start + to_end) / sampled;
    if (fn == RF_RATE) factor /= (double)range / 1000.0;
    storage_fh_t *r = promql_fh_scale(&ev->nh->arena, acc, factor);
    r->hint = STORAGE_FH_GAUGE;
    im_free(acc);
    return r;
}

static im_rc eval_hist_range(ev_t *ev, const promql_call_t *c, rfn_t fn, val_t *out)
{
    promql__val_init(out, VAL_VECTOR);
    rsrc_t *r;
    ev->want_hists = true;
    im_rc rc = promql__rsrc_open(ev, c->args[0], &r);
    if (rc != IM_OK) return rc;
    const im_labels_t *ls;
    size_t n;
    int got;
    int64_t range = promql__rsrc_range(r);
    while ((got = promql__rsrc_next(ev, r, &ls, &n)) == 1) {
        bool anyh = false;
        for (size_t k = 0; k < n && !anyh; k++) anyh = storage_fh_is_box(ev->rv[k]);
        if (!anyh) continue;
        size_t idx = SIZE_MAX;
        for (size_t i = 0; i < ev->nsteps; i++) {
            int64_t lo, hi;
            promql__rsrc_window(ev, r, i, &lo, &hi);
            size_t a = 0;
            while (a < n && ev->rt[a] < ts_add(lo, ev->left_open)) a++;
            size_t b = a;
            while (b < n && ev->rt[b] <= hi) b++;
            if (b == a) continue;
            bool mixed = false, nh = false;
            for (size_t k = a; k < b; k++) nh |= storage_fh_is_box(ev->rv[k]);
            if (!nh) continue;
            storage_fh_t *res = NULL;
            double fv = 0; /* count/present: a float for every sample, floats too */
            if (fn == RF_COUNT || fn == RF_PRESENT) {
                fv = fn == RF_COUNT ? (double)(b - a) : 1;
                if (idx == SIZE_MAX)
                    idx = promql__val_add_named(ev, out, ls, true, promql__rsrc_marked(r));
                out->s[idx].has[i] = 1;
                out->s[idx].v[i] = fv;
                continue;
            } else if (fn == RF_IRATE || fn == RF_IDELTA) {
                if (b - a < 2) continue;
                const storage_fh_t *x = storage_fh_unbox(ev->rv[b - 2]),
                                   *y = storage_fh_unbox(ev->rv[b - 1]);
                if (!x || !y) {
                    mixed = true;
                } else {
                    storage_fh_t *d = fn == RF_IRATE && promql_fh_detect_reset(y, x)
                                          ? promql_fh_copy(NULL, y)
                                          : promql_fh_add(NULL, y, x, -1);
                    if (d) {
                        double f = 1;
                        if (fn == RF_IRATE) {
                            int64_t dt = ev->rt[b - 1] - ev->rt[b - 2];
                            f = dt > 0 ? 1000.0 / (double)dt : 0;
                        }
                        res = promql_fh_scale(&ev->nh->arena, d, f);
                        res->hint = STORAGE_FH_GAUGE;
                        im_free(d);
                    }
                }
            } else if (fn == RF_LAST) {
                if (!storage_fh_is_box(ev->rv[b - 1])) continue;
                res = (storage_fh_t *)storage_fh_unbox(ev->rv[b - 1]);
            } else if (fn == RF_SUM || fn == RF_AVG) {
                storage_fh_t *acc = NULL;
                for (size_t k = a; k < b && !mixed; k++) {
                    const storage_fh_t *h = storage_fh_unbox(ev->rv[k]);
                    if (!h) {
                        mixed = true;
                        break;
                    }
                    storage_fh_t *nx =
                        acc ? promql_fh_add(NULL, acc, h, 1) : promql_fh_copy(NULL, h);
                    im_free(acc);
                    acc = nx;
                    if (!acc) break;
                }
                if (acc && !mixed)
                    res = promql_fh_scale(&ev->nh->arena, acc,
                                          fn == RF_AVG ? 1.0 / (double)(b - a) : 1.0);
                im_free(acc);
            } else {
                res = hist_rate(ev, fn, ev->rt, ev->rv, a, b, lo, hi, range, &mixed);
            }
            if (mixed) {
                const im_istr_t *nm = im_labels_get_istr(ls, ev->name_istr);
                promql__warn(ev,
                             "PromQL warning: encountered a mix of histograms and floats for "
                             "metric name \"%s\"",
                             nm ? nm->s : "");
            }
            if (!res && !mixed) continue;
            if (idx == SIZE_MAX)
                idx = promql__val_add_named(ev, out, ls, fn != RF_LAST, promql__rsrc_marked(r));
            out->s[idx].has[i] = 1;
            out->s[idx].v[i] = box(res); /* or the mixed mark */
        }
    }
    promql__rsrc_close(ev, r);
    return got < 0 ? (im_rc)got : IM_OK;
}

/* ---- Aggregation: sum, avg ---- */

static im_rc eval_hist_agg(ev_t *ev, const promql_aggregate_t *agg, val_t *out)
{
    val_t in;
    promql__val_init(out, VAL_VECTOR);
    im_rc rc = eval_hists(ev, agg->expr, &in);
    if (rc != IM_OK) return rc;
    u64map_t m;
    promql__map_init(&m, in.n);
    size_t nsteps = ev->nsteps;
    /* per group and step: the running sum and the number of histograms, and
     * whether a float was seen */
    storage_fh_t ***acc = NULL;
    double **cnt = NULL;
    uint8_t **fl = NULL;
    size_t ng = 0;
    for (size_t i = 0; i < in.n; i++) {
        vser_t *s = &in.s[i];
        uint64_t hh = promql__agg_group_hash(agg, s->labels);
        uint32_t *slot = promql__map_slot(&m, hh);
        if (!*slot) {
            *slot = (uint32_t)++ng;
            acc = im_realloc(acc, ng * sizeof *acc);
            cnt = im_realloc(cnt, ng * sizeof *cnt);
            fl = im_realloc(fl, ng * sizeof *fl);
            acc[ng - 1] = im_calloc(nsteps, sizeof **acc);
            cnt[ng - 1] = im_calloc(nsteps, sizeof **cnt);
            fl[ng - 1] = im_calloc(nsteps, 1);
            promql__val_add(ev, out, promql__agg_group_labels(agg, s->labels));
        }
        size_t g = *slot - 1;
        out->s[g].drop_name |= s->drop_name;
        for (size_t k = 0; k < nsteps; k++) {
            if (!s->has[k]) continue;
            const storage_fh_t *h = storage_fh_unbox(s->v[k]);
            if (!h) {
                fl[g][k] = 1;
                continue;
            }
            storage_fh_t *nx =
                acc[g][k] ? promql_fh_add(NULL, acc[g][k], h, 1) : promql_fh_copy(NULL, h);
            if (!nx) {
                promql__warn(ev, "PromQL warning: vector contains histograms with incompatible "
                                 "custom buckets");
                fl[g][k] = 2;
            }
            im_free(acc[g][k]);
            acc[g][k] = nx;
            cnt[g][k]++;
        }
    }
    for (size_t g = 0; g < ng; g++) {
        for (size_t k = 0; k < nsteps; k++) {
            if (acc[g][k] && !fl[g][k]) {
                double f = agg->op == PROMQL_AGG_AVG ? 1.0 / cnt[g][k] : 1.0;
                out->s[g].v[k] = storage_fh_box(promql_fh_scale(&ev->nh->arena, acc[g][k], f));
                out->s[g].has[k] = 1;
            } else if (acc[g][k] && fl[g][k] == 1) {
                promql__warn(ev, "PromQL warning: encountered a mix of histograms and floats for "
                                 "aggregation");
            }
            im_free(acc[g][k]);
        }
        im_free(acc[g]);
        im_free(cnt[g]);
        im_free(fl[g]);
    }
    im_free(acc);
    im_free(cnt);
    im_free(fl);
    promql__map_free(&m);
    promql__val_free(ev, &in);
    return IM_OK;
}

/* ---- Binary operators ---- */

/* The matching signature of a series (on / ignoring, name dropped). */
static const im_labels_t *sig_labels(const promql_binary_t *b, const im_labels_t *ls)
{
    const promql_vector_matching_t *m = b->matching;
    im_labels_builder_t lb;
    im_lb_init(&lb);
    if (m && m->on) {
        for (size_t i = 0; i < m->nmatching_labels; i++) {
            const im_istr_t *v = im_labels_get_istr(ls, m->matching_labels[i]);
            if (v) im_lb_set_istr(&lb, m->matching_labels[i], v);
        }
    } else {
        im_lb_load(&lb, ls);
        im_lb_del(&lb, IM_METRIC_NAME);
        for (size_t i = 0; m && i < m->nmatching_labels; i++)
            im_lb_del(&lb, m->matching_labels[i]->s);
    }
    const im_labels_t *r = im_lb_build(&lb);
    im_lb_free(&lb);
    return r;
}

static bool exact_eq(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

static void info_types(ev_t *ev, promql_binop_t op, bool lh, bool rh)
{
    promql__warn(ev,
                 "PromQL info: incompatible sample types encountered for binary operator \"%s\": "
                 "%s %s %s",
                 promql_binop_str(op), lh ? "histogram" : "float", promql_binop_str(op),
                 rh ? "histogram" : "float");
}

/* One step of an arithmetic or comparison operator with a histogram on a side:
 * true with *res (a box or a float) when there is a result. */
static bool hist_op(ev_t *ev, const promql_binary_t *b, double x, double y, double *res)
{
    const storage_fh_t *hx = storage_fh_unbox(x), *hy = storage_fh_unbox(y);
    storage_fh_t *r = NULL;
    switch (b->op) {
    case PROMQL_OP_ADD:
    case PROMQL_OP_SUB:
        if (hx && hy) {
            r = promql_fh_add(&ev->nh->arena, hx, hy, b->op == PROMQL_OP_ADD ? 1 : -1);
            if (!r)
                promql__warn(ev, "PromQL warning: vector contains histograms with incompatible "
                                 "custom buckets");
        }
        break;
    case PROMQL_OP_MUL:
        if (hx && !hy) r = promql_fh_scale(&ev->nh->arena, hx, y);
        if (!hx && hy) r = promql_fh_scale(&ev->nh->arena, hy, x);
        break;
    case PROMQL_OP_DIV:
        if (hx && !hy) r = promql_fh_scale(&ev->nh->arena, hx, 1.0 / y);
        break;
    case PROMQL_OP_EQL:
    case PROMQL_OP_NEQ:
        if (hx && hy) {
            bool eq = promql_fh_equal(hx, hy, exact_eq);
            bool keep = eq == (b->op == PROMQL_OP_EQL);
            if (b->return_bool) {
                *res = keep ? 1 : 0;
                return true;
            }
            if (!keep) return false;
            *res = x;
            return true;
        }
        break;
    default: break;
    }
    if (!r) {
        if (!(hx && hy && (b->op == PROMQL_OP_ADD || b->op == PROMQL_OP_SUB)))
            info_types(ev, b->op, hx != NULL, hy != NULL);
        return false;
    }
    *res = storage_fh_box(r);
    return true;
}

/* *mark: set when the name is only marked dropped (delayed name removal). */
static const im_labels_t *out_labels(ev_t *ev, const promql_binary_t *b, const im_labels_t *ls,
                                     bool vv, bool *mark)
{
    bool drop = !promql_binop_is_comparison(b->op) || b->return_bool;
    *mark = false;
    if (vv && b->matching && (b->matching->on || b->matching->nmatching_labels)) {
        const im_labels_t *sg = sig_labels(b, ls);
        if (!b->matching->on || drop) return sg;
        /* on(…) filter comparisons keep the name when it is listed */
        im_labels_unref(sg);
    }
    if (drop && ev->delayed_name) {
        *mark = true;
        return im_labels_ref(ls);
    }
    return drop ? promql__drop_name(ev, ls) : im_labels_ref(ls);
}

static im_rc eval_hist_binary(ev_t *ev, const promql_binary_t *b, val_t *out)
{
    val_t l, r;
    promql__val_init(out, VAL_VECTOR);
    im_rc rc = eval_hists(ev, b->lhs, &l);
    if (rc != IM_OK) return rc;
    rc = eval_hists(ev, b->rhs, &r);
    if (rc != IM_OK) {
        promql__val_free(ev, &l);
        return rc;
    }
    size_t nsteps = ev->nsteps;
    bool set = promql_binop_is_set(b->op);
    if (l.kind == VAL_VECTOR && r.kind == VAL_VECTOR) {
        const im_labels_t **ls = im_calloc(l.n + 1, sizeof *ls),
                          **rs = im_calloc(r.n + 1, sizeof *rs);
        for (size_t i = 0; i < l.n; i++) ls[i] = sig_labels(b, l.s[i].labels);
        for (size_t j = 0; j < r.n; j++) rs[j] = sig_labels(b, r.s[j].labels);
        for (int side = 0; side < (b->op == PROMQL_OP_OR ? 2 : 1); side++) {
            val_t *a = side ? &r : &l, *o = side ? &l : &r;
            const im_labels_t **as = side ? rs : ls, **os = side ? ls : rs;
            for (size_t i = 0; i < a->n; i++) {
                size_t idx = SIZE_MAX;
                for (size_t k = 0; k < nsteps; k++) {
                    if (!a->s[i].has[k]) continue;
                    bool ha = storage_fh_is_box(a->s[i].v[k]);
                    size_t j = 0;
                    for (; j < o->n; j++)
                        if (o->s[j].has[k] && im_labels_equal(as[i], os[j])) break;
                    bool match = j < o->n;
                    double res;
                    bool keep;
                    if (set) {
                        if (!ha) continue;
                        keep = b->op == PROMQL_OP_AND ? match : !match;
                        if (b->op == PROMQL_OP_OR && side == 0) keep = true;
                        res = a->s[i].v[k];
                    } else {
                        if (!match || (!ha && !storage_fh_is_box(o->s[j].v[k]))) continue;
                        keep = hist_op(ev, b, a->s[i].v[k], o->s[j].v[k], &res);
                    }
                    if (!keep) continue;
                    if (idx == SIZE_MAX) {
                        bool mark = false;
                        idx = promql__val_add(ev, out,
                                              set ? im_labels_ref(a->s[i].labels)
                                                  : out_labels(ev, b, a->s[i].labels, true, &mark));
                        out->s[idx].drop_name = mark || a->s[i].drop_name;
                    }
                    out->s[idx].has[k] = 1;
                    out->s[idx].v[k] = res;
                }
            }
        }
        for (size_t i = 0; i < l.n; i++) im_labels_unref(ls[i]);
        for (size_t j = 0; j < r.n; j++) im_labels_unref(rs[j]);
        im_free(ls);
        im_free(rs);
    } else if (!set && (l.kind == VAL_VECTOR) != (r.kind == VAL_VECTOR)) {
        val_t *v = l.kind == VAL_VECTOR ? &l : &r;
        const double *sc = l.kind == VAL_VECTOR ? r.sc : l.sc;
        for (size_t i = 0; i < v->n; i++) {
            size_t idx = SIZE_MAX;
            for (size_t k = 0; k < nsteps; k++) {
                if (!v->s[i].has[k] || !storage_fh_is_box(v->s[i].v[k])) continue;
                double res;
                bool keep = v == &l ? hist_op(ev, b, v->s[i].v[k], sc[k], &res)
                                    : hist_op(ev, b, sc[k], v->s[i].v[k], &res);
                if (!keep) continue;
                if (idx == SIZE_MAX) {
                    bool mark = false;
                    idx = promql__val_add(ev, out, out_labels(ev, b, v->s[i].labels, false, &mark));
                    out->s[idx].drop_name = mark || v->s[i].drop_name;
                }
                out->s[idx].has[k] = 1;
                out->s[idx].v[k] = res;
            }
        }
    }
    promql__val_free(ev, &l);
    promql__val_free(ev, &r);
    return rc;
}

/* ---- count_values: a histogram's value is its Go String() form ---- */

static void go_g(im_buf_t *b, double v)
{
    char fb[IM_FLOAT_BUF];
    im_fmt_float_go(v, 'g', fb, sizeof fb);
    im_buf_printf(b, "%s", fb);
}

static void fh_string(const storage_fh_t *h, im_buf_t *b)
{
    im_buf_printf(b, "{count:");
    go_g(b, h->count);
    im_buf_printf(b, ", sum:");
    go_g(b, h->sum);
    for (uint32_t k = h->nneg; k-- > 0;) {
        if (h->neg[k] == 0) continue;
        int32_t idx = h->noff + (int32_t)k;
        im_buf_printf(b, ", [");
        go_g(b, -storage_fh_upper(h->schema, idx, h));
        im_buf_printf(b, ",");
        go_g(b, -storage_fh_lower(h->schema, idx, h));
        im_buf_printf(b, "):");
        go_g(b, h->neg[k]);
    }
    if (h->zcount != 0) {
        im_buf_printf(b, ", [");
        go_g(b, -h->zthresh);
        im_buf_printf(b, ",");
        go_g(b, h->zthresh);
        im_buf_printf(b, "]:");
        go_g(b, h->zcount);
    }
    for (uint32_t k = 0; k < h->npos; k++) {
        if (h->pos[k] == 0) continue;
        int32_t idx = h->poff + (int32_t)k;
        im_buf_printf(b, ", (");
        go_g(b, storage_fh_lower(h->schema, idx, h));
        im_buf_printf(b, ",");
        go_g(b, storage_fh_upper(h->schema, idx, h));
        im_buf_printf(b, "]:");
        go_g(b, h->pos[k]);
    }
    im_buf_printf(b, "}");
}

static im_rc eval_hist_count_values(ev_t *ev, const promql_aggregate_t *agg, val_t *out)
{
    promql__val_init(out, VAL_VECTOR);
    const promql_expr_t *pe = agg->param;
    while (pe->kind == PROMQL_NODE_PAREN) pe = pe->u.paren.expr;
    if (pe->kind != PROMQL_NODE_STRING) return IM_OK;
    val_t in;
    im_rc rc = eval_hists(ev, agg->expr, &in);
    if (rc != IM_OK) return rc;
    im_buf_t sb;
    im_buf_init(&sb, 0);
    for (size_t i = 0; i < in.n; i++) {
        for (size_t k = 0; k < ev->nsteps; k++) {
            const storage_fh_t *h = hist_at(&in.s[i], k);
            if (!h) continue;
            im_buf_reset(&sb);
            fh_string(h, &sb);
            const im_labels_t *g = promql__agg_group_labels(agg, in.s[i].labels);
            im_labels_builder_t lb;
            im_lb_init(&lb);
            im_lb_load(&lb, g);
            im_lb_set(&lb, pe->u.string.s, pe->u.string.len, sb.data, sb.len);
            const im_labels_t *ol = im_lb_build(&lb);
            im_lb_free(&lb);
            im_labels_unref(g);
            size_t j = 0;
            for (; j < out->n; j++)
                if (im_labels_equal(out->s[j].labels, ol)) break;
            if (j == out->n) {
                j = promql__val_add(ev, out, ol);
            } else {
                im_labels_unref(ol);
            }
            if (!out->s[j].has[k]) out->s[j].v[k] = 0;
            out->s[j].has[k] = 1;
            out->s[j].v[k] += 1;
        }
    }
    im_buf_free(&sb);
    promql__val_free(ev, &in);
    return IM_OK;
}

/* ---- Dispatch ---- */

im_rc promql__nh_node(ev_t *ev, const promql_expr_t *e, val_t *out)
{
    int64_t before = __atomic_load_n(&ev->nh->dropped, __ATOMIC_RELAXED);
    im_rc rc;
    val_t hv;
    switch (e->kind) {
    case PROMQL_NODE_CALL: {
        const promql_call_t *c = &e->u.call;
        if (strncmp(c->func->name, "histogram_", 10) == 0 && !is_fn(c, "histogram_quantile"))
            return eval_hist_fn(ev, c, out);
        rc = promql__eval_call(ev, e, out);
        if (rc != IM_OK || __atomic_load_n(&ev->nh->dropped, __ATOMIC_RELAXED) == before) return rc;
        rfn_t fn = range_fn(c);
        if (is_fn(c, "histogram_quantile"))
            rc = eval_hist_fn(ev, c, &hv);
        else if (fn != RF_NONE)
            rc = eval_hist_range(ev, c, fn, &hv);
        else
            return rc;
        break;
    }
    case PROMQL_NODE_AGGREGATE: {
        const promql_aggregate_t *agg = &e->u.agg;
        /* count and group count histograms; limitk and limit_ratio select series
         * and pass their samples through (by name: the 3.x operators) */
        const char *opn = promql_aggop_str(agg->op);
        bool passes = agg->op == PROMQL_AGG_COUNT || agg->op == PROMQL_AGG_GROUP ||
                      strcmp(opn, "limitk") == 0 || strcmp(opn, "limit_ratio") == 0;
        if (passes) {
            ev->want_hists = true;     /* the fused range path's source… */
            ev->want_expr = agg->expr; /* …or the operand after a parameter */
        }
        rc = promql__eval_aggregate(ev, e, out);
        ev->want_expr = NULL;
        if (rc != IM_OK || passes || __atomic_load_n(&ev->nh->dropped, __ATOMIC_RELAXED) == before)
            return rc;
        if (agg->op == PROMQL_AGG_COUNT_VALUES) {
            rc = eval_hist_count_values(ev, agg, &hv);
            break;
        }
        if (agg->op != PROMQL_AGG_SUM && agg->op != PROMQL_AGG_AVG) {
            promql__warn(ev, "PromQL info: ignored histogram in %s aggregation",
                         promql_aggop_str(agg->op));
            return rc;
        }
        rc = eval_hist_agg(ev, agg, &hv);
        break;
    }
    case PROMQL_NODE_BINARY:
        rc = promql__eval_binary(ev, e, out);
        if (rc != IM_OK || __atomic_load_n(&ev->nh->dropped, __ATOMIC_RELAXED) == before) return rc;
        rc = eval_hist_binary(ev, &e->u.bin, &hv);
        break;
    default: return im_err_set(ev->err, IM_EEXEC, "not a call, aggregation or operator");
    }
    if (rc != IM_OK) {
        promql__val_free(ev, out);
        return rc;
    }
    if (out->kind != VAL_VECTOR) {
        promql__val_free(ev, &hv);
        return IM_OK;
    }
    merge(ev, out, &hv, e->kind == PROMQL_NODE_CALL && is_fn(&e->u.call, "histogram_quantile"));
    return IM_OK;
}

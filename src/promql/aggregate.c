/* aggregate.c — aggregation operators: sum, avg, count, min, max, group, stddev,
 * stdvar, quantile, topk, bottomk, count_values, with by/without.
 *
 * Each input series is assigned to its group once (by hashing the grouping
 * labels); the per-step accumulators of a group are dense arrays, so the inner
 * loop of sum/avg/… runs over one series' steps without lookups. Arithmetic
 * follows Prometheus 2.53: Kahan-compensated sum, incremental mean for avg (with
 * its infinity rules), Welford for stddev/stdvar, NaN replaced by any number for
 * min/max. topk/bottomk keep the input series (labels untouched) and order an
 * instant result best first, NaN last. */
#include "util/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "promql/promql_int.h"
#include "util/fmtfloat.h"

#include "promql/aggregate_int.h"

void promql__warn_quantile(ev_t *ev, double q)
{
    char fb[IM_FLOAT_BUF];
    im_fmt_float_go(q, 'g', fb, sizeof fb);
    promql__warn(ev, "PromQL warning: quantile value should be between 0 and 1, got %s", fb);
}

/* Prometheus 3's avg: a Kahan-compensated sum divided at the end while the sum
 * stays finite, then (once it would overflow) an incremental mean, also
 * compensated. *a is the sum or the mean, *c the compensation, *n the count,
 * negative once the mean is incremental. */
static void avg3_acc(double *a, double *c, double *n, double x)
{
    double cnt = fabs(*n) + 1;
    if (*n > 0) {
        double s = *a, cc = *c;
        promql__kahan_inc(x, &s, &cc);
        if (!isinf(s)) {
            *a = s;
            *c = cc;
            *n = cnt;
            return;
        }
        *a = *a / (cnt - 1);
        *c = *c / (cnt - 1);
    }
    *n = -cnt;
    if (isinf(*a)) {
        if (isinf(x) && (*a > 0) == (x > 0)) return;
        if (!isinf(x) && !isnan(x)) return;
    }
    double q = (cnt - 1) / cnt;
    double m = q * *a, cc = q * *c;
    promql__kahan_inc(x / cnt, &m, &cc);
    *a = m;
    *c = cc;
}

/* compat 3: a group whose first value is NaN or ±Inf has a NaN variance (3.x),
 * where 2.53 started it at 0. */
void promql__agg_acc(promql_aggop_t op, double *A, double *B, double *C, const double *v,
                     const uint8_t *has, size_t nsteps, int compat)
{
    for (size_t k = 0; k < nsteps; k++) {
        if (!has[k]) continue;
        double x = v[k];
        if (C[k] == 0) {
            C[k] = 1;
            A[k] = x;
            B[k] =
                compat >= 3 && (op == PROMQL_AGG_STDDEV || op == PROMQL_AGG_STDVAR) && !isfinite(x)
                    ? NAN
                    : 0;
            continue;
        }
        if (op == PROMQL_AGG_AVG && compat >= 3) {
            avg3_acc(&A[k], &B[k], &C[k], x);
            continue;
        }
        double cnt = ++C[k];
        switch (op) {
        case PROMQL_AGG_SUM: promql__kahan_inc(x, &A[k], &B[k]); break;
        case PROMQL_AGG_AVG:
            if (isinf(A[k])) {
                if (isinf(x) && (A[k] > 0) == (x > 0)) break;
                if (!isinf(x) && !isnan(x)) break;
            }
            A[k] += x / cnt - A[k] / cnt;
            break;
        case PROMQL_AGG_MIN:
            if (A[k] > x || isnan(A[k])) A[k] = x;
            break;
        case PROMQL_AGG_MAX:
            if (A[k] < x || isnan(A[k])) A[k] = x;
            break;
        case PROMQL_AGG_STDDEV:
        case PROMQL_AGG_STDVAR: {
            double delta = x - A[k];
            A[k] += delta / cnt;
            B[k] += delta * (x - A[k]);
            break;
        }
        default: break;
        }
    }
}

void promql__agg_fin(promql_aggop_t op, const double *A, const double *B, const double *C,
                     double *v, uint8_t *has, size_t nsteps, int compat)
{
    for (size_t k = 0; k < nsteps; k++) {
        if (C[k] == 0) continue;
        has[k] = 1;
        if (op == PROMQL_AGG_AVG && compat >= 3) {
            v[k] = C[k] < 0 ? A[k] + B[k] : A[k] / C[k] + B[k] / C[k];
            continue;
        }
        switch (op) {
        case PROMQL_AGG_SUM: v[k] = isinf(A[k]) ? A[k] : A[k] + B[k]; break;
        case PROMQL_AGG_COUNT: v[k] = C[k]; break;
        case PROMQL_AGG_GROUP: v[k] = 1; break;
        case PROMQL_AGG_STDVAR: v[k] = B[k] / C[k]; break;
        case PROMQL_AGG_STDDEV: v[k] = sqrt(B[k] / C[k]); break;
        default: v[k] = A[k]; break; /* avg, min, max */
        }
    }
}

const im_labels_t *promql__agg_group_labels(const promql_aggregate_t *agg, const im_labels_t *ls)
{
    im_labels_builder_t b;
    im_lb_init(&b);
    if (agg->without) {
        im_lb_load(&b, ls);
        im_lb_del(&b, IM_METRIC_NAME);
        for (size_t i = 0; i < agg->ngrouping; i++) im_lb_del(&b, agg->grouping[i]->s);
    } else {
        for (size_t i = 0; i < agg->ngrouping; i++) {
            const im_istr_t *v = im_labels_get_istr(ls, agg->grouping[i]);
            if (v) im_lb_set_istr(&b, agg->grouping[i], v);
        }
    }
    const im_labels_t *r = im_lb_build(&b);
    im_lb_free(&b);
    return r;
}

uint64_t promql__agg_group_hash(const promql_aggregate_t *agg, const im_labels_t *ls)
{
    return im_labels_hash_subset(ls, agg->grouping, agg->ngrouping, !agg->without, agg->without);
}

typedef struct topent {
    double v;
    size_t idx;
} topent_t;

static bool top_better(bool top, double a, double b)
{
    /* true when a ranks strictly before b; NaN ranks last */
    if (isnan(a)) return false;
    if (isnan(b)) return true;
    return top ? a > b : a < b;
}

/* Less of Prometheus' vectorByValueHeap (topk) / vectorByReverseValueHeap
 * (bottomk): NaN is always "less", i.e. the first to be replaced. */
static bool heap_less(const topent_t *h, size_t i, size_t j, bool top)
{
    if (isnan(h[i].v)) return true;
    return top ? h[i].v < h[j].v : h[i].v > h[j].v;
}

static void heap_swap(topent_t *h, size_t i, size_t j)
{
    topent_t t = h[i];
    h[i] = h[j];
    h[j] = t;
}

static void heap_up(topent_t *h, size_t j, bool top)
{
    while (j > 0) {
        size_t i = (j - 1) / 2;
        if (!heap_less(h, j, i, top)) break;
        heap_swap(h, i, j);
        j = i;
    }
}

static bool heap_down(topent_t *h, size_t i0, size_t n, bool top)
{
    size_t i = i0;
    for (;;) {
        size_t j1 = 2 * i + 1;
        if (j1 >= n) break;
        size_t j = j1;
        if (j1 + 1 < n && heap_less(h, j1 + 1, j1, top)) j = j1 + 1;
        if (!heap_less(h, j, i, top)) break;
        heap_swap(h, i, j);
        i = j;
    }
    return i > i0;
}

/* ctx: a bool, true for topk (passed through qsort_r, never a file global:
 * evaluations run concurrently on one engine). */
static int cmp_top(const void *pa, const void *pb, void *ctx)
{
    const topent_t *a = pa, *b = pb;
    bool top = *(const bool *)ctx;
    if (top_better(top, a->v, b->v)) return -1;
    if (top_better(top, b->v, a->v)) return 1;
    return a->idx < b->idx ? -1 : (a->idx > b->idx);
}

im_rc promql__eval_aggregate(ev_t *ev, const promql_expr_t *e, val_t *out)
{
    const promql_aggregate_t *agg = &e->u.agg;
    size_t nsteps = ev->nsteps;
    val_t param, in;
    promql__val_init(&param, VAL_SCALAR);
    im_rc rc = IM_OK;
    const char *cv_label = NULL;
    size_t cv_len = 0;
    bool selects = agg->op == PROMQL_AGG_TOPK || agg->op == PROMQL_AGG_BOTTOMK ||
                   agg->op == PROMQL_AGG_LIMITK || agg->op == PROMQL_AGG_LIMIT_RATIO;
    if (selects || agg->op == PROMQL_AGG_QUANTILE) {
        rc = promql__eval(ev, agg->param, &param);
        if (rc != IM_OK) return rc;
        if (param.kind != VAL_SCALAR) {
            promql__val_free(ev, &param);
            return im_err_set(ev->err, IM_EEXEC, "expected a scalar parameter");
        }
    } else if (agg->op == PROMQL_AGG_COUNT_VALUES) {
        const promql_expr_t *p = agg->param;
        while (p->kind == PROMQL_NODE_PAREN) p = p->u.paren.expr;
        if (p->kind != PROMQL_NODE_STRING)
            return im_err_set(ev->err, IM_EEXEC, "expected a string parameter");
        cv_label = p->u.string.s;
        cv_len = p->u.string.len;
        if (!im_label_name_valid(cv_label, cv_len)) {
            /* %q as Go writes it: bytes of invalid UTF-8 as \xNN */
            char q[256];
            size_t o = 0;
            bool esc = !im_utf8_valid(cv_label, cv_len);
            for (size_t i = 0; i < cv_len && o + 5 < sizeof q; i++) {
                unsigned char c = (unsigned char)cv_label[i];
                if (esc && c >= 0x80)
                    o += (size_t)snprintf(q + o, sizeof q - o, "\\x%02x", c);
                else
                    q[o++] = (char)c;
            }
            q[o] = 0;
            return im_err_set(ev->err, IM_EEXEC, "invalid label name \"%s\"", q);
        }
    }
    if (!selects && agg->op != PROMQL_AGG_QUANTILE && agg->op != PROMQL_AGG_COUNT_VALUES) {
        bool done = false;
        rc = promql__eval_agg_range(ev, agg, out, &done);
        if (done || rc != IM_OK) return rc;
    }
    rc = promql__eval(ev, agg->expr, &in);
    if (rc != IM_OK) {
        promql__val_free(ev, &param);
        return rc;
    }
    if (selects) {
        for (size_t k = 0; k < nsteps; k++) {
            double p = param.sc[k];
            if (isnan(p) && (ev->compat >= 3 || agg->op == PROMQL_AGG_LIMIT_RATIO)) {
                rc = im_err_set(ev->err, IM_EEXEC,
                                agg->op == PROMQL_AGG_LIMIT_RATIO ? "Ratio value is NaN"
                                                                  : "Parameter value is NaN");
                goto done_in;
            }
            if (agg->op == PROMQL_AGG_LIMIT_RATIO) continue;
            if (isnan(p) || p >= 9223372036854775807.0 || p < -9223372036854775808.0) {
                char fb[64];
                im_fmt_float_go(p, 'g', fb, sizeof fb);
                rc = im_err_set(ev->err, IM_EEXEC, "Scalar value %s overflows int64", fb);
                goto done_in;
            }
        }
    }
    if (agg->op == PROMQL_AGG_QUANTILE) {
        for (size_t k = 0; k < nsteps; k++)
            if (!(param.sc[k] >= 0 && param.sc[k] <= 1)) {
                promql__warn_quantile(ev, param.sc[k]);
                break;
            }
    }

    /* Assign groups. */
    u64map_t map;
    promql__map_init(&map, 16);
    grp_t *g = NULL;
    size_t ng = 0, gcap = 0;
    uint32_t *gof = im_malloc((in.n ? in.n : 1) * sizeof *gof);
    bool need_members = selects || agg->op == PROMQL_AGG_QUANTILE;
    for (size_t i = 0; i < in.n; i++) {
        uint32_t *slot = promql__map_slot(&map, promql__agg_group_hash(agg, in.s[i].labels));
        if (!*slot) {
            if (ng == gcap) {
                gcap = gcap ? gcap * 2 : 8;
                g = im_realloc(g, gcap * sizeof *g);
            }
            memset(&g[ng], 0, sizeof g[ng]);
            if (!selects) g[ng].labels = promql__agg_group_labels(agg, in.s[i].labels);
            *slot = (uint32_t)++ng;
        }
        gof[i] = *slot - 1;
        g[gof[i]].drop |= in.s[i].drop_name;
        if (need_members) {
            grp_t *gg = &g[gof[i]];
            if (gg->nm == gg->capm) {
                gg->capm = gg->capm ? gg->capm * 2 : 8;
                gg->members = im_realloc(gg->members, gg->capm * sizeof *gg->members);
            }
            gg->members[gg->nm++] = i;
        }
    }
    promql__map_free(&map);
    promql__val_init(out, VAL_VECTOR);

    switch (agg->op) {
    case PROMQL_AGG_SUM:
    case PROMQL_AGG_AVG:
    case PROMQL_AGG_COUNT:
    case PROMQL_AGG_MIN:
    case PROMQL_AGG_MAX:
    case PROMQL_AGG_GROUP:
    case PROMQL_AGG_STDDEV:
    case PROMQL_AGG_STDVAR: {
        for (size_t gi = 0; gi < ng; gi++) {
            size_t idx = promql__val_add(ev, out, g[gi].labels);
            g[gi].labels = NULL;
            out->s[idx].drop_name = g[gi].drop;
            g[gi].a = out->s[idx].v;
            g[gi].b = im_calloc(nsteps, sizeof(double));
            g[gi].c = im_calloc(nsteps, sizeof(double)); /* count */
        }
        promql_aggop_t op = agg->op;
        for (size_t i = 0; i < in.n; i++)
            promql__agg_acc(op, g[gof[i]].a, g[gof[i]].b, g[gof[i]].c, in.s[i].v, in.s[i].has,
                            nsteps, ev->compat);
        for (size_t gi = 0; gi < ng; gi++) {
            promql__agg_fin(op, g[gi].a, g[gi].b, g[gi].c, out->s[gi].v, out->s[gi].has, nsteps,
                            ev->compat);
            im_free(g[gi].b);
            im_free(g[gi].c);
        }
        break;
    }
    case PROMQL_AGG_QUANTILE: {
        double *buf = im_malloc((in.n ? in.n : 1) * sizeof *buf);
        for (size_t gi = 0; gi < ng; gi++) {
            size_t idx = promql__val_add(ev, out, g[gi].labels);
            g[gi].labels = NULL;
            vser_t *s = &out->s[idx];
            s->drop_name = g[gi].drop;
            for (size_t k = 0; k < nsteps; k++) {
                size_t nb = 0;
                for (size_t j = 0; j < g[gi].nm; j++) {
                    vser_t *m = &in.s[g[gi].members[j]];
                    if (m->has[k]) buf[nb++] = m->v[k];
                }
                if (!nb) continue;
                s->v[k] = promql__quantile(param.sc[k], buf, nb);
                s->has[k] = 1;
            }
        }
        im_free(buf);
        break;
    }
    case PROMQL_AGG_TOPK:
    case PROMQL_AGG_BOTTOMK: {
        bool top = agg->op == PROMQL_AGG_TOPK;
        topent_t *te = im_malloc((in.n ? in.n : 1) * sizeof *te);
        /* out series j mirrors input series order[j] */
        size_t *order = im_malloc((in.n ? in.n : 1) * sizeof *order);
        size_t norder = 0;
        uint32_t *outidx = im_malloc((in.n ? in.n : 1) * sizeof *outidx);
        for (size_t i = 0; i < in.n; i++) outidx[i] = UINT32_MAX;
        for (size_t k = 0; k < nsteps; k++) {
            int64_t kk = (int64_t)param.sc[k];
            if (kk < 1) continue;
            for (size_t gi = 0; gi < ng; gi++) {
                /* Prometheus' selection: a binary heap of at most k elements with
                 * the worst at the root (container/heap), replaced only by a
                 * strictly better element, so ties go the way Prometheus' do. */
                size_t nb = 0;
                for (size_t j = 0; j < g[gi].nm; j++) {
                    size_t si = g[gi].members[j];
                    if (!in.s[si].has[k]) continue;
                    topent_t x = {in.s[si].v[k], si};
                    if ((int64_t)nb < kk) {
                        te[nb++] = x;
                        heap_up(te, nb - 1, top);
                    } else if (top ? (te[0].v < x.v || (isnan(te[0].v) && !isnan(x.v)))
                                   : (te[0].v > x.v || (isnan(te[0].v) && !isnan(x.v)))) {
                        te[0] = x;
                        if (kk > 1 && !heap_down(te, 0, nb, top)) heap_up(te, 0, top);
                    }
                }
                qsort_r(te, nb, sizeof *te, cmp_top, &top);
                for (size_t j = 0; j < nb; j++) {
                    size_t si = te[j].idx;
                    if (outidx[si] == UINT32_MAX) {
                        outidx[si] =
                            (uint32_t)promql__val_add(ev, out, im_labels_ref(in.s[si].labels));
                        out->s[outidx[si]].drop_name = in.s[si].drop_name;
                        order[norder++] = si;
                    }
                    vser_t *o = &out->s[outidx[si]];
                    o->v[k] = te[j].v;
                    o->has[k] = 1;
                }
            }
        }
        IM_UNUSED(order);
        im_free(order);
        im_free(outidx);
        im_free(te);
        break;
    }
    case PROMQL_AGG_LIMITK:
    case PROMQL_AGG_LIMIT_RATIO: rc = promql__agg_limit(ev, agg, &in, &param, g, ng, out); break;
    case PROMQL_AGG_COUNT_VALUES: {
        u64map_t om;
        promql__map_init(&om, 16);
        char fb[IM_FLOAT_BUF];
        for (size_t i = 0; i < in.n; i++) {
            for (size_t k = 0; k < nsteps; k++) {
                if (!in.s[i].has[k]) continue;
                size_t fl = im_fmt_float_go(in.s[i].v[k], 'f', fb, sizeof fb);
                im_labels_builder_t b;
                im_lb_init(&b);
                im_lb_load(&b, g[gof[i]].labels);
                im_lb_set(&b, cv_label, cv_len, fb, fl);
                const im_labels_t *ls = im_lb_build(&b);
                im_lb_free(&b);
                uint32_t *slot = promql__map_slot(&om, ls->hash);
                if (!*slot) {
                    size_t idx = promql__val_add(ev, out, ls);
                    if (ev->over_limit) { /* a new series per value: stop at the limit */
                        rc = IM_ELIMIT;
                        goto cv_done;
                    }
                    for (size_t kk = 0; kk < nsteps; kk++) out->s[idx].v[kk] = 0;
                    out->s[idx].drop_name = g[gof[i]].drop;
                    *slot = (uint32_t)(idx + 1);
                } else {
                    im_labels_unref(ls);
                }
                vser_t *o = &out->s[*slot - 1];
                o->has[k] = 1;
                o->v[k] += 1;
            }
        }
    cv_done:
        promql__map_free(&om);
        break;
    }
    }
    for (size_t gi = 0; gi < ng; gi++) {
        if (g[gi].labels) im_labels_unref(g[gi].labels);
        im_free(g[gi].members);
    }
    im_free(g);
    im_free(gof);
    promql__compact(ev, out);
done_in:
    promql__val_free(ev, &in);
    promql__val_free(ev, &param);
    return rc;
}

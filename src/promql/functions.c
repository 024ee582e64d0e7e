/* functions.c — every PromQL function of Prometheus 2.53 (float samples).
 *
 * Range-vector functions (rate, *_over_time, deriv, …) pull one series at a time
 * from a range source and slide the [t - range, t] window over its samples with
 * two indices, so every sample is visited a constant number of times per query
 * whatever the number of steps. Instant-vector functions work on the dense
 * per-step arrays. Names are dropped from the results as 2.53 drops them (every
 * function but last_over_time, label_replace, label_join, sort*). */
#include "util/base.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "labels/regex.h"
#include "promql/promql_int.h"
#include "util/fmtfloat.h"
#include "util/timeutil.h"

im_rc promql__eval_timestamp_selector(ev_t *ev, const promql_expr_t *e, val_t *out);
im_rc promql__eval_info(ev_t *ev, const promql_call_t *call, val_t *out);

/* Go's math.Max / math.Min (NaN wins, +0 > -0). */
static double go_max(double a, double b)
{
    if (isinf(a) && a > 0) return a;
    if (isinf(b) && b > 0) return b;
    if (isnan(a) || isnan(b)) return NAN;
    if (a == 0 && a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}
static double go_min(double a, double b)
{
    if (isinf(a) && a < 0) return a;
    if (isinf(b) && b < 0) return b;
    if (isnan(a) || isnan(b)) return NAN;
    if (a == 0 && a == b) return signbit(a) ? a : b;
    return a < b ? a : b;
}

static const promql_expr_t *unparen(const promql_expr_t *e)
{
    while (e->kind == PROMQL_NODE_PAREN || e->kind == PROMQL_NODE_STEP_INVARIANT)
        e = e->kind == PROMQL_NODE_PAREN ? e->u.paren.expr : e->u.si.expr;
    return e;
}

/* Evaluates a scalar argument (per step). */
im_rc promql__eval_scalar_arg(ev_t *ev, const promql_expr_t *e, val_t *out)
{
    im_rc rc = promql__eval(ev, e, out);
    if (rc == IM_OK && out->kind != VAL_SCALAR) {
        promql__val_free(ev, out);
        return im_err_set(ev->err, IM_EEXEC, "expected a scalar argument");
    }
    return rc;
}

/* ---- Range functions ---- */

typedef enum rfunc {
    RF_RATE,
    RF_INCREASE,
    RF_DELTA,
    RF_IRATE,
    RF_IDELTA,
    RF_AVG,
    RF_MIN,
    RF_MAX,
    RF_SUM,
    RF_COUNT,
    RF_LAST,
    RF_QUANTILE,
    RF_STDDEV,
    RF_STDVAR,
    RF_PRESENT,
    RF_CHANGES,
    RF_RESETS,
    RF_DERIV,
    RF_PREDICT,
    RF_HOLT,
    RF_MAD,
    RF_FIRST,    /* first_over_time (3.x) */
    RF_TS_FIRST, /* ts_of_first_over_time … (3.x, experimental): sample times, seconds */
    RF_TS_LAST,
    RF_TS_MIN,
    RF_TS_MAX,
} rfunc_t;

/* A range function's result series: its input's labels, __name__ dropped unless
 * the function keeps it (new reference). With delayed name removal the name
 * stays (the series is marked instead: promql__val_add_named). */
static const im_labels_t *range_labels(ev_t *ev, bool keep_name, const im_labels_t *ls)
{
    return keep_name || ev->delayed_name ? im_labels_ref(ls) : promql__drop_name(ev, ls);
}

/* Prometheus' extrapolatedRate over samples [0, n) for the window
 * [range_start, range_end]. */
/* Counter resets of the current series: positions i with v[i] < v[i-1], so a
 * window only visits its resets (added in sample order, as Prometheus does). */
typedef struct resets {
    const size_t *pos;
    size_t n, cur;
} resets_t;

static bool extrapolated_rate(const int64_t *t, const double *v, size_t n, int64_t range_start,
                              int64_t range_end, int64_t range_ms, bool counter, bool rate, bool v3,
                              resets_t *rs, size_t base, double *out)
{
    if (n < 2) return false;
    double result = v[n - 1] - v[0];
    if (counter) {
        /* resets at absolute positions base+1 .. base+n-1 */
        while (rs->cur < rs->n && rs->pos[rs->cur] < base + 1) rs->cur++;
        for (size_t j = rs->cur; j < rs->n && rs->pos[j] < base + n; j++)
            result += v[rs->pos[j] - base - 1];
    }
    double to_start = (double)ts_sub(t[0], range_start) / 1000.0;
    double to_end = (double)ts_sub(range_end, t[n - 1]) / 1000.0;
    double sampled = (double)ts_sub(t[n - 1], t[0]) / 1000.0;
    double avg_between = sampled / (double)(n - 1);
    double threshold = avg_between * 1.1;
    /* 2.x caps the start at the counter's zero point before the threshold test;
     * 3.x first limits a long gap to half an interval, then caps at zero */
    if (v3) {
        if (to_start >= threshold) to_start = avg_between / 2;
        if (to_end >= threshold) to_end = avg_between / 2;
    }
    if (counter && result > 0 && v[0] >= 0) {
        double to_zero = sampled * (v[0] / result);
        if (to_zero < to_start) to_start = to_zero;
    }
    double interval = sampled;
    interval += to_start < threshold ? to_start : avg_between / 2;
    interval += to_end < threshold ? to_end : avg_between / 2;
    double factor = interval / sampled;
    if (rate) factor /= (double)range_ms / 1000.0;
    *out = result * factor;
    return true;
}

static void linear_regression(const int64_t *t, const double *v, size_t n, int64_t intercept_t,
                              double *slope, double *intercept)
{
    double sx = 0, cx = 0, sy = 0, cy = 0, sxy = 0, cxy = 0, sx2 = 0, cx2 = 0;
    double init = v[0];
    bool consty = true;
    for (size_t i = 0; i < n; i++) {
        if (consty && i > 0 && v[i] != init) consty = false;
        double x = (double)ts_sub(t[i], intercept_t) / 1e3;
        promql__kahan_inc(x, &sx, &cx);
        promql__kahan_inc(v[i], &sy, &cy);
        promql__kahan_inc(x * v[i], &sxy, &cxy);
        promql__kahan_inc(x * x, &sx2, &cx2);
    }
    if (consty) {
        if (isinf(init)) {
            *slope = *intercept = NAN;
        } else {
            *slope = 0;
            *intercept = init;
        }
        return;
    }
    double fn = (double)n;
    sx += cx;
    sy += cy;
    sxy += cxy;
    sx2 += cx2;
    double cov = sxy - sx * sy / fn;
    double varx = sx2 - sx * sx / fn;
    *slope = cov / varx;
    *intercept = sy / fn - *slope * sx / fn;
}

static double holt_winters(const double *v, size_t n, double sf, double tf)
{
    double s0 = 0, s1 = v[0], b = v[1] - v[0];
    for (size_t i = 1; i < n; i++) {
        double x = sf * v[i];
        if (i - 1 != 0) b = tf * (s1 - s0) + (1 - tf) * b;
        double y = (1 - sf) * (s1 + b);
        s0 = s1;
        s1 = x + y;
    }
    return s1;
}

typedef struct rctx {
    ev_t *ev;
    rfunc_t f;
    resets_t rs;
    size_t base;     /* absolute index of the window's first sample */
    double *scratch; /* for quantiles */
    size_t scap;
} rctx_t;

static double *scratch(rctx_t *c, size_t n)
{
    if (n > c->scap) {
        c->scap = n * 2;
        c->scratch = im_realloc(c->scratch, c->scap * sizeof(double));
    }
    return c->scratch;
}

/* Computes the function over samples [0, n); param1/param2 are the step's
 * scalar parameters. Returns false when there is no output for the step. */
static bool range_apply(rctx_t *c, const int64_t *t, const double *v, size_t n, int64_t lo,
                        int64_t hi, int64_t range, int64_t ts, double p1, double p2, double *out)
{
    switch (c->f) {
    case RF_RATE:
        return extrapolated_rate(t, v, n, lo, hi, range, true, true, c->ev->compat >= 3, &c->rs,
                                 c->base, out);
    case RF_INCREASE:
        return extrapolated_rate(t, v, n, lo, hi, range, true, false, c->ev->compat >= 3, &c->rs,
                                 c->base, out);
    case RF_DELTA:
        return extrapolated_rate(t, v, n, lo, hi, range, false, false, c->ev->compat >= 3, &c->rs,
                                 c->base, out);
    case RF_IRATE:
    case RF_IDELTA: {
        if (n < 2) return false;
        double last = v[n - 1], prev = v[n - 2];
        double r = (c->f == RF_IRATE && last < prev) ? last : last - prev;
        int64_t dt = ts_sub(t[n - 1], t[n - 2]);
        if (dt == 0) return false;
        if (c->f == RF_IRATE) r /= (double)dt / 1000.0;
        *out = r;
        return true;
    }
    default: break;
    }
    if (n == 0) return false;
    switch (c->f) {
    case RF_AVG: {
        double mean = 0, cc = 0, cnt = 0;
        for (size_t i = 0; i < n; i++) {
            cnt++;
            if (isinf(mean)) {
                if (isinf(v[i]) && (mean > 0) == (v[i] > 0)) continue;
                if (!isinf(v[i]) && !isnan(v[i])) continue;
            }
            promql__kahan_inc(v[i] / cnt - mean / cnt, &mean, &cc);
        }
        *out = isinf(mean) ? mean : mean + cc;
        return true;
    }
    case RF_MIN:
    case RF_MAX: {
        double m = v[0];
        for (size_t i = 1; i < n; i++) {
            if (c->f == RF_MAX ? (v[i] > m || isnan(m)) : (v[i] < m || isnan(m))) m = v[i];
        }
        *out = m;
        return true;
    }
    case RF_SUM: {
        double s = 0, cc = 0;
        for (size_t i = 0; i < n; i++) promql__kahan_inc(v[i], &s, &cc);
        *out = isinf(s) ? s : s + cc;
        return true;
    }
    case RF_COUNT: *out = (double)n; return true;
    case RF_LAST: *out = v[n - 1]; return true;
    case RF_FIRST: *out = v[0]; return true;
    case RF_TS_FIRST: *out = (double)t[0] / 1000.0; return true;
    case RF_TS_LAST: *out = (double)t[n - 1] / 1000.0; return true;
    case RF_TS_MIN:
    case RF_TS_MAX: {
        /* max_over_time's choice of value; of equal ones the latest sample's time */
        double m = v[0];
        int64_t at = t[0];
        for (size_t i = 1; i < n; i++) {
            bool better = c->f == RF_TS_MAX ? v[i] > m : v[i] < m;
            if (better || isnan(m) || v[i] == m) {
                m = v[i];
                at = t[i];
            }
        }
        *out = (double)at / 1000.0;
        return true;
    }
    case RF_PRESENT: *out = 1; return true;
    case RF_QUANTILE: {
        double *s = scratch(c, n);
        memcpy(s, v, n * sizeof *s);
        *out = promql__quantile(p1, s, n);
        return true;
    }
    case RF_MAD: {
        double *s = scratch(c, 2 * n);
        memcpy(s, v, n * sizeof *s);
        double med = promql__quantile(0.5, s, n);
        for (size_t i = 0; i < n; i++) s[i] = fabs(v[i] - med);
        *out = promql__quantile(0.5, s, n);
        return true;
    }
    case RF_STDDEV:
    case RF_STDVAR: {
        double cnt = 0, mean = 0, cm = 0, aux = 0, ca = 0;
        for (size_t i = 0; i < n; i++) {
            cnt++;
            double delta = v[i] - (mean + cm);
            promql__kahan_inc(delta / cnt, &mean, &cm);
            promql__kahan_inc(delta * (v[i] - (mean + cm)), &aux, &ca);
        }
        double var = (aux + ca) / cnt;
        *out = c->f == RF_STDDEV ? sqrt(var) : var;
        return true;
    }
    case RF_CHANGES: {
        double cnt = 0;
        for (size_t i = 1; i < n; i++)
            if (!(v[i] == v[i - 1] || (isnan(v[i]) && isnan(v[i - 1])))) cnt++;
        *out = cnt;
        return true;
    }
    case RF_RESETS: {
        double cnt = 0;
        for (size_t i = 1; i < n; i++)
            if (v[i] < v[i - 1]) cnt++;
        *out = cnt;
        return true;
    }
    case RF_DERIV: {
        if (n < 2) return false;
        double slope, icpt;
        linear_regression(t, v, n, t[0], &slope, &icpt);
        *out = slope;
        return true;
    }
    case RF_PREDICT: {
        if (n < 2) return false;
        double slope, icpt;
        linear_regression(t, v, n, ts, &slope, &icpt);
        *out = slope * p1 + icpt;
        return true;
    }
    case RF_HOLT:
        if (n < 2) return false;
        *out = holt_winters(v, n, p1, p2);
        return true;
    default: return false;
    }
}

/* One series of a range function: samples t/v[0, n) in, out[k]/has[k] for the
 * (eff) steps out (has zeroed by the caller); (*rpos, *rcap) a reusable buffer for
 * counter resets. With ev_mut the timeout is checked through promql__check (the
 * evaluating thread), else through promql__check_now (a worker). Returns whether
 * any step has a value; *rc is set on timeout or cancellation. */
#define RANGE_CHECK_WORK (1u << 16)

static bool range_series(ev_t *ev, bool ev_mut, rctx_t *c, rsrc_t *r, const int64_t *t,
                         const double *v, size_t n, const double *p1, const double *p2,
                         size_t **rpos, size_t *rcap, double *out, uint8_t *has, im_rc *rc)
{
    rfunc_t f = c->f;
    promql_range_ext_t ext = promql__rsrc_ext(r);
    int xf = f == RF_RATE ? 0 : f == RF_INCREASE ? 1 : f == RF_DELTA ? 2 : f == RF_CHANGES ? 3 : 4;
    int64_t range = promql__rsrc_range(r);
    bool fixed = promql__rsrc_fixed(r);
    size_t nsteps = ev->nsteps, eff = fixed ? 1 : nsteps;
    size_t a = 0, b = 0;
    bool any = false;
    if (f == RF_RATE || f == RF_INCREASE) {
        if (n > *rcap) {
            *rcap = n * 2;
            *rpos = im_realloc(*rpos, *rcap * sizeof **rpos);
        }
        size_t nr = 0, *rp = *rpos;
        for (size_t i = 1; i < n; i++)
            if (v[i] < v[i - 1]) rp[nr++] = i;
        c->rs = (resets_t){rp, nr, 0};
    }
    /* Timeout and cancellation are checked by work done (samples in the windows
     * walked), not by steps: one step over a window of a day at 1s is 86,400
     * samples, and a query whose client went away must stop soon. */
    size_t work = 0;
    for (size_t k = 0; k < eff; k++) {
        int64_t lo, hi;
        if ((work >= RANGE_CHECK_WORK || (k & 4095) == 4095) &&
            (*rc = ev_mut ? promql__check(ev) : promql__check_now(ev)) != IM_OK)
            break;
        if (work >= RANGE_CHECK_WORK) work = 0;
        promql__rsrc_window(ev, r, k, &lo, &hi);
        while (a < n && t[a] < ts_add(lo, ev->left_open)) a++;
        if (b < a) b = a;
        while (b < n && t[b] <= hi) b++;
        work += b - a + 1;
        double res;
        int64_t ts = promql__rsrc_time(ev, r, k);
        c->base = a;
        if (ext != PROMQL_RANGE_PLAIN) {
            if (promql__ext_range(xf, ext, t, v, n, a, b, lo, hi, ev->lookback, &res)) {
                out[k] = res;
                has[k] = 1;
                any = true;
            }
            continue;
        }
        if (range_apply(c, t + a, v + a, b - a, lo, hi, range, ts, p1 ? p1[k] : 0, p2 ? p2[k] : 0,
                        &res)) {
            out[k] = res;
            has[k] = 1;
            any = true;
        }
    }
    if (fixed && nsteps > 1) {
        for (size_t k = 1; k < nsteps; k++) {
            has[k] = has[0];
            out[k] = out[0];
        }
    }
    return any;
}

/* ---- Range functions on several threads ----
 *
 * Workers take series in chunks from a shared counter; each series is read and
 * computed exactly as on one thread, into its own row, so nothing is summed
 * across threads. The evaluating thread then walks the series in order: it
 * replays the sample-limit accounting of the one-thread path (each series'
 * samples counted while it is read), takes the rows with a value (labels named as
 * there) and frees the rest — the value is the same as on one thread, bit for bit,
 * whatever the scheduling. */

#define PAR_CHUNK 8 /* most series a worker takes at once */

/* A worker thread's own read buffers and range-function context. */
typedef struct wbufs {
    rctx_t c;
    int64_t *t;
    double *v;
    size_t cap, *rpos, rcap;
} wbufs_t;

static void wbufs_free(wbufs_t *w)
{
    im_free(w->t);
    im_free(w->v);
    im_free(w->rpos);
    im_free(w->c.scratch);
}

typedef struct par {
    ev_t *ev;
    rsrc_t *r;
    rfunc_t f;
    bool keep_name;
    const double *p1, *p2;
    size_t nseries, chunk;
    double **rows; /* per series: value block (promql__val_adopt's layout) or NULL */
    size_t *nread; /* per series: samples read */
    _Atomic size_t next;
    _Atomic int stop; /* 0, or the im_rc that stopped the workers */
} par_t;

static void *par_worker(void *arg)
{
    par_t *p = arg;
    ev_t *ev = p->ev;
    size_t nsteps = ev->nsteps;
    wbufs_t w = {.c = {.ev = ev, .f = p->f}};
    for (;;) {
        if (atomic_load_explicit(&p->stop, memory_order_relaxed)) break;
        size_t i0 = atomic_fetch_add_explicit(&p->next, p->chunk, memory_order_relaxed);
        if (i0 >= p->nseries) break;
        size_t i1 = i0 + p->chunk < p->nseries ? i0 + p->chunk : p->nseries;
        for (size_t si = i0; si < i1; si++) {
            im_rc rc = promql__check_now(ev);
            if (rc == IM_OK) {
                size_t n = promql__rsrc_read(p->r, si, &w.t, &w.v, &w.cap);
                p->nread[si] = n;
                if (n == 0) continue;
                double *blk = im_malloc(nsteps * sizeof(double) + nsteps);
                uint8_t *has = (uint8_t *)(blk + nsteps);
                memset(has, 0, nsteps);
                bool any = range_series(ev, false, &w.c, p->r, w.t, w.v, n, p->p1, p->p2, &w.rpos,
                                        &w.rcap, blk, has, &rc);
                if (any && rc == IM_OK)
                    p->rows[si] = blk;
                else
                    im_free(blk);
            }
            if (rc != IM_OK) {
                atomic_store(&p->stop, (int)rc);
                break;
            }
        }
    }
    wbufs_free(&w);
    return NULL;
}

/* Threads for a range function over r, or 1 (evaluate on this thread). */
static int par_threads(ev_t *ev, rsrc_t *r)
{
    const promql_engine_opts_t *o = promql_engine_opts(ev->eng);
    size_t ns = promql__rsrc_par_series(r);
    if (o->threads < 2 || ns < 2) return 1;
    size_t eff = promql__rsrc_fixed(r) ? 1 : ev->nsteps;
    /* series x steps: instant queries (a few ms at most) stay on this thread */
    if ((int64_t)(ns * eff) < o->parallel_min_work) return 1;
    return ns < (size_t)o->threads ? (int)ns : o->threads;
}

static im_rc range_par(ev_t *ev, rsrc_t *r, const promql_function_t *fn, const double *p1,
                       const double *p2, int nth, val_t *out)
{
    size_t ns = promql__rsrc_par_series(r), nsteps = ev->nsteps;
    size_t chunk = ns / ((size_t)nth * 4);
    par_t p = {.ev = ev,
               .r = r,
               .f = (rfunc_t)fn->variant,
               .keep_name = fn->keeps_name,
               .p1 = p1,
               .p2 = p2,
               .nseries = ns};
    p.chunk = chunk < 1 ? 1 : chunk > PAR_CHUNK ? PAR_CHUNK : chunk;
    p.rows = im_calloc(ns, sizeof *p.rows);
    p.nread = im_calloc(ns, sizeof *p.nread);
    atomic_init(&p.next, 0);
    atomic_init(&p.stop, 0);
    pthread_t tid[8];
    int started = 0;
    for (int i = 1; i < nth && i <= 8; i++) {
        if (pthread_create(&tid[started], NULL, par_worker, &p) != 0) break;
        started++;
    }
    par_worker(&p);
    for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
    im_rc rc = IM_OK;
    int stop = atomic_load(&p.stop);
    if (stop) rc = promql__fail(ev, (im_rc)stop);
    for (size_t si = 0; si < ns; si++) {
        if (rc == IM_OK && (rc = promql__count(ev, (int64_t)p.nread[si])) == IM_OK) {
            promql__count(ev, -(int64_t)p.nread[si]);
            if (p.rows[si]) {
                const im_labels_t *ls = promql__rsrc_labels(r, si);
                size_t idx =
                    promql__val_adopt(out, range_labels(ev, p.keep_name, ls), p.rows[si], nsteps);
                out->s[idx].drop_name = ev->delayed_name && !p.keep_name;
                p.rows[si] = NULL;
            }
        }
        im_free(p.rows[si]);
    }
    im_free(p.rows);
    im_free(p.nread);
    return rc;
}

/* ---- Fused aggregation over a range function ----
 *
 * sum by (…) (rate(m[5m])) and the like: the answer of evaluating the range
 * function into an instant vector and aggregating that, without the vector. The
 * series are grouped up front (by their labels as the function names them); a
 * group's series are read, computed and accumulated in series order — the order
 * the aggregation sees them in — so every sum is the same bit for bit; different
 * groups share nothing and run on several threads. Groups come out in the order
 * of their first series with a value, the sample limit is replayed as on the
 * unfused path (each series' samples while read, then the function's points),
 * and the fused path steps aside when two series would get the same labels (the
 * unfused path's dedup decides that case). */

typedef struct fgrp {
    size_t first;  /* first member (index into fuse_t.mem) */
    size_t nmem;   /* members */
    size_t firstv; /* first member series with a value, SIZE_MAX if none */
    double *a, *b, *c;
} fgrp_t;

typedef struct fuse {
    ev_t *ev;
    rsrc_t *r;
    rfunc_t f;
    promql_aggop_t op;
    fgrp_t *g;
    size_t ng;
    size_t *mem;   /* series indices, grouped, in series order within a group */
    size_t *nread; /* per series: samples read */
    size_t *npts;  /* per series: points of the function's result */
    _Atomic size_t next;
    _Atomic int stop;
} fuse_t;

static void *fuse_worker(void *arg)
{
    fuse_t *p = arg;
    ev_t *ev = p->ev;
    size_t nsteps = ev->nsteps;
    wbufs_t w = {.c = {.ev = ev, .f = p->f}};
    double *row = im_malloc(nsteps * sizeof(double) + nsteps);
    uint8_t *has = (uint8_t *)(row + nsteps);
    for (;;) {
        if (atomic_load_explicit(&p->stop, memory_order_relaxed)) break;
        size_t gi = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
        if (gi >= p->ng) break;
        fgrp_t *g = &p->g[gi];
        g->a = im_malloc(nsteps * sizeof(double));
        g->b = im_calloc(nsteps, sizeof(double));
        g->c = im_calloc(nsteps, sizeof(double));
        im_rc rc = IM_OK;
        for (size_t j = 0; j < g->nmem && rc == IM_OK; j++) {
            size_t si = p->mem[g->first + j];
            if ((rc = promql__check_now(ev)) != IM_OK) break;
            size_t n = promql__rsrc_read(p->r, si, &w.t, &w.v, &w.cap);
            p->nread[si] = n;
            if (n == 0) continue;
            memset(has, 0, nsteps);
            if (!range_series(ev, false, &w.c, p->r, w.t, w.v, n, NULL, NULL, &w.rpos, &w.rcap, row,
                              has, &rc) ||
                rc != IM_OK)
                continue;
            size_t pts = 0;
            for (size_t k = 0; k < nsteps; k++) pts += has[k];
            p->npts[si] = pts;
            if (g->firstv == SIZE_MAX) g->firstv = si;
            promql__agg_acc(p->op, g->a, g->b, g->c, row, has, nsteps, ev->compat);
        }
        if (rc != IM_OK) {
            atomic_store(&p->stop, (int)rc);
            break;
        }
    }
    im_free(row);
    wbufs_free(&w);
    return NULL;
}

static int cmp_firstv(const void *a, const void *b)
{
    const fgrp_t *x = *(fgrp_t *const *)a, *y = *(fgrp_t *const *)b;
    return x->firstv < y->firstv ? -1 : x->firstv > y->firstv;
}

static im_rc eval_range(ev_t *ev, const promql_call_t *call, val_t *out);

im_rc promql__eval_agg_range(ev_t *ev, const promql_aggregate_t *agg, val_t *out, bool *done)
{
    *done = false;
    const promql_expr_t *x = agg->expr;
    while (x->kind == PROMQL_NODE_PAREN || x->kind == PROMQL_NODE_STEP_INVARIANT)
        x = x->kind == PROMQL_NODE_PAREN ? x->u.paren.expr : x->u.si.expr;
    if (x->kind != PROMQL_NODE_CALL || x->u.call.nargs != 1) return IM_OK;
    const promql_call_t *call = &x->u.call;
    if (call->func->eval != eval_range) return IM_OK;
    for (size_t i = 0; i < call->nargs; i++) /* anchored/smoothed: not fused */
        if (call->args[i]->kind == PROMQL_NODE_MATRIX_SELECTOR &&
            call->args[i]->u.ms.ext != PROMQL_RANGE_PLAIN)
            return IM_OK;
    rfunc_t f = (rfunc_t)call->func->variant;
    if (f == RF_QUANTILE || f == RF_PREDICT || f == RF_HOLT) return IM_OK;
    const promql_expr_t *m = call->args[0];
    while (m->kind == PROMQL_NODE_PAREN) m = m->u.paren.expr;
    if (m->kind != PROMQL_NODE_MATRIX_SELECTOR) return IM_OK;
    im_rc rc = promql__check(ev); /* what evaluating the call node would check */
    if (rc != IM_OK) {
        *done = true;
        return rc;
    }
    rsrc_t *r;
    rc = promql__rsrc_open(ev, m, &r);
    if (rc != IM_OK) {
        *done = true;
        return rc;
    }
    size_t ns = promql__rsrc_nseries(r), nsteps = ev->nsteps;
    /* The function's labels for each series; two equal: step aside. */
    const im_labels_t **fl = im_malloc((ns ? ns : 1) * sizeof *fl);
    u64map_t map;
    promql__map_init(&map, ns);
    bool dup = false;
    for (size_t i = 0; i < ns; i++) {
        const im_labels_t *ls = promql__rsrc_labels(r, i);
        fl[i] = range_labels(ev, call->func->keeps_name, ls);
        uint32_t *slot = promql__map_slot(&map, fl[i]->hash);
        if (*slot) dup = true;
        *slot = 1;
    }
    promql__map_free(&map);
    fuse_t p = {.ev = ev, .r = r, .f = f, .op = agg->op};
    uint32_t *gof = NULL;
    if (dup) goto out;
    *done = true;
    /* Groups in order of first series; members grouped by a counting sort. */
    gof = im_malloc((ns ? ns : 1) * sizeof *gof);
    promql__map_init(&map, 16);
    size_t gcap = 0;
    for (size_t i = 0; i < ns; i++) {
        uint32_t *slot = promql__map_slot(&map, promql__agg_group_hash(agg, fl[i]));
        if (!*slot) {
            if (p.ng == gcap) {
                gcap = gcap ? gcap * 2 : 16;
                p.g = im_realloc(p.g, gcap * sizeof *p.g);
            }
            p.g[p.ng] = (fgrp_t){.firstv = SIZE_MAX};
            *slot = (uint32_t)++p.ng;
        }
        gof[i] = *slot - 1;
        p.g[gof[i]].nmem++;
    }
    promql__map_free(&map);
    size_t off = 0;
    for (size_t gi = 0; gi < p.ng; gi++) {
        p.g[gi].first = off;
        off += p.g[gi].nmem;
        p.g[gi].nmem = 0;
    }
    p.mem = im_malloc((ns ? ns : 1) * sizeof *p.mem);
    for (size_t i = 0; i < ns; i++) {
        fgrp_t *g = &p.g[gof[i]];
        p.mem[g->first + g->nmem++] = i;
    }
    p.nread = im_calloc(ns ? ns : 1, sizeof *p.nread);
    p.npts = im_calloc(ns ? ns : 1, sizeof *p.npts);
    atomic_init(&p.next, 0);
    atomic_init(&p.stop, 0);
    int nth = par_threads(ev, r);
    if ((size_t)nth > p.ng) nth = (int)p.ng;
    pthread_t tid[8];
    int started = 0;
    for (int i = 1; i < nth && i <= 8; i++) {
        if (pthread_create(&tid[started], NULL, fuse_worker, &p) != 0) break;
        started++;
    }
    fuse_worker(&p);
    for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
    int stop = atomic_load(&p.stop);
    if (stop) rc = promql__fail(ev, (im_rc)stop);
    /* The limit as the unfused path meets it: each series while it is read,
     * then the function's result while it is aggregated. */
    int64_t pts = 0;
    for (size_t i = 0; i < ns && rc == IM_OK; i++) {
        if ((rc = promql__count(ev, (int64_t)p.nread[i])) == IM_OK)
            promql__count(ev, -(int64_t)p.nread[i]);
        pts += (int64_t)p.npts[i];
    }
    if (rc == IM_OK && (rc = promql__count(ev, pts)) == IM_OK) promql__count(ev, -pts);
    if (rc == IM_OK) {
        fgrp_t **order = im_malloc((p.ng ? p.ng : 1) * sizeof *order);
        size_t no = 0;
        for (size_t gi = 0; gi < p.ng; gi++)
            if (p.g[gi].firstv != SIZE_MAX) order[no++] = &p.g[gi];
        qsort(order, no, sizeof *order, cmp_firstv);
        promql__val_init(out, VAL_VECTOR);
        for (size_t j = 0; j < no; j++) {
            fgrp_t *g = order[j];
            size_t idx = promql__val_add(ev, out, promql__agg_group_labels(agg, fl[g->firstv]));
            /* matrix selector input: marked exactly when the function drops names */
            out->s[idx].drop_name = ev->delayed_name && !call->func->keeps_name;
            promql__agg_fin(agg->op, g->a, g->b, g->c, out->s[idx].v, out->s[idx].has, nsteps,
                            ev->compat);
        }
        im_free(order);
        promql__compact(ev, out);
    }
    for (size_t gi = 0; gi < p.ng; gi++) {
        im_free(p.g[gi].a);
        im_free(p.g[gi].b);
        im_free(p.g[gi].c);
    }
out:
    for (size_t i = 0; i < ns; i++) im_labels_unref(fl[i]);
    im_free(fl);
    im_free(gof);
    im_free(p.g);
    im_free(p.mem);
    im_free(p.nread);
    im_free(p.npts);
    promql__rsrc_close(ev, r);
    return rc;
}

static im_rc eval_range(ev_t *ev, const promql_call_t *call, val_t *out)
{
    im_rc xrc = promql__ext_check(ev, call);
    if (xrc != IM_OK) return xrc;
    const promql_function_t *fn = call->func;
    rfunc_t f = (rfunc_t)fn->variant;
    int marg = 0; /* the range-vector argument */
    while (fn->arg_types[marg] != PROMQL_TYPE_MATRIX) marg++;
    im_rc rc = IM_OK;
    val_t p1, p2;
    promql__val_init(&p1, VAL_SCALAR);
    promql__val_init(&p2, VAL_SCALAR);
    /* Scalar parameters. */
    if (f == RF_QUANTILE) rc = promql__eval_scalar_arg(ev, call->args[0], &p1);
    if (f == RF_PREDICT || f == RF_HOLT) rc = promql__eval_scalar_arg(ev, call->args[1], &p1);
    if (rc == IM_OK && f == RF_HOLT) rc = promql__eval_scalar_arg(ev, call->args[2], &p2);
    if (rc != IM_OK) goto out_params;
    if (f == RF_HOLT) {
        for (size_t k = 0; k < ev->nsteps; k++) {
            if (p1.sc[k] <= 0 || p1.sc[k] >= 1) {
                rc =
                    im_err_set(ev->err, IM_EEXEC,
                               "invalid smoothing factor. Expected: 0 < sf < 1, got: %f", p1.sc[k]);
                goto out_params;
            }
            if (p2.sc[k] <= 0 || p2.sc[k] >= 1) {
                rc = im_err_set(ev->err, IM_EEXEC,
                                "invalid trend factor. Expected: 0 < tf < 1, got: %f", p2.sc[k]);
                goto out_params;
            }
        }
    }
    if (f == RF_QUANTILE) {
        for (size_t k = 0; k < ev->nsteps; k++)
            if (!(p1.sc[k] >= 0 && p1.sc[k] <= 1) || isnan(p1.sc[k])) {
                promql__warn_quantile(ev, p1.sc[k]);
                break;
            }
    }
    rsrc_t *r;
    rc = promql__rsrc_open(ev, call->args[marg], &r);
    if (rc != IM_OK) goto out_params;
    promql__val_init(out, VAL_VECTOR);
    int got = 0;
    int nth = par_threads(ev, r);
    if (nth > 1) {
        rc = range_par(ev, r, fn, p1.sc, p2.sc, nth, out);
    } else {
        rctx_t c = {.ev = ev, .f = f};
        size_t *rpos = NULL, rcap = 0;
        const im_labels_t *ls;
        size_t n;
        while ((got = promql__rsrc_next(ev, r, &ls, &n)) == 1) {
            if (n == 0) continue;
            size_t idx =
                promql__val_add_named(ev, out, ls, !fn->keeps_name, promql__rsrc_marked(r));
            vser_t *s = &out->s[idx];
            bool any = range_series(ev, true, &c, r, ev->rt, ev->rv, n, p1.sc, p2.sc, &rpos, &rcap,
                                    s->v, s->has, &rc);
            if (rc != IM_OK) break;
            if (!any) {
                im_labels_unref(s->labels);
                im_free(s->v);
                out->n--;
            }
        }
        im_free(c.scratch);
        im_free(rpos);
    }
    promql__rsrc_close(ev, r);
    if (rc != IM_OK) {
        promql__val_free(ev, out);
    } else if (got < 0) {
        rc = (im_rc)got;
        promql__val_free(ev, out);
    } else if (!fn->keeps_name) {
        rc = promql__dedup(ev, out);
        if (rc != IM_OK) promql__val_free(ev, out);
    }
out_params:
    promql__val_free(ev, &p1);
    promql__val_free(ev, &p2);
    return rc;
}

/* ---- absent / absent_over_time ---- */

static const im_labels_t *absent_labels(const promql_expr_t *arg)
{
    arg = unparen(arg);
    const promql_vector_selector_t *vs = NULL;
    if (arg->kind == PROMQL_NODE_VECTOR_SELECTOR) vs = &arg->u.vs;
    if (arg->kind == PROMQL_NODE_MATRIX_SELECTOR) vs = &arg->u.ms.vs->u.vs;
    if (!vs) return im_labels_empty();
    im_labels_builder_t b;
    im_lb_init(&b);
    for (size_t i = 0; i < vs->nmatchers; i++) {
        im_matcher_t *m = vs->matchers[i];
        const im_istr_t *nm = im_matcher_name(m);
        if (strcmp(nm->s, IM_METRIC_NAME) == 0) continue;
        bool seen = false;
        for (size_t j = 0; j < i; j++) {
            const im_istr_t *n2 = im_matcher_name(vs->matchers[j]);
            if (n2 == nm) seen = true;
        }
        if (im_matcher_type(m) == IM_MATCH_EQ && !seen) {
            size_t vl;
            const char *val = im_matcher_value(m, &vl);
            im_lb_set(&b, nm->s, nm->len, val, vl);
        } else {
            im_lb_del(&b, nm->s);
        }
    }
    const im_labels_t *r = im_lb_build(&b);
    im_lb_free(&b);
    return r;
}

/* variant 1: absent_over_time */
static im_rc eval_absent(ev_t *ev, const promql_call_t *call, val_t *out)
{
    bool over_time = call->func->variant == 1;
    bool *present = im_calloc(ev->nsteps ? ev->nsteps : 1, sizeof(bool));
    im_rc rc = IM_OK;
    if (!over_time) {
        val_t v;
        rc = promql__eval(ev, call->args[0], &v);
        if (rc != IM_OK) goto done;
        for (size_t i = 0; i < v.n; i++)
            for (size_t k = 0; k < ev->nsteps; k++)
                if (v.s[i].has[k]) present[k] = true;
        promql__val_free(ev, &v);
    } else {
        rsrc_t *r;
        rc = promql__rsrc_open(ev, call->args[0], &r);
        if (rc != IM_OK) goto done;
        const im_labels_t *ls;
        size_t n;
        int got;
        while ((got = promql__rsrc_next(ev, r, &ls, &n)) == 1) {
            size_t a = 0;
            for (size_t k = 0; k < ev->nsteps; k++) {
                int64_t lo, hi;
                promql__rsrc_window(ev, r, k, &lo, &hi);
                size_t j = promql__rsrc_fixed(r) ? 0 : a;
                while (j < n && ev->rt[j] < ts_add(lo, ev->left_open)) j++;
                if (!promql__rsrc_fixed(r)) a = j;
                if (j < n && ev->rt[j] <= hi) present[k] = true;
            }
        }
        promql__rsrc_close(ev, r);
        if (got < 0) {
            rc = (im_rc)got;
            goto done;
        }
    }
    promql__val_init(out, VAL_VECTOR);
    size_t idx = promql__val_add(ev, out, absent_labels(call->args[0]));
    for (size_t k = 0; k < ev->nsteps; k++) {
        out->s[idx].has[k] = !present[k];
        out->s[idx].v[k] = 1;
    }
    promql__compact(ev, out);
done:
    im_free(present);
    return rc;
}

/* ---- Element-wise functions: per_value of the descriptor ---- */

static double f_abs(double x)
{
    return fabs(x);
}
static double f_sgn(double x)
{
    return x < 0 ? -1 : x > 0 ? 1 : x;
}
static double f_deg(double x)
{
    return x * 180 / M_PI;
}
static double f_rad(double x)
{
    return x * M_PI / 180;
}

/* Date functions: value = unix seconds, split into days since the epoch and
 * seconds of the day (UTC); false for NaN and infinities (the result is NaN). */
typedef struct civil {
    int64_t days, rem, y;
    unsigned m, d;
} civil_t;

static bool civil_of(double secs, civil_t *c)
{
    if (isnan(secs) || isinf(secs)) return false;
    int64_t s = (int64_t)secs;
    c->days = s / 86400;
    c->rem = s % 86400;
    if (c->rem < 0) {
        c->rem += 86400;
        c->days--;
    }
    im_civil_from_days(c->days, &c->y, &c->m, &c->d);
    return true;
}

static double f_hour(double secs)
{
    civil_t c;
    return civil_of(secs, &c) ? (double)(c.rem / 3600) : NAN;
}
static double f_minute(double secs)
{
    civil_t c;
    return civil_of(secs, &c) ? (double)(c.rem / 60 % 60) : NAN;
}
static double f_month(double secs)
{
    civil_t c;
    return civil_of(secs, &c) ? c.m : NAN;
}
static double f_year(double secs)
{
    civil_t c;
    return civil_of(secs, &c) ? (double)c.y : NAN;
}
static double f_day_of_month(double secs)
{
    civil_t c;
    return civil_of(secs, &c) ? c.d : NAN;
}
static double f_day_of_week(double secs)
{
    civil_t c;
    if (!civil_of(secs, &c)) return NAN;
    int64_t w = (c.days + 4) % 7; /* 1970-01-01 was a Thursday */
    return (double)(w < 0 ? w + 7 : w);
}
static double f_day_of_year(double secs)
{
    civil_t c;
    if (!civil_of(secs, &c)) return NAN;
    return (double)(c.days - im_days_from_civil(c.y, 1, 1) + 1);
}
static double f_days_in_month(double secs)
{
    static const int dim[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    civil_t c;
    if (!civil_of(secs, &c)) return NAN;
    bool leap = (c.y % 4 == 0 && c.y % 100 != 0) || c.y % 400 == 0;
    return c.m == 2 && leap ? 29 : dim[c.m - 1];
}

/* Replaces each series' labels by the name-less ones and merges duplicates. */
static im_rc drop_names_dedup(ev_t *ev, val_t *v)
{
    for (size_t i = 0; i < v->n; i++) promql__vser_drop_name(ev, &v->s[i]);
    return promql__dedup(ev, v);
}

/* ---- label_replace / label_join ---- */

/* Sets the series' label dst to val's bytes (an empty value removes it). */
static void set_label(vser_t *s, const promql_string_t *dst, const im_buf_t *val)
{
    im_labels_builder_t b;
    im_lb_init(&b);
    im_lb_load(&b, s->labels);
    im_lb_set(&b, dst->s, dst->len, val->data ? val->data : "", val->len);
    const im_labels_t *nl = im_lb_build(&b);
    im_lb_free(&b);
    im_labels_unref(s->labels);
    s->labels = nl;
    /* setting __name__ keeps it (3.x: a name marked dropped is kept) */
    if (dst->len == 8 && memcmp(dst->s, IM_METRIC_NAME, 8) == 0) s->drop_name = false;
}

static im_rc eval_label_replace(ev_t *ev, const promql_call_t *call, val_t *out)
{
    const promql_expr_t *a[5];
    for (int i = 0; i < 5; i++) a[i] = unparen(call->args[i]);
    for (int i = 1; i < 5; i++)
        if (a[i]->kind != PROMQL_NODE_STRING)
            return im_err_set(ev->err, IM_EEXEC, "label_replace: expected string arguments");
    const promql_string_t *dst = &a[1]->u.string, *repl = &a[2]->u.string, *src = &a[3]->u.string,
                          *rx = &a[4]->u.string;
    /* `^(?:re)$` as Go compiles it, where `.` stops at a newline (unlike selector
     * matchers in Prometheus 3, which wrap in (?s:...)); bounded cost (labels/regex.h). */
    im_regex_t *re = NULL;
    im_err_t rerr;
    im_err_clear(&rerr);
    if (im_regex_compile(rx->s, rx->len, IM_REGEX_FULL, &re, &rerr) != IM_OK)
        return im_err_set(ev->err, IM_EEXEC, "invalid regular expression in label_replace(): %s",
                          rerr.msg);
    if (!im_label_name_valid(dst->s, dst->len)) {
        im_regex_free(re);
        return im_err_set(ev->err, IM_EEXEC,
                          "invalid destination label name in label_replace(): %s", dst->s);
    }
    im_rc rc = promql__eval(ev, call->args[0], out);
    if (rc != IM_OK) {
        im_regex_free(re);
        return rc;
    }
    size_t *ov = im_malloc(2 * (im_regex_groups(re) + 1) * sizeof *ov);
    im_buf_t res;
    im_buf_init(&res, 0);
    for (size_t i = 0; i < out->n; i++) {
        vser_t *s = &out->s[i];
        const im_istr_t *sv = im_labels_get(s->labels, src->s);
        const char *sval = sv ? sv->s : "";
        size_t slen = sv ? sv->len : 0;
        int m = im_regex_exec(re, sval, slen, 0, ov, &rerr);
        if (m < 0) {
            rc = im_err_set(ev->err, IM_EEXEC, "label_replace(): %s", rerr.msg);
            break;
        }
        if (m == 0) continue;
        im_buf_reset(&res);
        im_regex_expand(re, repl->s, repl->len, sval, ov, &res);
        set_label(s, dst, &res);
    }
    im_buf_free(&res);
    im_free(ov);
    im_regex_free(re);
    if (rc == IM_OK) rc = promql__dedup(ev, out);
    if (rc != IM_OK) promql__val_free(ev, out);
    return rc;
}

static im_rc eval_label_join(ev_t *ev, const promql_call_t *call, val_t *out)
{
    for (size_t i = 1; i < call->nargs; i++)
        if (unparen(call->args[i])->kind != PROMQL_NODE_STRING)
            return im_err_set(ev->err, IM_EEXEC, "label_join: expected string arguments");
    const promql_string_t *dst = &unparen(call->args[1])->u.string;
    const promql_string_t *sep = &unparen(call->args[2])->u.string;
    if (!im_label_name_valid(dst->s, dst->len))
        return im_err_set(ev->err, IM_EEXEC, "invalid destination label name in label_join(): %s",
                          dst->s);
    for (size_t i = 3; i < call->nargs; i++) {
        const promql_string_t *sn = &unparen(call->args[i])->u.string;
        if (!im_label_name_valid(sn->s, sn->len))
            return im_err_set(ev->err, IM_EEXEC, "invalid source label name in label_join(): %s",
                              sn->s);
    }
    im_rc rc = promql__eval(ev, call->args[0], out);
    if (rc != IM_OK) return rc;
    im_buf_t res;
    im_buf_init(&res, 0);
    for (size_t i = 0; i < out->n; i++) {
        vser_t *s = &out->s[i];
        im_buf_reset(&res);
        for (size_t j = 3; j < call->nargs; j++) {
            if (j > 3) (void)im_buf_append(&res, sep->s, sep->len);
            const im_istr_t *v = im_labels_get(s->labels, unparen(call->args[j])->u.string.s);
            if (v) (void)im_buf_append(&res, v->s, v->len);
        }
        set_label(s, dst, &res);
    }
    im_buf_free(&res);
    rc = promql__dedup(ev, out);
    if (rc != IM_OK) promql__val_free(ev, out);
    return rc;
}

/* ---- sort ---- */

typedef struct sortent {
    vser_t s;
    size_t idx;
} sortent_t;

/* What cmp_sort compares by, passed through qsort_r: the engine is shared by
 * the HTTP and rule threads, so no comparator state lives in file globals. */
typedef struct sortctx {
    int mode; /* 0 sort, 1 sort_desc, 2 sort_by_label, 3 sort_by_label_desc */
    const im_istr_t *const *labels;
    size_t nlabels;
} sortctx_t;

/* Natural order: runs of digits compare by number. */
static int natcmp(const char *a, size_t al, const char *b, size_t bl)
{
    size_t i = 0, j = 0;
    while (i < al && j < bl) {
        bool da = a[i] >= '0' && a[i] <= '9', db = b[j] >= '0' && b[j] <= '9';
        if (da && db) {
            size_t i2 = i, j2 = j;
            while (i2 < al && a[i2] == '0') i2++;
            while (j2 < bl && b[j2] == '0') j2++;
            size_t ie = i2, je = j2;
            while (ie < al && a[ie] >= '0' && a[ie] <= '9') ie++;
            while (je < bl && b[je] >= '0' && b[je] <= '9') je++;
            if (ie - i2 != je - j2) return ie - i2 < je - j2 ? -1 : 1;
            int c = memcmp(a + i2, b + j2, ie - i2);
            if (c) return c < 0 ? -1 : 1;
            i = ie;
            j = je;
            continue;
        }
        if (a[i] != b[j]) return (unsigned char)a[i] < (unsigned char)b[j] ? -1 : 1;
        i++;
        j++;
    }
    if (i < al) return 1;
    if (j < bl) return -1;
    return 0;
}

static int cmp_sort(const void *pa, const void *pb, void *ctx)
{
    const sortent_t *a = pa, *b = pb;
    const sortctx_t *c = ctx;
    const int sort_mode = c->mode;
    int r = 0;
    if (sort_mode == 0 || sort_mode == 1) {
        double x = a->s.v[0], y = b->s.v[0];
        bool xn = isnan(x), yn = isnan(y);
        if (xn != yn)
            r = xn ? -1 : 1; /* NaN first, as Prometheus' Less */
        else if (!xn && x != y)
            r = (x < y) ? -1 : 1;
        if (sort_mode == 1 && !(xn != yn)) r = -r;
    } else {
        for (size_t i = 0; i < c->nlabels && !r; i++) {
            const im_istr_t *x = im_labels_get_istr(a->s.labels, c->labels[i]);
            const im_istr_t *y = im_labels_get_istr(b->s.labels, c->labels[i]);
            r = natcmp(x ? x->s : "", x ? x->len : 0, y ? y->s : "", y ? y->len : 0);
        }
        if (!r) r = im_labels_compare(a->s.labels, b->s.labels);
        if (sort_mode == 3) r = -r;
    }
    if (!r) r = a->idx < b->idx ? -1 : (a->idx > b->idx);
    return r;
}

/* variant: sortctx_t.mode */
static im_rc eval_sort(ev_t *ev, const promql_call_t *call, val_t *out)
{
    int mode = call->func->variant;
    im_rc rc = promql__eval(ev, call->args[0], out);
    if (rc == IM_OK && ev->compat >= 3 && ev->qstart != ev->qend)
        promql__warn(ev, "PromQL warning: sort is ineffective for range queries since results "
                         "are always ordered by labels");
    if (rc != IM_OK || ev->nsteps != 1 || out->n < 2) return rc;
    const im_istr_t **names = NULL;
    if (mode >= 2) {
        names = im_malloc(call->nargs * sizeof *names);
        for (size_t i = 1; i < call->nargs; i++) {
            const promql_string_t *s = &unparen(call->args[i])->u.string;
            names[i - 1] = im_intern(s->s, s->len);
        }
    }
    sortent_t *e = im_malloc(out->n * sizeof *e);
    for (size_t i = 0; i < out->n; i++) e[i] = (sortent_t){out->s[i], i};
    sortctx_t ctx = {mode, names, mode >= 2 ? call->nargs - 1 : 0};
    qsort_r(e, out->n, sizeof *e, cmp_sort, &ctx);
    for (size_t i = 0; i < out->n; i++) out->s[i] = e[i].s;
    im_free(e);
    if (names) {
        for (size_t i = 1; i < call->nargs; i++) im_istr_unref(names[i - 1]);
        im_free(names);
    }
    return IM_OK;
}

/* ---- histogram_quantile ---- */

typedef struct hgroup {
    const im_labels_t *labels; /* owned */
    size_t *members;           /* input series indices */
    double *ubs;
    size_t n, cap;
} hgroup_t;

static im_rc eval_histogram_quantile(ev_t *ev, const promql_call_t *call, val_t *out)
{
    val_t q, in;
    im_rc rc = promql__eval_scalar_arg(ev, call->args[0], &q);
    if (rc != IM_OK) return rc;
    rc = promql__eval(ev, call->args[1], &in);
    if (rc != IM_OK) {
        promql__val_free(ev, &q);
        return rc;
    }
    for (size_t k = 0; k < ev->nsteps; k++)
        if (!(q.sc[k] >= 0 && q.sc[k] <= 1)) {
            promql__warn_quantile(ev, q.sc[k]);
            break;
        }
    u64map_t map;
    promql__map_init(&map, in.n);
    hgroup_t *g = NULL;
    size_t ng = 0, gcap = 0;
    const im_istr_t *drop[2] = {ev->le_istr, ev->name_istr};
    for (size_t i = 0; i < in.n; i++) {
        const im_istr_t *le = im_labels_get_istr(in.s[i].labels, ev->le_istr);
        double ub;
        if (!le) continue; /* series without le are ignored */
        if (!im_parse_float(le->s, le->len, &ub)) {
            const im_istr_t *nm = im_labels_get_istr(in.s[i].labels, ev->name_istr);
            promql__warn(ev,
                         "PromQL warning: bucket label \"le\" is missing or has a malformed "
                         "value of \"%s\" for metric name \"%s\"",
                         le->s, nm ? nm->s : "");
            continue;
        }
        uint64_t h = im_labels_hash_subset(in.s[i].labels, drop, 2, false, true);
        uint32_t *slot = promql__map_slot(&map, h);
        if (!*slot) {
            if (ng == gcap) {
                gcap = gcap ? gcap * 2 : 8;
                g = im_realloc(g, gcap * sizeof *g);
            }
            hgroup_t *ng_ = &g[ng];
            memset(ng_, 0, sizeof *ng_);
            im_labels_builder_t b;
            im_lb_init(&b);
            im_lb_load(&b, in.s[i].labels);
            im_lb_del(&b, "le");
            im_lb_del(&b, IM_METRIC_NAME);
            ng_->labels = im_lb_build(&b);
            im_lb_free(&b);
            *slot = (uint32_t)++ng;
        }
        hgroup_t *hg = &g[*slot - 1];
        if (hg->n == hg->cap) {
            hg->cap = hg->cap ? hg->cap * 2 : 16;
            hg->members = im_realloc(hg->members, hg->cap * sizeof *hg->members);
            hg->ubs = im_realloc(hg->ubs, hg->cap * sizeof *hg->ubs);
        }
        hg->members[hg->n] = i;
        hg->ubs[hg->n++] = ub;
    }
    promql__map_free(&map);
    promql__val_init(out, VAL_VECTOR);
    bucket_t *bk = NULL;
    size_t bcap = 0;
    for (size_t gi = 0; gi < ng; gi++) {
        hgroup_t *hg = &g[gi];
        if (hg->n > bcap) {
            bcap = hg->n;
            bk = im_realloc(bk, bcap * sizeof *bk);
        }
        size_t idx = promql__val_add(ev, out, hg->labels);
        hg->labels = NULL;
        vser_t *s = &out->s[idx];
        for (size_t k = 0; k < ev->nsteps; k++) {
            size_t nb = 0;
            for (size_t j = 0; j < hg->n; j++) {
                vser_t *m = &in.s[hg->members[j]];
                if (!m->has[k]) continue;
                bk[nb++] = (bucket_t){hg->ubs[j], m->v[k]};
            }
            if (!nb) continue;
            bool forced = false;
            s->v[k] = promql__bucket_quantile(q.sc[k], bk, nb, &forced);
            s->has[k] = 1;
        }
        im_free(hg->members);
        im_free(hg->ubs);
    }
    im_free(bk);
    im_free(g);
    promql__val_free(ev, &in);
    promql__val_free(ev, &q);
    promql__compact(ev, out);
    return IM_OK;
}

/* ---- The other functions ---- */

/* __name__ dropped from every series (duplicates merged) unless the function
 * keeps it; frees *out on error. */
static im_rc finish_names(ev_t *ev, const promql_call_t *call, val_t *out)
{
    if (call->func->keeps_name) return IM_OK;
    im_rc rc = drop_names_dedup(ev, out);
    if (rc != IM_OK) promql__val_free(ev, out);
    return rc;
}

/* A vector of one series without labels, present at every step (values to be
 * filled in). */
static vser_t *one_series(ev_t *ev, val_t *out)
{
    promql__val_init(out, VAL_VECTOR);
    size_t i = promql__val_add(ev, out, im_labels_empty()); /* may move out->s */
    vser_t *s = &out->s[i];
    memset(s->has, 1, ev->nsteps);
    return s;
}

/* abs, ceil, …, and the date functions: per_value on every present value; the
 * date functions without an argument take vector(time()). */
static im_rc eval_map(ev_t *ev, const promql_call_t *call, val_t *out)
{
    double (*fn)(double) = call->func->per_value;
    if (call->nargs == 0) {
        vser_t *s = one_series(ev, out);
        for (size_t k = 0; k < ev->nsteps; k++) s->v[k] = fn((double)ev_ts(ev, k) / 1000.0);
        return IM_OK;
    }
    im_rc rc = promql__eval(ev, call->args[0], out);
    if (rc != IM_OK) return rc;
    for (size_t j = 0; j < out->n; j++)
        for (size_t k = 0; k < ev->nsteps; k++)
            if (out->s[j].has[k]) out->s[j].v[k] = fn(out->s[j].v[k]);
    return finish_names(ev, call, out);
}

static im_rc eval_time(ev_t *ev, const promql_call_t *call, val_t *out)
{
    (void)call;
    promql__scalar_new(ev, out);
    for (size_t k = 0; k < ev->nsteps; k++) out->sc[k] = (double)ev_ts(ev, k) / 1000.0;
    return IM_OK;
}

static im_rc eval_pi(ev_t *ev, const promql_call_t *call, val_t *out)
{
    (void)call;
    promql__scalar_new(ev, out);
    for (size_t k = 0; k < ev->nsteps; k++) out->sc[k] = M_PI;
    return IM_OK;
}

static im_rc eval_vector(ev_t *ev, const promql_call_t *call, val_t *out)
{
    val_t s;
    im_rc rc = promql__eval_scalar_arg(ev, call->args[0], &s);
    if (rc != IM_OK) return rc;
    memcpy(one_series(ev, out)->v, s.sc, ev->nsteps * sizeof(double));
    promql__val_free(ev, &s);
    return IM_OK;
}

static im_rc eval_scalar(ev_t *ev, const promql_call_t *call, val_t *out)
{
    val_t v;
    im_rc rc = promql__eval(ev, call->args[0], &v);
    if (rc != IM_OK) return rc;
    promql__scalar_new(ev, out);
    for (size_t k = 0; k < ev->nsteps; k++) {
        size_t cnt = 0;
        double x = NAN;
        for (size_t i = 0; i < v.n; i++)
            if (v.s[i].has[k]) {
                cnt++;
                x = v.s[i].v[k];
            }
        out->sc[k] = cnt == 1 ? x : NAN;
    }
    promql__val_free(ev, &v);
    return IM_OK;
}

static im_rc eval_timestamp(ev_t *ev, const promql_call_t *call, val_t *out)
{
    im_rc rc;
    const promql_expr_t *a = unparen(call->args[0]);
    if (a->kind == PROMQL_NODE_VECTOR_SELECTOR) {
        rc = promql__eval_timestamp_selector(ev, a, out);
    } else {
        rc = promql__eval(ev, call->args[0], out);
        if (rc == IM_OK)
            for (size_t j = 0; j < out->n; j++)
                for (size_t k = 0; k < ev->nsteps; k++)
                    out->s[j].v[k] = (double)ev_ts(ev, k) / 1000.0;
    }
    if (rc != IM_OK) return rc;
    return finish_names(ev, call, out);
}

/* round, clamp, clamp_min, clamp_max: the variant. */
enum { CL_ROUND, CL_CLAMP, CL_MIN, CL_MAX };

static im_rc eval_clamp(ev_t *ev, const promql_call_t *call, val_t *out)
{
    int kind = call->func->variant;
    val_t a1, a2;
    promql__val_init(&a1, VAL_SCALAR);
    promql__val_init(&a2, VAL_SCALAR);
    im_rc rc = IM_OK;
    if (call->nargs > 1) rc = promql__eval_scalar_arg(ev, call->args[1], &a1);
    if (rc == IM_OK && call->nargs > 2) rc = promql__eval_scalar_arg(ev, call->args[2], &a2);
    if (rc == IM_OK) rc = promql__eval(ev, call->args[0], out);
    if (rc == IM_OK) {
        for (size_t j = 0; j < out->n; j++) {
            vser_t *s = &out->s[j];
            for (size_t k = 0; k < ev->nsteps; k++) {
                if (!s->has[k]) continue;
                double x = s->v[k];
                switch (kind) {
                case CL_ROUND: {
                    double to = call->nargs > 1 ? a1.sc[k] : 1;
                    double inv = 1.0 / to;
                    s->v[k] = floor(x * inv + 0.5) / inv;
                    break;
                }
                case CL_CLAMP:
                    if (a2.sc[k] < a1.sc[k])
                        s->has[k] = 0;
                    else
                        s->v[k] = go_max(a1.sc[k], go_min(a2.sc[k], x));
                    break;
                case CL_MIN: s->v[k] = go_max(x, a1.sc[k]); break;
                default: s->v[k] = go_min(x, a1.sc[k]); break;
                }
            }
        }
        rc = finish_names(ev, call, out);
    }
    promql__val_free(ev, &a1);
    promql__val_free(ev, &a2);
    return rc;
}

/* Native-histogram functions: float samples only, so the result is empty. */
static im_rc eval_native_histogram(ev_t *ev, const promql_call_t *call, val_t *out)
{
    for (size_t i = 0; i < call->nargs; i++) {
        const promql_expr_t *a = call->args[i];
        if (promql_expr_type(a) == PROMQL_TYPE_VECTOR) {
            im_rc rc = promql__eval(ev, a, out);
            if (rc != IM_OK) return rc;
            promql__val_free(ev, out);
        }
    }
    promql__val_init(out, VAL_VECTOR);
    return IM_OK;
}

im_rc promql__eval_call(ev_t *ev, const promql_expr_t *e, val_t *out)
{
    return e->u.call.func->eval(ev, &e->u.call, out);
}

/* ---- The function table (Prometheus 2.53, sorted by name) ----
 *
 * RANGE: a range function (variant: rfunc_t), MAP: element-wise (per_value),
 * FN: its own eval and variant; keep: results keep __name__. */

#define S PROMQL_TYPE_SCALAR
#define V PROMQL_TYPE_VECTOR
#define M PROMQL_TYPE_MATRIX
#define T PROMQL_TYPE_STRING
#define A(...)                                                                                     \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }
#define FN(name, args, n, var, ret, exper, keep, eval, variant)                                    \
    {                                                                                              \
        name, args, n, var, ret, exper, keep, eval, variant, NULL, 0                               \
    }
#define MAP(name, fn)                                                                              \
    {                                                                                              \
        name, {V}, 1, 0, V, false, false, eval_map, 0, fn, 0                                       \
    }
#define DATE(name, fn)                                                                             \
    {                                                                                              \
        name, {V}, 1, 1, V, false, false, eval_map, 0, fn, 0                                       \
    }
#define RANGE(name, args, n, rf)                                                                   \
    {                                                                                              \
        name, args, n, 0, V, false, false, eval_range, rf, NULL, 0                                 \
    }
/* a function of one compat level only (2 or 3) */
#define ONLY(compat, name, args, n, exper, keep, rf)                                               \
    {                                                                                              \
        name, args, n, 0, V, exper, keep, eval_range, rf, NULL, compat                             \
    }

const promql_function_t promql_functions[] = {
    MAP("abs", f_abs),
    FN("absent", A(V), 1, 0, V, false, false, eval_absent, 0),
    FN("absent_over_time", A(M), 1, 0, V, false, false, eval_absent, 1),
    MAP("acos", acos),
    MAP("acosh", acosh),
    MAP("asin", asin),
    MAP("asinh", asinh),
    MAP("atan", atan),
    MAP("atanh", atanh),
    RANGE("avg_over_time", A(M), 1, RF_AVG),
    MAP("ceil", ceil),
    RANGE("changes", A(M), 1, RF_CHANGES),
    FN("clamp", A(V, S, S), 3, 0, V, false, false, eval_clamp, CL_CLAMP),
    FN("clamp_max", A(V, S), 2, 0, V, false, false, eval_clamp, CL_MAX),
    FN("clamp_min", A(V, S), 2, 0, V, false, false, eval_clamp, CL_MIN),
    MAP("cos", cos),
    MAP("cosh", cosh),
    RANGE("count_over_time", A(M), 1, RF_COUNT),
    DATE("day_of_month", f_day_of_month),
    DATE("day_of_week", f_day_of_week),
    DATE("day_of_year", f_day_of_year),
    DATE("days_in_month", f_days_in_month),
    MAP("deg", f_deg),
    RANGE("delta", A(M), 1, RF_DELTA),
    RANGE("deriv", A(M), 1, RF_DERIV),
    ONLY(3, "double_exponential_smoothing", A(M, S, S), 3, true, false, RF_HOLT),
    MAP("exp", exp),
    ONLY(3, "first_over_time", A(M), 1, false, true, RF_FIRST),
    MAP("floor", floor),
    FN("histogram_avg", A(V), 1, 0, V, false, false, eval_native_histogram, 0),
    FN("histogram_count", A(V), 1, 0, V, false, false, eval_native_histogram, 0),
    FN("histogram_fraction", A(S, S, V), 3, 0, V, false, false, eval_native_histogram, 0),
    FN("histogram_quantile", A(S, V), 2, 0, V, false, false, eval_histogram_quantile, 0),
    FN("histogram_stddev", A(V), 1, 0, V, false, false, eval_native_histogram, 0),
    FN("histogram_stdvar", A(V), 1, 0, V, false, false, eval_native_histogram, 0),
    FN("histogram_sum", A(V), 1, 0, V, false, false, eval_native_histogram, 0),
    ONLY(2, "holt_winters", A(M, S, S), 3, false, false, RF_HOLT),
    DATE("hour", f_hour),
    RANGE("idelta", A(M), 1, RF_IDELTA),
    RANGE("increase", A(M), 1, RF_INCREASE),
    {"info", {V, V}, 2, 1, V, true, true, promql__eval_info, 0, NULL, 3}, /* info.c */
    RANGE("irate", A(M), 1, RF_IRATE),
    FN("label_join", A(V, T, T, T), 4, -1, V, false, true, eval_label_join, 0),
    FN("label_replace", A(V, T, T, T, T), 5, 0, V, false, true, eval_label_replace, 0),
    FN("last_over_time", A(M), 1, 0, V, false, true, eval_range, RF_LAST),
    MAP("ln", log),
    MAP("log10", log10),
    MAP("log2", log2),
    FN("mad_over_time", A(M), 1, 0, V, true, false, eval_range, RF_MAD),
    RANGE("max_over_time", A(M), 1, RF_MAX),
    RANGE("min_over_time", A(M), 1, RF_MIN),
    DATE("minute", f_minute),
    DATE("month", f_month),
    FN("pi", A(0), 0, 0, S, false, false, eval_pi, 0),
    RANGE("predict_linear", A(M, S), 2, RF_PREDICT),
    RANGE("present_over_time", A(M), 1, RF_PRESENT),
    RANGE("quantile_over_time", A(S, M), 2, RF_QUANTILE),
    MAP("rad", f_rad),
    RANGE("rate", A(M), 1, RF_RATE),
    RANGE("resets", A(M), 1, RF_RESETS),
    FN("round", A(V, S), 2, 1, V, false, false, eval_clamp, CL_ROUND),
    FN("scalar", A(V), 1, 0, S, false, false, eval_scalar, 0),
    MAP("sgn", f_sgn),
    MAP("sin", sin),
    MAP("sinh", sinh),
    FN("sort", A(V), 1, 0, V, false, true, eval_sort, 0),
    FN("sort_by_label", A(V, T), 2, -1, V, true, true, eval_sort, 2),
    FN("sort_by_label_desc", A(V, T), 2, -1, V, true, true, eval_sort, 3),
    FN("sort_desc", A(V), 1, 0, V, false, true, eval_sort, 1),
    MAP("sqrt", sqrt),
    RANGE("stddev_over_time", A(M), 1, RF_STDDEV),
    RANGE("stdvar_over_time", A(M), 1, RF_STDVAR),
    RANGE("sum_over_time", A(M), 1, RF_SUM),
    MAP("tan", tan),
    MAP("tanh", tanh),
    FN("time", A(0), 0, 0, S, false, false, eval_time, 0),
    FN("timestamp", A(V), 1, 0, V, false, false, eval_timestamp, 0),
    ONLY(3, "ts_of_first_over_time", A(M), 1, true, false, RF_TS_FIRST),
    ONLY(3, "ts_of_last_over_time", A(M), 1, true, false, RF_TS_LAST),
    ONLY(3, "ts_of_max_over_time", A(M), 1, true, false, RF_TS_MAX),
    ONLY(3, "ts_of_min_over_time", A(M), 1, true, false, RF_TS_MIN),
    FN("vector", A(S), 1, 0, V, false, false, eval_vector, 0),
    DATE("year", f_year),
};
const size_t promql_functions_count = IM_ARRAY_LEN(promql_functions);

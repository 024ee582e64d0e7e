/* promql_int.h — private to src/promql/: the evaluator's values and helpers.
 *
 * Every node is evaluated over all steps of the query at once. An instant-vector
 * value is a set of series, each with a dense array of nsteps values and a
 * presence byte per step (a series need not have a point at every step). A
 * scalar is one value per step. Range vectors are never materialised as values:
 * functions taking one pull series one at a time from a range source (matrix
 * selector or subquery) into a reusable sample buffer.
 *
 * Ownership: a val_t owns its series arrays (one allocation per series, none per
 * sample) and one label reference per series; val_free releases both. */
#ifndef IM_PROMQL_PROMQL_INT_H
#define IM_PROMQL_PROMQL_INT_H

#include <math.h>

#include "promql/promql.h"
#include "util/buf.h"

typedef enum vkind {
    VAL_SCALAR = 1,
    VAL_VECTOR,
    VAL_STRING,
} vkind_t;

typedef struct vser {
    const im_labels_t *labels; /* owned reference */
    double *v;                 /* owned, nsteps values (the block also holds `has`) */
    uint8_t *has;              /* nsteps presence flags, inside v's block */
    /* Delayed name removal (ev->delayed_name): an operation that drops the
     * metric name only set this; `labels` still hold __name__ (and
     * __type__/__unit__), removed when the query's result is made
     * (promql__finish_names). Always false otherwise. */
    bool drop_name;
} vser_t;

typedef struct promql_val {
    vkind_t kind;
    double *sc;      /* VAL_SCALAR: nsteps values (owned) */
    const char *str; /* VAL_STRING: borrowed from the AST */
    size_t slen;
    vser_t *s; /* VAL_VECTOR: owned array */
    size_t n, cap;
    int64_t counted; /* points counted against max_samples, released by val_free */
    /* Slots (nsteps per series added by promql__val_add) counted against
     * max_samples while the value is being built: an operator's output is
     * bounded as it grows, not only once it is complete (count_values over many
     * steps makes a series per distinct value, each nsteps wide). When the node
     * is done the reservation is traded for its points (as Prometheus counts);
     * val_free releases what is left. */
    int64_t reserved;
} val_t;

typedef struct promql_ev ev_t;

struct promql_ev {
    const promql_engine_t *eng;
    storage_queryable_t *q;
    int64_t start, end, step; /* evaluation times: start + i*step, i < nsteps */
    size_t nsteps;
    int64_t qstart, qend; /* the query's start/end (for @ start()/end()) */
    int64_t qstep;        /* the query's step, 0 for an instant query (step()) */
    int64_t lookback;
    int compat;         /* language level, 2 or 3 (ast.h promql_lang_t) */
    bool type_and_unit; /* promql_lang_t.type_and_unit_labels */
    bool delayed_name;  /* promql_lang_t.delayed_name_removal (compat 3): vser_t.drop_name */
    int64_t left_open;  /* 1 under compat 3: windows are (t - range, t], else 0: [t - range, t] */
    int64_t max_samples;
    int64_t cur_samples, peak_samples, total_samples;
    int64_t deadline_ns;
    const volatile int *cancel;
    bool over_limit; /* sticky: a reservation passed max_samples (err is set) */
    int check_ctr;
    im_err_t *err;
    im_buf_t *warnings;         /* NUL-separated warning texts, shared with child evaluators */
    const im_istr_t *name_istr; /* interned "__name__" (shared) */
    const im_istr_t *le_istr;   /* interned "le" (shared) */
    /* Native histograms (nhist_eval.c): the shared state (arena of the
     * histograms made while evaluating, how many were dropped by consumers that
     * do not take them), and whether the node evaluated next keeps them. */
    struct promql_nh *nh;
    bool want_hists;
    /* The same for one node of the tree (an operator's vector operand that
     * other operands, e.g. a parameter, are evaluated before). */
    const promql_expr_t *want_expr;
    /* Reusable sample buffer for range sources. */
    int64_t *rt;
    double *rv;
    size_t rcap;
};

/* Time arithmetic wraps around as Go's int64 does, so that extreme times (an
 * `@` far out of range becomes MinInt64, as in Prometheus) give Prometheus'
 * results instead of undefined behaviour. */
static inline int64_t ts_add(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}
static inline int64_t ts_sub(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

/* A duration of the tree: the literal, or its expression computed for this query
 * (step(), range(); ast.h promql_dur_t), rounded to ms. */
static inline int64_t promql__dur(const ev_t *ev, int64_t lit, const promql_dur_t *d)
{
    if (!d) return lit;
    double ms = round(promql_dur_eval(d, ev->qstep, ev->qend - ev->qstart) * 1000.0);
    if (!(ms < 9.2e18 && ms > -9.2e18)) return 0;
    return (int64_t)ms;
}

static inline int64_t ev_ts(const ev_t *ev, size_t i)
{
    return (int64_t)((uint64_t)ev->start + (uint64_t)i * (uint64_t)ev->step);
}

/* ---- engine.c ---- */
im_rc promql__eval(ev_t *ev, const promql_expr_t *e, val_t *out);
void promql__val_free(ev_t *ev, val_t *v);
/* Appends a series with labels (reference taken over) and fresh arrays, all
 * absent. Returns its index. Reserves nsteps samples against max_samples (see
 * val_t.reserved); past the limit it sets ev->over_limit and the error, which
 * promql__check and the end of promql__eval return: loops that may add many
 * series check ev->over_limit after each. */
size_t promql__val_add(ev_t *ev, val_t *v, const im_labels_t *labels);
void promql__val_init(val_t *v, vkind_t kind);
im_rc promql__scalar_new(ev_t *ev, val_t *v);
/* Counts points held against max_samples (negative to release). */
im_rc promql__count(ev_t *ev, int64_t n);
/* Checks the sample limit (ev->over_limit), cancellation, and now and then the
 * timeout. */
im_rc promql__check(ev_t *ev);
/* Timeout or cancellation now (IM_ETIMEOUT, IM_ECANCELED, IM_OK) without
 * touching ev: safe from worker threads. promql__fail sets the matching error. */
im_rc promql__check_now(const ev_t *ev);
im_rc promql__fail(ev_t *ev, im_rc rc);
/* Appends a series owning labels (reference taken over) and block, an
 * im_malloc'ed nsteps doubles followed by nsteps presence bytes. */
size_t promql__val_adopt(val_t *v, const im_labels_t *labels, double *block, size_t nsteps);
void promql__warn(ev_t *ev, const char *fmt, ...) IM_PRINTF(2, 3);
/* Deletes __name__ from b (and __type__, __unit__ with ev->type_and_unit). */
void promql__lb_del_name(const ev_t *ev, im_labels_builder_t *b);
/* Removes __name__ (new reference). Removes it now whatever ev->delayed_name:
 * operations that drop the name use the helpers below instead. */
const im_labels_t *promql__drop_name(ev_t *ev, const im_labels_t *ls);
/* Appends a series made from an input series with labels ls (borrowed) whose
 * name was marked dropped (in_mark), by an operation that drops the name (drop)
 * or keeps it: without delayed name removal the labels are ls without __name__
 * when drop; with it ls as they are, the series' drop_name = drop || in_mark.
 * Returns its index (promql__val_add). */
size_t promql__val_add_named(ev_t *ev, val_t *v, const im_labels_t *ls, bool drop, bool in_mark);
/* The name of series s dropped by an operation: now, or only marked with
 * delayed name removal. */
void promql__vser_drop_name(ev_t *ev, vser_t *s);
/* End of a query with delayed name removal: the marked names are removed, then
 * series with equal labels merged ("vector cannot contain metrics with the same
 * labelset" when two have a point at one step). A no-op otherwise. */
im_rc promql__finish_names(ev_t *ev, val_t *v);
/* Merges series with equal labels (absent steps filled from the other);
 * both present at one step is "vector cannot contain metrics with the same
 * labelset". Drops series without any point. */
im_rc promql__dedup(ev_t *ev, val_t *v);
/* Drops series with no point at all. */
void promql__compact(ev_t *ev, val_t *v);
/* Range source: a matrix selector or subquery argument, series by series. */
typedef struct rsrc rsrc_t;
im_rc promql__rsrc_open(ev_t *ev, const promql_expr_t *e, rsrc_t **out);
/* Next series: labels (borrowed until the next call), samples in ev->rt/rv.
 * Returns 1 with a series, 0 at the end, negative on error. */
int promql__rsrc_next(ev_t *ev, rsrc_t *r, const im_labels_t **labels, size_t *n);
/* Whether the series promql__rsrc_next returned last has its name marked
 * dropped (a subquery's series, delayed name removal). */
bool promql__rsrc_marked(const rsrc_t *r);
void promql__rsrc_close(ev_t *ev, rsrc_t *r);
/* The selector's anchored/smoothed modifier (its samples then reach a lookback
 * before the first window, and for smoothed after the last one). */
promql_range_ext_t promql__rsrc_ext(const rsrc_t *r);
/* extended_range.c: rate/increase/delta/changes/resets (f: 0 rate, 1 increase,
 * 2 delta, 3 changes, 4 resets) of window (lo, hi] of a series' samples t/v[0, n),
 * [a, b) being the samples inside; false when there is no value. */
/* The functions an anchored/smoothed argument is allowed with (3.14's error). */
im_rc promql__ext_check(ev_t *ev, const struct promql_call *call);
bool promql__ext_range(int f, promql_range_ext_t ext, const int64_t *t, const double *v, size_t n,
                       size_t a, size_t b, int64_t lo, int64_t hi, int64_t lookback, double *out);
/* Window [lo, hi] (ms, inclusive) of step i for the source. */
void promql__rsrc_window(ev_t *ev, rsrc_t *r, size_t i, int64_t *lo, int64_t *hi);
int64_t promql__rsrc_range(rsrc_t *r);
/* Evaluation time of step i (the @ time when pinned). */
int64_t promql__rsrc_time(ev_t *ev, rsrc_t *r, size_t i);
bool promql__rsrc_fixed(rsrc_t *r); /* @: the same window at every step */
/* Parallel reading: the number of series of a matrix-selector source whose
 * backend allows concurrent iterators (0 otherwise: read with rsrc_next). Then
 * promql__rsrc_read may run for different series from several threads: it reads
 * series si's samples, stale markers dropped, into (*pt, *pv) (capacity *pcap,
 * grown) and returns how many; nothing is counted against the limit. */
size_t promql__rsrc_par_series(rsrc_t *r);
/* The number of series of a matrix-selector source (0 for a subquery); read them
 * with promql__rsrc_read on one thread unless promql__rsrc_par_series says so. */
size_t promql__rsrc_nseries(rsrc_t *r);
size_t promql__rsrc_read(rsrc_t *r, size_t si, int64_t **pt, double **pv, size_t *pcap);
const im_labels_t *promql__rsrc_labels(rsrc_t *r, size_t si);

/* ---- hash map uint64 -> index ---- */
typedef struct u64map {
    uint64_t *k;
    uint32_t *v; /* index + 1; 0 = empty */
    size_t cap, n;
} u64map_t;
void promql__map_init(u64map_t *m, size_t hint);
void promql__map_free(u64map_t *m);
/* Returns a pointer to the slot value (0 when new: the caller sets it). */
uint32_t *promql__map_slot(u64map_t *m, uint64_t k);
uint32_t promql__map_get(const u64map_t *m, uint64_t k);

/* ---- functions.c, aggregate.c, binop.c ---- */
im_rc promql__eval_call(ev_t *ev, const promql_expr_t *e, val_t *out);
im_rc promql__eval_aggregate(ev_t *ev, const promql_expr_t *e, val_t *out);
im_rc promql__eval_binary(ev_t *ev, const promql_expr_t *e, val_t *out);
/* functions.c, shared with nhist_eval.c: evaluates a parameter that must be a
 * scalar (IM_EEXEC otherwise, *out freed). */
im_rc promql__eval_scalar_arg(ev_t *ev, const promql_expr_t *e, val_t *out);
/* aggregate.c, shared with the fused path in functions.c: one input series'
 * values into a group's per-step accumulators (A, B, C: value, compensation or
 * variance, count), the group's result from them, and the grouping. */
void promql__agg_acc(promql_aggop_t op, double *A, double *B, double *C, const double *v,
                     const uint8_t *has, size_t nsteps, int compat);
/* The warning of a quantile parameter outside [0, 1], the value as Go prints it. */
void promql__warn_quantile(ev_t *ev, double q);
void promql__agg_fin(promql_aggop_t op, const double *A, const double *B, const double *C,
                     double *v, uint8_t *has, size_t nsteps, int compat);
uint64_t promql__agg_group_hash(const promql_aggregate_t *agg, const im_labels_t *ls);
const im_labels_t *promql__agg_group_labels(const promql_aggregate_t *agg, const im_labels_t *ls);
/* functions.c: sum, avg, count, min, max, group, stddev, stdvar of a range
 * function without parameters over a matrix selector, fused: each series' values
 * go straight into its group's accumulators (series of a group in order, groups
 * on several threads), never held as an instant vector. *done false: not such
 * an expression (nothing done; evaluate as usual). */
im_rc promql__eval_agg_range(ev_t *ev, const promql_aggregate_t *agg, val_t *out, bool *done);
/* histogram.c: classic-bucket quantile over (upper bound, cumulative count)
 * pairs (modified in place: sorted, merged, made monotonic). */
typedef struct bucket {
    double ub, count;
} bucket_t;
double promql__bucket_quantile(double q, bucket_t *b, size_t n, bool *forced_monotonic);
/* Prometheus' quantile over values (sorted in place). */
double promql__quantile(double q, double *v, size_t n);
/* Neumaier-compensated summation step, as Prometheus' kahanSumInc. */
static inline void promql__kahan_inc(double inc, double *sum, double *c)
{
    double t = *sum + inc;
    if (__builtin_isinf(t))
        *c = 0;
    else if (__builtin_fabs(*sum) >= __builtin_fabs(inc))
        *c += (*sum - t) + inc;
    else
        *c += (inc - t) + *sum;
    *sum = t;
}

/* ---- nhist_eval.c: native histograms in the evaluator ---- */
typedef struct promql_nh {
    im_arena_t arena;
    int64_t dropped; /* boxes dropped (atomic: parallel range reads) */
    bool seen;       /* a histogram was read */
} promql_nh_t;
/* Samples just read from a series set: with want, boxes from a set with
 * hist_boxes are copied into the evaluation's arena; without, they are removed
 * (counted as dropped); a float with the box tag from any other set becomes a
 * plain NaN. Returns the new count. Thread-safe without want. */
size_t promql__nh_fix(promql_nh_t *nh, bool hist_boxes, bool want, int64_t *t, double *v, size_t n);
/* A histogram sample taken again by the next step of a vector selector: its
 * counter-reset hint is not repeated (Prometheus 3), other values unchanged. */
double promql__nh_repeat(ev_t *ev, double v);
/* Removes every histogram of a vector value (counted as dropped). */
void promql__nh_strip(ev_t *ev, val_t *v);
/* Call, aggregate and binary nodes: the histogram-aware ones, else the float
 * evaluators. */
im_rc promql__nh_node(ev_t *ev, const promql_expr_t *e, val_t *out);

#endif

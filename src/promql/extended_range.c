/* extended_range.c — Prometheus 3's experimental `anchored` and `smoothed` range
 * selectors (promql-extended-range-selectors) for rate, increase, delta (both)
 * and changes, resets (anchored only).
 *
 * anchored: the window (t - range, t] also takes the last sample before it (at
 * most a lookback delta before its start, left-open) as its first point; no
 * extrapolation. A window without a sample of its own has no value.
 * smoothed: the series' values at both ends of the window are interpolated
 * linearly between the neighbouring samples (each at most a lookback delta
 * away); without a sample before the start the first sample counts from the
 * start, without one after the end the last value holds. For rate and increase
 * the interpolation is counter-aware: across a reset the later sample counts as
 * an increase over the earlier one. rate divides by the range in seconds. */
#include "util/base.h"

#include "promql/promql_int.h"

im_rc promql__ext_check(ev_t *ev, const promql_call_t *call)
{
    for (size_t i = 0; i < call->nargs; i++) {
        const promql_expr_t *ra = call->args[i];
        while (ra->kind == PROMQL_NODE_PAREN) ra = ra->u.paren.expr;
        if (ra->kind != PROMQL_NODE_MATRIX_SELECTOR || ra->u.ms.ext == PROMQL_RANGE_PLAIN) continue;
        bool sm = ra->u.ms.ext == PROMQL_RANGE_SMOOTHED;
        const char *n = call->func->name;
        bool ok = !strcmp(n, "rate") || !strcmp(n, "increase") || !strcmp(n, "delta") ||
                  (!sm && (!strcmp(n, "changes") || !strcmp(n, "resets")));
        if (!ok)
            return im_err_set(ev->err, IM_EEXEC,
                              sm ? "smoothed modifier can only be used with: delta, increase, "
                                   "rate - not with %s"
                                 : "anchored modifier can only be used with: changes, delta, "
                                   "increase, rate, resets - not with %s",
                              n);
    }
    return IM_OK;
}

/* b after a as a counter: the reset-adjusted value */
static double adj(double a, double b, bool counter)
{
    return counter && b < a ? a + b : b;
}

static double interp(int64_t t0, double v0, int64_t t1, double v1, int64_t x)
{
    if (t1 == t0) return v1;
    return v0 + (v1 - v0) * ((double)(x - t0) / (double)(t1 - t0));
}

static double counter_increase(const double *v, size_t from, size_t to)
{
    double inc = 0;
    for (size_t i = from + 1; i < to; i++) inc += v[i] >= v[i - 1] ? v[i] - v[i - 1] : v[i];
    return inc;
}

bool promql__ext_range(int f, promql_range_ext_t ext, const int64_t *t, const double *v, size_t n,
                       size_t a, size_t b, int64_t lo, int64_t hi, int64_t lookback, double *out)
{
    double secs = (double)(hi - lo) / 1000.0;
    bool counter = f == 0 || f == 1;
    bool has_prev = a > 0 && lo - t[a - 1] < lookback;
    if (ext == PROMQL_RANGE_ANCHORED) {
        if (a >= b) return false;
        size_t from = has_prev ? a - 1 : a;
        double r = 0;
        switch (f) {
        case 0:
        case 1:
            r = counter_increase(v, from, b);
            if (f == 0) r /= secs;
            break;
        case 2: r = v[b - 1] - v[from]; break;
        case 3:
            for (size_t i = from + 1; i < b; i++) r += v[i] != v[i - 1];
            break;
        default:
            for (size_t i = from + 1; i < b; i++) r += v[i] < v[i - 1];
            break;
        }
        *out = r;
        return true;
    }
    bool has_next = b < n && t[b] - hi <= lookback;
    double r;
    if (a >= b) { /* both ends between the same two samples */
        if (!has_prev || !has_next) return false;
        double v1 = adj(v[a - 1], v[b], counter);
        double vs = interp(t[a - 1], v[a - 1], t[b], v1, lo);
        double ve = interp(t[a - 1], v[a - 1], t[b], v1, hi);
        r = ve - vs;
    } else if (counter) {
        r = 0;
        if (has_prev) {
            double v1 = adj(v[a - 1], v[a], counter);
            r += v1 - interp(t[a - 1], v[a - 1], t[a], v1, lo);
        }
        r += counter_increase(v, a, b);
        if (has_next) {
            double v1 = adj(v[b - 1], v[b], counter);
            r += interp(t[b - 1], v[b - 1], t[b], v1, hi) - v[b - 1];
        }
    } else {
        double vs = has_prev ? interp(t[a - 1], v[a - 1], t[a], v[a], lo) : v[a];
        double ve = has_next ? interp(t[b - 1], v[b - 1], t[b], v[b], hi) : v[b - 1];
        r = ve - vs;
    }
    *out = f == 0 ? r / secs : r;
    return true;
}

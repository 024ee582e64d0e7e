/* histogram.c — quantiles: histogram_quantile over classic `le` buckets and the
 * φ-quantile of a set of values (quantile aggregation, quantile_over_time).
 *
 * Bucket rules as Prometheus 2.53: φ < 0 gives -Inf, φ > 1 +Inf, NaN φ NaN;
 * buckets are sorted by upper bound, buckets with the same bound merged; without
 * a +Inf bucket, with fewer than two buckets or with zero observations the
 * answer is NaN; cumulative counts that decrease are raised to the running
 * maximum (monotonicity fix-up); the rank lands in a bucket by binary search and
 * is interpolated linearly inside it; a rank in the +Inf bucket answers the
 * largest finite bound, and a first bucket with a bound <= 0 answers that bound. */
#include "util/base.h"

#include <math.h>
#include <stdlib.h>

#include "promql/promql_int.h"

static int cmp_bucket(const void *a, const void *b)
{
    double x = ((const bucket_t *)a)->ub, y = ((const bucket_t *)b)->ub;
    return x < y ? -1 : x > y;
}

double promql__bucket_quantile(double q, bucket_t *b, size_t n, bool *forced)
{
    *forced = false;
    if (isnan(q)) return NAN;
    if (q < 0) return -INFINITY;
    if (q > 1) return INFINITY;
    qsort(b, n, sizeof *b, cmp_bucket);
    if (!(isinf(b[n - 1].ub) && b[n - 1].ub > 0)) return NAN;
    /* coalesce equal bounds */
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (w && b[w - 1].ub == b[i].ub)
            b[w - 1].count += b[i].count;
        else
            b[w++] = b[i];
    }
    n = w;
    double max = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (b[i].count > max)
            max = b[i].count;
        else if (b[i].count < max) {
            b[i].count = max;
            *forced = true;
        }
    }
    if (n < 2) return NAN;
    double obs = b[n - 1].count;
    if (obs == 0) return NAN;
    double rank = q * obs;
    /* smallest i in [0, n-1) with count >= rank, else n-1 */
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b[mid].count >= rank)
            hi = mid;
        else
            lo = mid + 1;
    }
    size_t i = lo;
    if (i == n - 1) return b[n - 2].ub;
    if (i == 0 && b[0].ub <= 0) return b[0].ub;
    double start = 0, end = b[i].ub, count = b[i].count;
    if (i > 0) {
        start = b[i - 1].ub;
        count -= b[i - 1].count;
        rank -= b[i - 1].count;
    }
    return start + (end - start) * (rank / count);
}

static int cmp_nan_first(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    bool xn = isnan(x), yn = isnan(y);
    if (xn || yn) return xn && yn ? 0 : xn ? -1 : 1;
    return x < y ? -1 : x > y;
}

double promql__quantile(double q, double *v, size_t n)
{
    if (n == 0 || isnan(q)) return NAN;
    if (q < 0) return -INFINITY;
    if (q > 1) return INFINITY;
    qsort(v, n, sizeof *v, cmp_nan_first);
    double fn = (double)n;
    double rank = q * (fn - 1);
    double lower = fmax(0, floor(rank));
    double upper = fmin(fn - 1, lower + 1);
    double weight = rank - floor(rank);
    return v[(size_t)lower] * (1 - weight) + v[(size_t)upper] * weight;
}

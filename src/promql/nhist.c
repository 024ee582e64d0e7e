/* nhist.c — native-histogram arithmetic on dense float histograms (nhist.h):
 * schema reduction, zero-bucket widening, sums, scaling, counter-reset
 * detection, and the estimations of histogram_quantile, histogram_fraction and
 * histogram_stddev/stdvar, as Prometheus 3 defines them (exponential
 * interpolation inside exponential buckets, linear in the zero bucket and in
 * custom buckets). */
#include "util/base.h"

#include <math.h>

#include "promql/nhist.h"
#include "util/mem.h"

storage_fh_t *promql_fh_new(im_arena_t *a, uint32_t npos, uint32_t nneg, uint32_t ncustom)
{
    size_t sz = storage_fh_size(npos, nneg, ncustom);
    void *mem = a ? im_arena_alloc(a, sz) : im_malloc(sz);
    if (!mem) mem = im_malloc(sz); /* arena cap: never in the engine's arena */
    return storage_fh_place(mem, npos, nneg, ncustom);
}

storage_fh_t *promql_fh_copy(im_arena_t *a, const storage_fh_t *h)
{
    storage_fh_t *c = promql_fh_new(a, h->npos, h->nneg, h->ncustom);
    return storage_fh_copy_to(c, h);
}

/* floor((i - 1) / 2^d) + 1: the index at a schema d lower. */
static int32_t reduce_idx(int32_t i, int d)
{
    int64_t x = (int64_t)i - 1, div = (int64_t)1 << d;
    int64_t q = x >= 0 ? x / div : -((-x + div - 1) / div);
    return (int32_t)(q + 1);
}

static void reduce_side(const double *v, uint32_t n, int32_t off, int d, double *out, int32_t noff)
{
    for (uint32_t k = 0; k < n; k++) out[reduce_idx(off + (int32_t)k, d) - noff] += v[k];
}

storage_fh_t *promql_fh_reduce(im_arena_t *a, const storage_fh_t *h, int32_t schema)
{
    if (h->schema == STORAGE_FH_CUSTOM || schema >= h->schema) return promql_fh_copy(a, h);
    int d = h->schema - schema;
    int32_t plo = 0, phi = 0, nlo = 0, nhi = 0;
    if (h->npos) {
        plo = reduce_idx(h->poff, d);
        phi = reduce_idx(h->poff + (int32_t)h->npos - 1, d);
    }
    if (h->nneg) {
        nlo = reduce_idx(h->noff, d);
        nhi = reduce_idx(h->noff + (int32_t)h->nneg - 1, d);
    }
    uint32_t np = h->npos ? (uint32_t)(phi - plo + 1) : 0,
             nn = h->nneg ? (uint32_t)(nhi - nlo + 1) : 0;
    storage_fh_t *r = promql_fh_new(a, np, nn, 0);
    double *pos = r->pos, *neg = r->neg, *cu = r->custom;
    uint32_t ncu = r->ncustom;
    *r = *h;
    r->pos = pos;
    r->neg = neg;
    r->custom = cu;
    r->ncustom = ncu;
    r->npos = np;
    r->nneg = nn;
    r->poff = plo;
    r->noff = nlo;
    r->schema = schema;
    reduce_side(h->pos, h->npos, h->poff, d, pos, plo);
    reduce_side(h->neg, h->nneg, h->noff, d, neg, nlo);
    return r;
}

/* Moves the buckets inside [-zt, zt] into the zero bucket of h (in place),
 * growing zt to the upper bound of a bucket it falls into; returns the
 * threshold reached. */
static double widen_zero(storage_fh_t *h, double zt)
{
    if (h->schema == STORAGE_FH_CUSTOM || zt <= h->zthresh) return h->zthresh;
    for (;;) {
        bool grew = false;
        for (int side = 0; side < 2 && !grew; side++) {
            double *v = side ? h->neg : h->pos;
            uint32_t n = side ? h->nneg : h->npos;
            int32_t off = side ? h->noff : h->poff;
            for (uint32_t k = 0; k < n; k++) {
                double lo = storage_fh_lower(h->schema, off + (int32_t)k, h);
                double hi = storage_fh_upper(h->schema, off + (int32_t)k, h);
                if (hi <= zt) {
                    h->zcount += v[k];
                    v[k] = 0;
                } else if (lo < zt && v[k] != 0) {
                    zt = hi;
                    grew = true;
                    break;
                }
            }
        }
        if (!grew) break;
    }
    h->zthresh = zt;
    return zt;
}

static bool same_custom(const storage_fh_t *x, const storage_fh_t *y)
{
    if (x->ncustom != y->ncustom) return false;
    for (uint32_t i = 0; i < x->ncustom; i++)
        if (x->custom[i] != y->custom[i]) return false;
    return true;
}

static void add_side(double *out, int32_t ooff, const double *v, uint32_t n, int32_t off, double f)
{
    for (uint32_t k = 0; k < n; k++) out[off + (int32_t)k - ooff] += f * v[k];
}

storage_fh_t *promql_fh_add(im_arena_t *a, const storage_fh_t *x, const storage_fh_t *y, double f)
{
    bool cx = x->schema == STORAGE_FH_CUSTOM, cy = y->schema == STORAGE_FH_CUSTOM;
    if (cx != cy || (cx && !same_custom(x, y))) return NULL;
    int32_t s = IM_MIN(x->schema, y->schema);
    storage_fh_t *xr = promql_fh_reduce(NULL, x, s), *yr = promql_fh_reduce(NULL, y, s);
    double zt = IM_MAX(xr->zthresh, yr->zthresh);
    for (int i = 0; i < 4; i++) {
        zt = widen_zero(xr, zt);
        zt = widen_zero(yr, zt);
        if (xr->zthresh == yr->zthresh) break;
    }
    int32_t plo = 0, phi = 0, nlo = 0, nhi = 0;
    bool hp = false, hn = false;
    const storage_fh_t *in[2] = {xr, yr};
    for (int i = 0; i < 2; i++) {
        const storage_fh_t *h = in[i];
        if (h->npos) {
            int32_t l = h->poff, e = h->poff + (int32_t)h->npos;
            plo = hp ? IM_MIN(plo, l) : l;
            phi = hp ? IM_MAX(phi, e) : e;
            hp = true;
        }
        if (h->nneg) {
            int32_t l = h->noff, e = h->noff + (int32_t)h->nneg;
            nlo = hn ? IM_MIN(nlo, l) : l;
            nhi = hn ? IM_MAX(nhi, e) : e;
            hn = true;
        }
    }
    storage_fh_t *r = promql_fh_new(a, (uint32_t)(phi - plo), (uint32_t)(nhi - nlo), xr->ncustom);
    r->schema = s;
    r->hint = STORAGE_FH_UNKNOWN;
    r->zthresh = xr->zthresh;
    r->zcount = xr->zcount + f * yr->zcount;
    r->count = xr->count + f * yr->count;
    r->sum = xr->sum + f * yr->sum;
    r->poff = plo;
    r->noff = nlo;
    if (xr->ncustom) memcpy(r->custom, xr->custom, xr->ncustom * sizeof(double));
    add_side(r->pos, plo, xr->pos, xr->npos, xr->poff, 1);
    add_side(r->pos, plo, yr->pos, yr->npos, yr->poff, f);
    add_side(r->neg, nlo, xr->neg, xr->nneg, xr->noff, 1);
    add_side(r->neg, nlo, yr->neg, yr->nneg, yr->noff, f);
    im_free(xr);
    im_free(yr);
    return r;
}

storage_fh_t *promql_fh_scale(im_arena_t *a, const storage_fh_t *h, double f)
{
    storage_fh_t *r = promql_fh_copy(a, h);
    r->count *= f;
    r->sum *= f;
    r->zcount *= f;
    for (uint32_t k = 0; k < r->npos; k++) r->pos[k] *= f;
    for (uint32_t k = 0; k < r->nneg; k++) r->neg[k] *= f;
    return r;
}

static double at(const double *v, uint32_t n, int32_t off, int32_t idx)
{
    int64_t k = (int64_t)idx - off;
    return k >= 0 && k < (int64_t)n ? v[k] : 0;
}

static bool side_decreased(const double *pv, uint32_t pn, int32_t poff, const double *cv,
                           uint32_t cn, int32_t coff)
{
    for (uint32_t k = 0; k < pn; k++)
        if (pv[k] > at(cv, cn, coff, poff + (int32_t)k)) return true;
    return false;
}

bool promql_fh_detect_reset(const storage_fh_t *cur, const storage_fh_t *prev)
{
    if (cur->hint == STORAGE_FH_RESET) return true;
    if (cur->hint == STORAGE_FH_NOT_RESET) return false;
    if (cur->count < prev->count) return true;
    bool cc = cur->schema == STORAGE_FH_CUSTOM, pc = prev->schema == STORAGE_FH_CUSTOM;
    if (cc != pc || (cc && !same_custom(cur, prev))) return true;
    if (cur->schema > prev->schema) return true;
    if (cur->zthresh < prev->zthresh) return true;
    storage_fh_t *p = promql_fh_reduce(NULL, prev, cur->schema);
    bool reset = widen_zero(p, cur->zthresh) != cur->zthresh || cur->zcount < p->zcount ||
                 side_decreased(p->pos, p->npos, p->poff, cur->pos, cur->npos, cur->poff) ||
                 side_decreased(p->neg, p->nneg, p->noff, cur->neg, cur->nneg, cur->noff);
    im_free(p);
    return reset;
}

/* ---- Bucket lists in ascending order ---- */

typedef struct nb {
    double lo, hi, c;
} nb_t;

static size_t bucket_list(const storage_fh_t *h, nb_t **out)
{
    bool custom = h->schema == STORAGE_FH_CUSTOM;
    nb_t *b = im_malloc(((size_t)h->nneg + h->npos + 1) * sizeof *b);
    size_t n = 0;
    for (uint32_t k = h->nneg; k-- > 0;) {
        int32_t idx = h->noff + (int32_t)k;
        b[n++] = (nb_t){-storage_fh_upper(h->schema, idx, h), -storage_fh_lower(h->schema, idx, h),
                        h->neg[k]};
    }
    if (!custom) b[n++] = (nb_t){-h->zthresh, h->zthresh, h->zcount};
    for (uint32_t k = 0; k < h->npos; k++) {
        int32_t idx = h->poff + (int32_t)k;
        b[n++] = (nb_t){storage_fh_lower(h->schema, idx, h), storage_fh_upper(h->schema, idx, h),
                        h->pos[k]};
    }
    *out = b;
    return n;
}

double promql_fh_quantile(double q, const storage_fh_t *h)
{
    if (q < 0) return -INFINITY;
    if (q > 1) return INFINITY;
    if (h->count == 0 || isnan(q)) return NAN;
    bool custom = h->schema == STORAGE_FH_CUSTOM;
    nb_t *b;
    size_t n = bucket_list(h, &b);
    double rank = q * h->count, count = 0;
    nb_t bk = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        if (b[i].c == 0) continue;
        bk = b[i];
        count += b[i].c;
        if (count >= rank) break;
    }
    im_free(b);
    if (!custom && bk.lo < 0 && bk.hi > 0) {
        if (h->nneg == 0 && h->npos > 0)
            bk.lo = 0;
        else if (h->npos == 0 && h->nneg > 0)
            bk.hi = 0;
    } else if (custom) {
        if (bk.lo == -INFINITY) {
            if (bk.hi <= 0) return bk.hi;
            bk.lo = 0;
        } else if (bk.hi == INFINITY) {
            return bk.lo;
        }
    }
    if (count > h->count) count = h->count;
    if (count < rank) return bk.hi;
    rank -= count - bk.c;
    double fraction = bk.c != 0 ? rank / bk.c : 0;
    if (custom || (bk.lo <= 0 && bk.hi >= 0)) return bk.lo + (bk.hi - bk.lo) * fraction;
    double ll = log2(fabs(bk.lo)), lu = log2(fabs(bk.hi));
    if (bk.lo > 0) return exp2(ll + (lu - ll) * fraction);
    return -exp2(lu + (ll - lu) * (1 - fraction));
}

double promql_fh_fraction(double lower, double upper, const storage_fh_t *h)
{
    if (h->count == 0 || isnan(lower) || isnan(upper)) return NAN;
    if (lower >= upper) return 0;
    bool custom = h->schema == STORAGE_FH_CUSTOM;
    nb_t *b;
    size_t n = bucket_list(h, &b);
    double rank = 0, lrank = 0, urank = 0;
    bool lset = false, uset = false;
    for (size_t i = 0; i < n; i++) {
        nb_t bk = b[i];
        bool zero = !custom && bk.lo <= 0 && bk.hi >= 0;
        if (zero && bk.lo < 0 && bk.hi > 0) {
            if (h->nneg == 0 && h->npos > 0)
                bk.lo = 0;
            else if (h->npos == 0 && h->nneg > 0)
                bk.hi = 0;
        }
        if (custom && bk.lo == -INFINITY && bk.hi > 0) bk.lo = 0;
        if (!lset && bk.lo >= lower) {
            lrank = rank;
            lset = true;
        }
        if (!uset && bk.lo >= upper) {
            urank = rank;
            uset = true;
        }
        if (lset && uset) break;
        for (int w = 0; w < 2; w++) {
            double v = w ? upper : lower;
            bool *set = w ? &uset : &lset;
            double *rk = w ? &urank : &lrank;
            if (*set || !(bk.lo < v && bk.hi > v)) continue;
            if (custom || zero || isinf(bk.lo) || isinf(bk.hi)) {
                if (isinf(bk.hi))
                    *rk = rank;
                else
                    *rk = rank + bk.c * (v - bk.lo) / (bk.hi - bk.lo);
            } else {
                double ll = log2(fabs(bk.lo)), lu = log2(fabs(bk.hi)), lv = log2(fabs(v)), fr;
                if (v > 0)
                    fr = (lv - ll) / (lu - ll);
                else
                    fr = 1 - (lv - lu) / (ll - lu);
                *rk = rank + bk.c * fr;
            }
            *set = true;
        }
        if (lset && uset) break;
        rank += bk.c;
    }
    im_free(b);
    if (!lset || lrank > h->count) lrank = h->count;
    if (!uset || urank > h->count) urank = h->count;
    return (urank - lrank) / h->count;
}

double promql_fh_stdvar(const storage_fh_t *h)
{
    if (h->count == 0) return NAN;
    bool custom = h->schema == STORAGE_FH_CUSTOM;
    double mean = h->sum / h->count, var = 0, c = 0;
    nb_t *b;
    size_t n = bucket_list(h, &b);
    for (size_t i = 0; i < n; i++) {
        if (b[i].c == 0) continue;
        double val;
        if (custom)
            val = (b[i].hi + b[i].lo) / 2.0;
        else if (b[i].lo <= 0 && b[i].hi >= 0)
            val = 0;
        else {
            val = sqrt(b[i].hi * b[i].lo);
            if (b[i].hi < 0) val = -val;
        }
        double d = val - mean, inc = b[i].c * d * d;
        double t = var + inc;
        if (isinf(t))
            c = 0;
        else if (fabs(var) >= fabs(inc))
            c += (var - t) + inc;
        else
            c += (inc - t) + var;
        var = t;
    }
    im_free(b);
    return (var + c) / h->count;
}

static bool side_equal(const double *a, uint32_t an, int32_t ao, const double *b, uint32_t bn,
                       int32_t bo, bool (*almost)(double, double))
{
    if (an == 0 && bn == 0) return true;
    int32_t lo = an ? ao : bo, hi = an ? ao + (int32_t)an : bo + (int32_t)bn;
    if (an && bn) {
        lo = IM_MIN(ao, bo);
        hi = IM_MAX(ao + (int32_t)an, bo + (int32_t)bn);
    } else if (bn) {
        lo = bo;
        hi = bo + (int32_t)bn;
    }
    for (int32_t i = lo; i < hi; i++)
        if (!almost(at(a, an, ao, i), at(b, bn, bo, i))) return false;
    return true;
}

bool promql_fh_equal(const storage_fh_t *a, const storage_fh_t *b, bool (*almost)(double, double))
{
    if (a->schema != b->schema || a->zthresh != b->zthresh) return false;
    if (a->schema == STORAGE_FH_CUSTOM && !same_custom(a, b)) return false;
    if (!almost(a->count, b->count) || !almost(a->sum, b->sum) || !almost(a->zcount, b->zcount))
        return false;
    return side_equal(a->pos, a->npos, a->poff, b->pos, b->npos, b->poff, almost) &&
           side_equal(a->neg, a->nneg, a->noff, b->neg, b->nneg, b->noff, almost);
}

/* nhcb.c — classic histograms converted to native histograms with custom
 * buckets (NHCB), as the test scripts' `load_with_nhcb` loads them: the
 * `<name>_bucket{le=…}` series of one label set (and its `<name>_sum`) become one
 * `<name>` series whose sample at each step has the finite `le` bounds as custom
 * bounds, per-bucket (not cumulative) counts, the `+Inf` bucket as the count and
 * the `_sum` (0 when there is none) as the sum. A step without a `+Inf` bucket
 * gets no sample. The classic series stay as they are. */
#include "util/base.h"

#include <math.h>
#include <stdlib.h>

#include "promql/nhist.h"
#include "util/fmtfloat.h"
#include "util/mem.h"

static bool has_suffix(const im_istr_t *s, const char *suf, size_t *base)
{
    size_t n = strlen(suf);
    if (!s || s->len <= n || memcmp(s->s + s->len - n, suf, n) != 0) return false;
    *base = s->len - n;
    return true;
}

/* The labels of the histogram: le dropped, the name without its suffix. */
static const im_labels_t *hist_labels(const im_labels_t *ls, size_t base)
{
    im_labels_builder_t b;
    im_lb_init(&b);
    im_lb_load(&b, ls);
    const im_istr_t *nm = im_labels_get(ls, IM_METRIC_NAME);
    im_lb_set(&b, IM_METRIC_NAME, strlen(IM_METRIC_NAME), nm->s, base);
    im_lb_del(&b, "le");
    const im_labels_t *r = im_lb_build(&b);
    im_lb_free(&b);
    return r;
}

typedef struct bk {
    double le;
    size_t src; /* input series */
} bk_t;

static int cmp_bk(const void *a, const void *b)
{
    double x = ((const bk_t *)a)->le, y = ((const bk_t *)b)->le;
    return (x > y) - (x < y);
}

void promql_nhcb_add(promql_memstore_t *m, const im_labels_t *const *ls, promql_seqval_t *const *v,
                     const size_t *nv, size_t n, int64_t interval)
{
    const im_labels_t **key = im_calloc(n + 1, sizeof *key);
    bool *done = im_calloc(n + 1, sizeof *done);
    for (size_t i = 0; i < n; i++) {
        size_t base;
        const im_istr_t *le = im_labels_get(ls[i], "le");
        if (le && has_suffix(im_labels_get(ls[i], IM_METRIC_NAME), "_bucket", &base))
            key[i] = hist_labels(ls[i], base);
    }
    bk_t *bk = im_malloc((n + 1) * sizeof *bk);
    for (size_t i = 0; i < n; i++) {
        if (!key[i] || done[i]) continue;
        size_t nb = 0, maxn = 0;
        for (size_t j = i; j < n; j++) {
            if (!key[j] || done[j] || !im_labels_equal(key[i], key[j])) continue;
            const im_istr_t *le = im_labels_get(ls[j], "le");
            double x;
            done[j] = true;
            if (!im_parse_float(le->s, le->len, &x) || isnan(x)) continue;
            bk[nb++] = (bk_t){x, j};
            maxn = IM_MAX(maxn, nv[j]);
        }
        if (nb == 0) continue;
        qsort(bk, nb, sizeof *bk, cmp_bk);
        /* the _sum series of the same labels */
        size_t sum_src = SIZE_MAX, base;
        for (size_t j = 0; j < n && sum_src == SIZE_MAX; j++) {
            if (!has_suffix(im_labels_get(ls[j], IM_METRIC_NAME), "_sum", &base)) continue;
            const im_labels_t *k = hist_labels(ls[j], base);
            if (im_labels_equal(k, key[i])) sum_src = j;
            im_labels_unref(k);
        }
        bool inf = isinf(bk[nb - 1].le) && bk[nb - 1].le > 0;
        uint32_t ncustom = (uint32_t)(inf ? nb - 1 : nb);
        for (size_t k = 0; inf && k < maxn; k++) {
            bool all = true;
            for (size_t b = 0; b < nb && all; b++)
                all = k < nv[bk[b].src] && !v[bk[b].src][k].omitted;
            if (!all || storage_is_stale(v[bk[nb - 1].src][k].v)) continue;
            storage_fh_t *h = promql_fh_new(NULL, ncustom + 1, 0, ncustom);
            h->schema = STORAGE_FH_CUSTOM;
            double prev = 0;
            for (uint32_t b = 0; b <= ncustom; b++) {
                double c = v[bk[b].src][k].v;
                if (b < ncustom) h->custom[b] = bk[b].le;
                h->pos[b] = c - prev;
                prev = c;
            }
            h->count = prev;
            if (sum_src != SIZE_MAX && k < nv[sum_src] && !v[sum_src][k].omitted)
                h->sum = v[sum_src][k].v;
            promql_memstore_add(m, key[i], (int64_t)k * interval, storage_fh_box(h));
            im_free(h);
        }
    }
    for (size_t i = 0; i < n; i++)
        if (key[i]) im_labels_unref(key[i]);
    im_free(key);
    im_free(done);
    im_free(bk);
}

/* memstore.c — an in-memory queryable: label sets mapped to sorted sample arrays.
 *
 * Used by the unit tests, the test-script runner and `promql-eval`. Series live
 * in a growable array, found by label hash through an open-addressing table;
 * each has one growable array of samples. Samples may be added out of order: a
 * series is sorted (stable, later duplicates win) the first time a query reads
 * it after a change. The label-sorted order of series is likewise rebuilt lazily.
 * Implements storage_queryable_vt_t (select, label_names, label_values); the
 * queryable is borrowed from the store and must not be used across changes. */
#include "util/base.h"

#include <stdlib.h>

#include "promql/promql.h"
#include "storage/fhist.h"

typedef struct ms_sample {
    int64_t t;
    double v;
} ms_sample_t;

typedef struct ms_series {
    const im_labels_t *labels; /* owned reference */
    ms_sample_t *s;            /* owned */
    size_t n, cap;
    bool dirty; /* samples may be unsorted / have duplicate timestamps */
} ms_series_t;

struct promql_memstore {
    storage_queryable_t q; /* must be first */
    ms_series_t *series;
    size_t nseries, capseries;
    uint32_t *table; /* index+1 into series; 0 = empty */
    size_t tcap;     /* power of two */
    size_t *order;   /* series indices sorted by labels */
    bool order_dirty;
    storage_fh_t **hists; /* owned copies of native-histogram samples */
    size_t nhists, caphists;
};

typedef struct ms_set {
    storage_series_set_t set;
    int64_t mint, maxt;
} ms_set_t;

typedef struct ms_iter {
    storage_iter_t it;
    const ms_sample_t *s;
    size_t i, end; /* current index (valid when started), one past the last */
    bool started;
} ms_iter_t;

static const storage_queryable_vt_t memstore_vt;

static void table_grow(promql_memstore_t *m)
{
    size_t ncap = m->tcap ? m->tcap * 2 : 64;
    uint32_t *nt = im_calloc(ncap, sizeof *nt);
    for (size_t i = 0; i < m->nseries; i++) {
        size_t h = m->series[i].labels->hash & (ncap - 1);
        while (nt[h]) h = (h + 1) & (ncap - 1);
        nt[h] = (uint32_t)(i + 1);
    }
    im_free(m->table);
    m->table = nt;
    m->tcap = ncap;
}

promql_memstore_t *promql_memstore_new(void)
{
    promql_memstore_t *m = im_calloc(1, sizeof *m);
    m->q.vt = &memstore_vt;
    return m;
}

void promql_memstore_clear(promql_memstore_t *m)
{
    for (size_t i = 0; i < m->nseries; i++) {
        im_labels_unref(m->series[i].labels);
        im_free(m->series[i].s);
    }
    m->nseries = 0;
    for (size_t i = 0; i < m->nhists; i++) im_free(m->hists[i]);
    m->nhists = 0;
    if (m->table) memset(m->table, 0, m->tcap * sizeof *m->table);
    m->order_dirty = true;
}

void promql_memstore_free(promql_memstore_t *m)
{
    if (!m) return;
    promql_memstore_clear(m);
    im_free(m->series);
    im_free(m->table);
    im_free(m->order);
    im_free(m->hists);
    im_free(m);
}

size_t promql_memstore_series(const promql_memstore_t *m)
{
    return m->nseries;
}

void promql_memstore_add(promql_memstore_t *m, const im_labels_t *labels, int64_t t_ms, double v)
{
    if ((m->nseries + 1) * 2 > m->tcap) table_grow(m);
    size_t h = labels->hash & (m->tcap - 1);
    ms_series_t *s = NULL;
    while (m->table[h]) {
        ms_series_t *c = &m->series[m->table[h] - 1];
        if (im_labels_equal(c->labels, labels)) {
            s = c;
            break;
        }
        h = (h + 1) & (m->tcap - 1);
    }
    if (!s) {
        if (m->nseries == m->capseries) {
            m->capseries = m->capseries ? m->capseries * 2 : 64;
            m->series = im_realloc(m->series, m->capseries * sizeof *m->series);
        }
        s = &m->series[m->nseries++];
        memset(s, 0, sizeof *s);
        s->labels = im_labels_ref(labels);
        m->table[h] = (uint32_t)m->nseries;
        m->order_dirty = true;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->s = im_realloc(s->s, s->cap * sizeof *s->s);
    }
    const storage_fh_t *fh = storage_fh_unbox(v);
    if (fh) {
        if (m->nhists == m->caphists) {
            m->caphists = m->caphists ? m->caphists * 2 : 16;
            m->hists = im_realloc(m->hists, m->caphists * sizeof *m->hists);
        }
        m->hists[m->nhists] = storage_fh_clone(fh);
        v = storage_fh_box(m->hists[m->nhists++]);
    }
    if (s->n && s->s[s->n - 1].t >= t_ms) s->dirty = true;
    s->s[s->n++] = (ms_sample_t){t_ms, v};
}

/* ---- Lazy normalisation ---- */

static void merge_sort(ms_sample_t *a, ms_sample_t *tmp, size_t n)
{
    if (n < 2) return;
    size_t h = n / 2;
    merge_sort(a, tmp, h);
    merge_sort(a + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = a[j].t < a[i].t ? a[j++] : a[i++];
    while (i < h) tmp[k++] = a[i++];
    while (j < n) tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
}

static void normalise(ms_series_t *s)
{
    if (!s->dirty) return;
    ms_sample_t *tmp = im_malloc(s->n * sizeof *tmp);
    merge_sort(s->s, tmp, s->n); /* stable: later adds stay later */
    im_free(tmp);
    size_t w = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (w && s->s[w - 1].t == s->s[i].t)
            s->s[w - 1] = s->s[i]; /* the later one wins */
        else
            s->s[w++] = s->s[i];
    }
    s->n = w;
    s->dirty = false;
}

void promql_memstore_drop_before(promql_memstore_t *m, int64_t min_t_ms)
{
    for (size_t i = 0; i < m->nseries; i++) {
        ms_series_t *s = &m->series[i];
        normalise(s);
        size_t k = 0;
        while (k < s->n && s->s[k].t < min_t_ms) k++;
        if (k == 0) continue;
        memmove(s->s, s->s + k, (s->n - k) * sizeof *s->s);
        s->n -= k;
    }
}

static const promql_memstore_t *sort_ctx;
static int cmp_order(const void *a, const void *b)
{
    const ms_series_t *x = &sort_ctx->series[*(const size_t *)a];
    const ms_series_t *y = &sort_ctx->series[*(const size_t *)b];
    return im_labels_compare(x->labels, y->labels);
}

static void build_order(promql_memstore_t *m)
{
    if (!m->order_dirty && m->order) return;
    im_free(m->order);
    m->order = im_malloc((m->nseries + 1) * sizeof *m->order);
    for (size_t i = 0; i < m->nseries; i++) m->order[i] = i;
    sort_ctx = m; /* the store is not shared between threads while it changes */
    qsort(m->order, m->nseries, sizeof *m->order, cmp_order);
    sort_ctx = NULL;
    m->order_dirty = false;
}

/* First index with t >= mint. */
static size_t lower_bound(const ms_sample_t *s, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s[mid].t < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- Iterator ---- */

static bool it_next(storage_iter_t *it)
{
    ms_iter_t *m = (ms_iter_t *)it;
    if (!m->started)
        m->started = true;
    else if (m->i < m->end)
        m->i++;
    return m->i < m->end;
}

static bool it_seek(storage_iter_t *it, int64_t t_ms)
{
    ms_iter_t *m = (ms_iter_t *)it;
    m->started = true;
    if (m->i < m->end && m->s[m->i].t >= t_ms) return true;
    size_t j = m->i + lower_bound(m->s + m->i, m->end - m->i, t_ms);
    m->i = j;
    return m->i < m->end;
}

static void it_at(storage_iter_t *it, int64_t *t_ms, double *v)
{
    ms_iter_t *m = (ms_iter_t *)it;
    *t_ms = m->s[m->i].t;
    *v = m->s[m->i].v;
}

static void it_free(storage_iter_t *it)
{
    im_free(it);
}

/* No bulk read: the engine's next/at fallback stays exercised by every test that
 * runs over this store. */
static const storage_iter_vt_t ms_iter_vt = {it_next, it_seek, it_at, it_free, NULL};

/* ---- Series set ---- */

static storage_iter_t *set_iter(storage_series_set_t *set, size_t i)
{
    ms_set_t *ss = (ms_set_t *)set;
    const ms_series_t *s = set->series[i].priv;
    ms_iter_t *it = im_malloc(sizeof *it);
    it->it.vt = &ms_iter_vt;
    it->s = s->s;
    it->i = lower_bound(s->s, s->n, ss->mint);
    it->end = ss->maxt == INT64_MAX ? s->n : lower_bound(s->s, s->n, ss->maxt + 1);
    if (it->end < it->i) it->end = it->i;
    it->started = false;
    return &it->it;
}

static void set_free(storage_series_set_t *set)
{
    for (size_t i = 0; i < set->n; i++) im_labels_unref(set->series[i].labels);
    im_free(set->series);
    im_free(set);
}

static const storage_series_set_vt_t ms_set_vt = {set_iter, set_free, NULL}; /* iterators only */

static bool has_sample_in(const ms_series_t *s, int64_t mint, int64_t maxt)
{
    size_t i = lower_bound(s->s, s->n, mint);
    return i < s->n && s->s[i].t <= maxt;
}

static im_rc ms_select(storage_queryable_t *q, int64_t mint, int64_t maxt, im_matcher_t *const *ms,
                       size_t nms, const storage_select_hints_t *hints, storage_series_set_t **out,
                       im_err_t *err)
{
    promql_memstore_t *m = (promql_memstore_t *)q;
    if (nms == 0) return im_err_set(err, IM_EINVAL, "select needs at least one matcher");
    build_order(m);
    ms_set_t *ss = im_calloc(1, sizeof *ss);
    ss->set.vt = &ms_set_vt;
    ss->set.concurrent_iter = true; /* iterators only read the (normalised) arrays */
    ss->set.hist_boxes = true;      /* boxes of the store's own copies */
    ss->mint = mint;
    ss->maxt = maxt;
    size_t cap = 0;
    for (size_t k = 0; k < m->nseries; k++) {
        ms_series_t *s = &m->series[m->order[k]];
        if (!im_labels_match_all(s->labels, ms, nms)) continue;
        normalise(s);
        if (!has_sample_in(s, mint, maxt)) continue;
        if (hints && hints->max_series && ss->set.n >= hints->max_series) {
            set_free(&ss->set);
            return im_err_set(err, IM_ELIMIT, "too many series selected (limit %zu)",
                              hints->max_series);
        }
        if (ss->set.n == cap) {
            cap = cap ? cap * 2 : 16;
            ss->set.series = im_realloc(ss->set.series, cap * sizeof *ss->set.series);
        }
        ss->set.series[ss->set.n++] = (storage_series_t){im_labels_ref(s->labels), s};
    }
    *out = &ss->set;
    return IM_OK;
}

/* ---- Label names and values ---- */

static int cmp_istr_ptr(const void *a, const void *b)
{
    const im_istr_t *x = *(const im_istr_t *const *)a, *y = *(const im_istr_t *const *)b;
    size_t n = IM_MIN(x->len, y->len);
    int c = memcmp(x->s, y->s, n);
    if (c) return c;
    return x->len < y->len ? -1 : (x->len > y->len);
}

static void strlist_add(storage_strlist_t *l, size_t *cap, const im_istr_t *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i] == s) return;
    if (l->n == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        l->v = im_realloc(l->v, *cap * sizeof *l->v);
    }
    l->v[l->n++] = im_istr_ref(s);
}

static im_rc ms_labels(promql_memstore_t *m, const char *name, int64_t mint, int64_t maxt,
                       im_matcher_t *const *ms, size_t nms, storage_strlist_t *out)
{
    size_t cap = 0;
    out->v = NULL;
    out->n = 0;
    for (size_t k = 0; k < m->nseries; k++) {
        ms_series_t *s = &m->series[k];
        if (nms && !im_labels_match_all(s->labels, ms, nms)) continue;
        normalise(s);
        if (!has_sample_in(s, mint, maxt)) continue;
        if (name) {
            const im_istr_t *v = im_labels_get(s->labels, name);
            if (v) strlist_add(out, &cap, v);
        } else {
            for (uint32_t i = 0; i < s->labels->n; i++)
                strlist_add(out, &cap, s->labels->l[i].name);
        }
    }
    if (out->n) qsort(out->v, out->n, sizeof *out->v, cmp_istr_ptr);
    return IM_OK;
}

static im_rc ms_label_names(storage_queryable_t *q, int64_t mint, int64_t maxt,
                            im_matcher_t *const *ms, size_t nms, storage_strlist_t *out,
                            im_err_t *err)
{
    IM_UNUSED(err);
    return ms_labels((promql_memstore_t *)q, NULL, mint, maxt, ms, nms, out);
}

static im_rc ms_label_values(storage_queryable_t *q, const char *name, int64_t mint, int64_t maxt,
                             im_matcher_t *const *ms, size_t nms, storage_strlist_t *out,
                             im_err_t *err)
{
    IM_UNUSED(err);
    return ms_labels((promql_memstore_t *)q, name, mint, maxt, ms, nms, out);
}

static void ms_close(storage_queryable_t *q)
{
    IM_UNUSED(q);
}

static const storage_queryable_vt_t memstore_vt = {ms_select, ms_label_names, ms_label_values,
                                                   ms_close};

storage_queryable_t *promql_memstore_queryable(promql_memstore_t *m)
{
    return &m->q;
}

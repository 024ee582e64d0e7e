/* querier.c — the queryable over head and blocks: select finds matching series in
 * every source overlapping the range (postings per source), merges them by label
 * set into one sorted list, and pins what the iterators will read: the blocks are
 * referenced until the set is freed, head chunks are copied (compressed) under
 * the head's read lock, so appends and truncation never race with a reader.
 *
 * An iterator decodes its series' samples within [mint, maxt] from all parts at
 * creation, merging by time (a sample present in several parts — e.g. a block and
 * the head right after persisting — is returned once). A series set and its
 * iterators are used by one thread at a time (the set pins every decoded frame
 * it has read, taken from the store's frame cache: frame_cache.c) unless it has
 * no block part: then iterators only decode head chunk copies and may be created
 * from several threads (concurrent_iter); different sets are independent. */
#include "util/base.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "tsdb/tsdb_int.h"

typedef struct qpart {
    tsdb__block_t *b; /* borrowed (pinned by the set); NULL = head part */
    uint32_t idx;
    tsdb__chunk_copy_t *chunks; /* owned (head part) */
    size_t nchunks;
    uint32_t order; /* source order: blocks by mint, head last */
} qpart_t;

typedef struct qseries {
    qpart_t *parts; /* owned */
    size_t nparts;
} qseries_t;

typedef struct qset {
    tsdb_series_set_t pub;
    int64_t mint, maxt;
    qseries_t *qs;          /* owned, parallel to pub.series */
    tsdb__block_t **blocks; /* referenced */
    size_t nblocks;
    tsdb__fcache_t *caches; /* owned, one per block: the frames read (pinned) */
} qset_t;

typedef struct qiter {
    tsdb_iter_t pub;
    int64_t *t;
    double *v;
    size_t n;
    ssize_t i;
} qiter_t;

typedef struct qable {
    tsdb_queryable_t pub;
    tsdb_t *db;
} qable_t;

/* ---- Iterators ---- */

static bool it_next(tsdb_iter_t *it)
{
    qiter_t *q = (qiter_t *)it;
    if (q->i + 1 >= (ssize_t)q->n) {
        q->i = (ssize_t)q->n;
        return false;
    }
    q->i++;
    return true;
}

static bool it_seek(tsdb_iter_t *it, int64_t t)
{
    qiter_t *q = (qiter_t *)it;
    if (q->i >= (ssize_t)q->n) return false;
    size_t lo = q->i < 0 ? 0 : (size_t)q->i;
    if (lo < q->n && q->t[lo] >= t) {
        q->i = (ssize_t)lo;
        return true;
    }
    size_t hi = q->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (q->t[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    q->i = (ssize_t)lo;
    return lo < q->n;
}

static void it_at(tsdb_iter_t *it, int64_t *t, double *v)
{
    qiter_t *q = (qiter_t *)it;
    *t = q->t[q->i];
    *v = q->v[q->i];
}

static void it_free(tsdb_iter_t *it)
{
    qiter_t *q = (qiter_t *)it;
    im_free(q->t);
    im_free(q->v);
    im_free(q);
}

static size_t it_read(tsdb_iter_t *it, int64_t *t, double *v, size_t max)
{
    qiter_t *q = (qiter_t *)it;
    assert(max > 0); /* storage.h: the caller asks for at least one */
    return tsdb__iter_read_arrays(q->t, q->v, q->n, &q->i, t, v, max);
}

static const tsdb_iter_vt_t iter_vt = {it_next, it_seek, it_at, it_free, it_read};

typedef struct tsv {
    int64_t t;
    uint64_t pos;
    double v;
} tsv_t;

static int cmp_tsv(const void *a, const void *b)
{
    const tsv_t *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Series i's samples within [mint, maxt] from all parts, merged by time, appended
 * to (*pt, *pv) (*n of capacity *cap, grown as needed). */
static void decode_series(qset_t *s, size_t i, int64_t **pt, double **pv, size_t *pn, size_t *pcap)
{
    size_t n0 = *pn;
    const qseries_t *qs = &s->qs[i];
    for (size_t p = 0; p < qs->nparts; p++) {
        const qpart_t *part = &qs->parts[p];
        if (part->b) {
            (void)tsdb__block_read_append(part->b, part->idx, &s->caches[part->order], s->mint,
                                          s->maxt, pt, pv, pn, pcap);
        } else {
            for (size_t c = 0; c < part->nchunks; c++) /* bulk decode: iter_bulk.c */
                tsdb__xor_decode_append(part->chunks[c].b, part->chunks[c].nbits, part->chunks[c].n,
                                        s->mint, s->maxt, pt, pv, pn, pcap);
        }
    }
    int64_t *T = *pt + n0;
    double *V = *pv + n0;
    size_t cnt = *pn - n0;
    bool sorted = true;
    for (size_t k = 1; k < cnt && sorted; k++) sorted = T[k] > T[k - 1];
    if (!sorted) {
        tsv_t *a = im_malloc(cnt * sizeof *a);
        for (size_t k = 0; k < cnt; k++) a[k] = (tsv_t){T[k], k, V[k]};
        qsort(a, cnt, sizeof *a, cmp_tsv);
        size_t w = 0;
        for (size_t k = 0; k < cnt; k++) {
            if (w > 0 && T[w - 1] == a[k].t) continue;
            T[w] = a[k].t;
            V[w] = a[k].v;
            w++;
        }
        *pn = n0 + w;
        im_free(a);
    }
}

static tsdb_iter_t *set_iter(tsdb_series_set_t *set, size_t i)
{
    qset_t *s = (qset_t *)set;
    qiter_t *q = im_calloc(1, sizeof *q);
    q->pub.vt = &iter_vt;
    q->i = -1;
    size_t cap = 0;
    decode_series(s, i, &q->t, &q->v, &q->n, &cap);
    return &q->pub;
}

static size_t set_read_series(tsdb_series_set_t *set, size_t i, int64_t **t, double **v,
                              size_t *cap)
{
    size_t n = 0;
    decode_series((qset_t *)set, i, t, v, &n, cap);
    return n;
}

static void set_free(tsdb_series_set_t *set)
{
    qset_t *s = (qset_t *)set;
    if (!s) return;
    for (size_t i = 0; i < s->pub.n; i++) {
        im_labels_unref(s->pub.series[i].labels);
        for (size_t p = 0; p < s->qs[i].nparts; p++)
            if (!s->qs[i].parts[p].b)
                tsdb__chunk_copies_free(s->qs[i].parts[p].chunks, s->qs[i].parts[p].nchunks);
        im_free(s->qs[i].parts);
    }
    im_free(s->pub.series);
    im_free(s->qs);
    for (size_t i = 0; i < s->nblocks; i++) {
        tsdb__block_unref(s->blocks[i]);
        tsdb__fcache_free(&s->caches[i]);
    }
    im_free(s->blocks);
    im_free(s->caches);
    im_free(s);
}

static const tsdb_series_set_vt_t set_vt = {set_iter, set_free, set_read_series};

/* ---- Gathering candidates from all sources ---- */

typedef struct cand {
    const im_labels_t *labels; /* referenced */
    qpart_t part;
} cand_t;

typedef struct gather {
    cand_t *c;
    size_t n, cap;
    tsdb__block_t **blocks;
    size_t nblocks;
} gather_t;

static void cand_push(gather_t *g, const im_labels_t *ls, qpart_t part)
{
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 256;
        g->c = im_realloc(g->c, g->cap * sizeof *g->c);
    }
    g->c[g->n++] = (cand_t){im_labels_ref(ls), part};
}

/* Collects matching series with data in [mint, maxt]; with_data copies head chunks. */
static void gather(tsdb_t *db, int64_t mint, int64_t maxt, im_matcher_t *const *ms, size_t nms,
                   bool with_data, gather_t *g)
{
    memset(g, 0, sizeof *g);
    /* The head's read lock is held while the block list is taken: persisting
     * adds a block before it truncates the head (under the write lock), so a
     * window is always seen in the head, in a block, or both — never neither. */
    tsdb__head_t *h = db->head;
    pthread_rwlock_rdlock(&h->lock);
    pthread_mutex_lock(&db->blocks_mu);
    g->blocks = im_malloc((db->nblocks + 1) * sizeof *g->blocks);
    for (size_t i = 0; i < db->nblocks; i++) {
        tsdb__block_t *b = db->blocks[i];
        if (b->maxt < mint || b->mint > maxt) continue;
        tsdb__block_ref(b);
        g->blocks[g->nblocks++] = b;
    }
    pthread_mutex_unlock(&db->blocks_mu);
    tsdb__ids_t ids = {0};
    tsdb__index_select(&h->ix, ms, nms, &ids);
    for (size_t k = 0; k < ids.n; k++) {
        const tsdb__series_t *s = h->by_id[ids.v[k]];
        if (!s || s->nchunks == 0) continue;
        if (s->chunks[s->nchunks - 1].maxt < mint || s->chunks[0].mint > maxt) continue;
        bool any = false;
        for (uint32_t c = 0; c < s->nchunks && !any; c++)
            any = s->chunks[c].maxt >= mint && s->chunks[c].mint <= maxt;
        if (!any) continue;
        qpart_t p = {NULL, 0, NULL, 0, (uint32_t)g->nblocks};
        if (with_data) tsdb__head_copy_chunks(s, mint, maxt, &p.chunks, &p.nchunks);
        cand_push(g, s->labels, p);
    }
    pthread_rwlock_unlock(&h->lock);
    for (size_t bi = 0; bi < g->nblocks; bi++) {
        tsdb__block_t *b = g->blocks[bi];
        tsdb__index_select(&b->ix, ms, nms, &ids);
        for (size_t k = 0; k < ids.n; k++) {
            const tsdb__bseries_t *s = &b->series[ids.v[k]];
            if (s->maxt < mint || s->mint > maxt) continue;
            cand_push(g, s->labels, (qpart_t){b, ids.v[k], NULL, 0, (uint32_t)bi});
        }
    }
    tsdb__ids_free(&ids);
}

static int cmp_cand(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    int c = im_labels_compare(x->labels, y->labels);
    if (c) return c;
    return x->part.order < y->part.order ? -1 : x->part.order > y->part.order;
}

static void gather_free(gather_t *g, bool parts_too)
{
    for (size_t i = 0; i < g->n; i++) {
        im_labels_unref(g->c[i].labels);
        if (parts_too && !g->c[i].part.b)
            tsdb__chunk_copies_free(g->c[i].part.chunks, g->c[i].part.nchunks);
    }
    im_free(g->c);
    for (size_t i = 0; i < g->nblocks; i++) tsdb__block_unref(g->blocks[i]);
    im_free(g->blocks);
}

/* ---- Decoding a select's frames up front ---- */

typedef struct pf_job {
    const tsdb__block_t *b;
    uint32_t idx;
    tsdb__frame_t **slot; /* the pin to fill */
} pf_job_t;

typedef struct pf {
    pf_job_t *j;
    size_t n;
    _Atomic size_t next;
} pf_t;

static void *pf_run(void *arg)
{
    pf_t *p = arg;
    for (size_t k; (k = atomic_fetch_add(&p->next, 1)) < p->n;)
        *p->j[k].slot = tsdb__frame_get(p->j[k].b->cache, p->j[k].b, p->j[k].idx);
    return NULL;
}

/* Pins, for each block, the frames the set's series lie in: cached ones at
 * once, the others decompressed on up to 4 threads (one per CPU, the caller
 * one of them). A cold histogram query over a compacted block needs dozens of
 * 1 MiB zstd frames; decoding them one by one in the iterators was most of its
 * time. A frame that fails to decode stays unpinned (the read reports it). */
static void prefetch_frames(qset_t *s)
{
    pf_t p = {0};
    size_t cap = 0;
    uint8_t **need = im_calloc(s->nblocks, sizeof *need);
    for (size_t i = 0; i < s->nblocks; i++) {
        const tsdb__block_t *b = s->blocks[i];
        need[i] = im_calloc(b->nframes ? b->nframes : 1, 1);
        tsdb__fcache_t *c = &s->caches[i];
        c->b = b;
        c->npins = b->nframes;
        c->pins = im_calloc(b->nframes ? b->nframes : 1, sizeof *c->pins);
    }
    for (size_t k = 0; k < s->pub.n; k++)
        for (size_t q = 0; q < s->qs[k].nparts; q++) {
            const qpart_t *part = &s->qs[k].parts[q];
            if (part->b) need[part->order][part->b->series[part->idx].frame] = 1;
        }
    for (size_t i = 0; i < s->nblocks; i++) {
        const tsdb__block_t *b = s->blocks[i];
        for (uint32_t f = 0; f < b->nframes; f++) {
            if (!need[i][f]) continue;
            tsdb__frame_t *fr = tsdb__frame_cached(b->cache, b, f);
            if (fr) {
                s->caches[i].pins[f] = fr;
                continue;
            }
            if (p.n == cap) {
                cap = cap ? cap * 2 : 16;
                p.j = im_realloc(p.j, cap * sizeof *p.j);
            }
            p.j[p.n++] = (pf_job_t){b, f, &s->caches[i].pins[f]};
        }
        im_free(need[i]);
    }
    im_free(need);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nth = cpus < 1 ? 1 : cpus > 4 ? 4 : (size_t)cpus;
    if (nth > p.n) nth = p.n;
    pthread_t th[3];
    size_t started = 0;
    for (size_t t = 1; t < nth; t++)
        if (pthread_create(&th[started], NULL, pf_run, &p) == 0) started++;
    pf_run(&p);
    for (size_t t = 0; t < started; t++) pthread_join(th[t], NULL);
    im_free(p.j);
}

static im_rc q_select(tsdb_queryable_t *qa, int64_t mint, int64_t maxt, im_matcher_t *const *ms,
                      size_t nms, const tsdb_select_hints_t *hints, tsdb_series_set_t **out,
                      im_err_t *err)
{
    qable_t *q = (qable_t *)qa;
    *out = NULL;
    if (nms == 0) return im_err_set(err, IM_EINVAL, "a select needs at least one matcher");
    gather_t g;
    gather(q->db, mint, maxt, ms, nms, true, &g);
    if (g.n > 1) qsort(g.c, g.n, sizeof *g.c, cmp_cand);
    size_t nuniq = 0;
    for (size_t i = 0; i < g.n; i++)
        if (i == 0 || !im_labels_equal(g.c[i - 1].labels, g.c[i].labels)) nuniq++;
    if (hints && hints->max_series && nuniq > hints->max_series) {
        gather_free(&g, true);
        return im_err_set(err, IM_ELIMIT,
                          "the query selects %zu series, more than the limit of %zu "
                          "(query.max-series)",
                          nuniq, hints->max_series);
    }
    qset_t *s = im_calloc(1, sizeof *s);
    s->pub.vt = &set_vt;
    s->mint = mint;
    s->maxt = maxt;
    s->pub.series = im_calloc(nuniq ? nuniq : 1, sizeof *s->pub.series);
    s->qs = im_calloc(nuniq ? nuniq : 1, sizeof *s->qs);
    size_t k = 0;
    for (size_t i = 0; i < g.n;) {
        size_t j = i + 1;
        while (j < g.n && im_labels_equal(g.c[i].labels, g.c[j].labels)) j++;
        s->pub.series[k].labels = im_labels_ref(g.c[i].labels);
        s->pub.series[k].priv = &s->qs[k];
        s->qs[k].parts = im_malloc((j - i) * sizeof *s->qs[k].parts);
        s->qs[k].nparts = j - i;
        for (size_t m = i; m < j; m++) s->qs[k].parts[m - i] = g.c[m].part;
        k++;
        i = j;
    }
    s->pub.n = nuniq;
    s->blocks = g.blocks;
    s->nblocks = g.nblocks;
    s->caches = im_calloc(g.nblocks + 1, sizeof *s->caches);
    for (size_t i = 0; i < g.nblocks + 1; i++) s->caches[i].pin_all = true;
    s->pub.concurrent_iter = s->nblocks == 0; /* head chunk copies only: no frame cache */
    g.blocks = NULL;
    g.nblocks = 0;
    gather_free(&g, false);
    if (s->nblocks) prefetch_frames(s);
    *out = &s->pub;
    return IM_OK;
}

static im_rc q_label_names(tsdb_queryable_t *qa, int64_t mint, int64_t maxt,
                           im_matcher_t *const *ms, size_t nms, tsdb_strlist_t *out, im_err_t *err)
{
    qable_t *q = (qable_t *)qa;
    memset(out, 0, sizeof *out);
    gather_t g;
    gather(q->db, mint, maxt, ms, nms, false, &g);
    size_t cap = 0;
    for (size_t i = 0; i < g.n; i++)
        for (uint32_t j = 0; j < g.c[i].labels->n; j++)
            tsdb__strlist_push(out, &cap, im_istr_ref(g.c[i].labels->l[j].name));
    gather_free(&g, false);
    tsdb__strlist_finish(out);
    return IM_OK;
}

static im_rc q_label_values(tsdb_queryable_t *qa, const char *name, int64_t mint, int64_t maxt,
                            im_matcher_t *const *ms, size_t nms, tsdb_strlist_t *out, im_err_t *err)
{
    qable_t *q = (qable_t *)qa;
    memset(out, 0, sizeof *out);
    gather_t g;
    gather(q->db, mint, maxt, ms, nms, false, &g);
    const im_istr_t *n = im_intern_cstr(name);
    size_t cap = 0;
    for (size_t i = 0; i < g.n; i++) {
        const im_istr_t *v = im_labels_get_istr(g.c[i].labels, n);
        if (v && (out->n == 0 || out->v[out->n - 1] != v))
            tsdb__strlist_push(out, &cap, im_istr_ref(v));
    }
    im_istr_unref(n);
    gather_free(&g, false);
    tsdb__strlist_finish(out);
    return IM_OK;
}

static void q_close(tsdb_queryable_t *qa)
{
    im_free(qa);
}

static const tsdb_queryable_vt_t qable_vt = {q_select, q_label_names, q_label_values, q_close};

tsdb_queryable_t *tsdb_queryable(tsdb_t *db)
{
    qable_t *q = im_calloc(1, sizeof *q);
    q->pub.vt = &qable_vt;
    q->db = db;
    return &q->pub;
}

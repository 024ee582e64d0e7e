/* head.c — the in-memory part of the store: series (label set -> id, id ->
 * series), their Gorilla chunks and the postings index.
 *
 * Invariants:
 *  1. A series' samples are strictly increasing in time; the appender validates,
 *     tsdb__head_append only stores.
 *  2. A chunk holds at most TSDB__CHUNK_MAX_SAMPLES samples and never straddles a
 *     multiple of chunk_range_ms, so a block range is always a set of whole chunks.
 *  3. Ids are handed out in increasing order and never reused while the process
 *     lives (a WAL replay restores them); the index lists ids ascending.
 *  4. Everything below is guarded by h->lock except the atomics in the series
 *     (maxt, last_vbits, pending), read lock-free by appenders. */
#include "util/base.h"

#include "tsdb/tsdb_int.h"

tsdb__head_t *tsdb__head_new(int64_t chunk_range_ms)
{
    tsdb__head_t *h = im_calloc(1, sizeof *h);
    pthread_rwlock_init(&h->lock, NULL);
    tsdb__index_init(&h->ix);
    h->next_id = 1;
    h->mint = INT64_MAX;
    h->maxt = INT64_MIN;
    atomic_store(&h->min_valid_t, INT64_MIN);
    h->chunk_range_ms = chunk_range_ms;
    return h;
}

static void series_free(tsdb__head_t *h, tsdb__series_t *s)
{
    for (uint32_t i = 0; i < s->nchunks; i++) {
        h->chunk_bytes -= s->chunks[i].data.cap;
        tsdb__bw_free(&s->chunks[i].data);
    }
    h->nchunks -= s->nchunks;
    if (s->chunks) im_free_tag(IM_MEM_TSDB, s->chunks, s->capchunks * sizeof *s->chunks);
    im_labels_unref(s->labels);
    im_free_tag(IM_MEM_TSDB, s, sizeof *s);
}

void tsdb__head_free(tsdb__head_t *h)
{
    if (!h) return;
    for (uint32_t i = 0; i < h->next_id && i < h->capids; i++)
        if (h->by_id[i]) series_free(h, h->by_id[i]);
    im_free(h->by_id);
    im_free(h->map);
    im_free(h->alias);
    tsdb__index_free(&h->ix);
    pthread_rwlock_destroy(&h->lock);
    im_free(h);
}

static tsdb__series_t **map_slot(tsdb__series_t **map, size_t cap, const im_labels_t *ls)
{
    size_t i = ls->hash & (cap - 1);
    while (map[i] && !im_labels_equal(map[i]->labels, ls)) i = (i + 1) & (cap - 1);
    return &map[i];
}

static void map_rebuild(tsdb__head_t *h, size_t cap)
{
    tsdb__series_t **nm = im_calloc(cap, sizeof *nm);
    for (uint32_t i = 0; i < h->next_id && i < h->capids; i++) {
        tsdb__series_t *s = h->by_id[i];
        if (s) *map_slot(nm, cap, s->labels) = s;
    }
    im_free(h->map);
    h->map = nm;
    h->capmap = cap;
}

static tsdb__series_t *lookup(tsdb__head_t *h, const im_labels_t *ls)
{
    if (!h->capmap) return NULL;
    return *map_slot(h->map, h->capmap, ls);
}

/* Caller holds the write lock. */
static tsdb__series_t *create(tsdb__head_t *h, uint32_t id, const im_labels_t *ls)
{
    if ((h->nmap + 1) * 4 > h->capmap * 3) map_rebuild(h, h->capmap ? h->capmap * 2 : 1024);
    if (id >= h->capids) {
        uint32_t nc = h->capids ? h->capids : 1024;
        while (nc <= id) nc *= 2;
        h->by_id = im_realloc(h->by_id, nc * sizeof *h->by_id);
        memset(h->by_id + h->capids, 0, (nc - h->capids) * sizeof *h->by_id);
        h->capids = nc;
    }
    tsdb__series_t *s = im_calloc_tag(IM_MEM_TSDB, 1, sizeof *s);
    s->id = id;
    s->labels = im_labels_ref(ls);
    atomic_store(&s->maxt, INT64_MIN);
    tsdb__xor_enc_init(&s->enc);
    h->by_id[id] = s;
    *map_slot(h->map, h->capmap, ls) = s;
    h->nmap++;
    h->nseries++;
    if (id >= h->next_id) h->next_id = id + 1;
    /* Ids arrive ascending, except in a WAL replay where two appenders'
     * series may be logged in the other order: the index inserts in place. */
    tsdb__index_add(&h->ix, id, ls);
    return s;
}

tsdb__series_t *tsdb__head_get_or_create(tsdb__head_t *h, const im_labels_t *ls, bool *created)
{
    *created = false;
    pthread_rwlock_rdlock(&h->lock);
    tsdb__series_t *s = lookup(h, ls);
    if (s) atomic_fetch_add(&s->pending, 1);
    pthread_rwlock_unlock(&h->lock);
    if (s) return s;
    pthread_rwlock_wrlock(&h->lock);
    s = lookup(h, ls);
    if (!s) {
        s = create(h, h->next_id, ls);
        *created = true;
    }
    atomic_fetch_add(&s->pending, 1);
    pthread_rwlock_unlock(&h->lock);
    return s;
}

typedef struct tsdb__alias {
    uint32_t id; /* 0 = empty */
    tsdb__series_t *s;
} tsdb__alias_t;

static void alias_put(tsdb__head_t *h, uint32_t id, tsdb__series_t *s)
{
    if ((h->nalias + 1) * 2 > h->capalias) {
        size_t nc = h->capalias ? h->capalias * 2 : 64;
        tsdb__alias_t *na = im_calloc(nc, sizeof *na);
        for (size_t i = 0; i < h->capalias; i++) {
            if (!h->alias[i].id) continue;
            size_t j = (h->alias[i].id * 0x9e3779b1u) & (nc - 1);
            while (na[j].id) j = (j + 1) & (nc - 1);
            na[j] = h->alias[i];
        }
        im_free(h->alias);
        h->alias = na;
        h->capalias = nc;
    }
    size_t j = (id * 0x9e3779b1u) & (h->capalias - 1);
    while (h->alias[j].id && h->alias[j].id != id) j = (j + 1) & (h->capalias - 1);
    if (!h->alias[j].id) h->nalias++;
    h->alias[j] = (tsdb__alias_t){id, s};
}

tsdb__series_t *tsdb__head_replay_series(tsdb__head_t *h, uint32_t id)
{
    if (h->capalias) {
        size_t j = (id * 0x9e3779b1u) & (h->capalias - 1);
        while (h->alias[j].id) {
            if (h->alias[j].id == id) return h->alias[j].s;
            j = (j + 1) & (h->capalias - 1);
        }
    }
    return tsdb__head_by_id(h, id);
}

void tsdb__head_replay_done(tsdb__head_t *h)
{
    im_free(h->alias);
    h->alias = NULL;
    h->nalias = h->capalias = 0;
}

tsdb__series_t *tsdb__head_create_with_id(tsdb__head_t *h, uint32_t id, const im_labels_t *ls)
{
    pthread_rwlock_wrlock(&h->lock);
    tsdb__series_t *s = lookup(h, ls);
    /* Ids are handed out one by one: a record naming an id far beyond the next
     * one is corrupt (and would make the id table huge). */
    if (!s && id != 0 && id < h->next_id + (1u << 20) && (id >= h->capids || !h->by_id[id]))
        s = create(h, id, ls);
    else if (s && s->id != id && id != 0)
        alias_put(h, id, s);
    pthread_rwlock_unlock(&h->lock);
    return s;
}

tsdb__series_t *tsdb__head_by_id(tsdb__head_t *h, uint32_t id)
{
    if (id == 0 || id >= h->capids) return NULL;
    return h->by_id[id];
}

static void new_chunk(tsdb__head_t *h, tsdb__series_t *s, int64_t t)
{
    if (s->nchunks == s->capchunks) {
        uint32_t nc = s->capchunks ? s->capchunks * 2 : 1;
        s->chunks = im_realloc_tag(IM_MEM_TSDB, s->chunks, s->capchunks * sizeof *s->chunks,
                                   nc * sizeof *s->chunks);
        s->capchunks = nc;
    }
    tsdb__hchunk_t *c = &s->chunks[s->nchunks++];
    memset(c, 0, sizeof *c);
    c->mint = c->maxt = t;
    tsdb__xor_enc_init(&s->enc);
    h->nchunks++;
}

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

void tsdb__head_append(tsdb__head_t *h, tsdb__series_t *s, int64_t t, double v)
{
    if (h->agent) {
        /* Agent mode: the WAL holds the samples; only what validation needs. */
        uint64_t b;
        memcpy(&b, &v, sizeof b);
        atomic_store_explicit(&s->last_vbits, b, memory_order_relaxed);
        atomic_store_explicit(&s->maxt, t, memory_order_release);
        return;
    }
    tsdb__hchunk_t *c = s->nchunks ? &s->chunks[s->nchunks - 1] : NULL;
    if (!c || c->n >= TSDB__CHUNK_MAX_SAMPLES ||
        floordiv(t, h->chunk_range_ms) != floordiv(c->mint, h->chunk_range_ms)) {
        new_chunk(h, s, t);
        c = &s->chunks[s->nchunks - 1];
    }
    uint32_t before = c->data.cap;
    tsdb__xor_append(&s->enc, &c->data, t, v);
    h->chunk_bytes += c->data.cap - before;
    c->n++;
    c->maxt = t;
    h->nsamples++;
    uint64_t vb;
    memcpy(&vb, &v, sizeof vb);
    atomic_store_explicit(&s->last_vbits, vb, memory_order_relaxed);
    atomic_store_explicit(&s->maxt, t, memory_order_release);
    if (t < h->mint) h->mint = t;
    if (t > h->maxt) h->maxt = t;
}

void tsdb__head_copy_chunks(const tsdb__series_t *s, int64_t mint, int64_t maxt,
                            tsdb__chunk_copy_t **out, size_t *n)
{
    size_t k = 0;
    for (uint32_t i = 0; i < s->nchunks; i++)
        if (s->chunks[i].maxt >= mint && s->chunks[i].mint <= maxt) k++;
    *n = k;
    *out = NULL;
    if (!k) return;
    tsdb__chunk_copy_t *c = im_malloc(k * sizeof *c);
    k = 0;
    for (uint32_t i = 0; i < s->nchunks; i++) {
        const tsdb__hchunk_t *hc = &s->chunks[i];
        if (hc->maxt < mint || hc->mint > maxt) continue;
        size_t nb = (hc->data.nbits + 7) / 8;
        c[k].b = im_malloc(nb ? nb : 1);
        memcpy(c[k].b, hc->data.b, nb);
        c[k].nbits = hc->data.nbits;
        c[k].n = hc->n;
        c[k].mint = hc->mint;
        c[k].maxt = hc->maxt;
        k++;
    }
    *out = c;
}

void tsdb__chunk_copies_free(tsdb__chunk_copy_t *c, size_t n)
{
    for (size_t i = 0; i < n; i++) im_free(c[i].b);
    im_free(c);
}

size_t tsdb__head_truncate(tsdb__head_t *h, int64_t t)
{
    pthread_rwlock_wrlock(&h->lock);
    size_t removed = 0;
    h->mint = INT64_MAX;
    h->maxt = INT64_MIN;
    for (uint32_t id = 1; id < h->next_id && id < h->capids; id++) {
        tsdb__series_t *s = h->by_id[id];
        if (!s) continue;
        uint32_t drop = 0;
        while (drop < s->nchunks && s->chunks[drop].maxt < t) drop++;
        for (uint32_t i = 0; i < drop; i++) {
            h->nsamples -= s->chunks[i].n;
            h->chunk_bytes -= s->chunks[i].data.cap;
            tsdb__bw_free(&s->chunks[i].data);
        }
        h->nchunks -= drop;
        if (drop) memmove(s->chunks, s->chunks + drop, (s->nchunks - drop) * sizeof *s->chunks);
        s->nchunks -= drop;
        if (s->nchunks == 0 && atomic_load(&s->pending) == 0) {
            h->by_id[id] = NULL;
            h->nseries--;
            h->nmap--;
            series_free(h, s);
            removed++;
            continue;
        }
        if (s->nchunks) {
            if (s->chunks[0].mint < h->mint) h->mint = s->chunks[0].mint;
            if (s->chunks[s->nchunks - 1].maxt > h->maxt) h->maxt = s->chunks[s->nchunks - 1].maxt;
        }
    }
    if (removed) {
        map_rebuild(h, h->capmap);
        tsdb__index_free(&h->ix);
        tsdb__index_init(&h->ix);
        for (uint32_t i = 0; i < h->next_id && i < h->capids; i++)
            if (h->by_id[i]) tsdb__index_add(&h->ix, i, h->by_id[i]->labels);
    }
    pthread_rwlock_unlock(&h->lock);
    return removed;
}

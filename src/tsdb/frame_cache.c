/* frame_cache.c — decoded value frames of blocks, shared by the queries of a store.
 *
 * A block's value columns are stored in zstd frames of up to 1 MiB raw
 * (block.c). A query reads series in label order but the engine groups them
 * differently (e.g. `sum by (le, model)` over series sorted by instance first),
 * so without help one query would decompress the same frame once per series it
 * holds. Two layers prevent that:
 *
 *  - the store's cache (this file): a byte-bounded LRU of decoded frames keyed
 *    by (block id, frame index), so successive queries (dashboard refreshes,
 *    rule evaluations) do not decompress again. Bounded by
 *    storage.frame_cache_size / --storage.frame-cache-size; hits, misses,
 *    evictions and bytes are reported on /metrics.
 *  - a reader's pins (tsdb__fcache_t, block.c): every frame a query has read
 *    stays referenced until its series set is freed, so one query never decodes
 *    a frame twice even when the cache evicts it meanwhile. Pinned frames are
 *    at most the decoded value columns of what the query reads, which is a
 *    fraction of the samples it materialises anyway (16 bytes each).
 *
 * Invariants: a frame is freed when its last reference goes (the cache holds one
 * while the frame is cached, each pin one); cached bytes never exceed the limit
 * after an insertion returns (a frame larger than the limit is not cached);
 * entries of a block are dropped when the block is freed (block ids are unique
 * in the process, so an entry can never be taken for another block's frame).
 * Thread safety: every cache operation takes the cache mutex; decompression runs
 * outside it (two readers missing the same frame both decode it, the second
 * insertion keeps the first). */
#include "util/base.h"

#include <pthread.h>
#include <stdlib.h>
#include <zstd.h>

#include "tsdb/tsdb_int.h"
#include "util/log.h"

struct tsdb__frame_cache {
    pthread_mutex_t mu;
    size_t limit, bytes, n;
    tsdb__frame_t **tab;        /* chained hash buckets */
    size_t ntab;                /* a power of two */
    tsdb__frame_t *head, *tail; /* LRU list: head = most recent */
    uint64_t hits, misses, evictions;
    bool warned;
};

static size_t slot(const tsdb__frame_cache_t *c, uint64_t block, uint32_t idx)
{
    uint64_t h = (block * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)idx * 0xc2b2ae3d27d4eb4full);
    h ^= h >> 29;
    return (size_t)h & (c->ntab - 1);
}

tsdb__frame_cache_t *tsdb__frame_cache_new(size_t limit)
{
    tsdb__frame_cache_t *c = im_calloc(1, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    c->limit = limit;
    c->ntab = 64;
    c->tab = im_calloc(c->ntab, sizeof *c->tab);
    return c;
}

void tsdb__frame_unref(tsdb__frame_t *f)
{
    if (f && atomic_fetch_sub(&f->refs, 1) == 1) im_free(f);
}

static void lru_unlink(tsdb__frame_cache_t *c, tsdb__frame_t *f)
{
    if (f->prev)
        f->prev->next = f->next;
    else
        c->head = f->next;
    if (f->next)
        f->next->prev = f->prev;
    else
        c->tail = f->prev;
    f->prev = f->next = NULL;
}

static void lru_push(tsdb__frame_cache_t *c, tsdb__frame_t *f)
{
    f->prev = NULL;
    f->next = c->head;
    if (c->head) c->head->prev = f;
    c->head = f;
    if (!c->tail) c->tail = f;
}

/* Caller holds mu. Removes f from the table and the list and drops the cache's
 * reference. */
static void remove_entry(tsdb__frame_cache_t *c, tsdb__frame_t *f)
{
    tsdb__frame_t **pp = &c->tab[slot(c, f->block, f->idx)];
    while (*pp != f) pp = &(*pp)->hnext;
    *pp = f->hnext;
    lru_unlink(c, f);
    c->bytes -= f->len;
    c->n--;
    tsdb__frame_unref(f);
}

static void grow(tsdb__frame_cache_t *c)
{
    size_t nt = c->ntab * 2;
    tsdb__frame_t **tab = im_calloc(nt, sizeof *tab);
    tsdb__frame_t **old = c->tab;
    size_t on = c->ntab;
    c->tab = tab;
    c->ntab = nt;
    for (size_t i = 0; i < on; i++)
        for (tsdb__frame_t *f = old[i], *nx; f; f = nx) {
            nx = f->hnext;
            size_t s = slot(c, f->block, f->idx);
            f->hnext = tab[s];
            tab[s] = f;
        }
    im_free(old);
}

void tsdb__frame_cache_free(tsdb__frame_cache_t *c)
{
    if (!c) return;
    while (c->head) remove_entry(c, c->head);
    im_free(c->tab);
    pthread_mutex_destroy(&c->mu);
    im_free(c);
}

static tsdb__frame_t *lookup(tsdb__frame_cache_t *c, uint64_t block, uint32_t idx)
{
    for (tsdb__frame_t *f = c->tab[slot(c, block, idx)]; f; f = f->hnext)
        if (f->block == block && f->idx == idx) return f;
    return NULL;
}

/* Decodes frame idx of b into a new frame with one reference; NULL if corrupt. */
static tsdb__frame_t *decode(const tsdb__block_t *b, uint32_t idx)
{
    const tsdb__bframe_t *bf = &b->frames[idx];
    tsdb__frame_t *f = im_malloc(sizeof *f + (bf->rawlen ? bf->rawlen : 1));
    memset(f, 0, sizeof *f);
    atomic_init(&f->refs, 1);
    f->block = b->id;
    f->idx = idx;
    f->len = bf->rawlen;
    size_t r = ZSTD_decompress(f->data, bf->rawlen, b->map + bf->off, bf->clen);
    if (ZSTD_isError(r) || r != bf->rawlen) {
        im_free(f);
        return NULL;
    }
    return f;
}

/* The cached frame (a new reference, moved to the front of the LRU) or NULL;
 * a hit or a miss is counted when count_miss. Takes c->mu. */
static tsdb__frame_t *lookup_ref(tsdb__frame_cache_t *c, const tsdb__block_t *b, uint32_t idx,
                                 bool count_miss)
{
    pthread_mutex_lock(&c->mu);
    tsdb__frame_t *f = lookup(c, b->id, idx);
    if (f) {
        c->hits++;
        lru_unlink(c, f);
        lru_push(c, f);
        atomic_fetch_add(&f->refs, 1);
    } else if (count_miss) {
        c->misses++;
    }
    pthread_mutex_unlock(&c->mu);
    return f;
}

tsdb__frame_t *tsdb__frame_cached(tsdb__frame_cache_t *c, const tsdb__block_t *b, uint32_t idx)
{
    return c ? lookup_ref(c, b, idx, false) : NULL;
}

tsdb__frame_t *tsdb__frame_get(tsdb__frame_cache_t *c, const tsdb__block_t *b, uint32_t idx)
{
    if (c) {
        tsdb__frame_t *f = lookup_ref(c, b, idx, true);
        if (f) return f;
    }
    tsdb__frame_t *f = decode(b, idx);
    if (!f || !c || f->len > c->limit) return f;
    pthread_mutex_lock(&c->mu);
    tsdb__frame_t *dup = lookup(c, b->id, idx);
    if (dup) { /* decoded meanwhile by another reader: share that one */
        atomic_fetch_add(&dup->refs, 1);
        pthread_mutex_unlock(&c->mu);
        tsdb__frame_unref(f);
        return dup;
    }
    bool evicted = false;
    while (c->tail && c->bytes + f->len > c->limit) {
        remove_entry(c, c->tail);
        c->evictions++;
        evicted = true;
    }
    atomic_fetch_add(&f->refs, 1); /* the cache's reference */
    size_t s = slot(c, f->block, f->idx);
    f->hnext = c->tab[s];
    c->tab[s] = f;
    lru_push(c, f);
    c->bytes += f->len;
    if (++c->n > c->ntab) grow(c);
    bool warn = evicted && !c->warned;
    if (warn) c->warned = true;
    size_t limit = c->limit;
    pthread_mutex_unlock(&c->mu);
    if (warn)
        IM_INFO("frame cache full: decoded block frames are evicted and decompressed again "
                "when read (raise storage.frame_cache_size or --storage.frame-cache-size to "
                "keep more; see infermon_tsdb_frame_cache_* on /metrics)",
                "limit_bytes=%zu", limit);
    return f;
}

void tsdb__frame_cache_drop_block(tsdb__frame_cache_t *c, uint64_t block)
{
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    for (tsdb__frame_t *f = c->head, *nx; f; f = nx) {
        nx = f->next;
        if (f->block == block) remove_entry(c, f);
    }
    pthread_mutex_unlock(&c->mu);
}

void tsdb__frame_cache_stats(tsdb__frame_cache_t *c, tsdb__frame_cache_stats_t *o)
{
    memset(o, 0, sizeof *o);
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    o->hits = c->hits;
    o->misses = c->misses;
    o->evictions = c->evictions;
    o->bytes = c->bytes;
    o->frames = c->n;
    o->limit = c->limit;
    pthread_mutex_unlock(&c->mu);
}

/* test_tsdb_frame_cache.c — the store's cache of decoded block frames and a
 * query's pins (frame_cache.c, block.c; issue 23):
 *
 *  - the cached bytes never exceed the limit, the least recently used frame
 *    goes first, and what is read is right whatever was evicted;
 *  - one reader decodes each frame at most once, in any series order, even with
 *    a cache of 0 bytes (the pins), and a second reader hits the cache;
 *  - the frames of a block leave the cache when the block goes;
 *  - the store reports hits, misses and bytes (tsdb_get_stats) and takes its
 *    limit from tsdb_opts_t (0 = default, < 0 = none);
 *  - readers on several threads share one cache, and a select decodes its
 *    frames up front on several threads (run under TSan: make test-tsan). */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "tsdb/tsdb.h"
#include "tsdb/tsdb_int.h"
#include "tsdb_test.h"
#include "util/log.h"

#define NSER  240
#define NSAMP 1500 /* random values: ~8 bytes a sample, ~2.9 MB raw: a dozen 256 KiB frames */

static double val(int s, int k)
{
    uint64_t x = (uint64_t)s * 1000003u + (uint64_t)k * 7919u + 1;
    for (int i = 0; i < 3; i++) tt_xorshift(&x);
    return (double)(x >> 11) / 9007199254740992.0 * 1e6;
}

/* A block of NSER series (s="0000".."0239") of NSAMP samples each, opened. */
static tsdb__block_t *make_block(void)
{
    char bd[300];
    snprintf(bd, sizeof bd, "%s/b", tt_dir);
    assert_int_equal(mkdir(bd, 0755), 0);
    tsdb__bwriter_t *w;
    assert_int_equal(tsdb__bwriter_new(bd, 0, (NSAMP - 1) * 15000, 1, 1, &w, NULL), IM_OK);
    int64_t *t = im_malloc(NSAMP * sizeof *t);
    double *v = im_malloc(NSAMP * sizeof *v);
    for (int s = 0; s < NSER; s++) {
        char name[16];
        snprintf(name, sizeof name, "%04d", s);
        const im_labels_t *ls = im_labels_from_strs("__name__", "m", "s", name, NULL);
        for (int k = 0; k < NSAMP; k++) {
            t[k] = (int64_t)k * 15000;
            v[k] = val(s, k);
        }
        assert_int_equal(tsdb__bwriter_add(w, ls, t, v, NSAMP, NULL), IM_OK);
        im_labels_unref(ls);
    }
    im_free(t);
    im_free(v);
    char *path;
    assert_int_equal(tsdb__bwriter_finish(w, &path, NULL), IM_OK);
    tsdb__block_t *b;
    assert_int_equal(tsdb__block_open(path, &b, NULL), IM_OK);
    im_free(path);
    assert_true(b->nframes >= 8);
    return b;
}

/* Reads series s of b through reader r and checks every sample. */
static void read_check(const tsdb__block_t *b, uint32_t s, tsdb__fcache_t *r)
{
    int64_t *t;
    double *v;
    size_t n;
    assert_true(tsdb__block_read(b, s, r, INT64_MIN, INT64_MAX, &t, &v, &n));
    assert_int_equal(n, NSAMP);
    int want = (int)strtol(im_labels_get(b->series[s].labels, "s")->s, NULL, 10);
    for (size_t k = 0; k < n; k++) {
        if (t[k] != (int64_t)k * 15000 || tt_dbits(v[k]) != tt_dbits(val(want, (int)k)))
            fail_msg("series %u sample %zu: (%lld, %a)", s, k, (long long)t[k], v[k]);
    }
    im_free(t);
    im_free(v);
}

/* A series order that jumps between frames: s, s + NSER/2, s + 1, ... */
static uint32_t jumpy(uint32_t i)
{
    return i % 2 ? NSER / 2 + i / 2 : i / 2;
}

static size_t max_frame(const tsdb__block_t *b)
{
    size_t m = 0;
    for (uint32_t i = 0; i < b->nframes; i++)
        if (b->frames[i].rawlen > m) m = b->frames[i].rawlen;
    return m;
}

static void test_bound_and_eviction(void **state)
{
    (void)state;
    tsdb__block_t *b = make_block();
    size_t limit = 3 * max_frame(b);
    tsdb__frame_cache_t *c = tsdb__frame_cache_new(limit);
    b->cache = c;
    tsdb__frame_cache_stats_t st;
    /* three queries in an order that jumps between frames */
    for (int pass = 0; pass < 3; pass++) {
        tsdb__fcache_t r = {.pin_all = true};
        for (uint32_t i = 0; i < NSER; i++) {
            read_check(b, jumpy(i), &r);
            tsdb__frame_cache_stats(c, &st);
            assert_true(st.bytes <= limit);
            assert_true(st.frames <= 3);
        }
        tsdb__fcache_free(&r);
    }
    tsdb__frame_cache_stats(c, &st);
    assert_int_equal(st.limit, limit);
    assert_true(st.evictions > 0);
    /* each pass pinned every frame once: nframes lookups per pass */
    assert_int_equal(st.hits + st.misses, 3 * b->nframes);
    /* LRU: frame 0, touched last, survives reading two others; the oldest goes */
    tsdb__frame_t *f0 = tsdb__frame_get(c, b, 0);
    tsdb__frame_t *f1 = tsdb__frame_get(c, b, 1);
    tsdb__frame_t *f2 = tsdb__frame_get(c, b, 2);
    tsdb__frame_unref(tsdb__frame_get(c, b, 0)); /* 0 most recent */
    tsdb__frame_unref(tsdb__frame_get(c, b, 3)); /* evicts 1 */
    tsdb__frame_cache_stats(c, &st);
    uint64_t m0 = st.misses;
    tsdb__frame_unref(tsdb__frame_get(c, b, 0));
    tsdb__frame_unref(tsdb__frame_get(c, b, 2));
    tsdb__frame_cache_stats(c, &st);
    assert_int_equal(st.misses, m0); /* 0 and 2 still there */
    tsdb__frame_unref(tsdb__frame_get(c, b, 1));
    tsdb__frame_cache_stats(c, &st);
    assert_int_equal(st.misses, m0 + 1); /* 1 was evicted */
    /* an evicted frame still pinned stays valid */
    assert_int_equal(f1->idx, 1);
    assert_int_equal(f1->len, b->frames[1].rawlen);
    tsdb__frame_unref(f0);
    tsdb__frame_unref(f1);
    tsdb__frame_unref(f2);
    /* the block's frames leave with it */
    tsdb__block_unref(b);
    tsdb__frame_cache_stats(c, &st);
    assert_int_equal(st.bytes, 0);
    assert_int_equal(st.frames, 0);
    tsdb__frame_cache_free(c);
}

static void test_pins_decode_once(void **state)
{
    (void)state;
    tsdb__block_t *b = make_block();
    tsdb__frame_cache_t *c = tsdb__frame_cache_new(0); /* caches nothing */
    b->cache = c;
    tsdb__fcache_t r = {.pin_all = true};
    for (int rep = 0; rep < 2; rep++)
        for (uint32_t i = 0; i < NSER; i++) read_check(b, jumpy(i), &r);
    tsdb__frame_cache_stats_t st;
    tsdb__frame_cache_stats(c, &st);
    assert_int_equal(st.misses, b->nframes); /* each frame decoded once for the reader */
    assert_int_equal(st.hits, 0);
    assert_int_equal(st.bytes, 0);
    tsdb__fcache_free(&r);
    /* a big cache: the second reader decodes nothing */
    tsdb__frame_cache_t *c2 = tsdb__frame_cache_new(64u << 20);
    b->cache = c2;
    for (int q = 0; q < 2; q++) {
        tsdb__fcache_t r2 = {.pin_all = true};
        for (uint32_t i = 0; i < NSER; i++) read_check(b, jumpy(i), &r2);
        tsdb__fcache_free(&r2);
    }
    tsdb__frame_cache_stats(c2, &st);
    assert_int_equal(st.misses, b->nframes);
    assert_int_equal(st.hits, b->nframes);
    /* a sequential reader (compaction) does not use the cache */
    tsdb__fcache_t seq = {0};
    for (uint32_t i = 0; i < NSER; i++) read_check(b, i, &seq);
    tsdb__fcache_free(&seq);
    tsdb__frame_cache_stats(c2, &st);
    assert_int_equal(st.misses + st.hits, 2 * b->nframes);
    tsdb__block_unref(b);
    tsdb__frame_cache_free(c);
    tsdb__frame_cache_free(c2);
}

typedef struct worker {
    tsdb__block_t *b;
    int id;
} worker_t;

static void *worker(void *arg)
{
    worker_t *w = arg;
    for (int q = 0; q < 6; q++) {
        tsdb__fcache_t r = {.pin_all = true};
        for (uint32_t i = 0; i < NSER; i += 3)
            read_check(w->b, (jumpy(i) + (uint32_t)w->id * 17u) % NSER, &r);
        tsdb__fcache_free(&r);
    }
    return NULL;
}

static void test_concurrent_readers(void **state)
{
    (void)state;
    tsdb__block_t *b = make_block();
    size_t limit = 2 * max_frame(b);
    tsdb__frame_cache_t *c = tsdb__frame_cache_new(limit);
    b->cache = c;
    pthread_t th[4];
    worker_t w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker_t){b, i};
        assert_int_equal(pthread_create(&th[i], NULL, worker, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    tsdb__frame_cache_stats_t st;
    tsdb__frame_cache_stats(c, &st);
    assert_true(st.bytes <= limit);
    assert_true(st.evictions > 0);
    tsdb__block_unref(b);
    tsdb__frame_cache_free(c);
}

/* Through the store: a persisted block read by two queries. */
static void test_store_stats(void **state)
{
    (void)state;
    for (int mode = 0; mode < 2; mode++) {
        tsdb_opts_t o = {.dir = tt_dir,
                         .no_background = true,
                         .fsync = TSDB_FSYNC_NEVER,
                         .max_future_ms = -1,
                         .frame_cache_bytes = mode ? -1 : 0};
        tsdb_t *db;
        assert_int_equal(tsdb_open(&o, &db, NULL), IM_OK);
        if (mode == 0) {
            tsdb_appender_t *a = tsdb_appender(db);
            const im_labels_t *ls = im_labels_from_strs("__name__", "m", NULL);
            for (int k = 0; k < 100; k++)
                assert_int_equal(tsdb_appender_add(a, 0, ls, k * 15000, k, NULL), IM_OK);
            im_labels_unref(ls);
            assert_int_equal(tsdb_appender_commit(a, NULL), IM_OK);
            assert_int_equal(tsdb_flush_head(db, NULL), IM_OK);
        }
        tsdb_queryable_t *q = tsdb_queryable(db);
        for (int rep = 0; rep < 2; rep++) {
            im_matcher_t *m;
            assert_int_equal(im_matcher_new(IM_MATCH_EQ, "__name__", 8, "m", 1, &m, NULL), IM_OK);
            tsdb_series_set_t *set;
            assert_int_equal(q->vt->select(q, 0, INT64_MAX, &m, 1, NULL, &set, NULL), IM_OK);
            assert_int_equal(set->n, 1);
            tsdb_iter_t *it = set->vt->iter(set, 0);
            int k = 0;
            while (it->vt->next(it)) k++;
            assert_int_equal(k, 100);
            it->vt->free(it);
            set->vt->free(set);
            im_matcher_free(m);
        }
        q->vt->close(q);
        tsdb_stats_t st;
        tsdb_get_stats(db, &st);
        assert_true(st.blocks >= 1);
        if (mode == 0) {
            assert_int_equal(st.frame_cache_limit_bytes, TSDB_DEFAULT_FRAME_CACHE);
            assert_int_equal(st.frame_cache_misses, 1);
            assert_int_equal(st.frame_cache_hits, 1);
            assert_true(st.frame_cache_bytes > 0);
        } else {
            assert_int_equal(st.frame_cache_limit_bytes, 0);
            assert_int_equal(st.frame_cache_misses, 2);
            assert_int_equal(st.frame_cache_bytes, 0);
        }
        tsdb_close(db);
    }
}

/* A select over a block of many frames decodes them up front on several
 * threads (querier.c prefetch_frames): each once, the answers right. */
static void test_store_prefetch(void **state)
{
    (void)state;
    tsdb_opts_t o = {
        .dir = tt_dir, .no_background = true, .fsync = TSDB_FSYNC_NEVER, .max_future_ms = -1};
    tsdb_t *db;
    assert_int_equal(tsdb_open(&o, &db, NULL), IM_OK);
    const im_labels_t *ls[NSER];
    for (int i = 0; i < NSER; i++) {
        char name[16];
        snprintf(name, sizeof name, "%04d", i);
        ls[i] = im_labels_from_strs("__name__", "m", "s", name, NULL);
    }
    for (int k = 0; k < NSAMP; k++) {
        tsdb_appender_t *a = tsdb_appender(db);
        for (int i = 0; i < NSER; i++)
            assert_int_equal(tsdb_appender_add(a, 0, ls[i], (int64_t)k * 15000, val(i, k), NULL),
                             IM_OK);
        assert_int_equal(tsdb_appender_commit(a, NULL), IM_OK);
    }
    for (int i = 0; i < NSER; i++) im_labels_unref(ls[i]);
    assert_int_equal(tsdb_flush_head(db, NULL), IM_OK);
    tsdb_queryable_t *q = tsdb_queryable(db);
    for (int rep = 0; rep < 2; rep++) {
        im_matcher_t *m;
        assert_int_equal(im_matcher_new(IM_MATCH_EQ, "__name__", 8, "m", 1, &m, NULL), IM_OK);
        tsdb_series_set_t *set;
        assert_int_equal(q->vt->select(q, 0, INT64_MAX, &m, 1, NULL, &set, NULL), IM_OK);
        assert_int_equal(set->n, NSER);
        for (size_t i = 0; i < set->n; i++) {
            size_t at = (i * 7) % set->n; /* out of order */
            int want = (int)strtol(im_labels_get(set->series[at].labels, "s")->s, NULL, 10);
            tsdb_iter_t *it = set->vt->iter(set, at);
            int k = 0;
            int64_t t;
            double v;
            while (it->vt->next(it)) {
                it->vt->at(it, &t, &v);
                if (t != (int64_t)k * 15000 || tt_dbits(v) != tt_dbits(val(want, k)))
                    fail_msg("series %d sample %d: (%lld, %a)", want, k, (long long)t, v);
                k++;
            }
            assert_int_equal(k, NSAMP);
            it->vt->free(it);
        }
        set->vt->free(set);
        im_matcher_free(m);
    }
    q->vt->close(q);
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    assert_true(st.frame_cache_misses >= 8);                      /* several frames: threads used */
    assert_int_equal(st.frame_cache_hits, st.frame_cache_misses); /* 2nd select: all cached */
    tsdb_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bound_and_eviction, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_pins_decode_once, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_readers, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_store_stats, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_store_prefetch, tt_setup, tt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

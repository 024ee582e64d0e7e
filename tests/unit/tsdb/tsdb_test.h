/* tsdb_test.h — fixtures shared by the tsdb unit tests. Header only (each
 * tests/unit/tsdb/test_*.c is its own program; include it after cmocka.h):
 *  - tt_dir, tt_setup, tt_teardown: a scratch store directory per test
 *    (cmocka setup/teardown), removed afterwards;
 *  - tt_open: a store in tt_dir with no background work and no fsync;
 *  - tt_series_t, tt_ingest, tt_verify: a set of synthetic series, appended
 *    one commit per timestamp and read back sample by sample (values compared
 *    bit for bit, so stale NaNs count);
 *  - tt_xorshift, tt_bitsd, tt_dbits: a deterministic generator and the bits
 *    of a double; tt_ts_first, tt_ts_next: random timestamp series. */
#ifndef IM_TESTS_UNIT_TSDB_TSDB_TEST_H
#define IM_TESTS_UNIT_TSDB_TSDB_TEST_H

#include "util/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsdb/tsdb.h"
#include "util/log.h"

static inline uint64_t tt_xorshift(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

static inline double tt_bitsd(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static inline uint64_t tt_dbits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

/* Timestamp series: a random first one, then the next after cur by kind: 0
 * regular 15 s, 1 jittered 15 s, 2 equal, 3 huge gaps, other random steps. */
static inline int64_t tt_ts_first(uint64_t *rng)
{
    return (int64_t)(tt_xorshift(rng) % 2000000000000ULL) - 1000000000000LL;
}

static inline int64_t tt_ts_next(uint64_t *rng, int64_t cur, int kind)
{
    switch (kind) {
    case 0: return cur + 15000;
    case 1: return cur + 15000 + (int64_t)(tt_xorshift(rng) % 200) - 100;
    case 2: return cur;
    case 3: return cur + (int64_t)(tt_xorshift(rng) % 4000000000000000ULL);
    default: return cur + (int64_t)(tt_xorshift(rng) % 100000);
    }
}

/* ---- A store in a scratch directory ---- */

static char tt_dir[256] __attribute__((unused));

static inline int tt_setup(void **state)
{
    (void)state;
    snprintf(tt_dir, sizeof tt_dir, "/tmp/im-tsdb-test-XXXXXX");
    assert_non_null(mkdtemp(tt_dir));
    im_log_set_level(IM_LOG_WARN);
    return 0;
}

static inline int tt_teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tt_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Opens the store in tt_dir (0 = default for each setting). */
static inline tsdb_t *tt_open(int64_t block_ms, int64_t retention_ms, int64_t retention_bytes)
{
    tsdb_opts_t o = {0};
    o.dir = tt_dir;
    o.no_background = true;
    o.block_range_ms = block_ms;
    o.retention_ms = retention_ms;
    o.retention_bytes = retention_bytes;
    o.fsync = TSDB_FSYNC_NEVER;
    o.wal_segment_bytes = 64 << 10;
    tsdb_t *db;
    im_err_t err;
    if (tsdb_open(&o, &db, &err) != IM_OK) fail_msg("open: %s", err.msg);
    return db;
}

/* ---- Synthetic series ---- */

#define TT_MAX_SERIES 64

typedef struct tt_series {
    const char *metric; /* __name__ of every series */
    int n;              /* series 0..n-1 (at most TT_MAX_SERIES) */
    int64_t step;       /* sample k is at k * step */
    const im_labels_t *(*labels)(int i);
    double (*value)(int i, int64_t k);
    int (*index)(const im_labels_t *ls); /* i back from a series' labels */
} tt_series_t;

/* Appends samples [k0, k1) of every series, one commit per timestamp; each
 * sample must be accepted. */
static inline void tt_ingest(tsdb_t *db, const tt_series_t *f, int64_t k0, int64_t k1)
{
    const im_labels_t *ls[TT_MAX_SERIES];
    assert_true(f->n <= TT_MAX_SERIES);
    for (int i = 0; i < f->n; i++) ls[i] = f->labels(i);
    for (int64_t k = k0; k < k1; k++) {
        tsdb_appender_t *a = tsdb_appender(db);
        for (int i = 0; i < f->n; i++) {
            im_rc rc = tsdb_appender_add(a, 0, ls[i], k * f->step, f->value(i, k), NULL);
            if (rc != IM_OK)
                fail_msg("sample %lld of series %d rejected: rc %d", (long long)k, i, rc);
        }
        assert_int_equal(tsdb_appender_commit(a, NULL), IM_OK);
    }
    for (int i = 0; i < f->n; i++) im_labels_unref(ls[i]);
}

/* Every series holds exactly samples [k0, k1), in order, with no gap and
 * nothing else from pad_ms before the first to pad_ms after the last. */
static inline void tt_verify(tsdb_t *db, const tt_series_t *f, int64_t k0, int64_t k1,
                             int64_t pad_ms)
{
    im_matcher_t *m;
    assert_int_equal(
        im_matcher_new(IM_MATCH_EQ, "__name__", 8, f->metric, strlen(f->metric), &m, NULL), IM_OK);
    tsdb_queryable_t *q = tsdb_queryable(db);
    tsdb_series_set_t *set;
    assert_int_equal(q->vt->select(q, k0 * f->step - pad_ms, (k1 - 1) * f->step + pad_ms, &m, 1,
                                   NULL, &set, NULL),
                     IM_OK);
    assert_int_equal(set->n, f->n);
    for (size_t s = 0; s < set->n; s++) {
        int i = f->index(set->series[s].labels);
        tsdb_iter_t *it = set->vt->iter(set, s);
        int64_t k = k0, t;
        double v;
        while (it->vt->next(it)) {
            it->vt->at(it, &t, &v);
            double want = f->value(i, k);
            if (t != k * f->step || tt_dbits(v) != tt_dbits(want))
                fail_msg("series %d: got (%lld, %a), want sample %lld (%lld, %a)", i, (long long)t,
                         v, (long long)k, (long long)(k * f->step), want);
            k++;
        }
        assert_int_equal(k, k1);
        it->vt->free(it);
    }
    set->vt->free(set);
    q->vt->close(q);
    im_matcher_free(m);
}

#endif

/* test_wal_watch.c — the read-only WAL watcher (src/tsdb/wal_watch.c) and the
 * store's keep hook (wal.c invariant 8): a watcher started at the end hands out
 * only later commits, in order, values bit for bit, across segment cuts; one
 * started at a position skips what ended before it but still learns the series;
 * a checkpoint keeps the segments the hook asks for and deletes the rest, which
 * a watcher still needing them reports as a gap, learning their series from the
 * checkpoint. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "tsdb_test.h"

typedef struct seen {
    const im_labels_t *ser[64];
    int64_t t[4096];
    uint64_t vb[4096];
    uint32_t id[4096];
    size_t n;
    tsdb_wal_pos_t last;
    uint32_t gaps;
} seen_t;

static void on_series(void *ctx, uint32_t id, const im_labels_t *ls)
{
    seen_t *s = ctx;
    assert_true(id < 64);
    if (s->ser[id]) im_labels_unref(s->ser[id]);
    s->ser[id] = im_labels_ref(ls);
}

static bool on_samples(void *ctx, const tsdb_wal_sample_t *smp, size_t n, tsdb_wal_pos_t end)
{
    seen_t *s = ctx;
    assert_true(tsdb_wal_pos_cmp(end, s->last) > 0); /* positions only grow */
    s->last = end;
    for (size_t i = 0; i < n; i++) {
        assert_non_null(s->ser[smp[i].id]); /* defined before use */
        s->id[s->n] = smp[i].id;
        s->t[s->n] = smp[i].t_ms;
        s->vb[s->n++] = tt_dbits(smp[i].v);
    }
    return true;
}

static void on_gap(void *ctx, uint32_t from, uint32_t to)
{
    seen_t *s = ctx;
    s->gaps += to - from + 1;
}

static const tsdb_wal_watch_cb_t cb = {on_series, on_samples, on_gap};

static uint32_t g_keep;
static uint32_t keep_fn(void *ctx)
{
    (void)ctx;
    return g_keep;
}

static tsdb_t *open_store(void)
{
    tsdb_opts_t o;
    memset(&o, 0, sizeof o);
    o.dir = tt_dir;
    o.no_background = true;
    o.fsync = TSDB_FSYNC_NEVER;
    o.wal_segment_bytes = 2048; /* many segments */
    o.max_future_ms = -1;
    o.block_range_ms = 3600 * 1000;
    o.wal_keep = keep_fn;
    tsdb_t *db;
    assert_int_equal(tsdb_open(&o, &db, NULL), IM_OK);
    return db;
}

/* One commit at t of 3 series, values i + t/1000 (the stale NaN every 7th). */
static void commit(tsdb_t *db, int64_t t)
{
    tsdb_appender_t *a = tsdb_appender(db);
    for (int i = 0; i < 3; i++) {
        char v[8];
        snprintf(v, sizeof v, "%d", i);
        const im_labels_t *ls = im_labels_from_strs("__name__", "m", "i", v, NULL);
        double val = (t / 1000) % 7 == 0 && i == 1 ? tsdb_stale_nan() : i + (double)t / 1000;
        assert_int_equal(tsdb_appender_add(a, 0, ls, t, val, NULL), IM_OK);
        im_labels_unref(ls);
    }
    assert_int_equal(tsdb_appender_commit(a, NULL), IM_OK);
}

static void check(const seen_t *s, int64_t t0, size_t ncommits)
{
    assert_int_equal(s->n, ncommits * 3);
    for (size_t k = 0; k < s->n; k++) {
        int64_t t = t0 + (int64_t)(k / 3) * 1000;
        const im_istr_t *iv = im_labels_get(s->ser[s->id[k]], "i");
        int i = iv->s[0] - '0';
        double want = (t / 1000) % 7 == 0 && i == 1 ? tsdb_stale_nan() : i + (double)t / 1000;
        assert_int_equal(s->t[k], t);
        assert_true(s->vb[k] == tt_dbits(want));
    }
}

static void free_seen(seen_t *s)
{
    for (int i = 0; i < 64; i++)
        if (s->ser[i]) im_labels_unref(s->ser[i]);
}

static void test_tail(void **state)
{
    (void)state;
    g_keep = 0;
    tsdb_t *db = open_store();
    for (int k = 0; k < 20; k++) commit(db, 1000000 + k * 1000);
    seen_t *s = calloc(1, sizeof *s);
    tsdb_wal_watcher_t *w;
    assert_int_equal(tsdb_wal_watcher_open(tt_dir, NULL, &cb, s, &w, NULL), IM_OK);
    assert_int_equal(tsdb_wal_watcher_poll(w, NULL, NULL), IM_OK);
    assert_int_equal(s->n, 0); /* started at the end: series only */
    assert_non_null(s->ser[1]);
    tsdb_wal_pos_t mid = tsdb_wal_watcher_pos(w);
    for (int k = 20; k < 200; k++) commit(db, 1000000 + k * 1000); /* crosses segments */
    size_t nrec;
    assert_int_equal(tsdb_wal_watcher_poll(w, &nrec, NULL), IM_OK);
    assert_true(nrec >= 180);
    check(s, 1000000 + 20 * 1000, 180);
    assert_true(tsdb_wal_watcher_pos(w).seg > mid.seg);
    tsdb_wal_watcher_close(w);
    free_seen(s);
    /* From a position: what ended at or before it is skipped. */
    memset(s, 0, sizeof *s);
    assert_int_equal(tsdb_wal_watcher_open(tt_dir, &mid, &cb, s, &w, NULL), IM_OK);
    assert_int_equal(tsdb_wal_watcher_poll(w, NULL, NULL), IM_OK);
    check(s, 1000000 + 20 * 1000, 180);
    tsdb_wal_watcher_close(w);
    free_seen(s);
    free(s);
    tsdb_close(db);
}

static void test_keep_and_gap(void **state)
{
    (void)state;
    g_keep = 0;
    tsdb_t *db = open_store();
    /* 200 commits 30 s apart: 1.66 h, so maintenance persists the first hour
     * (and checkpoints) while the series stay in the head. */
    for (int k = 0; k < 200; k++) commit(db, k * 30000);
    seen_t *s = calloc(1, sizeof *s);
    tsdb_wal_watcher_t *w;
    tsdb_wal_pos_t start = {1, 8};
    assert_int_equal(tsdb_wal_watcher_open(tt_dir, &start, &cb, s, &w, NULL), IM_OK);
    /* The hook keeps segment 3 on: a checkpoint deletes 1 and 2 only. */
    g_keep = 3;
    assert_int_equal(tsdb_maintain(db, NULL), IM_OK);
    char p[512];
    struct stat st;
    snprintf(p, sizeof p, "%s/wal/00000001", tt_dir);
    assert_int_not_equal(stat(p, &st), 0);
    snprintf(p, sizeof p, "%s/wal/00000003", tt_dir);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(tsdb_wal_watcher_poll(w, NULL, NULL), IM_OK);
    assert_true(s->gaps >= 1); /* segment 1 (maybe 2) went before it was read */
    assert_true(s->n > 0 && s->n < 600);
    assert_int_equal(s->t[s->n - 1], 199 * 30000);
    tsdb_wal_watcher_close(w);
    /* The kept segments survive a reopen too. */
    tsdb_close(db);
    db = open_store();
    assert_int_equal(stat(p, &st), 0);
    g_keep = 0;
    tsdb_close(db);
    free_seen(s);
    free(s);
}

int main(void)
{
    im_log_set_level(IM_LOG_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tail, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_keep_and_gap, tt_setup, tt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

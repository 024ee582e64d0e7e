/* test_tsdb_backfill.c — a backfill (tsdb_flush_head, as `infermon tsdb import`
 * does) followed by live samples: the persisted block's range ends at its
 * newest sample, so live samples just after the backfill are accepted at once
 * and read back together with it, before and after a restart (blocks, WAL
 * checkpoint and replay) and after the head is persisted and compacted. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tsdb/tsdb.h"
#include "util/log.h"

#define NSER 6
#define STEP 15000
#define R    (20 * STEP) /* block range: 20 samples */

static char dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/im-tsdb-backfill-XXXXXX");
    assert_non_null(mkdtemp(dir));
    im_log_set_level(IM_LOG_WARN);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const im_labels_t *series_labels(int i)
{
    char pod[16];
    snprintf(pod, sizeof pod, "pod-%d", i);
    return im_labels_from_strs("__name__", "requests_total", "pod", pod, NULL);
}

static double expect(int i, int64_t k)
{
    return (double)(k * 5 + i);
}

static tsdb_t *open_dir(void)
{
    tsdb_opts_t o = {0};
    o.dir = dir;
    o.no_background = true;
    o.block_range_ms = R;
    o.fsync = TSDB_FSYNC_NEVER;
    o.wal_segment_bytes = 64 << 10;
    tsdb_t *db;
    im_err_t err;
    if (tsdb_open(&o, &db, &err) != IM_OK) fail_msg("open: %s", err.msg);
    return db;
}

/* Appends samples [k0, k1) of every series; each must be accepted. */
static void ingest(tsdb_t *db, int64_t k0, int64_t k1)
{
    const im_labels_t *ls[NSER];
    for (int i = 0; i < NSER; i++) ls[i] = series_labels(i);
    for (int64_t k = k0; k < k1; k++) {
        tsdb_appender_t *a = tsdb_appender(db);
        for (int i = 0; i < NSER; i++) {
            im_rc rc = tsdb_appender_add(a, 0, ls[i], k * STEP, expect(i, k), NULL);
            if (rc != IM_OK)
                fail_msg("sample %lld of series %d rejected: rc %d", (long long)k, i, rc);
        }
        assert_int_equal(tsdb_appender_commit(a, NULL), IM_OK);
    }
    for (int i = 0; i < NSER; i++) im_labels_unref(ls[i]);
}

/* Every series holds exactly samples [k0, k1), in order, with no gap. */
static void verify(tsdb_t *db, int64_t k0, int64_t k1)
{
    im_matcher_t *m;
    assert_int_equal(im_matcher_new(IM_MATCH_EQ, "__name__", 8, "requests_total", 14, &m, NULL),
                     IM_OK);
    tsdb_queryable_t *q = tsdb_queryable(db);
    tsdb_series_set_t *set;
    assert_int_equal(
        q->vt->select(q, k0 * STEP - 3600000, k1 * STEP + 3600000, &m, 1, NULL, &set, NULL), IM_OK);
    assert_int_equal(set->n, NSER);
    for (size_t s = 0; s < set->n; s++) {
        const im_istr_t *pod = im_labels_get(set->series[s].labels, "pod");
        int i = (int)strtol(pod->s + 4, NULL, 10);
        tsdb_iter_t *it = set->vt->iter(set, s);
        int64_t k = k0, t;
        double v;
        while (it->vt->next(it)) {
            it->vt->at(it, &t, &v);
            if (t != k * STEP || v != expect(i, k))
                fail_msg("series %d: got (%lld, %g), want sample %lld", i, (long long)t, v,
                         (long long)k);
            k++;
        }
        assert_int_equal(k, k1);
        it->vt->free(it);
    }
    set->vt->free(set);
    q->vt->close(q);
    im_matcher_free(m);
}

static void test_backfill_then_live(void **state)
{
    (void)state;
    /* Backfill samples 0..49: T = 49 * STEP lies in the middle of the third
     * block window [40, 60). */
    tsdb_t *db = open_dir();
    ingest(db, 0, 50);
    assert_int_equal(tsdb_flush_head(db, NULL), IM_OK);
    assert_int_equal(tsdb_maintain(db, NULL), IM_OK);
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    assert_true(st.blocks >= 1);
    assert_int_equal(st.head_samples, 0);
    /* At or before T: still out of bounds (already persisted). */
    tsdb_appender_t *a = tsdb_appender(db);
    const im_labels_t *ls = series_labels(0);
    assert_int_equal(tsdb_appender_add(a, 0, ls, 49 * STEP, 1, NULL), IM_EOUTOFBOUNDS);
    tsdb_appender_rollback(a);
    im_labels_unref(ls);
    tsdb_close(db);

    /* Restart after the backfill (as `tsdb import` then `run`): live samples
     * at T + 15 s are accepted at once. */
    db = open_dir();
    verify(db, 0, 50);
    ingest(db, 50, 58);
    verify(db, 0, 58);
    tsdb_close(db);

    /* Restart: blocks + WAL replay give backfill and live samples together. */
    db = open_dir();
    verify(db, 0, 58);
    /* Live samples go on; maintenance persists the head (a second block in
     * the backfill's window) and compacts. */
    ingest(db, 58, 200);
    assert_int_equal(tsdb_maintain(db, NULL), IM_OK);
    tsdb_get_stats(db, &st);
    assert_true(st.compactions >= 1);
    assert_true(st.head_samples < 200 * NSER);
    verify(db, 0, 200);
    tsdb_close(db);
    db = open_dir();
    verify(db, 0, 200);
    ingest(db, 200, 210);
    verify(db, 0, 210);
    tsdb_close(db);
}

/* The same store, no restart: a flush in the running process (the demo's
 * backfill) leaves the head open just after the newest persisted sample. */
static void test_backfill_in_process(void **state)
{
    (void)state;
    tsdb_t *db = open_dir();
    ingest(db, 0, 33);
    assert_int_equal(tsdb_flush_head(db, NULL), IM_OK);
    ingest(db, 33, 40);
    verify(db, 0, 40);
    ingest(db, 40, 120);
    assert_int_equal(tsdb_maintain(db, NULL), IM_OK);
    verify(db, 0, 120);
    tsdb_close(db);
    db = open_dir();
    verify(db, 0, 120);
    tsdb_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_backfill_then_live, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backfill_in_process, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

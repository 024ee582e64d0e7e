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
#include "tsdb_test.h"

#define NSER 6
#define STEP 15000
#define R    (20 * STEP) /* block range: 20 samples */

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

static int series_index(const im_labels_t *ls)
{
    return (int)strtol(im_labels_get(ls, "pod")->s + 4, NULL, 10);
}

static const tt_series_t fx = {"requests_total", NSER, STEP, series_labels, expect, series_index};

#define HOUR 3600000 /* verify: nothing else within an hour of the samples */

static void test_backfill_then_live(void **state)
{
    (void)state;
    /* Backfill samples 0..49: T = 49 * STEP lies in the middle of the third
     * block window [40, 60). */
    tsdb_t *db = tt_open(R, 0, 0);
    tt_ingest(db, &fx, 0, 50);
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
    db = tt_open(R, 0, 0);
    tt_verify(db, &fx, 0, 50, HOUR);
    tt_ingest(db, &fx, 50, 58);
    tt_verify(db, &fx, 0, 58, HOUR);
    tsdb_close(db);

    /* Restart: blocks + WAL replay give backfill and live samples together. */
    db = tt_open(R, 0, 0);
    tt_verify(db, &fx, 0, 58, HOUR);
    /* Live samples go on; maintenance persists the head (a second block in
     * the backfill's window) and compacts. */
    tt_ingest(db, &fx, 58, 200);
    assert_int_equal(tsdb_maintain(db, NULL), IM_OK);
    tsdb_get_stats(db, &st);
    assert_true(st.compactions >= 1);
    assert_true(st.head_samples < 200 * NSER);
    tt_verify(db, &fx, 0, 200, HOUR);
    tsdb_close(db);
    db = tt_open(R, 0, 0);
    tt_verify(db, &fx, 0, 200, HOUR);
    tt_ingest(db, &fx, 200, 210);
    tt_verify(db, &fx, 0, 210, HOUR);
    tsdb_close(db);
}

/* The same store, no restart: a flush in the running process (the demo's
 * backfill) leaves the head open just after the newest persisted sample. */
static void test_backfill_in_process(void **state)
{
    (void)state;
    tsdb_t *db = tt_open(R, 0, 0);
    tt_ingest(db, &fx, 0, 33);
    assert_int_equal(tsdb_flush_head(db, NULL), IM_OK);
    tt_ingest(db, &fx, 33, 40);
    tt_verify(db, &fx, 0, 40, HOUR);
    tt_ingest(db, &fx, 40, 120);
    assert_int_equal(tsdb_maintain(db, NULL), IM_OK);
    tt_verify(db, &fx, 0, 120, HOUR);
    tsdb_close(db);
    db = tt_open(R, 0, 0);
    tt_verify(db, &fx, 0, 120, HOUR);
    tsdb_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_backfill_then_live, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_backfill_in_process, tt_setup, tt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_tsdb_limits.c — what the store accepts it keeps (issue 22).
 *
 *  - a sample ten years ahead of the clock is refused (the flag named), and a
 *    store holding history keeps all of it through maintenance and restart;
 *  - a store an older version left with such samples (a block of the future,
 *    a checkpointed lower bound ahead of the clock, a future sample in the WAL)
 *    recovers on open: history kept, current writes accepted;
 *  - a series of 4,097 labels is refused with the limit named, and what is
 *    acknowledged after it survives a restart; a WAL of an older version with
 *    such a series replays everything else;
 *  - a series at the format caps (4,096 labels, 16 MiB of labels) goes through
 *    the WAL, a checkpoint and a block and is read back equal;
 *  - a commit or a checkpoint too large for one WAL record is split. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "tsdb/tsdb.h"
#include "tsdb/tsdb_int.h"
#include "tsdb_test.h"
#include "util/log.h"

im_rc tsdb__head_apply_record(tsdb__head_t *h, const uint8_t *rec, size_t len);
void tsdb__head_checkpoint(tsdb__head_t *h, im_buf_t *out);

#define HOUR    3600000LL
#define NOW     (1764600000000LL + 1234567) /* 2025-12-01, not on a 2 h boundary */
#define TEN_Y   (10LL * 365 * 24 * HOUR)
#define STEP_MS 60000LL

static int64_t g_now = NOW;

static int64_t clock_ms(void)
{
    return g_now;
}

static tsdb_t *open_store(int64_t max_future_ms, const tsdb_limits_t *lim)
{
    tsdb_opts_t o = {0};
    o.dir = tt_dir;
    o.no_background = true;
    o.fsync = TSDB_FSYNC_NEVER;
    o.wal_segment_bytes = 1 << 20;
    o.max_future_ms = max_future_ms;
    o.now_ms = clock_ms;
    if (lim) o.limits = *lim;
    tsdb_t *db;
    im_err_t err;
    if (tsdb_open(&o, &db, &err) != IM_OK) fail_msg("open: %s", err.msg);
    return db;
}

/* Samples of series named `metric` in [mint, maxt]. */
static size_t count(tsdb_t *db, const char *metric, int64_t mint, int64_t maxt)
{
    im_matcher_t *m;
    assert_int_equal(im_matcher_new(IM_MATCH_EQ, "__name__", 8, metric, strlen(metric), &m, NULL),
                     IM_OK);
    tsdb_queryable_t *q = tsdb_queryable(db);
    tsdb_series_set_t *set;
    assert_int_equal(q->vt->select(q, mint, maxt, &m, 1, NULL, &set, NULL), IM_OK);
    size_t n = 0;
    for (size_t s = 0; s < set->n; s++) {
        tsdb_iter_t *it = set->vt->iter(set, s);
        while (it->vt->next(it)) n++;
        it->vt->free(it);
    }
    set->vt->free(set);
    q->vt->close(q);
    im_matcher_free(m);
    return n;
}

/* One sample in its own commit; returns the add's code, msg its sentence. */
static im_rc add1(tsdb_t *db, const im_labels_t *ls, int64_t t, double v, char *msg, size_t cap)
{
    tsdb_appender_t *a = tsdb_appender(db);
    im_rc rc = tsdb_appender_add(a, 0, ls, t, v, NULL);
    if (msg) snprintf(msg, cap, "%s", tsdb_appender_error(a));
    if (rc == IM_OK) {
        im_err_t err;
        if (tsdb_appender_commit(a, &err) != IM_OK) fail_msg("commit: %s", err.msg);
    } else {
        tsdb_appender_rollback(a);
    }
    return rc;
}

/* History: 3 series, one sample a minute over the 8 hours before NOW. */
static const int64_t HIST0 = NOW - 8 * HOUR;
#define HIST_N ((int)(8 * HOUR / STEP_MS) + 1)

static void ingest_history(tsdb_t *db)
{
    const im_labels_t *ls[3];
    for (int i = 0; i < 3; i++) {
        char v[16];
        snprintf(v, sizeof v, "%d", i);
        ls[i] = im_labels_from_strs("__name__", "hist", "i", v, NULL);
    }
    for (int k = 0; k < HIST_N; k++) {
        tsdb_appender_t *a = tsdb_appender(db);
        for (int i = 0; i < 3; i++)
            assert_int_equal(tsdb_appender_add(a, 0, ls[i], HIST0 + k * STEP_MS, k, NULL), IM_OK);
        assert_int_equal(tsdb_appender_commit(a, NULL), IM_OK);
    }
    for (int i = 0; i < 3; i++) im_labels_unref(ls[i]);
}

static void maintain(tsdb_t *db)
{
    im_err_t err;
    if (tsdb_maintain(db, &err) != IM_OK) fail_msg("maintain: %s", err.msg);
}

/* ---- Samples ahead of the clock ---- */

static void test_future_sample_refused(void **state)
{
    (void)state;
    g_now = NOW;
    tsdb_t *db = open_store(0, NULL);
    ingest_history(db);
    maintain(db);
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    assert_true(st.blocks > 0);
    const im_labels_t *ls = im_labels_from_strs("__name__", "hist", "i", "0", NULL);
    char msg[IM_ERR_MSG_MAX];
    assert_int_equal(add1(db, ls, NOW + TEN_Y, 1, msg, sizeof msg), IM_EOUTOFBOUNDS);
    assert_non_null(strstr(msg, "--storage.tsdb.max-future"));
    assert_non_null(strstr(msg, "ahead of the clock"));
    /* just past the window: refused; inside it: accepted */
    assert_int_equal(add1(db, ls, NOW + 10 * 60000 + 1, 1, NULL, 0), IM_EOUTOFBOUNDS);
    assert_int_equal(add1(db, ls, NOW + 5 * 60000, 1, NULL, 0), IM_OK);
    tsdb_get_stats(db, &st);
    assert_int_equal(st.too_far_future, 2);
    maintain(db);
    assert_int_equal(count(db, "hist", HIST0, NOW), 3 * HIST_N);
    tsdb_close(db);
    /* restart, time goes on: everything kept, current writes accepted */
    g_now = NOW + HOUR;
    db = open_store(0, NULL);
    assert_int_equal(count(db, "hist", HIST0, NOW), 3 * HIST_N);
    assert_int_equal(add1(db, ls, NOW + 30 * 60000, 2, NULL, 0), IM_OK);
    maintain(db);
    assert_int_equal(count(db, "hist", HIST0, NOW + HOUR), 3 * HIST_N + 2);
    tsdb_close(db);
    im_labels_unref(ls);
}

/* The store an older version left: it accepted samples ten years ahead (here:
 * the check switched off), persisted every window up to them (raising the
 * head's lower bound past the clock), flushed one into a block, and kept a
 * second one in the WAL. Time retention never counts from them. */
static void test_future_store_recovers(void **state)
{
    (void)state;
    g_now = NOW;
    tsdb_t *db = open_store(-1, NULL);
    ingest_history(db);
    const im_labels_t *ls = im_labels_from_strs("__name__", "hist", "i", "0", NULL);
    assert_int_equal(add1(db, ls, NOW + TEN_Y, 1, NULL, 0), IM_OK);
    maintain(db);
    /* retention (15 d) counts back from the clock, not from ten years ahead */
    assert_int_equal(count(db, "hist", HIST0, NOW), 3 * HIST_N);
    im_err_t err;
    assert_int_equal(tsdb_flush_head(db, &err), IM_OK);
    assert_int_equal(add1(db, ls, NOW + TEN_Y + 2 * HOUR, 2, NULL, 0), IM_OK);
    /* the lower bound is now ahead of the clock: current writes refused */
    assert_int_equal(add1(db, ls, NOW + 1000, 3, NULL, 0), IM_EOUTOFBOUNDS);
    tsdb_close(db);

    db = open_store(0, NULL); /* the default window again */
    assert_int_equal(count(db, "hist", HIST0, NOW), 3 * HIST_N);
    assert_int_equal(count(db, "hist", NOW + HOUR, INT64_MAX), 0); /* set aside */
    char msg[IM_ERR_MSG_MAX];
    assert_int_equal(add1(db, ls, NOW + 1000, 3, msg, sizeof msg), IM_OK);
    const im_labels_t *l2 = im_labels_from_strs("__name__", "hist", "i", "2", NULL);
    assert_int_equal(add1(db, l2, NOW + 2000, 3, NULL, 0), IM_OK);
    maintain(db);
    assert_int_equal(count(db, "hist", HIST0, NOW + HOUR), 3 * HIST_N + 2);
    tsdb_close(db);
    /* again, with maintenance in between: nothing lost */
    g_now = NOW + 3 * HOUR;
    db = open_store(0, NULL);
    maintain(db);
    assert_int_equal(count(db, "hist", HIST0, NOW + HOUR), 3 * HIST_N + 2);
    tsdb_close(db);
    /* the future block is still on disk (not deleted, not loaded) */
    char bd[300];
    snprintf(bd, sizeof bd, "%s/blocks", tt_dir);
    DIR *d = opendir(bd);
    assert_non_null(d);
    int future = 0;
    char want[40];
    snprintf(want, sizeof want, "b-%016llx",
             (unsigned long long)((NOW + TEN_Y) / (2 * HOUR) * (2 * HOUR)));
    for (struct dirent *de; (de = readdir(d));)
        if (strncmp(de->d_name, want, strlen(want)) == 0) future++;
    closedir(d);
    assert_int_equal(future, 1);
    im_labels_unref(ls);
    im_labels_unref(l2);
}

/* ---- Labels ---- */

static const im_labels_t *many_labels(uint32_t n, size_t value_bytes)
{
    im_labels_builder_t b;
    im_lb_init(&b);
    im_lb_set(&b, "__name__", 8, "wide", 4);
    size_t cap = value_bytes + 16;
    char *v = im_malloc(cap);
    for (uint32_t i = 1; i < n; i++) {
        char nm[16];
        int nl = snprintf(nm, sizeof nm, "l%05u", i);
        int vl = snprintf(v, cap, "%u", i);
        size_t len = IM_MAX(value_bytes, (size_t)vl);
        for (size_t k = (size_t)vl; k < len; k++) v[k] = (char)('a' + (k + i) % 26);
        im_lb_set(&b, nm, (size_t)nl, v, len);
    }
    im_free(v);
    const im_labels_t *ls = im_lb_build(&b);
    im_lb_free(&b);
    assert_int_equal(ls->n, n);
    return ls;
}

static void test_too_many_labels(void **state)
{
    (void)state;
    g_now = NOW;
    tsdb_t *db = open_store(0, NULL);
    const im_labels_t *wide = many_labels(4097, 2);
    const im_labels_t *ok = im_labels_from_strs("__name__", "after", NULL);
    char msg[IM_ERR_MSG_MAX];
    assert_int_equal(add1(db, wide, NOW - 1000, 1, msg, sizeof msg), IM_ELIMIT);
    assert_non_null(strstr(msg, "4097 labels"));
    assert_non_null(strstr(msg, "--storage.tsdb.max-labels-per-series"));
    for (int k = 0; k < 10; k++) assert_int_equal(add1(db, ok, NOW - 1000 + k, k, NULL, 0), IM_OK);
    maintain(db);
    tsdb_close(db);
    db = open_store(0, NULL);
    assert_int_equal(count(db, "after", 0, NOW), 10);
    assert_int_equal(count(db, "wide", 0, NOW), 0);
    im_err_t err;
    assert_int_equal(tsdb_flush_head(db, &err), IM_OK);
    tsdb_close(db);
    db = open_store(0, NULL);
    assert_int_equal(count(db, "after", 0, NOW), 10);
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    assert_int_equal(st.blocks_corrupt, 0);
    tsdb_close(db);
    im_labels_unref(wide);
    im_labels_unref(ok);
}

static void test_limit_settings(void **state)
{
    (void)state;
    g_now = NOW;
    tsdb_limits_t lim = {.max_labels = 10,
                         .max_label_name_bytes = 8,
                         .max_label_value_bytes = 100,
                         .max_series_bytes = 150};
    tsdb_t *db = open_store(0, &lim);
    char msg[IM_ERR_MSG_MAX];
    const im_labels_t *l10 = many_labels(10, 2), *l11 = many_labels(11, 2);
    assert_int_equal(add1(db, l10, NOW, 1, NULL, 0), IM_OK);
    assert_int_equal(add1(db, l11, NOW, 1, msg, sizeof msg), IM_ELIMIT);
    assert_non_null(strstr(msg, "limit of 10 labels"));
    const im_labels_t *lname = im_labels_from_strs("__name__", "x", "abcdefghi", "1", NULL);
    assert_int_equal(add1(db, lname, NOW, 1, msg, sizeof msg), IM_ELIMIT);
    assert_non_null(strstr(msg, "--storage.tsdb.max-label-name-bytes"));
    const im_labels_t *lval = many_labels(2, 101);
    assert_int_equal(add1(db, lval, NOW, 1, msg, sizeof msg), IM_ELIMIT);
    assert_non_null(strstr(msg, "--storage.tsdb.max-label-value-bytes"));
    const im_labels_t *lser = many_labels(3, 80);
    assert_int_equal(add1(db, lser, NOW, 1, msg, sizeof msg), IM_ELIMIT);
    assert_non_null(strstr(msg, "--storage.tsdb.max-series-bytes"));
    tsdb_get_stats(db, &(tsdb_stats_t){0});
    tsdb_close(db);
    /* settings above the format caps are refused at open */
    tsdb_limits_t bad[] = {{.max_labels = TSDB_FMT_MAX_LABELS + 1},
                           {.max_series_bytes = TSDB_FMT_MAX_SERIES_BYTES + 1},
                           {.max_label_value_bytes = TSDB_FMT_MAX_SERIES_BYTES + 1}};
    for (size_t i = 0; i < IM_ARRAY_LEN(bad); i++) {
        tsdb_opts_t o = {.dir = NULL, .no_background = true, .limits = bad[i]};
        tsdb_t *d2;
        im_err_t err;
        assert_int_equal(tsdb_open(&o, &d2, &err), IM_EINVAL);
        assert_non_null(strstr(err.msg, "--storage.tsdb.max-"));
    }
    /* the block writer refuses what a reader would (second line of defence) */
    const im_labels_t *wide = many_labels(4097, 1);
    char bd[300];
    snprintf(bd, sizeof bd, "%s/bw", tt_dir);
    assert_int_equal(mkdir(bd, 0755), 0);
    tsdb__bwriter_t *w;
    assert_int_equal(tsdb__bwriter_new(bd, 0, 10, 1, 1, &w, NULL), IM_OK);
    int64_t t = 5;
    double v = 1;
    im_err_t err;
    assert_int_equal(tsdb__bwriter_add(w, wide, &t, &v, 1, &err), IM_ELIMIT);
    tsdb__bwriter_abort(w);
    im_labels_unref(wide);
    im_labels_unref(l10);
    im_labels_unref(l11);
    im_labels_unref(lname);
    im_labels_unref(lval);
    im_labels_unref(lser);
}

/* A WAL an older version wrote: a commit with a 4,097-label series and a good
 * one, then more good commits. The replay skips only that series. */
static void put_commit(im_buf_t *seg, uint32_t id, const im_labels_t *ls, int64_t t0, int n)
{
    im_buf_t r;
    im_buf_init(&r, 0);
    (void)im_buf_putc(&r, TSDB__REC_COMMIT);
    tsdb__put_uvarint(&r, ls ? 1 : 0);
    if (ls) {
        tsdb__put_uvarint(&r, id);
        tsdb__put_uvarint(&r, ls->n);
        for (uint32_t i = 0; i < ls->n; i++) {
            tsdb__put_uvarint(&r, ls->l[i].name->len);
            (void)im_buf_append(&r, ls->l[i].name->s, ls->l[i].name->len);
            tsdb__put_uvarint(&r, ls->l[i].value->len);
            (void)im_buf_append(&r, ls->l[i].value->s, ls->l[i].value->len);
        }
    }
    tsdb__put_uvarint(&r, (uint64_t)n);
    tsdb__put_varint(&r, t0);
    for (int k = 0; k < n; k++) {
        tsdb__put_uvarint(&r, id);
        tsdb__put_varint(&r, (int64_t)k * 1000);
        uint8_t vb[8];
        tsdb__put_u64(vb, tt_dbits((double)k));
        (void)im_buf_append(&r, vb, 8);
    }
    tsdb__wal_frame(seg, (const uint8_t *)r.data, r.len);
    im_buf_free(&r);
}

static void test_old_wal_with_wide_series(void **state)
{
    (void)state;
    g_now = NOW;
    char p[512];
    snprintf(p, sizeof p, "%s/wal", tt_dir);
    assert_int_equal(mkdir(p, 0755), 0);
    im_buf_t seg;
    im_buf_init(&seg, 0);
    (void)im_buf_append(&seg, "IMWAL\0\0\1", 8);
    const im_labels_t *a = im_labels_from_strs("__name__", "before", NULL);
    const im_labels_t *wide = many_labels(4097, 2);
    const im_labels_t *b = im_labels_from_strs("__name__", "after", NULL);
    put_commit(&seg, 1, a, NOW - 10000, 3);
    put_commit(&seg, 2, wide, NOW - 10000, 3);
    put_commit(&seg, 3, b, NOW - 10000, 3);
    put_commit(&seg, 3, NULL, NOW - 5000, 4); /* more samples of series 3 */
    snprintf(p, sizeof p, "%s/wal/00000001", tt_dir);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(seg.data, 1, seg.len, f), seg.len);
    fclose(f);
    im_buf_free(&seg);
    tsdb_t *db = open_store(0, NULL);
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    assert_int_equal(st.wal_corruptions, 0);
    assert_int_equal(st.head_series, 2);
    assert_int_equal(count(db, "before", 0, NOW), 3);
    assert_int_equal(count(db, "after", 0, NOW), 7);
    assert_int_equal(count(db, "wide", 0, NOW), 0);
    im_err_t err;
    assert_int_equal(tsdb_flush_head(db, &err), IM_OK); /* blocks write and read back */
    tsdb_close(db);
    db = open_store(0, NULL);
    tsdb_get_stats(db, &st);
    assert_int_equal(st.blocks_corrupt, 0);
    assert_int_equal(count(db, "after", 0, NOW), 7);
    tsdb_close(db);
    im_labels_unref(a);
    im_labels_unref(b);
    im_labels_unref(wide);
}

/* ---- At the format caps ---- */

static void test_series_at_format_caps(void **state)
{
    (void)state;
    g_now = NOW;
    tsdb_limits_t lim = {.max_series_bytes = TSDB_FMT_MAX_SERIES_BYTES};
    /* 4096 labels with values so that names + values are exactly 16 MiB */
    const im_labels_t *probe = many_labels(TSDB_FMT_MAX_LABELS, 1);
    uint64_t names = 0;
    for (uint32_t i = 0; i < probe->n; i++) names += probe->l[i].name->len;
    im_labels_unref(probe);
    size_t per = (size_t)((TSDB_FMT_MAX_SERIES_BYTES - names - 4) / (TSDB_FMT_MAX_LABELS - 1));
    const im_labels_t *big = many_labels(TSDB_FMT_MAX_LABELS, per);
    uint64_t total = 0;
    for (uint32_t i = 0; i < big->n; i++) total += big->l[i].name->len + big->l[i].value->len;
    assert_true(total <= TSDB_FMT_MAX_SERIES_BYTES);
    assert_true(total > TSDB_FMT_MAX_SERIES_BYTES - TSDB_FMT_MAX_LABELS);
    tsdb_t *db = open_store(0, &lim);
    for (int k = 0; k < 5; k++) assert_int_equal(add1(db, big, NOW - 5000 + k, k, NULL, 0), IM_OK);
    tsdb_close(db);
    /* WAL replay */
    db = open_store(0, &lim);
    assert_int_equal(count(db, "wide", 0, NOW), 5);
    im_err_t err;
    assert_int_equal(tsdb_flush_head(db, &err), IM_OK); /* block + checkpoint */
    tsdb_close(db);
    /* from the block, with the checkpoint replayed; a lower setting reads it too */
    db = open_store(0, NULL);
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    assert_int_equal(st.blocks_corrupt, 0);
    assert_int_equal(st.blocks, 1);
    im_matcher_t *m;
    assert_int_equal(im_matcher_new(IM_MATCH_EQ, "__name__", 8, "wide", 4, &m, NULL), IM_OK);
    tsdb_queryable_t *q = tsdb_queryable(db);
    tsdb_series_set_t *set;
    assert_int_equal(q->vt->select(q, 0, NOW, &m, 1, NULL, &set, NULL), IM_OK);
    assert_int_equal(set->n, 1);
    assert_true(im_labels_equal(set->series[0].labels, big));
    set->vt->free(set);
    q->vt->close(q);
    im_matcher_free(m);
    assert_int_equal(count(db, "wide", 0, NOW), 5);
    tsdb_close(db);
    im_labels_unref(big);
}

/* One commit of more samples than one record holds, and a series whose head
 * chunks exceed one record: both split, both replay. */
static void test_split_records(void **state)
{
    (void)state;
    g_now = NOW;
    /* random values and irregular steps (~18 bytes a sample in a chunk), so
     * 1.2 million samples make a checkpoint of over 16 MiB */
    enum { N = 1200000 };
    tsdb_t *db = open_store(0, NULL);
    const im_labels_t *ls = im_labels_from_strs("__name__", "dense", NULL);
    tsdb_appender_t *a = tsdb_appender(db);
    uint64_t rng = 42;
    int64_t t = NOW - (int64_t)N * 10000;
    for (int k = 0; k < N; k++) {
        t += 1 + (int64_t)(tt_xorshift(&rng) % 10000);
        assert_int_equal(tsdb_appender_add(a, 0, ls, t, tt_bitsd(tt_xorshift(&rng) >> 2), NULL),
                         IM_OK);
    }
    im_err_t err;
    assert_int_equal(tsdb_appender_commit(a, &err), IM_OK);
    /* the checkpoint of the head: several records, each below the cap, and
     * they rebuild the series */
    im_buf_t ck;
    im_buf_init(&ck, 0);
    tsdb__head_checkpoint(db->head, &ck);
    size_t off = 0, nrec = 0;
    while (off < ck.len) {
        uint32_t rl = tsdb__get_u32((const uint8_t *)ck.data + off);
        assert_true(rl <= TSDB_FMT_MAX_WAL_RECORD);
        off += 8 + rl;
        nrec++;
    }
    if (nrec < 3)
        fail_msg("checkpoint of %zu bytes in %zu records", ck.len,
                 nrec); /* state + two parts or more */
    tsdb__head_t *h = tsdb__head_new(2 * HOUR);
    h->replay_max_t = INT64_MAX;
    assert_int_equal(tsdb__wal_scan((const uint8_t *)ck.data, ck.len,
                                    (tsdb__wal_rec_fn)tsdb__head_apply_record, h),
                     ck.len);
    assert_int_equal(h->nsamples, N);
    tsdb__head_free(h);
    im_buf_free(&ck);
    tsdb_close(db);
    db = open_store(0, NULL);
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    assert_int_equal(st.wal_corruptions, 0);
    assert_int_equal(st.head_samples, N);
    tsdb_close(db);
    im_labels_unref(ls);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_future_sample_refused, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_future_store_recovers, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_too_many_labels, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_limit_settings, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_old_wal_with_wide_series, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_series_at_format_caps, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_split_records, tt_setup, tt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

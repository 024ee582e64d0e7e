/* test_fanout.c — the fanout store (storage/storage.h): samples reach the
 * primary and every secondary, ref-only adds give the secondaries the labels,
 * the primary's rejections stop the tee and are what add answers, a
 * secondary's rejection or failed commit comes back from commit while the
 * primary keeps the data, a failed primary commit rolls the secondaries back,
 * rollback reaches everyone, and reads and stats are the primary's. The
 * secondaries are a real memory-only tsdb and a recording store that can be
 * told to refuse. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

#include "storage/storage.h"
#include "tsdb/tsdb.h"
#include "util/mem.h"

/* ---- A recording store ---- */

typedef struct rec_store {
    storage_t pub; /* must be first */
    im_rc add_rc;  /* what add answers (IM_OK: records the sample) */
    im_rc commit_rc;
    size_t committed, pending, commits, rollbacks;
    char last[256];         /* labels of the last recorded sample */
    storage_ref_t last_ref; /* and the ref it came with */
} rec_store_t;

typedef struct rec_app {
    storage_appender_t pub; /* must be first */
    rec_store_t *s;
    size_t n;
} rec_app_t;

static im_rc ra_add(storage_appender_t *a, storage_ref_t ref, const im_labels_t *ls, int64_t t,
                    double v, storage_ref_t *out)
{
    rec_app_t *ra = (rec_app_t *)a;
    if (ra->s->add_rc != IM_OK) return ra->s->add_rc;
    ra->s->last_ref = ref;
    if (!ls && ref == 0) return IM_EINVAL;
    if (ls) {
        im_buf_t b;
        im_buf_init(&b, 0);
        (void)im_labels_format(ls, &b);
        snprintf(ra->s->last, sizeof ra->s->last, "%s", b.data);
        im_buf_free(&b);
    }
    ra->n++;
    ra->s->pending++;
    if (out) *out = 7;
    return IM_OK;
}
static im_rc ra_commit(storage_appender_t *a, im_err_t *err)
{
    rec_app_t *ra = (rec_app_t *)a;
    rec_store_t *s = ra->s;
    s->commits++;
    s->pending -= ra->n;
    im_rc rc = s->commit_rc;
    if (rc == IM_OK)
        s->committed += ra->n;
    else
        im_err_set(err, rc, "recording store refuses the commit");
    im_free(ra);
    return rc;
}
static void ra_rollback(storage_appender_t *a)
{
    rec_app_t *ra = (rec_app_t *)a;
    ra->s->rollbacks++;
    ra->s->pending -= ra->n;
    im_free(ra);
}
static const char *ra_error(const storage_appender_t *a)
{
    return ((const rec_app_t *)a)->s->add_rc != IM_OK ? "recording store refuses" : "";
}
static const storage_appender_vt_t rec_app_vt = {ra_add, ra_commit, ra_rollback, ra_error};
static storage_appender_t *rs_appender(storage_t *st)
{
    rec_app_t *ra = im_calloc(1, sizeof *ra);
    ra->pub.vt = &rec_app_vt;
    ra->s = (rec_store_t *)st;
    return &ra->pub;
}
static const storage_vt_t rec_vt = {rs_appender, NULL, NULL, NULL, NULL};

static tsdb_t *open_mem(void)
{
    tsdb_opts_t o = {0};
    o.no_background = true;
    tsdb_t *db;
    assert_int_equal(tsdb_open(&o, &db, NULL), IM_OK);
    return db;
}

/* Samples of {job="a"} in db over all time. */
static size_t count_samples(storage_t *s)
{
    storage_queryable_t *q = storage_queryable(s);
    im_matcher_t *m;
    assert_int_equal(im_matcher_new(IM_MATCH_EQ, "job", 3, "a", 1, &m, NULL), IM_OK);
    storage_series_set_t *set;
    assert_int_equal(q->vt->select(q, INT64_MIN, INT64_MAX, &m, 1, NULL, &set, NULL), IM_OK);
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++) {
        storage_iter_t *it = set->vt->iter(set, i);
        while (it->vt->next(it)) n++;
        it->vt->free(it);
    }
    set->vt->free(set);
    q->vt->close(q);
    im_matcher_free(m);
    return n;
}

static void test_tee(void **state)
{
    (void)state;
    tsdb_t *pdb = open_mem(), *sdb = open_mem();
    rec_store_t rec = {.pub = {&rec_vt}};
    storage_t *secs[2] = {tsdb_storage(sdb), &rec.pub};
    storage_t *f = storage_fanout_new(tsdb_storage(pdb), secs, 2);
    const im_labels_t *ls = im_labels_from_strs("__name__", "up", "job", "a", NULL);

    storage_appender_t *a = storage_appender(f);
    storage_ref_t ref = 0;
    assert_int_equal(storage_appender_add(a, 0, ls, 1000, 1, &ref), IM_OK);
    assert_true(ref != 0);
    /* ref only: the secondaries still get the labels */
    rec.last[0] = 0;
    assert_int_equal(storage_appender_add(a, ref, NULL, 2000, 2, NULL), IM_OK);
    assert_string_equal(rec.last, "up{job=\"a\"}");
    assert_int_equal(rec.last_ref, 0); /* the primary's refs are not passed on */
    /* the primary refuses: nobody else sees it, add answers the primary's */
    assert_int_equal(storage_appender_add(a, ref, NULL, 1500, 3, NULL), IM_EOUTOFORDER);
    assert_string_equal(storage_appender_error(a), "out of order sample");
    assert_int_equal(rec.pending, 2);
    assert_int_equal(storage_appender_commit(a, NULL), IM_OK);
    assert_int_equal(rec.committed, 2);
    assert_int_equal(count_samples(tsdb_storage(pdb)), 2);
    assert_int_equal(count_samples(tsdb_storage(sdb)), 2);
    /* reads and stats are the primary's */
    assert_int_equal(count_samples(f), 2);
    storage_stats_t st;
    storage_get_stats(f, &st);
    assert_int_equal(st.samples_appended, 2);
    assert_int_equal(st.out_of_order, 1);

    /* rollback reaches every store */
    a = storage_appender(f);
    assert_int_equal(storage_appender_add(a, 0, ls, 3000, 4, NULL), IM_OK);
    storage_appender_rollback(a);
    assert_int_equal(rec.rollbacks, 1);
    assert_int_equal(rec.pending, 0);
    assert_int_equal(count_samples(tsdb_storage(pdb)), 2);
    assert_int_equal(count_samples(tsdb_storage(sdb)), 2);

    /* a secondary refuses: the add succeeds (the primary has it), commit says so */
    rec.add_rc = IM_ELIMIT;
    a = storage_appender(f);
    assert_int_equal(storage_appender_add(a, 0, ls, 4000, 5, NULL), IM_OK);
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(storage_appender_commit(a, &err), IM_ELIMIT);
    assert_string_equal(err.msg, "secondary storage 1: recording store refuses");
    assert_int_equal(count_samples(tsdb_storage(pdb)), 3);
    assert_int_equal(count_samples(tsdb_storage(sdb)), 3);
    rec.add_rc = IM_OK;

    /* a secondary's commit fails: reported, the others keep theirs */
    rec.commit_rc = IM_EIO;
    a = storage_appender(f);
    assert_int_equal(storage_appender_add(a, 0, ls, 5000, 6, NULL), IM_OK);
    im_err_clear(&err);
    assert_int_equal(storage_appender_commit(a, &err), IM_EIO);
    assert_string_equal(err.msg, "secondary storage 1: recording store refuses the commit");
    assert_int_equal(count_samples(tsdb_storage(pdb)), 4);
    rec.commit_rc = IM_OK;

    storage_fanout_free(f);
    im_labels_unref(ls);
    tsdb_close(pdb);
    tsdb_close(sdb);
}

/* A primary whose commit fails: the secondaries are rolled back, not committed;
 * a primary that cannot name a ref leaves the secondaries without the sample. */
static void test_primary_fails(void **state)
{
    (void)state;
    rec_store_t prim = {.pub = {&rec_vt}}, sec = {.pub = {&rec_vt}};
    storage_t *secs[1] = {&sec.pub};
    storage_t *f = storage_fanout_new(&prim.pub, secs, 1);
    const im_labels_t *ls = im_labels_from_strs("__name__", "up", "job", "a", NULL);
    prim.commit_rc = IM_EIO;
    storage_appender_t *a = storage_appender(f);
    assert_int_equal(storage_appender_add(a, 0, ls, 1000, 1, NULL), IM_OK);
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(storage_appender_commit(a, &err), IM_EIO);
    assert_string_equal(err.msg, "recording store refuses the commit");
    assert_int_equal(sec.commits, 0);
    assert_int_equal(sec.rollbacks, 1);
    assert_int_equal(sec.committed, 0);
    prim.commit_rc = IM_OK;
    /* the primary refuses: the secondary never sees the sample */
    prim.add_rc = IM_EOUTOFBOUNDS;
    a = storage_appender(f);
    assert_int_equal(storage_appender_add(a, 0, ls, 1000, 1, NULL), IM_EOUTOFBOUNDS);
    assert_string_equal(storage_appender_error(a), "recording store refuses");
    assert_int_equal(sec.pending, 0);
    prim.add_rc = IM_OK;
    /* no series_labels on the primary: a ref-only add cannot be teed */
    assert_int_equal(storage_appender_add(a, 7, NULL, 2000, 1, NULL), IM_OK);
    im_err_clear(&err);
    assert_int_equal(storage_appender_commit(a, &err), IM_ENOTFOUND);
    assert_string_equal(err.msg, "secondary storage 0: the primary cannot name series ref 7");
    storage_stats_t st;
    storage_get_stats(f, &st); /* the primary keeps none: zeros */
    assert_int_equal(st.samples_appended, 0);
    storage_fanout_free(f);
    im_labels_unref(ls);
}

/* No secondaries: the fanout is the primary. */
static void test_no_secondaries(void **state)
{
    (void)state;
    tsdb_t *db = open_mem();
    storage_t *f = storage_fanout_new(tsdb_storage(db), NULL, 0);
    const im_labels_t *ls = im_labels_from_strs("__name__", "up", "job", "a", NULL);
    storage_appender_t *a = storage_appender(f);
    assert_int_equal(storage_appender_add(a, 0, ls, 1000, 1, NULL), IM_OK);
    assert_int_equal(storage_appender_commit(a, NULL), IM_OK);
    assert_int_equal(count_samples(f), 1);
    storage_postings_stats_t ps;
    storage_get_postings_stats(f, 10, &ps);
    assert_int_equal(ps.nseries_by_metric, 1);
    assert_string_equal(ps.series_by_metric[0].name, "up");
    storage_postings_stats_free(&ps);
    storage_fanout_free(f);
    im_labels_unref(ls);
    tsdb_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tee),
        cmocka_unit_test(test_primary_fails),
        cmocka_unit_test(test_no_secondaries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

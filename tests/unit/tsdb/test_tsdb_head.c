/* test_tsdb_head.c — the memory-only store: appender semantics (refs, rejection
 * of out-of-order / duplicate / out-of-bounds samples, atomic commit, rollback,
 * stale NaN), postings and all four matcher kinds, select ordering, iterators
 * with seek, label names/values, the series limit, and concurrent appenders and
 * queriers. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "tsdb/tsdb.h"
#include "tsdb/tsdb_int.h"

static tsdb_t *open_mem(void)
{
    tsdb_opts_t o = {0};
    o.no_background = true;
    tsdb_t *db;
    assert_int_equal(tsdb_open(&o, &db, NULL), IM_OK);
    return db;
}

static im_matcher_t *mk(im_match_type_t t, const char *n, const char *v)
{
    im_matcher_t *m;
    assert_int_equal(im_matcher_new(t, n, strlen(n), v, strlen(v), &m, NULL), IM_OK);
    return m;
}

/* Number of series selected by the matchers over all time. */
static size_t count_sel(tsdb_t *db, im_matcher_t *const *ms, size_t n)
{
    tsdb_queryable_t *q = tsdb_queryable(db);
    tsdb_series_set_t *set;
    assert_int_equal(q->vt->select(q, INT64_MIN, INT64_MAX, ms, n, NULL, &set, NULL), IM_OK);
    size_t r = set->n;
    for (size_t i = 1; i < set->n; i++)
        assert_true(im_labels_compare(set->series[i - 1].labels, set->series[i].labels) < 0);
    set->vt->free(set);
    q->vt->close(q);
    return r;
}

static void test_append_rules(void **state)
{
    (void)state;
    tsdb_t *db = open_mem();
    const im_labels_t *ls = im_labels_from_strs("__name__", "up", "job", "a", NULL);
    tsdb_appender_t *a = tsdb_appender(db);
    tsdb_ref_t ref = 0;
    assert_int_equal(tsdb_appender_add(a, 0, ls, 1000, 1, &ref), IM_OK);
    assert_true(ref != 0);
    assert_int_equal(tsdb_appender_add(a, ref, NULL, 2000, 2, NULL), IM_OK);
    assert_int_equal(tsdb_appender_add(a, ref, NULL, 1500, 3, NULL), IM_EOUTOFORDER);
    assert_int_equal(tsdb_appender_add(a, ref, NULL, 2000, 2, NULL), IM_OK); /* same value */
    assert_int_equal(tsdb_appender_add(a, ref, NULL, 2000, 5, NULL), IM_EDUPLICATE);
    assert_int_equal(tsdb_appender_add(a, 999999, NULL, 2000, 5, NULL), IM_ENOTFOUND);
    assert_int_equal(tsdb_appender_commit(a, NULL), IM_OK);
    /* committed state is enforced by a new appender */
    a = tsdb_appender(db);
    assert_int_equal(tsdb_appender_add(a, ref, NULL, 1999, 1, NULL), IM_EOUTOFORDER);
    assert_int_equal(tsdb_appender_add(a, 0, ls, 3000, tsdb_stale_nan(), NULL), IM_OK);
    tsdb_appender_rollback(a);
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    assert_int_equal(st.samples_appended, 2);
    assert_int_equal(st.out_of_order, 2);
    assert_int_equal(st.duplicates, 1);
    assert_int_equal(st.head_series, 1);
    /* stale NaN stored bit-exact */
    a = tsdb_appender(db);
    assert_int_equal(tsdb_appender_add(a, ref, NULL, 3000, tsdb_stale_nan(), NULL), IM_OK);
    assert_int_equal(tsdb_appender_commit(a, NULL), IM_OK);
    im_matcher_t *m = mk(IM_MATCH_EQ, "job", "a");
    tsdb_queryable_t *q = tsdb_queryable(db);
    tsdb_series_set_t *set;
    assert_int_equal(q->vt->select(q, 0, 10000, &m, 1, NULL, &set, NULL), IM_OK);
    assert_int_equal(set->n, 1);
    tsdb_iter_t *it = set->vt->iter(set, 0);
    int64_t t;
    double v;
    assert_true(it->vt->next(it));
    it->vt->at(it, &t, &v);
    assert_int_equal(t, 1000);
    assert_true(it->vt->next(it));
    assert_true(it->vt->next(it));
    it->vt->at(it, &t, &v);
    assert_int_equal(t, 3000);
    assert_true(tsdb_is_stale(v));
    assert_false(it->vt->next(it));
    it->vt->free(it);
    set->vt->free(set);
    /* empty matcher list is an error */
    assert_int_equal(q->vt->select(q, 0, 10000, NULL, 0, NULL, &set, NULL), IM_EINVAL);
    q->vt->close(q);
    im_matcher_free(m);
    im_labels_unref(ls);
    tsdb_close(db);
}

static void test_matchers(void **state)
{
    (void)state;
    tsdb_t *db = open_mem();
    tsdb_appender_t *a = tsdb_appender(db);
    char pod[16], code[16];
    for (int i = 0; i < 40; i++) {
        snprintf(pod, sizeof pod, "pod-%02d", i);
        snprintf(code, sizeof code, "%d", 200 + (i % 4) * 100);
        const im_labels_t *ls = im_labels_from_strs("__name__", i < 30 ? "req_total" : "temp",
                                                    "pod", pod, "code", i % 5 ? code : "", NULL);
        assert_int_equal(tsdb_appender_add(a, 0, ls, 1000 + i, i, NULL), IM_OK);
        im_labels_unref(ls);
    }
    assert_int_equal(tsdb_appender_commit(a, NULL), IM_OK);
    im_matcher_t *ms[3];
    ms[0] = mk(IM_MATCH_EQ, "__name__", "req_total");
    assert_int_equal(count_sel(db, ms, 1), 30);
    ms[1] = mk(IM_MATCH_NEQ, "code", "200");
    /* 30 req series: 6 without code, 24 with: codes by i%4 among i%5 != 0 */
    size_t want = 0;
    for (int i = 0; i < 30; i++)
        if (i % 5 == 0 || i % 4 != 0) want++;
    assert_int_equal(count_sel(db, ms, 2), want);
    im_matcher_free(ms[1]);
    ms[1] = mk(IM_MATCH_RE, "code", "200|500");
    want = 0;
    for (int i = 0; i < 30; i++)
        if (i % 5 != 0 && (i % 4 == 0 || i % 4 == 3)) want++;
    assert_int_equal(count_sel(db, ms, 2), want);
    im_matcher_free(ms[1]);
    ms[1] = mk(IM_MATCH_RE, "code", "[34]00");
    want = 0;
    for (int i = 0; i < 30; i++)
        if (i % 5 != 0 && (i % 4 == 1 || i % 4 == 2)) want++;
    assert_int_equal(count_sel(db, ms, 2), want);
    im_matcher_free(ms[1]);
    ms[1] = mk(IM_MATCH_NRE, "code", "2.*|");
    want = 0;
    for (int i = 0; i < 30; i++)
        if (i % 5 != 0 && i % 4 != 0) want++;
    assert_int_equal(count_sel(db, ms, 2), want);
    im_matcher_free(ms[1]);
    ms[1] = mk(IM_MATCH_EQ, "code", ""); /* missing label */
    assert_int_equal(count_sel(db, ms, 2), 6);
    ms[2] = mk(IM_MATCH_RE, "pod", "pod-0.");
    assert_int_equal(count_sel(db, ms, 3), 2); /* pods 00 and 05 */
    im_matcher_free(ms[0]);
    ms[0] = mk(IM_MATCH_RE, "__name__", ".+");
    assert_int_equal(count_sel(db, ms, 1), 40);
    im_matcher_free(ms[0]);
    ms[0] = mk(IM_MATCH_EQ, "nope", "x");
    assert_int_equal(count_sel(db, ms, 1), 0);
    /* label names / values with and without matchers */
    tsdb_queryable_t *q = tsdb_queryable(db);
    tsdb_strlist_t l;
    assert_int_equal(q->vt->label_names(q, INT64_MIN, INT64_MAX, NULL, 0, &l, NULL), IM_OK);
    assert_int_equal(l.n, 3);
    assert_string_equal(l.v[0]->s, "__name__");
    assert_string_equal(l.v[1]->s, "code");
    assert_string_equal(l.v[2]->s, "pod");
    tsdb_strlist_free(&l);
    assert_int_equal(q->vt->label_values(q, "code", INT64_MIN, INT64_MAX, NULL, 0, &l, NULL),
                     IM_OK);
    assert_int_equal(l.n, 4);
    assert_string_equal(l.v[0]->s, "200");
    tsdb_strlist_free(&l);
    im_matcher_t *tm = mk(IM_MATCH_EQ, "__name__", "temp");
    assert_int_equal(q->vt->label_values(q, "__name__", INT64_MIN, INT64_MAX, &tm, 1, &l, NULL),
                     IM_OK);
    assert_int_equal(l.n, 1);
    tsdb_strlist_free(&l);
    /* time range restricts */
    assert_int_equal(q->vt->label_values(q, "pod", 1000, 1004, NULL, 0, &l, NULL), IM_OK);
    assert_int_equal(l.n, 5);
    tsdb_strlist_free(&l);
    /* series limit */
    tsdb_select_hints_t hints = {0};
    hints.max_series = 10;
    tsdb_series_set_t *set;
    im_err_t err;
    assert_int_equal(q->vt->select(q, INT64_MIN, INT64_MAX, &tm, 1, &hints, &set, &err), IM_OK);
    set->vt->free(set);
    im_matcher_free(tm);
    tm = mk(IM_MATCH_EQ, "__name__", "req_total");
    assert_int_equal(q->vt->select(q, INT64_MIN, INT64_MAX, &tm, 1, &hints, &set, &err), IM_ELIMIT);
    im_matcher_free(tm);
    q->vt->close(q);
    for (int i = 0; i < 3; i++) im_matcher_free(ms[i]);
    tsdb_close(db);
}

static void test_iter_seek_and_chunks(void **state)
{
    (void)state;
    tsdb_opts_t o = {0};
    o.no_background = true;
    o.block_range_ms = 3600 * 1000;
    tsdb_t *db;
    assert_int_equal(tsdb_open(&o, &db, NULL), IM_OK);
    const im_labels_t *ls = im_labels_from_strs("__name__", "x", NULL);
    tsdb_ref_t ref = 0;
    for (int i = 0; i < 1000; i++) {
        tsdb_appender_t *a = tsdb_appender(db);
        assert_int_equal(tsdb_appender_add(a, ref, ref ? NULL : ls, (int64_t)i * 10000, i, &ref),
                         IM_OK);
        assert_int_equal(tsdb_appender_commit(a, NULL), IM_OK);
    }
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    assert_true(st.head_chunks >= 1000 / 120 + 1);
    assert_int_equal(st.head_samples, 1000);
    im_matcher_t *m = mk(IM_MATCH_EQ, "__name__", "x");
    tsdb_queryable_t *q = tsdb_queryable(db);
    tsdb_series_set_t *set;
    assert_int_equal(q->vt->select(q, 100000, 5000000, &m, 1, NULL, &set, NULL), IM_OK);
    assert_int_equal(set->n, 1);
    tsdb_iter_t *it = set->vt->iter(set, 0);
    int64_t t;
    double v;
    assert_true(it->vt->seek(it, 0));
    it->vt->at(it, &t, &v);
    assert_int_equal(t, 100000);
    assert_true(it->vt->seek(it, 123456));
    it->vt->at(it, &t, &v);
    assert_int_equal(t, 130000);
    assert_true(it->vt->seek(it, 50)); /* never backwards */
    it->vt->at(it, &t, &v);
    assert_int_equal(t, 130000);
    assert_true(it->vt->next(it));
    it->vt->at(it, &t, &v);
    assert_int_equal(t, 140000);
    assert_true(it->vt->seek(it, 5000000));
    it->vt->at(it, &t, &v);
    assert_int_equal(v, 500);
    assert_false(it->vt->next(it));
    assert_false(it->vt->seek(it, 6000000));
    it->vt->free(it);
    set->vt->free(set);
    q->vt->close(q);
    im_matcher_free(m);
    im_labels_unref(ls);
    tsdb_close(db);
}

/* ---- Concurrency: appenders on several threads, queriers checking atomicity ---- */

typedef struct cctx {
    tsdb_t *db;
    int id;
    volatile int *stop;
} cctx_t;

static void *writer(void *arg)
{
    cctx_t *c = arg;
    char job[16];
    snprintf(job, sizeof job, "w%d", c->id);
    const im_labels_t *ls[10];
    tsdb_ref_t refs[10] = {0};
    char idx[16];
    for (int s = 0; s < 10; s++) {
        snprintf(idx, sizeof idx, "%d", s);
        ls[s] = im_labels_from_strs("__name__", "m", "job", job, "i", idx, NULL);
    }
    for (int round = 1; round <= 300; round++) {
        tsdb_appender_t *a = tsdb_appender(c->db);
        for (int s = 0; s < 10; s++) {
            im_rc rc = tsdb_appender_add(a, refs[s], refs[s] ? NULL : ls[s], round * 1000, round,
                                         &refs[s]);
            if (rc != IM_OK) abort();
        }
        if (tsdb_appender_commit(a, NULL) != IM_OK) abort();
    }
    for (int s = 0; s < 10; s++) im_labels_unref(ls[s]);
    return NULL;
}

static void *reader(void *arg)
{
    cctx_t *c = arg;
    im_matcher_t *m;
    if (im_matcher_new(IM_MATCH_EQ, "job", 3, "w0", 2, &m, NULL) != IM_OK) abort();
    tsdb_queryable_t *q = tsdb_queryable(c->db);
    int bad = 0;
    while (!*c->stop) {
        tsdb_series_set_t *set;
        if (q->vt->select(q, INT64_MIN, INT64_MAX, &m, 1, NULL, &set, NULL) != IM_OK) abort();
        /* All series of one writer are committed together: equal sample counts. */
        size_t first = SIZE_MAX;
        for (size_t i = 0; i < set->n; i++) {
            tsdb_iter_t *it = set->vt->iter(set, i);
            size_t n = 0;
            while (it->vt->next(it)) n++;
            it->vt->free(it);
            if (first == SIZE_MAX) first = n;
            if (n != first) bad++;
        }
        if (set->n != 0 && set->n != 10) bad++;
        set->vt->free(set);
    }
    q->vt->close(q);
    im_matcher_free(m);
    return (void *)(intptr_t)bad;
}

static void test_concurrency(void **state)
{
    (void)state;
    tsdb_t *db = open_mem();
    volatile int stop = 0;
    pthread_t w[4], r[2];
    cctx_t cw[4], cr[2];
    for (int i = 0; i < 2; i++) {
        cr[i] = (cctx_t){db, i, &stop};
        pthread_create(&r[i], NULL, reader, &cr[i]);
    }
    for (int i = 0; i < 4; i++) {
        cw[i] = (cctx_t){db, i, &stop};
        pthread_create(&w[i], NULL, writer, &cw[i]);
    }
    for (int i = 0; i < 4; i++) pthread_join(w[i], NULL);
    stop = 1;
    for (int i = 0; i < 2; i++) {
        void *res;
        pthread_join(r[i], &res);
        assert_int_equal((intptr_t)res, 0);
    }
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    assert_int_equal(st.samples_appended, 4 * 10 * 300);
    assert_int_equal(st.head_series, 40);
    tsdb_close(db);
}

/* Two appenders on the same series: the later commit's older samples are dropped. */
static void test_racing_appenders(void **state)
{
    (void)state;
    tsdb_t *db = open_mem();
    const im_labels_t *ls = im_labels_from_strs("__name__", "r", NULL);
    tsdb_appender_t *a = tsdb_appender(db), *b = tsdb_appender(db);
    assert_int_equal(tsdb_appender_add(a, 0, ls, 100, 1, NULL), IM_OK);
    assert_int_equal(tsdb_appender_add(b, 0, ls, 200, 2, NULL), IM_OK);
    assert_int_equal(tsdb_appender_commit(b, NULL), IM_OK);
    assert_int_equal(tsdb_appender_commit(a, NULL), IM_OK);
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    assert_int_equal(st.samples_appended, 1);
    assert_int_equal(st.out_of_order, 1);
    im_labels_unref(ls);
    tsdb_close(db);
}

static void test_memory_retention(void **state)
{
    (void)state;
    tsdb_opts_t o = {0};
    o.no_background = true;
    o.retention_ms = 1000000;
    tsdb_t *db;
    assert_int_equal(tsdb_open(&o, &db, NULL), IM_OK);
    const im_labels_t *ls = im_labels_from_strs("__name__", "x", NULL);
    tsdb_appender_t *a = tsdb_appender(db);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(tsdb_appender_add(a, 0, ls, i * 10000, i, NULL), IM_OK);
    assert_int_equal(tsdb_appender_commit(a, NULL), IM_OK);
    assert_int_equal(tsdb_maintain(db, NULL), IM_OK);
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    assert_true(st.head_samples < 1000);
    assert_true(st.head_mint_ms >= 9990000 - 1000000 - 120 * 10000);
    a = tsdb_appender(db);
    assert_int_equal(tsdb_appender_add(a, 0, ls, 0, 1, NULL), IM_EOUTOFBOUNDS);
    tsdb_appender_rollback(a);
    im_labels_unref(ls);
    tsdb_close(db);
}

/* The index directly: ids added out of order (WAL replay) stay sorted, set
 * operations on id lists. */
static void test_index_ops(void **state)
{
    (void)state;
    tsdb__index_t ix;
    tsdb__index_init(&ix);
    uint32_t ids[] = {5, 3, 9, 4, 1};
    const char *jobs[] = {"a", "b", "a", "a", "b"};
    for (size_t i = 0; i < 5; i++) {
        char n[8];
        snprintf(n, sizeof n, "%u", ids[i]);
        const im_labels_t *ls = im_labels_from_strs("__name__", "m", "job", jobs[i], "n", n, NULL);
        tsdb__index_add(&ix, ids[i], ls);
        im_labels_unref(ls);
    }
    tsdb__ids_t out = {0};
    im_matcher_t *m = mk(IM_MATCH_EQ, "job", "a");
    tsdb__index_select(&ix, &m, 1, &out);
    assert_int_equal(out.n, 3);
    assert_int_equal(out.v[0], 4);
    assert_int_equal(out.v[1], 5);
    assert_int_equal(out.v[2], 9);
    im_matcher_free(m);
    tsdb__index_select(&ix, NULL, 0, &out);
    assert_int_equal(out.n, 5);
    for (size_t i = 1; i < out.n; i++) assert_true(out.v[i - 1] < out.v[i]);
    m = mk(IM_MATCH_NRE, "n", "[13]");
    tsdb__index_select(&ix, &m, 1, &out);
    assert_int_equal(out.n, 3); /* 4, 5, 9 */
    im_matcher_free(m);
    tsdb__ids_free(&out);
    tsdb__ids_t a = {0}, b = {0}, r = {0};
    for (uint32_t i = 0; i < 10; i += 2) tsdb__ids_push(&a, i); /* 0 2 4 6 8 */
    for (uint32_t i = 0; i < 10; i += 3) tsdb__ids_push(&b, i); /* 0 3 6 9 */
    tsdb__ids_and(&a, &b, &r);
    assert_int_equal(r.n, 2);
    tsdb__ids_or(&a, &b, &r);
    assert_int_equal(r.n, 7);
    tsdb__ids_minus(&a, &b, &r);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.v[0], 2);
    tsdb__ids_free(&a);
    tsdb__ids_free(&b);
    tsdb__ids_free(&r);
    tsdb__index_free(&ix);
}

/* Cardinality statistics: counts, ordering (count desc, ties by name), limit. */
static void test_postings_stats(void **state)
{
    (void)state;
    tsdb_t *db = open_mem();
    tsdb_appender_t *a = tsdb_appender(db);
    static const char *const pods[] = {"p1", "p2", "p3"};
    for (size_t i = 0; i < 3; i++) {
        const im_labels_t *ls = im_labels_from_strs("__name__", "aa", "pod", pods[i], NULL);
        assert_int_equal(tsdb_appender_add(a, 0, ls, 1000, 1, NULL), IM_OK);
        im_labels_unref(ls);
        if (i < 2) {
            ls = im_labels_from_strs("__name__", "b", "pod", pods[i], "zone", "eu", NULL);
            assert_int_equal(tsdb_appender_add(a, 0, ls, 1000, 1, NULL), IM_OK);
            im_labels_unref(ls);
        }
    }
    const im_labels_t *ls = im_labels_from_strs("__name__", "c", NULL);
    assert_int_equal(tsdb_appender_add(a, 0, ls, 1000, 1, NULL), IM_OK);
    im_labels_unref(ls);
    assert_int_equal(tsdb_appender_commit(a, NULL), IM_OK);
    tsdb_postings_stats_t ps;
    tsdb_postings_stats(db, 10, &ps);
    /* pairs: __name__={aa,b,c}, pod={p1,p2,p3}, zone={eu} */
    assert_int_equal(ps.num_label_pairs, 7);
    assert_int_equal(ps.nseries_by_metric, 3);
    assert_string_equal(ps.series_by_metric[0].name, "aa");
    assert_int_equal(ps.series_by_metric[0].count, 3);
    assert_string_equal(ps.series_by_metric[1].name, "b");
    assert_string_equal(ps.series_by_metric[2].name, "c");
    assert_int_equal(ps.nvalues_by_label, 3); /* __name__ 3, pod 3 (tie: by name), zone 1 */
    assert_string_equal(ps.values_by_label[0].name, "__name__");
    assert_string_equal(ps.values_by_label[1].name, "pod");
    assert_string_equal(ps.values_by_label[2].name, "zone");
    assert_int_equal(ps.values_by_label[2].count, 1);
    assert_string_equal(ps.bytes_by_label[0].name, "pod"); /* 6 bytes vs "aa"+"b"+"c" = 4 */
    assert_int_equal(ps.bytes_by_label[0].count, 6);
    assert_int_equal(ps.bytes_by_label[1].count, 4);
    assert_string_equal(ps.series_by_pair[0].name, "__name__=aa");
    assert_int_equal(ps.series_by_pair[0].count, 3);
    assert_string_equal(ps.series_by_pair[1].name, "__name__=b");
    assert_string_equal(ps.series_by_pair[2].name, "pod=p1");
    tsdb_postings_stats_free(&ps);
    tsdb_postings_stats(db, 2, &ps);
    assert_int_equal(ps.nseries_by_pair, 2);
    assert_string_equal(ps.series_by_pair[1].name, "__name__=b");
    assert_int_equal(ps.nseries_by_metric, 2);
    tsdb_postings_stats_free(&ps);
    tsdb_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_rules),
        cmocka_unit_test(test_matchers),
        cmocka_unit_test(test_iter_seek_and_chunks),
        cmocka_unit_test(test_concurrency),
        cmocka_unit_test(test_index_ops),
        cmocka_unit_test(test_racing_appenders),
        cmocka_unit_test(test_memory_retention),
        cmocka_unit_test(test_postings_stats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

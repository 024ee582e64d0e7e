/* test_remote_encode.c — the sender's wire format (src/remote/encode.c) read
 * back by the receiver (src/http/remote_write.c): every value bit for bit (the
 * staleness NaN, -0, infinities, subnormals), timestamps (negative, zero), empty
 * and long label values, many series in one request; and metadata entries in a
 * request are skipped by the receiver. */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "http/server.h"
#include "remote/remote.h"
#include "tsdb/tsdb.h"

static uint64_t bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static void test_roundtrip(void **state)
{
    (void)state;
    tsdb_opts_t to;
    memset(&to, 0, sizeof to);
    to.no_background = true;
    to.max_future_ms = -1;
    tsdb_t *db;
    assert_int_equal(tsdb_open(&to, &db, NULL), IM_OK);
    enum { NS = 300, NP = 7 };
    const im_labels_t *ls[NS];
    int64_t t[NP] = {-5000, 0, 1, 1000, 1001, 1700000000000LL, 1700000000001LL};
    double v[NP] = {tsdb_stale_nan(), -0.0, INFINITY, -INFINITY, 5e-324, 0.1, 1e308};
    char name[32], val[600];
    remote_series_t rs[NS];
    for (int i = 0; i < NS; i++) {
        snprintf(name, sizeof name, "m_%d", i % 7);
        memset(val, 'a' + i % 26, sizeof val - 1);
        val[i % (sizeof val - 1)] = 0;
        char idx[16];
        snprintf(idx, sizeof idx, "%d", i);
        ls[i] = im_labels_from_strs("__name__", name, "i", idx, "long", val, NULL);
        rs[i] = (remote_series_t){ls[i], t, v, NP};
    }
    remote_metadata_t md[] = {{"m_0", "counter", "help text", ""}, {"m_1", "gauge", NULL, "s"}};
    im_buf_t raw, comp;
    im_buf_init(&raw, 0);
    im_buf_init(&comp, 0);
    remote_encode_write_request(&raw, rs, NS, md, 2);
    assert_int_equal(remote_snappy(&raw, &comp), IM_OK);
    http_rw_stats_t st;
    memset(&st, 0, sizeof st);
    im_err_t e;
    im_err_clear(&e);
    assert_int_equal(
        http_remote_write_decode_append(tsdb_storage(db), comp.data, comp.len, &st, &e), IM_OK);
    assert_int_equal(st.series, NS);
    assert_int_equal(st.samples, NS * NP);
    tsdb_queryable_t *q = tsdb_queryable(db);
    im_matcher_t *m;
    assert_int_equal(im_matcher_new(IM_MATCH_RE, "__name__", 8, "m_.*", 4, &m, NULL), IM_OK);
    tsdb_series_set_t *set;
    assert_int_equal(q->vt->select(q, INT64_MIN, INT64_MAX, &m, 1, NULL, &set, NULL), IM_OK);
    assert_int_equal(set->n, NS);
    for (size_t i = 0; i < set->n; i++) {
        const im_istr_t *ix = im_labels_get(set->series[i].labels, "i");
        int k = (int)strtol(ix->s, NULL, 10);
        assert_true(im_labels_equal(set->series[i].labels, ls[k]));
        tsdb_iter_t *it = set->vt->iter(set, i);
        int n = 0;
        while (it->vt->next(it)) {
            int64_t tt;
            double vv;
            it->vt->at(it, &tt, &vv);
            assert_int_equal(tt, t[n]);
            assert_true(bits(vv) == bits(v[n]));
            n++;
        }
        assert_int_equal(n, NP);
        it->vt->free(it);
    }
    set->vt->free(set);
    im_matcher_free(m);
    q->vt->close(q);
    for (int i = 0; i < NS; i++) im_labels_unref(ls[i]);
    im_buf_free(&raw);
    im_buf_free(&comp);
    tsdb_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_roundtrip)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_nhist.c — native histograms in PromQL: the value layout and boxing
 * (storage/fhist.h), the arithmetic (schema reduction, zero-bucket widening,
 * counter resets), the estimators, the test-script notation, evaluation over
 * the in-memory store and the API's JSON form. The semantics in depth are the
 * test scripts' (tests/promql/v3/native_histograms.test, the v3.14.0 data). */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "promql/nhist.h"
#include "promql/parser.h"
#include "promql/promql.h"

static storage_fh_t *parse(const char *s)
{
    storage_fh_t *h = NULL;
    assert_true(promql_fh_parse(s, strlen(s), &h));
    return h;
}

static bool eq(double a, double b)
{
    return fabs(a - b) < 1e-9;
}

static void test_box(void **state)
{
    (void)state;
    storage_fh_t *h = parse("{{schema:0 sum:5 count:4 buckets:[1 2 1]}}");
    double v = storage_fh_box(h);
    assert_true(isnan(v));
    assert_true(storage_fh_unbox(v) == h);
    assert_null(storage_fh_unbox(NAN));
    assert_null(storage_fh_unbox(1.5));
    assert_null(storage_fh_unbox(storage_stale_nan()));
    /* arithmetic on a box is a NaN that is no box */
    double w = v * 2;
    assert_null(storage_fh_unbox(w));
    im_free(h);
}

static void test_notation(void **state)
{
    (void)state;
    storage_fh_t *h = parse("{{schema:1 sum:-0.3 count:3.1 z_bucket:7.1 z_bucket_w:0.05 "
                            "buckets:[5.1 10 7] offset:-3 n_buckets:[4.1 5] n_offset:-5 "
                            "counter_reset_hint:gauge}}");
    assert_int_equal(h->schema, 1);
    assert_int_equal(h->poff, -3);
    assert_int_equal(h->npos, 3);
    assert_int_equal(h->noff, -5);
    assert_int_equal(h->nneg, 2);
    assert_int_equal(h->hint, STORAGE_FH_GAUGE);
    assert_true(h->zthresh == 0.05 && h->zcount == 7.1 && h->sum == -0.3);
    im_buf_t b;
    im_buf_init(&b, 0);
    promql_fh_format(h, &b);
    storage_fh_t *back = parse(b.data);
    assert_true(promql_fh_equal(h, back, eq));
    im_free(back);
    im_free(h);
    im_buf_free(&b);
    storage_fh_t *bad = NULL;
    assert_false(promql_fh_parse("{{schema:9}}", 12, &bad));
    assert_false(promql_fh_parse("{{bogus:1}}", 11, &bad));
    assert_false(promql_fh_parse("{{schema:0 custom_values:[1]}}", 30, &bad));
    /* series expansion */
    promql_seqval_t *v = NULL;
    size_t n = 0, cap = 0;
    const char *s = "{{count:1 sum:2 buckets:[1]}}+{{count:2 sum:1 buckets:[0 2]}}x2 _ 7";
    assert_true(promql_series_values_nh(s, strlen(s), &v, &n, &cap));
    assert_int_equal(n, 5);
    const storage_fh_t *last = storage_fh_unbox(v[2].v);
    assert_non_null(last);
    assert_true(last->count == 5 && last->sum == 4 && last->npos == 2);
    assert_true(last->pos[0] == 1 && last->pos[1] == 4);
    assert_true(v[3].omitted && v[4].v == 7);
    promql_seqvals_free_hists(v, n);
    im_free(v);
    /* the float-only entry point refuses histograms */
    v = NULL;
    n = cap = 0;
    assert_false(promql_series_values("{{count:1}}", 11, &v, &n, &cap, NULL, NULL));
    im_free(v);
}

static void test_arith(void **state)
{
    (void)state;
    /* schema 1 buckets 1..4 reduced to schema 0: (1,2) -> 1, (3,4) -> 2 */
    storage_fh_t *a = parse("{{schema:1 count:10 sum:1 offset:1 buckets:[1 2 3 4]}}");
    storage_fh_t *r = promql_fh_reduce(NULL, a, 0);
    assert_int_equal(r->poff, 1);
    assert_int_equal(r->npos, 2);
    assert_true(r->pos[0] == 3 && r->pos[1] == 7);
    storage_fh_t *b = parse("{{schema:0 count:3 sum:2 z_bucket:1 z_bucket_w:0.5 buckets:[2]}}");
    storage_fh_t *s = promql_fh_add(NULL, a, b, 1);
    assert_int_equal(s->schema, 0);
    assert_true(s->count == 13 && s->sum == 3 && s->zcount == 1 && s->zthresh == 0.5);
    /* index 0 (0.5,1] of b, indices 1, 2 of a */
    assert_int_equal(s->poff, 0);
    assert_true(s->pos[0] == 2 && s->pos[1] == 3 && s->pos[2] == 7);
    storage_fh_t *d = promql_fh_add(NULL, s, b, -1);
    storage_fh_t *ra = promql_fh_reduce(NULL, a, 0);
    assert_true(d->zthresh == 0.5 && d->zcount == 0); /* the wider zero bucket stays */
    ra->zthresh = 0.5;
    assert_true(promql_fh_equal(d, ra, eq));
    /* a larger zero threshold swallows the buckets below it */
    storage_fh_t *z = parse("{{schema:0 count:1 sum:0 z_bucket:1 z_bucket_w:2}}");
    storage_fh_t *sz = promql_fh_add(NULL, z, r, 1);
    assert_true(sz->zthresh == 2 && sz->zcount == 4); /* (1,2] moved in */
    /* exponential and custom do not mix */
    storage_fh_t *c = parse("{{schema:-53 count:1 sum:1 custom_values:[1 2] buckets:[1]}}");
    assert_null(promql_fh_add(NULL, a, c, 1));
    /* counter resets */
    storage_fh_t *prev = parse("{{schema:0 count:4 sum:4 buckets:[2 2]}}");
    storage_fh_t *up = parse("{{schema:0 count:5 sum:5 buckets:[2 3]}}");
    storage_fh_t *down = parse("{{schema:0 count:5 sum:5 buckets:[1 4]}}");
    storage_fh_t *hint = parse("{{schema:0 count:9 sum:9 buckets:[3 6] counter_reset_hint:reset}}");
    assert_false(promql_fh_detect_reset(up, prev));
    assert_true(promql_fh_detect_reset(down, prev));
    assert_true(promql_fh_detect_reset(hint, prev));
    storage_fh_t *all[] = {a, r, b, s, d, ra, z, sz, c, prev, up, down, hint};
    for (size_t i = 0; i < IM_ARRAY_LEN(all); i++) im_free(all[i]);
}

static void test_estimators(void **state)
{
    (void)state;
    /* schema 0: (0.5,1]:1 (1,2]:2 (2,4]:1 */
    storage_fh_t *h = parse("{{schema:0 count:4 sum:6 buckets:[1 2 1]}}");
    assert_true(eq(promql_fh_quantile(0.5, h), 1.0 * exp2(0.5))); /* rank 2: half of (1,2] */
    assert_true(eq(promql_fh_quantile(1, h), 4));
    assert_true(isinf(promql_fh_quantile(2, h)) && promql_fh_quantile(2, h) > 0);
    assert_true(eq(promql_fh_fraction(0, 2, h), 0.75));
    assert_true(eq(promql_fh_fraction(1, 1, h), 0));
    /* stdvar from the buckets' geometric means, around sum/count */
    double m = 1.5, g0 = sqrt(0.5), g1 = sqrt(2), g2 = sqrt(8);
    double var = ((g0 - m) * (g0 - m) + 2 * (g1 - m) * (g1 - m) + (g2 - m) * (g2 - m)) / 4;
    assert_true(eq(promql_fh_stdvar(h), var));
    /* custom buckets interpolate linearly; the +Inf bucket gives its lower bound */
    storage_fh_t *c = parse("{{schema:-53 count:4 sum:6 custom_values:[1 2] buckets:[2 1 1]}}");
    assert_true(eq(promql_fh_quantile(0.25, c), 0.5));
    assert_true(eq(promql_fh_quantile(0.99, c), 2));
    im_free(h);
    im_free(c);
}

static void eval_json(promql_memstore_t *m, const char *q, int64_t t, char *out, size_t cap)
{
    promql_expr_t *e = NULL;
    im_err_t err = {0};
    assert_int_equal(promql_parse(q, strlen(q), &e, &err), IM_OK);
    promql_engine_t *eng = promql_engine_new(NULL);
    promql_result_t res;
    assert_int_equal(promql_eval_instant(eng, promql_memstore_queryable(m), e, t, &res, &err),
                     IM_OK);
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(promql_result_to_json(&res, &b), IM_OK);
    snprintf(out, cap, "%s", b.data);
    im_buf_free(&b);
    promql_result_free(&res);
    promql_engine_free(eng);
    promql_expr_free(e);
}

static void test_eval_and_json(void **state)
{
    (void)state;
    promql_memstore_t *m = promql_memstore_new();
    im_labels_builder_t lb;
    im_lb_init(&lb);
    im_lb_set(&lb, "__name__", 8, "h", 1);
    const im_labels_t *ls = im_lb_build(&lb);
    im_lb_free(&lb);
    storage_fh_t *h1 = parse("{{schema:0 count:4 sum:6 z_bucket:1 buckets:[1 2] n_buckets:[0]}}");
    storage_fh_t *h2 = parse("{{schema:0 count:8 sum:12 z_bucket:2 buckets:[2 4]}}");
    promql_memstore_add(m, ls, 0, storage_fh_box(h1));
    promql_memstore_add(m, ls, 60000, storage_fh_box(h2));
    im_free(h1); /* the store copied them */
    im_free(h2);
    im_labels_unref(ls);
    char js[4096];
    eval_json(m, "h", 60000, js, sizeof js);
    assert_string_equal(js,
                        "{\"resultType\":\"vector\",\"result\":[{\"metric\":{\"__name__\":\"h\"},"
                        "\"histogram\":[60,{\"count\":\"8\",\"sum\":\"12\",\"buckets\":[[3,\"-0\","
                        "\"0\",\"2\"],[0,\"0.5\",\"1\",\"2\"],[0,\"1\",\"2\",\"4\"]]}]}]}");
    eval_json(m, "histogram_count(h) + histogram_sum(h)", 60000, js, sizeof js);
    assert_string_equal(js, "{\"resultType\":\"vector\",\"result\":[{\"metric\":{},"
                            "\"value\":[60,\"20\"]}]}");
    /* floats do not see histograms */
    eval_json(m, "abs(h)", 60000, js, sizeof js);
    assert_string_equal(js, "{\"resultType\":\"vector\",\"result\":[]}");
    eval_json(m, "histogram_count(increase(h[2m]))", 60000, js, sizeof js);
    assert_non_null(strstr(js, "\"value\":[60,\""));
    eval_json(m, "h[2m]", 60000, js, sizeof js);
    assert_non_null(strstr(js, "\"histograms\":[[0,{\"count\":\"4\""));
    assert_null(strstr(js, "\"values\""));
    promql_memstore_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_box),           cmocka_unit_test(test_notation),
        cmocka_unit_test(test_arith),         cmocka_unit_test(test_estimators),
        cmocka_unit_test(test_eval_and_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_engine.c — the PromQL evaluator's contract (promql.h): result shapes for
 * instant and range queries, limits and their Prometheus error texts and
 * errorTypes, cancellation, the in-memory queryable, JSON output, and the
 * test-script runner's counting. Semantics in depth are covered by the test
 * scripts (tests/promql/) and the differential test against Prometheus. */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "promql/parser.h"
#include "promql/promql.h"
#include "util/timeutil.h"

static promql_memstore_t *make_store(void)
{
    promql_memstore_t *m = promql_memstore_new();
    const im_labels_t *a = im_labels_from_strs("__name__", "up", "job", "a", NULL);
    const im_labels_t *b = im_labels_from_strs("__name__", "up", "job", "b", NULL);
    const im_labels_t *c = im_labels_from_strs("__name__", "c_total", "job", "a", NULL);
    for (int i = 0; i <= 100; i++) {
        promql_memstore_add(m, a, i * 15000LL, 1);
        if (i < 50) promql_memstore_add(m, b, i * 15000LL, 0);
        promql_memstore_add(m, c, i * 15000LL, i * 10.0);
    }
    /* out of order and duplicate timestamps: later wins */
    promql_memstore_add(m, b, 0, 7);
    im_labels_unref(a);
    im_labels_unref(b);
    im_labels_unref(c);
    return m;
}

static promql_expr_t *parse(const char *q)
{
    promql_expr_t *e = NULL;
    im_err_t err;
    assert_int_equal(promql_parse(q, strlen(q), &e, &err), IM_OK);
    return e;
}

static void test_instant_vector(void **state)
{
    (void)state;
    promql_memstore_t *m = make_store();
    promql_engine_t *eng = promql_engine_new(NULL);
    promql_expr_t *e = parse("up");
    promql_result_t r;
    im_err_t err;
    assert_int_equal(promql_eval_instant(eng, promql_memstore_queryable(m), e, 0, &r, &err), IM_OK);
    assert_int_equal(r.type, PROMQL_RESULT_VECTOR);
    assert_int_equal(r.nseries, 2);
    assert_true(r.series[1].points[0].v == 7); /* job="b" at 0: the later add */
    promql_result_free(&r);
    /* b's last sample is at 735 s: visible until 735 + 300 s */
    assert_int_equal(promql_eval_instant(eng, promql_memstore_queryable(m), e, 1035000, &r, &err),
                     IM_OK);
    assert_int_equal(r.nseries, 2);
    promql_result_free(&r);
    assert_int_equal(promql_eval_instant(eng, promql_memstore_queryable(m), e, 1035001, &r, &err),
                     IM_OK);
    assert_int_equal(r.nseries, 1);
    promql_result_free(&r);
    promql_expr_free(e);
    promql_engine_free(eng);
    promql_memstore_free(m);
}

static void test_range_and_scalar(void **state)
{
    (void)state;
    promql_memstore_t *m = make_store();
    promql_engine_t *eng = promql_engine_new(NULL);
    promql_expr_t *e = parse("rate(c_total[1m])");
    promql_result_t r;
    im_err_t err;
    assert_int_equal(
        promql_eval_range(eng, promql_memstore_queryable(m), e, 60000, 600000, 60000, &r, &err),
        IM_OK);
    assert_int_equal(r.type, PROMQL_RESULT_MATRIX);
    assert_int_equal(r.nseries, 1);
    assert_int_equal(r.series[0].npoints, 10);
    for (size_t i = 0; i < r.series[0].npoints; i++)
        assert_true(fabs(r.series[0].points[i].v - 10.0 / 15) < 1e-12);
    assert_null(im_labels_get(r.series[0].labels, IM_METRIC_NAME));
    promql_result_free(&r);
    promql_expr_free(e);

    e = parse("time() * 2");
    assert_int_equal(
        promql_eval_range(eng, promql_memstore_queryable(m), e, 0, 10000, 5000, &r, &err), IM_OK);
    assert_int_equal(r.type, PROMQL_RESULT_MATRIX);
    assert_int_equal(r.nseries, 1);
    assert_int_equal(r.series[0].npoints, 3);
    assert_true(r.series[0].points[2].v == 20);
    promql_result_free(&r);
    assert_int_equal(promql_eval_instant(eng, promql_memstore_queryable(m), e, 5000, &r, &err),
                     IM_OK);
    assert_int_equal(r.type, PROMQL_RESULT_SCALAR);
    assert_true(r.scalar.v == 10);
    promql_result_free(&r);
    promql_expr_free(e);

    e = parse("up[1m]");
    assert_int_equal(promql_eval_instant(eng, promql_memstore_queryable(m), e, 60000, &r, &err),
                     IM_OK);
    assert_int_equal(r.type, PROMQL_RESULT_MATRIX);
    assert_int_equal(r.series[0].npoints, 5); /* 0, 15, 30, 45, 60 s: both ends included */
    promql_result_free(&r);
    assert_int_equal(
        promql_eval_range(eng, promql_memstore_queryable(m), e, 0, 10000, 5000, &r, &err),
        IM_EINVAL);
    assert_string_equal(err.msg, "invalid expression type \"range vector\" for range query, must "
                                 "be Scalar or instant Vector");
    assert_string_equal(promql_error_type(IM_EINVAL), "bad_data");
    promql_expr_free(e);
    promql_engine_free(eng);
    promql_memstore_free(m);
}

static void test_limits(void **state)
{
    (void)state;
    promql_memstore_t *m = make_store();
    promql_engine_opts_t o = {.max_samples = 100};
    promql_engine_t *eng = promql_engine_new(&o);
    assert_int_equal(promql_engine_opts(eng)->lookback_delta_ms, 300000);
    assert_int_equal(promql_engine_opts(eng)->timeout_ms, 120000);
    promql_expr_t *e = parse("sum(up)");
    promql_result_t r;
    im_err_t err;
    assert_int_equal(
        promql_eval_range(eng, promql_memstore_queryable(m), e, 0, 1500000, 15000, &r, &err),
        IM_ELIMIT);
    assert_string_equal(err.msg, "query processing would load too many samples into memory in "
                                 "query execution");
    assert_string_equal(promql_error_type(IM_ELIMIT), "execution");
    promql_expr_free(e);
    /* range functions count the window's samples */
    e = parse("count_over_time(c_total[1h])");
    assert_int_equal(promql_eval_instant(eng, promql_memstore_queryable(m), e, 1500000, &r, &err),
                     IM_ELIMIT);
    promql_expr_free(e);
    promql_engine_free(eng);

    /* timeout: a subquery with a 1 ms step over an hour (3.6 M steps) */
    promql_engine_opts_t to = {.timeout_ms = 1};
    eng = promql_engine_new(&to);
    e = parse("count_over_time(up{job=\"a\"}[1h:1ms])");
    assert_int_equal(promql_eval_instant(eng, promql_memstore_queryable(m), e, 1500000, &r, &err),
                     IM_ETIMEOUT);
    assert_string_equal(err.msg, "query timed out in expression evaluation");
    promql_expr_free(e);
    promql_engine_free(eng);

    eng = promql_engine_new(NULL);
    volatile int cancel = 1;
    promql_query_params_t p = {.start_ms = 0, .end_ms = 0, .instant = true, .cancel = &cancel};
    e = parse("up");
    assert_int_equal(promql_eval(eng, promql_memstore_queryable(m), e, &p, &r, &err), IM_ECANCELED);
    assert_string_equal(err.msg, "query was canceled in expression evaluation");
    assert_string_equal(promql_error_type(IM_ECANCELED), "canceled");
    assert_string_equal(promql_error_type(IM_ETIMEOUT), "timeout");
    promql_expr_free(e);
    promql_engine_free(eng);
    promql_memstore_free(m);
}

/* Operators' outputs count against max_samples while they are built: each new
 * output series holds a slot per step. count_values over a value that differs at
 * every step makes one series per step, nsteps wide (2001 x 2001 slots here): it
 * stops at the limit instead of allocating them all. */
static void test_output_limits(void **state)
{
    (void)state;
    promql_memstore_t *m = promql_memstore_new();
    promql_expr_t *e = parse("count_values(\"v\", vector(time()))");
    promql_result_t r;
    im_err_t err;
    promql_engine_opts_t o = {.max_samples = 1000000};
    promql_engine_t *eng = promql_engine_new(&o);
    assert_int_equal(
        promql_eval_range(eng, promql_memstore_queryable(m), e, 0, 2000 * 15000, 15000, &r, &err),
        IM_ELIMIT);
    assert_string_equal(err.msg, "query processing would load too many samples into memory in "
                                 "query execution");
    promql_engine_free(eng);
    o.max_samples = 5000000;
    eng = promql_engine_new(&o);
    assert_int_equal(
        promql_eval_range(eng, promql_memstore_queryable(m), e, 0, 2000 * 15000, 15000, &r, &err),
        IM_OK);
    assert_int_equal(r.nseries, 2001);
    assert_true(r.samples_peak <= 5000000 && r.samples_peak >= 2001 * 2001);
    promql_result_free(&r);
    promql_expr_free(e);
    /* the same limit for label_replace, topk and binary operation outputs */
    static const char *const qs[] = {
        "label_replace(vector(time()), \"a\", \"b\", \"\", \"\")",
        "topk(1, vector(time()))",
        "vector(time()) + vector(time())",
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(qs); i++) {
        e = parse(qs[i]);
        promql_engine_opts_t small = {.max_samples = 3000};
        promql_engine_t *se = promql_engine_new(&small);
        assert_int_equal(promql_eval_range(se, promql_memstore_queryable(m), e, 0, 2000 * 15000,
                                           15000, &r, &err),
                         IM_ELIMIT);
        promql_engine_free(se);
        promql_expr_free(e);
    }
    promql_engine_free(eng);
    /* a deadline given with the query (the HTTP queue's) ends it like the timeout */
    eng = promql_engine_new(NULL);
    e = parse("count_over_time(vector(1)[1h:1ms])");
    promql_query_params_t p = {
        .start_ms = 0, .end_ms = 0, .instant = true, .deadline_ns = im_mono_ns()};
    assert_int_equal(promql_eval(eng, promql_memstore_queryable(m), e, &p, &r, &err), IM_ETIMEOUT);
    promql_expr_free(e);
    promql_engine_free(eng);
    promql_memstore_free(m);
}

static void test_errors(void **state)
{
    (void)state;
    promql_memstore_t *m = promql_memstore_new();
    const im_labels_t *a = im_labels_from_strs("__name__", "x", "a", "1", "b", "1", NULL);
    const im_labels_t *b = im_labels_from_strs("__name__", "x", "a", "1", "b", "2", NULL);
    const im_labels_t *c = im_labels_from_strs("__name__", "y", "a", "1", NULL);
    promql_memstore_add(m, a, 0, 1);
    promql_memstore_add(m, b, 0, 2);
    promql_memstore_add(m, c, 0, 3);
    promql_engine_t *eng = promql_engine_new(NULL);
    promql_result_t r;
    im_err_t err;
    struct {
        const char *q, *msg;
    } cases[] = {
        {"y + on(a) x",
         "found duplicate series for the match group {a=\"1\"} on the right hand-side of the "
         "operation: [{__name__=\"x\", a=\"1\", b=\"2\"}, {__name__=\"x\", a=\"1\", "
         "b=\"1\"}];many-to-many "
         "matching not allowed: matching labels must be unique on one side"},
        {"x + on(a) group_left y * 0 + on(a) group_right x",
         "found duplicate series for the match group {a=\"1\"} on the left hand-side of the "
         "operation: [{a=\"1\", b=\"2\"}, {a=\"1\", b=\"1\"}];many-to-many matching not allowed: "
         "matching labels must be unique on one side"},
        {"x * on(a) group_left y + ignoring(b) y",
         "multiple matches for labels: many-to-one "
         "matching must be explicit (group_left/group_right)"},
        {"ceil(x) + ignoring(b) group_left x",
         "found duplicate series for the match group {a=\"1\"} "
         "on the right hand-side of the operation: "
         "[{__name__=\"x\", a=\"1\", b=\"2\"}, {__name__=\"x\", "
         "a=\"1\", b=\"1\"}];many-to-many matching not allowed: "
         "matching labels must be unique on one side"},
        {"label_replace(x, \"b\", \"\", \"b\", \".*\")",
         "vector cannot contain metrics with the same labelset"},
        {"holt_winters(x[1m], 2, 0.5)", "invalid smoothing factor. Expected: 0 < sf < 1, got: "
                                        "2.000000"},
        {"topk(NaN, x)", "Scalar value NaN overflows int64"},
        {"count_values(\"1a\", x)", "invalid label name \"1a\""},
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(cases); i++) {
        promql_expr_t *e = parse(cases[i].q);
        im_err_clear(&err);
        im_rc rc = promql_eval_instant(eng, promql_memstore_queryable(m), e, 0, &r, &err);
        if (rc == IM_OK) print_message("no error for %s\n", cases[i].q);
        assert_int_not_equal(rc, IM_OK);
        if (strcmp(err.msg, cases[i].msg) != 0)
            print_message("%s\n  got  %s\n  want %s\n", cases[i].q, err.msg, cases[i].msg);
        assert_string_equal(err.msg, cases[i].msg);
        promql_expr_free(e);
    }
    im_labels_unref(a);
    im_labels_unref(b);
    im_labels_unref(c);
    promql_engine_free(eng);
    promql_memstore_free(m);
}

static void test_json(void **state)
{
    (void)state;
    promql_memstore_t *m = make_store();
    promql_engine_t *eng = promql_engine_new(NULL);
    promql_result_t r;
    im_err_t err;
    im_buf_t b;
    im_buf_init(&b, 0);
    promql_expr_t *e = parse("up{job=\"a\"} / 4");
    assert_int_equal(promql_eval_instant(eng, promql_memstore_queryable(m), e, 1500, &r, &err),
                     IM_OK);
    assert_int_equal(promql_result_to_json(&r, &b), IM_OK);
    assert_string_equal(b.data,
                        "{\"resultType\":\"vector\",\"result\":[{\"metric\":{\"job\":\"a\"},"
                        "\"value\":[1.5,\"0.25\"]}]}");
    promql_result_free(&r);
    promql_expr_free(e);
    im_buf_reset(&b);
    e = parse("\"s\"");
    assert_int_equal(promql_eval_instant(eng, promql_memstore_queryable(m), e, 2000, &r, &err),
                     IM_OK);
    assert_int_equal(promql_result_to_json(&r, &b), IM_OK);
    assert_string_equal(b.data, "{\"resultType\":\"string\",\"result\":[2,\"s\"]}");
    promql_result_free(&r);
    promql_expr_free(e);
    im_buf_free(&b);
    promql_engine_free(eng);
    promql_memstore_free(m);
}

/* The one writer of result JSON: Go's escaping, both time forms, chunked
 * writing gives the same bytes, a capped buffer is reported. */
static void test_json_writer(void **state)
{
    (void)state;
    promql_memstore_t *m = promql_memstore_new();
    const im_labels_t *ls =
        im_labels_from_strs("__name__", "x", "v", "a\n<&>\xe2\x80\xa8\xff\"", NULL);
    for (int i = 0; i < 40; i++) promql_memstore_add(m, ls, i * 1000LL, i * 0.5);
    im_labels_unref(ls);
    promql_engine_t *eng = promql_engine_new(NULL);
    promql_result_t r;
    im_err_t err;
    im_buf_t b, c;
    im_buf_init(&b, 0);
    im_buf_init(&c, 0);
    promql_expr_t *e = parse("x");
    assert_int_equal(promql_eval_instant(eng, promql_memstore_queryable(m), e, 20500, &r, &err),
                     IM_OK);
    assert_int_equal(promql_result_to_json(&r, &b), IM_OK);
    assert_string_equal(b.data, "{\"resultType\":\"vector\",\"result\":[{\"metric\":{\"__name__\":"
                                "\"x\",\"v\":\"a\\n\\u003c\\u0026\\u003e\\u2028\\ufffd\\\"\"},"
                                "\"value\":[20.5,\"10\"]}]}");
    promql_json_writer_t w;
    promql_json_init(&w, &r, PROMQL_JSON_TIMES_API);
    while (!promql_json_step(&w, &c, 1)) {
    }
    assert_int_equal(w.rc, IM_OK);
    assert_non_null(strstr(c.data, "\"value\":[20.500,\"10\"]"));
    promql_result_free(&r);
    promql_expr_free(e);
    /* a matrix written a few bytes at a time is the same as in one go */
    e = parse("x[30s]");
    assert_int_equal(promql_eval_instant(eng, promql_memstore_queryable(m), e, 39000, &r, &err),
                     IM_OK);
    im_buf_reset(&b);
    im_buf_reset(&c);
    promql_json_init(&w, &r, PROMQL_JSON_TIMES_API);
    while (!promql_json_step(&w, &b, 1 << 20)) {
    }
    promql_json_init(&w, &r, PROMQL_JSON_TIMES_API);
    size_t steps = 0;
    while (!promql_json_step(&w, &c, 7)) steps++;
    assert_true(steps > 10);
    assert_string_equal(b.data, c.data);
    assert_non_null(strstr(b.data, "[38,\"19\"],[39,\"19.5\"]]}]}"));
    /* capped: reported, never a half-written answer that claims success */
    im_buf_t small;
    im_buf_init(&small, 100);
    assert_int_equal(promql_result_to_json(&r, &small), IM_ELIMIT);
    im_buf_free(&small);
    promql_result_free(&r);
    promql_expr_free(e);
    im_buf_reset(&b);
    promql_json_time(&b, -1500, PROMQL_JSON_TIMES_API);
    im_buf_putc(&b, ' ');
    promql_json_time(&b, -1500, PROMQL_JSON_TIMES_SHORT);
    im_buf_putc(&b, ' ');
    promql_json_time(&b, INT64_MIN, PROMQL_JSON_TIMES_SHORT);
    assert_string_equal(b.data, "-1.500 -1.5 -9223372036854775.808");
    im_buf_free(&b);
    im_buf_free(&c);
    promql_engine_free(eng);
    promql_memstore_free(m);
}

static void test_memstore_labels(void **state)
{
    (void)state;
    promql_memstore_t *m = make_store();
    storage_queryable_t *q = promql_memstore_queryable(m);
    storage_strlist_t l;
    assert_int_equal(q->vt->label_values(q, "job", 0, 1000000, NULL, 0, &l, NULL), IM_OK);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.v[0]->s, "a");
    for (size_t i = 0; i < l.n; i++) im_istr_unref(l.v[i]);
    im_free(l.v);
    assert_int_equal(q->vt->label_names(q, 0, 1000000, NULL, 0, &l, NULL), IM_OK);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.v[0]->s, "__name__");
    for (size_t i = 0; i < l.n; i++) im_istr_unref(l.v[i]);
    im_free(l.v);
    assert_int_equal(promql_memstore_series(m), 3);
    promql_memstore_free(m);
}

static void test_script_runner(void **state)
{
    (void)state;
    const char *script = "load 1m\n"
                         "  m{a=\"x\"} 0+1x10 _ stale 3\n"
                         "\n"
                         "eval instant at 5m m\n"
                         "  m{a=\"x\"} 5\n"
                         "\n"
                         "eval instant at 12m m\n"
                         "\n"
                         "eval instant at 5m m\n"
                         "  m{a=\"x\"} 6\n"
                         "\n"
                         "eval_fail instant at 5m m\n"
                         "\n"
                         "eval range from 0 to 3m step 1m m * 2\n"
                         "  {a=\"x\"} 0+2x3\n"
                         "\n"
                         "eval instant at 0 histogram_count(m)\n"
                         "\n"
                         "load 1m\n"
                         "  s@st 0 1\n"
                         "\n"
                         "eval instant at 0 s\n";
    promql_test_stats_t st = {0};
    FILE *devnull = fopen("/dev/null", "w");
    assert_int_equal(promql_test_run("t.test", script, strlen(script), devnull, &st, NULL), IM_OK);
    fclose(devnull);
    assert_int_equal(st.passed, 4); /* histogram_count of floats: no series */
    assert_int_equal(st.failed, 2);
    assert_int_equal(st.skipped, 1);
}

/* The series values notation shared by test scripts and rule tests. */
static void test_series_values(void **state)
{
    (void)state;
    promql_seqval_t *v = NULL;
    size_t n = 0, cap = 0, off = 0, len = 0;
    const char *s = "1+2x2 _x2 stale -1-0.5x1 1e3 3x1";
    assert_true(promql_series_values(s, strlen(s), &v, &n, &cap, &off, &len));
    assert_int_equal(n, 11);
    double want[] = {1, 3, 5, 0, 0, 0, -1, -1.5, 1000, 3, 3};
    bool omitted[] = {0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(v[i].omitted, omitted[i]);
        if (i != 5 && !omitted[i]) assert_true(v[i].v == want[i]);
    }
    assert_true(isnan(v[5].v)); /* stale marker */
    n = 0;
    s = "1 2 x3";
    assert_false(promql_series_values(s, strlen(s), &v, &n, &cap, &off, &len));
    assert_int_equal(off, 4);
    assert_int_equal(len, 2);
    n = 0;
    s = "1x99999999";
    assert_false(promql_series_values(s, strlen(s), &v, &n, &cap, NULL, NULL));
    n = 0;
    s = "1+x3";
    assert_false(promql_series_values(s, strlen(s), &v, &n, &cap, NULL, NULL));
    im_free(v);
}

int main(void)
{
    /* These tests pin Prometheus 2.53's answers (--promql.compat=2); compat 3 is
     * test_compat3.c's. */
    promql_lang_set_default(&(promql_lang_t){.compat = 2});
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_instant_vector), cmocka_unit_test(test_range_and_scalar),
        cmocka_unit_test(test_limits),         cmocka_unit_test(test_output_limits),
        cmocka_unit_test(test_errors),         cmocka_unit_test(test_json),
        cmocka_unit_test(test_json_writer),    cmocka_unit_test(test_memstore_labels),
        cmocka_unit_test(test_script_runner),  cmocka_unit_test(test_series_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

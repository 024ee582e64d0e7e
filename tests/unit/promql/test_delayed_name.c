/* test_delayed_name.c — delayed __name__ removal (promql-delayed-name-removal,
 * compat 3): the cases the Prometheus 3.14 scripts (name_label_dropping.test) do
 * not pin. A marked-dropped name never reaches a result (what recording rules
 * store and the HTTP API shows), also at the top of a range query, of a subquery
 * returned as a range vector, and after an aggregation by __name__; the mark
 * travels through subqueries, topk and set operators; label_replace onto
 * __name__ keeps it; the flag parses, and without it (or at compat 2) names are
 * dropped at once as before. */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "promql/parser.h"
#include "promql/promql.h"

static const promql_lang_t dl = {.compat = 3, .delayed_name_removal = true};
static const promql_lang_t v3 = {.compat = 3};
static const promql_lang_t v2dl = {.compat = 2, .delayed_name_removal = true};

static promql_memstore_t *store(void)
{
    promql_memstore_t *m = promql_memstore_new();
    const im_labels_t *a = im_labels_from_strs("__name__", "req_total", "job", "a", NULL);
    const im_labels_t *b = im_labels_from_strs("__name__", "err_total", "job", "a", NULL);
    for (int i = 0; i <= 10; i++) {
        promql_memstore_add(m, a, (int64_t)i * 60000, i * 6.0);
        promql_memstore_add(m, b, (int64_t)i * 60000, i * 3.0);
    }
    im_labels_unref(a);
    im_labels_unref(b);
    return m;
}

/* Evaluates q (instant at t_ms, or a range when step_ms > 0) into r. */
static im_rc run(const promql_lang_t *l, promql_memstore_t *m, const char *q, int64_t t_ms,
                 int64_t step_ms, promql_result_t *r, im_err_t *err)
{
    promql_engine_opts_t o;
    memset(&o, 0, sizeof o);
    o.lang = *l;
    promql_engine_t *eng = promql_engine_new(&o);
    promql_expr_t *e = NULL;
    assert_int_equal(promql_parse_lang(q, strlen(q), l, &e, err), IM_OK);
    im_rc rc =
        step_ms > 0
            ? promql_eval_range(eng, promql_memstore_queryable(m), e, 0, t_ms, step_ms, r, err)
            : promql_eval_instant(eng, promql_memstore_queryable(m), e, t_ms, r, err);
    promql_expr_free(e);
    promql_engine_free(eng);
    return rc;
}

/* The labels of every result series, formatted and joined by " ". */
static char *labels_of(const promql_lang_t *l, promql_memstore_t *m, const char *q, int64_t step)
{
    promql_result_t r;
    im_err_t err;
    im_rc rc = run(l, m, q, 600000, step, &r, &err);
    if (rc != IM_OK) {
        print_error("%s: %s\n", q, err.msg);
        fail();
    }
    im_buf_t b;
    im_buf_init(&b, 0);
    for (size_t i = 0; i < r.nseries; i++) {
        if (i) (void)im_buf_putc(&b, ' ');
        assert_int_equal(im_labels_format(r.series[i].labels, &b), IM_OK);
    }
    (void)im_buf_putc(&b, 0);
    promql_result_free(&r);
    return (char *)b.data;
}

static void expect_labels(const promql_lang_t *l, promql_memstore_t *m, const char *q, int64_t step,
                          const char *want)
{
    char *got = labels_of(l, m, q, step);
    if (strcmp(got, want) != 0) {
        print_error("%s: got %s, want %s\n", q, got, want);
        im_free(got);
        fail();
    }
    im_free(got);
}

static void test_flag(void **state)
{
    (void)state;
    promql_lang_t l = {.compat = 3};
    char why[256];
    assert_true(promql_lang_enable_features(&l, "promql-delayed-name-removal", why, sizeof why));
    assert_true(l.delayed_name_removal);
}

/* What a recording rule stores (it then sets __name__ to the record name) and
 * the API shows: the evaluated result, never a marked name. */
static void test_results_have_no_marked_name(void **state)
{
    (void)state;
    promql_memstore_t *m = store();
    expect_labels(&dl, m, "rate(req_total[5m])", 0, "{job=\"a\"}");
    expect_labels(&dl, m, "rate(req_total[5m])", 60000, "{job=\"a\"}");
    expect_labels(&dl, m, "-req_total", 0, "{job=\"a\"}");
    expect_labels(&dl, m, "req_total * 2", 0, "{job=\"a\"}");
    expect_labels(&dl, m, "req_total > bool 1", 0, "{job=\"a\"}");
    /* filter comparisons and last_over_time keep the name, as without the flag */
    expect_labels(&dl, m, "req_total > 1", 0, "req_total{job=\"a\"}");
    expect_labels(&dl, m, "last_over_time(req_total[5m])", 0, "req_total{job=\"a\"}");
    /* the mark survives a subquery: last_over_time keeps it, the result drops it */
    expect_labels(&dl, m, "last_over_time(abs(req_total)[5m:1m])", 0, "{job=\"a\"}");
    /* a subquery at the top: the range vector's labels */
    expect_labels(&dl, m, "abs(req_total)[2m:1m]", 0, "{job=\"a\"}");
    /* by (__name__) keeps the name for the grouping, the mark drops it at the end */
    expect_labels(&dl, m, "sum by (__name__) (rate(req_total[5m]))", 0, "{}");
    expect_labels(&dl, m, "topk(1, sum by (__name__, job) (rate(req_total[5m])))", 0,
                  "{job=\"a\"}");
    /* set operators keep the marks of both sides */
    expect_labels(&dl, m, "rate(req_total[5m]) or rate(err_total[5m])", 0, "{job=\"a\"}");
    /* label_replace onto __name__ keeps it */
    expect_labels(
        &dl, m,
        "label_replace(rate(req_total[5m]), \"__name__\", \"r_$1\", \"__name__\", \"(.+)\")", 0,
        "r_req_total{job=\"a\"}");
    /* arithmetic between two series keeps a mark through group_left */
    expect_labels(&dl, m, "req_total / on (job) group_left err_total", 0, "{job=\"a\"}");
    promql_memstore_free(m);
}

/* Two series whose names are only marked do not collide until the end: a
 * label function reads the names first; left alone they collide in the result. */
static void test_duplicates_at_the_end(void **state)
{
    (void)state;
    promql_memstore_t *m = store();
    expect_labels(&dl, m,
                  "label_replace(rate({job=\"a\"}[5m]), \"n\", \"$1\", \"__name__\", \"(.+)\")", 0,
                  "{job=\"a\", n=\"err_total\"} {job=\"a\", n=\"req_total\"}");
    expect_labels(&dl, m, "sum by (job) (rate({job=\"a\"}[5m]))", 0, "{job=\"a\"}");
    promql_result_t r;
    im_err_t err;
    assert_int_not_equal(run(&dl, m, "rate({job=\"a\"}[5m])", 600000, 0, &r, &err), IM_OK);
    assert_non_null(strstr(err.msg, "vector cannot contain metrics with the same labelset"));
    /* without the flag (or at compat 2) the name goes at once: label_replace sees none */
    assert_int_not_equal(run(&v3, m,
                             "label_replace(rate({job=\"a\"}[5m]), \"n\", \"$1\", "
                             "\"__name__\", \"(.+)\")",
                             600000, 0, &r, &err),
                         IM_OK);
    assert_int_not_equal(run(&v2dl, m, "sum by (job) (rate({job=\"a\"}[5m]))", 600000, 0, &r, &err),
                         IM_OK);
    expect_labels(&v3, m, "sum by (__name__) (rate(req_total[5m]))", 0, "{}");
    promql_memstore_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flag),
        cmocka_unit_test(test_results_have_no_marked_name),
        cmocka_unit_test(test_duplicates_at_the_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

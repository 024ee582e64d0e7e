/* test_compat3.c — the language levels (ast.h promql_lang_t): what the parser
 * accepts and refuses at compat 2 and 3, duration expressions and their canonical
 * form, and the evaluation differences (left-open windows and lookback, `.`
 * matching a newline). Semantics in depth: the scripts in tests/promql/v3/ and the
 * Prometheus 3.14 scripts (tests/promql/run_promql_v3.sh). */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "promql/parser.h"
#include "promql/promql.h"

static const promql_lang_t v2 = {.compat = 2};
static const promql_lang_t v3 = {.compat = 3};
static const promql_lang_t v3x = {.compat = 3, .experimental_functions = true};

static char *fmt(const promql_lang_t *l, const char *q)
{
    promql_expr_t *e = NULL;
    im_err_t err;
    im_rc rc = promql_parse_lang(q, strlen(q), l, &e, &err);
    if (rc != IM_OK) {
        print_error("parse of %s failed: %s\n", q, err.msg);
        fail();
    }
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(promql_format(e, &b), IM_OK);
    /* the canonical form parses back to the same tree */
    promql_expr_t *e2 = NULL;
    assert_int_equal(promql_parse_lang(b.data, b.len, l, &e2, &err), IM_OK);
    assert_true(promql_expr_equal(e, e2));
    promql_expr_free(e2);
    promql_expr_free(e);
    return (char *)b.data;
}

static void expect_err(const promql_lang_t *l, const char *q, const char *msg)
{
    promql_expr_t *e = NULL;
    im_err_t err;
    assert_int_not_equal(promql_parse_lang(q, strlen(q), l, &e, &err), IM_OK);
    assert_null(e);
    if (!strstr(err.msg, msg)) {
        print_error("%s: got \"%s\", want \"%s\"\n", q, err.msg, msg);
        fail();
    }
}

static void test_functions_by_level(void **state)
{
    (void)state;
    expect_err(&v3, "holt_winters(x[5m], 0.5, 0.5)", "unknown function with name \"holt_winters\"");
    im_free(fmt(&v2, "holt_winters(x[5m], 0.5, 0.5)"));
    expect_err(&v2, "double_exponential_smoothing(x[5m], 0.5, 0.5)", "unknown function");
    expect_err(&v3, "double_exponential_smoothing(x[5m], 0.5, 0.5)",
               "function \"double_exponential_smoothing\" is not enabled");
    im_free(fmt(&v3x, "double_exponential_smoothing(x[5m], 0.5, 0.5)"));
    /* 2.53's experimental functions: always on at compat 2, behind the flag at 3 */
    im_free(fmt(&v2, "mad_over_time(x[5m])"));
    expect_err(&v3, "mad_over_time(x[5m])", "is not enabled");
    /* first_over_time is stable in 3.14; ts_of_* experimental */
    im_free(fmt(&v3, "first_over_time(x[5m])"));
    expect_err(&v2, "first_over_time(x[5m])", "unknown function");
    expect_err(&v3, "ts_of_max_over_time(x[5m])", "is not enabled");
    im_free(fmt(&v3x, "ts_of_max_over_time(x[5m])"));
}

static void test_duration_expressions(void **state)
{
    (void)state;
    char *s;
    /* constant expressions fold into the duration */
    assert_string_equal(s = fmt(&v3, "x[5m * 2]"), "x[10m]");
    im_free(s);
    assert_string_equal(s = fmt(&v3, "x[1800]"), "x[30m]");
    im_free(s);
    assert_string_equal(s = fmt(&v3, "rate(x[1h30m % 1h])[2m*(10+5):20*500ms]"),
                        "rate(x[30m])[30m:10s]");
    im_free(s);
    assert_string_equal(s = fmt(&v3, "x offset (2 * 2)"), "x offset 4s");
    im_free(s);
    /* offset takes one term without parentheses */
    assert_string_equal(s = fmt(&v3, "x offset 100 + 2"), "x offset 1m40s + 2");
    im_free(s);
    /* the ones needing the query stay expressions */
    assert_string_equal(s = fmt(&v3, "x[step()*2]"), "x[step() * 2]");
    im_free(s);
    assert_string_equal(s = fmt(&v3, "x offset min_of(range(), 8s)"),
                        "x offset min_of(range(), 8s)");
    im_free(s);
    assert_string_equal(s = fmt(&v3, "x[5m:STEP()]"), "x[5m:step()]");
    im_free(s);
    assert_string_equal(s = fmt(&v3, "x[1m] offset -step()"), "x[1m] offset (-step())");
    im_free(s);
    assert_string_equal(s = fmt(&v3, "x[-step() + 2 ^ 2 * 10s]"), "x[-step() + 2 ^ 2 * 10s]");
    im_free(s);
    expect_err(&v3, "x[5m-5m]", "duration must be greater than 0");
    expect_err(&v3, "x[foo()]", "unexpected identifier foo");
    /* compat 2 keeps 2.53's errors */
    expect_err(&v2, "x[1800]", "missing unit character in duration");
    expect_err(&v2, "x[5m*2]", "unexpected <op:*> in subquery or range");
    expect_err(&v2, "x offset (1m)", "unexpected \"(\" in offset, expected duration");
}

static double eval1(const promql_lang_t *l, promql_memstore_t *m, const char *q, int64_t t_ms,
                    size_t *nseries)
{
    promql_engine_opts_t o;
    memset(&o, 0, sizeof o);
    o.lang = *l;
    promql_engine_t *eng = promql_engine_new(&o);
    promql_expr_t *e = NULL;
    im_err_t err;
    assert_int_equal(promql_parse_lang(q, strlen(q), l, &e, &err), IM_OK);
    promql_result_t r;
    assert_int_equal(promql_eval_instant(eng, promql_memstore_queryable(m), e, t_ms, &r, &err),
                     IM_OK);
    *nseries = r.nseries;
    double v = r.nseries ? r.series[0].points[0].v : NAN;
    promql_result_free(&r);
    promql_expr_free(e);
    promql_engine_free(eng);
    return v;
}

static void test_evaluation_by_level(void **state)
{
    (void)state;
    promql_memstore_t *m = promql_memstore_new();
    const im_labels_t *a = im_labels_from_strs("__name__", "x", "v", "a\nb", NULL);
    promql_memstore_add(m, a, 0, 1);
    promql_memstore_add(m, a, 60000, 2);
    im_labels_unref(a);
    size_t n;
    /* a window [t - 1m, t] holds both samples at 2.x, (t - 1m, t] only the last at 3 */
    assert_true(eval1(&v2, m, "count_over_time(x[1m])", 60000, &n) == 2 && n == 1);
    assert_true(eval1(&v3, m, "count_over_time(x[1m])", 60000, &n) == 1 && n == 1);
    /* the lookback is left-open too: the sample at 60 s is gone at 60 s + 5m */
    (void)eval1(&v2, m, "x", 360000, &n);
    assert_int_equal(n, 1);
    (void)eval1(&v3, m, "x", 360000, &n);
    assert_int_equal(n, 0);
    /* `.` matches a newline at compat 3 only */
    (void)eval1(&v2, m, "x{v=~\"a.b\"}", 60000, &n);
    assert_int_equal(n, 0);
    (void)eval1(&v3, m, "x{v=~\"a.b\"}", 60000, &n);
    assert_int_equal(n, 1);
    /* first_over_time, ts_of_last_over_time */
    assert_true(eval1(&v3, m, "first_over_time(x[2m])", 60000, &n) == 1);
    assert_true(eval1(&v3x, m, "ts_of_last_over_time(x[2m])", 90000, &n) == 60);
    promql_memstore_free(m);
}

static void test_features_flag(void **state)
{
    (void)state;
    promql_lang_t l = {.compat = 3};
    char why[256];
    assert_true(promql_lang_enable_features(
        &l, "promql-experimental-functions,promql-duration-expr", why, sizeof why));
    assert_true(l.experimental_functions);
    assert_true(promql_lang_enable_features(&l, "promql-binop-fill-modifiers", why, sizeof why));
    assert_true(l.binop_fill_modifiers);
    assert_false(promql_lang_enable_features(&l, "promql-no-such-feature", why, sizeof why));
    assert_non_null(strstr(why, "promql-no-such-feature"));
}

static void expect_fmt(const promql_lang_t *l, const char *q, const char *want)
{
    char *got = fmt(l, q);
    assert_string_equal(got, want);
    im_free(got);
}

/* fill()/fill_left()/fill_right() (promql-binop-fill-modifiers) and info()'s
 * label-selector argument: parsing, canonical form, errors */
static void test_fill_and_info_syntax(void **state)
{
    (void)state;
    static const promql_lang_t fl = {.compat = 3, .binop_fill_modifiers = true};
    static const promql_lang_t fl2 = {.compat = 2, .binop_fill_modifiers = true};
    expect_fmt(&fl, "a + fill(0) b", "a + fill(0) b");
    expect_fmt(&fl, "a+on(x)group_left(y)fill_left(-1)fill_right(Inf)b",
               "a + on (x) group_left (y) fill_left(-1) fill_right(+Inf) b");
    expect_fmt(&fl, "a == bool fill_right(2) b", "a == bool fill_right(2) b");
    expect_fmt(&fl, "fill + fill(1) fill", "fill + fill(1) fill");
    expect_fmt(&fl, "a + fill", "a + fill");
    expect_err(&fl, "a + fill(0) 1", "fill modifiers are only allowed");
    expect_err(&fl, "a and fill(0) b", "fill modifiers are only allowed");
    expect_err(&fl, "a + fill(0) fill(1) b", "duplicate or conflicting fill modifier");
    expect_err(&fl, "a + fill(x) b", "expected number literal");
    /* without the feature, or at compat 2, fill( is a call of an unknown function */
    expect_err(&v3, "a + fill(0) b", "unknown function with name \"fill\"");
    expect_err(&fl2, "a + fill(0) b", "unknown function with name \"fill\"");
    expect_fmt(&v3x, "info(x, {data=~\".*\"})", "info(x, {data=~\".*\"})");
    expect_fmt(&v3x, "info(x)", "info(x)");
    expect_err(&v3x, "info(x, y + 1)", "expected label selectors only");
    expect_err(&v3, "info(x)", "promql-experimental-functions");
    expect_err(&v2, "info(x)", "unknown function with name \"info\"");
}

/* anchored / smoothed range selectors (promql-extended-range-selectors) */
static void test_extended_ranges(void **state)
{
    (void)state;
    static const promql_lang_t xr = {.compat = 3, .extended_range_selectors = true};
    expect_fmt(&xr, "increase(x[5m]  anchored)", "increase(x[5m] anchored)");
    expect_fmt(&xr, "rate(x[1m] smoothed offset 1m)", "rate(x[1m] smoothed offset 1m)");
    expect_fmt(&xr, "anchored", "anchored");
    expect_err(&v3, "rate(x[5m] anchored)", "unexpected identifier");
    /* `x smoothed` on an instant vector selector, after or between its modifiers */
    expect_fmt(&xr, "x  smoothed", "x smoothed");
    expect_fmt(&xr, "x @ 100 smoothed + 0", "x @ 100.000 smoothed + 0");
    expect_fmt(&xr, "x smoothed offset -1m", "x offset -1m smoothed");
    expect_fmt(&xr, "rate(x smoothed[5m:1m])", "rate(x smoothed[5m:1m])");
    expect_err(&xr, "x smoothed[5m]", "no smoothed modifier allowed before range");
    expect_err(&xr, "x smoothed smoothed", "unexpected identifier");
    expect_err(&xr, "(x) smoothed", "unexpected identifier");
    expect_err(&xr, "x anchored", "unexpected identifier");
    expect_err(&v3, "x smoothed", "unexpected identifier");
}

/* UTF-8 names with the quoted syntax (compat 3) */
static void test_quoted_names(void **state)
{
    (void)state;
    expect_fmt(&v3, "{\"my.metric\", \"a.b\"=\"x\"}", "{\"my.metric\",\"a.b\"=\"x\"}");
    expect_fmt(&v3, "{\"foo\"}", "foo");
    expect_fmt(&v3, "foo{\"bar\"=\"1\"}", "foo{bar=\"1\"}");
    expect_fmt(&v3, "sum by (\"a.b\", c) ({\"m.x\"})", "sum by (\"a.b\", c) ({\"m.x\"})");
    expect_fmt(&v3, "a / ignoring(\"x-y\") b", "a / ignoring (\"x-y\") b");
    expect_err(&v3, "foo{\"bar\"}", "metric name must not be set twice");
    expect_err(&v3, "{\"a\", \"b\"}", "metric name must not be set twice");
    expect_err(&v3, "{\"\"=\"x\"}", "invalid label name");
    expect_err(&v2, "{\"my.metric\"}", "unexpected string");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_functions_by_level),   cmocka_unit_test(test_duration_expressions),
        cmocka_unit_test(test_evaluation_by_level),  cmocka_unit_test(test_features_flag),
        cmocka_unit_test(test_fill_and_info_syntax), cmocka_unit_test(test_quoted_names),
        cmocka_unit_test(test_extended_ranges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

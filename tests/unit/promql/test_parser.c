/* test_parser.c — the PromQL parser and printer.
 *
 * 1. Error texts: every query of tests/promql/parse_errors.txt with the answer
 *    Prometheus 2.42 gave for it (parse_errors.inc, generated once against the
 *    real server; documented 2.53/PCRE2 differences carry our answer).
 * 2. Round trip: every query that parses is printed, re-parsed and compared
 *    with promql_expr_equal; printing is idempotent.
 * 3. Canonical text of selected queries (checked against Prometheus'
 *    /api/v1/format_query for the short ones).
 * 4. AST shape: precedence, associativity, folding, matchers, modifiers,
 *    number and string literals, the function table, limits. */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "promql/parser.h"

typedef struct {
    const char *q;
    const char *want;
} err_case_t;

static const err_case_t err_cases[] = {
#include "parse_errors.inc"
};

/* Extra valid queries covering every construct for the round trip. */
static const char *const valid[] = {
    "up",
    "up{job=\"a\",instance!=\"b\",x=~\"c.*\",y!~\"d|e\"}",
    "{__name__=~\"job:.*\",a=\"b\"}",
    "x{a='single'} + x{b=`raw\\n`}",
    "x{a=\"\\a\\b\\f\\n\\r\\t\\v\\\\\\\"\\x41\\101\\u00e9\\U0001F600\"}",
    "\"\\xff\\x00\"",
    "'\\''",
    "x offset 5m",
    "x offset -5m",
    "x offset 1h30m",
    "x offset 90m",
    "x offset 1y",
    "x offset 53w",
    "x offset 1500ms",
    "x @ 1609746000",
    "x @ -1.5",
    "x @ start()",
    "x @ end() offset 1m",
    "x[5m] @ 1 offset -1m",
    "x[1h:]",
    "x[1h:5m] offset 1d @ end()",
    "rate(x[5m])[30m:1m]",
    "max_over_time(deriv(rate(x[1m])[5m:1m])[10m:])",
    "1 + 2 * 3 - 4 / 5 % 6 ^ 7",
    "2 ^ 3 ^ 4",
    "(2 ^ 3) ^ 4",
    "-2 ^ 2",
    "- -2",
    "-(2)",
    "+x",
    "-x * y",
    "x atan2 y",
    "a or b and c unless d",
    "(a or b) and c",
    "x == bool 1",
    "x > bool on (a) y",
    "x + on (a, b) group_left (c, d) y",
    "x + ignoring (a) group_right y",
    "x + ignoring () group_left y",
    "x / on () y",
    "x and on (a) y",
    "x or ignoring (b) y",
    "sum(x)",
    "sum by (a) (x)",
    "sum without (a, b) (x)",
    "sum by () (x)",
    "sum without () (x)",
    "avg(x) by (a)",
    "topk(5, x)",
    "bottomk by (a) (3, x)",
    "quantile without (b) (0.9, x)",
    "count_values(\"value\", x)",
    "count_values by (a) (\"le\", x)",
    "group(x) + stddev(x) - stdvar(x) + min(x) + max(x) + count(x)",
    "histogram_quantile(0.99, sum by (le, model_name) "
    "(rate(vllm:e2e_request_latency_seconds_bucket[5m])))",
    "label_replace(up, \"dst\", \"$1\", \"src\", \"(.*)\")",
    "label_join(up, \"dst\", \",\", \"a\", \"b\", \"c\")",
    "sort_by_label(up, \"a\", \"b\", \"c\")",
    "round(x, 0.5) + round(x)",
    "day_of_week() + hour(x) + days_in_month()",
    "time() + pi() + scalar(x)",
    "vector(1) + absent(x) + timestamp(x)",
    "clamp(x, -1, 1) + clamp_min(x, 0) + clamp_max(x, 1)",
    "holt_winters(x[1h], 0.3, 0.7)",
    "predict_linear(x[1h], 3600)",
    "quantile_over_time(0.5, x[5m])",
    "histogram_fraction(0, 0.5, x) + histogram_count(x) + histogram_sum(x) + histogram_avg(x)",
    "absent_over_time(x[5m]) + present_over_time(x[5m]) + last_over_time(x[5m])",
    "mad_over_time(x[5m])",
    "0x1F + 017 + 08 + 1e3 + .5 + 5. + 1.5e-7 + 123456789",
    "Inf + -Inf + NaN + inf + nan",
    "1e308 * 10",
    "1e-320",
    "sum",
    "by",
    "offset",
    "start + end",
    "and{a=\"b\"}",
    "x{on=\"a\", by=\"b\", sum=\"c\", bool=\"d\"}",
    "sum by (on, by, bool, atan2, start, offset, group_left) (x)",
    "x # a comment\n + y",
    "x\n+\ny",
    "foo:bar:baz{a=\"b\"}",
    "sum by (model_name) (rate(vllm:request_success_total[5m])) / ignoring (finished_reason) "
    "group_left sum by (model_name) (rate(vllm:request_success_total[5m]))",
    "x[5m a]",
    "((((x))))",
};

/* Canonical forms (as Prometheus' String()/format_query print them). */
static const struct {
    const char *in, *out;
} canon[] = {
    {"sum by(job)(rate(x{b=\"1\",a=~\"x\"}[90m] offset 1w @ 100))",
     "sum by (job) (rate(x{a=~\"x\",b=\"1\"}[1h30m] @ 100.000 offset 1w))"},
    {"x + ignoring(a) group_left(b) y", "x + ignoring (a) group_left (b) y"},
    {"x[5m:] @ end() offset -1d", "x[5m:] @ end() offset -1d"},
    {"a^-b", "a ^ -b"},
    {"- -x", "--x"},
    {"0x1F + 1e-7 + Inf", "31 + 1e-07 + +Inf"},
    {"1e20 + 100000 + 1000000 + 123456.5", "1e+20 + 100000 + 1e+06 + 123456.5"},
    {"\"a\\nb\"", "\"a\\nb\""},
    {"x @ 1.5", "x @ 1.500"},
    {"topk by (a) (5, x)", "topk by (a) (5, x)"},
    {"sum(x) by (a)", "sum by (a) (x)"},
    {"{__name__=\"x\"}", "{__name__=\"x\"}"},
    {"x offset 90d", "x offset 90d"},
    {"x offset 14d", "x offset 2w"},
    {"x offset 365d", "x offset 1y"},
    {"x[1500ms]", "x[1s500ms]"},
    {"x and ignoring() y", "x and y"},
    {"x{a='\\''}", "x{a=\"'\"}"},
    {"x{a=`\\d`}", "x{a=\"\\\\d\"}"},
    {"SUM BY (a) (X)", "sum by (a) (X)"},
    {"1 == bool 1", "1 == bool 1"},
    {"x @ -1", "x @ -1.000"},
};

static promql_expr_t *parse_ok(const char *q)
{
    promql_expr_t *e = NULL;
    im_err_t err;
    im_rc rc = promql_parse(q, strlen(q), &e, &err);
    if (rc != IM_OK) fail_msg("parse of %s failed: %s", q, err.msg);
    return e;
}

static char *format(const promql_expr_t *e)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(promql_format(e, &b), IM_OK);
    size_t n;
    char *s = im_buf_steal(&b, &n);
    return s ? s : im_strdup("");
}

static void round_trip(const char *q)
{
    promql_expr_t *a = parse_ok(q);
    char *s1 = format(a);
    promql_expr_t *b = NULL;
    im_err_t err;
    if (promql_parse(s1, strlen(s1), &b, &err) != IM_OK)
        fail_msg("reparse of %s (printed from %s) failed: %s", s1, q, err.msg);
    if (!promql_expr_equal(a, b)) fail_msg("AST differs after round trip: %s -> %s", q, s1);
    char *s2 = format(b);
    if (strcmp(s1, s2) != 0) fail_msg("printing not idempotent: %s -> %s -> %s", q, s1, s2);
    im_free(s1);
    im_free(s2);
    promql_expr_free(a);
    promql_expr_free(b);
}

static void test_error_texts(void **state)
{
    (void)state;
    size_t bad = 0, nerr = 0;
    for (size_t i = 0; i < IM_ARRAY_LEN(err_cases); i++) {
        const err_case_t *c = &err_cases[i];
        promql_expr_t *e = NULL;
        im_err_t err;
        im_rc rc = promql_parse(c->q, strlen(c->q), &e, &err);
        const char *got = rc == IM_OK ? "" : err.msg;
        if (strcmp(got, c->want) != 0) {
            print_error("query %s\n  want: %s\n  got:  %s\n", c->q, c->want, got);
            bad++;
        }
        if (rc != IM_OK) {
            nerr++;
            assert_null(e);
            assert_int_equal(rc, IM_EPARSE);
        }
        promql_expr_free(e);
    }
    print_message("%zu queries, %zu errors checked\n", IM_ARRAY_LEN(err_cases), nerr);
    assert_int_equal(bad, 0);
}

static void test_round_trip_table(void **state)
{
    (void)state;
    size_t n = 0;
    for (size_t i = 0; i < IM_ARRAY_LEN(err_cases); i++)
        if (err_cases[i].want[0] == 0) {
            round_trip(err_cases[i].q);
            n++;
        }
    for (size_t i = 0; i < IM_ARRAY_LEN(valid); i++) {
        round_trip(valid[i]);
        n++;
    }
    print_message("%zu queries round-tripped\n", n);
}

static void test_canonical(void **state)
{
    (void)state;
    for (size_t i = 0; i < IM_ARRAY_LEN(canon); i++) {
        promql_expr_t *e = parse_ok(canon[i].in);
        char *s = format(e);
        if (strcmp(s, canon[i].out) != 0)
            fail_msg("format(%s) = %s, want %s", canon[i].in, s, canon[i].out);
        im_free(s);
        promql_expr_free(e);
    }
}

static void test_precedence(void **state)
{
    (void)state;
    /* -2^2 = -(2^2) */
    promql_expr_t *e = parse_ok("-2^2");
    assert_int_equal(e->kind, PROMQL_NODE_UNARY);
    assert_int_equal(e->u.unary.op, PROMQL_UNARY_MINUS);
    assert_int_equal(e->u.unary.expr->kind, PROMQL_NODE_BINARY);
    assert_int_equal(e->u.unary.expr->u.bin.op, PROMQL_OP_POW);
    assert_int_equal(promql_expr_type(e), PROMQL_TYPE_SCALAR);
    promql_expr_free(e);
    /* 2^3^2 = 2^(3^2) */
    e = parse_ok("2^3^2");
    assert_int_equal(e->u.bin.rhs->kind, PROMQL_NODE_BINARY);
    assert_int_equal(e->u.bin.lhs->kind, PROMQL_NODE_NUMBER);
    promql_expr_free(e);
    /* a - b - c = (a - b) - c */
    e = parse_ok("a - b - c");
    assert_int_equal(e->u.bin.lhs->kind, PROMQL_NODE_BINARY);
    promql_expr_free(e);
    /* a or b and c = a or (b and c) */
    e = parse_ok("a or b and c");
    assert_int_equal(e->u.bin.op, PROMQL_OP_OR);
    assert_int_equal(e->u.bin.rhs->u.bin.op, PROMQL_OP_AND);
    assert_int_equal(e->u.bin.matching->card, PROMQL_CARD_MANY_TO_MANY);
    promql_expr_free(e);
    /* -1 * 2: unary binds like *, folded into the literal */
    e = parse_ok("-1 * 2");
    assert_int_equal(e->u.bin.lhs->kind, PROMQL_NODE_NUMBER);
    assert_true(e->u.bin.lhs->u.number.value == -1);
    promql_expr_free(e);
    /* 1 + 2 * 3 == bool 7 */
    e = parse_ok("1 + 2 * 3 == bool 7");
    assert_int_equal(e->u.bin.op, PROMQL_OP_EQL);
    assert_true(e->u.bin.return_bool);
    assert_null(e->u.bin.matching);
    assert_int_equal(e->u.bin.lhs->u.bin.op, PROMQL_OP_ADD);
    promql_expr_free(e);
}

static void test_selectors(void **state)
{
    (void)state;
    promql_expr_t *e = parse_ok("foo{a=\"b\", c=~\"d.*\"} offset -5m @ end()");
    assert_int_equal(e->kind, PROMQL_NODE_VECTOR_SELECTOR);
    assert_string_equal(e->u.vs.name->s, "foo");
    assert_int_equal(e->u.vs.nmatchers, 3);
    /* implicit name matcher last */
    assert_string_equal(im_matcher_name(e->u.vs.matchers[2])->s, "__name__");
    assert_int_equal(im_matcher_type(e->u.vs.matchers[1]), IM_MATCH_RE);
    assert_int_equal(e->u.vs.offset_ms, -300000);
    assert_int_equal(e->u.vs.at, PROMQL_AT_END);
    promql_expr_free(e);

    e = parse_ok("{__name__=~\"a.*\"}");
    assert_null(e->u.vs.name);
    assert_int_equal(e->u.vs.nmatchers, 1);
    promql_expr_free(e);

    e = parse_ok("rate(x[1h30m] offset 1m @ 1.5)");
    assert_int_equal(e->kind, PROMQL_NODE_CALL);
    assert_string_equal(e->u.call.func->name, "rate");
    promql_expr_t *m = e->u.call.args[0];
    assert_int_equal(m->kind, PROMQL_NODE_MATRIX_SELECTOR);
    assert_int_equal(m->u.ms.range_ms, 5400000);
    assert_int_equal(m->u.ms.vs->u.vs.offset_ms, 60000);
    assert_int_equal(m->u.ms.vs->u.vs.at, PROMQL_AT_TIMESTAMP);
    assert_int_equal(m->u.ms.vs->u.vs.at_ms, 1500);
    assert_int_equal(promql_expr_type(m), PROMQL_TYPE_MATRIX);
    promql_expr_free(e);

    e = parse_ok("x[5m:] offset 1m");
    assert_int_equal(e->kind, PROMQL_NODE_SUBQUERY);
    assert_int_equal(e->u.sq.step_ms, 0);
    assert_int_equal(e->u.sq.range_ms, 300000);
    assert_int_equal(e->u.sq.offset_ms, 60000);
    promql_expr_free(e);

    e = parse_ok("x[5m:30s]");
    assert_int_equal(e->u.sq.step_ms, 30000);
    promql_expr_free(e);
}

static void test_modifiers(void **state)
{
    (void)state;
    promql_expr_t *e = parse_ok("a * on(x, y) group_left(z) b");
    const promql_vector_matching_t *vm = e->u.bin.matching;
    assert_non_null(vm);
    assert_true(vm->on);
    assert_int_equal(vm->card, PROMQL_CARD_MANY_TO_ONE);
    assert_int_equal(vm->nmatching_labels, 2);
    assert_string_equal(vm->matching_labels[1]->s, "y");
    assert_int_equal(vm->ninclude_labels, 1);
    assert_string_equal(vm->include_labels[0]->s, "z");
    promql_expr_free(e);

    e = parse_ok("count_values without (a) (\"v\", x)");
    assert_int_equal(e->kind, PROMQL_NODE_AGGREGATE);
    assert_int_equal(e->u.agg.op, PROMQL_AGG_COUNT_VALUES);
    assert_true(e->u.agg.without);
    assert_int_equal(e->u.agg.ngrouping, 1);
    assert_int_equal(e->u.agg.param->kind, PROMQL_NODE_STRING);
    assert_string_equal(e->u.agg.param->u.string.s, "v");
    promql_expr_free(e);
}

static void test_literals(void **state)
{
    (void)state;
    static const struct {
        const char *q;
        double v;
    } nums[] = {{"0x1F", 31},
                {"017", 15},
                {"08", 8},
                {"1e3", 1000},
                {".5", 0.5},
                {"5.", 5},
                {"-0.2e-6", -2e-7},
                {"+Inf", INFINITY},
                {"-inf", -INFINITY},
                {"1e-400", 0},
                {"9223372036854775808", 9223372036854775808.0}};
    for (size_t i = 0; i < IM_ARRAY_LEN(nums); i++) {
        promql_expr_t *e = parse_ok(nums[i].q);
        assert_int_equal(e->kind, PROMQL_NODE_NUMBER);
        if (e->u.number.value != nums[i].v) fail_msg("%s = %g", nums[i].q, e->u.number.value);
        promql_expr_free(e);
    }
    promql_expr_t *e = parse_ok("NaN");
    assert_true(isnan(e->u.number.value));
    promql_expr_free(e);

    e = parse_ok("\"\\a\\x41\\101\\u00e9\\U0001F600\\\\\\\"\"");
    assert_int_equal(e->kind, PROMQL_NODE_STRING);
    assert_int_equal(e->u.string.len, 1 + 1 + 1 + 2 + 4 + 1 + 1);
    assert_memory_equal(e->u.string.s, "\aAA\xc3\xa9\xf0\x9f\x98\x80\\\"", e->u.string.len);
    promql_expr_free(e);

    e = parse_ok("`a\\nb\nc`");
    assert_string_equal(e->u.string.s, "a\\nb\nc");
    promql_expr_free(e);

    e = parse_ok("'a\"b'");
    assert_string_equal(e->u.string.s, "a\"b");
    promql_expr_free(e);
}

static void test_function_table(void **state)
{
    (void)state;
    for (size_t i = 1; i < promql_functions_count; i++)
        assert_true(strcmp(promql_functions[i - 1].name, promql_functions[i].name) < 0);
    for (size_t i = 0; i < promql_functions_count; i++) {
        const promql_function_t *f = promql_functions + i;
        assert_ptr_equal(promql_function_lookup(f->name, strlen(f->name)), f);
        assert_true(f->nargs <= PROMQL_FUNC_MAX_ARGS);
    }
    assert_null(promql_function_lookup("nope", 4));
    assert_null(promql_function_lookup("limitk", 6));
    const promql_function_t *f = promql_function_lookup("label_join", 10);
    assert_int_equal(f->variadic, -1);
    assert_true(promql_function_lookup("mad_over_time", 13)->experimental);
    assert_false(promql_function_lookup("rate", 4)->experimental);
    /* 2.53's 76 functions: the entries of compat 3 only (first_over_time, …) aside */
    size_t n2 = 0;
    for (size_t i = 0; i < promql_functions_count; i++) n2 += promql_functions[i].only_compat != 3;
    assert_int_equal(n2, 76);
}

/* The table also carries the evaluation: every entry has one, element-wise
 * entries their per-value function, and __name__ is kept by exactly the
 * functions Prometheus 2.53 keeps it for. The parser points calls at entries. */
static void test_function_table_eval(void **state)
{
    (void)state;
    static const char *const keep[] = {"label_join", "label_replace", "last_over_time",
                                       "sort",       "sort_by_label", "sort_by_label_desc",
                                       "sort_desc"};
    size_t nkeep = 0;
    for (size_t i = 0; i < promql_functions_count; i++) {
        const promql_function_t *f = promql_functions + i;
        assert_non_null(f->eval);
        if (f->only_compat == 3) continue; /* 3.x's, checked in test_compat3.c */
        if (f->per_value) assert_true(f->nargs == 1 && f->arg_types[0] == PROMQL_TYPE_VECTOR);
        bool want = false;
        for (size_t j = 0; j < sizeof keep / sizeof keep[0]; j++)
            if (strcmp(keep[j], f->name) == 0) want = true;
        assert_int_equal(f->keeps_name, want);
        nkeep += f->keeps_name;
    }
    assert_int_equal(nkeep, sizeof keep / sizeof keep[0]);
    const promql_function_t *h = promql_function_lookup("hour", 4);
    const promql_function_t *m = promql_function_lookup("minute", 6);
    assert_true(h->per_value && m->per_value && h->per_value != m->per_value);
    assert_true(h->per_value(3600 * 5 + 60 * 7) == 5);
    assert_true(m->per_value(3600 * 5 + 60 * 7) == 7);
    promql_expr_t *e = parse_ok("day_of_week(x) + rate(y[5m])");
    assert_ptr_equal(e->u.bin.lhs->u.call.func, promql_function_lookup("day_of_week", 11));
    assert_ptr_equal(e->u.bin.rhs->u.call.func, promql_function_lookup("rate", 4));
    promql_expr_free(e);
}

static void test_limits_and_misc(void **state)
{
    (void)state;
    /* deep nesting refused cleanly */
    size_t depth = 5000;
    char *q = im_malloc(depth * 2 + 2);
    for (size_t i = 0; i < depth; i++) q[i] = '(';
    q[depth] = '1';
    for (size_t i = 0; i < depth; i++) q[depth + 1 + i] = ')';
    promql_expr_t *e = NULL;
    im_err_t err;
    assert_int_equal(promql_parse(q, depth * 2 + 1, &e, &err), IM_ELIMIT);
    assert_null(e);
    im_free(q);
    /* long binary chain refused, no deep recursion */
    size_t n = 200000;
    q = im_malloc(n * 2 + 1);
    for (size_t i = 0; i < n; i++) {
        q[2 * i] = 'x';
        q[2 * i + 1] = '+';
    }
    q[2 * n - 1] = 0;
    assert_int_equal(promql_parse(q, 2 * n - 1, &e, &err), IM_ELIMIT);
    im_free(q);
    /* chain of subqueries */
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_puts(&b, "x");
    for (int i = 0; i < 3000; i++) (void)im_buf_puts(&b, "[1m:]");
    assert_int_equal(promql_parse(b.data, b.len, &e, &err), IM_ELIMIT);
    im_buf_free(&b);
    /* just under the limit: parses (and fits the stack under ASan) */
    im_buf_t d;
    im_buf_init(&d, 0);
    for (int i = 0; i < 990; i++) (void)im_buf_puts(&d, "abs(-");
    (void)im_buf_putc(&d, 'x');
    for (int i = 0; i < 990; i++) (void)im_buf_putc(&d, ')');
    assert_int_equal(promql_parse(d.data, d.len, &e, &err), IM_ELIMIT); /* 1980 levels */
    im_buf_reset(&d);
    for (int i = 0; i < 495; i++) (void)im_buf_puts(&d, "abs(-");
    (void)im_buf_putc(&d, 'x');
    for (int i = 0; i < 495; i++) (void)im_buf_putc(&d, ')');
    assert_int_equal(promql_parse(d.data, d.len, &e, &err), IM_OK);
    char *txt = format(e);
    assert_int_equal(strlen(txt), d.len);
    im_free(txt);
    promql_expr_free(e);
    im_buf_reset(&d);
    for (int i = 0; i < 995; i++) (void)im_buf_puts(&d, "+");
    (void)im_buf_puts(&d, "x^2");
    assert_int_equal(promql_parse(d.data, d.len, &e, &err), IM_OK);
    promql_expr_free(e);
    im_buf_free(&d);
    /* error positions on later lines */
    const char *ml = "sum(\n  rate(x[5m])\n  +\n)";
    assert_int_equal(promql_parse(ml, strlen(ml), &e, &err), IM_EPARSE);
    assert_string_equal(err.msg, "4:1: parse error: unexpected \")\" in aggregation");
    assert_int_equal(err.offset, (int64_t)strlen(ml) - 1);
    /* not NUL-terminated input */
    const char buf[] = {'u', 'p', '{'};
    assert_int_equal(promql_parse(buf, 2, &e, &err), IM_OK);
    promql_expr_free(e);
    assert_int_equal(promql_parse(buf, 3, &e, &err), IM_EPARSE);
    /* embedded NUL */
    assert_int_equal(promql_parse("up\0x", 4, &e, &err), IM_EPARSE);
    assert_string_equal(err.msg, "1:3: parse error: unexpected character: '\\x00'");
    /* metric selector API */
    im_matcher_t **ms;
    size_t nms;
    assert_int_equal(promql_parse_metric_selector("up{a=\"b\"}", 9, &ms, &nms, &err), IM_OK);
    assert_int_equal(nms, 2);
    assert_true(im_matcher_matches(ms[1], "up", 2));
    promql_matchers_free(ms, nms);
    assert_int_equal(promql_parse_metric_selector("sum(up)", 7, &ms, &nms, &err), IM_EPARSE);
    /* texts from Prometheus 2.42's /api/v1/series match[] */
    assert_string_equal(err.msg, "1:4: parse error: unexpected \"(\"");
    assert_int_equal(promql_parse_metric_selector("x offset 5m", 11, &ms, &nms, &err), IM_EPARSE);
    assert_string_equal(err.msg, "1:3: parse error: unexpected <offset>");
    assert_int_equal(promql_parse_metric_selector("x[5m]", 5, &ms, &nms, &err), IM_EPARSE);
    assert_string_equal(err.msg, "1:2: parse error: unexpected \"[\"");
    assert_int_equal(promql_parse_metric_selector("1", 1, &ms, &nms, &err), IM_EPARSE);
    assert_string_equal(err.msg, "1:1: parse error: unexpected number \"1\"");
    assert_int_equal(promql_parse_metric_selector("x{a=}", 5, &ms, &nms, &err), IM_EPARSE);
    assert_string_equal(err.msg,
                        "1:5: parse error: unexpected \"}\" in label matching, expected string");
    assert_int_equal(promql_parse_metric_selector("{}", 2, &ms, &nms, &err), IM_OK);
    assert_int_equal(nms, 0);
    promql_matchers_free(ms, nms);
    /* durations */
    int64_t ms_out;
    assert_int_equal(promql_parse_duration("1h30m", 5, &ms_out, NULL), IM_OK);
    assert_int_equal(ms_out, 5400000);
    assert_int_equal(promql_parse_duration("292y", 4, &ms_out, NULL), IM_OK);
    assert_int_equal(promql_parse_duration("293y", 4, &ms_out, &err), IM_EPARSE);
    assert_string_equal(err.msg, "duration out of range");
    assert_int_equal(promql_parse_duration("1m1h", 4, &ms_out, &err), IM_EPARSE);
    assert_string_equal(err.msg, "not a valid duration string: \"1m1h\"");
}

int main(void)
{
    /* These tests pin Prometheus 2.53's answers (--promql.compat=2); compat 3 is
     * test_compat3.c's. */
    promql_lang_set_default(&(promql_lang_t){.compat = 2});
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_texts),
        cmocka_unit_test(test_round_trip_table),
        cmocka_unit_test(test_canonical),
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_selectors),
        cmocka_unit_test(test_modifiers),
        cmocka_unit_test(test_literals),
        cmocka_unit_test(test_function_table),
        cmocka_unit_test(test_function_table_eval),
        cmocka_unit_test(test_limits_and_misc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

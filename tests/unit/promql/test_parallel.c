/* test_parallel.c — the evaluator's speed paths give the answers of the plain
 * ones bit for bit: range functions over many series on several threads, and
 * aggregations fused with a range function (sum by (…) (rate(…)) and the like),
 * on one thread and on several, against the same query written so that neither
 * applies (a double negation keeps every value). Also the sample-limit error and
 * the samples counted, timeouts through the workers, a store whose series set
 * does not allow concurrent iterators, and the real store on several threads. */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "promql/parser.h"
#include "promql/promql.h"
#include "tsdb/tsdb.h"

static uint64_t rng = 42;
static double rnd01(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng >> 11) / 9007199254740992.0;
}

typedef void (*emit_fn)(void *arg, const im_labels_t *ls, int64_t t, double v);

/* 240 counter series (12 models x 20 pods) with resets, gaps and stale markers,
 * two gauges families, one with a second metric name sharing the label sets; each
 * series' samples in time order. */
static void generate(emit_fn emit, void *arg)
{
    rng = 42;
    char model[16], pod[16];
    for (int s = 0; s < 240; s++) {
        snprintf(model, sizeof model, "m%d", s % 12);
        snprintf(pod, sizeof pod, "p%d", s);
        const im_labels_t *c =
            im_labels_from_strs("__name__", "req_total", "model", model, "pod", pod, NULL);
        const im_labels_t *g =
            im_labels_from_strs("__name__", "queue", "model", model, "pod", pod, NULL);
        const im_labels_t *g2 =
            im_labels_from_strs("__name__", "queue2", "model", model, "pod", pod, NULL);
        double v = rnd01() * 1000;
        for (int i = 0; i < 400; i++) {
            int64_t t = i * 15000LL + (int64_t)(rnd01() * 3000);
            if (s % 7 == 3 && i > 100 && i < 130) continue; /* a gap */
            if (rnd01() < 0.01) v = rnd01() * 10;           /* a reset */
            v += rnd01() * 37.3;
            emit(arg, c, t, (s % 11 == 5 && i == 200) ? tsdb_stale_nan() : v);
            emit(arg, g, t, rnd01() * 1e3 - 100);
            if (s < 30) emit(arg, g2, t, rnd01());
        }
        im_labels_unref(c);
        im_labels_unref(g);
        im_labels_unref(g2);
    }
}

static void emit_mem(void *arg, const im_labels_t *ls, int64_t t, double v)
{
    promql_memstore_add(arg, ls, t, v);
}

static promql_memstore_t *make_store(void)
{
    promql_memstore_t *m = promql_memstore_new();
    generate(emit_mem, m);
    return m;
}

static void emit_tsdb(void *arg, const im_labels_t *ls, int64_t t, double v)
{
    tsdb_appender_t *a = tsdb_appender(arg);
    assert_int_equal(tsdb_appender_add(a, 0, ls, t, v, NULL), IM_OK);
    im_err_t err;
    assert_int_equal(tsdb_appender_commit(a, &err), IM_OK);
}

static char *run(tsdb_queryable_t *q, const promql_engine_opts_t *o, const char *qs, bool instant,
                 int64_t *total, im_rc *rcp, char *errmsg)
{
    promql_engine_t *eng = promql_engine_new(o);
    promql_expr_t *e = NULL;
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(promql_parse(qs, strlen(qs), &e, &err), IM_OK);
    promql_result_t r;
    im_rc rc = instant ? promql_eval_instant(eng, q, e, 5000000, &r, &err)
                       : promql_eval_range(eng, q, e, 600000, 6000000, 30000, &r, &err);
    *rcp = rc;
    im_buf_t b;
    im_buf_init(&b, 0);
    if (rc == IM_OK) {
        assert_int_equal(promql_result_to_json(&r, &b), IM_OK);
        *total = r.samples_total;
        promql_result_free(&r);
    } else {
        snprintf(errmsg, IM_ERR_MSG_MAX, "%s", err.msg);
        im_buf_puts(&b, "ERR");
    }
    promql_expr_free(e);
    promql_engine_free(eng);
    char *s = im_strndup(b.data, b.len);
    im_buf_free(&b);
    return s;
}

static const char *queries[] = {
    "sum by (model) (rate(req_total[5m]))",
    "sum without (pod) (increase(req_total[2m]))",
    "avg by (model) (irate(req_total[5m]))",
    "max by (model) (max_over_time(queue[10m]))",
    "min(min_over_time(queue[1m]))",
    "count by (model) (delta(queue[3m]))",
    "stddev by (model) (deriv(queue[5m]))",
    "stdvar by (model) (avg_over_time(queue[5m]))",
    "group by (model) (changes(queue[5m]))",
    "sum by (model) (last_over_time(req_total[5m]))",
    "sum by (__name__) (rate(req_total[5m]))",
    "sum by (model) (sum_over_time({__name__=~\"queue|queue2\"}[5m]))",
    "sum by (model) (rate(req_total[5m] offset 3m))",
    "sum by (model) (rate(req_total[5m] @ 3000))",
    "sum(count_over_time(queue[30s]))",
};

/* The same query with neither path applying: the range function's result is
 * negated twice (exact) before it is aggregated. */
static void plain_form(const char *q, char *out, size_t cap)
{
    /* "agg by (…) (f(…))" or "agg(f(…))": wrap f(…) */
    const char *open = strchr(q, '(');
    const char *p = strstr(q, ") (");
    const char *inner = p ? p + 3 : open + 1;
    size_t pre = (size_t)(inner - q);
    size_t len = strlen(inner);
    snprintf(out, cap, "%.*s-(-(%.*s)))", (int)pre, q, (int)(len - 1), inner);
}

static void test_paths_agree(void **state)
{
    (void)state;
    promql_memstore_t *m = make_store();
    tsdb_queryable_t *q = promql_memstore_queryable(m);
    promql_engine_opts_t one = {.threads = 1};
    promql_engine_opts_t par = {.threads = 3, .parallel_min_work = 1};
    char errmsg[IM_ERR_MSG_MAX];
    for (size_t i = 0; i < IM_ARRAY_LEN(queries); i++) {
        char plain[512];
        plain_form(queries[i], plain, sizeof plain);
        for (int instant = 0; instant < 2; instant++) {
            int64_t t0 = 0, t1 = 0, t2 = 0, t3 = 0;
            im_rc r0, r1, r2, r3;
            char e0[IM_ERR_MSG_MAX] = "", e1[IM_ERR_MSG_MAX] = "";
            char *a = run(q, &one, plain, instant, &t0, &r0, e0);
            char *b = run(q, &one, queries[i], instant, &t1, &r1, e1);
            char *c = run(q, &par, queries[i], instant, &t2, &r2, errmsg);
            char *d = run(q, &par, plain, instant, &t3, &r3, errmsg);
            if (strcmp(a, b) || strcmp(a, c) || strcmp(a, d))
                print_error("%s (%s): results differ\n", queries[i], instant ? "instant" : "range");
            assert_int_equal(r0, r1);
            assert_int_equal(r0, r2);
            assert_int_equal(r0, r3);
            assert_string_equal(e0, e1);
            /* all but the two names sharing label sets have an answer */
            if (!strstr(queries[i], "queue2")) {
                assert_int_equal(r0, IM_OK);
                assert_true(strlen(a) > 40);
            }
            assert_string_equal(a, b);
            assert_string_equal(a, c);
            assert_string_equal(a, d);
            assert_int_equal(t0, t1);
            assert_int_equal(t0, t2);
            assert_int_equal(t0, t3);
            im_free(a);
            im_free(b);
            im_free(c);
            im_free(d);
        }
    }
    promql_memstore_free(m);
}

static void test_limit_agrees(void **state)
{
    (void)state;
    promql_memstore_t *m = make_store();
    tsdb_queryable_t *q = promql_memstore_queryable(m);
    const char *qs = "sum by (model) (rate(req_total[5m]))";
    char plain[512];
    plain_form(qs, plain, sizeof plain);
    /* below the largest series read, between that and the function's points,
     * above everything */
    int64_t limits[] = {30, 500, 20000, 40000, 10000000};
    for (size_t i = 0; i < IM_ARRAY_LEN(limits); i++) {
        promql_engine_opts_t one = {.threads = 1, .max_samples = limits[i]};
        promql_engine_opts_t par = {.threads = 2, .parallel_min_work = 1, .max_samples = limits[i]};
        char e0[IM_ERR_MSG_MAX] = "", e1[IM_ERR_MSG_MAX] = "", e2[IM_ERR_MSG_MAX] = "";
        int64_t t0 = 0, t1 = 0, t2 = 0;
        im_rc r0, r1, r2;
        char *a = run(q, &one, plain, false, &t0, &r0, e0);
        char *b = run(q, &one, qs, false, &t1, &r1, e1);
        char *c = run(q, &par, qs, false, &t2, &r2, e2);
        assert_int_equal(r0, r1);
        assert_int_equal(r0, r2);
        assert_string_equal(e0, e1);
        assert_string_equal(e0, e2);
        assert_string_equal(a, b);
        assert_string_equal(a, c);
        assert_int_equal(t0, t1);
        assert_int_equal(t0, t2);
        if (i == 0) assert_int_equal(r0, IM_ELIMIT);
        if (i == IM_ARRAY_LEN(limits) - 1) assert_int_equal(r0, IM_OK);
        im_free(a);
        im_free(b);
        im_free(c);
    }
    promql_memstore_free(m);
}

static void test_timeout_in_workers(void **state)
{
    (void)state;
    promql_memstore_t *m = make_store();
    tsdb_queryable_t *q = promql_memstore_queryable(m);
    volatile int cancel = 1;
    promql_engine_opts_t par = {.threads = 2, .parallel_min_work = 1};
    promql_engine_t *eng = promql_engine_new(&par);
    const char *qs[] = {"sum by (model) (rate(req_total[5m]))", "rate(req_total[5m])"};
    for (size_t i = 0; i < 2; i++) {
        promql_expr_t *e = NULL;
        im_err_t err;
        assert_int_equal(promql_parse(qs[i], strlen(qs[i]), &e, &err), IM_OK);
        promql_query_params_t p = {.start_ms = 600000,
                                   .end_ms = 6000000,
                                   .step_ms = 30000,
                                   .cancel = (const volatile int *)&cancel};
        promql_result_t r;
        assert_int_equal(promql_eval(eng, q, e, &p, &r, &err), IM_ECANCELED);
        assert_string_equal(err.msg, "query was canceled in expression evaluation");
        promql_expr_free(e);
    }
    promql_engine_free(eng);
    promql_memstore_free(m);
}

/* A queryable over the memstore whose sets forbid concurrent iterators. */
typedef struct wrapq {
    tsdb_queryable_t pub;
    tsdb_queryable_t *in;
} wrapq_t;

static im_rc wrap_select(tsdb_queryable_t *q, int64_t mint, int64_t maxt, im_matcher_t *const *ms,
                         size_t nms, const tsdb_select_hints_t *h, tsdb_series_set_t **out,
                         im_err_t *err)
{
    wrapq_t *w = (wrapq_t *)q;
    im_rc rc = w->in->vt->select(w->in, mint, maxt, ms, nms, h, out, err);
    if (rc == IM_OK) (*out)->concurrent_iter = false;
    return rc;
}

static void test_single_thread_sets(void **state)
{
    (void)state;
    promql_memstore_t *m = make_store();
    tsdb_queryable_t *q = promql_memstore_queryable(m);
    tsdb_queryable_vt_t vt = *q->vt;
    vt.select = wrap_select;
    wrapq_t w = {.pub = {.vt = &vt}, .in = q};
    promql_engine_opts_t one = {.threads = 1};
    promql_engine_opts_t par = {.threads = 2, .parallel_min_work = 1};
    char errmsg[IM_ERR_MSG_MAX];
    const char *qs[] = {"sum by (model) (rate(req_total[5m]))", "rate(req_total[5m])"};
    for (size_t i = 0; i < 2; i++) {
        int64_t t0, t1;
        im_rc r0, r1;
        char *a = run(q, &one, qs[i], false, &t0, &r0, errmsg);
        char *b = run(&w.pub, &par, qs[i], false, &t1, &r1, errmsg);
        assert_int_equal(r1, IM_OK);
        assert_string_equal(a, b);
        im_free(a);
        im_free(b);
    }
    promql_memstore_free(m);
}

/* The real store (memory mode: head chunks only, so its sets allow concurrent
 * iterators) on several threads against the array store on one. */
static void test_tsdb_store(void **state)
{
    (void)state;
    promql_memstore_t *m = make_store();
    tsdb_opts_t to = {.dir = NULL, .no_background = true};
    tsdb_t *db;
    im_err_t err;
    assert_int_equal(tsdb_open(&to, &db, &err), IM_OK);
    generate(emit_tsdb, db);
    tsdb_queryable_t *tq = tsdb_queryable(db);
    promql_engine_opts_t one = {.threads = 1};
    promql_engine_opts_t par = {.threads = 3, .parallel_min_work = 1};
    char errmsg[IM_ERR_MSG_MAX];
    const char *qs[] = {"sum by (model) (rate(req_total[5m]))", "rate(req_total[5m])",
                        "max_over_time(queue[2m])", "avg without (pod) (increase(req_total[1m]))"};
    for (size_t i = 0; i < IM_ARRAY_LEN(qs); i++) {
        for (int instant = 0; instant < 2; instant++) {
            int64_t t0, t1;
            im_rc r0, r1;
            char *a = run(promql_memstore_queryable(m), &one, qs[i], instant, &t0, &r0, errmsg);
            char *b = run(tq, &par, qs[i], instant, &t1, &r1, errmsg);
            assert_int_equal(r0, IM_OK);
            assert_int_equal(r1, IM_OK);
            assert_string_equal(a, b);
            assert_int_equal(t0, t1);
            im_free(a);
            im_free(b);
        }
    }
    tq->vt->close(tq);
    tsdb_close(db);
    promql_memstore_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths_agree),        cmocka_unit_test(test_limit_agrees),
        cmocka_unit_test(test_timeout_in_workers), cmocka_unit_test(test_single_thread_sets),
        cmocka_unit_test(test_tsdb_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

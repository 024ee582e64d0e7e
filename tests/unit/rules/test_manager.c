/* test_manager.c — rule evaluation at run time: group time alignment, missed
 * iterations, recording rules visible to later rules, the alert state machine
 * with notifications (firing, resend, resolution), restoration of `for` state
 * from ALERTS_FOR_STATE after a restart, and the /api/v1/rules and
 * /api/v1/alerts JSON. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <cmocka.h>
#include <jansson.h>

#include "promql/parser.h"
#include "promql/promql.h"
#include "rules/rules.h"
#include "util/timeutil.h"

static im_rc ms_append(void *ctx, const im_labels_t *ls, int64_t t, double v)
{
    promql_memstore_add(ctx, ls, t, v);
    return IM_OK;
}

typedef struct sent {
    int calls, alerts, resolved;
    int64_t last_ends_at;
    char url[512];
} sent_t;

static void on_notify(void *ctx, const rules_notify_alert_t *a, size_t n)
{
    sent_t *s = ctx;
    s->calls++;
    for (size_t i = 0; i < n; i++) {
        s->alerts++;
        if (a[i].resolved) s->resolved++;
        s->last_ends_at = a[i].ends_at_ms;
        snprintf(s->url, sizeof s->url, "%s", a[i].generator_url);
    }
}

static rules_file_t *parse(const char *text)
{
    rules_errs_t errs = {0};
    rules_file_t *f = NULL;
    im_rc rc = rules_file_parse("t.yml", text, strlen(text), &f, &errs);
    for (size_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
    assert_int_equal(rc, IM_OK);
    rules_errs_free(&errs);
    return f;
}

static void test_alignment(void **state)
{
    (void)state;
    rules_file_t *f = parse("groups:\n- name: a\n  interval: 30s\n  rules: []\n"
                            "- name: b\n  interval: 30s\n  rules: []\n");
    int64_t t0 = 1700000000123;
    int64_t a = rules_group_eval_timestamp(&f->groups[0], 30000, t0);
    int64_t b = rules_group_eval_timestamp(&f->groups[1], 30000, t0);
    assert_true(a <= t0 && a > t0 - 30000);
    assert_true(b <= t0 && b > t0 - 30000);
    /* the phase is stable */
    for (int k = 1; k < 50; k++) {
        int64_t a2 = rules_group_eval_timestamp(&f->groups[0], 30000, t0 + k * 7001);
        assert_int_equal(((a2 - a) % 30000 + 30000) % 30000, 0);
    }
    rules_file_free(f);
}

static void test_state_machine(void **state)
{
    (void)state;
    promql_memstore_t *ms = promql_memstore_new();
    const im_labels_t *up = im_labels_from_strs("__name__", "up", "job", "j", NULL);
    for (int i = 0; i <= 30; i++) promql_memstore_add(ms, up, i * 60000LL, i < 20 ? 0 : 1);
    promql_engine_t *eng = promql_engine_new(NULL);
    sent_t sent = {0};
    rules_opts_t o = {.engine = eng,
                      .storage = {promql_memstore_queryable(ms), ms_append, NULL, ms},
                      .external_url = "http://infermon:9470/",
                      .notify = on_notify,
                      .notify_ctx = &sent};
    rules_manager_t *m = rules_manager_new(&o);
    rules_file_t *f = parse("groups:\n- name: g\n  rules:\n"
                            "  - record: job:up:min\n    expr: min by (job) (up)\n"
                            "  - alert: Down\n    expr: job:up:min == 0\n    for: 3m\n"
                            "    labels: {severity: page}\n"
                            "    annotations: {s: '{{ $labels.job }} down'}\n");
    rules_manager_set_files(m, &f, 1);
    for (int i = 0; i <= 25; i++) rules_manager_eval_group(m, 0, i * 60000LL);
    /* fired at 3m, resent each minute after the first: 1m resend delay */
    assert_true(sent.calls >= 10);
    assert_int_equal(sent.resolved, 3); /* at 20m, then resent at 22m and 24m */
    assert_int_equal(sent.last_ends_at, 20 * 60000LL);
    assert_string_equal(sent.url,
                        "http://infermon:9470/graph?g0.expr=job%3Aup%3Amin+%3D%3D+0&g0.tab=1");
    /* ALERTS written while firing */
    promql_expr_t *q = NULL;
    const char *qs = "ALERTS{alertstate=\"firing\"}";
    assert_int_equal(promql_parse(qs, strlen(qs), &q, NULL), IM_OK);
    promql_result_t res;
    assert_int_equal(
        promql_eval_instant(eng, promql_memstore_queryable(ms), q, 10 * 60000LL, &res, NULL),
        IM_OK);
    assert_int_equal(res.nseries, 1);
    promql_result_free(&res);
    promql_expr_free(q);
    /* JSON answers parse and say what they should */
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(rules_manager_rules_json(m, NULL, &b), IM_OK);
    json_error_t je;
    json_t *j = json_loads(b.data, 0, &je);
    assert_non_null(j);
    json_t *r0 = json_array_get(
        json_object_get(json_array_get(json_object_get(j, "groups"), 0), "rules"), 1);
    assert_string_equal(json_string_value(json_object_get(r0, "type")), "alerting");
    assert_string_equal(json_string_value(json_object_get(r0, "query")), "job:up:min == 0");
    assert_int_equal(json_integer_value(json_object_get(r0, "duration")), 180);
    assert_string_equal(json_string_value(json_object_get(r0, "health")), "ok");
    json_decref(j);
    im_buf_reset(&b);
    assert_int_equal(rules_manager_alerts_json(m, &b), IM_OK);
    assert_string_equal(b.data, "{\"alerts\":[]}");
    im_buf_free(&b);
    rules_manager_free(m);
    promql_engine_free(eng);
    im_labels_unref(up);
    promql_memstore_free(ms);
}

static void test_restore(void **state)
{
    (void)state;
    /* Before the restart the alert was pending since t=100s; the process was
     * down from 400s to 1000s. for = 20m, grace = 10m. */
    promql_memstore_t *ms = promql_memstore_new();
    const im_labels_t *x = im_labels_from_strs("__name__", "x", NULL);
    for (int i = 0; i <= 40; i++) promql_memstore_add(ms, x, i * 30000LL, 1);
    const im_labels_t *fs =
        im_labels_from_strs("__name__", "ALERTS_FOR_STATE", "alertname", "X", NULL);
    for (int64_t t = 100000; t <= 400000; t += 30000) promql_memstore_add(ms, fs, t, 100);
    promql_engine_t *eng = promql_engine_new(NULL);
    rules_opts_t o = {.engine = eng,
                      .storage = {promql_memstore_queryable(ms), ms_append, NULL, ms},
                      .restore_for_state = true};
    rules_manager_t *m = rules_manager_new(&o);
    rules_file_t *f = parse("groups:\n- name: g\n  rules:\n"
                            "  - alert: X\n    expr: x > 0\n    for: 20m\n");
    rules_manager_set_files(m, &f, 1);
    rules_manager_eval_group(m, 0, 1000000);
    /* spent pending: 400-100 = 300s; remaining 900s >= grace: shifted by the
     * downtime (1000-390=610s rounded to the sample at 390s): 100 + 610 */
    json_t *j;
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(rules_manager_alerts_json(m, &b), IM_OK);
    json_error_t je;
    j = json_loads(b.data, 0, &je);
    const char *at = json_string_value(
        json_object_get(json_array_get(json_object_get(j, "alerts"), 0), "activeAt"));
    assert_non_null(at);
    int64_t at_ms;
    assert_int_equal(im_time_parse_rfc3339(at, strlen(at), &at_ms), IM_OK);
    assert_int_equal(at_ms, (100 + (1000 - 400)) * 1000LL);
    json_decref(j);
    im_buf_free(&b);
    rules_manager_free(m);
    promql_engine_free(eng);
    im_labels_unref(x);
    im_labels_unref(fs);
    promql_memstore_free(ms);
}

static void test_tick_missed(void **state)
{
    (void)state;
    promql_memstore_t *ms = promql_memstore_new();
    promql_engine_t *eng = promql_engine_new(NULL);
    rules_opts_t o = {.engine = eng,
                      .storage = {promql_memstore_queryable(ms), ms_append, NULL, ms}};
    rules_manager_t *m = rules_manager_new(&o);
    rules_file_t *f = parse("groups:\n- name: g\n  interval: 10s\n  rules:\n"
                            "  - record: one\n    expr: vector(1)\n");
    rules_manager_set_files(m, &f, 1);
    int64_t t = 1700000000000;
    assert_int_equal(rules_manager_tick(m, t), 0); /* schedules the first one */
    int64_t wait = rules_manager_next_ms(m, t);
    assert_true(wait > 0 && wait <= 10000);
    assert_int_equal(rules_manager_tick(m, t + wait), 1);
    /* 5 intervals late: 4 missed */
    assert_int_equal(rules_manager_tick(m, t + wait + 50000), 1);
    rules_stats_t st;
    rules_manager_stats(m, &st);
    assert_int_equal(st.iterations_missed, 4);
    rules_manager_free(m);
    promql_engine_free(eng);
    promql_memstore_free(ms);
}

static void count_alerts(void *ctx, rules_alert_state_t st, const im_labels_t *labels,
                         const im_labels_t *annotations, int64_t active_at, int64_t fired_at,
                         double value)
{
    (void)st;
    (void)labels;
    (void)annotations;
    (void)fired_at;
    (void)value;
    int64_t *a = ctx;
    *a = active_at;
}

static void test_reload_keeps_state(void **state)
{
    (void)state;
    promql_memstore_t *ms = promql_memstore_new();
    promql_engine_t *eng = promql_engine_new(NULL);
    rules_opts_t o = {.engine = eng,
                      .storage = {promql_memstore_queryable(ms), ms_append, NULL, ms}};
    rules_manager_t *m = rules_manager_new(&o);
    const char *text = "groups:\n- name: g\n  rules:\n"
                       "  - alert: A\n    expr: vector(1)\n    for: 5m\n"
                       "  - alert: B\n    expr: vector(2)\n";
    rules_file_t *f = parse(text);
    rules_manager_set_files(m, &f, 1);
    rules_manager_eval_group(m, 0, 60000);
    rules_manager_eval_group(m, 0, 120000);
    int64_t at = 0;
    rules_manager_visit_alerts(m, 0, 0, count_alerts, &at);
    assert_int_equal(at, 60000);
    /* same rules again, plus a changed one: A keeps its state */
    rules_file_t *f2 = parse("groups:\n- name: g\n  rules:\n"
                             "  - alert: A\n    expr: vector(1)\n    for: 5m\n"
                             "  - alert: B\n    expr: vector(2)\n    labels: {x: y}\n");
    rules_manager_set_files(m, &f2, 1);
    at = 0;
    rules_manager_visit_alerts(m, 0, 0, count_alerts, &at);
    assert_int_equal(at, 60000);
    at = 0;
    rules_manager_visit_alerts(m, 0, 1, count_alerts, &at);
    assert_int_equal(at, 0); /* B changed: its state starts over */
    rules_manager_free(m);
    promql_engine_free(eng);
    promql_memstore_free(ms);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alignment),
        cmocka_unit_test(test_state_machine),
        cmocka_unit_test(test_restore),
        cmocka_unit_test(test_tick_missed),
        cmocka_unit_test(test_reload_keeps_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

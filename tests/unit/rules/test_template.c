/* test_template.c — the alert template engine against outputs of the real
 * Prometheus (tests/rules/template_golden.json, made by promtool 2.42 with
 * gen_template_golden.py), plus the humanize helpers and limits. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include <jansson.h>

#include "promql/parser.h"
#include "promql/promql.h"
#include "template/template.h"

/* The query function runs the real engine over the oracle's one input series
 * (test_metric{...} = 1234.5678 at t=0), as promtool's test storage does. */
static promql_memstore_t *g_ms;
static promql_engine_t *g_eng;

static im_rc test_query(void *ctx, const char *q, size_t qlen, int64_t t_ms, tmpl_sample_t **out,
                        size_t *n, im_err_t *err)
{
    (void)ctx;
    *out = NULL;
    *n = 0;
    promql_expr_t *ast = NULL;
    im_rc rc = promql_parse(q, qlen, &ast, err);
    if (rc != IM_OK) return rc;
    promql_result_t res;
    rc = promql_eval_instant(g_eng, promql_memstore_queryable(g_ms), ast, t_ms, &res, err);
    promql_expr_free(ast);
    if (rc != IM_OK) return rc;
    if (res.type == PROMQL_RESULT_SCALAR) {
        *out = im_malloc(sizeof **out);
        (*out)[0] = (tmpl_sample_t){im_labels_ref(im_labels_empty()), res.scalar.v};
        *n = 1;
    } else if (res.type == PROMQL_RESULT_VECTOR) {
        *out = im_malloc((res.nseries ? res.nseries : 1) * sizeof **out);
        for (size_t i = 0; i < res.nseries; i++)
            (*out)[i] =
                (tmpl_sample_t){im_labels_ref(res.series[i].labels), res.series[i].points[0].v};
        *n = res.nseries;
    } else {
        promql_result_free(&res);
        return im_err_set(err, IM_EEXEC, "rule result is not a vector or scalar");
    }
    promql_result_free(&res);
    return IM_OK;
}

/* Prometheus 2.42 (the oracle) declares Value float64; 2.53 (our target) interface {}. */
static char *normalize(const char *s)
{
    const char *from = "Value float64 }";
    const char *p = strstr(s, from);
    if (!p) return im_strdup(s);
    size_t n = strlen(s) + 32;
    char *o = im_malloc(n);
    snprintf(o, n, "%.*sValue interface {} }%s", (int)(p - s), s, p + strlen(from));
    return o;
}

static void test_golden(void **state)
{
    (void)state;
    const char *src = getenv("IM_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/rules/template_golden.json", src ? src : "../..");
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root) fail_msg("cannot load %s: %s", path, jerr.text);
    const im_labels_t *ls = im_labels_from_strs("__name__", "test_metric", "alertname", "T",
                                                "instance", "host1.example.com:9100", "job", "node",
                                                "path", "/var/lib", "severity", "page", NULL);
    /* the alert's $labels are the expression's output labels (with __name__) */
    const im_labels_t *el = im_labels_from_strs("cluster", "eu1", NULL);
    tmpl_data_t d = {.labels = NULL,
                     .external_labels = el,
                     .external_url = "http://infermon.example:9470/",
                     .value = 1234.5678,
                     .query = test_query};
    const im_labels_t *exprl =
        im_labels_from_strs("__name__", "test_metric", "instance", "host1.example.com:9100", "job",
                            "node", "path", "/var/lib", NULL);
    d.labels = exprl;
    g_ms = promql_memstore_new();
    g_eng = promql_engine_new(NULL);
    promql_memstore_add(g_ms, exprl, 0, 1234.5678);
    size_t i, fails = 0, total = 0;
    json_t *c;
    json_array_foreach(root, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "template"));
        json_t *exp = json_object_get(c, "expected");
        json_t *perr = json_object_get(c, "parse_error");
        total++;
        if (exp) {
            im_buf_t out;
            im_buf_init(&out, 0);
            (void)tmpl_expand_or_error("__alert_T", t, strlen(t), &d, &out);
            char *want = normalize(json_string_value(exp));
            if (strcmp(out.data ? out.data : "", want) != 0) {
                fprintf(stderr, "template %s\n  want %s\n  got  %s\n", t, want,
                        out.data ? out.data : "");
                fails++;
            }
            im_free(want);
            im_buf_free(&out);
        } else {
            im_err_t err;
            im_err_clear(&err);
            im_rc rc = tmpl_check("__alert_T", t, strlen(t), &err);
            const char *want = json_string_value(perr);
            const char *got = rc == IM_OK ? "" : err.msg;
            if (strcmp(got, want) != 0) {
                fprintf(stderr, "template %s\n  want parse error %s\n  got  %s\n", t, want, got);
                fails++;
            }
        }
    }
    fprintf(stderr, "template golden: %zu/%zu match promtool\n", total - fails, total);
    im_labels_unref(ls);
    im_labels_unref(el);
    im_labels_unref(exprl);
    promql_memstore_free(g_ms);
    promql_engine_free(g_eng);
    json_decref(root);
    assert_int_equal(fails, 0);
}

static void test_humanize(void **state)
{
    (void)state;
    char b[64];
    tmpl_humanize(1234.5678, b, sizeof b);
    assert_string_equal(b, "1.235k");
    tmpl_humanize1024(1048576, b, sizeof b);
    assert_string_equal(b, "1Mi");
    tmpl_humanize_duration(3661, b, sizeof b);
    assert_string_equal(b, "1h 1m 1s");
    tmpl_humanize_percentage(0.5, b, sizeof b);
    assert_string_equal(b, "50%");
}

static void test_limits(void **state)
{
    (void)state;
    tmpl_data_t d = {.value = 1};
    im_buf_t out;
    im_buf_init(&out, 0);
    /* deep nesting is an error, not a stack overflow */
    im_buf_t t;
    im_buf_init(&t, 0);
    for (int i = 0; i < 5000; i++) (void)im_buf_puts(&t, "{{ if true }}");
    im_err_t err;
    assert_int_equal(tmpl_expand("x", t.data, t.len, &d, &out, &err), IM_EPARSE);
    im_buf_reset(&t);
    (void)im_buf_puts(&t, "{{");
    for (int i = 0; i < 5000; i++) (void)im_buf_puts(&t, "(");
    im_buf_reset(&out);
    (void)tmpl_expand_or_error("x", t.data, t.len, &d, &out);
    assert_non_null(strstr(out.data, "<error expanding template"));
    /* huge output is bounded */
    im_buf_reset(&t);
    (void)im_buf_puts(&t, "{{ printf \"%999999d\" 1 }}{{ printf \"%999999d\" 1 }}");
    im_buf_reset(&out);
    (void)tmpl_expand_or_error("x", t.data, t.len, &d, &out);
    im_buf_free(&t);
    im_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_humanize),
        cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

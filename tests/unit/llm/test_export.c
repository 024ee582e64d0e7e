/* test_export.c — `infermon export`'s library half: the dashboard is made of
 * the names has() reports (a panel per signal present, none for absent ones,
 * V0 names when only they exist), carries no UID and selects job/instance
 * everywhere; rule texts merge into one rule file or PrometheusRule that the
 * rule parser accepts; the built-in rules leave vLLM out when asked. */
#include "util/base.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "llm/builtin.h"
#include "llm/export.h"
#include "llm/serving.h"
#include "rules/rules.h"

typedef struct names {
    const char *const *v;
} names_t;

static bool has(void *ctx, const char *name, size_t len)
{
    const names_t *n = ctx;
    for (size_t i = 0; n->v[i]; i++)
        if (strlen(n->v[i]) == len && memcmp(n->v[i], name, len) == 0) return true;
    return false;
}

static uint32_t mask_of(const char *const *ids)
{
    const llm_serving_t *s = llm_serving_get();
    uint32_t m = 0;
    for (size_t i = 0; ids[i]; i++) {
        int e = llm_serving_engine_find(s, ids[i]);
        assert_true(e >= 0 && e < 32);
        m |= 1u << e;
    }
    return m;
}

static json_t *export_dash(const char *const *names, const char *const *engines, size_t *np)
{
    names_t n = {names};
    llm_export_dash_opts_t o = {.engines = mask_of(engines), .has = has, .ctx = &n};
    im_buf_t b;
    im_buf_init(&b, 0);
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(llm_export_dashboard(&o, &b, np, &err), IM_OK);
    json_error_t je;
    json_t *d = json_loadb(b.data, b.len, 0, &je);
    assert_non_null(d);
    im_buf_free(&b);
    return d;
}

static const json_t *panel(const json_t *d, const char *title)
{
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(d, "panels"), i, p)
    {
        if (strcmp(json_string_value(json_object_get(p, "title")), title) == 0) return p;
    }
    return NULL;
}

static const char *expr0(const json_t *p)
{
    return json_string_value(
        json_object_get(json_array_get(json_object_get(p, "targets"), 0), "expr"));
}

static void test_dashboard_v1(void **state)
{
    (void)state;
    static const char *const names[] = {"vllm:num_requests_waiting",
                                        "vllm:num_requests_running",
                                        "vllm:kv_cache_usage_perc",
                                        "vllm:time_to_first_token_seconds_bucket",
                                        "vllm:inter_token_latency_seconds_bucket",
                                        "DCGM_FI_DEV_GPU_UTIL",
                                        NULL};
    static const char *const engines[] = {"vllm", "dcgm", "kueue", NULL};
    size_t np = 0;
    json_t *d = export_dash(names, engines, &np);
    assert_int_equal(np, 6); /* waiting, running, KV, TTFT, ITL, GPU util */
    assert_non_null(panel(d, "KV-cache use"));
    assert_null(panel(d, "Preemptions /s"));
    assert_null(panel(d, "Kueue pending workloads"));
    assert_null(panel(d, "Quota (Kueue)")); /* an empty row is dropped */
    assert_non_null(strstr(expr0(panel(d, "KV-cache use")),
                           "vllm:kv_cache_usage_perc{job=~\"$job\", "
                           "instance=~\"$instance\""));
    assert_non_null(strstr(expr0(panel(d, "Inter-token latency")),
                           "histogram_quantile(0.5, sum by (le, model_name) "
                           "(rate(vllm:inter_token_latency_seconds_bucket{"));
    assert_non_null(strstr(expr0(panel(d, "Inter-token latency")), "[$__rate_interval])))"));
    /* no UID but the templated datasource */
    char *txt = json_dumps(d, 0);
    for (const char *p = strstr(txt, "\"uid\""); p; p = strstr(p + 1, "\"uid\""))
        assert_int_equal(strncmp(p, "\"uid\": \"${datasource}\"", 22), 0);
    assert_int_equal(json_integer_value(json_object_get(d, "schemaVersion")), 39);
    free(txt); /* checksrc: allow */
    json_decref(d);
}

static void test_dashboard_v0_and_sglang(void **state)
{
    (void)state;
    static const char *const v0[] = {"vllm:gpu_cache_usage_perc",
                                     "vllm:time_per_output_token_seconds_bucket", NULL};
    static const char *const ev[] = {"vllm", NULL};
    size_t np = 0;
    json_t *d = export_dash(v0, ev, &np);
    assert_int_equal(np, 2);
    assert_non_null(strstr(expr0(panel(d, "KV-cache use")), "vllm:gpu_cache_usage_perc{"));
    assert_non_null(strstr(expr0(panel(d, "Inter-token latency")),
                           "vllm:time_per_output_token_seconds_bucket"));
    json_decref(d);

    static const char *const sg[] = {"sglang:num_queue_reqs", "sglang:num_retracted_reqs",
                                     "sglang:token_usage", NULL};
    static const char *const es[] = {"sglang", NULL};
    d = export_dash(sg, es, &np);
    assert_int_equal(np, 3);
    /* the retraction gauge: no rate, its own title and unit */
    const json_t *p = panel(d, "Preempted requests");
    assert_non_null(p);
    assert_null(strstr(expr0(p), "rate("));
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(p, "fieldConfig"), "defaults"), "unit")),
        "short");
    json_decref(d);

    /* no name of the engine: an error, not an empty dashboard */
    static const char *const none[] = {"up", NULL};
    names_t n = {none};
    llm_export_dash_opts_t o = {.engines = mask_of(ev), .has = has, .ctx = &n};
    im_buf_t b;
    im_buf_init(&b, 0);
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(llm_export_dashboard(&o, &b, &np, &err), IM_EINVAL);
    assert_non_null(strstr(err.msg, "expose none"));
    o.engines = 0;
    assert_int_equal(llm_export_dashboard(&o, &b, &np, &err), IM_EINVAL);
    im_buf_free(&b);
}

static void parses(const char *txt, size_t len, size_t want_groups)
{
    rules_file_t *f = NULL;
    rules_errs_t errs = {0};
    assert_int_equal(rules_file_parse("x.yml", txt, len, &f, &errs), IM_OK);
    assert_int_equal(errs.n, 0);
    assert_int_equal(f->ngroups, want_groups);
    rules_file_free(f);
    rules_errs_free(&errs);
}

static void test_merge(void **state)
{
    (void)state;
    const char *a = "# a comment\ngroups:\n  - name: a\n    rules:\n      - record: x:a\n"
                    "        expr: vector(1)\n";
    const char *b = "groups:\n  - name: b\n    rules:\n      - alert: B\n        expr: |\n"
                    "          vector(1)\n\n          > 0\n";
    const char *parts[] = {a, b};
    size_t lens[] = {strlen(a), strlen(b)};
    im_buf_t out;
    im_buf_init(&out, 0);
    im_err_t err;
    im_err_clear(&err);
    llm_export_rules_opts_t ro = {0};
    assert_int_equal(llm_export_rules_merge(&ro, parts, lens, 2, &out, &err), IM_OK);
    assert_null(strstr(out.data, "# a comment"));
    parses(out.data, out.len, 2);
    im_buf_reset(&out);

    const char *labels[] = {"release", "prom \"x\"", NULL};
    ro = (llm_export_rules_opts_t){
        .prometheusrule = true, .name = "n", .namespace_ = "ns", .labels = labels};
    assert_int_equal(llm_export_rules_merge(&ro, parts, lens, 2, &out, &err), IM_OK);
    assert_non_null(strstr(out.data, "kind: PrometheusRule\n"));
    assert_non_null(strstr(out.data, "  namespace: \"ns\"\n"));
    assert_non_null(strstr(out.data, "    release: \"prom \\\"x\\\"\"\n"));
    assert_non_null(strstr(out.data, "spec:\n  groups:\n    - name: a\n"));
    /* the block scalar keeps its relative indentation */
    assert_non_null(
        strstr(out.data, "          expr: |\n            vector(1)\n\n            > 0\n"));
    im_buf_reset(&out);

    /* nothing to merge: an empty list, not a null one */
    const char *e = "groups:\n";
    size_t el = strlen(e);
    ro = (llm_export_rules_opts_t){0};
    assert_int_equal(llm_export_rules_merge(&ro, &e, &el, 1, &out, &err), IM_OK);
    assert_non_null(strstr(out.data, "groups: []\n"));
    parses(out.data, out.len, 0);
    im_buf_reset(&out);

    const char *bad = "rules:\n  - x\n";
    size_t bl = strlen(bad);
    assert_int_equal(llm_export_rules_merge(&ro, &bad, &bl, 1, &out, &err), IM_EINVAL);
    assert_non_null(strstr(err.msg, "groups:"));
    im_buf_free(&out);
}

static void test_builtin_no_vllm(void **state)
{
    (void)state;
    const llm_serving_t *s = llm_serving_get();
    llm_builtin_opts_t o = {.no_vllm = true};
    o.engines = 1u << llm_serving_engine_find(s, "sglang");
    im_buf_t b;
    im_buf_init(&b, 0);
    llm_builtin_yaml(&o, &b);
    assert_null(strstr(b.data, "vllm"));
    assert_non_null(strstr(b.data, "alert: SGLangHighTTFT"));
    rules_file_t *f = NULL;
    rules_errs_t errs = {0};
    assert_int_equal(rules_file_parse("b.yml", b.data, b.len, &f, &errs), IM_OK);
    rules_file_free(f);
    rules_errs_free(&errs);
    im_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dashboard_v1),
        cmocka_unit_test(test_dashboard_v0_and_sglang),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_builtin_no_vllm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

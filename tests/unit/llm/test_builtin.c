/* test_builtin.c — the built-in LLM rules: the generated default equals the
 * checked-in tests/rules/unit/builtin_rules.yml (which the rule unit tests and
 * promtool run), every variant parses and validates, and thresholds and metric
 * names follow the options. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "llm/builtin.h"
#include "llm/serving.h"
#include "rules/rules.h"

static void test_golden(void **state)
{
    (void)state;
    const char *src = getenv("IM_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/rules/unit/builtin_rules.yml", src ? src : "../..");
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char want[65536];
    size_t n = fread(want, 1, sizeof want - 1, f);
    fclose(f);
    want[n] = 0;
    im_buf_t b;
    im_buf_init(&b, 0);
    llm_builtin_yaml(NULL, &b);
    assert_string_equal(b.data, want);
    im_buf_free(&b);
}

static void test_variants(void **state)
{
    (void)state;
    for (int names = LLM_NAMES_AUTO; names <= LLM_NAMES_NEW; names++) {
        llm_builtin_opts_t o = {.ttft_p95_target_seconds = 1.5,
                                .failure_ratio = 0.01,
                                .queue_waiting_threshold = 20,
                                .kv_cache_threshold = 0.85,
                                .names = (llm_names_t)names};
        im_buf_t b;
        im_buf_init(&b, 0);
        llm_builtin_yaml(&o, &b);
        rules_errs_t errs = {0};
        rules_file_t *rf = NULL;
        assert_int_equal(rules_file_parse(LLM_BUILTIN_FILE, b.data, b.len, &rf, &errs), IM_OK);
        assert_int_equal(rules_file_count(rf), 15);
        assert_non_null(strstr(b.data, "> 1.5\n"));
        assert_non_null(strstr(b.data, "> 0.85\n"));
        assert_non_null(strstr(b.data, "above 85%"));
        bool has_old = strstr(b.data, "vllm:gpu_cache_usage_perc") != NULL;
        bool has_new = strstr(b.data, "vllm:kv_cache_usage_perc") != NULL;
        assert_true(names == LLM_NAMES_OLD   ? has_old && !has_new
                    : names == LLM_NAMES_NEW ? has_new && !has_old
                                             : has_old && has_new);
        rules_file_free(rf);
        rules_errs_free(&errs);
        im_buf_free(&b);
    }
}

/* Per-engine rules from the serving model: SGLang's and every other engine's
 * groups parse and validate, use the engine's names and model label, and leave
 * vLLM's rules as they are. */
static void test_engines(void **state)
{
    (void)state;
    const llm_serving_t *s = llm_serving_get();
    int sgl = llm_serving_engine_find(s, "sglang");
    llm_builtin_opts_t o = {.engines = 1u << sgl};
    im_buf_t b;
    im_buf_init(&b, 0);
    llm_builtin_yaml(&o, &b);
    rules_errs_t errs = {0};
    rules_file_t *rf = NULL;
    assert_int_equal(rules_file_parse(LLM_BUILTIN_FILE, b.data, b.len, &rf, &errs), IM_OK);
    assert_int_equal(rules_file_count(rf), 15 + 10 + 4);
    assert_non_null(strstr(b.data, "model_name:vllm_kv_cache_usage:max")); /* vLLM unchanged */
    assert_non_null(strstr(b.data, "- alert: SGLangHighTTFT"));
    assert_non_null(strstr(b.data, "- alert: SGLangKVCachePinned"));
    assert_non_null(strstr(b.data, "rate(sglang:time_to_first_token_seconds_bucket[5m])"));
    assert_non_null(strstr(b.data, "max by (model_name) (sglang:token_usage)"));
    /* retractions: the counter (the old gauge has another type) */
    assert_non_null(strstr(b.data, "rate(sglang:num_retracted_requests_total[5m])"));
    assert_null(strstr(b.data, "sglang:num_retracted_reqs)"));
    rules_file_free(rf);
    rules_errs_free(&errs);
    im_buf_free(&b);
    /* every engine at once: Dynamo's model label, Triton's selectors, EPP's old names */
    o.engines = 0xffffu;
    im_buf_init(&b, 0);
    llm_builtin_yaml(&o, &b);
    rf = NULL;
    assert_int_equal(rules_file_parse(LLM_BUILTIN_FILE, b.data, b.len, &rf, &errs), IM_OK);
    for (size_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
    assert_int_equal(errs.n, 0);
    assert_non_null(strstr(b.data, "model:dynamo_ttft_seconds:p95_5m"));
    assert_non_null(strstr(b.data, "nv_trt_llm_request_metrics{request_type=\"waiting\"}"));
    assert_non_null(strstr(b.data, " or sum by (model_name) (inference_pool_average_queue_size)"));
    assert_non_null(strstr(b.data, "ray_vllm_kv_cache_usage_perc"));
    assert_null(strstr(b.data, "infermon.llm.dcgm"));
    rules_file_free(rf);
    rules_errs_free(&errs);
    im_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_variants),
        cmocka_unit_test(test_engines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

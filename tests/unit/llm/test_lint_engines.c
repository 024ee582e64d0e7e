/* test_lint_engines.c — lint's catalog mode knows every engine of the serving
 * model: SGLang, Dynamo, llm-d EPP (old and new names), Triton/TRT-LLM and Ray
 * Serve names are clean; near misses under their prefixes are unknown with a
 * suggestion; names outside every known prefix stay unjudged. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <cmocka.h>

#include "llm/lint.h"

static const lint_finding_t *one(lint_names_t *n, const char *q, size_t *count)
{
    lint_run_t *r = lint_run_new(n, NULL);
    lint_where_t w;
    memset(&w, 0, sizeof(w));
    w.file = "t";
    w.path = "q";
    lint_query(r, &w, q, strlen(q));
    const lint_finding_t *fs;
    *count = lint_run_findings(r, &fs);
    static lint_finding_t first;
    static char check[64], fix[256];
    if (*count) {
        first = fs[0];
        snprintf(check, sizeof check, "%s", fs[0].check);
        snprintf(fix, sizeof fix, "%s", fs[0].fix ? fs[0].fix : "");
        first.check = check;
        first.fix = fix;
    }
    lint_run_free(r);
    return *count ? &first : NULL;
}

static void test_engine_names(void **state)
{
    (void)state;
    lint_names_t *n = lint_names_new();
    llm_version_t v;
    llm_version_parse(LLM_VLLM_NEWEST, strlen(LLM_VLLM_NEWEST), &v);
    lint_names_use_catalog(n, &v);
    static const char *const clean[] = {
        "sum by (model_name) (sglang:num_queue_reqs)",
        "histogram_quantile(0.95, sum by (le) "
        "(rate(sglang:time_to_first_token_seconds_bucket[5m])))",
        "sum(rate(sglang:num_retracted_requests_total[5m]))",
        "sum by (model) (dynamo_frontend_inflight_requests)",
        "max(llm_d_epp_average_kv_cache_utilization)",
        "max(inference_pool_average_kv_cache_utilization)",
        "sum(nv_trt_llm_request_metrics{request_type=\"waiting\"})",
        "sum by (model_name) (ray_vllm_num_requests_running)",
        "my_own_exporter_metric",
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(clean); i++) {
        size_t c;
        const lint_finding_t *f = one(n, clean[i], &c);
        if (c) fprintf(stderr, "%s: %s\n", clean[i], f->check);
        assert_int_equal(c, 0);
    }
    size_t c;
    const lint_finding_t *f = one(n, "sum(sglang:num_queue_req)", &c);
    assert_int_equal(c, 1);
    assert_string_equal(f->check, "unknown-metric");
    assert_non_null(strstr(f->fix, "sglang:num_queue_reqs"));
    f = one(n, "sum(dynamo_frontend_queued_request)", &c);
    assert_int_equal(c, 1);
    assert_non_null(strstr(f->fix, "dynamo_frontend_queued_requests"));
    /* Dynamo's model label is model: the aggregation hint uses it */
    f = one(n,
            "histogram_quantile(0.9, rate(dynamo_frontend_time_to_first_token_seconds_bucket[5m]))",
            &c);
    assert_int_equal(c, 1);
    assert_string_equal(f->check, "quantile-per-series");
    assert_non_null(strstr(f->fix, "sum by (le, model)"));
    /* a real Dynamo name the catalog does not list: not checked, not wrong */
    f = one(n, "dynamo_frontend_output_sequence_tokens_count", &c);
    assert_int_equal(c, 1);
    assert_string_equal(f->check, "other-exporter");
    /* "response time" is the end-to-end latency, not the queue time */
    f = one(n,
            "histogram_quantile(0.95, sum by (le) (rate(vllm_response_time_seconds_bucket[5m])))",
            &c);
    assert_int_equal(c, 1);
    assert_non_null(strstr(f->fix, "vllm:e2e_request_latency_seconds_bucket"));
    f = one(n, "sum(rate(sglang:prompt_tokens[5m]))", &c);
    assert_int_equal(c, 1);
    assert_string_equal(f->check, "missing-total");
    lint_names_free(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engine_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

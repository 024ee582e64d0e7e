/* test_catalog.c — the embedded metric catalog: lookups by exposed name and by
 * near-miss forms, types, labels, buckets, conditions, version status, renames. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "llm/catalog.h"

static const llm_family_t *look(const char *n, llm_form_t *form, llm_suffix_t *suf)
{
    return llm_catalog_lookup(llm_catalog_get(), n, strlen(n), form, suf);
}

static void test_lookup_forms(void **state)
{
    (void)state;
    llm_form_t form;
    llm_suffix_t suf;
    const llm_family_t *f = look("vllm:prompt_tokens_total", &form, &suf);
    assert_non_null(f);
    assert_string_equal(f->name, "vllm:prompt_tokens");
    assert_int_equal(f->type, LLM_MTYPE_COUNTER);
    assert_int_equal(form, LLM_FORM_SAMPLE);
    assert_int_equal(suf, LLM_SUFFIX_TOTAL);
    assert_int_equal(f->unit, LLM_UNIT_TOKENS);
    f = look("vllm:prompt_tokens", &form, &suf);
    assert_non_null(f);
    assert_int_equal(form, LLM_FORM_COUNTER_BARE);
    f = look("vllm:time_to_first_token_seconds", &form, &suf);
    assert_non_null(f);
    assert_int_equal(form, LLM_FORM_HISTOGRAM_BARE);
    assert_int_equal(f->nbuckets, 22);
    assert_true(f->buckets[11] == 1.0 && f->buckets[12] == 2.5);
    f = look("vllm:time_to_first_token_seconds_bucket", &form, &suf);
    assert_non_null(f);
    assert_int_equal(suf, LLM_SUFFIX_BUCKET);
    assert_true(llm_family_has_label(f, "model_name", 10));
    assert_true(llm_family_has_label(f, "engine", 6));
    assert_false(llm_family_has_label(f, "model", 5));
    f = look("vllm:iteration_tokens_total_sum", &form, &suf);
    assert_non_null(f);
    assert_int_equal(f->type, LLM_MTYPE_HISTOGRAM);
    assert_int_equal(suf, LLM_SUFFIX_SUM);
    f = look("vllm:kv_cache_usage_perc", NULL, NULL);
    assert_non_null(f);
    assert_int_equal(f->unit, LLM_UNIT_RATIO);
    assert_null(look("kueue_quota_reserved_resources", NULL, NULL));
    assert_null(look("vllm:nonsense", NULL, NULL));
}

static void test_other_exporters(void **state)
{
    (void)state;
    const llm_family_t *f = look("DCGM_FI_PROF_SM_ACTIVE", NULL, NULL);
    assert_non_null(f);
    assert_int_equal(f->exporter, LLM_EXP_DCGM);
    assert_non_null(f->option);
    f = look("DCGM_FI_DEV_GPU_UTIL", NULL, NULL);
    assert_non_null(f);
    assert_null(f->option);
    assert_int_equal(f->unit, LLM_UNIT_PERCENT);
    assert_null(look("DCGM_FI_DRIVER_VERSION", NULL, NULL)); /* a label */
    f = look("kueue_local_queue_resource_reservation", NULL, NULL);
    assert_non_null(f);
    assert_int_equal(f->exporter, LLM_EXP_KUEUE);
    assert_non_null(f->option);
    assert_non_null(strstr(f->option, "LocalQueueMetrics"));
    assert_true(llm_family_has_label(f, "resource", 8));
    assert_true(llm_family_has_label(f, "custom_team", 11));
    llm_form_t form;
    f = look("kueue_admitted_workloads", &form, NULL);
    assert_non_null(f);
    assert_int_equal(form, LLM_FORM_COUNTER_BARE);
    f = look("kube_namespace_labels", NULL, NULL);
    assert_non_null(f);
    assert_int_equal(f->exporter, LLM_EXP_KSM);
    assert_true(llm_family_has_label(f, "label_team", 10));
    assert_non_null(look("node_cpu_seconds_total", NULL, NULL));
}

static void test_versions(void **state)
{
    (void)state;
    llm_version_t v, w;
    assert_true(llm_version_parse("v0.9.2 (tag-verified)", 21, &v));
    assert_int_equal(v.minor, 9);
    assert_int_equal(v.patch, 2);
    assert_false(v.approx);
    assert_true(llm_version_parse("~v0.15.0 (scheduled v0.13)", 26, &w));
    assert_true(w.approx);
    assert_int_equal(w.minor, 15);
    assert_true(llm_version_cmp(&v, &w) < 0);
    assert_true(llm_version_parse("0.27", 4, &v));
    assert_int_equal(v.minor, 27);
    assert_false(llm_version_parse("unverified", 10, &v));
    assert_true(llm_version_parse("main after 2026-08-10 (#48798)", 30, &v));
    assert_true(v.unreleased);
    char buf[64];
    llm_version_format(&w, buf, sizeof buf);
    assert_string_equal(buf, "~v0.15.0");

    const llm_family_t *f = look("vllm:gpu_cache_usage_perc", NULL, NULL);
    assert_non_null(f);
    llm_version_t q;
    llm_version_parse("0.8.5", 5, &q);
    assert_int_equal(llm_family_status(f, &q), LLM_STATUS_CURRENT);
    llm_version_parse("0.10.0", 6, &q);
    assert_int_equal(llm_family_status(f, &q), LLM_STATUS_DEPRECATED);
    llm_version_parse("0.11.0", 6, &q);
    assert_int_equal(llm_family_status(f, &q), LLM_STATUS_HIDDEN);
    llm_version_parse(LLM_VLLM_NEWEST, strlen(LLM_VLLM_NEWEST), &q);
    assert_int_equal(llm_family_status(f, &q), LLM_STATUS_REMOVED);
    assert_string_equal(f->replacement, "vllm:kv_cache_usage_perc");
    f = look("vllm:num_requests_waiting_by_reason", NULL, NULL);
    llm_version_parse("0.9.2", 5, &q);
    assert_int_equal(llm_family_status(f, &q), LLM_STATUS_NOT_YET);
    assert_int_equal(f->nenums, 1);
    assert_string_equal(f->enums[0].label, "reason");
    assert_string_equal(f->enums[0].values[1], "deferred");
    f = look("vllm:request_success_total", NULL, NULL);
    assert_int_equal(f->nenums, 1);
    assert_string_equal(f->enums[0].values[4], "repetition");
    const char *r =
        llm_catalog_renamed_to(llm_catalog_get(), "vllm:gpu_prefix_cache_hits_total", 32);
    assert_non_null(r);
    assert_string_equal(r, "vllm:prefix_cache_hits_total");
    llm_version_t a, rm;
    assert_true(llm_catalog_history(llm_catalog_get(), "vllm:request_success", 20, &a, &rm));
    assert_int_equal(a.minor, 4);
    assert_false(rm.known); /* re-added in v0.9.0 */
    assert_true(llm_catalog_history(llm_catalog_get(), "vllm:num_requests_swapped", 25, &a, &rm));
    assert_true(rm.known);
    assert_int_equal(rm.minor, 9);
    assert_int_equal(rm.patch, 1);
    assert_false(llm_catalog_history(llm_catalog_get(), "vllm:nope", 9, &a, &rm));
    f = look("vllm:kv_block_lifetime_seconds_bucket", NULL, NULL);
    assert_non_null(f->option);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup_forms),
        cmocka_unit_test(test_other_exporters),
        cmocka_unit_test(test_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

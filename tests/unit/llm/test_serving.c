/* test_serving.c — the serving model (llm/serving.h): every row resolves, the
 * Ray Serve rows are derived, and engine/version detection on the catalog's
 * prometheus_client, dcgm-exporter and client_golang captures. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "llm/serving.h"
#include "util/mem.h"

typedef struct names {
    char **v;
    size_t n;
} names_t;

/* Sample names of an exposition file under catalog/. */
static void read_names(const char *file, names_t *out)
{
    const char *src = getenv("IM_SOURCE_DIR");
    assert_non_null(src);
    char path[1024];
    snprintf(path, sizeof path, "%s/catalog/%s", src, file);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        size_t k = strcspn(line, "{ ");
        out->v = im_realloc(out->v, (out->n + 1) * sizeof *out->v);
        out->v[out->n++] = im_strndup(line, k);
    }
    fclose(f);
}

static void free_names(names_t *n)
{
    for (size_t i = 0; i < n->n; i++) im_free(n->v[i]);
    im_free(n->v);
}

static void test_rows_resolve(void **st)
{
    (void)st;
    const llm_serving_t *s = llm_serving_get();
    assert_true(llm_serving_engine_count(s) >= 9);
    int e_sgl = llm_serving_engine_find(s, "sglang");
    int e_ray = llm_serving_engine_find(s, "ray-vllm");
    assert_true(e_sgl >= 0 && e_ray >= 0);
    for (size_t i = 0; i < llm_serving_map_count(s); i++) {
        const llm_signal_map_t *m = llm_serving_map(s, i);
        assert_true(m->type != LLM_MTYPE_UNKNOWN);
        assert_non_null(llm_signal_id(m->signal));
        assert_int_equal(llm_serving_engine_of(s, m->name, strlen(m->name)), m->engine);
    }
    /* SGLang: retractions are its preemptions, token_usage its KV use. */
    const llm_signal_map_t *v[4];
    assert_true(llm_serving_maps_for(s, e_sgl, LLM_SIG_PREEMPTIONS, v, 4) == 2);
    assert_string_equal(v[0]->name, "sglang:num_retracted_requests_total");
    assert_int_equal(v[0]->type, LLM_MTYPE_COUNTER);
    assert_int_equal(v[1]->type, LLM_MTYPE_GAUGE);
    assert_true(llm_serving_maps_for(s, e_sgl, LLM_SIG_KV_USAGE, v, 4) == 1);
    assert_string_equal(v[0]->name, "sglang:token_usage");
    /* Ray Serve: vLLM's names under ray_vllm_. */
    assert_true(llm_serving_maps_for(s, e_ray, LLM_SIG_KV_USAGE, v, 4) == 2);
    assert_string_equal(v[0]->name, "ray_vllm_kv_cache_usage_perc");
    assert_true(v[0]->derived);
    /* The catalog knows every engine's names now (lint's tables). */
    const llm_catalog_t *c = llm_catalog_get();
    const llm_family_t *f =
        llm_catalog_lookup(c, "llm_d_epp_request_ttft_seconds_bucket", 37, NULL, NULL);
    assert_non_null(f);
    assert_int_equal(f->exporter, LLM_EXP_ENGINE);
    f = llm_catalog_lookup(c, "sglang:num_queue_reqs", 21, NULL, NULL);
    assert_non_null(f);
    assert_int_equal(f->exporter, LLM_EXP_SGLANG);
    f = llm_catalog_lookup(c, "vllm:request_num_preemptions_bucket", 35, NULL, NULL);
    assert_non_null(f);
    assert_int_equal(f->type, LLM_MTYPE_HISTOGRAM);
}

static void test_detect_captures(void **st)
{
    (void)st;
    const llm_serving_t *s = llm_serving_get();
    int e_vllm = llm_serving_engine_find(s, "vllm");
    int e_sgl = llm_serving_engine_find(s, "sglang");
    int e_dcgm = llm_serving_engine_find(s, "dcgm");
    int e_kueue = llm_serving_engine_find(s, "kueue");
    names_t n = {0};
    read_names("vllm-sample.prom", &n);
    llm_detected_t d;
    llm_serving_detect_names(s, (const char *const *)n.v, n.n, &d);
    assert_true(d.present[e_vllm]);
    assert_false(d.present[e_sgl]);
    assert_false(d.present[e_dcgm]);
    assert_true(d.names_seen[e_vllm] > 20);
    /* current main: num_requests_waiting_by_reason (~v0.20) is there, no V0 name */
    assert_true(d.vllm_lo.known);
    assert_true(d.vllm_lo.major > 0 || d.vllm_lo.minor >= 20);
    assert_false(d.vllm_v0);
    char buf[200];
    llm_detected_describe(s, &d, e_vllm, buf, sizeof buf);
    assert_non_null(strstr(buf, "vLLM"));
    free_names(&n);

    names_t g = {0};
    read_names("dcgm-sample.prom", &g);
    read_names("kueue-sample.prom", &g);
    llm_serving_detect_names(s, (const char *const *)g.v, g.n, &d);
    assert_true(d.present[e_dcgm]);
    assert_true(d.present[e_kueue]);
    assert_false(d.present[e_vllm]);
    free_names(&g);
}

static void test_detect_old_and_mixed(void **st)
{
    (void)st;
    const llm_serving_t *s = llm_serving_get();
    int e_vllm = llm_serving_engine_find(s, "vllm");
    int e_sgl = llm_serving_engine_find(s, "sglang");
    int e_dyn = llm_serving_engine_find(s, "dynamo");
    int e_epp = llm_serving_engine_find(s, "llm-d-epp");
    int e_ray = llm_serving_engine_find(s, "ray-vllm");
    /* A V0 0.6-era scrape: swapped requests and cpu cache exist only there. */
    const char *v0[] = {"vllm:num_requests_swapped", "vllm:gpu_cache_usage_perc",
                        "vllm:cpu_cache_usage_perc", "vllm:num_requests_running",
                        "vllm:time_per_output_token_seconds_bucket"};
    llm_detected_t d;
    llm_serving_detect_names(s, v0, IM_ARRAY_LEN(v0), &d);
    assert_true(d.present[e_vllm]);
    assert_true(d.vllm_v0);
    assert_true(d.vllm_hi.known); /* the V0 names are gone from some release on */
    char buf[200];
    llm_detected_describe(s, &d, e_vllm, buf, sizeof buf);
    assert_non_null(strstr(buf, "V0"));
    /* A mixed fleet: SGLang pods, a Dynamo frontend, an EPP with its old names,
     * and Ray Serve. */
    const char *mix[] = {"sglang:num_queue_reqs",
                         "sglang:time_to_first_token_seconds_bucket",
                         "dynamo_frontend_inflight_requests",
                         "inference_pool_average_kv_cache_utilization",
                         "ray_vllm_num_requests_running",
                         "something_else"};
    llm_serving_detect_names(s, mix, IM_ARRAY_LEN(mix), &d);
    assert_true(d.present[e_sgl]);
    assert_true(d.present[e_dyn]);
    assert_true(d.present[e_epp]);
    assert_true(d.present[e_ray]);
    assert_false(d.present[e_vllm]);
    assert_int_equal(llm_serving_engine_of(s, "something_else", 14), -1);
    assert_int_equal(llm_serving_engine_of(s, "sglang:whatever_new", 19), e_sgl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_resolve),
        cmocka_unit_test(test_detect_captures),
        cmocka_unit_test(test_detect_old_and_mixed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_sim_engines.c — the simulator's engines against the serving model
 * (llm/serving.h): an SGLang fleet exposes every signal the model says SGLang
 * has, with SGLang's labels and retractions; a vLLM fleet every signal its
 * version has; a mixed fleet both, per model; detection on the expositions. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "llm/serving.h"
#include "sim/sim.h"
#include "util/mem.h"

#define T0_MS 1787650000000LL

static sim_fleet_t *mk(const char *engine, const char *models, int pods, const char *scenario)
{
    sim_options_t o;
    sim_options_default(&o);
    o.pods = pods;
    o.start_ms = T0_MS;
    o.engine = engine;
    if (models) o.models = models;
    if (scenario) o.scenario = scenario;
    sim_fleet_t *f = NULL;
    im_err_t err;
    im_rc rc = sim_fleet_create(&o, &f, &err);
    if (rc != IM_OK) fprintf(stderr, "create: %s\n", err.msg);
    assert_int_equal(rc, IM_OK);
    return f;
}

static char *render(sim_fleet_t *f, int pod)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(sim_fleet_render(f, SIM_EP_VLLM, pod, &b), IM_OK);
    return b.data;
}

/* Is `name` (or name_bucket for a histogram) a sample name in the exposition? */
static bool has_sample(void *ctx, const char *name, size_t len)
{
    const char *text = ctx;
    for (const char *p = text; p && *p;) {
        if (*p != '#' && strncmp(p, name, len) == 0 && (p[len] == '{' || p[len] == ' '))
            return true;
        p = strchr(p, '\n');
        if (p) p++;
    }
    return false;
}

static double value_of(const char *text, const char *prefix)
{
    const char *p = strstr(text, prefix);
    if (!p) return -1;
    const char *sp = strchr(p, ' ');
    return sp ? strtod(sp + 1, NULL) : -1;
}

static void test_sglang_has_every_signal(void **st)
{
    (void)st;
    sim_fleet_t *f = mk("sglang", NULL, 2, "kv-pressure");
    sim_fleet_advance(f, T0_MS + 40 * 60 * 1000);
    char *text = render(f, 0);
    assert_null(strstr(text, "vllm:"));
    assert_null(strstr(text, "_created"));   /* multiprocess mode */
    assert_non_null(strstr(text, "pid=\"")); /* gauges without multiprocess_mode */
    assert_non_null(strstr(text, "# TYPE sglang:prompt_tokens_total counter"));
    const llm_serving_t *s = llm_serving_get();
    int e = llm_serving_engine_find(s, "sglang");
    int checked = 0;
    for (int sig = 0; sig < LLM_SIG_COUNT; sig++) {
        const llm_signal_map_t *v[4];
        size_t n = llm_serving_maps_for(s, e, (llm_signal_t)sig, v, 4);
        if (n == 0) continue;
        /* the preferred (current) name of every signal SGLang has */
        const llm_signal_map_t *m = llm_serving_pick(s, e, (llm_signal_t)sig, has_sample, text);
        if (!m) fprintf(stderr, "SGLang signal %s missing\n", llm_signal_id((llm_signal_t)sig));
        assert_non_null(m);
        if (!strstr(v[0]->name, "time_per_output_token")) assert_ptr_equal(m, v[0]);
        checked++;
    }
    assert_true(checked >= 15);
    /* labels: scheduler families carry the ranks, tokenizer ones model_name only */
    assert_non_null(strstr(text, "sglang:num_queue_reqs{engine_type=\"unified\",model_name="));
    assert_non_null(
        strstr(text, "sglang:time_to_first_token_seconds_bucket{le=\"0.1\",model_name="));
    /* retractions under KV pressure: counted, and per finished request */
    double retracted = value_of(text, "sglang:num_retracted_requests_total{");
    double per_req = value_of(text, "sglang:num_retractions_sum{");
    assert_true(retracted > 0);
    assert_true(per_req >= 0 && per_req <= retracted);
    assert_true(value_of(text, "sglang:num_retracted_input_tokens_total{") >= retracted);
    double use = value_of(text, "sglang:token_usage{");
    assert_true(use > 0 && use <= 1.0);
    /* detection */
    const char *names[] = {"sglang:num_queue_reqs", "sglang:token_usage"};
    llm_detected_t d;
    llm_serving_detect(s, has_sample, text, &d);
    assert_true(d.present[e]);
    assert_false(d.present[llm_serving_engine_find(s, "vllm")]);
    (void)names;
    im_free(text);
    sim_fleet_free(f);
}

static void test_vllm_has_its_version_signals(void **st)
{
    (void)st;
    sim_fleet_t *f = mk(NULL, NULL, 1, "kv-pressure");
    sim_fleet_advance(f, T0_MS + 10 * 60 * 1000);
    char *text = render(f, 0);
    const llm_serving_t *s = llm_serving_get();
    int e = llm_serving_engine_find(s, "vllm");
    llm_version_t v;
    assert_true(llm_version_parse("0.27.1", 6, &v));
    for (int sig = 0; sig < LLM_SIG_COUNT; sig++) {
        const llm_signal_map_t *maps[4];
        size_t n = llm_serving_maps_for(s, e, (llm_signal_t)sig, maps, 4);
        bool expect = false;
        for (size_t i = 0; i < n && i < 4; i++) {
            llm_status_t stt = llm_family_status(maps[i]->family, &v);
            bool v0only = strstr(maps[i]->family->condition, "V0 engine only") != NULL;
            if ((stt == LLM_STATUS_CURRENT || stt == LLM_STATUS_DEPRECATED) && !v0only)
                expect = true;
        }
        if (!expect) continue;
        const llm_signal_map_t *m = llm_serving_pick(s, e, (llm_signal_t)sig, has_sample, text);
        if (!m) fprintf(stderr, "vLLM signal %s missing\n", llm_signal_id((llm_signal_t)sig));
        assert_non_null(m);
    }
    im_free(text);
    sim_fleet_free(f);
}

static void test_mixed_fleet(void **st)
{
    (void)st;
    sim_fleet_t *f =
        mk("vllm,sglang", "meta-llama/Llama-3.1-8B-Instruct,Qwen/Qwen3-8B", 4, "healthy");
    sim_fleet_advance(f, T0_MS + 5 * 60 * 1000);
    for (int pod = 0; pod < 4; pod++) {
        char *text = render(f, pod);
        const sim_endpoint_t *ep = sim_fleet_endpoint(f, pod);
        bool sgl = pod % 2 == 1;
        assert_string_equal(ep->engine, sgl ? "sglang" : "vllm");
        assert_true((strstr(text, "sglang:num_running_reqs") != NULL) == sgl);
        assert_true((strstr(text, "vllm:num_requests_running") != NULL) == !sgl);
        if (sgl) assert_non_null(strstr(text, "model_name=\"Qwen/Qwen3-8B\""));
        /* cumulative buckets: _count equals the +Inf bucket */
        double inf = value_of(
            text, sgl ? "sglang:e2e_request_latency_seconds_bucket{le=\"+Inf\""
                      : "vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"+Inf\"");
        double cnt = value_of(text, "e2e_request_latency_seconds_count{");
        if (!(inf >= 0 && cnt == inf)) fprintf(stderr, "pod %d: inf %g count %g\n", pod, inf, cnt);
        assert_true(inf >= 0 && cnt == inf);
        im_free(text);
    }
    /* file-SD: SGLang pods are their own job */
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(sim_fleet_targets_json(f, "127.0.0.1:9400", 0, &b), IM_OK);
    assert_non_null(strstr(b.data, "\"job\": \"sglang\""));
    assert_non_null(strstr(b.data, "\"job\": \"vllm\""));
    im_buf_free(&b);
    sim_fleet_free(f);
}

static void test_bad_engine(void **st)
{
    (void)st;
    sim_options_t o;
    sim_options_default(&o);
    o.engine = "vllm,tgi";
    sim_fleet_t *f = NULL;
    im_err_t err;
    assert_int_equal(sim_fleet_create(&o, &f, &err), IM_EINVAL);
    assert_non_null(strstr(err.msg, "--engine"));
    assert_non_null(strstr(err.msg, "tgi"));
    assert_null(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sglang_has_every_signal),
        cmocka_unit_test(test_vllm_has_its_version_signals),
        cmocka_unit_test(test_mixed_fleet),
        cmocka_unit_test(test_bad_engine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

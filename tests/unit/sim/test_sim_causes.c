/* test_sim_causes.c — the simulator's scenarios for `infermon doctor`'s causes
 * (issue 16): each built-in scenario's signature on the expositions, the fault
 * knobs (XID, row remapping, a lost GPU, throttling, scrape failures), the
 * token budget per step, the Kueue quota knobs, and the event selectors
 * (pods, model, team) of scenario files. */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "sim/sim.h"
#include "sim/sim_int.h"

#define T0_MS 1787650000000LL /* 2026-08-25T11:26:40Z */

static sim_fleet_t *mk_opt(const char *scenario, int pods, const char *models, bool violations)
{
    sim_options_t o;
    sim_options_default(&o);
    o.pods = pods;
    o.seed = 11;
    o.start_ms = T0_MS;
    o.scenario = scenario;
    o.dcgm_violations = violations;
    if (models) o.models = models;
    sim_fleet_t *f = NULL;
    im_err_t err;
    im_rc rc = sim_fleet_create(&o, &f, &err);
    if (rc != IM_OK) fprintf(stderr, "create: %s\n", err.msg);
    assert_int_equal(rc, IM_OK);
    return f;
}

static sim_fleet_t *mk(const char *scenario, int pods)
{
    return mk_opt(scenario, pods, NULL, false);
}

static char *render(sim_fleet_t *f, sim_ep_kind_t k, int i)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(sim_fleet_render(f, k, i, &b), IM_OK);
    return im_buf_steal(&b, NULL);
}

/* The value of the first sample line starting with `prefix` (NAN if none). */
static double val(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    for (const char *p = text; p && *p;) {
        if (strncmp(p, prefix, n) == 0) {
            const char *sp = strchr(p, '\n');
            const char *q = sp ? sp : p + strlen(p);
            while (q > p && q[-1] != ' ') q--;
            return strtod(q, NULL);
        }
        p = strchr(p, '\n');
        if (p) p++;
    }
    return NAN;
}

/* Sum of the values of the sample lines starting with `prefix` and containing `has`. */
static double sum_of(const char *text, const char *prefix, const char *has)
{
    size_t n = strlen(prefix);
    double s = 0;
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (strncmp(p, prefix, n) == 0 && (!has || memmem(p, len, has, strlen(has)))) {
            const char *q = p + len;
            while (q > p && q[-1] != ' ') q--;
            s += strtod(q, NULL);
        }
        p = nl ? nl + 1 : NULL;
    }
    return s;
}

static char *tmp_yaml(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/im-sim-causes-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* Mean of a vLLM histogram between two renderings (sum and count deltas). */
static double hist_mean(const char *a, const char *b, const char *name)
{
    char s[128], c[128];
    snprintf(s, sizeof s, "%s_sum{", name);
    snprintf(c, sizeof c, "%s_count{", name);
    double ds = val(b, s) - val(a, s), dc = val(b, c) - val(a, c);
    return dc > 0 ? ds / dc : NAN;
}

/* prefill-heavy: the queue grows while KV use stays moderate; GPUs busy; TTFT up. */
static void test_prefill_heavy(void **state)
{
    (void)state;
    sim_fleet_t *h = mk("healthy", 2), *f = mk("prefill-heavy", 2);
    sim_fleet_advance(h, T0_MS + 600 * 1000);
    sim_fleet_advance(f, T0_MS + 600 * 1000);
    char *h0 = render(h, SIM_EP_VLLM, 0), *f0 = render(f, SIM_EP_VLLM, 0);
    sim_pod_stats_t s0, s1;
    sim_fleet_pod_stats(f, 0, &s0);
    double kv_max = 0, util = 0;
    int n = 0;
    for (int t = 615; t <= 1500; t += 15, n++) {
        sim_fleet_advance(f, T0_MS + (int64_t)t * 1000);
        sim_fleet_advance(h, T0_MS + (int64_t)t * 1000);
        sim_pod_stats_t s;
        sim_fleet_pod_stats(f, 0, &s);
        kv_max = fmax(kv_max, s.kv_usage);
        util += s.gpu_util;
    }
    util /= n;
    sim_fleet_pod_stats(f, 0, &s1);
    char *h1 = render(h, SIM_EP_VLLM, 0), *f1 = render(f, SIM_EP_VLLM, 0);
    double ttft_h = hist_mean(h0, h1, "vllm:time_to_first_token_seconds");
    double ttft_f = hist_mean(f0, f1, "vllm:time_to_first_token_seconds");
    fprintf(stderr,
            "prefill-heavy: waiting %d -> %d, kv_max %.2f, util %.0f, TTFT %.2fs (healthy %.3fs)\n",
            s0.waiting, s1.waiting, kv_max, util, ttft_f, ttft_h);
    assert_true(s1.waiting > s0.waiting + 100);
    assert_true(kv_max < 0.7);
    assert_true(util > 80);
    assert_true(ttft_f > 20 * ttft_h && ttft_f > 5);
    /* the budget is in the exposition's step sizes: no step above 2048 tokens */
    assert_true(val(f1, "vllm:iteration_tokens_total_bucket{engine=\"0\",le=\"2048.0\"") ==
                val(f1, "vllm:iteration_tokens_total_bucket{engine=\"0\",le=\"+Inf\""));
    im_free(h0);
    im_free(h1);
    im_free(f0);
    im_free(f1);
    sim_fleet_free(h);
    sim_fleet_free(f);
}

/* scheduler-stall: from 2 minutes requests wait, nothing runs, tokens stop, KV mostly free. */
static void test_scheduler_stall(void **state)
{
    (void)state;
    sim_fleet_t *f = mk("scheduler-stall", 2);
    sim_fleet_advance(f, T0_MS + 100 * 1000);
    sim_pod_stats_t a, b, c;
    sim_fleet_pod_stats(f, 0, &a);
    sim_fleet_advance(f, T0_MS + 180 * 1000);
    sim_fleet_pod_stats(f, 0, &b);
    sim_fleet_advance(f, T0_MS + 600 * 1000);
    sim_fleet_pod_stats(f, 0, &c);
    fprintf(stderr, "stall: gen %g -> %g -> %g, waiting %d -> %d, running %d, kv %.2f util %.0f\n",
            a.generation_tokens, b.generation_tokens, c.generation_tokens, b.waiting, c.waiting,
            c.running, c.kv_usage, c.gpu_util);
    assert_true(b.generation_tokens > a.generation_tokens);
    assert_true(c.generation_tokens == b.generation_tokens);
    assert_true(c.waiting > b.waiting + 500);
    assert_true(c.kv_usage < 0.3);
    assert_true(c.gpu_util == 0);
    sim_fleet_free(f);
}

/* slow-replica: pod 0's queue and latency are far from its peers'. */
static void test_slow_replica(void **state)
{
    (void)state;
    sim_fleet_t *f = mk("slow-replica", 4);
    sim_fleet_advance(f, T0_MS + 300 * 1000);
    char *a0 = render(f, SIM_EP_VLLM, 0), *a1 = render(f, SIM_EP_VLLM, 1);
    sim_fleet_advance(f, T0_MS + 900 * 1000);
    char *b0 = render(f, SIM_EP_VLLM, 0), *b1 = render(f, SIM_EP_VLLM, 1);
    double e0 = hist_mean(a0, b0, "vllm:e2e_request_latency_seconds");
    double e1 = hist_mean(a1, b1, "vllm:e2e_request_latency_seconds");
    double i0 = hist_mean(a0, b0, "vllm:inter_token_latency_seconds");
    double i1 = hist_mean(a1, b1, "vllm:inter_token_latency_seconds");
    sim_pod_stats_t s0, s1;
    sim_fleet_pod_stats(f, 0, &s0);
    sim_fleet_pod_stats(f, 1, &s1);
    fprintf(stderr, "slow-replica: e2e %.1f vs %.1f, itl %.4f vs %.4f, running %d vs %d\n", e0, e1,
            i0, i1, s0.running, s1.running);
    assert_true(e0 > 3 * e1);
    assert_true(i0 > 3 * i1);
    /* its batch holds more requests for longer */
    assert_true(s0.running > 3 * s1.running);
    im_free(a0);
    im_free(a1);
    im_free(b0);
    im_free(b1);
    sim_fleet_free(f);
}

/* xid-errors: the gauge holds the last XID with err_code/err_msg, row remapping
 * fails, then the GPU falls off the bus and leaves the exposition. */
static void test_xid_errors(void **state)
{
    (void)state;
    sim_fleet_t *f = mk("xid-errors", 4);
    sim_fleet_advance(f, T0_MS + 60 * 1000);
    char *t = render(f, SIM_EP_DCGM, 0);
    assert_non_null(strstr(t, "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\","));
    assert_non_null(strstr(t, "container=\"vllm\",err_code=\"0\",err_msg=\"No Error\",namespace="));
    assert_non_null(strstr(t, "DCGM_FI_DRIVER_VERSION=\"580.95.05\",err_code=\"0\",err_msg=\"No "
                              "Error\"} 0\n")); /* an idle GPU */
    assert_true(val(t, "DCGM_FI_DEV_ROW_REMAP_FAILURE{gpu=\"0\",") == 0);
    im_free(t);
    sim_fleet_advance(f, T0_MS + 180 * 1000);
    t = render(f, SIM_EP_DCGM, 0);
    assert_true(val(t, "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",") == 48);
    assert_non_null(strstr(t, "err_code=\"48\",err_msg=\"Double Bit ECC Error\""));
    {
        /* gpu 0's only XID series is the 48 one */
        const char *x0 = strstr(t, "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",");
        const char *nl = strchr(x0, '\n');
        assert_non_null(memmem(x0, (size_t)(nl - x0), "err_code=\"48\"", 13));
        assert_null(strstr(nl, "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\","));
    }
    assert_true(val(t, "DCGM_FI_DEV_XID_ERRORS{gpu=\"1\",") == 0);
    assert_true(val(t, "DCGM_FI_DEV_ROW_REMAP_FAILURE{gpu=\"0\",") == 1);
    assert_true(val(t, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{gpu=\"0\",") == 1);
    assert_true(val(t, "DCGM_FI_DEV_ROW_REMAP_FAILURE{gpu=\"1\",") == 0);
    im_free(t);
    /* the XID stays when the knob goes back (a healthy preset) — never resets */
    sim_fleet_advance(f, T0_MS + 290 * 1000);
    t = render(f, SIM_EP_DCGM, 0);
    assert_true(val(t, "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",") == 48);
    im_free(t);
    sim_fleet_advance(f, T0_MS + 360 * 1000);
    t = render(f, SIM_EP_DCGM, 0);
    assert_null(strstr(t, "{gpu=\"0\","));
    assert_non_null(strstr(t, "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\","));
    im_free(t);
    sim_fleet_free(f);

    /* one XID series per GPU at any time: the series changes with the code */
    const char *y = "events:\n  - at: 1m\n    set: {xid_code: 13}\n    pods: 1\n"
                    "  - at: 2m\n    set: {xid_code: 31}\n    pods: 1\n";
    char *path = tmp_yaml(y);
    f = mk(path, 2);
    unlink(path);
    sim_fleet_advance(f, T0_MS + 90 * 1000);
    t = render(f, SIM_EP_DCGM, 0);
    assert_true(val(t, "DCGM_FI_DEV_XID_ERRORS{gpu=\"1\",") == 13);
    assert_non_null(strstr(t, "err_msg=\"Graphics Engine Exception\""));
    im_free(t);
    sim_fleet_advance(f, T0_MS + 150 * 1000);
    t = render(f, SIM_EP_DCGM, 0);
    assert_true(val(t, "DCGM_FI_DEV_XID_ERRORS{gpu=\"1\",") == 31);
    assert_null(strstr(t, "err_code=\"13\""));
    assert_true(sum_of(t, "DCGM_FI_DEV_XID_ERRORS{gpu=\"1\",", NULL) == 31);
    im_free(t);
    sim_fleet_free(f);
}

/* gpu-throttle: SM clock down, hot, violation counters, serving slower. */
static void test_gpu_throttle(void **state)
{
    (void)state;
    sim_fleet_t *f = mk_opt("gpu-throttle", 2, NULL, true);
    sim_fleet_advance(f, T0_MS + 60 * 1000);
    char *d0 = render(f, SIM_EP_DCGM, 0), *v0 = render(f, SIM_EP_VLLM, 0);
    sim_fleet_advance(f, T0_MS + 115 * 1000);
    char *v1 = render(f, SIM_EP_VLLM, 0);
    sim_fleet_advance(f, T0_MS + 420 * 1000);
    char *v2 = render(f, SIM_EP_VLLM, 0);
    sim_fleet_advance(f, T0_MS + 600 * 1000);
    char *d1 = render(f, SIM_EP_DCGM, 0), *v3 = render(f, SIM_EP_VLLM, 0);
    /* field-id order: the violation counters between XID (230) and FB_FREE (251) */
    const char *x = strstr(d1, "# TYPE DCGM_FI_DEV_XID_ERRORS"),
               *pv = strstr(d1, "# TYPE DCGM_FI_DEV_POWER_VIOLATION counter"),
               *tv = strstr(d1, "# TYPE DCGM_FI_DEV_THERMAL_VIOLATION counter"),
               *fb = strstr(d1, "# TYPE DCGM_FI_DEV_FB_FREE");
    assert_true(x && pv && tv && fb && x < pv && pv < tv && tv < fb);
    assert_true(val(d0, "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",") == 1980);
    assert_true(val(d1, "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",") == 1100);
    assert_true(val(d1, "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",") >= 85);
    assert_true(val(d0, "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",") < 70);
    assert_true(val(d0, "DCGM_FI_DEV_THERMAL_VIOLATION{gpu=\"0\",") == 0);
    assert_true(val(d1, "DCGM_FI_DEV_THERMAL_VIOLATION{gpu=\"0\",") > 60e9);
    double itl_before = hist_mean(v0, v1, "vllm:inter_token_latency_seconds");
    double itl_after = hist_mean(v2, v3, "vllm:inter_token_latency_seconds");
    fprintf(stderr, "throttle: ITL %.4f -> %.4f\n", itl_before, itl_after);
    assert_true(itl_after > 1.2 * itl_before);
    im_free(d0);
    im_free(d1);
    im_free(v0);
    im_free(v1);
    im_free(v2);
    im_free(v3);
    sim_fleet_free(f);
    /* without --dcgm-violations the default counters only */
    f = mk("gpu-throttle", 1);
    d0 = render(f, SIM_EP_DCGM, 0);
    assert_null(strstr(d0, "VIOLATION"));
    im_free(d0);
    sim_fleet_free(f);
    /* power throttling holds the GPU at its power limit */
    char *path = tmp_yaml("events:\n  - at: 1m\n    set: {throttle: 1, throttle_clock: 1300}\n");
    f = mk_opt(path, 1, NULL, true);
    unlink(path);
    sim_fleet_advance(f, T0_MS + 300 * 1000);
    d0 = render(f, SIM_EP_DCGM, 0);
    assert_true(val(d0, "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",") == 1300);
    assert_true(val(d0, "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",") > 690);
    assert_true(val(d0, "DCGM_FI_DEV_POWER_VIOLATION{gpu=\"0\",") > 100e9);
    assert_true(val(d0, "DCGM_FI_DEV_THERMAL_VIOLATION{gpu=\"0\",") == 0);
    im_free(d0);
    sim_fleet_free(f);
}

/* quota-starved: the first team's ClusterQueue cannot borrow; its pending
 * workloads grow, attempts are inadmissible, workloads are evicted. */
static void test_quota_starved(void **state)
{
    (void)state;
    sim_fleet_t *f = mk("quota-starved", 4);
    sim_fleet_advance(f, T0_MS + 600 * 1000);
    char *a = render(f, SIM_EP_KUEUE, 0);
    sim_fleet_advance(f, T0_MS + 7200 * 1000);
    char *b = render(f, SIM_EP_KUEUE, 0);
    const char *pend = "kueue_pending_workloads{cluster_queue=\"cq-llm-serving\"";
    double pa = sum_of(a, pend, NULL), pb = sum_of(b, pend, NULL);
    double other = sum_of(b, "kueue_pending_workloads{cluster_queue=\"cq-research\"", NULL);
    double inadm =
        val(b, "kueue_admission_attempts_total{replica_role=\"leader\",result=\"inadmissible\"}");
    double ev = sum_of(b, "kueue_evicted_workloads_total{cluster_queue=\"cq-llm-serving\"", NULL);
    fprintf(stderr, "quota-starved: pending %g -> %g (other %g), inadmissible %g, evicted %g\n", pa,
            pb, other, inadm, ev);
    assert_true(pb > pa + 20 && pb > 5 * other);
    assert_true(inadm > 100);
    assert_true(ev > 0);
    assert_non_null(strstr(b,
                           "kueue_cluster_queue_borrowing_limit{cluster_queue=\"cq-llm-serving\","
                           "cohort=\"gpu-pool\",flavor=\"h100-80gb\",replica_role=\"leader\","
                           "resource=\"nvidia.com/gpu\"} 0\n"));
    assert_non_null(strstr(b, "kueue_cluster_queue_borrowing_limit{cluster_queue=\"cq-research\","
                              "cohort=\"gpu-pool\",flavor=\"h100-80gb\",replica_role=\"leader\","
                              "resource=\"nvidia.com/gpu\"} +Inf\n"));
    /* the team's LocalQueue shows the same pending workloads */
    assert_true(sum_of(b, "kueue_local_queue_pending_workloads{name=\"lq-llm-serving\"", NULL) ==
                pb);
    im_free(a);
    im_free(b);
    sim_fleet_free(f);
}

/* target-down: pod 0's endpoint fails from 2 to 7 minutes, node 0's exporter from 3 to 6. */
static void test_target_down(void **state)
{
    (void)state;
    sim_fleet_t *f = mk("target-down", 2);
    int64_t at[] = {60, 150, 200, 380, 450};
    bool pod0[] = {true, false, false, false, true};
    bool node0[] = {true, true, false, true, true};
    for (size_t i = 0; i < IM_ARRAY_LEN(at); i++) {
        sim_fleet_advance(f, T0_MS + at[i] * 1000);
        assert_int_equal(sim_fleet_endpoint_up(f, SIM_EP_VLLM, 0), pod0[i]);
        assert_int_equal(sim_fleet_endpoint_up(f, SIM_EP_DCGM, 0), node0[i]);
        assert_true(sim_fleet_endpoint_up(f, SIM_EP_VLLM, 1));
        assert_true(sim_fleet_endpoint_up(f, SIM_EP_KUEUE, 0));
    }
    sim_fleet_free(f);

    /* --history writes up == 0 and no samples for a target while it is down */
    f = mk("target-down", 2);
    FILE *fp = tmpfile();
    assert_non_null(fp);
    sim_history_stats_t st;
    im_err_t err;
    assert_int_equal(
        sim_history_write(f, T0_MS, T0_MS + 600 * 1000, 30000, (size_t)1 << 30, fp, &st, &err),
        IM_OK);
    char inst0[160];
    snprintf(inst0, sizeof inst0, "instance=\"%s:8000\"", sim_fleet_endpoint(f, 0)->pod);
    long len = ftell(fp);
    rewind(fp);
    char *text = im_malloc((size_t)len + 1);
    assert_int_equal(fread(text, 1, (size_t)len, fp), (size_t)len);
    text[len] = '\0';
    fclose(fp);
    sim_fleet_free(f);
    int up0 = 0, up1 = 0, down = 0, pod0_running = 0;
    for (char *p = text; p && *p;) {
        char *nl = strchr(p, '\n');
        size_t n = (size_t)(nl - p);
        bool is0 = memmem(p, n, inst0, strlen(inst0)) != NULL;
        if (strncmp(p, "up{", 3) == 0 && memmem(p, n, "job=\"vllm\"", 10)) {
            if (memmem(p, n, "} 0 ", 4))
                down++;
            else
                up1++;
        }
        if (strncmp(p, "up{", 3) == 0) up0++;
        if (is0 && strncmp(p, "vllm:num_requests_running{", 26) == 0) pod0_running++;
        p = nl + 1;
    }
    /* 21 steps x 4 targets; pod 0 down at 2:00 .. 6:30 (10 steps) */
    assert_int_equal(up0, 21 * 4);
    assert_int_equal(down, 10);
    assert_int_equal(up1, 2 * 21 - 10);
    assert_int_equal(pod0_running, 21 - 10);
    assert_non_null(strstr(text, "# TYPE up gauge\n"));
    im_free(text);
}

/* max_num_batched_tokens: with a small budget, steps never exceed it. */
static void test_token_budget(void **state)
{
    (void)state;
    char *path = tmp_yaml("set: {max_num_batched_tokens: 512}\n");
    sim_fleet_t *f = mk(path, 1);
    unlink(path);
    sim_fleet_advance(f, T0_MS + 300 * 1000);
    char *t = render(f, SIM_EP_VLLM, 0);
    double inf = val(t, "vllm:iteration_tokens_total_bucket{engine=\"0\",le=\"+Inf\"");
    assert_true(inf > 1000);
    assert_true(val(t, "vllm:iteration_tokens_total_bucket{engine=\"0\",le=\"512.0\"") == inf);
    im_free(t);
    sim_fleet_free(f);
}

/* Event selectors: model (one of two), team, pods; unknown names are errors. */
static void test_selectors(void **state)
{
    (void)state;
    const char *models = "meta-llama/Llama-3.1-8B-Instruct,Qwen/Qwen3-32B";
    const char *y = "events:\n"
                    "  - at: 1m\n    scenario: scheduler-stall\n    model: Qwen/Qwen3-32B\n"
                    "  - at: 1m\n    set: {slowdown: 5}\n    team: research\n";
    char *path = tmp_yaml(y);
    sim_fleet_t *f = mk_opt(path, 4, models, false);
    sim_fleet_advance(f, T0_MS + 120 * 1000);
    sim_pod_stats_t s[4], e[4];
    for (int i = 0; i < 4; i++) sim_fleet_pod_stats(f, i, &s[i]);
    sim_fleet_advance(f, T0_MS + 300 * 1000);
    for (int i = 0; i < 4; i++) sim_fleet_pod_stats(f, i, &e[i]);
    /* pods 1 and 3 serve Qwen: stalled; 0 and 2 keep generating */
    assert_true(e[1].generation_tokens == s[1].generation_tokens);
    assert_true(e[3].generation_tokens == s[3].generation_tokens);
    assert_true(e[0].generation_tokens > s[0].generation_tokens);
    assert_true(e[2].generation_tokens > s[2].generation_tokens);
    sim_fleet_free(f);

    im_err_t err;
    sim_options_t o;
    sim_options_default(&o);
    o.start_ms = T0_MS;
    o.models = models;
    unlink(path);
    path = tmp_yaml("events:\n  - at: 1m\n    set: {stall: 1}\n    model: gpt-5\n");
    o.scenario = path;
    f = NULL;
    assert_int_equal(sim_fleet_create(&o, &f, &err), IM_EINVAL);
    assert_non_null(strstr(err.msg, "gpt-5"));
    unlink(path);
    path = tmp_yaml("events:\n  - at: 1m\n    set: {stall: 1}\n    team: nobody\n");
    o.scenario = path;
    assert_int_equal(sim_fleet_create(&o, &f, &err), IM_EINVAL);
    assert_non_null(strstr(err.msg, "nobody"));
    unlink(path);
    path = tmp_yaml("events:\n  - at: 1m\n    set: {stall: 1}\n    model: \"\"\n");
    o.scenario = path;
    assert_int_equal(sim_fleet_create(&o, &f, &err), IM_EPARSE);
    assert_true(err.line == 4);
    unlink(path);
    /* knob values: finite and in range, errors at the value */
    const char *bad[] = {"set: {stall: nan}\n", "set:\n  gpu_index: 9\n",
                         "set: {throttle_clock: 5000}\n", "set: {max_num_seqs: 1e300}\n"};
    for (size_t i = 0; i < IM_ARRAY_LEN(bad); i++) {
        sim_scenario_t sc;
        im_err_clear(&err);
        assert_int_equal(sim__scenario_parse_yaml(bad[i], strlen(bad[i]), &sc, &err), IM_EPARSE);
        assert_true(err.line >= 1 && err.col > 1);
        fprintf(stderr, "%s", err.msg);
        fprintf(stderr, "\n");
    }
}

/* The combined scenario file of docs/simulator.md: causes one after another, on
 * some pods only, on one of two models. */
static void test_docs_combined(void **state)
{
    (void)state;
    const char *src = getenv("IM_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/docs/simulator.md", src ? src : "..");
    FILE *fp = fopen(path, "rb");
    if (!fp) skip();
    char *doc = im_malloc(1 << 20);
    size_t n = fread(doc, 1, (1 << 20) - 1, fp);
    doc[n] = '\0';
    fclose(fp);
    char *y = strstr(doc, "```yaml\nname: bad-afternoon\n");
    assert_non_null(y);
    y += 8;
    *strstr(y, "```") = '\0';
    char *yp = tmp_yaml(y);
    im_free(doc);
    sim_fleet_t *f = mk_opt(yp, 4, "meta-llama/Llama-3.1-8B-Instruct,Qwen/Qwen3-32B", false);
    unlink(yp);
    /* 20m: the Qwen pods' GPUs (1, 3) throttle, the Llama pods' (0, 2) do not */
    sim_fleet_advance(f, T0_MS + 20 * 60000);
    char *d = render(f, SIM_EP_DCGM, 0);
    assert_true(val(d, "DCGM_FI_DEV_SM_CLOCK{gpu=\"1\",") == 1100);
    assert_true(val(d, "DCGM_FI_DEV_SM_CLOCK{gpu=\"3\",") == 1100);
    assert_true(val(d, "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",") == 1980);
    im_free(d);
    /* 31-44m: pod 2 is slow, pod 0 is not */
    sim_fleet_advance(f, T0_MS + 31 * 60000);
    char *a0 = render(f, SIM_EP_VLLM, 0), *a2 = render(f, SIM_EP_VLLM, 2);
    sim_fleet_advance(f, T0_MS + 44 * 60000);
    char *b0 = render(f, SIM_EP_VLLM, 0), *b2 = render(f, SIM_EP_VLLM, 2);
    assert_true(hist_mean(a2, b2, "vllm:inter_token_latency_seconds") >
                3 * hist_mean(a0, b0, "vllm:inter_token_latency_seconds"));
    im_free(a0);
    im_free(a2);
    im_free(b0);
    im_free(b2);
    /* 46-49m: pod 0 hangs, its GPU is gone from the exporter */
    sim_pod_stats_t s1, s2;
    sim_fleet_advance(f, T0_MS + 46 * 60000);
    sim_fleet_pod_stats(f, 0, &s1);
    sim_fleet_advance(f, T0_MS + 49 * 60000);
    sim_fleet_pod_stats(f, 0, &s2);
    assert_true(s2.generation_tokens == s1.generation_tokens);
    d = render(f, SIM_EP_DCGM, 0);
    assert_null(strstr(d, "{gpu=\"0\","));
    im_free(d);
    /* 55m: research's ClusterQueue may not borrow */
    sim_fleet_advance(f, T0_MS + 55 * 60000);
    char *k = render(f, SIM_EP_KUEUE, 0);
    assert_non_null(strstr(k, "kueue_cluster_queue_borrowing_limit{cluster_queue=\"cq-research\","
                              "cohort=\"gpu-pool\",flavor=\"h100-80gb\",replica_role=\"leader\","
                              "resource=\"nvidia.com/gpu\"} 0\n"));
    im_free(k);
    /* 65m: healthy again, but the XID gauge keeps 79 */
    sim_fleet_advance(f, T0_MS + 62 * 60000);
    sim_fleet_pod_stats(f, 0, &s1);
    sim_fleet_advance(f, T0_MS + 65 * 60000);
    sim_fleet_pod_stats(f, 0, &s2);
    assert_true(s2.generation_tokens > s1.generation_tokens);
    d = render(f, SIM_EP_DCGM, 0);
    assert_true(val(d, "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",") == 79);
    assert_non_null(strstr(d, "err_code=\"79\",err_msg=\"GPU has fallen off the bus\""));
    assert_true(val(d, "DCGM_FI_DEV_SM_CLOCK{gpu=\"1\",") == 1980);
    im_free(d);
    sim_fleet_free(f);
}

/* Same seed, same bytes: with the fault knobs, MIG nodes and the ground truth. */
static void test_determinism_faults(void **state)
{
    (void)state;
    char *out[2][4];
    for (int r = 0; r < 2; r++) {
        sim_options_t o;
        sim_options_default(&o);
        o.pods = 3;
        o.seed = 9;
        o.start_ms = T0_MS;
        o.scenario = "xid-errors";
        o.mig_nodes = 1;
        o.dcgm_violations = true;
        sim_fleet_t *f;
        assert_int_equal(sim_fleet_create(&o, &f, NULL), IM_OK);
        sim_fleet_advance(f, T0_MS + 400 * 1000);
        out[r][0] = render(f, SIM_EP_DCGM, 0);
        out[r][1] = render(f, SIM_EP_DCGM, 1);
        out[r][2] = render(f, SIM_EP_KUEUE, 0);
        im_buf_t b;
        im_buf_init(&b, 0);
        assert_int_equal(sim_fleet_ground_truth_json(f, &b), IM_OK);
        out[r][3] = im_buf_steal(&b, NULL);
        sim_fleet_free(f);
    }
    for (int i = 0; i < 4; i++) {
        assert_string_equal(out[0][i], out[1][i]);
        im_free(out[0][i]);
        im_free(out[1][i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefill_heavy),      cmocka_unit_test(test_scheduler_stall),
        cmocka_unit_test(test_slow_replica),       cmocka_unit_test(test_xid_errors),
        cmocka_unit_test(test_gpu_throttle),       cmocka_unit_test(test_quota_starved),
        cmocka_unit_test(test_target_down),        cmocka_unit_test(test_token_budget),
        cmocka_unit_test(test_selectors),          cmocka_unit_test(test_docs_combined),
        cmocka_unit_test(test_determinism_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

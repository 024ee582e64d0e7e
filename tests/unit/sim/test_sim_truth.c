/* test_sim_truth.c — the simulator's ground truth (issue 17) against its own
 * expositions at the same simulated time: Kueue reservation integrated second
 * by second equals reserved GPU-seconds exactly, energy counter increments equal
 * the energy, request/token counters and histogram buckets equal the per-pod and
 * per-model totals, MIG instances count as their fraction of a GPU; cohort
 * borrowing shows as reservation above the nominal quota. */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "sim/sim.h"

#define T0_MS 1787650000000LL

static sim_fleet_t *mk(const char *scenario, int pods, int mig_nodes)
{
    sim_options_t o;
    sim_options_default(&o);
    o.pods = pods;
    o.seed = 5;
    o.start_ms = T0_MS;
    o.models = "meta-llama/Llama-3.1-8B-Instruct,Qwen/Qwen3-32B";
    o.mig_nodes = mig_nodes;
    if (scenario) o.scenario = scenario;
    sim_fleet_t *f = NULL;
    im_err_t err;
    im_rc rc = sim_fleet_create(&o, &f, &err);
    if (rc != IM_OK) fprintf(stderr, "create: %s\n", err.msg);
    assert_int_equal(rc, IM_OK);
    return f;
}

static char *render(sim_fleet_t *f, sim_ep_kind_t k, int i)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(sim_fleet_render(f, k, i, &b), IM_OK);
    return im_buf_steal(&b, NULL);
}

static char *truth(sim_fleet_t *f)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(sim_fleet_ground_truth_json(f, &b), IM_OK);
    return im_buf_steal(&b, NULL);
}

/* The number after "key": following `from` (NAN if none). */
static double jnum(const char *from, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = from ? strstr(from, pat) : NULL;
    return p ? strtod(p + strlen(pat), NULL) : NAN;
}

/* Sum of the sample values of lines starting with prefix and containing all of has[]. */
static double sum_of(const char *text, const char *prefix, const char *has1, const char *has2)
{
    size_t n = strlen(prefix);
    double s = 0;
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (strncmp(p, prefix, n) == 0 && (!has1 || memmem(p, len, has1, strlen(has1))) &&
            (!has2 || memmem(p, len, has2, strlen(has2)))) {
            const char *q = p + len;
            while (q > p && q[-1] != ' ') q--;
            s += strtod(q, NULL);
        }
        p = nl ? nl + 1 : NULL;
    }
    return s;
}

static void test_truth_vs_expositions(void **state)
{
    (void)state;
    sim_fleet_t *f = mk("healthy", 4, 1);
    const char *teams[2] = {"llm-serving", "research"};
    double res_sum[2] = {0, 0}, busy_sum[2] = {0, 0};
    char *e60 = NULL;
    char *t60 = NULL;
    int ndcgm = sim_fleet_count(f, SIM_EP_DCGM);
    assert_int_equal(ndcgm, 2); /* one H100 node, one MIG node */
    for (int s = 1; s <= 300; s++) {
        sim_fleet_advance(f, T0_MS + (int64_t)s * 1000);
        char *k = render(f, SIM_EP_KUEUE, 0), *d = render(f, SIM_EP_DCGM, 0);
        for (int t = 0; t < 2; t++) {
            char cq[64], ns[64];
            snprintf(cq, sizeof cq, "cluster_queue=\"cq-%s\"", teams[t]);
            snprintf(ns, sizeof ns, "namespace=\"%s\"", teams[t]);
            res_sum[t] += sum_of(k, "kueue_cluster_queue_resource_reservation{", cq,
                                 "resource=\"nvidia.com/gpu\"");
            if (s > 60) busy_sum[t] += sum_of(d, "DCGM_FI_PROF_GR_ENGINE_ACTIVE{", ns, NULL);
        }
        im_free(k);
        if (s == 60) {
            e60 = d;
            t60 = truth(f);
        } else {
            im_free(d);
        }
    }
    char *t300 = truth(f), *e300 = render(f, SIM_EP_DCGM, 0);
    assert_true(jnum(t300, "seconds") == 300);
    for (int t = 0; t < 2; t++) {
        char key[64], ns[64];
        snprintf(key, sizeof key, "\"team\": \"%s\"", teams[t]);
        snprintf(ns, sizeof ns, "namespace=\"%s\"", teams[t]);
        const char *a = strstr(t300, key), *b = strstr(t60, key);
        assert_non_null(a);
        /* reservation: exact */
        assert_true(jnum(a, "reserved_gpu_seconds") == res_sum[t]);
        /* two 1-GPU pods per team on the H100 node */
        assert_true(jnum(a, "allocated_gpu_seconds") == 2 * 300);
        /* energy: the counter's increments (mJ, integers) */
        double de = (sum_of(e300, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{", ns, NULL) -
                     sum_of(e60, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{", ns, NULL)) /
                    1000;
        double dt = jnum(a, "energy_joules") - jnum(b, "energy_joules");
        fprintf(stderr, "%s: energy %.3f J vs counters %.3f J; busy %.4f vs %.4f\n", teams[t], dt,
                de, jnum(a, "busy_gpu_seconds") - jnum(b, "busy_gpu_seconds"), busy_sum[t]);
        assert_true(fabs(dt - de) < 0.002 * 2);
        /* busy: the exposed ratio (6 decimals) held over each 1 s tick */
        assert_true(fabs(jnum(a, "busy_gpu_seconds") - jnum(b, "busy_gpu_seconds") - busy_sum[t]) <
                    240 * 2 * 1e-6);
        /* MIG: 1g.10gb instances held by the team, each 1/7 of a GPU */
        char *m = render(f, SIM_EP_DCGM, 1);
        int inst = 0;
        for (const char *p = m; (p = strstr(p, "\nDCGM_FI_DEV_FB_USED{")) != NULL; p++) {
            const char *nl = strchr(p + 1, '\n');
            if (memmem(p, (size_t)(nl - p), ns, strlen(ns))) inst++;
        }
        assert_non_null(strstr(m, "GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"7\",Hostname="));
        assert_null(strstr(m, "DCGM_FI_DEV_GPU_UTIL{")); /* not reported in MIG mode */
        im_free(m);
        const char *mig = strstr(a, "\"flavor\": \"1g.10gb\"");
        assert_non_null(mig);
        assert_int_equal(inst, 21); /* 56 instances, every fourth idle, two teams */
        assert_true(fabs(jnum(mig, "allocated_gpu_seconds") - inst * 300 / 7.0) < 1e-6);
    }
    /* per pod: request and token counters; per model: TTFT buckets */
    for (int i = 0; i < 4; i++) {
        const sim_endpoint_t *ep = sim_fleet_endpoint(f, i);
        char key[160];
        snprintf(key, sizeof key, "\"pod\": \"%s\"", ep->pod);
        const char *a = strstr(t300, key);
        assert_non_null(a);
        char *v = render(f, SIM_EP_VLLM, i);
        assert_true(jnum(a, "prompt_tokens") == sum_of(v, "vllm:prompt_tokens_total{", NULL, NULL));
        assert_true(jnum(a, "generation_tokens") ==
                    sum_of(v, "vllm:generation_tokens_total{", NULL, NULL));
        assert_true(jnum(a, "cached_tokens") ==
                    sum_of(v, "vllm:prompt_tokens_cached_total{", NULL, NULL));
        assert_true(jnum(a, "stop") == sum_of(v, "vllm:request_success_total{", "\"stop\"", NULL));
        assert_true(jnum(a, "stop") > 100);
        im_free(v);
    }
    const char *qm = strstr(t300, "\"model\": \"Qwen/Qwen3-32B\", \"finished\"");
    assert_non_null(qm);
    const char *le = strstr(qm, "{\"le\": 0.1, \"count\": ");
    assert_non_null(le);
    double want = 0;
    for (int i = 1; i < 4; i += 2) {
        char *v = render(f, SIM_EP_VLLM, i);
        want += sum_of(v, "vllm:time_to_first_token_seconds_bucket{", "le=\"0.1\"", NULL);
        im_free(v);
    }
    assert_true(strtod(le + strlen("{\"le\": 0.1, \"count\": "), NULL) == want);
    assert_true(want > 10);
    im_free(e60);
    im_free(e300);
    im_free(t60);
    im_free(t300);
    sim_fleet_free(f);
}

/* A cohort: research borrows beyond its quota while llm-serving lends; the
 * lending limit caps it, and the ground truth splits borrowed and lent. */
static void test_cohort_borrowing(void **state)
{
    (void)state;
    char path[] = "/tmp/im-sim-cohort-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *y = "set: {batch_jobs_per_h: 0}\nevents:\n"
                    "  - at: 0s\n    set: {batch_jobs_per_h: 120, quota_gpus: 3}\n"
                    "    team: research\n"
                    "  - at: 0s\n    set: {batch_jobs_per_h: 0, quota_gpus: 5, lending_limit: 2}\n"
                    "    team: llm-serving\n";
    assert_int_equal(write(fd, y, strlen(y)), (ssize_t)strlen(y));
    close(fd);
    sim_fleet_t *f = mk(path, 4, 0);
    unlink(path);
    double max_res = 0;
    for (int s = 60; s <= 3600; s += 60) {
        sim_fleet_advance(f, T0_MS + (int64_t)s * 1000);
        char *k = render(f, SIM_EP_KUEUE, 0);
        max_res = fmax(max_res, sum_of(k, "kueue_cluster_queue_resource_reservation{",
                                       "cq-research", "nvidia.com/gpu"));
        assert_true(
            sum_of(k, "kueue_cluster_queue_nominal_quota{", "cq-research", "nvidia.com/gpu") == 3);
        im_free(k);
    }
    char *k = render(f, SIM_EP_KUEUE, 0);
    assert_non_null(strstr(k, "kueue_cluster_queue_lending_limit{cluster_queue=\"cq-llm-serving\","
                              "cohort=\"gpu-pool\",flavor=\"h100-80gb\",replica_role=\"leader\","
                              "resource=\"nvidia.com/gpu\"} 2\n"));
    /* research: nominal 3, borrows up to the 2 llm-serving lends */
    fprintf(stderr, "max_res %g\n", max_res);
    assert_true(max_res == 5);
    char *t = truth(f);
    const char *r = strstr(t, "\"team\": \"research\""),
               *l = strstr(t, "\"team\": \"llm-serving\"");
    double borrowed = jnum(r, "borrowed_gpu_seconds"), lent = jnum(l, "lent_gpu_seconds");
    fprintf(stderr, "cohort: max reservation %g, borrowed %g, lent %g\n", max_res, borrowed, lent);
    assert_true(borrowed > 600);
    assert_true(fabs(borrowed - lent) < 1e-6 * borrowed);
    assert_true(jnum(l, "borrowed_gpu_seconds") == 0);
    im_free(t);
    im_free(k);
    sim_fleet_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truth_vs_expositions),
        cmocka_unit_test(test_cohort_borrowing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

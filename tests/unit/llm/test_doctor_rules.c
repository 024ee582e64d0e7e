/* test_doctor_rules.c — the rules of llm/doctor_rules.c on hand-made series
 * (doctor_int.h), without a store: which cause a set of signals gives, that
 * the alternatives carry the rejecting figure, the ranking, and that a quiet
 * fleet gives nothing above info. */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "llm/doctor_int.h"

#define N 61

static double *flat(double v)
{
    double *s = doc_nan_series(N);
    for (size_t i = 0; i < N; i++) s[i] = v;
    return s;
}

static void sig(doc_model_t *m, int ds, double v)
{
    m->s[ds].v = flat(v);
    m->s[ds].metric = im_strdup("m");
    m->s[ds].query = im_strdup("q");
}

/* One vLLM model on two pods with a healthy baseline; callers change signals. */
static void setup_data(doc_data_t *d, doc_model_t **mp)
{
    memset(d, 0, sizeof *d);
    cfg_llm_doctor_defaults(&d->dc);
    d->start_ms = 1000000;
    d->step_ms = 30000;
    d->nsteps = N;
    d->nrecent = 16;
    d->ttft_target_s = 2;
    d->failure_ratio = 0.05;
    d->kv_threshold = 0.9;
    d->models = im_calloc(1, sizeof *d->models);
    d->nmodels = 1;
    doc_model_t *m = &d->models[0];
    m->model = im_strdup("m1");
    m->engine = "vllm";
    m->ename = "vLLM";
    m->npods = 2;
    m->pods = im_calloc(2, sizeof *m->pods);
    for (int p = 0; p < 2; p++) {
        m->pods[p].name = im_strdup(p ? "pod-b" : "pod-a");
        m->pods[p].node = im_strdup("node-1");
        m->pods[p].running = flat(30);
        m->pods[p].waiting = flat(0);
        m->pods[p].kv = flat(0.3);
    }
    sig(m, DS_WAITING, 0);
    sig(m, DS_RUNNING, 60);
    sig(m, DS_KV, 0.3);
    sig(m, DS_PREEMPT, 0);
    sig(m, DS_TTFT_P95, 0.2);
    sig(m, DS_FINISHED, 10);
    sig(m, DS_ERRORS, 0);
    sig(m, DS_ABORTS, 0);
    sig(m, DS_GEN, 2000);
    sig(m, DS_PROMPT, 9000);
    sig(m, DS_QUEUE_MEAN, 0.02);
    sig(m, DS_DEFERRED, 0);
    sig(m, DS_GPU_UTIL, 45);
    sig(m, DS_MEM_COPY, 60);
    /* running varies: not pinned at a ceiling */
    for (size_t k = 0; k < N; k++) m->s[DS_RUNNING].v[k] = 40 + (double)(k % 7) * 5;
    *mp = m;
}

static void set(doc_model_t *m, int ds, double v)
{
    for (size_t k = 0; k < N; k++) m->s[ds].v[k] = v;
}

static const char *run_first(doc_data_t *d, llm_doctor_report_t *r)
{
    memset(r, 0, sizeof *r);
    doc_rules_run(d, r);
    doc_rank(r);
    return r->nfindings && r->findings[0].severity > LLM_DOCTOR_INFO ? r->findings[0].cause
                                                                     : "none";
}

static void test_quiet_is_nothing(void **st)
{
    (void)st;
    doc_data_t d;
    doc_model_t *m;
    setup_data(&d, &m);
    llm_doctor_report_t r;
    assert_string_equal(run_first(&d, &r), "none");
    llm_doctor_report_free(&r);
    doc_data_free(&d);
}

static void test_kv_saturation_and_alternatives(void **st)
{
    (void)st;
    doc_data_t d;
    doc_model_t *m;
    setup_data(&d, &m);
    set(m, DS_KV, 0.97);
    set(m, DS_PREEMPT, 0.4);
    set(m, DS_WAITING, 200);
    set(m, DS_TTFT_P95, 30);
    llm_doctor_report_t r;
    assert_string_equal(run_first(&d, &r), "kv-saturation");
    const llm_doctor_finding_t *f = &r.findings[0];
    assert_int_equal(f->severity, LLM_DOCTOR_CRITICAL);
    assert_true(f->current);
    assert_int_equal(f->since_ms, d.start_ms);
    bool host = false;
    for (size_t i = 0; i < f->nalts; i++)
        if (!strcmp(f->alts[i].cause, "host-bound")) {
            host = true;
            assert_non_null(strstr(f->alts[i].why, "GPU util 45%"));
        }
    assert_true(host);
    llm_doctor_report_free(&r);
    /* the same queue with idle GPUs and KV room is the host */
    set(m, DS_KV, 0.3);
    set(m, DS_PREEMPT, 0);
    set(m, DS_GPU_UTIL, 10);
    set(m, DS_MEM_COPY, 5);
    assert_string_equal(run_first(&d, &r), "host-bound");
    llm_doctor_report_free(&r);
    /* ... and deferred requests are configuration, not the host */
    set(m, DS_DEFERRED, 150);
    assert_string_equal(run_first(&d, &r), "deferred-admission");
    llm_doctor_report_free(&r);
    doc_data_free(&d);
}

static void test_resolved_is_info(void **st)
{
    (void)st;
    doc_data_t d;
    doc_model_t *m;
    setup_data(&d, &m);
    /* errors in the first half of the window only */
    for (size_t k = 0; k < N / 2; k++) m->s[DS_ERRORS].v[k] = 2;
    llm_doctor_report_t r;
    assert_string_equal(run_first(&d, &r), "none");
    assert_true(r.nfindings >= 1);
    assert_string_equal(r.findings[0].cause, "engine-errors");
    assert_false(r.findings[0].current);
    assert_non_null(strstr(r.findings[0].summary, "resolved"));
    llm_doctor_report_free(&r);
    /* now, and the client aborts after a long queue rank after the cause */
    set(m, DS_ERRORS, 0);
    set(m, DS_ABORTS, 3);
    set(m, DS_QUEUE_MEAN, 60);
    set(m, DS_WAITING, 300);
    set(m, DS_KV, 0.95);
    set(m, DS_PREEMPT, 0.5);
    assert_string_equal(run_first(&d, &r), "kv-saturation");
    assert_true(r.nfindings >= 2);
    assert_string_equal(r.findings[1].cause, "client-timeouts");
    llm_doctor_report_free(&r);
    doc_data_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quiet_is_nothing),
        cmocka_unit_test(test_kv_saturation_and_alternatives),
        cmocka_unit_test(test_resolved_is_info),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

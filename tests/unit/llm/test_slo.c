/* test_slo.c — SLOs (config/llm_slo.h, llm/slo.h): the le regex of every
 * spelling of a bound, the decoder (our format and its shorthand, defaults,
 * errors naming the field at line:column; Sloth; OpenSLO), llm.slos in a
 * configuration with its dump re-loading, the offline resolution (engines,
 * the bucket refusal) and the generated rules loading as a rule file; the
 * daemon's per-SLO resolution (llm_slo_resolve_each) over a fake store: the
 * catalog until the histogram has series, then its `le` bounds as scraped. */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "config/config.h"
#include "labels/labels.h"
#include "llm/slo.h"
#include "query/query.h"
#include "rules/rules.h"
#include "util/mem.h"

static void test_le_regex(void **st)
{
    (void)st;
    char b[200];
    llm_slo_le_regex(2, b, sizeof b);
    assert_string_equal(b, "2|2\\\\.0");
    llm_slo_le_regex(2.5, b, sizeof b);
    assert_string_equal(b, "2\\\\.5");
    llm_slo_le_regex(0.025, b, sizeof b);
    assert_string_equal(b, "0\\\\.025");
    llm_slo_le_regex(1e-05, b, sizeof b);
    assert_string_equal(b, "1e-05|0\\\\.00001");
    llm_slo_le_regex(2560, b, sizeof b);
    assert_string_equal(b, "2560|2560\\\\.0");
}

static im_rc parse(const char *text, cfg_llm_slo_t *s, im_err_t *err)
{
    memset(s, 0, sizeof *s);
    im_err_clear(err);
    return cfg_llm_slo_parse_file(s, text, strlen(text), "t.yml", err);
}

static void test_decode(void **st)
{
    (void)st;
    cfg_llm_slo_t s;
    im_err_t err;
    assert_int_equal(parse("slos:\n"
                           "  - {name: a, model: m, signal: ttft, objective: \"p95 < 2.5s\"}\n"
                           "  - {name: b, sli: availability, objective: 99.5,\n"
                           "     window: {calendar: month}}\n",
                           &s, &err),
                     IM_OK);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.v[0].sli, CFG_SLO_LATENCY);
    assert_int_equal(s.v[0].signal, CFG_SLO_SIG_TTFT);
    assert_true(fabs(s.v[0].objective - 0.95) < 1e-12);
    assert_true(fabs(s.v[0].threshold_s - 2.5) < 1e-12);
    assert_int_equal(s.v[0].window_ms, 30 * 86400000LL);
    /* the SRE workbook's defaults */
    assert_int_equal(s.v[0].npage, 2);
    assert_true(s.v[0].page[0].factor == 14.4);
    assert_string_equal(cfg_slo_window_name(s.v[0].page[0].long_w), "1h");
    assert_string_equal(cfg_slo_window_name(s.v[0].page[0].short_w), "5m");
    assert_string_equal(cfg_slo_window_name(s.v[0].ticket[1].long_w), "3d");
    assert_true(s.v[1].calendar_month);
    cfg_llm_slo_free(&s);

    const struct {
        const char *text, *want;
    } bad[] = {
        {"slos:\n  - {name: a, sli: availability, objective: 100}\n",
         "t.yml:2:45: slos[0].objective must be a percent above 0 and below 100"},
        {"slos:\n  - {name: a, sli: availability, objective: 99, foo: 1}\n",
         "t.yml:2:49: field foo not found in slos[0]"},
        {"slos:\n  - {name: a, sli: latency, objective: 99, signal: ttft, threshold: 2x}\n",
         "slos[0].threshold must be a latency such as 2s or 500ms"},
        {"slos:\n  - {name: a, sli: availability, objective: 99, threshold: 1s}\n",
         "slos[0]: an availability SLO has no signal, metric or threshold"},
        {"slos:\n  - {name: a, sli: availability, objective: 99, window: 1d}\n",
         "slos[0].window 1d is shorter than the longest burn-rate window (3d)"},
        {"slos:\n  - {name: a, sli: availability, objective: 99}\n"
         "  - {name: a, sli: availability, objective: 98}\n",
         "SLO name \"a\" is defined twice"},
        {"slos:\n  - {name: a, signal: ttft, objective: \"p101 < 2s\"}\n",
         "the percentile must be in (0, 100)"},
        {"version: prometheus/v1\nservice: s\nslos:\n  - {name: a, objective: 99}\n",
         "Sloth slos[0].sli is required"},
        {"apiVersion: openslo/v1\nkind: AlertPolicy\n", "OpenSLO: kind AlertPolicy does not map"},
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(bad); i++) {
        assert_int_equal(parse(bad[i].text, &s, &err), IM_EPARSE);
        char eb[1200];
        const char *m = im_err_format(&err, eb, sizeof eb);
        if (!strstr(m, bad[i].want))
            fail_msg("case %zu: wanted \"%s\", got \"%s\"", i, bad[i].want, m);
        cfg_llm_slo_free(&s);
    }
}

static void test_config_dump(void **st)
{
    (void)st;
    static const char yml[] = "llm:\n"
                              "  slos:\n"
                              "    - name: chat\n"
                              "      model: m\n"
                              "      labels: {namespace: prod}\n"
                              "      engine: vllm\n"
                              "      signal: itl\n"
                              "      threshold: 50ms\n"
                              "      objective: 99.9\n"
                              "      window: 4w\n"
                              "      burn_rates: {page: [{factor: 10, long: 1h, short: 5m}]}\n";
    scrape_config_t *c = NULL, *c2 = NULL;
    im_err_t err;
    im_err_clear(&err);
    if (scrape_config_parse(yml, strlen(yml), "c.yml", &c, &err) != IM_OK) fail_msg("%s", err.msg);
    assert_int_equal(c->llm.slo.n, 1);
    assert_int_equal(c->llm.slo.v[0].npage, 1);
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)scrape_config_dump(c, &b);
    if (scrape_config_parse(b.data, b.len, "dump.yml", &c2, &err) != IM_OK)
        fail_msg("%s\n%s", err.msg, b.data);
    const cfg_slo_t *x = &c2->llm.slo.v[0];
    assert_string_equal(x->name, "chat");
    assert_string_equal(x->label_vals[0], "prod");
    assert_true(fabs(x->threshold_s - 0.05) < 1e-12);
    assert_true(fabs(x->objective - 0.999) < 1e-12);
    assert_int_equal(x->window_ms, 28 * 86400000LL);
    assert_int_equal(x->npage, 1);
    assert_int_equal(x->nticket, 2);
    im_buf_free(&b);
    scrape_config_free(c);
    scrape_config_free(c2);
    /* llm.slo_files that match nothing are an error naming the setting */
    static const char y2[] = "llm:\n  slo_files: [no-such-dir/x*.yml]\n";
    assert_int_not_equal(scrape_config_parse(y2, strlen(y2), "c.yml", &c, &err), IM_OK);
    assert_non_null(strstr(err.msg, "llm.slo_files[0]: \"no-such-dir/x*.yml\" matches no file"));
}

static void test_resolve_rules(void **st)
{
    (void)st;
    cfg_llm_slo_t s;
    im_err_t err;
    assert_int_equal(parse("slos:\n"
                           "  - {name: t, model: m, signal: ttft, threshold: 2.5s, objective: 99}\n"
                           "  - {name: a, model: m, sli: availability, objective: 99}\n",
                           &s, &err),
                     IM_OK);
    llm_slo_plans_t p;
    assert_int_equal(llm_slo_resolve(&s, NULL, &p, &err), IM_OK);
    /* vLLM has a 2.5 bound, SGLang (2, 4) does not: dropped with a note */
    assert_non_null(strstr(p.v[0].good_t,
                           "vllm:time_to_first_token_seconds_bucket{model_name=\"m\","
                           "le=~\"2\\\\.5\"}[{{.window}}]"));
    assert_null(strstr(p.v[0].good_t, "sglang:"));
    bool noted = false;
    for (size_t i = 0; i < p.nnotes; i++)
        noted |= strstr(p.notes[i], "sglang:time_to_first_token_seconds (catalog layout; "
                                    "neighbours 2s and 4s)") != NULL;
    assert_true(noted);
    assert_non_null(strstr(p.v[1].error_t, "finished_reason=~\"abort|error\""));
    assert_non_null(strstr(p.v[1].error_t, "sglang:num_aborted_requests_total"));
    im_buf_t y;
    im_buf_init(&y, 0);
    llm_slo_plans_yaml(&p, LLM_SLO_RULEFILE, &y);
    rules_file_t *f = NULL;
    rules_errs_t errs = {0};
    if (rules_file_parse("slo.yml", y.data, y.len, &f, &errs) != IM_OK)
        fail_msg("%s", errs.n ? errs.v[0] : "?");
    rules_file_free(f);
    rules_errs_free(&errs);
    im_buf_free(&y);
    llm_slo_plans_free(&p);
    cfg_llm_slo_free(&s);
    /* 3.5s: a bound of no engine (vLLM 2.5/5, SGLang 2/4, llm-d 3/4): refused */
    assert_int_equal(
        parse("slos:\n  - {name: t, signal: ttft, threshold: 3.5s, objective: 99}\n", &s, &err),
        IM_OK);
    assert_int_equal(llm_slo_resolve(&s, NULL, &p, &err), IM_EINVAL);
    assert_non_null(strstr(err.msg, "slos[0].threshold (t): 3.5s is not a bucket bound of"));
    llm_slo_plans_free(&p);
    cfg_llm_slo_free(&s);
}

/* ---- A fake store: __name__ values, and the le values of one histogram ---- */

typedef struct fake {
    query_backend_t base;
    const char *const *names, *const *les;
    size_t nnames, nles;
    const char *hist;           /* the _bucket series the les belong to */
    const char *const *now_les; /* those with a sample now (count by (le)); NULL = none */
    size_t nnow;
    bool down; /* answers every request with IM_EIO */
} fake_t;

static char **strs(const char *const *v, size_t n)
{
    char **o = im_calloc(n ? n : 1, sizeof *o);
    for (size_t i = 0; i < n; i++) o[i] = im_strdup(v[i]);
    return o;
}

static im_rc fake_do(query_backend_t *b, const query_req_t *r, query_answer_t *a, im_err_t *err)
{
    fake_t *f = (fake_t *)b;
    if (f->down) return im_err_set(err, IM_EIO, "backend fake: down");
    char cq[200];
    snprintf(cq, sizeof cq, "count by (le) (%s{", f->hist ? f->hist : "");
    if (r->op == QUERY_INSTANT && f->hist && strncmp(r->expr, cq, strlen(cq)) == 0) {
        /* the live bounds: one series {le=...} per bound with a sample now */
        a->result.type = PROMQL_RESULT_VECTOR;
        a->result.series =
            im_arena_alloc(&a->result.arena, (f->nnow + 1) * sizeof(promql_series_t));
        for (size_t i = 0; i < f->nnow; i++)
            a->result.series[a->result.nseries++] =
                (promql_series_t){im_labels_from_strs("le", f->now_les[i], NULL), NULL, 0};
        return IM_OK;
    }
    if (r->op != QUERY_LABEL_VALUES) return im_err_set(err, IM_EINVAL, "fake: only label values");
    if (strcmp(r->label, "__name__") == 0) {
        a->strs = strs(f->names, f->nnames);
        a->nstrs = f->nnames;
    } else if (strcmp(r->label, "le") == 0 && r->nmatch == 1 && f->hist &&
               strncmp(r->match[0], f->hist, strlen(f->hist)) == 0 &&
               r->match[0][strlen(f->hist)] == '{') {
        a->strs = strs(f->les, f->nles);
        a->nstrs = f->nles;
    } else {
        a->strs = strs(NULL, 0);
    }
    return IM_OK;
}

static const char *fake_describe(const query_backend_t *b)
{
    (void)b;
    return "fake";
}

static void fake_status(const query_backend_t *b, im_buf_t *out)
{
    (void)b;
    (void)out;
}

static void fake_free(query_backend_t *b)
{
    (void)b;
}

static const query_backend_vt_t fake_vt = {fake_do, fake_describe, fake_status, fake_free};

static const llm_slo_plan_t *plan(const llm_slo_plans_t *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->v[i].slo->name, name) == 0) return &p->v[i];
    fail_msg("no plan %s", name);
    return NULL;
}

static void test_resolve_each(void **st)
{
    (void)st;
    cfg_llm_slo_t s;
    im_err_t err;
    assert_int_equal(parse("slos:\n"
                           "  - {name: custom, model: m, signal: ttft, threshold: 1.7s, "
                           "objective: 99}\n"
                           "  - {name: one, model: m, signal: ttft, threshold: 1s, objective: 99}\n"
                           "  - {name: cat, model: m, signal: ttft, threshold: 2.5s, "
                           "objective: 99}\n"
                           "  - {name: avail, model: m, sli: availability, objective: 99}\n",
                           &s, &err),
                     IM_OK);
    static const char *const names[] = {"up", "vllm:time_to_first_token_seconds_bucket",
                                        "vllm:time_to_first_token_seconds_count"};
    static const char *const les[] = {"+Inf", "0.2", "1.0", "1.7", "3.0"};
    fake_t f = {.base = {&fake_vt},
                .names = names,
                .nnames = 1,
                .les = les,
                .nles = 5,
                .hist = "vllm:time_to_first_token_seconds_bucket"};
    /* 1. nothing scraped yet: the catalog's bounds (vLLM's 1.0 and 2.5; no 1.7) */
    llm_slo_plans_t p;
    llm_slo_resolve_each(&s, &f.base, &p);
    assert_int_equal(p.n, 4);
    for (size_t i = 0; i < p.n; i++) assert_int_equal(p.v[i].bounds, LLM_SLO_BOUNDS_CATALOG);
    const llm_slo_plan_t *c = plan(&p, "custom");
    assert_non_null(c->error);
    assert_true(c->bound_refused);
    assert_null(c->good_t);
    assert_non_null(strstr(c->error, "1.7s is not a bucket bound of "
                                     "vllm:time_to_first_token_seconds (catalog layout; "
                                     "neighbours 1s and 2.5s)"));
    assert_null(plan(&p, "cat")->error);
    assert_null(plan(&p, "one")->error);
    llm_slo_plans_free(&p);
    /* 2. scraped: its le values decide; "1.0" matches a 1s threshold */
    f.nnames = 3;
    llm_slo_resolve_each(&s, &f.base, &p);
    c = plan(&p, "custom");
    assert_int_equal(c->bounds, LLM_SLO_BOUNDS_LIVE);
    assert_null(c->error);
    assert_non_null(strstr(c->good_t, "vllm:time_to_first_token_seconds_bucket{model_name=\"m\","
                                      "le=~\"1\\\\.7\"}"));
    assert_null(strstr(c->good_t, "sglang"));
    const llm_slo_plan_t *o = plan(&p, "one");
    assert_int_equal(o->bounds, LLM_SLO_BOUNDS_LIVE);
    assert_non_null(strstr(o->good_t, "le=~\"1|1\\\\.0\""));
    const llm_slo_plan_t *k = plan(&p, "cat");
    assert_int_equal(k->bounds, LLM_SLO_BOUNDS_LIVE);
    assert_true(k->bound_refused);
    assert_null(k->good_t);
    assert_null(k->error_t);
    assert_non_null(strstr(k->error, "slos[2].threshold (cat): 2.5s is not a bucket bound of "
                                     "vllm:time_to_first_token_seconds (as scraped; neighbours "
                                     "1.7s and 3s)"));
    assert_non_null(strstr(k->error, "use threshold: 3s (or 1.7s)"));
    /* no request counters scraped: availability from the catalog's names */
    const llm_slo_plan_t *a = plan(&p, "avail");
    assert_int_equal(a->bounds, LLM_SLO_BOUNDS_CATALOG);
    assert_null(a->error);
    assert_non_null(a->error_t);
    /* the refused SLO makes no group; the rest loads as a rule file */
    im_buf_t y;
    im_buf_init(&y, 0);
    llm_slo_plans_yaml(&p, LLM_SLO_RULEFILE, &y);
    assert_null(strstr(y.data, "infermon.slo.cat\n"));
    assert_non_null(strstr(y.data, "infermon.slo.custom\n"));
    rules_file_t *rf = NULL;
    rules_errs_t errs = {0};
    if (rules_file_parse("slo.yml", y.data, y.len, &rf, &errs) != IM_OK)
        fail_msg("%s", errs.n ? errs.v[0] : "?");
    rules_file_free(rf);
    rules_errs_free(&errs);
    im_buf_free(&y);
    /* the status reports bounds and error, and measures nothing for cat */
    llm_slo_plans_t only = {.v = (llm_slo_plan_t *)k, .n = 1};
    im_buf_t js;
    im_buf_init(&js, 0);
    assert_int_equal(llm_slo_status_json(&only, &f.base, 0, &js, &err), IM_OK);
    assert_non_null(strstr(js.data, "\"bounds\":\"live\",\"error\":\"t.yml:"));
    assert_non_null(strstr(js.data, "\"attainment\":null"));
    im_buf_free(&js);
    llm_slo_plans_free(&p);
    /* 2b. re-bucketed (0.2 1.0 2.5 with a sample now; the store also kept
     * the old 1.7 and 3.0): the current bounds decide, so 2.5s makes rules
     * and 1.7s is refused with the current neighbours */
    static const char *const now[] = {"+Inf", "0.2", "1.0", "2.5"};
    f.now_les = now;
    f.nnow = 4;
    llm_slo_resolve_each(&s, &f.base, &p);
    k = plan(&p, "cat");
    assert_int_equal(k->bounds, LLM_SLO_BOUNDS_LIVE);
    assert_null(k->error);
    assert_non_null(strstr(k->good_t, "le=~\"2\\\\.5\"}"));
    c = plan(&p, "custom");
    assert_int_equal(c->bounds, LLM_SLO_BOUNDS_LIVE);
    assert_non_null(c->error);
    assert_non_null(strstr(c->error, "1.7s is not a bucket bound of "
                                     "vllm:time_to_first_token_seconds (as scraped; neighbours "
                                     "1s and 2.5s)"));
    assert_non_null(strstr(plan(&p, "one")->good_t, "le=~\"1|1\\\\.0\""));
    llm_slo_plans_free(&p);
    f.now_les = NULL;
    f.nnow = 0;
    /* 3. a store that does not answer: the catalog, with a note */
    f.down = true;
    llm_slo_resolve_each(&s, &f.base, &p);
    for (size_t i = 0; i < p.n; i++) assert_int_equal(p.v[i].bounds, LLM_SLO_BOUNDS_CATALOG);
    assert_true(p.nnotes >= 1);
    assert_non_null(strstr(p.notes[0], "backend fake: down"));
    assert_non_null(plan(&p, "custom")->error);
    llm_slo_plans_free(&p);
    cfg_llm_slo_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_le_regex),     cmocka_unit_test(test_decode),
        cmocka_unit_test(test_config_dump),  cmocka_unit_test(test_resolve_rules),
        cmocka_unit_test(test_resolve_each),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_cost.c — the cost report (llm/cost.h) over a memory-only TSDB through
 * the local query backend, against figures worked out by hand from the
 * samples written here: a reservation that doubles half-way, a MIG
 * reservation and a MIG instance (3g.40gb = 3/7), a GPU time-sliced between
 * two teams' pods (1/2 each), a GPU no pod holds, an energy counter that
 * resets, vLLM and SGLang token counters, labels as a real scrape gives them
 * (exported_namespace / exported_pod); and the bad inputs: a missing price, a
 * period with no data, an unknown team. Also the llm.cost decoder (every
 * error names its field at line:column), the MIG share parser and the
 * recording rules (they load as a rule file). */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "config/config.h"
#include "llm/cost.h"
#include "promql/promql.h"
#include "query/query.h"
#include "rules/rules.h"
#include "tsdb/tsdb.h"

#define T0   ((int64_t)1000000 * 1000) /* ms */
#define STEP 15000
#define N    240 /* steps in the hour [T0, T0 + 1h) */

static tsdb_t *g_db;
static promql_engine_t *g_eng;
static query_backend_t *g_b;

static void put(tsdb_appender_t *a, const im_labels_t *l, int i, double v)
{
    assert_int_equal(tsdb_appender_add(a, 0, l, T0 + (int64_t)i * STEP, v, NULL), IM_OK);
}

#define L(...) im_labels_from_strs(__VA_ARGS__, NULL)
#define DCGM(m, uuid, ...)                                                                         \
    L("__name__", m, "job", "dcgm", "namespace", "gpu-operator", "pod", "dcgm-x", "UUID", uuid,    \
      "modelName", "NVIDIA H100 80GB HBM3", __VA_ARGS__)

static void fill(void)
{
    tsdb_appender_t *a = tsdb_appender(g_db);
    const im_labels_t *ls[32];
    size_t n = 0;
    const char *kq[] = {"__name__",  "kueue_local_queue_resource_reservation",
                        "job",       "kueue",
                        "namespace", "kueue-system"};
    const im_labels_t *res_a =
        L(kq[0], kq[1], kq[2], kq[3], kq[4], kq[5], "exported_namespace", "team-a", "name", "lq",
          "flavor", "h100", "resource", "nvidia.com/gpu");
    const im_labels_t *res_b =
        L(kq[0], kq[1], kq[2], kq[3], kq[4], kq[5], "exported_namespace", "team-b", "name", "lq",
          "flavor", "a100-mig", "resource", "nvidia.com/mig-1g.10gb");
    const im_labels_t *res_o =
        L(kq[0], kq[1], kq[2], kq[3], kq[4], kq[5], "exported_namespace", "orphan", "name", "lq",
          "flavor", "h100", "resource", "nvidia.com/gpu");
    const im_labels_t *cpu = L(kq[0], kq[1], kq[2], kq[3], kq[4], kq[5], "exported_namespace",
                               "team-a", "name", "lq", "flavor", "h100", "resource", "cpu");
    /* GPU-1: team-a pod a-0; GPU-2 time-sliced a-1 / b-0; GPU-3 MIG 3g.40gb b-1; GPU-4 none */
    const im_labels_t *fb1 =
        DCGM("DCGM_FI_DEV_FB_USED", "GPU-1", "exported_namespace", "team-a", "exported_pod", "a-0");
    const im_labels_t *gr1 = DCGM("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "GPU-1", "exported_namespace",
                                  "team-a", "exported_pod", "a-0");
    const im_labels_t *en1 = DCGM("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "GPU-1",
                                  "exported_namespace", "team-a", "exported_pod", "a-0");
    const im_labels_t *fb2a =
        DCGM("DCGM_FI_DEV_FB_USED", "GPU-2", "exported_namespace", "team-a", "exported_pod", "a-1");
    const im_labels_t *fb2b =
        DCGM("DCGM_FI_DEV_FB_USED", "GPU-2", "exported_namespace", "team-b", "exported_pod", "b-0");
    const im_labels_t *gr2a = DCGM("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "GPU-2", "exported_namespace",
                                   "team-a", "exported_pod", "a-1");
    const im_labels_t *gr2b = DCGM("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "GPU-2", "exported_namespace",
                                   "team-b", "exported_pod", "b-0");
    const im_labels_t *fb3 = DCGM("DCGM_FI_DEV_FB_USED", "GPU-3", "GPU_I_ID", "1", "GPU_I_PROFILE",
                                  "3g.40gb", "exported_namespace", "team-b", "exported_pod", "b-1");
    const im_labels_t *gr3 =
        DCGM("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "GPU-3", "GPU_I_ID", "1", "GPU_I_PROFILE", "3g.40gb",
             "exported_namespace", "team-b", "exported_pod", "b-1");
    const im_labels_t *fb4 = DCGM("DCGM_FI_DEV_FB_USED", "GPU-4", "gpu", "3");
    const im_labels_t *gr4 = DCGM("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "GPU-4", "gpu", "3");
    const im_labels_t *tv =
        L("__name__", "vllm:generation_tokens_total", "job", "vllm", "namespace", "team-a", "pod",
          "a-0", "model_name", "m1", "engine", "0");
    const im_labels_t *tp = L("__name__", "vllm:prompt_tokens_total", "job", "vllm", "namespace",
                              "team-a", "pod", "a-0", "model_name", "m1", "engine", "0");
    const im_labels_t *ts = L("__name__", "sglang:generation_tokens_total", "job", "sglang",
                              "namespace", "team-b", "pod", "b-0", "model_name", "m2");
    for (int i = -4; i <= N + 4; i++) {
        put(a, res_a, i, i <= N / 2 ? 2 : 4); /* the value over the step before it */
        put(a, res_b, i, 7);
        put(a, res_o, i, 1);
        put(a, cpu, i, 96);
        put(a, fb1, i, 1000);
        put(a, gr1, i, 0.5);
        put(a, en1, i, i < 130 ? 1e6 * (i + 10) : 1e6 * (i - 129)); /* resets at i = 130 */
        put(a, fb2a, i, 10);
        put(a, fb2b, i, 10);
        put(a, gr2a, i, 0.8);
        put(a, gr2b, i, 0.8);
        put(a, fb3, i, 10);
        put(a, gr3, i, 1);
        put(a, fb4, i, 0);
        put(a, gr4, i, 0);
        put(a, tv, i, 100.0 * (i + 4));
        put(a, tp, i, 1000.0 * (i + 4));
        put(a, ts, i, 50.0 * (i + 4));
    }
    assert_int_equal(tsdb_appender_commit(a, NULL), IM_OK);
    const im_labels_t *all[] = {res_a, res_b, res_o, cpu, fb1, gr1, en1, fb2a, fb2b,
                                gr2a,  gr2b,  fb3,   gr3, fb4, gr4, tv,  tp,   ts};
    for (size_t i = 0; i < IM_ARRAY_LEN(all); i++) ls[n++] = all[i];
    for (size_t i = 0; i < n; i++) im_labels_unref(ls[i]);
}

static scrape_config_t *config(const char *yaml)
{
    scrape_config_t *c = NULL;
    im_err_t err;
    im_err_clear(&err);
    im_rc rc = scrape_config_parse(yaml, strlen(yaml), "t.yml", &c, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, IM_OK);
    return c;
}

static const char *k_prices = "llm:\n"
                              "  cost:\n"
                              "    prices:\n"
                              "      - flavor: h100\n"
                              "        on_demand: 4\n"
                              "      - flavor: a100-mig\n"
                              "        on_demand: 2\n"
                              "    energy_price_per_kwh: 0.3\n"
                              "    teams:\n"
                              "      team-a: alpha\n"
                              "      team-b: beta\n";

static const llm_cost_row_t *row(const llm_cost_report_t *r, const char *g)
{
    for (size_t i = 0; i < r->nrows; i++)
        if (strcmp(r->rows[i].group, g) == 0) return &r->rows[i];
    fail_msg("no row %s", g);
    return NULL;
}

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-9 * (1 + fabs((double)(b))))

static void compute(const scrape_config_t *c, llm_cost_by_t by, const char *group,
                    llm_cost_report_t *r, im_rc want)
{
    llm_cost_opts_t o = {.from_ms = T0,
                         .to_ms = T0 + N * STEP,
                         .step_ms = STEP,
                         .by = by,
                         .cfg = c ? &c->llm.cost : NULL,
                         .group = group};
    im_err_t err;
    im_err_clear(&err);
    im_rc rc = llm_cost_compute(g_b, &o, r, &err);
    if (rc != want) fprintf(stderr, "compute: %s\n", err.msg);
    assert_int_equal(rc, want);
}

static void test_by_team(void **st)
{
    (void)st;
    scrape_config_t *c = config(k_prices);
    llm_cost_report_t r;
    compute(c, LLM_COST_BY_TEAM, NULL, &r, IM_OK);
    assert_string_equal(r.busy_source, "DCGM_FI_PROF_GR_ENGINE_ACTIVE");
    assert_int_equal(r.nrows, 2);
    const llm_cost_row_t *a = row(&r, "alpha"), *b = row(&r, "beta");
    /* reserved: 2 GPUs for 30 min then 4 for 30 min; beta 7 x 1g.10gb (1/7) for 1 h */
    NEAR(a->f[LLM_COST_RESERVED], 3);
    NEAR(b->f[LLM_COST_RESERVED], 1);
    /* allocated: GPU-1 whole + half of GPU-2; beta half of GPU-2 + 3/7 of GPU-3 */
    NEAR(a->f[LLM_COST_ALLOCATED], 1.5);
    NEAR(b->f[LLM_COST_ALLOCATED], 0.5 + 3.0 / 7);
    NEAR(a->f[LLM_COST_BUSY], 0.5 + 0.4);
    NEAR(b->f[LLM_COST_BUSY], 0.4 + 3.0 / 7);
    NEAR(a->f[LLM_COST_IDLE], 3 - 0.9);
    /* cost: reserved x flavor price; idle share of it */
    NEAR(a->f[LLM_COST_COST], 12);
    NEAR(a->f[LLM_COST_IDLE_COST], 12 * 2.1 / 3);
    NEAR(b->f[LLM_COST_COST], 2);
    assert_string_equal(a->basis, "reserved");
    /* energy: 240 steps of 1e6 mJ, the reset included */
    NEAR(a->f[LLM_COST_ENERGY_KWH], 240e6 / 3.6e9);
    NEAR(a->f[LLM_COST_ENERGY_COST], 240e6 / 3.6e9 * 0.3);
    assert_true(isnan(b->f[LLM_COST_ENERGY_KWH]) == false);
    NEAR(b->f[LLM_COST_ENERGY_KWH], 0);
    /* tokens: 240 steps of 100 (vLLM) and 50 (SGLang) */
    NEAR(a->f[LLM_COST_OUTPUT_TOKENS], 24000);
    NEAR(a->f[LLM_COST_INPUT_TOKENS], 240000);
    NEAR(b->f[LLM_COST_OUTPUT_TOKENS], 12000);
    assert_true(isnan(b->f[LLM_COST_INPUT_TOKENS]) == false);
    NEAR(a->f[LLM_COST_TOKENS_PER_GPU_HOUR], 24000.0 / 3);
    NEAR(a->f[LLM_COST_PER_M_OUTPUT], 12.0 / 24000 * 1e6);
    /* not a cluster-queue report: no borrowing figures */
    assert_true(isnan(a->f[LLM_COST_BORROWED]));
    /* unattributed: GPU-4 for the hour; the orphan namespace's reservation */
    NEAR(r.un.gpu_hours_no_pod, 1);
    NEAR(r.un.gpu_hours_busy_no_pod, 0);
    NEAR(r.un.gpu_hours_reserved_no_group, 1);
    bool orphan = false;
    for (size_t i = 0; i < r.un.nnames; i++) orphan |= strstr(r.un.names[i], "orphan") != NULL;
    assert_true(orphan);
    NEAR(r.total.f[LLM_COST_COST], 14);
    assert_false(r.missing_price);
    /* JSON: null, never 0, for what cannot be had */
    im_buf_t j;
    im_buf_init(&j, 0);
    llm_cost_report_json(&r, &j);
    assert_non_null(strstr(j.data, "\"gpu_hours_borrowed\":null"));
    assert_non_null(strstr(j.data, "\"group\":\"alpha\",\"gpu_hours_reserved\":3,"));
    assert_non_null(strstr(j.data, "\"period\":{\"from\":\"1970-01-12T13:46:40Z\""));
    im_buf_reset(&j);
    llm_cost_report_csv(&r, &j);
    assert_non_null(strstr(j.data, "BilledCost,EffectiveCost,ListCost"));
    assert_non_null(strstr(j.data, ",Usage,"));
    im_buf_free(&j);
    llm_cost_report_free(&r);
    scrape_config_free(c);
}

static void test_other_groupings(void **st)
{
    (void)st;
    scrape_config_t *c = config(k_prices);
    llm_cost_report_t r;
    compute(c, LLM_COST_BY_MODEL, NULL, &r, IM_OK);
    const llm_cost_row_t *m1 = row(&r, "m1"), *m2 = row(&r, "m2");
    assert_true(isnan(m1->f[LLM_COST_RESERVED])); /* Kueue knows no models */
    NEAR(m1->f[LLM_COST_ALLOCATED], 1);           /* pod a-0 */
    NEAR(m2->f[LLM_COST_ALLOCATED], 0.5);         /* pod b-0 */
    NEAR(m1->f[LLM_COST_OUTPUT_TOKENS], 24000);
    assert_string_equal(m1->basis, "allocated");
    /* no price for the GPU model: cost null, and said */
    assert_true(isnan(m1->f[LLM_COST_COST]));
    assert_true(r.missing_price);
    llm_cost_report_free(&r);

    compute(c, LLM_COST_BY_FLAVOR, NULL, &r, IM_OK);
    NEAR(row(&r, "h100")->f[LLM_COST_RESERVED], 3 + 1);
    NEAR(row(&r, "h100")->f[LLM_COST_COST], 16);
    assert_true(isnan(row(&r, "h100")->f[LLM_COST_OUTPUT_TOKENS]));
    llm_cost_report_free(&r);

    compute(c, LLM_COST_BY_NAMESPACE, NULL, &r, IM_OK);
    assert_int_equal(r.nrows, 3);
    NEAR(row(&r, "orphan")->f[LLM_COST_RESERVED], 1);
    NEAR(row(&r, "team-a")->f[LLM_COST_ALLOCATED], 1.5);
    llm_cost_report_free(&r);
    scrape_config_free(c);
}

static void test_bad_input(void **st)
{
    (void)st;
    /* a missing price: that cost is null, the others are not */
    scrape_config_t *c = config("llm:\n  cost:\n    prices:\n      - flavor: h100\n"
                                "        on_demand: 4\n");
    llm_cost_report_t r;
    compute(c, LLM_COST_BY_TEAM, NULL, &r, IM_OK);
    assert_true(r.missing_price);
    assert_true(isnan(row(&r, "team-b")->f[LLM_COST_COST]));
    assert_true(isnan(row(&r, "team-b")->f[LLM_COST_IDLE_COST]));
    NEAR(row(&r, "team-a")->f[LLM_COST_COST], 12);
    assert_true(isnan(r.total.f[LLM_COST_COST]));
    bool said = false;
    for (size_t i = 0; i < r.nproblems; i++)
        said |= strstr(r.problems[i], "\"a100-mig\"") && strstr(r.problems[i], "llm.cost.prices");
    assert_true(said);
    llm_cost_report_free(&r);
    /* an unknown team: an error naming the ones there are */
    llm_cost_opts_t o = {.from_ms = T0,
                         .to_ms = T0 + N * STEP,
                         .step_ms = STEP,
                         .cfg = &c->llm.cost,
                         .group = "gamma"};
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(llm_cost_compute(g_b, &o, &r, &err), IM_ENOTFOUND);
    assert_non_null(strstr(err.msg, "gamma"));
    assert_non_null(strstr(err.msg, "team-a, team-b"));
    llm_cost_report_free(&r);
    o.group = "team-a";
    assert_int_equal(llm_cost_compute(g_b, &o, &r, &err), IM_OK);
    assert_int_equal(r.nrows, 1);
    llm_cost_report_free(&r);
    /* a period with no data */
    o.group = NULL;
    o.from_ms = 1000;
    o.to_ms = 3600 * 1000;
    im_err_clear(&err);
    assert_int_equal(llm_cost_compute(g_b, &o, &r, &err), IM_ENOTFOUND);
    assert_non_null(strstr(err.msg, "no data between 1970-01-01T00:00:01Z"));
    llm_cost_report_free(&r);
    o.to_ms = o.from_ms;
    assert_int_equal(llm_cost_compute(g_b, &o, &r, &err), IM_EINVAL);
    llm_cost_report_free(&r);
    scrape_config_free(c);
}

/* The period is (from, to]: sample i stands for the step before it, so
 * (T0, T0 + N/2 S] holds samples 1..N/2 (reservation 2), the next half
 * samples N/2+1..N (4), and a one-step period exactly one sample. Counters:
 * (T0, T0 + S] is one difference of 100 tokens. */
static void test_period(void **st)
{
    (void)st;
    scrape_config_t *c = config(k_prices);
    struct {
        int64_t from, to;
        double reserved, tokens;
    } cases[] = {
        {T0, T0 + N / 2 * STEP, 2 * 0.5, 100.0 * N / 2},
        {T0 + N / 2 * STEP, T0 + N * STEP, 4 * 0.5, 100.0 * N / 2},
        {T0 + (N / 2 - 1) * STEP, T0 + (N / 2 + 1) * STEP, (2 + 4) * STEP / 3.6e6, 200},
        {T0, T0 + STEP, 2 * STEP / 3.6e6, 100},
        {T0 + N * STEP, T0 + (N + 1) * STEP, 4 * STEP / 3.6e6, 100},
    };
    for (size_t k = 0; k < IM_ARRAY_LEN(cases); k++) {
        llm_cost_opts_t o = {.from_ms = cases[k].from,
                             .to_ms = cases[k].to,
                             .step_ms = STEP,
                             .by = LLM_COST_BY_TEAM,
                             .cfg = &c->llm.cost};
        im_err_t err;
        im_err_clear(&err);
        llm_cost_report_t r;
        assert_int_equal(llm_cost_compute(g_b, &o, &r, &err), IM_OK);
        NEAR(row(&r, "alpha")->f[LLM_COST_RESERVED], cases[k].reserved);
        NEAR(row(&r, "alpha")->f[LLM_COST_OUTPUT_TOKENS], cases[k].tokens);
        llm_cost_report_free(&r);
    }
    scrape_config_free(c);
}

static void test_shares(void **st)
{
    (void)st;
    NEAR(llm_cost_gpu_share("nvidia.com/gpu"), 1);
    NEAR(llm_cost_gpu_share(""), 1);
    NEAR(llm_cost_gpu_share("1g.10gb"), 1.0 / 7);
    NEAR(llm_cost_gpu_share("nvidia.com/mig-3g.40gb"), 3.0 / 7);
    NEAR(llm_cost_gpu_share("7g.80gb"), 1);
    NEAR(llm_cost_gpu_share("1g.10gb+me"), 1.0 / 7);
    NEAR(llm_cost_gpu_share("1c.3g.40gb"), 1.0 / 7);
    NEAR(llm_cost_gpu_share("2g.12gb"), 2.0 / 4); /* A30 */
    assert_true(isnan(llm_cost_gpu_share("cpu")));
    assert_true(isnan(llm_cost_gpu_share("9g.90gb")));
    assert_true(isnan(llm_cost_gpu_share("nvidia.com/mig-x")));
}

static void bad_config(const char *yaml, const char *want)
{
    scrape_config_t *c = NULL;
    im_err_t err;
    im_err_clear(&err);
    assert_int_not_equal(scrape_config_parse(yaml, strlen(yaml), "t.yml", &c, &err), IM_OK);
    char eb[600];
    const char *m = im_err_format(&err, eb, sizeof eb);
    if (!strstr(m, want)) fail_msg("%s: want \"%s\"", m, want);
}

static void test_config(void **st)
{
    (void)st;
    const char *head = "llm:\n  cost:\n";
    char y[600];
#define BAD(body, want)                                                                            \
    do {                                                                                           \
        snprintf(y, sizeof y, "%s%s", head, body);                                                 \
        bad_config(y, want);                                                                       \
    } while (0)
    BAD("    price: 1\n", "t.yml:3:5: field price not found in llm.cost");
    BAD("    pricing: cheap\n", "3:14: llm.cost.pricing must be one of on_demand, reserved, spot");
    BAD("    prices:\n      - on_demand: 1\n", "4:9: llm.cost.prices entry needs a flavor");
    BAD("    prices:\n      - flavor: x\n", "4:9: llm.cost.prices entry needs a price");
    BAD("    prices:\n      - {flavor: x, spot: -1}\n",
        "llm.cost.prices.spot must be a price >= 0");
    BAD("    prices:\n      - {flavor: x, spot: 1}\n      - {flavor: x, spot: 2}\n",
        "5:9: llm.cost.prices: flavor \"x\" is priced twice");
    BAD("    prices: {flavor: x}\n", "llm.cost.prices must be a list");
    BAD("    team_label: a-b\n", "llm.cost.team_label \"a-b\" is not a label name");
    BAD("    teams: {a: ''}\n", "llm.cost.teams maps a namespace to a team");
    BAD("    energy_price_per_kwh: .nan\n", "energy_price_per_kwh must be a price");
    BAD("    rules: maybe\n", "3:12");
    /* a good one dumps and reads back the same */
    scrape_config_t *c = config("llm:\n  cost:\n    currency: EUR\n    pricing: spot\n"
                                "    prices:\n      - flavor: \"h\\\"1\"\n        gpu_model: G\n"
                                "        spot: 0.1\n        reserved: 3\n"
                                "    energy_price_per_kwh: 0.25\n    team_label: team\n"
                                "    teams: {ns: t}\n    rules: true\n");
    const cfg_llm_cost_t *k = &c->llm.cost;
    assert_true(k->rules);
    assert_int_equal(k->pricing, CFG_COST_SPOT);
    NEAR(cfg_llm_cost_price(k, "h\"1", true), 0.1);
    NEAR(cfg_llm_cost_price(k, "G", false), 0.1);
    assert_true(isnan(cfg_llm_cost_price(k, "other", true)));
    assert_string_equal(cfg_llm_cost_team(k, "ns"), "t");
    im_buf_t d1, d2;
    im_buf_init(&d1, 0);
    im_buf_init(&d2, 0);
    assert_int_equal(scrape_config_dump(c, &d1), IM_OK);
    scrape_config_t *c2 = config(d1.data);
    assert_int_equal(scrape_config_dump(c2, &d2), IM_OK);
    assert_string_equal(d1.data, d2.data);
    assert_non_null(strstr(d1.data, "  cost:\n    currency: \"EUR\"\n    pricing: spot\n"));
    im_buf_free(&d1);
    im_buf_free(&d2);
    scrape_config_free(c2);
    scrape_config_free(c);
}

static void test_rules(void **st)
{
    (void)st;
    scrape_config_t *c = config(k_prices);
    im_buf_t b;
    im_buf_init(&b, 0);
    llm_cost_rules_yaml(&c->llm.cost, &b);
    rules_errs_t errs = {0};
    rules_file_t *f = NULL;
    im_rc rc = rules_file_parse("cost.yml", b.data, b.len, &f, &errs);
    for (size_t i = 0; i < errs.n; i++) fprintf(stderr, "%s\n", errs.v[i]);
    assert_int_equal(rc, IM_OK);
    rules_file_free(f);
    rules_errs_free(&errs);
    assert_non_null(strstr(b.data, "record: namespace:infermon_gpu_cost_per_hour:sum"));
    assert_non_null(strstr(b.data, "{flavor=\"a100-mig\"} * 2"));
    assert_non_null(strstr(b.data, "sglang:generation_tokens_total"));
    assert_null(strstr(b.data, "dynamo_frontend")); /* routers are not counted twice */
    /* the recorded figures evaluate over the store: alpha's reservation at T0 */
    promql_result_t res;
    assert_int_equal(query_instant(g_b,
                                   "sum by (namespace, flavor) (label_replace("
                                   "kueue_local_queue_resource_reservation{resource=\"nvidia.com/"
                                   "gpu\",exported_namespace=\"team-a\"}, \"namespace\", \"$1\", "
                                   "\"exported_namespace\", \"(.+)\"))",
                                   T0, &res, NULL),
                     IM_OK);
    assert_int_equal(res.nseries, 1);
    NEAR(res.series[0].points[0].v, 2);
    promql_result_free(&res);
    im_buf_free(&b);
    scrape_config_free(c);
}

int main(void)
{
    tsdb_opts_t to = {.dir = NULL, .no_background = true, .max_future_ms = -1};
    if (tsdb_open(&to, &g_db, NULL) != IM_OK) return 1;
    g_eng = promql_engine_new(NULL);
    g_b = query_local_new(tsdb_storage(g_db), g_eng);
    fill();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_team),   cmocka_unit_test(test_other_groupings),
        cmocka_unit_test(test_bad_input), cmocka_unit_test(test_shares),
        cmocka_unit_test(test_period),    cmocka_unit_test(test_config),
        cmocka_unit_test(test_rules),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    query_backend_free(g_b);
    promql_engine_free(g_eng);
    tsdb_close(g_db);
    return rc;
}

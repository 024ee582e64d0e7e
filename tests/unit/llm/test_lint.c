/* test_lint.c — every check of `infermon lint` on small queries, against a
 * small exposition (the live case) and against the catalog; plus the walkers
 * (rule YAML, dashboard JSON with template variables), --fix and the outputs. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "llm/lint.h"

static const char expo[] =
    "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
    "# TYPE vllm:num_requests_running gauge\n"
    "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 3.0\n"
    "# TYPE vllm:kv_cache_usage_perc gauge\n"
    "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.5\n"
    "# TYPE vllm:num_preemptions counter\n"
    "vllm:num_preemptions_total{engine=\"0\",model_name=\"m\"} 2.0\n"
    "# TYPE vllm:prompt_tokens counter\n"
    "vllm:prompt_tokens_total{engine=\"0\",model_name=\"m\"} 2.0\n"
    "# TYPE vllm:prefix_cache_hits counter\n"
    "vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"m\"} 2.0\n"
    "# TYPE vllm:prefix_cache_queries counter\n"
    "vllm:prefix_cache_queries_total{engine=\"0\",model_name=\"m\"} 2.0\n"
    "# TYPE vllm:request_success counter\n"
    "vllm:request_success_total{engine=\"0\",finished_reason=\"stop\",model_name=\"m\"} 2.0\n"
    "vllm:request_success_total{engine=\"0\",finished_reason=\"length\",model_name=\"m\"} 2.0\n"
    "# TYPE vllm:num_requests_waiting_by_reason gauge\n"
    "vllm:num_requests_waiting_by_reason{engine=\"0\",model_name=\"m\",reason=\"capacity\"} 1.0\n"
    "vllm:num_requests_waiting_by_reason{engine=\"0\",model_name=\"m\",reason=\"deferred\"} 0.0\n"
    "# TYPE vllm:time_to_first_token_seconds histogram\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.5\",model_name=\"m\"} 1.0\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"1.0\",model_name=\"m\"} 1.0\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"2.5\",model_name=\"m\"} 1.0\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"5.0\",model_name=\"m\"} 1.0\n"
    "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"+Inf\",model_name=\"m\"} 1.0\n"
    "vllm:time_to_first_token_seconds_count{engine=\"0\",model_name=\"m\"} 1.0\n"
    "vllm:time_to_first_token_seconds_sum{engine=\"0\",model_name=\"m\"} 0.3\n"
    "# TYPE vllm:e2e_request_latency_seconds histogram\n"
    "vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"1.0\",model_name=\"m\"} 1.0\n"
    "vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"+Inf\",model_name=\"m\"} 1.0\n"
    "vllm:e2e_request_latency_seconds_count{engine=\"0\",model_name=\"m\"} 1.0\n"
    "vllm:e2e_request_latency_seconds_sum{engine=\"0\",model_name=\"m\"} 0.3\n"
    "# TYPE ray_vllm:num_requests_waiting gauge\n"
    "ray_vllm:num_requests_waiting{engine=\"0\",model_name=\"m\"} 1.0\n"
    "# TYPE http_requests counter\n"
    "http_requests_total{handler=\"/v1/chat\",method=\"POST\",status=\"2xx\"} 3.0\n"
    "# TYPE vllm:engine_sleep_state gauge\n"
    "vllm:engine_sleep_state{engine=\"0\",exported_pod=\"p1\",model_name=\"m\",sleep_state="
    "\"awake\"} 1.0\n";

typedef struct tcase {
    const char *query;
    const char *checks; /* space-separated ids expected, in order; "" = clean */
    bool alert;
    int64_t for_ms;
} tcase_t;

static void run_cases(lint_names_t *names, const tcase_t *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        lint_run_t *r = lint_run_new(names, NULL);
        lint_where_t w;
        memset(&w, 0, sizeof(w));
        w.file = "t";
        w.path = "q";
        w.is_alert = cases[i].alert;
        w.for_ms = cases[i].for_ms;
        lint_query(r, &w, cases[i].query, strlen(cases[i].query));
        const lint_finding_t *fs;
        size_t nf = lint_run_findings(r, &fs);
        char got[1024] = "";
        size_t gl = 0;
        for (size_t k = 0; k < nf; k++)
            gl += (size_t)snprintf(got + gl, sizeof got - gl, "%s%s", k ? " " : "", fs[k].check);
        if (strcmp(got, cases[i].checks) != 0) {
            fprintf(stderr, "query: %s\n  want: [%s]\n  got:  [%s]\n", cases[i].query,
                    cases[i].checks, got);
            for (size_t k = 0; k < nf; k++)
                fprintf(stderr, "    %s: %s\n", fs[k].check, fs[k].message);
        }
        assert_string_equal(got, cases[i].checks);
        lint_run_free(r);
    }
}

static lint_names_t *live_names(void)
{
    lint_names_t *n = lint_names_new();
    im_err_t err;
    assert_int_equal(lint_names_add_exposition(n, expo, sizeof expo - 1, "test", &err), IM_OK);
    return n;
}

static void test_live_checks(void **state)
{
    (void)state;
    static const tcase_t cases[] = {
        {"sum by (model_name) (vllm:num_requests_running)", "", false, 0},
        {"histogram_quantile(0.95, sum by (le, model_name) "
         "(rate(vllm:time_to_first_token_seconds_bucket[5m])))",
         "", false, 0},
        {"sum(rate(vllm:prefix_cache_hits_total[5m])) / "
         "sum(rate(vllm:prefix_cache_queries_total[5m]))",
         "", false, 0},
        {"sum by (", "syntax", false, 0},
        {"vllm:nonexistent_metric", "unknown-metric", false, 0},
        {"max(vllm:gpu_cache_usage_perc)", "removed-metric", false, 0},
        {"rate(vllm:num_preemptions[5m])", "missing-total", false, 0},
        {"histogram_quantile(0.9, sum by (le) (rate(vllm:time_to_first_token_seconds[5m])))",
         "histogram-suffix", false, 0},
        {"rate(vllm:time_to_first_token_seconds_bucket[5m])", "histogram-suffix", false, 0},
        {"rate(vllm:num_requests_running[5m])", "rate-on-gauge", false, 0},
        {"sum(vllm:num_preemptions_total) > 10", "counter-without-rate", false, 0},
        {"vllm:num_preemptions_total > 0", "", false, 0},
        {"histogram_quantile(0.9, sum by (model_name) "
         "(rate(vllm:time_to_first_token_seconds_bucket[5m])))",
         "quantile-without-le", false, 0},
        {"histogram_quantile(0.9, rate(vllm:time_to_first_token_seconds_bucket[5m]))",
         "quantile-per-series", false, 0},
        {"histogram_quantile(1.5, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[5m])))",
         "quantile-range", false, 0},
        {"histogram_quantile(0.95, sum by (le) "
         "(rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 2",
         "bucket-gap-threshold", true, 600000},
        {"histogram_quantile(0.95, sum by (le) "
         "(rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 2.5",
         "", true, 600000},
        {"histogram_quantile(0.95, sum by (le) "
         "(rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 2.5",
         "short-for", true, 60000},
        {"sum(rate(vllm:num_preemptions_total[10m])) > 0", "", true, 300000},
        /* Multiwindow burn-rate alerts and spike alerts fire fast by design. */
        {"histogram_quantile(0.99, sum by (le) "
         "(rate(vllm:time_to_first_token_seconds_bucket[1h]))) "
         "> 2.5 and histogram_quantile(0.99, sum by (le) "
         "(rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 2.5",
         "", true, 60000},
        {"deriv(vllm:num_requests_running[10m]) > 2", "", true, 60000},
        {"histogram_quantile(0.99, sum by (le) "
         "(rate(vllm:e2e_request_latency_seconds_bucket[5m]))) > 5",
         "top-bucket", true, 600000},
        {"vllm:num_requests_running{model_name=\"m\",finished_reason=\"stop\"}", "unknown-label",
         false, 0},
        {"sum by (model) (vllm:num_requests_running)", "unknown-label", false, 0},
        {"vllm:num_requests_waiting_by_reason{reason=\"memory\"}", "matcher-never-matches", false,
         0},
        {"vllm:num_requests_waiting_by_reason{reason=~\"cap.*\"}", "", false, 0},
        {"vllm:request_success_total{finished_reason=\"error\"}", "", false, 0},
        {"http_requests_total{status=\"5xx\"}", "", false, 0},
        {"sum(rate(vllm:prefix_cache_hits_total[5m])) / sum(rate(vllm:request_success_total[5m]))",
         "token-vs-request", false, 0},
        {"rate(vllm:prompt_tokens_total[5m]) / rate(vllm:request_success_total[5m])", "", false, 0},
        {"rate(vllm:e2e_request_latency_seconds_sum[5m])", "sum-rate-as-latency", false, 0},
        {"rate(vllm:e2e_request_latency_seconds_sum[5m]) / "
         "rate(vllm:e2e_request_latency_seconds_count[5m])",
         "", false, 0},
        {"sum(vllm:kv_cache_usage_perc)", "sum-of-ratio-gauge", false, 0},
        {"sum by (instance) (vllm:kv_cache_usage_perc)", "", false, 0},
        {"rate(sum(vllm:num_preemptions_total)[5m:])", "rate-of-sum", false, 0},
        {"rate(sum(vllm:num_preemptions_total))", "rate-of-sum", false, 0},
        {"vllm:num_requests_waiting", "prefix-mismatch", false, 0},
        {"vllm:engine_sleep_state{pod=\"p1\"}", "prefix-mismatch", false, 0},
        /* A name of an exporter none of the sources is: info, naming it (issue 15). */
        {"DCGM_FI_DEV_GPU_UTIL", "other-exporter", false, 0},
        {"vllm:current_qps", "other-exporter", false, 0},
        {"sglang:num_running_reqs", "other-exporter", false, 0},
        {"dcgm_gpu_utilization", "removed-metric", false, 0},
        {"dcgm_fi_dev_gpu_util", "unknown-metric", false, 0},
        {"vllm:prefix_cache_hits_total / vllm:prefix_cache_queries_total",
         "counter-ratio-without-rate", false, 0},
        {"1 - avg(rate(vllm:request_success_total[5m]) > 0)", "negative-by-construction", false, 0},
        {"1 - max(vllm:kv_cache_usage_perc)", "", false, 0},
        {"vllm:num_requests_running{pod!=\"\",finished_reason!=\"\"}", "unknown-label", false, 0},
        {"DCGM_FI_PROF_SM_ACTIVE", "conditional-metric", false, 0},
        {"vllm:spec_decode_num_draft_tokens_total", "conditional-metric", false, 0},
        {"up == 0", "", false, 0},
        {"sum(ALERTS{alertstate=\"firing\"})", "", false, 0},
        {"job:vllm_tokens:rate5m > 0", "unknown-metric", false, 0},
        {"mysql_up", "other-exporter", false, 0},
        {"vllm:num_requests_runing", "unknown-metric", false, 0},
        {"vllm:spec_decode_num_drafts_total_x", "unknown-metric", false, 0},
        {"vllm:cache_config", "removed-metric", false, 0},
    };
    lint_names_t *n = live_names();
    run_cases(n, cases, IM_ARRAY_LEN(cases));
    lint_names_free(n);
}

static void test_range_too_short(void **state)
{
    (void)state;
    static const tcase_t cases[] = {
        {"rate(vllm:num_preemptions_total[30s])", "range-too-short", false, 0},
        {"rate(vllm:num_preemptions_total[1m])", "", false, 0},
    };
    lint_names_t *n = live_names();
    lint_names_set_scrape_interval(n, 30000);
    run_cases(n, cases, IM_ARRAY_LEN(cases));
    lint_names_free(n);
}

static void test_dcgm_labels(void **state)
{
    (void)state;
    static const char dcgm[] =
        "# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"
        "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",Hostname=\"n1\",namespace=\"a\",pod=\"p\"} 40\n";
    static const tcase_t cases[] = {
        {"max by (Hostname) (DCGM_FI_DEV_GPU_TEMP)", "", false, 0},
        {"max by (hostname) (DCGM_FI_DEV_GPU_TEMP)", "unknown-label", false, 0},
        {"max by (node, cluster) (DCGM_FI_DEV_GPU_TEMP)", "", false, 0},
        {"DCGM_FI_DEV_GPU_TEMP{gpu=\"9\"}", "matcher-never-matches", false, 0},
        {"DCGM_FI_PROF_SM_ACTIVE", "conditional-metric", false, 0},
    };
    lint_names_t *n = lint_names_new();
    assert_int_equal(lint_names_add_exposition(n, dcgm, sizeof dcgm - 1, "dcgm", NULL), IM_OK);
    run_cases(n, cases, IM_ARRAY_LEN(cases));
    lint_names_free(n);
}

static void test_catalog_checks(void **state)
{
    (void)state;
    static const tcase_t cases[] = {
        {"sum by (model_name) (vllm:num_requests_running)", "", false, 0},
        {"max(vllm:gpu_cache_usage_perc)", "removed-metric", false, 0},
        {"sum by (namespace) (kueue_quota_reserved_resources{resource=\"nvidia.com/gpu\"})",
         "unknown-metric", false, 0},
        {"my_own_exporter_metric", "", false, 0},
        {"kube_namespace_labels{label_team!=\"\"}", "", false, 0},
        {"kueue_local_queue_resource_reservation", "conditional-metric", false, 0},
    };
    lint_names_t *n = lint_names_new();
    llm_version_t v;
    llm_version_parse(LLM_VLLM_NEWEST, strlen(LLM_VLLM_NEWEST), &v);
    lint_names_use_catalog(n, &v);
    run_cases(n, cases, IM_ARRAY_LEN(cases));
    /* The kueue suggestion is the local-queue reservation, not the workloads counter. */
    lint_run_t *r = lint_run_new(n, NULL);
    lint_where_t w;
    memset(&w, 0, sizeof(w));
    const char *q =
        "sum by (namespace) (kueue_quota_reserved_resources{resource=\"nvidia.com/gpu\"})";
    lint_query(r, &w, q, strlen(q));
    const lint_finding_t *fs;
    assert_int_equal(lint_run_findings(r, &fs), 1);
    assert_non_null(fs[0].fix);
    /* Both per-queue families are named, the team's LocalQueue first under
     * by (namespace), and the cost report is pointed at. */
    const char *lq = strstr(fs[0].fix, "kueue_local_queue_resource_reservation");
    const char *cq = strstr(fs[0].fix, "kueue_cluster_queue_resource_reservation");
    assert_non_null(lq);
    assert_non_null(cq);
    assert_true(lq < cq);
    assert_non_null(strstr(fs[0].fix, "infermon cost"));
    assert_non_null(strstr(fs[0].message, "not a Kueue metric"));
    lint_run_free(r);
    /* By cluster_queue, the ClusterQueue family comes first. */
    r = lint_run_new(n, NULL);
    q = "sum by (cluster_queue) (kueue_quota_reserved_resources)";
    lint_query(r, &w, q, strlen(q));
    assert_int_equal(lint_run_findings(r, &fs), 1);
    assert_true(strstr(fs[0].fix, "kueue_cluster_queue_resource_reservation") <
                strstr(fs[0].fix, "kueue_local_queue_resource_reservation"));
    lint_run_free(r);
    /* Deprecated at an older version. */
    lint_names_free(n);
    n = lint_names_new();
    llm_version_parse("0.10.0", 6, &v);
    lint_names_use_catalog(n, &v);
    static const tcase_t old[] = {
        {"max(vllm:gpu_cache_usage_perc)", "deprecated-metric", false, 0},
        {"max(vllm:num_requests_waiting_by_reason)", "unknown-metric", false, 0},
    };
    run_cases(n, old, IM_ARRAY_LEN(old));
    lint_names_free(n);
}

static void test_dashboard_and_fix(void **state)
{
    (void)state;
    static const char dash[] =
        "{\"templating\":{\"list\":[{\"name\":\"model\",\"type\":\"query\",\"current\":{\"value\":"
        "\"m\"}}]},\n"
        " \"panels\":[\n"
        "  "
        "{\"title\":\"KV\",\"type\":\"timeseries\",\"targets\":[{\"expr\":\"max(vllm:gpu_cache_"
        "usage_perc{model_name=\\\"$model\\\"})\"}]},\n"
        "  {\"title\":\"row\",\"type\":\"row\",\"collapsed\":true,\"panels\":[\n"
        "    "
        "{\"title\":\"P\",\"targets\":[{\"expr\":\"sum(rate(vllm:prompt_tokens[$__rate_interval]))"
        "\"}]}]},\n"
        "  {\"title\":\"lib\",\"libraryPanel\":{\"uid\":\"u\",\"name\":\"n\"}},\n"
        "  {\"title\":\"x\",\"targets\":[{\"expr\":\"sum by ($model) (vllm:num_requests_running) > "
        "${thr:raw}\"}]}\n"
        " ]}\n";
    lint_names_t *n = live_names();
    lint_run_t *r = lint_run_new(n, NULL);
    assert_int_equal(lint_dashboard(r, "d.json", dash, sizeof dash - 1), IM_OK);
    const lint_finding_t *fs;
    size_t nf = lint_run_findings(r, &fs);
    assert_int_equal(nf, 3);
    assert_string_equal(fs[0].check, "removed-metric");
    assert_string_equal(fs[0].path, "panels[0] \"KV\" targets[0]");
    assert_string_equal(fs[1].check, "missing-total");
    assert_string_equal(fs[1].path, "panels[1] \"row\" panels[0] \"P\" targets[0]");
    assert_string_equal(fs[2].check, "library-panel");
    im_buf_t out;
    im_buf_init(&out, 0);
    size_t nfixed = 0;
    assert_int_equal(
        lint_fix_apply(r, "d.json", LINT_INPUT_DASHBOARD, dash, sizeof dash - 1, &out, &nfixed),
        IM_OK);
    assert_int_equal(nfixed, 2);
    assert_non_null(strstr(out.data, "max(vllm:kv_cache_usage_perc{model_name=\\\"$model\\\"})"));
    assert_non_null(strstr(out.data, "sum(rate(vllm:prompt_tokens_total[$__rate_interval]))"));
    /* Re-lint the fixed text: only the library panel note is left. */
    lint_run_t *r2 = lint_run_new(n, NULL);
    assert_int_equal(lint_dashboard(r2, "d.json", out.data, out.len), IM_OK);
    assert_int_equal(lint_run_findings(r2, &fs), 1);
    lint_run_free(r2);
    im_buf_free(&out);
    lint_run_free(r);
    lint_names_free(n);
}

static void test_ignores_variable(void **state)
{
    (void)state;
    /* Three vllm:* selectors filter model_name by $model; the fourth does not
     * (warned); one breaks down by model_name on purpose and one is a per-pod
     * p99 joined on pod (neither warned; no quantile-per-series either). */
    static const char dash[] =
        "{\"panels\":[\n"
        " {\"title\":\"a\",\"targets\":[{\"expr\":\"sum(vllm:num_requests_running{model_name=~"
        "\\\"$model\\\"})\"}]},\n"
        " {\"title\":\"b\",\"targets\":[{\"expr\":\"max(vllm:kv_cache_usage_perc{model_name=~"
        "\\\"$model\\\"})\"}]},\n"
        " {\"title\":\"c\",\"targets\":[{\"expr\":\"sum(rate(vllm:num_preemptions_total{model_name="
        "~"
        "\\\"$model\\\"}[5m]))\"}]},\n"
        " {\"title\":\"d\",\"targets\":[{\"expr\":\"sum(rate(vllm:prompt_tokens_total[5m]))\"}]},\n"
        " {\"title\":\"e\",\"targets\":[{\"expr\":\"sum by (model_name) "
        "(rate(vllm:request_success_total[5m]))\"}]},\n"
        " {\"title\":\"f\",\"targets\":[{\"legendFormat\":\"{{pod}}\",\"expr\":"
        "\"histogram_quantile(0.99, rate(vllm:time_to_first_token_seconds_bucket{model_name=~"
        "\\\"$model\\\"}[5m]))\"}]}\n"
        "],\"templating\":{\"list\":[{\"name\":\"model\",\"type\":\"query\",\"query\":"
        "\"label_values(vllm:num_requests_running, model_name)\"}]}}";
    lint_names_t *n = live_names();
    lint_run_t *r = lint_run_new(n, NULL);
    assert_int_equal(lint_dashboard(r, "d.json", dash, sizeof dash - 1), IM_OK);
    const lint_finding_t *fs;
    size_t nf = lint_run_findings(r, &fs), warned = 0;
    for (size_t i = 0; i < nf; i++) {
        assert_string_not_equal(fs[i].check, "quantile-per-series");
        if (strcmp(fs[i].check, "ignores-variable") != 0) continue;
        warned++;
        assert_non_null(strstr(fs[i].path, "\"d\""));
        assert_non_null(
            strstr(fs[i].message, "vllm:prompt_tokens_total is not filtered by model_name"));
    }
    assert_int_equal(warned, 1);
    lint_run_free(r);
    lint_names_free(n);
}

static void test_fix_go_escaped_json(void **state)
{
    (void)state;
    /* Grafana's HTTP API writes > as \u003e (Go's encoder): --fix must still find it. */
    static const char dash[] = "{\"panels\":[{\"title\":\"a\",\"targets\":[{\"expr\":"
                               "\"max(vllm:gpu_cache_usage_perc) \\u003e 0.9\"}]}]}";
    lint_names_t *n = live_names();
    lint_run_t *r = lint_run_new(n, NULL);
    assert_int_equal(lint_dashboard(r, "g.json", dash, sizeof dash - 1), IM_OK);
    im_buf_t out;
    im_buf_init(&out, 0);
    size_t nfixed = 0;
    assert_int_equal(
        lint_fix_apply(r, "g.json", LINT_INPUT_DASHBOARD, dash, sizeof dash - 1, &out, &nfixed),
        IM_OK);
    assert_int_equal(nfixed, 1);
    assert_non_null(strstr(out.data, "max(vllm:kv_cache_usage_perc) \\u003e 0.9"));
    im_buf_free(&out);
    lint_run_free(r);
    lint_names_free(n);
}

static void test_rules_and_fix(void **state)
{
    (void)state;
    static const char rules[] = "# comment kept\n"
                                "groups:\n"
                                "  - name: g\n"
                                "    rules:\n"
                                "      - record: job:x:rate5m   # a record\n"
                                "        expr: sum(rate(vllm:num_preemptions[5m]))\n"
                                "      - alert: A\n"
                                "        expr: |\n"
                                "          max(vllm:gpu_cache_usage_perc) > 0.9\n"
                                "          and job:x:rate5m > 0\n"
                                "        for: 10m\n";
    lint_names_t *n = live_names();
    lint_run_t *r = lint_run_new(n, NULL);
    assert_int_equal(lint_rulefile(r, n, "r.yml", rules, sizeof rules - 1), IM_OK);
    const lint_finding_t *fs;
    size_t nf = lint_run_findings(r, &fs);
    assert_int_equal(nf, 2);
    assert_string_equal(fs[0].check, "missing-total");
    assert_int_equal(fs[0].line, 6);
    assert_int_equal(fs[0].col, 15);
    assert_string_equal(fs[1].check, "removed-metric");
    assert_int_equal(fs[1].line, 8);
    im_buf_t out;
    im_buf_init(&out, 0);
    size_t nfixed = 0;
    assert_int_equal(
        lint_fix_apply(r, "r.yml", LINT_INPUT_RULES, rules, sizeof rules - 1, &out, &nfixed),
        IM_OK);
    assert_int_equal(nfixed, 2);
    assert_non_null(strstr(out.data, "# comment kept\n"));
    assert_non_null(strstr(out.data, "- record: job:x:rate5m   # a record\n"));
    assert_non_null(strstr(out.data, "expr: sum(rate(vllm:num_preemptions_total[5m]))\n"));
    assert_non_null(strstr(out.data, "          max(vllm:kv_cache_usage_perc) > 0.9\n"));
    im_buf_t diff;
    im_buf_init(&diff, 0);
    assert_int_equal(lint_diff("r.yml", rules, sizeof rules - 1, out.data, out.len, &diff), IM_OK);
    assert_non_null(
        strstr(diff.data, "@@ -6 +6 @@\n-        expr: sum(rate(vllm:num_preemptions[5m]))\n"));
    im_buf_free(&diff);
    im_buf_free(&out);
    /* JSON output is valid and carries the schema id. */
    im_buf_t js;
    im_buf_init(&js, 0);
    assert_int_equal(lint_report(r, n, LINT_OUT_JSON, &js), IM_OK);
    assert_non_null(strstr(js.data, "\"schema\": \"infermon-lint/v1\""));
    im_buf_free(&js);
    im_buf_t gh;
    im_buf_init(&gh, 0);
    assert_int_equal(lint_report(r, n, LINT_OUT_GITHUB, &gh), IM_OK);
    assert_non_null(
        strstr(gh.data, "::error file=r.yml,line=6,col=15,title=infermon lint missing-total::"));
    im_buf_free(&gh);
    lint_run_free(r);
    lint_names_free(n);
}

static void test_inputs(void **state)
{
    (void)state;
    assert_int_equal(lint_input_detect("a.json", "", 0), LINT_INPUT_DASHBOARD);
    assert_int_equal(lint_input_detect("a.yaml", "", 0), LINT_INPUT_RULES);
    assert_int_equal(lint_input_detect("a", "  {\"panels\":[]}", 15), LINT_INPUT_DASHBOARD);
    assert_int_equal(lint_input_detect("a.txt", "up\n", 3), LINT_INPUT_TEXT);
    lint_names_t *n = live_names();
    lint_run_t *r = lint_run_new(n, NULL);
    static const char txt[] =
        "# comment\n\nvllm:num_requests_running\n  rate(vllm:num_requests_running[5m])\n";
    assert_int_equal(lint_textfile(r, "q.txt", txt, sizeof txt - 1), IM_OK);
    const lint_finding_t *fs;
    assert_int_equal(lint_run_findings(r, &fs), 1);
    assert_int_equal(fs[0].line, 4);
    assert_int_equal(fs[0].col, 3);
    assert_int_equal(lint_run_queries(r), 2);
    /* Broken inputs become findings, not crashes. */
    assert_int_equal(lint_dashboard(r, "b.json", "{\"panels\": [", 12), IM_OK);
    assert_int_equal(lint_rulefile(r, n, "b.yml", "groups: [", 9), IM_OK);
    assert_int_equal(lint_run_findings(r, &fs), 3);
    assert_string_equal(fs[1].check, "input");
    assert_string_equal(fs[2].check, "input");
    lint_run_free(r);
    lint_names_free(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live_checks),
        cmocka_unit_test(test_range_too_short),
        cmocka_unit_test(test_catalog_checks),
        cmocka_unit_test(test_dcgm_labels),
        cmocka_unit_test(test_dashboard_and_fix),
        cmocka_unit_test(test_rules_and_fix),
        cmocka_unit_test(test_fix_go_escaped_json),
        cmocka_unit_test(test_ignores_variable),
        cmocka_unit_test(test_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* builtin.c — generates the built-in LLM-serving rule file (see builtin.h):
 * recording rules for the dashboard's heavy queries (quantiles and rates per
 * model) and four symptom alerts whose thresholds come from the `llm:` config
 * section; the vLLM metric-name detection; and the generator the daemon's rule
 * runner calls. */
#include "util/base.h"

#include <stdio.h>

#include "llm/builtin.h"
#include "llm/builtin_int.h"
#include "util/fmtfloat.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/timeutil.h"

static void num(im_buf_t *b, double v)
{
    char tmp[IM_FLOAT_BUF];
    im_fmt_float_go(v, 'g', tmp, sizeof tmp);
    (void)im_buf_puts(b, tmp);
}

void llm_builtin_yaml(const llm_builtin_opts_t *o, im_buf_t *b)
{
    llm_builtin_opts_t d = {0};
    if (o) d = *o;
    if (d.ttft_p95_target_seconds <= 0) d.ttft_p95_target_seconds = 2;
    if (d.failure_ratio <= 0) d.failure_ratio = 0.05;
    if (d.queue_waiting_threshold <= 0) d.queue_waiting_threshold = 50;
    if (d.kv_cache_threshold <= 0) d.kv_cache_threshold = 0.9;
    const char *kv = d.names == LLM_NAMES_OLD   ? "vllm:gpu_cache_usage_perc"
                     : d.names == LLM_NAMES_NEW ? "vllm:kv_cache_usage_perc"
                                                : "vllm:kv_cache_usage_perc or "
                                                  "vllm:gpu_cache_usage_perc";
    if (d.no_vllm) {
        (void)im_buf_puts(b, "# infermon built-in LLM serving rules (generated; see "
                             "docs/alerting.md).\ngroups:\n");
        goto engines;
    }
    (void)im_buf_puts(b,
                      "# infermon built-in LLM serving rules (generated; see docs/alerting.md).\n"
                      "groups:\n"
                      "  - name: infermon.llm.recording\n"
                      "    interval: 30s\n"
                      "    rules:\n"
                      "      - record: model_name:vllm_ttft_seconds:p95_5m\n"
                      "        expr: histogram_quantile(0.95, sum by (le, model_name) "
                      "(rate(vllm:time_to_first_token_seconds_bucket[5m])))\n"
                      "      - record: model_name:vllm_ttft_seconds:p50_5m\n"
                      "        expr: histogram_quantile(0.5, sum by (le, model_name) "
                      "(rate(vllm:time_to_first_token_seconds_bucket[5m])))\n"
                      "      - record: model_name:vllm_e2e_latency_seconds:p95_5m\n"
                      "        expr: histogram_quantile(0.95, sum by (le, model_name) "
                      "(rate(vllm:e2e_request_latency_seconds_bucket[5m])))\n"
                      "      - record: model_name:vllm_requests_finished:rate5m\n"
                      "        expr: sum by (model_name, finished_reason) "
                      "(rate(vllm:request_success_total[5m]))\n"
                      "      - record: model_name:vllm_request_failure:ratio_5m\n"
                      "        expr: sum by (model_name) "
                      "(rate(vllm:request_success_total{finished_reason=~\"abort|error\"}[5m])) / "
                      "sum by (model_name) (rate(vllm:request_success_total[5m]))\n"
                      "      - record: model_name:vllm_generation_tokens:rate5m\n"
                      "        expr: sum by (model_name) (rate(vllm:generation_tokens_total[5m]))\n"
                      "      - record: model_name:vllm_prompt_tokens:rate5m\n"
                      "        expr: sum by (model_name) (rate(vllm:prompt_tokens_total[5m]))\n"
                      "      - record: model_name:vllm_preemptions:rate5m\n"
                      "        expr: sum by (model_name) (rate(vllm:num_preemptions_total[5m]))\n"
                      "      - record: model_name:vllm_requests_waiting:sum\n"
                      "        expr: sum by (model_name) (vllm:num_requests_waiting)\n"
                      "      - record: model_name:vllm_requests_running:sum\n"
                      "        expr: sum by (model_name) (vllm:num_requests_running)\n"
                      "      - record: model_name:vllm_kv_cache_usage:max\n"
                      "        expr: max by (model_name) (");
    (void)im_buf_puts(b, kv);
    (void)im_buf_puts(b, ")\n"
                         "  - name: infermon.llm.alerts\n"
                         "    interval: 30s\n"
                         "    rules:\n"
                         "      - alert: VLLMHighTTFT\n"
                         "        expr: model_name:vllm_ttft_seconds:p95_5m > ");
    num(b, d.ttft_p95_target_seconds);
    (void)im_buf_puts(b,
                      "\n        for: 10m\n"
                      "        labels:\n"
                      "          severity: warning\n"
                      "          source: infermon-builtin\n"
                      "        annotations:\n"
                      "          summary: 'TTFT p95 of {{ $labels.model_name }} is {{ $value | "
                      "humanizeDuration }}'\n"
                      "          description: 'Time to first token (p95 over 5m) has been above ");
    num(b, d.ttft_p95_target_seconds);
    (void)im_buf_puts(b,
                      "s for 10 minutes. Look at queueing (vllm:num_requests_waiting), preemptions "
                      "and KV-cache use before scaling.'\n"
                      "      - alert: VLLMRequestFailures\n"
                      "        expr: model_name:vllm_request_failure:ratio_5m > ");
    num(b, d.failure_ratio);
    (void)im_buf_puts(
        b, "\n        for: 10m\n"
           "        labels:\n"
           "          severity: warning\n"
           "          source: infermon-builtin\n"
           "        annotations:\n"
           "          summary: '{{ $value | humanizePercentage }} of {{ $labels.model_name }} "
           "requests abort or fail'\n"
           "          description: 'Share of finished requests with finished_reason abort or "
           "error over 5m has been above ");
    num(b, d.failure_ratio);
    (void)im_buf_puts(b,
                      " for 10 minutes (clients giving up on slow responses, or engine errors).'\n"
                      "      - alert: VLLMQueueGrowing\n"
                      "        expr: model_name:vllm_requests_waiting:sum > ");
    num(b, d.queue_waiting_threshold);
    (void)im_buf_puts(
        b,
        " and on (model_name) predict_linear(model_name:vllm_requests_waiting:sum[10m], 600) > ");
    num(b, d.queue_waiting_threshold);
    (void)im_buf_puts(
        b, " and on (model_name) model_name:vllm_preemptions:rate5m > 0\n"
           "        for: 15m\n"
           "        labels:\n"
           "          severity: warning\n"
           "          source: infermon-builtin\n"
           "        annotations:\n"
           "          summary: '{{ $value }} requests waiting for {{ $labels.model_name }}, "
           "with preemptions'\n"
           "          description: 'The queue has stayed above ");
    num(b, d.queue_waiting_threshold);
    (void)im_buf_puts(
        b, " for 15 minutes, growing or at a plateau (not draining below it within 10 minutes), "
           "while the engine preempts requests: KV-cache "
           "capacity is the bottleneck (raise gpu_memory_utilization, cap max_model_len, or add "
           "replicas).'\n"
           "      - alert: VLLMKVCachePinned\n"
           "        expr: model_name:vllm_kv_cache_usage:max > ");
    num(b, d.kv_cache_threshold);
    (void)im_buf_puts(b, "\n        for: 15m\n"
                         "        labels:\n"
                         "          severity: warning\n"
                         "          source: infermon-builtin\n"
                         "        annotations:\n"
                         "          summary: 'KV cache of {{ $labels.model_name }} at {{ $value | "
                         "humanizePercentage }}'\n"
                         "          description: 'KV-cache use has stayed above ");
    num(b, d.kv_cache_threshold * 100);
    (void)im_buf_puts(b, "% for 15 minutes: preemptions and queueing follow.'\n");
engines:
    for (int e = 0; e < 32; e++)
        if (d.engines & (1u << e)) llm__builtin_engine_yaml(&d, e, b);
}

/* ---- vLLM names and the rules generator ---- */

llm_names_t llm_detect_vllm_names(storage_queryable_t *q)
{
    if (!q) return LLM_NAMES_AUTO;
    storage_strlist_t names = {0};
    im_err_t err;
    int64_t now = im_now_ms();
    if (q->vt->label_values(q, IM_METRIC_NAME, now - IM_MS_PER_HOUR, now, NULL, 0, &names, &err) !=
        IM_OK)
        return LLM_NAMES_AUTO;
    bool has_new = false, has_old = false;
    for (size_t i = 0; i < names.n; i++) {
        if (strcmp(names.v[i]->s, "vllm:kv_cache_usage_perc") == 0) has_new = true;
        if (strcmp(names.v[i]->s, "vllm:gpu_cache_usage_perc") == 0) has_old = true;
    }
    storage_strlist_free(&names);
    return has_new && !has_old   ? LLM_NAMES_NEW
           : has_old && !has_new ? LLM_NAMES_OLD
                                 : LLM_NAMES_AUTO;
}

typedef struct gen {
    llm_builtin_opts_t opts; /* opts.names, opts.engines: what the last load made */
    bool detect;
} gen_t;

static bool gen_load(void *ctx, storage_queryable_t *q, rules_file_t ***files, size_t *n)
{
    gen_t *g = ctx;
    if (g->detect) g->opts.names = llm_detect_vllm_names(q);
    g->opts.engines = llm_detect_engines(q);
    im_buf_t b;
    im_buf_init(&b, 0);
    llm_builtin_yaml(&g->opts, &b);
    rules_errs_t errs = {0};
    rules_file_t *f = NULL;
    bool ok = rules_file_parse(LLM_BUILTIN_FILE, b.data, b.len, &f, &errs) == IM_OK;
    if (ok) {
        *files = im_realloc(*files, (*n + 1) * sizeof **files);
        (*files)[(*n)++] = f;
    } else {
        for (size_t e = 0; e < errs.n; e++)
            IM_ERROR("Built-in rules failed to load", "err=%s", im_logq(errs.v[e]));
    }
    rules_errs_free(&errs);
    im_buf_free(&b);
    return true; /* as before the move: a bad built-in file is logged, the rest still loads */
}

static bool gen_changed(void *ctx, storage_queryable_t *q)
{
    gen_t *g = ctx;
    return (g->detect && llm_detect_vllm_names(q) != g->opts.names) ||
           llm_detect_engines(q) != g->opts.engines;
}

static void gen_free(void *ctx)
{
    im_free(ctx);
}

void llm_builtin_generator(const llm_builtin_opts_t *opts, bool detect, rules_generator_t *out)
{
    gen_t *g = im_calloc(1, sizeof *g);
    if (opts) g->opts = *opts;
    g->detect = detect;
    *out = (rules_generator_t){gen_load, gen_changed, gen_free, g, 0};
}

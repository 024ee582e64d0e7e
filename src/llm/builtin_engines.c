/* builtin_engines.c — the built-in rules for the serving engines besides vLLM,
 * generated from the serving model (llm/serving.h): per engine present the
 * recording rules of the chain (TTFT and e2e p95, failure ratio, tokens,
 * preemptions/retractions, waiting, running, KV use) under
 * <model label>:<engine>_... names, and the four symptom alerts of vLLM's set
 * under the engine's prefix (SGLangHighTTFT, ...), each only when the engine
 * has the signals it needs. Alternative names of a signal (older releases) of
 * the same type are combined with `or`, so one rule file serves every release. */
#include "util/base.h"

#include <stdio.h>

#include "llm/builtin_int.h"
#include "llm/serving.h"
#include "util/fmtfloat.h"
#include "util/log.h"
#include "util/timeutil.h"

static const struct {
    const char *id, *prefix;
} g_prefix[] = {{"sglang", "SGLang"},         {"sglang-router", "SGLangRouter"},
                {"ray-vllm", "RayServeVLLM"}, {"dynamo", "DynamoFrontend"},
                {"llm-d-epp", "LlmdEPP"},     {"triton-trtllm", "TritonTRTLLM"}};

static void num(im_buf_t *b, double v)
{
    char tmp[IM_FLOAT_BUF];
    im_fmt_float_go(v, 'g', tmp, sizeof tmp);
    (void)im_buf_puts(b, tmp);
}

/* "ray_vllm" for "ray-vllm": the engine part of rule names. */
static void rule_id(const char *id, char *out, size_t cap)
{
    size_t n = 0;
    for (; *id && n + 1 < cap; id++) out[n++] = *id == '-' ? '_' : *id;
    out[n] = '\0';
}

/* The maps of sig usable together: the first and those of its type. */
static size_t same_type(const llm_serving_t *s, int e, llm_signal_t sig, const llm_signal_map_t **v,
                        size_t cap)
{
    const llm_signal_map_t *all[8];
    size_t n = llm_serving_maps_for(s, e, sig, all, 8), k = 0;
    if (n > 8) n = 8;
    for (size_t i = 0; i < n && k < cap; i++)
        if (all[i]->type == all[0]->type) v[k++] = all[i];
    return k;
}

static void sample(im_buf_t *b, const llm_signal_map_t *m, const char *suffix)
{
    (void)im_buf_puts(b, m->name);
    (void)im_buf_puts(b, suffix);
    if (m->selector[0]) {
        (void)im_buf_putc(b, '{');
        (void)im_buf_puts(b, m->selector);
        (void)im_buf_putc(b, '}');
    }
}

/* `agg by (by) (inner(alt1)) or agg by (by) (inner(alt2)) ...` */
static bool expr_of(im_buf_t *b, const llm_serving_t *s, int e, llm_signal_t sig, const char *ml,
                    const char *how)
{
    const llm_signal_map_t *v[4];
    size_t n = same_type(s, e, sig, v, 4);
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++) {
        if (i) (void)im_buf_puts(b, " or ");
        const llm_signal_map_t *m = v[i];
        if (strcmp(how, "p95") == 0) {
            if (m->type != LLM_MTYPE_HISTOGRAM) return false;
            (void)im_buf_printf(b, "histogram_quantile(0.95, sum by (le, %s) (rate(", ml);
            sample(b, m, "_bucket");
            (void)im_buf_puts(b, "[5m])))");
        } else if (strcmp(how, "rate") == 0) {
            (void)im_buf_printf(b, "sum by (%s) (", ml);
            if (m->type == LLM_MTYPE_GAUGE) {
                sample(b, m, "");
            } else {
                (void)im_buf_puts(b, "rate(");
                sample(b, m, "");
                (void)im_buf_puts(b, "[5m])");
            }
            (void)im_buf_putc(b, ')');
        } else {
            (void)im_buf_printf(b, "%s by (%s) (", how, ml);
            sample(b, m, "");
            (void)im_buf_putc(b, ')');
        }
    }
    return true;
}

static bool has_sig(const llm_serving_t *s, int e, llm_signal_t sig)
{
    const llm_signal_map_t *v[1];
    return llm_serving_maps_for(s, e, sig, v, 1) > 0;
}

static void record(im_buf_t *b, const llm_serving_t *s, int e, const char *ml, const char *rid,
                   const char *what, llm_signal_t sig, const char *how, bool *any)
{
    im_buf_t x;
    im_buf_init(&x, 0);
    if (expr_of(&x, s, e, sig, ml, how)) {
        (void)im_buf_printf(b, "      - record: %s:%s_%s\n        expr: %s\n", ml, rid, what,
                            x.data);
        *any = true;
    }
    im_buf_free(&x);
}

/* One alert: `lhs > thr tail`, for `forw`, labelled with the engine. */
static void alert(im_buf_t *b, const char *prefix, const char *name, const char *lhs, double thr,
                  const char *tail, const char *id, const char *forw, const char *summary)
{
    (void)im_buf_printf(b, "      - alert: %s%s\n        expr: %s > ", prefix, name, lhs);
    num(b, thr);
    (void)im_buf_printf(b,
                        "%s\n        for: %s\n        labels:\n          severity: warning\n"
                        "          source: infermon-builtin\n          engine: %s\n"
                        "        annotations:\n          summary: '%s'\n",
                        tail, forw, id, summary);
}

void llm__builtin_engine_yaml(const llm_builtin_opts_t *d, int e, im_buf_t *b)
{
    const llm_serving_t *s = llm_serving_get();
    const llm_engine_info_t *ei = llm_serving_engine(s, e);
    if (!ei || strcmp(ei->id, "vllm") == 0 || strcmp(ei->id, "dcgm") == 0 ||
        strcmp(ei->id, "kueue") == 0)
        return;
    const char *ml = ei->model_label;
    char rid[40], prefix[48];
    rule_id(ei->id, rid, sizeof rid);
    snprintf(prefix, sizeof prefix, "%s", rid);
    for (size_t i = 0; i < IM_ARRAY_LEN(g_prefix); i++)
        if (strcmp(g_prefix[i].id, ei->id) == 0)
            snprintf(prefix, sizeof prefix, "%s", g_prefix[i].prefix);
    im_buf_t r;
    im_buf_init(&r, 0);
    bool any = false;
    record(&r, s, e, ml, rid, "ttft_seconds:p95_5m", LLM_SIG_TTFT, "p95", &any);
    record(&r, s, e, ml, rid, "e2e_latency_seconds:p95_5m", LLM_SIG_E2E, "p95", &any);
    record(&r, s, e, ml, rid, "requests_finished:rate5m", LLM_SIG_REQUESTS_FINISHED, "rate", &any);
    record(&r, s, e, ml, rid, "requests_failed:rate5m", LLM_SIG_REQUESTS_FAILED, "rate", &any);
    record(&r, s, e, ml, rid, "generation_tokens:rate5m", LLM_SIG_GENERATION_TOKENS, "rate", &any);
    record(&r, s, e, ml, rid, "prompt_tokens:rate5m", LLM_SIG_PROMPT_TOKENS, "rate", &any);
    record(&r, s, e, ml, rid, "preemptions:rate5m", LLM_SIG_PREEMPTIONS, "rate", &any);
    record(&r, s, e, ml, rid, "requests_waiting:sum", LLM_SIG_WAITING, "sum", &any);
    record(&r, s, e, ml, rid, "requests_running:sum", LLM_SIG_RUNNING, "sum", &any);
    record(&r, s, e, ml, rid, "kv_cache_usage:max", LLM_SIG_KV_USAGE, "max", &any);
    if (!any) {
        im_buf_free(&r);
        return;
    }
    (void)im_buf_printf(b, "  - name: infermon.llm.%s.recording\n    interval: 30s\n    rules:\n%s",
                        rid, r.data);
    im_buf_free(&r);
    (void)im_buf_printf(b, "  - name: infermon.llm.%s.alerts\n    interval: 30s\n    rules:\n",
                        rid);
    char lhs[200], tail[300], sum[300];
    bool alerts = false;
    if (has_sig(s, e, LLM_SIG_TTFT)) {
        snprintf(lhs, sizeof lhs, "%s:%s_ttft_seconds:p95_5m", ml, rid);
        snprintf(sum, sizeof sum,
                 "%s TTFT p95 of {{ $labels.%s }} is {{ $value | humanizeDuration }}", ei->name,
                 ml);
        alert(b, prefix, "HighTTFT", lhs, d->ttft_p95_target_seconds, "", ei->id, "10m", sum);
        alerts = true;
    }
    if (has_sig(s, e, LLM_SIG_REQUESTS_FAILED) && has_sig(s, e, LLM_SIG_REQUESTS_FINISHED)) {
        snprintf(lhs, sizeof lhs, "%s:%s_requests_failed:rate5m / %s:%s_requests_finished:rate5m",
                 ml, rid, ml, rid);
        snprintf(sum, sizeof sum,
                 "{{ $value | humanizePercentage }} of {{ $labels.%s }} requests fail on %s", ml,
                 ei->name);
        alert(b, prefix, "RequestFailures", lhs, d->failure_ratio, "", ei->id, "10m", sum);
        alerts = true;
    }
    if (has_sig(s, e, LLM_SIG_WAITING)) {
        snprintf(lhs, sizeof lhs, "%s:%s_requests_waiting:sum", ml, rid);
        /* growing, or at a plateau: not draining below the threshold within 10 minutes */
        char thr[IM_FLOAT_BUF];
        im_fmt_float_go(d->queue_waiting_threshold, 'g', thr, sizeof thr);
        int n = snprintf(tail, sizeof tail, " and on (%s) predict_linear(%s[10m], 600) > %s", ml,
                         lhs, thr);
        if (has_sig(s, e, LLM_SIG_PREEMPTIONS) && n > 0 && (size_t)n < sizeof tail)
            snprintf(tail + n, sizeof tail - (size_t)n, " and on (%s) %s:%s_preemptions:rate5m > 0",
                     ml, ml, rid);
        snprintf(sum, sizeof sum, "{{ $value }} requests waiting for {{ $labels.%s }} on %s", ml,
                 ei->name);
        alert(b, prefix, "QueueGrowing", lhs, d->queue_waiting_threshold, tail, ei->id, "15m", sum);
        alerts = true;
    }
    if (has_sig(s, e, LLM_SIG_KV_USAGE)) {
        snprintf(lhs, sizeof lhs, "%s:%s_kv_cache_usage:max", ml, rid);
        snprintf(sum, sizeof sum,
                 "KV cache of {{ $labels.%s }} on %s at {{ $value | humanizePercentage }}", ml,
                 ei->name);
        alert(b, prefix, "KVCachePinned", lhs, d->kv_cache_threshold, "", ei->id, "15m", sum);
        alerts = true;
    }
    if (!alerts) (void)im_buf_puts(b, "      []\n");
}

/* ---- Detection ---- */

typedef struct nset {
    storage_strlist_t names;
} nset_t;

static bool nset_has(void *ctx, const char *name, size_t len)
{
    nset_t *x = ctx;
    for (size_t i = 0; i < x->names.n; i++)
        if (x->names.v[i]->len == len && memcmp(x->names.v[i]->s, name, len) == 0) return true;
    return false;
}

uint32_t llm_detect_engines(storage_queryable_t *q)
{
    if (!q) return 0;
    nset_t x = {{0}};
    im_err_t err;
    int64_t now = im_now_ms();
    if (q->vt->label_values(q, IM_METRIC_NAME, now - IM_MS_PER_HOUR, now, NULL, 0, &x.names,
                            &err) != IM_OK)
        return 0;
    const llm_serving_t *s = llm_serving_get();
    llm_detected_t d;
    llm_serving_detect(s, nset_has, &x, &d);
    storage_strlist_free(&x.names);
    uint32_t mask = 0;
    for (int e = 0; e < llm_serving_engine_count(s) && e < 32; e++) {
        const char *id = llm_serving_engine(s, e)->id;
        if (d.present[e] && strcmp(id, "vllm") != 0 && strcmp(id, "dcgm") != 0 &&
            strcmp(id, "kueue") != 0)
            mask |= 1u << e;
    }
    return mask;
}

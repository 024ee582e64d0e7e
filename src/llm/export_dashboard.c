/* export_dashboard.c — `infermon export dashboard`: the causal-chain overview
 * of the web UI (queue -> running -> KV use -> preemptions -> latency ->
 * tokens, then the GPUs and the quota) as a Grafana dashboard, with the metric
 * names the sources expose (llm/serving.h picks them) and the template
 * variables and matchers the Grafana dashboard-linter rules ask for. */
#include "util/base.h"

#include <jansson.h>
#include <stdio.h>

#include "llm/export.h"
#include "util/mem.h"

#define DS_UID "${datasource}"

typedef struct dash {
    const llm_export_dash_opts_t *o;
    const llm_serving_t *s;
    json_t *panels;
    int id;   /* next panel id */
    int x, y; /* layout cursor */
    size_t npanels;
    int serving[LLM_SERVING_MAX_ENGINES];
    int nserving;
    int dcgm, kueue; /* engine index, -1 when not exported */
} dash_t;

static json_t *ds(void)
{
    return json_pack("{s:s, s:s}", "type", "prometheus", "uid", DS_UID);
}

static void row(dash_t *d, const char *title)
{
    if (d->x != 0) {
        d->x = 0;
        d->y += 8;
    }
    json_t *p = json_pack("{s:i, s:s, s:s, s:b, s:{s:i, s:i, s:i, s:i}, s:[]}", "id", d->id++,
                          "type", "row", "title", title, "collapsed", 0, "gridPos", "h", 1, "w", 24,
                          "x", 0, "y", d->y, "panels");
    json_array_append_new(d->panels, p);
    d->y += 1;
}

typedef struct panel_spec {
    const char *title, *desc, *unit, *axis;
    double min, max; /* max <= min: unset */
    bool stack;
} panel_spec_t;

static json_t *panel(dash_t *d, const panel_spec_t *ps)
{
    json_t *defaults = json_pack("{s:s, s:{s:s, s:i, s:i, s:s}}", "unit", ps->unit, "custom",
                                 "drawStyle", "line", "lineWidth", 1, "fillOpacity",
                                 ps->stack ? 40 : 10, "axisLabel", ps->axis ? ps->axis : "");
    if (ps->stack)
        json_object_set_new(json_object_get(defaults, "custom"), "stacking",
                            json_pack("{s:s, s:s}", "mode", "normal", "group", "A"));
    if (ps->max > ps->min) {
        json_object_set_new(defaults, "min", json_real(ps->min));
        json_object_set_new(defaults, "max", json_real(ps->max));
    } else if (ps->min == 0) {
        json_object_set_new(defaults, "min", json_integer(0));
    }
    json_t *p = json_pack("{s:i, s:s, s:s, s:s, s:o, s:{s:i, s:i, s:i, s:i}, s:{s:o, s:[]}, "
                          "s:{s:{s:s, s:s}, s:{s:s, s:s}}, s:[]}",
                          "id", d->id++, "type", "timeseries", "title", ps->title, "description",
                          ps->desc, "datasource", ds(), "gridPos", "h", 8, "w", 12, "x", d->x, "y",
                          d->y, "fieldConfig", "defaults", defaults, "overrides", "options",
                          "legend", "displayMode", "list", "placement", "bottom", "tooltip", "mode",
                          "multi", "sort", "desc", "targets");
    return p;
}

static void target(json_t *p, const char *expr, const char *legend)
{
    json_t *t = json_object_get(p, "targets");
    char ref[8];
    size_t n = json_array_size(t);
    snprintf(ref, sizeof ref, "%c", (char)('A' + (int)(n % 26)));
    json_array_append_new(t, json_pack("{s:s, s:o, s:s, s:s, s:b, s:b}", "refId", ref, "datasource",
                                       ds(), "expr", expr, "legendFormat", legend, "range", 1,
                                       "instant", 0));
}

/* Places p in the grid (two panels a row) if it has targets; else drops it. */
static void place(dash_t *d, json_t *p)
{
    if (json_array_size(json_object_get(p, "targets")) == 0) {
        json_decref(p);
        return;
    }
    json_t *g = json_object_get(p, "gridPos");
    json_object_set_new(g, "x", json_integer(d->x));
    json_object_set_new(g, "y", json_integer(d->y));
    json_array_append_new(d->panels, p);
    d->npanels++;
    if (d->x == 0) {
        d->x = 12;
    } else {
        d->x = 0;
        d->y += 8;
    }
}

/* ---- selectors ---- */

static const llm_signal_map_t *pick(const dash_t *d, int e, llm_signal_t sig)
{
    return llm_serving_pick(d->s, e, sig, d->o->has, d->o->ctx);
}

/* {job=~"$job", instance=~"$instance", ...} for engine e's mapping m (NULL: none). */
static void sel(im_buf_t *b, const dash_t *d, int e, const llm_signal_map_t *m, const char *extra)
{
    (void)im_buf_puts(b, "{job=~\"$job\", instance=~\"$instance\"");
    if (e != d->kueue) (void)im_buf_puts(b, ", namespace=~\"$namespace\"");
    if (e != d->kueue && e != d->dcgm) {
        const llm_engine_info_t *ei = llm_serving_engine(d->s, e);
        (void)im_buf_printf(b, ", %s=~\"$model\"", ei->model_label);
    }
    if (m && m->selector && m->selector[0]) (void)im_buf_printf(b, ", %s", m->selector);
    if (extra) (void)im_buf_printf(b, ", %s", extra);
    (void)im_buf_putc(b, '}');
}

static const char *ename(const dash_t *d, int e)
{
    return llm_serving_engine(d->s, e)->name;
}

/* " · SGLang" when more than one serving engine is shown. */
static void tag(im_buf_t *b, const dash_t *d, int e)
{
    if (d->nserving > 1) (void)im_buf_printf(b, " · %s", ename(d, e));
}

static void legend_ml(im_buf_t *b, const dash_t *d, int e, const char *suffix)
{
    (void)im_buf_printf(b, "{{%s}}%s", llm_serving_engine(d->s, e)->model_label, suffix);
    tag(b, d, e);
}

/* agg by (model) (name{sel}) or sum by (model) (rate(name{sel}[$__rate_interval])). */
static void expr_value(im_buf_t *b, const dash_t *d, int e, const llm_signal_map_t *m,
                       const char *agg, const char *by, const char *extra)
{
    bool counter = m->type == LLM_MTYPE_COUNTER;
    (void)im_buf_printf(b, "%s by (%s) (%s%s", counter ? "sum" : agg, by, counter ? "rate(" : "",
                        m->name);
    sel(b, d, e, m, extra);
    (void)im_buf_puts(b, counter ? "[$__rate_interval]))" : ")");
}

/* A target with the legend of engine e's model and suffix. */
static void model_target(dash_t *d, json_t *p, int e, const char *expr, const char *suffix)
{
    im_buf_t l;
    im_buf_init(&l, 0);
    legend_ml(&l, d, e, suffix);
    target(p, expr, l.data);
    im_buf_free(&l);
}

/* One target per serving engine for sig; returns how many were added. */
static int per_engine(dash_t *d, json_t *p, llm_signal_t sig, const char *agg, const char *suffix,
                      bool counters_only)
{
    int n = 0;
    for (int i = 0; i < d->nserving; i++) {
        int e = d->serving[i];
        const llm_signal_map_t *m = pick(d, e, sig);
        if (!m || (counters_only && m->type != LLM_MTYPE_COUNTER)) continue;
        im_buf_t x;
        im_buf_init(&x, 0);
        expr_value(&x, d, e, m, agg, llm_serving_engine(d->s, e)->model_label, NULL);
        model_target(d, p, e, x.data, suffix);
        im_buf_free(&x);
        n++;
    }
    return n;
}

/* The sum of m by the model label and more_by (", label", or ""). */
static void sum_by_target(dash_t *d, json_t *p, int e, const llm_signal_map_t *m,
                          const char *more_by, const char *suffix)
{
    im_buf_t x, by;
    im_buf_init(&x, 0);
    im_buf_init(&by, 0);
    (void)im_buf_printf(&by, "%s%s", llm_serving_engine(d->s, e)->model_label, more_by);
    expr_value(&x, d, e, m, "sum", by.data, NULL);
    model_target(d, p, e, x.data, suffix);
    im_buf_free(&x);
    im_buf_free(&by);
}

/* rate(num)/rate(den) summed by the model label, of the series name + series. */
static void rate_ratio(im_buf_t *x, const dash_t *d, int e, const llm_signal_map_t *num,
                       const llm_signal_map_t *den, const char *series)
{
    const char *ml = llm_serving_engine(d->s, e)->model_label;
    (void)im_buf_printf(x, "sum by (%s) (rate(%s%s", ml, num->name, series);
    sel(x, d, e, num, NULL);
    (void)im_buf_printf(x, "[$__rate_interval])) / sum by (%s) (rate(%s%s", ml, den->name, series);
    sel(x, d, e, den, NULL);
    (void)im_buf_puts(x, "[$__rate_interval]))");
}

static void quantiles(dash_t *d, json_t *p, llm_signal_t sig)
{
    static const double q[] = {0.5, 0.95, 0.99};
    for (int i = 0; i < d->nserving; i++) {
        int e = d->serving[i];
        const llm_signal_map_t *m = pick(d, e, sig);
        if (!m || m->type != LLM_MTYPE_HISTOGRAM) continue;
        const char *ml = llm_serving_engine(d->s, e)->model_label;
        for (size_t k = 0; k < IM_ARRAY_LEN(q); k++) {
            im_buf_t x;
            im_buf_init(&x, 0);
            (void)im_buf_printf(&x, "histogram_quantile(%g, sum by (le, %s) (rate(%s_bucket", q[k],
                                ml, m->name);
            sel(&x, d, e, m, NULL);
            (void)im_buf_puts(&x, "[$__rate_interval])))");
            char sfx[16];
            snprintf(sfx, sizeof sfx, " p%d", (int)(q[k] * 100 + 0.5));
            model_target(d, p, e, x.data, sfx);
            im_buf_free(&x);
        }
    }
}

/* Names of the mappings used for sig, for a description ("vllm:x (vLLM), ..."). */
static void names_of(im_buf_t *b, const dash_t *d, llm_signal_t sig)
{
    bool first = true;
    for (int i = 0; i < d->nserving; i++) {
        const llm_signal_map_t *m = pick(d, d->serving[i], sig);
        if (!m) continue;
        (void)im_buf_printf(b, "%s%s", first ? "" : ", ", m->name);
        first = false;
    }
    if (first) (void)im_buf_puts(b, "-");
}

static json_t *spanel(dash_t *d, const char *title, const char *unit, const char *axis, double min,
                      double max, const char *desc, llm_signal_t sig)
{
    im_buf_t ds_;
    im_buf_init(&ds_, 0);
    (void)im_buf_printf(&ds_, "%s Metrics: ", desc);
    names_of(&ds_, d, sig);
    (void)im_buf_putc(&ds_, '.');
    panel_spec_t ps = {
        .title = title, .desc = ds_.data, .unit = unit, .axis = axis, .min = min, .max = max};
    json_t *p = panel(d, &ps);
    im_buf_free(&ds_);
    return p;
}

/* ---- the sections ---- */

static void serving_section(dash_t *d)
{
    row(d, "Serving: queue, batch, KV cache");
    /* waiting, by reason where vLLM says why */
    json_t *p = spanel(d, "Waiting requests", "short", "requests", 0, 0,
                       "Requests queued for a batch slot, per model; vLLM >= 0.20 also says why "
                       "(reason: capacity, deferred). A growing queue with preemptions means "
                       "the KV cache is the bottleneck.",
                       LLM_SIG_WAITING);
    for (int i = 0; i < d->nserving; i++) {
        int e = d->serving[i];
        const llm_signal_map_t *r = pick(d, e, LLM_SIG_WAITING_BY_REASON);
        if (!r) continue;
        sum_by_target(d, p, e, r, ", reason", " {{reason}}");
    }
    (void)per_engine(d, p, LLM_SIG_WAITING, "sum", " waiting (total)", false);
    place(d, p);

    p = spanel(d, "Running requests", "short", "requests", 0, 0,
               "Requests in the running batch, per model (bounded by max_num_seqs).",
               LLM_SIG_RUNNING);
    (void)per_engine(d, p, LLM_SIG_RUNNING, "sum", "", false);
    place(d, p);

    p = spanel(d, "KV-cache use", "percentunit", NULL, 0, 1,
               "Fraction of the KV-cache blocks (SGLang: tokens of the pool) in use, the "
               "fullest replica per model. Near 100% the engine preempts (vLLM) or retracts "
               "(SGLang) requests.",
               LLM_SIG_KV_USAGE);
    (void)per_engine(d, p, LLM_SIG_KV_USAGE, "max", "", false);
    place(d, p);

    p = spanel(d, "Preemptions /s", "reqps", NULL, 0, 0,
               "Requests preempted (vLLM) or retracted (SGLang) per second for want of KV "
               "cache; their work is recomputed later, so TTFT and ITL rise.",
               LLM_SIG_PREEMPTIONS);
    if (per_engine(d, p, LLM_SIG_PREEMPTIONS, "sum", "", true) == 0) {
        /* a gauge of the requests retracted now (older SGLang) */
        json_object_set_new(json_object_get(p, "fieldConfig"), "defaults",
                            json_pack("{s:s, s:i}", "unit", "short", "min", 0));
        json_object_set_new(p, "title", json_string("Preempted requests"));
        (void)per_engine(d, p, LLM_SIG_PREEMPTIONS, "sum", "", false);
    }
    place(d, p);

    p = spanel(d, "Aborted and failed requests /s", "reqps", NULL, 0, 0,
               "Requests that finished with an abort or an error, per second: clients giving up "
               "on a long queue end here.",
               LLM_SIG_REQUESTS_FAILED);
    for (int i = 0; i < d->nserving; i++) {
        int e = d->serving[i];
        const llm_signal_map_t *m = pick(d, e, LLM_SIG_REQUESTS_FAILED);
        if (!m || m->type != LLM_MTYPE_COUNTER) continue;
        bool reason = m->selector && strstr(m->selector, "finished_reason");
        sum_by_target(d, p, e, m, reason ? ", finished_reason" : "",
                      reason ? " {{finished_reason}}" : " aborted");
    }
    place(d, p);

    p = spanel(d, "Finished requests /s", "reqps", NULL, 0, 0,
               "Requests finished per second, per model (all outcomes).",
               LLM_SIG_REQUESTS_FINISHED);
    (void)per_engine(d, p, LLM_SIG_REQUESTS_FINISHED, "sum", "", true);
    place(d, p);
}

static void latency_section(dash_t *d)
{
    row(d, "Latency");
    json_t *p = spanel(d, "Time to first token", "s", NULL, 0, 0,
                       "TTFT p50/p95/p99 per model from the engine's histogram "
                       "(histogram_quantile interpolates inside a bucket).",
                       LLM_SIG_TTFT);
    quantiles(d, p, LLM_SIG_TTFT);
    place(d, p);
    p = spanel(d, "Inter-token latency", "s", NULL, 0, 0,
               "Time between output tokens, p50/p95/p99 per model (vLLM before V1: time per "
               "output token).",
               LLM_SIG_ITL);
    quantiles(d, p, LLM_SIG_ITL);
    place(d, p);
    p = spanel(d, "End-to-end request latency", "s", NULL, 0, 0,
               "Request latency from arrival to the last token, p50/p95/p99 per model.",
               LLM_SIG_E2E);
    quantiles(d, p, LLM_SIG_E2E);
    place(d, p);

    p = spanel(d, "Queue share of latency", "percentunit", NULL, 0, 1,
               "Share of the end-to-end time requests spent waiting in the queue (sum of queue "
               "time / sum of e2e latency): high means capacity, low means the model itself.",
               LLM_SIG_QUEUE_TIME);
    for (int i = 0; i < d->nserving; i++) {
        int e = d->serving[i];
        const llm_signal_map_t *qn = pick(d, e, LLM_SIG_QUEUE_TIME);
        const llm_signal_map_t *en = pick(d, e, LLM_SIG_E2E);
        if (!qn || !en || qn->type != LLM_MTYPE_HISTOGRAM || en->type != LLM_MTYPE_HISTOGRAM)
            continue;
        im_buf_t x;
        im_buf_init(&x, 0);
        rate_ratio(&x, d, e, qn, en, "_sum");
        model_target(d, p, e, x.data, "");
        im_buf_free(&x);
    }
    place(d, p);
}

static void throughput_section(dash_t *d)
{
    row(d, "Throughput and prefix cache");
    json_t *p =
        spanel(d, "Tokens /s", "short", "tokens/s", 0, 0,
               "Generated and prompt tokens per second, per model.", LLM_SIG_GENERATION_TOKENS);
    (void)per_engine(d, p, LLM_SIG_GENERATION_TOKENS, "sum", " generated", true);
    (void)per_engine(d, p, LLM_SIG_PROMPT_TOKENS, "sum", " prompt", true);
    place(d, p);

    p = spanel(d, "Prefix-cache hit rate", "percentunit", NULL, 0, 1,
               "Share of prompt tokens served from the prefix cache (hits / queries; SGLang: its "
               "cache_hit_rate gauge). Empty when prefix caching is off.",
               LLM_SIG_PREFIX_HITS);
    for (int i = 0; i < d->nserving; i++) {
        int e = d->serving[i];
        const char *ml = llm_serving_engine(d->s, e)->model_label;
        const llm_signal_map_t *h = pick(d, e, LLM_SIG_PREFIX_HITS);
        const llm_signal_map_t *q = pick(d, e, LLM_SIG_PREFIX_QUERIES);
        const llm_signal_map_t *r = pick(d, e, LLM_SIG_PREFIX_HIT_RATE);
        im_buf_t x;
        im_buf_init(&x, 0);
        if (h && q && h->type == LLM_MTYPE_COUNTER && q->type == LLM_MTYPE_COUNTER)
            rate_ratio(&x, d, e, h, q, "");
        else if (r && r->type == LLM_MTYPE_GAUGE)
            expr_value(&x, d, e, r, "avg", ml, NULL);
        if (x.len) model_target(d, p, e, x.data, "");
        im_buf_free(&x);
    }
    place(d, p);
}

/* A panel of one target: the text of agg (e.g. "avg(" or "sum by (l) (") and
 * name{sel} of engine e, closed by ")". */
static void agg_panel(dash_t *d, const panel_spec_t *ps, int e, const llm_signal_map_t *m,
                      const char *agg, const char *legend)
{
    json_t *p = panel(d, ps);
    im_buf_t x;
    im_buf_init(&x, 0);
    (void)im_buf_printf(&x, "%s%s", agg, m->name);
    sel(&x, d, e, m, NULL);
    (void)im_buf_putc(&x, ')');
    target(p, x.data, legend);
    place(d, p);
    im_buf_free(&x);
}

/* A dcgm panel: agg(name{sel}) when has(name). */
static void gpu_panel(dash_t *d, llm_signal_t sig, const char *title, const char *unit, double max,
                      const char *desc, const char *agg, const char *legend)
{
    const llm_signal_map_t *m = pick(d, d->dcgm, sig);
    if (!m) return;
    im_buf_t ds_, x;
    im_buf_init(&ds_, 0);
    im_buf_init(&x, 0);
    (void)im_buf_printf(&ds_, "%s Metric: %s (dcgm-exporter).", desc, m->name);
    panel_spec_t ps = {.title = title, .desc = ds_.data, .unit = unit, .min = 0, .max = max};
    (void)im_buf_printf(&x, "%s(", agg);
    agg_panel(d, &ps, d->dcgm, m, x.data, legend);
    im_buf_free(&ds_);
    im_buf_free(&x);
}

static bool has(const dash_t *d, const char *name)
{
    return d->o->has(d->o->ctx, name, strlen(name));
}

static void gpu_section(dash_t *d)
{
    row(d, "GPUs (dcgm-exporter)");
    gpu_panel(d, LLM_SIG_GPU_UTIL, "GPU utilisation", "percent", 100,
              "Share of time a kernel ran on the GPU, averaged over the GPUs (busy is not "
              "saturated: see SM activity).",
              "avg", "GPU util (avg)");
    gpu_panel(d, LLM_SIG_GPU_SM_ACTIVE, "SM activity", "percentunit", 1,
              "Share of streaming multiprocessors with work, averaged over the GPUs.", "avg",
              "SM active (avg)");
    gpu_panel(d, LLM_SIG_GPU_MEM_COPY, "Memory-copy utilisation", "percent", 100,
              "Share of time the GPU memory was being read or written, averaged over the GPUs "
              "(decode is memory-bound).",
              "avg", "mem-copy util (avg)");
    const llm_signal_map_t *fb = pick(d, d->dcgm, LLM_SIG_GPU_FB_USED);
    if (fb && has(d, "DCGM_FI_DEV_FB_FREE")) {
        panel_spec_t ps = {.title = "GPU memory use",
                           .desc = "Framebuffer used / (used + free) over the GPUs: vLLM and "
                                   "SGLang reserve most of it for the KV cache at start-up. "
                                   "Metrics: DCGM_FI_DEV_FB_USED, DCGM_FI_DEV_FB_FREE.",
                           .unit = "percentunit",
                           .min = 0,
                           .max = 1};
        json_t *p = panel(d, &ps);
        im_buf_t x;
        im_buf_init(&x, 0);
        (void)im_buf_printf(&x, "sum(%s", fb->name);
        sel(&x, d, d->dcgm, fb, NULL);
        (void)im_buf_printf(&x, ") / (sum(%s", fb->name);
        sel(&x, d, d->dcgm, fb, NULL);
        (void)im_buf_puts(&x, ") + sum(DCGM_FI_DEV_FB_FREE");
        sel(&x, d, d->dcgm, NULL, NULL);
        (void)im_buf_puts(&x, "))");
        target(p, x.data, "framebuffer used");
        place(d, p);
        im_buf_free(&x);
    } else {
        gpu_panel(d, LLM_SIG_GPU_FB_USED, "GPU memory used", "decmbytes", 0,
                  "Framebuffer memory in use over the GPUs (MiB).", "sum", "framebuffer used");
    }
    gpu_panel(d, LLM_SIG_GPU_POWER, "GPU power", "watt", 0, "Power draw summed over the GPUs.",
              "sum", "power (sum)");
}

static void quota_section(dash_t *d)
{
    row(d, "Quota (Kueue)");
    const llm_signal_map_t *m = pick(d, d->kueue, LLM_SIG_QUOTA_PENDING);
    if (m) {
        panel_spec_t ps = {.title = "Kueue pending workloads",
                           .desc = "Workloads waiting for quota per cluster queue and status "
                                   "(active: could be admitted, inadmissible: cannot be now). "
                                   "Metric: kueue_pending_workloads.",
                           .unit = "short",
                           .axis = "workloads",
                           .min = 0};
        agg_panel(d, &ps, d->kueue, m, "sum by (cluster_queue, status) (",
                  "{{cluster_queue}} {{status}}");
    }
    m = pick(d, d->kueue, LLM_SIG_QUOTA_ADMITTED);
    if (m) {
        panel_spec_t ps = {.title = "Kueue admitted workloads",
                           .desc = "Workloads admitted and active per cluster queue. Metric: "
                                   "kueue_admitted_active_workloads.",
                           .unit = "short",
                           .axis = "workloads",
                           .min = 0};
        agg_panel(d, &ps, d->kueue, m, "sum by (cluster_queue) (", "{{cluster_queue}}");
    }
}

/* ---- template variables ---- */

static json_t *query_var(const char *name, const char *label, const char *query, const char *all)
{
    return json_pack("{s:s, s:s, s:s, s:o, s:s, s:s, s:i, s:b, s:b, s:s, s:i, s:s, "
                     "s:{s:[s], s:[s], s:b}, s:[]}",
                     "name", name, "label", label, "type", "query", "datasource", ds(), "query",
                     query, "definition", query, "refresh", 2, "multi", 1, "includeAll", 1,
                     "allValue", all, "sort", 1, "regex", "", "current", "text", "All", "value",
                     "$__all", "selected", 1, "options");
}

im_rc llm_export_dashboard(const llm_export_dash_opts_t *o, im_buf_t *out, size_t *npanels,
                           im_err_t *err)
{
    dash_t d;
    memset(&d, 0, sizeof d);
    d.o = o;
    d.s = llm_serving_get();
    d.id = 1;
    d.dcgm = d.kueue = -1;
    int ne = llm_serving_engine_count(d.s);
    for (int e = 0; e < ne && e < 32; e++) {
        if (!(o->engines & (1u << e))) continue;
        const char *id = llm_serving_engine(d.s, e)->id;
        if (strcmp(id, "dcgm") == 0)
            d.dcgm = e;
        else if (strcmp(id, "kueue") == 0)
            d.kueue = e;
        else if (d.nserving < LLM_SERVING_MAX_ENGINES)
            d.serving[d.nserving++] = e;
    }
    if (npanels) *npanels = 0;
    if (d.nserving == 0)
        return im_err_set(err, IM_EINVAL, "no serving engine to export a dashboard for");
    d.panels = json_array();
    serving_section(&d);
    latency_section(&d);
    throughput_section(&d);
    if (d.dcgm >= 0) gpu_section(&d);
    if (d.kueue >= 0) quota_section(&d);
    /* drop row panels with nothing under them */
    for (size_t i = json_array_size(d.panels); i-- > 0;) {
        json_t *p = json_array_get(d.panels, i);
        if (strcmp(json_string_value(json_object_get(p, "type")), "row") != 0) continue;
        json_t *next = json_array_get(d.panels, i + 1);
        if (!next || strcmp(json_string_value(json_object_get(next, "type")), "row") == 0)
            json_array_remove(d.panels, i);
    }
    if (d.npanels == 0) {
        json_decref(d.panels);
        return im_err_set(err, IM_EINVAL,
                          "the sources expose none of the engines' metrics the dashboard shows");
    }

    /* the model variable reads the first engine's running (else waiting) series */
    int e0 = d.serving[0];
    const llm_signal_map_t *mm = pick(&d, e0, LLM_SIG_RUNNING);
    if (!mm) mm = pick(&d, e0, LLM_SIG_WAITING);
    if (!mm) mm = pick(&d, e0, LLM_SIG_GENERATION_TOKENS);
    char mq[512], nq[512];
    const char *ml = llm_serving_engine(d.s, e0)->model_label;
    snprintf(nq, sizeof nq, "label_values(up{job=~\"$job\", instance=~\"$instance\"}, namespace)");
    if (mm)
        snprintf(mq, sizeof mq,
                 "label_values(%s{job=~\"$job\", instance=~\"$instance\", "
                 "namespace=~\"$namespace\"}, %s)",
                 mm->name, ml);
    else
        snprintf(mq, sizeof mq, "label_values(up{job=~\"$job\", instance=~\"$instance\"}, %s)", ml);
    json_t *vars = json_array();
    json_array_append_new(
        vars, json_pack("{s:s, s:s, s:s, s:s, s:i, s:b, s:b, s:s, s:{s:s, s:s}, s:[]}", "name",
                        "datasource", "label", "Data source", "type", "datasource", "query",
                        "prometheus", "refresh", 1, "multi", 0, "includeAll", 0, "regex", "",
                        "current", "text", "default", "value", "default", "options"));
    json_array_append_new(vars, query_var("job", "Job", "label_values(up, job)", ".+"));
    json_array_append_new(
        vars, query_var("instance", "Instance", "label_values(up{job=~\"$job\"}, instance)", ".+"));
    json_array_append_new(vars, query_var("namespace", "Namespace", nq, ".*"));
    json_array_append_new(vars, query_var("model", "Model", mq, ".*"));

    im_buf_t desc;
    im_buf_init(&desc, 0);
    (void)im_buf_puts(&desc, "The causal chain of LLM serving (queue -> batch -> KV cache -> "
                             "preemptions -> latency -> tokens; GPUs; quota) for ");
    for (int i = 0; i < d.nserving; i++)
        (void)im_buf_printf(&desc, "%s%s", i ? ", " : "", ename(&d, d.serving[i]));
    (void)im_buf_puts(&desc, ". Generated by infermon export dashboard");
    if (o->sources && o->sources[0]) (void)im_buf_printf(&desc, " from %s", o->sources);
    (void)im_buf_puts(&desc, ".");

    json_t *root = json_pack(
        "{s:s, s:s, s:[s, s, s], s:i, s:b, s:i, s:b, s:s, s:{s:s, s:s}, s:{s:o}, "
        "s:{s:[]}, s:o, s:s, s:i}",
        "title", o->title ? o->title : "LLM serving (infermon)", "description", desc.data, "tags",
        "infermon", "llm", "vllm", "schemaVersion", 39, "editable", 1, "graphTooltip", 1, "liveNow",
        0, "refresh", "30s", "time", "from", "now-1h", "to", "now", "templating", "list", vars,
        "annotations", "list", "panels", d.panels, "timezone", "browser", "version", 1);
    im_buf_free(&desc);
    if (d.nserving && strcmp(llm_serving_engine(d.s, e0)->id, "vllm") != 0) {
        json_t *tags = json_object_get(root, "tags");
        json_array_set_new(tags, 2, json_string(llm_serving_engine(d.s, e0)->id));
    }
    char *txt = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!txt) return im_err_set(err, IM_EINVAL, "cannot encode the dashboard");
    (void)im_buf_puts(out, txt);
    (void)im_buf_putc(out, '\n');
    free(txt); /* checksrc: allow */
    if (npanels) *npanels = d.npanels;
    return IM_OK;
}

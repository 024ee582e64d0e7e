/* sglang.c — simulated SGLang pods: the engine model of vllm.c (same requests,
 * batching, KV blocks and prefix cache), exposed as SGLang exposes it
 * (catalog/sglang-metrics.tsv, from sglang/srt/metrics/collector.py):
 *  - prometheus_client in multiprocess mode: no _created samples; counters as
 *    `<name>_total` with that name on HELP/TYPE; gauges without a
 *    multiprocess_mode (num_retracted_reqs, num_paused_reqs) carry a pid label;
 *  - scheduler families labelled model_name, engine_type, tp_rank, pp_rank,
 *    moe_ep_rank; tokenizer families model_name only;
 *  - retractions instead of preemptions: when KV runs out SGLang retracts the
 *    decode request with the fewest output tokens (then the longest prompt)
 *    back to the queue, counting the request and its input and output tokens;
 *    each finished request observes how often it was retracted;
 *  - token counters advance when a request finishes (observe_one_finished_request),
 *    not per step; num_aborted_requests counts aborts and errors. */
#include "util/base.h"

#include <math.h>
#include <stdio.h>

#include "sim/vllm_int.h"

#define SGL_BLOCK_TOKENS 16 /* the engine model's block size (vllm.c) */

bool sim__engines_parse(sim_fleet_t *f, const char *spec, char *bad, size_t cap)
{
    int ne = 0;
    uint8_t eng[32];
    const char *p = spec && *spec ? spec : "vllm";
    while (*p && ne < 32) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        while (n > 0 && *p == ' ') p++, n--;
        while (n > 0 && p[n - 1] == ' ') n--;
        if (n == 4 && memcmp(p, "vllm", 4) == 0)
            eng[ne++] = SIM_ENGINE_VLLM;
        else if (n == 6 && memcmp(p, "sglang", 6) == 0)
            eng[ne++] = SIM_ENGINE_SGLANG;
        else {
            snprintf(bad, cap, "%.*s", (int)n, p);
            return false;
        }
        p = c ? c + 1 : p + n;
    }
    if (ne == 0) {
        snprintf(bad, cap, "(empty)");
        return false;
    }
    f->model_engine = im_calloc((size_t)f->nmodels, 1);
    for (int i = 0; i < f->nmodels; i++) f->model_engine[i] = eng[i % ne];
    return true;
}

/* ---- Template ---- */

typedef struct sbld {
    sim_tpl_t *t;
    sim_vllm_layout_t *lay;
    bool first;
    const char *model;
} sbld_t;

static void bind_q(sbld_t *b, int q, int vidx)
{
    if (b->first) sim__lay_bind(b->lay, q, vidx);
}

static int labels(const sbld_t *b, bool sched, bool pid, sim_label_t *ls)
{
    int n = 0;
    ls[n++] = (sim_label_t){"model_name", b->model};
    if (sched) {
        ls[n++] = (sim_label_t){"engine_type", "unified"};
        ls[n++] = (sim_label_t){"tp_rank", "0"};
        ls[n++] = (sim_label_t){"pp_rank", "0"};
        ls[n++] = (sim_label_t){"moe_ep_rank", "0"};
    }
    if (pid) ls[n++] = (sim_label_t){"pid", "173"}; /* one scheduler process */
    return n;
}

/* Which sim quantity or histogram feeds each family (by catalog name). */
static const struct {
    const char *name;
    int q;    /* scalar quantity, or -1 */
    int hist; /* histogram id, or -1 */
    bool sched;
} g_bind[] = {
    {"sglang:num_running_reqs", Q_RUNNING, -1, true},
    {"sglang:num_used_tokens", Q_SGL_USED_TOKENS, -1, true},
    {"sglang:token_usage", Q_KV_USAGE, -1, true},
    {"sglang:gen_throughput", Q_SGL_GEN_TPUT, -1, true},
    {"sglang:num_queue_reqs", Q_WAITING, -1, true},
    {"sglang:num_grammar_queue_reqs", Q_ZERO, -1, true},
    {"sglang:cache_hit_rate", Q_SGL_CACHE_HIT_RATE, -1, true},
    {"sglang:max_total_num_tokens", Q_SGL_MAX_TOKENS, -1, true},
    {"sglang:spec_accept_length", Q_ZERO, -1, true},
    {"sglang:num_retracted_reqs", Q_SGL_RETRACT_RECENT, -1, true},
    {"sglang:num_paused_reqs", Q_ZERO, -1, true},
    {"sglang:num_retracted_requests", Q_PREEMPT, -1, true},
    {"sglang:num_retracted_input_tokens", Q_SGL_RETRACT_IN_TOK, -1, true},
    {"sglang:num_retracted_output_tokens", Q_SGL_RETRACT_OUT_TOK, -1, true},
    {"sglang:queue_time_seconds", -1, H_QUEUE, true},
    {"sglang:prompt_tokens", Q_SGL_PROMPT, -1, false},
    {"sglang:generation_tokens", Q_SGL_GEN, -1, false},
    {"sglang:cached_tokens", Q_SGL_CACHED, -1, false},
    {"sglang:num_requests", Q_SGL_REQUESTS, -1, false},
    {"sglang:num_so_requests", Q_ZERO, -1, false},
    {"sglang:num_aborted_requests", Q_SGL_ABORTED, -1, false},
    {"sglang:time_to_first_token_seconds", -1, H_TTFT, false},
    {"sglang:inter_token_latency_seconds", -1, H_ITL, false},
    {"sglang:e2e_request_latency_seconds", -1, H_E2E, false},
    {"sglang:num_retractions", -1, H_PREEMPT_REQ, false},
};

static void build_hist(sbld_t *b, const llm_cat_family_t *cf, int hid, bool sched)
{
    char bn[170], cn[170], sn[170], le[64];
    snprintf(bn, sizeof bn, "%s_bucket", cf->name);
    snprintf(cn, sizeof cn, "%s_count", cf->name);
    snprintf(sn, sizeof sn, "%s_sum", cf->name);
    sim__tpl_family(b->t, cf->name, "histogram", cf->help, cf->name, "histogram", SIM_FMT_PY);
    sim_hist_t h = {.nb = cf->nbuckets, .bounds = cf->buckets};
    h.base = b->t->nvalues;
    for (int i = 0; i <= cf->nbuckets + 1; i++) sim__tpl_value(b->t);
    sim_label_t ls[8];
    for (int i = 0; i <= cf->nbuckets; i++) {
        int n = labels(b, sched, false, ls);
        if (i < cf->nbuckets)
            le[sim__fmt_pyrepr(cf->buckets[i], le)] = '\0';
        else
            memcpy(le, "+Inf", 5);
        ls[n++] = (sim_label_t){"le", le};
        sim__tpl_series(b->t, bn, ls, n, h.base + i, -1);
    }
    int n = labels(b, sched, false, ls);
    sim__tpl_series(b->t, cn, ls, n, h.base + cf->nbuckets, -1);
    sim__tpl_series(b->t, sn, ls, n, h.base + cf->nbuckets + 1, -1);
    sim__tpl_group(b->t, cf->nbuckets + 3);
    if (b->first && b->lay->nhist[hid] < SIM_MAX_HIST_BIND)
        b->lay->hist[hid][b->lay->nhist[hid]++] = h;
}

void sim__sglang_build(sim_fleet_t *f, sim_tpl_t *t, const sim_model_spec_t *m)
{
    sbld_t b = {t, &f->slay, f->slay.nvalues == 0, m->name};
    for (size_t i = 0; i < IM_ARRAY_LEN(g_bind); i++) {
        const llm_cat_family_t *cf =
            llm_cat_find(llm_cat_sglang, llm_cat_sglang_len, g_bind[i].name);
        if (!cf || !(cf->flags & LLM_CF_DEFAULT)) continue;
        bool pid = strstr(g_bind[i].name, "num_retracted_reqs") || strstr(g_bind[i].name, "paused");
        sim_label_t ls[8];
        if (cf->type == LLM_CT_HISTOGRAM) {
            build_hist(&b, cf, g_bind[i].hist, g_bind[i].sched);
        } else if (cf->type == LLM_CT_COUNTER) {
            char tot[170];
            snprintf(tot, sizeof tot, "%s_total", cf->name);
            sim__tpl_family(t, tot, "counter", cf->help, cf->name, "counter", SIM_FMT_PY);
            int n = labels(&b, g_bind[i].sched, false, ls);
            bind_q(&b, g_bind[i].q, sim__tpl_series(t, tot, ls, n, -1, -1));
        } else {
            sim__tpl_family(t, cf->name, "gauge", cf->help, cf->name, "gauge", SIM_FMT_PY);
            int n = labels(&b, g_bind[i].sched, pid, ls);
            bind_q(&b, g_bind[i].q, sim__tpl_series(t, cf->name, ls, n, -1, -1));
        }
    }
    if (b.first) f->slay.nvalues = t->nvalues;
}

/* ---- Engine behaviour ---- */

int sim__sglang_victim(const sim_pod_t *p)
{
    int v = 0;
    for (int i = 1; i < p->nrun; i++) {
        const sim_req_t *a = &p->run[i], *b = &p->run[v];
        if (a->gen < b->gen || (a->gen == b->gen && a->prompt > b->prompt)) v = i;
    }
    return v;
}

void sim__sglang_on_retract(sim_pod_t *p, const sim_req_t *r)
{
    p->q[Q_SGL_RETRACT_RECENT] += 1;
    p->q[Q_SGL_RETRACT_IN_TOK] += r->prompt;
    p->q[Q_SGL_RETRACT_OUT_TOK] += floor(r->gen);
}

void sim__sglang_on_finish(sim_pod_t *p, const sim_req_t *r, int reason)
{
    p->q[Q_SGL_REQUESTS] += 1;
    if (reason == 2 || reason == 3) p->q[Q_SGL_ABORTED] += 1;
    if (r->sched <= 0) return; /* aborted while queued: nothing processed */
    p->q[Q_SGL_PROMPT] += r->prompt;
    p->q[Q_SGL_GEN] += floor(r->gen);
    p->q[Q_SGL_CACHED] += r->hit_tok;
}

void sim__sglang_publish(sim_fleet_t *f, sim_pod_t *p, double kv_usage, int used_blocks)
{
    (void)f;
    (void)kv_usage;
    p->q[Q_SGL_USED_TOKENS] = (double)used_blocks * SGL_BLOCK_TOKENS;
    p->q[Q_SGL_MAX_TOKENS] = (double)p->blocks_total * SGL_BLOCK_TOKENS;
    p->q[Q_SGL_GEN_TPUT] = p->last_gen_rate;
    p->q[Q_SGL_CACHE_HIT_RATE] =
        p->q[Q_PREFIX_QUERIES] > 0 ? p->q[Q_PREFIX_HITS] / p->q[Q_PREFIX_QUERIES] : 0;
}

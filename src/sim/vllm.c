/* vllm.c — a simulated vLLM engine: its exposition template and its scheduler.
 *
 * Template: the families of the chosen version, in registration order, with the
 * names, help texts, label sets and buckets of the catalog (catalog/catalog_data.h), as
 * prometheus_client prints them (counters as `_total` plus a `_created` gauge
 * family, histograms as buckets, _count, _sum, then `_created`).
 *
 * Engine: continuous batching with a batch limit (max_num_seqs) and a KV cache
 * of num_gpu_blocks blocks of 16 tokens. Requests arrive (Poisson, daily shape,
 * bursts), wait (reason capacity, or deferred until a release time), are
 * admitted when a slot and blocks for their prompt are free, prefill in chunks,
 * then decode one token per engine step. A step lasts as long as the slower of
 * compute (2 x params x tokens / FLOP/s) and memory traffic (weights + the KV of
 * every running request / bandwidth), plus host overhead. When the cache is
 * full the newest request is preempted (recompute) and goes back to the queue.
 * Shared prompt prefixes stay cached while their blocks are not evicted, which
 * drives prefix-cache hits (in tokens). One tick advances the pod through
 * sub-steps that end at arrivals, prefill completions and request completions,
 * so the cost is per event, not per engine step. */
#include "util/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/vllm_int.h"

#define BLOCK_TOKENS 16
#define NGROUPS      32
#define MAX_SUBSTEPS 96
#define WAIT_CAP     20000

/* ---- Versions ---- */

bool sim__parse_version(const char *s, uint32_t *out)
{
    if (!s || !*s || strcmp(s, "latest") == 0 || strcmp(s, "current") == 0) {
        *out = LLM_V(0, 27, 1);
        return true;
    }
    if (*s == 'v') s++;
    unsigned long part[3] = {0, 0, 0};
    int n = 0;
    const char *p = s;
    while (n < 3) {
        char *end;
        if (*p < '0' || *p > '9') return false;
        part[n++] = strtoul(p, &end, 10);
        p = end;
        if (*p == '.')
            p++;
        else
            break;
    }
    if (*p != '\0' && *p != '-' && *p != '+' && *p != 'r' && *p != 'p') return false;
    if (part[0] > 99 || part[1] > 999 || part[2] > 999) return false;
    *out = LLM_V(part[0], part[1], part[2]);
    return true;
}

/* ---- Template building ---- */

typedef struct bld {
    sim_tpl_t *t;
    sim_vllm_layout_t *lay;
    bool first; /* filling the layout */
    uint32_t ver;
    sim_label_t base[2];
    int nbase;
} bld_t;

static void lay_scal(bld_t *b, int q, int vidx)
{
    if (b->first) sim__lay_bind(b->lay, q, vidx);
}

void sim__lay_bind(sim_vllm_layout_t *l, int q, int vidx)
{
    if (l->nscal == l->capscal) {
        l->capscal = l->capscal ? l->capscal * 2 : 64;
        l->scal = im_realloc(l->scal, sizeof *l->scal * (size_t)l->capscal);
    }
    l->scal[l->nscal].q = q;
    l->scal[l->nscal].vidx = vidx;
    l->nscal++;
}

static void lay_created(bld_t *b, int vidx)
{
    if (!b->first) return;
    sim_vllm_layout_t *l = b->lay;
    if (l->ncreated == l->capcreated) {
        l->capcreated = l->capcreated ? l->capcreated * 2 : 64;
        l->created = im_realloc(l->created, sizeof *l->created * (size_t)l->capcreated);
    }
    l->created[l->ncreated++] = vidx;
}

static int labels_with(bld_t *b, sim_label_t *out, const sim_label_t *extra, int nextra)
{
    int n = 0;
    for (int i = 0; i < b->nbase; i++) out[n++] = b->base[i];
    for (int i = 0; i < nextra; i++) out[n++] = extra[i];
    return n;
}

static void strip_total(const char *name, char *out, size_t cap)
{
    size_t n = strlen(name);
    if (n > 6 && strcmp(name + n - 6, "_total") == 0) n -= 6;
    if (n >= cap) n = cap - 1;
    memcpy(out, name, n);
    out[n] = '\0';
}

/* The labels of series i into ls: the base labels (with_base) and the i-th
 * nextra of extra (NULL when nextra is 0). */
static int series_labels(bld_t *b, sim_label_t *ls, const sim_label_t *extra, int i, int nextra,
                         bool with_base)
{
    const sim_label_t *x = nextra ? extra + i * nextra : NULL;
    if (with_base) return labels_with(b, ls, x, nextra);
    for (int j = 0; j < nextra; j++) ls[j] = x[j];
    return nextra;
}

/* A python gauge family with one series per label combination. */
static void py_gauge(bld_t *b, const char *name, const char *help, const sim_label_t *extra,
                     int nextra_per, int nseries, const int *qs, bool with_base)
{
    sim__tpl_family(b->t, name, "gauge", help, name, "gauge", SIM_FMT_PY);
    for (int i = 0; i < nseries; i++) {
        sim_label_t ls[16];
        int n = series_labels(b, ls, extra, i, nextra_per, with_base);
        int vidx = sim__tpl_series(b->t, name, ls, n, -1, -1);
        lay_scal(b, qs[i], vidx);
    }
}

/* A python counter: `<name>_total` and its `_created` gauge family. */
static void py_counter(bld_t *b, const char *fname, const char *help, const sim_label_t *extra,
                       int nextra_per, int nseries, const int *qs, bool with_base,
                       const int *present_q)
{
    char base[160], tot[170], cre[170];
    strip_total(fname, base, sizeof base);
    snprintf(tot, sizeof tot, "%s_total", base);
    snprintf(cre, sizeof cre, "%s_created", base);
    int pres[16];
    sim__tpl_family(b->t, tot, "counter", help, base, "counter", SIM_FMT_PY);
    for (int i = 0; i < nseries; i++) {
        sim_label_t ls[16];
        int n = series_labels(b, ls, extra, i, nextra_per, with_base);
        int vidx = sim__tpl_series(b->t, tot, ls, n, -1, -1);
        /* Lazily created series: present once non-zero (index of itself). */
        if (present_q && present_q[i]) b->t->series[b->t->nseries - 1].present_idx = vidx;
        pres[i] = present_q && present_q[i] ? vidx : -1;
        lay_scal(b, qs[i], vidx);
    }
    sim__tpl_family(b->t, cre, "gauge", help, NULL, NULL, SIM_FMT_PY);
    for (int i = 0; i < nseries; i++) {
        sim_label_t ls[16];
        int n = series_labels(b, ls, extra, i, nextra_per, with_base);
        int vidx = sim__tpl_series(b->t, cre, ls, n, -1, pres[i]);
        lay_created(b, vidx);
    }
}

/* One histogram label set: buckets, _count, _sum. Returns the handle. */
static sim_hist_t py_hist_series(bld_t *b, const char *name, const double *bounds, int nb,
                                 const sim_label_t *extra, int nextra, bool lazy)
{
    char bn[170], cn[170], sn[170], le[64];
    snprintf(bn, sizeof bn, "%s_bucket", name);
    snprintf(cn, sizeof cn, "%s_count", name);
    snprintf(sn, sizeof sn, "%s_sum", name);
    sim_hist_t h = {.nb = nb, .bounds = bounds};
    h.base = b->t->nvalues;
    for (int i = 0; i <= nb; i++) sim__tpl_value(b->t);
    sim__tpl_value(b->t);
    int pres = lazy ? h.base + nb : -1;
    sim_label_t ls[16];
    for (int i = 0; i <= nb; i++) {
        int n = labels_with(b, ls, extra, nextra);
        if (i < nb)
            le[sim__fmt_pyrepr(bounds[i], le)] = '\0';
        else
            memcpy(le, "+Inf", 5);
        ls[n++] = (sim_label_t){"le", le};
        sim__tpl_series(b->t, bn, ls, n, h.base + i, pres);
    }
    int n = labels_with(b, ls, extra, nextra);
    sim__tpl_series(b->t, cn, ls, n, h.base + nb, pres);
    sim__tpl_series(b->t, sn, ls, n, h.base + nb + 1, pres);
    sim__tpl_group(b->t, nb + 3);
    return h;
}

static void lay_hist(bld_t *b, int hid, sim_hist_t h)
{
    if (!b->first) return;
    sim_vllm_layout_t *l = b->lay;
    if (l->nhist[hid] < SIM_MAX_HIST_BIND) l->hist[hid][l->nhist[hid]++] = h;
}

static void py_created_family(bld_t *b, const char *name, const char *help,
                              const sim_label_t *const *extras, const int *nextras, int nsets,
                              const int *pres)
{
    char cre[170];
    snprintf(cre, sizeof cre, "%s_created", name);
    sim__tpl_family(b->t, cre, "gauge", help, NULL, NULL, SIM_FMT_PY);
    for (int i = 0; i < nsets; i++) {
        sim_label_t ls[16];
        int n = labels_with(b, ls, extras[i], nextras[i]);
        int vidx = sim__tpl_series(b->t, cre, ls, n, -1, pres ? pres[i] : -1);
        lay_created(b, vidx);
    }
}

static void py_hist(bld_t *b, const char *name, const char *help, const double *bounds, int nb,
                    int hid, bool lazy)
{
    sim__tpl_family(b->t, name, "histogram", help, name, "histogram", SIM_FMT_PY);
    sim_hist_t h = py_hist_series(b, name, bounds, nb, NULL, 0, lazy);
    lay_hist(b, hid, h);
    const sim_label_t *ex[1] = {NULL};
    int nex[1] = {0};
    int pres[1] = {lazy ? h.base + nb : -1};
    py_created_family(b, name, help, ex, nex, 1, pres);
}

static const double v0_iter_buckets[] = {1,   2,   4,   8,   16,  24,  32,  40,  48,  56,  64,  72,
                                         80,  88,  96,  104, 112, 120, 128, 136, 144, 152, 160, 168,
                                         176, 184, 192, 200, 208, 216, 224, 232, 240, 248, 256};

/* Bucket bounds of a family at a version (older releases had shorter lists). */
static const double *family_bounds(const llm_cat_family_t *f, uint32_t ver, const double *b125,
                                   int nb125, int *nb)
{
    if (f->bucket_rule == LLM_CB_125) {
        *nb = nb125;
        return b125;
    }
    const double *bounds = f->buckets;
    int n = f->nbuckets;
    if (strcmp(f->name, "vllm:time_per_output_token_seconds") == 0 && ver >= LLM_V(0, 8, 4)) {
        const llm_cat_family_t *itl =
            llm_cat_find(llm_cat_vllm, llm_cat_vllm_len, "vllm:inter_token_latency_seconds");
        bounds = itl->buckets;
        n = itl->nbuckets;
    }
    if (strcmp(f->name, "vllm:iteration_tokens_total") == 0 && ver < LLM_V(0, 8, 5)) {
        *nb = (int)IM_ARRAY_LEN(v0_iter_buckets);
        return v0_iter_buckets;
    }
    if (ver < LLM_V(0, 8, 4) && n > 0) {
        double cut = 0;
        if (strcmp(f->name, "vllm:time_to_first_token_seconds") == 0)
            cut = 10.0;
        else if (bounds[n - 1] == 7680.0)
            cut = 60.0;
        if (cut > 0)
            while (n > 0 && bounds[n - 1] > cut) n--;
    }
    *nb = n;
    return bounds;
}

static const char *family_help(const llm_cat_family_t *f, uint32_t ver, bool v0, char *buf,
                               size_t cap)
{
    const char *h = v0 && f->help_v0 ? f->help_v0 : f->help;
    const char *dep = strstr(h, "DEPRECATED");
    if (dep && (f->deprecated_v == 0 || ver < f->deprecated_v)) {
        size_t n = (size_t)(dep - h);
        while (n > 0 && h[n - 1] == ' ') n--;
        if (n >= cap) n = cap - 1;
        memcpy(buf, h, n);
        buf[n] = '\0';
        return buf;
    }
    return h;
}

static bool family_in_version(const llm_cat_family_t *f, uint32_t ver, bool v0)
{
    if (!(f->flags & LLM_CF_DEFAULT)) return false;
    if ((f->flags & LLM_CF_V0_ONLY) && !v0) return false;
    if ((f->flags & LLM_CF_V1_ONLY) && v0) return false;
    if (f->first_v > ver) return false;
    if (f->removed_v != LLM_V_NONE && ver >= f->removed_v) return false;
    if (f->hidden_v != LLM_V_NONE && ver >= f->hidden_v) return false;
    return true;
}

typedef struct binding {
    const char *name;
    int q; /* scalar quantity, or -1 */
    int h; /* histogram, or -1 */
} binding_t;

/* The families of one label whose series have fixed values, each series a
 * quantity of its own. */
typedef struct labelled {
    const char *name, *label;
    const char *values[3];
    int qs[3];
    int n;
    bool counter;
} labelled_t;

static const labelled_t labelled[] = {
    {"vllm:num_requests_waiting_by_reason",
     "reason",
     {"capacity", "deferred"},
     {Q_WAIT_CAP, Q_WAIT_DEF},
     2,
     false},
    {"vllm:engine_sleep_state",
     "sleep_state",
     {"awake", "weights_offloaded", "discard_all"},
     {Q_ONE, Q_ZERO, Q_ZERO},
     3,
     false},
    {"vllm:prompt_tokens_by_source",
     "source",
     {"local_compute", "local_cache_hit", "external_kv_transfer"},
     {Q_SRC_COMPUTE, Q_CACHED, Q_ZERO},
     3,
     true},
};

static const binding_t bindings[] = {
    {"vllm:num_requests_running", Q_RUNNING, -1},
    {"vllm:num_requests_waiting", Q_WAITING, -1},
    {"vllm:num_requests_swapped", Q_ZERO, -1},
    {"vllm:kv_cache_usage_perc", Q_KV_USAGE, -1},
    {"vllm:gpu_cache_usage_perc", Q_KV_USAGE, -1},
    {"vllm:cpu_cache_usage_perc", Q_ZERO, -1},
    {"vllm:cpu_prefix_cache_hit_rate", Q_ZERO, -1},
    {"vllm:gpu_prefix_cache_hit_rate", Q_GPU_PREFIX_HIT_RATE, -1},
    {"vllm:avg_prompt_throughput_toks_per_s", Q_AVG_PROMPT_TPUT, -1},
    {"vllm:avg_generation_throughput_toks_per_s", Q_AVG_GEN_TPUT, -1},
    {"vllm:estimated_flops_per_gpu", Q_ZERO, -1},
    {"vllm:estimated_read_bytes_per_gpu", Q_ZERO, -1},
    {"vllm:estimated_write_bytes_per_gpu", Q_ZERO, -1},
    {"vllm:prefix_cache_queries", Q_PREFIX_QUERIES, -1},
    {"vllm:prefix_cache_hits", Q_PREFIX_HITS, -1},
    {"vllm:gpu_prefix_cache_queries", Q_PREFIX_QUERIES, -1},
    {"vllm:gpu_prefix_cache_hits", Q_PREFIX_HITS, -1},
    {"vllm:external_prefix_cache_queries", Q_ZERO, -1},
    {"vllm:external_prefix_cache_hits", Q_ZERO, -1},
    {"vllm:mm_cache_queries", Q_ZERO, -1},
    {"vllm:mm_cache_hits", Q_ZERO, -1},
    {"vllm:num_preemptions", Q_PREEMPT, -1},
    {"vllm:prompt_tokens", Q_PROMPT, -1},
    {"vllm:prompt_tokens_cached", Q_CACHED, -1},
    {"vllm:prompt_tokens_recomputed", Q_RECOMPUTED, -1},
    {"vllm:generation_tokens", Q_GEN, -1},
    {"vllm:tokens_total", Q_ZERO, -1}, /* declared but never incremented */
    {"vllm:request_prompt_tokens", -1, H_PROMPT_TOK},
    {"vllm:request_generation_tokens", -1, H_GEN_TOK},
    {"vllm:iteration_tokens_total", -1, H_ITER_TOK},
    {"vllm:request_max_num_generation_tokens", -1, H_MAX_GEN},
    {"vllm:request_params_n", -1, H_PARAMS_N},
    {"vllm:request_params_best_of", -1, H_BEST_OF},
    {"vllm:request_params_max_tokens", -1, H_MAX_TOKENS},
    {"vllm:time_to_first_token_seconds", -1, H_TTFT},
    {"vllm:inter_token_latency_seconds", -1, H_ITL},
    {"vllm:time_per_output_token_seconds", -1, H_ITL},
    {"vllm:request_time_per_output_token_seconds", -1, H_TPOT_REQ},
    {"vllm:e2e_request_latency_seconds", -1, H_E2E},
    {"vllm:request_queue_time_seconds", -1, H_QUEUE},
    {"vllm:time_in_queue_requests", -1, H_QUEUE},
    {"vllm:request_inference_time_seconds", -1, H_INFER},
    {"vllm:request_prefill_time_seconds", -1, H_PREFILL},
    {"vllm:request_decode_time_seconds", -1, H_DECODE},
    {"vllm:request_prefill_kv_computed_tokens", -1, H_KV_COMPUTED},
    {"vllm:model_forward_time_milliseconds", -1, H_FWD_MS},
    {"vllm:model_execute_time_milliseconds", -1, H_EXEC_MS},
};

static void build_process(bld_t *b)
{
    static const char *gen[3] = {"0", "1", "2"};
    sim_label_t ex[3];
    for (int i = 0; i < 3; i++) ex[i] = (sim_label_t){"generation", gen[i]};
    /* prometheus_client's platform collectors (no _created: they are custom). */
    struct {
        const char *name, *type, *help;
        int q[3];
        int n;
    } fams[] = {
        {"python_gc_objects_collected_total",
         "counter",
         "Objects collected during gc",
         {Q_GC0, Q_GC1, Q_GC2},
         3},
        {"python_gc_objects_uncollectable_total",
         "counter",
         "Uncollectable objects found during GC",
         {Q_ZERO, Q_ZERO, Q_ZERO},
         3},
        {"python_gc_collections_total",
         "counter",
         "Number of times this generation was collected",
         {Q_GCC0, Q_GCC1, Q_GCC2},
         3},
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(fams); i++) {
        char om[96];
        strip_total(fams[i].name, om, sizeof om);
        sim__tpl_family(b->t, fams[i].name, fams[i].type, fams[i].help, om, "counter", SIM_FMT_PY);
        for (int j = 0; j < fams[i].n; j++) {
            int vidx = sim__tpl_series(b->t, fams[i].name, &ex[j], 1, -1, -1);
            lay_scal(b, fams[i].q[j], vidx);
        }
    }
    sim_label_t pi[5] = {{"implementation", "CPython"},
                         {"major", "3"},
                         {"minor", "12"},
                         {"patchlevel", "11"},
                         {"version", "3.12.11"}};
    int one = Q_ONE;
    py_gauge(b, "python_info", "Python platform information", pi, 5, 1, &one, false);
    struct {
        const char *name, *type, *help;
        int q;
    } pf[] = {
        {"process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", Q_PROC_VMEM},
        {"process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", Q_PROC_RSS},
        {"process_start_time_seconds", "gauge",
         "Start time of the process since unix epoch in seconds.", Q_PROC_START},
        {"process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
         Q_PROC_CPU},
        {"process_open_fds", "gauge", "Number of open file descriptors.", Q_PROC_FDS},
        {"process_max_fds", "gauge", "Maximum number of open file descriptors.", Q_PROC_MAXFDS},
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(pf); i++) {
        char om[96];
        bool ctr = strcmp(pf[i].type, "counter") == 0;
        if (ctr)
            strip_total(pf[i].name, om, sizeof om);
        else
            snprintf(om, sizeof om, "%s", pf[i].name);
        sim__tpl_family(b->t, pf[i].name, pf[i].type, pf[i].help, om, pf[i].type, SIM_FMT_PY);
        int vidx = sim__tpl_series(b->t, pf[i].name, NULL, 0, -1, -1);
        lay_scal(b, pf[i].q, vidx);
    }
}

static void build_cache_config(bld_t *b, const llm_cat_family_t *f, const sim_model_spec_t *m)
{
    char blocks[32], tokens[32], conc[32];
    snprintf(blocks, sizeof blocks, "%d", m->num_gpu_blocks);
    snprintf(tokens, sizeof tokens, "%d", m->num_gpu_blocks * BLOCK_TOKENS);
    snprintf(conc, sizeof conc, "%.2f",
             (double)m->num_gpu_blocks * BLOCK_TOKENS / (double)m->max_model_len);
    /* The label set is one label per CacheConfig field, which changes between
     * versions; three representative sets (current, early V1, V0). */
    sim_label_t cur[] = {
        {"block_size", "16"},
        {"cache_dtype", "auto"},
        {"enable_prefix_caching", "True"},
        {"gpu_memory_utilization", "0.9"},
        {"is_attention_free", "False"},
        {"kv_cache_dtype_skip_layers", "[]"},
        {"kv_cache_max_concurrency", conc},
        {"kv_cache_memory_bytes", "None"},
        {"kv_cache_size_tokens", tokens},
        {"kv_offloading_backend", "native"},
        {"kv_offloading_size", "None"},
        {"kv_sharing_fast_prefill", "False"},
        {"mamba_block_size", "None"},
        {"mamba_cache_dtype", "auto"},
        {"mamba_cache_mode", "none"},
        {"mamba_page_size_padded", "None"},
        {"mamba_ssm_cache_dtype", "auto"},
        {"num_cpu_blocks", "None"},
        {"num_gpu_blocks", blocks},
        {"num_gpu_blocks_override", "None"},
        {"prefix_cache_retention_interval", "0"},
        {"prefix_caching_hash_algo", "sha256"},
        {"prefix_match_unit", "16"},
        {"replayssm_buffer_len", "None"},
        {"skip_page_size_padded", "None"},
        {"sliding_window", "None"},
        {"use_kda_recoverssm", "False"},
        {"use_replayssm", "False"},
        {"user_specified_block_size", "False"},
        {"user_specified_mamba_block_size", "False"},
    };
    sim_label_t v1[] = {
        {"block_size", "16"},
        {"cache_dtype", "auto"},
        {"calculate_kv_scales", "False"},
        {"cpu_offload_gb", "0"},
        {"enable_prefix_caching", "True"},
        {"gpu_memory_utilization", "0.9"},
        {"is_attention_free", "False"},
        {"num_cpu_blocks", "None"},
        {"num_gpu_blocks", blocks},
        {"num_gpu_blocks_override", "None"},
        {"prefix_caching_hash_algo", "builtin"},
        {"sliding_window", "None"},
        {"swap_space", "4"},
    };
    sim_label_t v0[] = {
        {"block_size", "16"},
        {"cache_dtype", "auto"},
        {"cpu_offload_gb", "0"},
        {"enable_prefix_caching", "False"},
        {"gpu_memory_utilization", "0.9"},
        {"is_attention_free", "False"},
        {"num_cpu_blocks", "2048"},
        {"num_gpu_blocks", blocks},
        {"num_gpu_blocks_override", "None"},
        {"sliding_window", "None"},
        {"swap_space_bytes", "4294967296"},
    };
    const sim_label_t *ls = cur;
    int n = (int)IM_ARRAY_LEN(cur);
    if (b->lay->v0) {
        ls = v0;
        n = (int)IM_ARRAY_LEN(v0);
    } else if (b->ver < LLM_V(0, 20, 0)) {
        ls = v1;
        n = (int)IM_ARRAY_LEN(v1);
    }
    sim_label_t all[40];
    int k = 0;
    for (int i = 0; i < n; i++) all[k++] = ls[i];
    if (!b->lay->v0 && b->ver >= LLM_V(0, 8, 3)) all[k++] = (sim_label_t){"engine", "0"};
    sim__tpl_family(b->t, "vllm:cache_config_info", "gauge",
                    "Information of the LLMEngine CacheConfig", "vllm:cache_config_info", "gauge",
                    SIM_FMT_PY);
    int vidx = sim__tpl_series(b->t, "vllm:cache_config_info", all, k, -1, -1);
    lay_scal(b, Q_ONE, vidx);
    (void)f;
}

static void build_http(bld_t *b)
{
    const llm_cat_family_t *f;
    int save = b->nbase;
    b->nbase = 0; /* the instrumentator's metrics carry no model labels */
    f = llm_cat_find(llm_cat_vllm, llm_cat_vllm_len, "http_requests");
    {
        sim_label_t ex[] = {
            {"handler", "/v1/models"},           {"method", "GET"},  {"status", "2xx"},
            {"handler", "/v1/chat/completions"}, {"method", "POST"}, {"status", "2xx"},
            {"handler", "/v1/chat/completions"}, {"method", "POST"}, {"status", "4xx"},
            {"handler", "/v1/chat/completions"}, {"method", "POST"}, {"status", "5xx"}};
        int qs[] = {Q_HTTP_MODELS_2XX, Q_HTTP_CHAT_2XX, Q_HTTP_CHAT_4XX, Q_HTTP_CHAT_5XX};
        int pres[] = {0, 0, 1, 1};
        py_counter(b, "http_requests", f->help, ex, 3, 4, qs, false, pres);
    }
    static const char *const sz[2] = {"http_request_size_bytes", "http_response_size_bytes"};
    for (int s = 0; s < 2; s++) {
        f = llm_cat_find(llm_cat_vllm, llm_cat_vllm_len, sz[s]);
        char cn[64], sn[64];
        snprintf(cn, sizeof cn, "%s_count", sz[s]);
        snprintf(sn, sizeof sn, "%s_sum", sz[s]);
        sim__tpl_family(b->t, sz[s], "summary", f->help, sz[s], "summary", SIM_FMT_PY);
        sim_label_t hm = {"handler", "/v1/models"}, hc = {"handler", "/v1/chat/completions"};
        int q_m = s ? Q_HTTP_RESPSZ_MODELS_SUM : Q_HTTP_REQSZ_MODELS_SUM;
        int q_c = s ? Q_HTTP_RESPSZ_CHAT_SUM : Q_HTTP_REQSZ_CHAT_SUM;
        lay_scal(b, Q_HTTP_MODELS_2XX, sim__tpl_series(b->t, cn, &hm, 1, -1, -1));
        lay_scal(b, q_m, sim__tpl_series(b->t, sn, &hm, 1, -1, -1));
        lay_scal(b, Q_HTTP_CHAT_2XX, sim__tpl_series(b->t, cn, &hc, 1, -1, -1));
        lay_scal(b, q_c, sim__tpl_series(b->t, sn, &hc, 1, -1, -1));
        sim__tpl_group(b->t, 2);
        const sim_label_t *ex[2] = {&hm, &hc};
        int nex[2] = {1, 1};
        py_created_family(b, sz[s], f->help, ex, nex, 2, NULL);
    }
    f = llm_cat_find(llm_cat_vllm, llm_cat_vllm_len, "http_request_duration_highr_seconds");
    py_hist(b, f->name, f->help, f->buckets, f->nbuckets, H_HTTP_HIGHR, false);
    f = llm_cat_find(llm_cat_vllm, llm_cat_vllm_len, "http_request_duration_seconds");
    {
        sim__tpl_family(b->t, f->name, "histogram", f->help, f->name, "histogram", SIM_FMT_PY);
        sim_label_t em[2] = {{"handler", "/v1/models"}, {"method", "GET"}};
        sim_label_t ec[2] = {{"handler", "/v1/chat/completions"}, {"method", "POST"}};
        lay_hist(b, H_HTTP_DUR_MODELS,
                 py_hist_series(b, f->name, f->buckets, f->nbuckets, em, 2, false));
        lay_hist(b, H_HTTP_DUR_CHAT,
                 py_hist_series(b, f->name, f->buckets, f->nbuckets, ec, 2, false));
        const sim_label_t *ex[2] = {em, ec};
        int nex[2] = {2, 2};
        py_created_family(b, f->name, f->help, ex, nex, 2, NULL);
    }
    b->nbase = save;
}

void sim__vllm_build(sim_tpl_t *t, sim_vllm_layout_t *lay, uint32_t ver, const sim_model_spec_t *m,
                     int gpus_per_pod, const double *b125, int nb125)
{
    (void)gpus_per_pod;
    bld_t b = {.t = t, .lay = lay, .first = lay->nvalues == 0, .ver = ver};
    bool v0 = ver < LLM_V(0, 8, 0);
    if (b.first) {
        lay->v0 = v0;
        lay->has_error_reason = !v0 && ver >= LLM_V(0, 13, 0);
        lay->has_rep_reason = !v0 && ver >= LLM_V(0, 18, 0);
        lay->http_chat_pres_4xx = lay->http_chat_pres_5xx = -1;
    }
    if (!v0 && ver >= LLM_V(0, 8, 3)) b.base[b.nbase++] = (sim_label_t){"engine", "0"};
    b.base[b.nbase++] = (sim_label_t){"model_name", m->name};

    build_process(&b);
    const char *const *order = v0 ? llm_cat_vllm_order_v0 : llm_cat_vllm_order_v1;
    char help[512];
    for (int i = 0; order[i]; i++) {
        const llm_cat_family_t *f = llm_cat_find(llm_cat_vllm, llm_cat_vllm_len, order[i]);
        if (!f || !family_in_version(f, ver, v0)) continue;
        const char *h = family_help(f, ver, v0, help, sizeof help);
        if (strcmp(f->name, "vllm:cache_config_info") == 0) {
            build_cache_config(&b, f, m);
            continue;
        }
        const labelled_t *lf = NULL;
        for (size_t j = 0; j < IM_ARRAY_LEN(labelled); j++)
            if (strcmp(labelled[j].name, f->name) == 0) lf = &labelled[j];
        if (lf) {
            sim_label_t ex[IM_ARRAY_LEN(lf->values)];
            for (int j = 0; j < lf->n; j++) ex[j] = (sim_label_t){lf->label, lf->values[j]};
            if (lf->counter)
                py_counter(&b, f->name, h, ex, 1, lf->n, lf->qs, true, NULL);
            else
                py_gauge(&b, f->name, h, ex, 1, lf->n, lf->qs, true);
            continue;
        }
        if (strcmp(f->name, "vllm:request_success") == 0) {
            sim_label_t ex[] = {{"finished_reason", "stop"},
                                {"finished_reason", "length"},
                                {"finished_reason", "abort"},
                                {"finished_reason", "error"},
                                {"finished_reason", "repetition"}};
            int qs[] = {Q_FIN_STOP, Q_FIN_LENGTH, Q_FIN_ABORT, Q_FIN_ERROR, Q_FIN_REP};
            int n = 3 + lay->has_error_reason + lay->has_rep_reason;
            /* V0 created the series on first use; V1 creates every reason at start. */
            int lazy[] = {1, 1, 1, 1, 1};
            py_counter(&b, f->name, h, ex, 1, n, qs, true, v0 ? lazy : NULL);
            continue;
        }
        const binding_t *bd = NULL;
        for (size_t j = 0; j < IM_ARRAY_LEN(bindings); j++)
            if (strcmp(bindings[j].name, f->name) == 0) bd = &bindings[j];
        if (!bd) continue;
        if (f->type == LLM_CT_GAUGE) {
            int q = bd->q;
            py_gauge(&b, f->name, h, NULL, 0, 1, &q, true);
        } else if (f->type == LLM_CT_COUNTER) {
            int q = bd->q;
            py_counter(&b, f->name, h, NULL, 0, 1, &q, true, NULL);
        } else if (f->type == LLM_CT_HISTOGRAM) {
            int nb;
            const double *bounds = family_bounds(f, ver, b125, nb125, &nb);
            py_hist(&b, f->name, h, bounds, nb, bd->h, v0);
        }
    }
    if (!v0) build_http(&b);
    if (b.first) lay->nvalues = t->nvalues;
}

void sim__vllm_layout_free(sim_vllm_layout_t *lay)
{
    im_free(lay->scal);
    im_free(lay->created);
    memset(lay, 0, sizeof *lay);
}

/* ---- Engine ---- */

#define PEAK_FLOPS   989e12 /* H100 SXM dense BF16 */
#define SM_CLOCK_MAX 1980.0 /* MHz, the boost clock PEAK_FLOPS is quoted at */
#define MEM_BW       3.35e12

static void hist_obs(sim_fleet_t *f, sim_pod_t *p, int hid, double x, double n)
{
    const sim_vllm_layout_t *lay = sim__pod_lay(f, p);
    for (int i = 0; i < lay->nhist[hid]; i++) sim__hist_observe(p->v, &lay->hist[hid][i], x, n);
}

void sim__pod_init(sim_fleet_t *f, sim_pod_t *p)
{
    const sim_model_spec_t *m = &f->specs[p->model];
    sim__rng_seed(&p->rng, f->o.seed * 1000003ULL + (uint64_t)p->index * 7919ULL + 17);
    const sim_vllm_layout_t *lay = sim__pod_lay(f, p);
    p->v = im_calloc((size_t)lay->nvalues, sizeof *p->v);
    p->k = f->sc.base;
    p->blocks_total = (int)(m->num_gpu_blocks * p->k.kv_factor);
    if (p->blocks_total < 64) p->blocks_total = 64;
    p->caprun = 1024;
    p->run = im_calloc((size_t)p->caprun, sizeof *p->run);
    p->capwait = 1024;
    p->wait = im_calloc((size_t)p->capwait, sizeof *p->wait);
    for (int g = 0; g < NGROUPS; g++) {
        double len = sim__rng_lognormal(&p->rng, 1, 0.6) * p->k.prefix_len;
        p->group_nb[g] = (int)(len / BLOCK_TOKENS);
    }
    /* The process started a while before the simulation. */
    double t0 = (double)f->t0_ms / 1000.0;
    p->start_s = t0 - 600 - sim__rng_unif(&p->rng) * 7200;
    double created = p->start_s + 40 + sim__rng_unif(&p->rng) * 20;
    for (int i = 0; i < lay->ncreated; i++)
        p->v[lay->created[i]] = created + 0.0003185 + i * 2.3e-5;
    p->q[Q_ONE] = 1;
    p->q[Q_PROC_START] = floor(p->start_s * 100) / 100;
    p->q[Q_PROC_VMEM] = 2.5374449664e10 + (double)(p->index % 7) * 4096 * 1024;
    p->q[Q_PROC_RSS] = 1.9e9 + (double)(p->index % 13) * 1048576;
    p->q[Q_PROC_FDS] = 87;
    p->q[Q_PROC_MAXFDS] = 1048576;
    p->q[Q_GC0] = 30000 + p->index % 100;
    p->q[Q_GC1] = 14000;
    p->q[Q_GC2] = 4000;
    p->q[Q_GCC0] = 2800;
    p->q[Q_GCC1] = 250;
    p->q[Q_GCC2] = 12;
    p->q[Q_PROC_CPU] = 60 + (t0 - p->start_s) * 0.01;
    /* Health probes and the router's model listing. */
    p->q[Q_HTTP_MODELS_2XX] = 3;
    p->q[Q_HTTP_RESPSZ_MODELS_SUM] = 1536;
    hist_obs(f, p, H_HTTP_DUR_MODELS, 0.0022, 3);
    hist_obs(f, p, H_HTTP_HIGHR, 0.0022, 3);
    sim__pod_publish(f, p);
}

void sim__pod_free(sim_pod_t *p)
{
    im_free(p->v);
    im_free(p->run);
    im_free(p->wait);
}

static double daily_shape(double t_s, double amp)
{
    /* Peak at 15:00 UTC, trough at 03:00 UTC. */
    double day = fmod(t_s, 86400.0) / 86400.0;
    return 1.0 - amp * 0.5 * (1 + cos(2 * M_PI * (day - 0.625)));
}

static int req_blocks(const sim_req_t *r, const sim_pod_t *p)
{
    double toks = r->prompt + r->gen - (r->cached > 0 ? r->cached : 0);
    (void)p;
    int b = (int)ceil(toks / BLOCK_TOKENS);
    return b < 1 ? 1 : b;
}

static int used_blocks(const sim_pod_t *p)
{
    int used = p->blocks_private;
    for (int g = 0; g < NGROUPS; g++)
        if (p->group_ref[g] > 0) used += p->group_nb[g];
    return used;
}

static void wait_push(sim_pod_t *p, const sim_req_t *r, bool front)
{
    if (p->nwait == p->capwait) {
        if (p->capwait >= WAIT_CAP) return; /* the queue is capped; the request is lost */
        int nc = p->capwait * 2;
        sim_req_t *nw = im_calloc((size_t)nc, sizeof *nw);
        for (int i = 0; i < p->nwait; i++) nw[i] = p->wait[(p->whead + i) % p->capwait];
        im_free(p->wait);
        p->wait = nw;
        p->whead = 0;
        p->capwait = nc;
    }
    if (front) {
        p->whead = (p->whead + p->capwait - 1) % p->capwait;
        p->wait[p->whead] = *r;
    } else {
        p->wait[(p->whead + p->nwait) % p->capwait] = *r;
    }
    p->nwait++;
}

static sim_req_t *wait_at(sim_pod_t *p, int i)
{
    return &p->wait[(p->whead + i) % p->capwait];
}

static void wait_remove(sim_pod_t *p, int i)
{
    /* Shift the entries before i right by one and advance the head: O(i), and
     * removals happen near the head (admission scans at most 64 entries). */
    for (int j = i; j > 0; j--) *wait_at(p, j) = *wait_at(p, j - 1);
    p->whead = (p->whead + 1) % p->capwait;
    p->nwait--;
}

static void finish(sim_fleet_t *f, sim_pod_t *p, sim_req_t *r, double t, int reason)
{
    /* reason: 0 stop, 1 length, 2 abort, 3 error, 4 repetition */
    sim_vllm_layout_t *lay = sim__pod_lay(f, p);
    if (reason == 3 && !lay->has_error_reason) reason = 2;
    if (sim__pod_sglang(f, p)) sim__sglang_on_finish(p, r, reason);
    static const int qr[5] = {Q_FIN_STOP, Q_FIN_LENGTH, Q_FIN_ABORT, Q_FIN_ERROR, Q_FIN_REP};
    p->q[qr[reason]] += 1;
    int gen = (int)r->gen;
    double e2e = t - r->arrival;
    bool scheduled = r->sched > 0;
    hist_obs(f, p, H_E2E, e2e, 1);
    if (scheduled || reason < 2) {
        double queue = r->sched - r->arrival;
        double first = r->first_tok > 0 ? r->first_tok : t;
        hist_obs(f, p, H_QUEUE, queue, 1);
        hist_obs(f, p, H_PREFILL, first - r->sched, 1);
        hist_obs(f, p, H_DECODE, t - first, 1);
        hist_obs(f, p, H_INFER, t - r->sched, 1);
        hist_obs(f, p, H_PROMPT_TOK, r->prompt, 1);
        hist_obs(f, p, H_GEN_TOK, gen, 1);
        hist_obs(f, p, H_KV_COMPUTED, r->prompt - r->hit_tok, 1);
        hist_obs(f, p, H_MAX_TOKENS, r->max_tokens, 1);
        if (gen > 1) hist_obs(f, p, H_TPOT_REQ, (t - first) / (gen - 1), 1);
        hist_obs(f, p, H_PREEMPT_REQ, r->preempted, 1);
    }
    /* HTTP: streaming chat completions; the duration is the whole request. */
    double reqsz = 400 + r->prompt * 4.2;
    p->q[Q_HTTP_REQSZ_CHAT_SUM] += floor(reqsz);
    if (reason == 3)
        p->q[Q_HTTP_CHAT_5XX] += 1;
    else
        p->q[Q_HTTP_CHAT_2XX] += 1;
    hist_obs(f, p, H_HTTP_DUR_CHAT, e2e + 0.0005, 1);
    hist_obs(f, p, H_HTTP_HIGHR, e2e + 0.0005, 1);
    p->q[Q_GC0] += 7;
    if ((int64_t)p->q[Q_GC0] % 11 == 0) p->q[Q_GCC0] += 1;
}

static void new_request(sim_fleet_t *f, sim_pod_t *p, double t)
{
    const sim_model_spec_t *m = &f->specs[p->model];
    sim_knobs_t *k = &p->k;
    sim_req_t r;
    memset(&r, 0, sizeof r);
    r.arrival = t;
    r.group = -1;
    int prompt = (int)sim__rng_lognormal(&p->rng, k->prompt_median, k->prompt_sigma);
    if (sim__rng_unif(&p->rng) < k->prefix_share) {
        /* Zipf-like popularity over the shared prefixes. */
        double u = sim__rng_unif(&p->rng);
        int g = (int)(pow(u, 2.2) * NGROUPS);
        if (g >= NGROUPS) g = NGROUPS - 1;
        r.group = g;
        int glen = p->group_nb[g] * BLOCK_TOKENS;
        if (prompt < glen + 16) prompt = glen + 16 + prompt / 4;
    }
    if (prompt < 4) prompt = 4;
    int max_tokens = 16384;
    double u = sim__rng_unif(&p->rng);
    if (u < 0.35)
        max_tokens = 1024;
    else if (u < 0.6)
        max_tokens = 2048;
    else if (u < 0.8)
        max_tokens = 4096;
    if (prompt > m->max_model_len - 64) prompt = m->max_model_len - 64;
    if (prompt > p->blocks_total * BLOCK_TOKENS / 4) prompt = p->blocks_total * BLOCK_TOKENS / 4;
    if (max_tokens > m->max_model_len - prompt) max_tokens = m->max_model_len - prompt;
    int target = (int)sim__rng_lognormal(&p->rng, k->output_median, k->output_sigma) + 1;
    if (target > max_tokens) target = max_tokens;
    r.prompt = prompt;
    r.max_tokens = max_tokens;
    r.target = target;
    if (sim__rng_unif(&p->rng) < k->deferred_frac)
        r.defer_until = t + sim__rng_exp(&p->rng, k->deferred_s);
    r.patience_at =
        t + (k->patience_sigma > 0 ? sim__rng_lognormal(&p->rng, k->patience_s, k->patience_sigma)
                                   : sim__rng_exp(&p->rng, k->patience_s));
    if (k->timeout_s > 0) r.deadline = t + k->timeout_s;
    double uf = sim__rng_unif(&p->rng);
    if (uf < k->error_frac) {
        r.fate = 2;
        r.fail_at = sim__rng_unif(&p->rng) * target;
    } else if (uf < k->error_frac + k->abort_frac) {
        r.fate = 1;
        r.fail_at = sim__rng_unif(&p->rng) * target;
    }
    hist_obs(f, p, H_MAX_GEN, max_tokens, 1);
    hist_obs(f, p, H_PARAMS_N, 1, 1);
    hist_obs(f, p, H_BEST_OF, 1, 1);
    wait_push(p, &r, false);
}

/* Evicts unreferenced cached prefixes until `need` blocks are free. */
static bool make_room(sim_pod_t *p, int need)
{
    int used = used_blocks(p);
    while (used + p->res_blocks + need > p->blocks_total) {
        int victim = -1;
        for (int g = 0; g < NGROUPS; g++)
            if (p->group_res[g] && p->group_ref[g] == 0 &&
                (victim < 0 || p->group_last[g] < p->group_last[victim]))
                victim = g;
        if (victim < 0) break;
        p->group_res[victim] = false;
        p->res_blocks -= p->group_nb[victim];
    }
    return used + p->res_blocks + need <= p->blocks_total;
}

static void admit(sim_fleet_t *f, sim_pod_t *p, double t, int *admitted_budget)
{
    (void)f;
    int max_seqs = (int)p->k.max_num_seqs;
    if (max_seqs > p->caprun) max_seqs = p->caprun;
    /* With a token budget per step (max_num_batched_tokens), the scheduler
     * serves the running requests first (one token per decode, the prefill
     * chunks) and admits waiting ones only while budget is left. */
    double tok_budget = p->k.max_num_batched_tokens, tok_used = 0;
    if (tok_budget > 0)
        for (int i = 0; i < p->nrun; i++)
            tok_used += p->run[i].prefill_left > 0 ? p->run[i].prefill_left : 1;
    int scanned = 0;
    for (int i = 0; i < p->nwait && p->nrun < max_seqs && scanned < 64; scanned++) {
        sim_req_t *r = wait_at(p, i);
        if (r->defer_until > t) {
            i++; /* deferred requests are skipped, not head-of-line blocking */
            continue;
        }
        if (*admitted_budget <= 0) break;
        if (tok_budget > 0 && tok_used >= tok_budget) break;
        int g = r->group;
        bool hit = g >= 0 && p->group_res[g];
        int gb = g >= 0 ? p->group_nb[g] : 0;
        int tokens = r->prompt + (int)r->gen;
        int hit_tok = hit ? gb * BLOCK_TOKENS : 0;
        if (hit_tok >= tokens) hit_tok = tokens - 1; /* the last token is always computed */
        int need = (int)ceil((double)(tokens - gb * BLOCK_TOKENS) / BLOCK_TOKENS) + 1;
        if (g >= 0 && p->group_ref[g]++ == 0 && hit) p->res_blocks -= gb;
        if (!make_room(p, need)) {
            if (g >= 0 && --p->group_ref[g] == 0 && hit) p->res_blocks += gb;
            break; /* FCFS: the head of the line waits for capacity */
        }
        sim_req_t req = *r;
        wait_remove(p, i);
        (*admitted_budget)--;
        if (g >= 0) {
            p->group_res[g] = true;
            p->group_last[g] = t;
        }
        if (req.preempted == 0) {
            p->q[Q_PREFIX_QUERIES] += req.prompt;
            p->q[Q_PREFIX_HITS] += hit_tok;
            p->q[Q_CACHED] += hit_tok;
            p->q[Q_PROMPT] += req.prompt;
            p->q[Q_SRC_COMPUTE] += req.prompt - hit_tok;
            req.hit_tok = hit_tok;
            req.sched = t;
        } else {
            p->q[Q_RECOMPUTED] += (int)req.gen;
        }
        req.cached = gb * BLOCK_TOKENS;
        req.prefill_left = tokens - hit_tok;
        tok_used += req.prefill_left;
        p->blocks_private += req_blocks(&req, p);
        p->run[p->nrun++] = req;
    }
}

static void release(sim_pod_t *p, sim_req_t *r)
{
    p->blocks_private -= req_blocks(r, p);
    if (r->group >= 0 && --p->group_ref[r->group] == 0 && p->group_res[r->group])
        p->res_blocks += p->group_nb[r->group];
}

static void remove_running(sim_pod_t *p, int i)
{
    p->run[i] = p->run[--p->nrun];
}

void sim__pod_tick(sim_fleet_t *f, sim_pod_t *p, double t0, double dt)
{
    const sim_model_spec_t *m = &f->specs[p->model];
    sim_knobs_t *k = &p->k;
    int tp = f->o.gpus_per_pod;
    double t_end = t0 + dt;

    /* Arrivals for the whole tick. */
    double rate = k->rate * daily_shape(t0, k->daily_amp);
    if (k->burst_prob > 0 && sim__rng_unif(&p->rng) < k->burst_prob * dt / 60.0)
        rate *= k->burst_mult;
    int64_t na = sim__rng_poisson(&p->rng, rate * dt);
    if (na > 4096) na = 4096;
    double arr[4096];
    for (int64_t i = 0; i < na; i++) arr[i] = t0 + sim__rng_unif(&p->rng) * dt;
    /* insertion sort: na is small */
    for (int64_t i = 1; i < na; i++) {
        double x = arr[i];
        int64_t j = i - 1;
        while (j >= 0 && arr[j] > x) {
            arr[j + 1] = arr[j];
            j--;
        }
        arr[j + 1] = x;
    }
    int64_t ai = 0;

    /* Client aborts of requests still waiting (checked once per tick): patience
     * runs out before the first token, the client timeout at any point. */
    for (int i = 0; i < p->nwait;) {
        sim_req_t *r = wait_at(p, i);
        if ((r->patience_at <= t0 && r->preempted == 0) || (r->deadline > 0 && r->deadline <= t0)) {
            sim_req_t dead = *r;
            wait_remove(p, i);
            finish(f, p, &dead, t0, 2);
            continue;
        }
        i++;
    }

    double admit_budget_f = k->admit_per_s > 0 ? k->admit_per_s * dt + p->admit_credit : 1e9;
    int admit_budget = (int)admit_budget_f;
    double weights = m->weight_bytes / tp;
    double params = m->params / tp;
    double kvb = m->kv_bytes_per_tok / tp;
    double overhead = k->cpu_overhead_ms / 1000.0;
    double busy = 0, comp = 0, mem = 0, prefill_tok = 0, gen_tok = 0;
    double t = t0;
    /* a stalled scheduler admits and steps nothing: requests only arrive */
    double budget0 = k->max_num_batched_tokens > 0 ? k->max_num_batched_tokens : 8192;
    /* a slow replica's and a throttled GPU's kernels take longer (a lower SM
     * clock slows compute in proportion, memory-bound kernels half as much) */
    double slow = k->slowdown > 0 ? k->slowdown : 1;
    double clk = k->throttle > 0 && k->throttle_clock > 0 ? SM_CLOCK_MAX / k->throttle_clock : 1;
    for (int sub = 0; sub < MAX_SUBSTEPS && t < t_end && k->stall == 0; sub++) {
        while (ai < na && arr[ai] <= t) new_request(f, p, arr[ai++]);
        admit(f, p, t, &admit_budget);
        double next_arr = ai < na ? arr[ai] : t_end;
        if (p->nrun == 0) {
            t = next_arr; /* idle until the next arrival */
            continue;
        }
        /* One engine step: decode one token per decoding request, plus a chunk of
         * prefill (token budget 8192 per step). */
        int ndec = 0;
        double kv_tokens = 0, pre_left = 0;
        for (int i = 0; i < p->nrun; i++) {
            sim_req_t *r = &p->run[i];
            kv_tokens += r->prompt + r->gen;
            if (r->prefill_left > 0)
                pre_left += r->prefill_left;
            else
                ndec++;
        }
        double budget = budget0 - ndec;
        double pchunk = pre_left < budget ? pre_left : budget;
        if (pchunk < 0) pchunk = 0;
        double tc = 2 * params * (ndec + pchunk) / (PEAK_FLOPS * 0.55) * slow * clk;
        double tm = (weights + kv_tokens * kvb) / (MEM_BW * 0.8) * slow * (1 + 0.5 * (clk - 1));
        double ts = (tc > tm ? tc : tm) + overhead + 0.0004;
        /* Sub-step length: up to the next event. */
        double h = t_end - t;
        if (next_arr - t < h) h = next_arr - t;
        for (int i = 0; i < p->nrun && pchunk > 0; i++) {
            if (p->run[i].prefill_left <= 0) continue;
            double tp_fill = ceil(p->run[i].prefill_left / pchunk) * ts;
            if (tp_fill < h) h = tp_fill;
            break;
        }
        for (int i = 0; i < p->nrun; i++) {
            sim_req_t *r = &p->run[i];
            if (r->prefill_left > 0) continue;
            double left = (r->fate ? r->fail_at : r->target) - r->gen;
            if (left < 1) left = 1;
            if (left * ts < h) h = left * ts;
        }
        if (h < ts) h = ts;
        if (t + h > t_end) h = t_end - t;
        double steps = h / ts;
        busy += steps * (tc > tm ? tc : tm);
        comp += steps * tc;
        mem += steps * tm;
        /* Prefill progress, FIFO over the prefilling requests. */
        double pdone = pchunk * steps;
        prefill_tok += pdone;
        for (int i = 0; i < p->nrun && pdone > 0; i++) {
            sim_req_t *r = &p->run[i];
            if (r->prefill_left <= 0) continue;
            double d = r->prefill_left < pdone ? r->prefill_left : pdone;
            r->prefill_left -= d;
            pdone -= d;
            if (r->prefill_left <= 1e-9) {
                r->prefill_left = 0;
                if (r->first_tok == 0) {
                    r->first_tok = t + h;
                    hist_obs(f, p, H_TTFT, r->first_tok - r->arrival, 1);
                }
                if (r->gen < 1) {
                    /* the first token may need a block: keep the accounting exact */
                    int old_blocks = req_blocks(r, p);
                    r->gen = 1;
                    p->blocks_private += req_blocks(r, p) - old_blocks;
                }
            }
        }
        hist_obs(f, p, H_ITER_TOK, floor(ndec + pchunk), floor(steps + 0.5));
        /* Decode progress. */
        for (int i = 0; i < p->nrun; i++) {
            sim_req_t *r = &p->run[i];
            if (r->prefill_left > 0 || r->first_tok == 0) continue;
            double before = r->gen;
            int old_blocks = req_blocks(r, p);
            r->gen += steps;
            double lim = r->fate ? r->fail_at : r->target;
            if (r->gen > lim) r->gen = lim < 1 ? 1 : lim;
            double ntok = floor(r->gen) - floor(before);
            if (ntok > 0) {
                gen_tok += ntok;
                p->q[Q_GEN] += ntok;
                hist_obs(f, p, H_ITL, ts * (0.9 + 0.2 * sim__rng_unif(&p->rng)), ntok);
            }
            p->blocks_private += req_blocks(r, p) - old_blocks;
        }
        t += h;
        /* Completions. */
        for (int i = 0; i < p->nrun;) {
            sim_req_t *r = &p->run[i];
            double lim = r->fate ? r->fail_at : r->target;
            if (r->prefill_left <= 0 && r->first_tok > 0 && r->gen >= lim - 1e-9) {
                sim_req_t done = *r;
                release(p, r);
                remove_running(p, i);
                int reason = done.fate == 2                   ? 3
                             : done.fate == 1                 ? 2
                             : done.target >= done.max_tokens ? 1
                                                              : 0;
                finish(f, p, &done, t, reason);
                continue;
            }
            i++;
        }
        /* Preemption (recompute) while the cache is over-committed: newest first. */
        while (p->nrun > 0 && used_blocks(p) > p->blocks_total) {
            int victim = p->nrun - 1;
            if (sim__pod_sglang(f, p))
                victim = sim__sglang_victim(p); /* SGLang retracts, see sglang.c */
            else
                for (int i = 0; i < p->nrun; i++)
                    if (p->run[i].sched > p->run[victim].sched) victim = i;
            sim_req_t r = p->run[victim];
            release(p, &p->run[victim]);
            remove_running(p, victim);
            r.preempted++;
            r.prefill_left = 0;
            p->q[Q_PREEMPT] += 1;
            if (sim__pod_sglang(f, p)) sim__sglang_on_retract(p, &r);
            wait_push(p, &r, true);
        }
        if (make_room(p, 0) == false) {
            /* nothing more to evict */
        }
    }
    while (ai < na) new_request(f, p, arr[ai++]);
    if (k->admit_per_s > 0) {
        p->admit_credit = admit_budget_f - (int)admit_budget_f;
    }
    /* GPU activity over the tick. */
    p->busy_s = busy;
    p->comp_s = comp;
    p->mem_s = mem;
    double bf = busy / dt;
    if (bf > 1) bf = 1;
    double cf = comp + mem > 0 ? comp / (comp + mem) : 0;
    double mf = comp + mem > 0 ? mem / (comp + mem) : 0;
    p->gpu_util = 100 * bf * (0.25 + 0.75 * (3 * cf > 1 ? 1 : 3 * cf));
    p->mem_util = 100 * bf * mf * 0.92;
    p->sm_active = bf * 0.95;
    p->tensor_active = bf * cf * 0.85;
    p->dram_active = bf * mf * 0.8;
    p->prefill_tok_s = prefill_tok / dt;
    p->tokens_s = gen_tok / dt;
    p->last_prompt_rate = prefill_tok / dt;
    p->last_gen_rate = gen_tok / dt;
    p->q[Q_PROC_CPU] += dt * (0.08 + 0.6 * (1 - bf) * (p->nrun > 0)) + gen_tok * 2e-5;
    p->q[Q_GC1] += gen_tok > 0 ? 1 : 0;
    p->q[Q_GCC1] += (int64_t)t0 % 97 == 0 ? 1 : 0;
}

void sim__pod_publish(sim_fleet_t *f, sim_pod_t *p)
{
    int cap = 0, def = 0;
    double t = (double)f->now_ms / 1000.0;
    for (int i = 0; i < p->nwait; i++) {
        if (wait_at(p, i)->defer_until > t)
            def++;
        else
            cap++;
    }
    p->q[Q_RUNNING] = p->nrun;
    p->q[Q_WAITING] = p->nwait;
    p->q[Q_WAIT_CAP] = cap;
    p->q[Q_WAIT_DEF] = def;
    /* a share of blocks in use: never outside [0, 1] */
    double kv = (double)used_blocks(p) / (double)p->blocks_total;
    p->q[Q_KV_USAGE] = kv < 0 ? 0 : kv > 1 ? 1 : kv;
    p->q[Q_GPU_PREFIX_HIT_RATE] =
        p->q[Q_PREFIX_QUERIES] > 0 ? p->q[Q_PREFIX_HITS] / p->q[Q_PREFIX_QUERIES] : 0;
    p->q[Q_AVG_PROMPT_TPUT] = floor(p->last_prompt_rate * 10) / 10;
    p->q[Q_AVG_GEN_TPUT] = floor(p->last_gen_rate * 10) / 10;
    if (sim__pod_sglang(f, p)) sim__sglang_publish(f, p, p->q[Q_KV_USAGE], used_blocks(p));
    const sim_vllm_layout_t *lay = sim__pod_lay(f, p);
    for (int i = 0; i < lay->nscal; i++) p->v[lay->scal[i].vidx] = p->q[lay->scal[i].q];
    p->q[Q_SGL_RETRACT_RECENT] = 0;
}

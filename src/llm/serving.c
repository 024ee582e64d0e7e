/* serving.c — the serving model (serving.h): parses the embedded
 * catalog/serving-signals.tsv once, resolves "=catalog" cells through the
 * catalog, derives the Ray Serve rows from vLLM's, and detects engines and the
 * vLLM version window from a set of names. */
#include "util/base.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "catalog/catalog_data.h"
#include "llm/serving.h"
#include "util/mem.h"

#define MAX_MAPS 512

static const char *const g_signal_ids[LLM_SIG_COUNT] = {"waiting",
                                                        "waiting_by_reason",
                                                        "running",
                                                        "kv_usage",
                                                        "preemptions",
                                                        "ttft",
                                                        "itl",
                                                        "tpot",
                                                        "e2e",
                                                        "queue_time",
                                                        "prefill_time",
                                                        "decode_time",
                                                        "prompt_tokens",
                                                        "generation_tokens",
                                                        "cached_tokens",
                                                        "prefix_queries",
                                                        "prefix_hits",
                                                        "prefix_hit_rate",
                                                        "requests_finished",
                                                        "requests_failed",
                                                        "preemptions_per_request",
                                                        "max_seqs",
                                                        "kv_capacity",
                                                        "gpu_util",
                                                        "gpu_sm_active",
                                                        "gpu_mem_copy",
                                                        "gpu_fb_used",
                                                        "gpu_power",
                                                        "quota_pending",
                                                        "quota_admitted",
                                                        "gpu_xid",
                                                        "gpu_row_remap_failure",
                                                        "gpu_power_violation",
                                                        "gpu_thermal_violation",
                                                        "gpu_sm_clock",
                                                        "quota_evicted"};

struct llm_serving {
    llm_engine_info_t eng[LLM_SERVING_MAX_ENGINES];
    int neng;
    llm_signal_map_t map[MAX_MAPS];
    size_t nmap;
    char *text; /* owned copy of the TSV, split in place */
};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static llm_serving_t *g_model;

const char *llm_signal_id(llm_signal_t s)
{
    return (unsigned)s < LLM_SIG_COUNT ? g_signal_ids[s] : NULL;
}

llm_signal_t llm_signal_parse(const char *id, size_t len)
{
    for (int i = 0; i < LLM_SIG_COUNT; i++)
        if (strlen(g_signal_ids[i]) == len && memcmp(g_signal_ids[i], id, len) == 0)
            return (llm_signal_t)i;
    return LLM_SIG_COUNT;
}

static _Noreturn void model_bug(const char *what, const char *detail)
{
    fprintf(stderr, "infermon: serving-signals.tsv: %s: %s\n", what, detail);
    abort();
}

static llm_mtype_t type_of(const char *s)
{
    if (strncmp(s, "counter", 7) == 0) return LLM_MTYPE_COUNTER;
    if (strncmp(s, "gauge", 5) == 0) return LLM_MTYPE_GAUGE;
    if (strncmp(s, "histogram", 9) == 0) return LLM_MTYPE_HISTOGRAM;
    if (strncmp(s, "summary", 7) == 0) return LLM_MTYPE_SUMMARY;
    return LLM_MTYPE_UNKNOWN;
}

static llm_unit_t unit_of(const char *s)
{
    static const struct {
        const char *n;
        llm_unit_t u;
    } t[] = {{"seconds", LLM_UNIT_SECONDS},   {"milliseconds", LLM_UNIT_MILLISECONDS},
             {"microseconds", LLM_UNIT_NONE}, {"bytes", LLM_UNIT_BYTES},
             {"tokens", LLM_UNIT_TOKENS},     {"requests", LLM_UNIT_REQUESTS},
             {"ratio", LLM_UNIT_RATIO},       {"percent", LLM_UNIT_PERCENT},
             {"items", LLM_UNIT_ITEMS},       {"none", LLM_UNIT_NONE}};
    for (size_t i = 0; i < IM_ARRAY_LEN(t); i++)
        if (strcmp(s, t[i].n) == 0) return t[i].u;
    model_bug("unknown unit", s);
}

static void split_prefixes(llm_engine_info_t *e, char *s)
{
    while (s && *s && e->nprefixes < LLM_SERVING_MAX_PREFIXES) {
        e->prefixes[e->nprefixes++] = s;
        char *bar = strchr(s, '|');
        if (!bar) break;
        *bar = '\0';
        s = bar + 1;
    }
}

static void add_map(llm_serving_t *m, const llm_signal_map_t *src)
{
    if (m->nmap >= MAX_MAPS) model_bug("too many rows", src->name);
    m->map[m->nmap++] = *src;
}

static void parse_row(llm_serving_t *m, char **col)
{
    if (strcmp(col[0], "_engine") == 0) {
        if (m->neng >= LLM_SERVING_MAX_ENGINES) model_bug("too many engines", col[1]);
        llm_engine_info_t *e = &m->eng[m->neng++];
        e->id = col[1];
        e->name = col[2];
        e->model_label = col[5];
        if (strcmp(col[3], "all") == 0)
            e->all_names = true;
        else if (strcmp(col[3], "signals") != 0)
            model_bug("an _engine row's type column is 'all' or 'signals'", col[1]);
        split_prefixes(e, col[7]);
        e->source = col[9];
        e->notes = col[10];
        return;
    }
    llm_signal_map_t r;
    memset(&r, 0, sizeof r);
    r.signal = llm_signal_parse(col[0], strlen(col[0]));
    if (r.signal == LLM_SIG_COUNT) model_bug("unknown signal", col[0]);
    r.engine = llm_serving_engine_find(m, col[1]);
    if (r.engine < 0) model_bug("engine without an _engine row", col[1]);
    r.name = col[2];
    r.unit = unit_of(col[4]);
    r.selector = col[7];
    r.source = col[9];
    r.notes = col[10];
    const llm_catalog_t *c = llm_catalog_get();
    r.family = llm_catalog_lookup(c, r.name, strlen(r.name), NULL, NULL);
    if (strcmp(col[3], "=catalog") == 0) {
        if (!r.family) model_bug("=catalog name not in the catalog", r.name);
        r.type = r.family->type;
        r.labels = "";
        r.buckets = "";
        r.versions = "";
    } else {
        r.type = type_of(col[3]);
        if (r.type == LLM_MTYPE_UNKNOWN) model_bug("unknown type", col[3]);
        r.labels = col[5];
        r.buckets = col[6];
        r.versions = col[8];
    }
    add_map(m, &r);
}

static void derive_ray(llm_serving_t *m)
{
    int ray = llm_serving_engine_find(m, "ray-vllm");
    int vllm = llm_serving_engine_find(m, "vllm");
    if (ray < 0 || vllm < 0) return;
    size_t n = m->nmap;
    for (size_t i = 0; i < n; i++) {
        if (m->map[i].engine != vllm) continue;
        llm_signal_map_t r = m->map[i];
        const char *rest = strchr(r.name, ':');
        if (!rest) continue;
        size_t len = strlen("ray_vllm_") + strlen(rest + 1) + 1;
        char *name = im_malloc(len);
        snprintf(name, len, "ray_vllm_%s", rest + 1);
        r.name = name;
        r.engine = ray;
        r.derived = true;
        r.notes = "vLLM's metric re-exported by Ray Serve (adds ReplicaId)";
        add_map(m, &r);
    }
}

static void model_row(void *ctx, char **col, int n)
{
    if (n != 11) model_bug("row without 11 columns", col[0]);
    parse_row(ctx, col);
}

static void model_init(void)
{
    llm_serving_t *m = im_calloc(1, sizeof *m);
    m->text = im_malloc(llm__tsv_serving_signals_len + 1);
    memcpy(m->text, llm__tsv_serving_signals, llm__tsv_serving_signals_len);
    m->text[llm__tsv_serving_signals_len] = '\0';
    llm__tsv_each(m->text, model_row, m);
    derive_ray(m);
    g_model = m;
}

const llm_serving_t *llm_serving_get(void)
{
    pthread_once(&g_once, model_init);
    return g_model;
}

int llm_serving_engine_count(const llm_serving_t *s)
{
    return s->neng;
}

const llm_engine_info_t *llm_serving_engine(const llm_serving_t *s, int i)
{
    return i >= 0 && i < s->neng ? &s->eng[i] : NULL;
}

int llm_serving_engine_find(const llm_serving_t *s, const char *id)
{
    for (int i = 0; i < s->neng; i++)
        if (strcmp(s->eng[i].id, id) == 0) return i;
    return -1;
}

size_t llm_serving_map_count(const llm_serving_t *s)
{
    return s->nmap;
}

const llm_signal_map_t *llm_serving_map(const llm_serving_t *s, size_t i)
{
    return i < s->nmap ? &s->map[i] : NULL;
}

size_t llm_serving_maps_for(const llm_serving_t *s, int e, llm_signal_t sig,
                            const llm_signal_map_t **out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nmap; i++) {
        if (s->map[i].engine != e || s->map[i].signal != sig) continue;
        if (n < cap) out[n] = &s->map[i];
        n++;
    }
    return n;
}

static bool name_matches_family(const llm_family_t *f, const char *name, size_t len)
{
    return llm_family_has_sample(f, name, len) ||
           (strlen(f->name) == len && memcmp(f->name, name, len) == 0);
}

bool llm_serving_has_name(const llm_serving_t *s, const char *name, size_t len)
{
    static const char *const sfx[] = {"", "_bucket", "_sum", "_count"};
    for (size_t i = 0; i < s->nmap; i++) {
        size_t ml = strlen(s->map[i].name);
        if (len < ml || memcmp(s->map[i].name, name, ml) != 0) continue;
        for (size_t k = 0; k < (s->map[i].type == LLM_MTYPE_HISTOGRAM ? 4u : 1u); k++)
            if (len - ml == strlen(sfx[k]) && memcmp(name + ml, sfx[k], len - ml) == 0) return true;
    }
    return false;
}

int llm_serving_engine_of(const llm_serving_t *s, const char *name, size_t len)
{
    for (size_t i = 0; i < s->nmap; i++) {
        size_t ml = strlen(s->map[i].name);
        if (ml == len && memcmp(s->map[i].name, name, len) == 0) return s->map[i].engine;
    }
    for (int e = 0; e < s->neng; e++)
        for (int p = 0; p < s->eng[e].nprefixes; p++) {
            size_t pl = strlen(s->eng[e].prefixes[p]);
            if (pl <= len && memcmp(s->eng[e].prefixes[p], name, pl) == 0) return e;
        }
    return -1;
}

/* ---- Detection ---- */

static void vllm_window(llm_detected_t *d, const llm_family_t *f)
{
    /* V0's Info 'vllm:cache_config' exposes the name V1's gauge has */
    if (f->type == LLM_MTYPE_INFO) return;
    if (f->first.known && !f->first.unreleased &&
        (!d->vllm_lo.known || llm_version_cmp(&f->first, &d->vllm_lo) > 0))
        d->vllm_lo = f->first;
    if (f->removed.known && (!d->vllm_hi.known || llm_version_cmp(&f->removed, &d->vllm_hi) < 0))
        d->vllm_hi = f->removed;
    if (strstr(f->condition, "V0 engine only")) d->vllm_v0 = true;
    if (strncmp(f->condition, "V1 only", 7) == 0) d->vllm_v1 = true;
}

void llm_serving_detect(const llm_serving_t *s, llm_has_name_fn has, void *ctx, llm_detected_t *out)
{
    memset(out, 0, sizeof *out);
    const llm_catalog_t *c = llm_catalog_get();
    int vllm = llm_serving_engine_find(s, "vllm");
    int sgl = llm_serving_engine_find(s, "sglang");
    /* The engines' own catalog families (every exposed sample name). */
    for (size_t i = 0; i < llm_catalog_count(c); i++) {
        const llm_family_t *f = llm_catalog_family(c, i);
        int e = f->exporter == LLM_EXP_VLLM     ? vllm
                : f->exporter == LLM_EXP_SGLANG ? sgl
                : f->exporter == LLM_EXP_DCGM   ? llm_serving_engine_find(s, "dcgm")
                : f->exporter == LLM_EXP_KUEUE  ? llm_serving_engine_find(s, "kueue")
                                                : -1;
        if (e < 0) continue;
        bool seen = false;
        for (int k = 0; k < f->nsamples && !seen; k++) {
            const char *smp = f->samples[k];
            if (strstr(smp, "_created")) continue;
            seen = has(ctx, smp, strlen(smp));
        }
        if (!seen) continue;
        out->present[e] = true;
        out->names_seen[e]++;
        if (e == vllm) vllm_window(out, f);
    }
    /* The mapped names of every engine (the others have no catalog TSV). */
    for (size_t i = 0; i < s->nmap; i++) {
        const llm_signal_map_t *m = &s->map[i];
        if (m->family &&
            (m->family->exporter == LLM_EXP_VLLM || m->family->exporter == LLM_EXP_SGLANG ||
             m->family->exporter == LLM_EXP_DCGM || m->family->exporter == LLM_EXP_KUEUE) &&
            !m->derived)
            continue; /* counted above */
        bool seen = has(ctx, m->name, strlen(m->name));
        if (!seen && m->type == LLM_MTYPE_HISTOGRAM) {
            char b[300];
            snprintf(b, sizeof b, "%s_count", m->name);
            seen = has(ctx, b, strlen(b));
        }
        if (!seen) continue;
        out->present[m->engine] = true;
        out->names_seen[m->engine]++;
    }
}

typedef struct names_ctx {
    const char *const *v;
    size_t n;
} names_ctx_t;

static bool names_has(void *ctx, const char *name, size_t len)
{
    names_ctx_t *x = ctx;
    for (size_t i = 0; i < x->n; i++)
        if (strlen(x->v[i]) == len && memcmp(x->v[i], name, len) == 0) return true;
    return false;
}

void llm_serving_detect_names(const llm_serving_t *s, const char *const *names, size_t n,
                              llm_detected_t *out)
{
    names_ctx_t x = {names, n};
    llm_serving_detect(s, names_has, &x, out);
}

size_t llm_detected_describe(const llm_serving_t *s, const llm_detected_t *d, int e, char *buf,
                             size_t cap)
{
    const llm_engine_info_t *ei = llm_serving_engine(s, e);
    if (!ei || cap == 0) return 0;
    int n = 0;
    if (!d->present[e]) {
        n = snprintf(buf, cap, "%s: absent", ei->name);
    } else if (strcmp(ei->id, "vllm") == 0) {
        char lo[40] = "", hi[40] = "";
        if (d->vllm_lo.known) llm_version_format(&d->vllm_lo, lo, sizeof lo);
        if (d->vllm_hi.known) llm_version_format(&d->vllm_hi, hi, sizeof hi);
        n = snprintf(buf, cap, "%s %s%s%s%s%s", ei->name,
                     d->vllm_v0 && !d->vllm_v1   ? "V0"
                     : d->vllm_v1 && !d->vllm_v0 ? "V1"
                     : d->vllm_v0                ? "V0+V1 names"
                                                 : "V0 or V1",
                     lo[0] ? " >= " : "", lo, hi[0] ? ", < " : "", hi);
    } else {
        n = snprintf(buf, cap, "%s (%d known names)", ei->name, d->names_seen[e]);
    }
    if (n < 0) n = 0;
    return (size_t)n < cap ? (size_t)n : cap - 1;
}

const llm_signal_map_t *llm_serving_pick(const llm_serving_t *s, int e, llm_signal_t sig,
                                         llm_has_name_fn has, void *ctx)
{
    for (size_t i = 0; i < s->nmap; i++) {
        const llm_signal_map_t *m = &s->map[i];
        if (m->engine != e || m->signal != sig) continue;
        if (has(ctx, m->name, strlen(m->name))) return m;
        if (m->type == LLM_MTYPE_HISTOGRAM) {
            char b[300];
            snprintf(b, sizeof b, "%s_bucket", m->name);
            if (has(ctx, b, strlen(b))) return m;
        }
        if (m->family && !m->derived)
            for (int k = 0; k < m->family->nsamples; k++)
                if (name_matches_family(m->family, m->family->samples[k],
                                        strlen(m->family->samples[k])) &&
                    !strstr(m->family->samples[k], "_created") &&
                    has(ctx, m->family->samples[k], strlen(m->family->samples[k])))
                    return m;
    }
    return NULL;
}
